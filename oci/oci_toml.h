/* oci_toml: TOML text into a jansson tree, for containers-registries.conf.
 *
 * Hand-written because Debian has no C TOML library (libtomlc99 / tomlc17 are not
 * packaged; tomlplusplus, toml11 and cpptoml are C++).  It reads the TOML 1.0 that
 * configuration files use: comments, bare / quoted / dotted keys, [tables],
 * [[arrays of tables]], basic and literal strings (also multi-line), integers, floats,
 * booleans, arrays and inline tables.  Dates and times are refused with a clear error
 * (registries.conf has none).  Private to oci (and its tests and fuzz target). */
#ifndef OLM_OCI_TOML_H
#define OLM_OCI_TOML_H

#include <jansson.h>
#include <stddef.h>

#include "olm_error.h"

/* The document as a JSON object (tables → objects, arrays of tables → arrays of objects),
 * or NULL with err "line N: <why>".  `text` need not be NUL-terminated; a NUL byte in it
 * is an error.  Caller json_decrefs. */
json_t *oci_toml_parse(const char *text, size_t len, olm_error *err);

#endif

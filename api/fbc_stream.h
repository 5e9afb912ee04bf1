/* fbc_stream: YAML/JSON object streams decoded with the rules of the FBC loader
 * (sigs.k8s.io/yaml scalars, k8s' YAMLOrJSONDecoder sniffing).  Public because a
 * registry+v1 bundle's manifests follow the very same rules as catalog files. */
#ifndef OLM_FBC_STREAM_H
#define OLM_FBC_STREAM_H

#include <jansson.h>
#include <stddef.h>

#include "olm_error.h"

/* Reads a whole file (NUL-terminated); caller frees *data. */
int fbc_read_file(const char *path, char **data, size_t *len, olm_error *err);

/* Receives each decoded top-level object.  Takes ownership of `obj` (a JSON object)
 * whatever it returns; returns 0 to go on or -1 (err filled) to stop. */
typedef int (*fbc_blob_fn)(void *ud, json_t *obj, int lineno, olm_error *err);

/* Sniffs like k8s' YAMLOrJSONDecoder: first non-space byte '{' means JSON. */
int fbc_decode_stream(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                      olm_error *err);

#endif

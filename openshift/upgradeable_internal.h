/* upgradeable_internal: the pieces of Go behaviour the upgrade check reproduces
 * byte for byte (openshift-upgradeable.md §2, §4).  Upstream decodes the
 * olm.properties annotation with encoding/json and parses the value with
 * blang/semver; every error text it produces ends up in a condition message, so
 * the same texts are produced here (with gocompat's encoding/json scanner,
 * strconv.Quote and sigs.k8s.io/yaml).  Not a public API: used by
 * upgradeable*.c and their tests. */
#ifndef OLM_UPGRADEABLE_INTERNAL_H
#define OLM_UPGRADEABLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* One decoded element of []property.Property.  `value` is the json.RawMessage:
 * the exact bytes of the JSON value as written, or NULL when the object had no
 * "value" key (Go's nil RawMessage). */
typedef struct upgradeable_prop {
    char *type;   /* owned; "" when absent or null */
    size_t type_len;
    char *value;  /* owned, NUL-terminated raw JSON text, or NULL */
    size_t value_len;
} upgradeable_prop;

typedef struct upgradeable_prop_list {
    upgradeable_prop *items; /* owned */
    size_t n, cap;
} upgradeable_prop_list;

void upgradeable_prop_list_free(upgradeable_prop_list *l);

/* json.Unmarshal(text, &[]property.Property).  Returns 0 and fills `out`, or -1
 * with Go's error text in `msg`; -2 on out of memory. */
int upgradeable_json_decode_props(const char *text, size_t len, upgradeable_prop_list *out, strbuf *msg);

/* Same for an object that holds the list under a key (properties.yaml converted
 * to JSON: {"properties": [...]}); key match is ASCII case-insensitive as in Go. */
int upgradeable_json_decode_props_field(const char *text, size_t len, const char *field, upgradeable_prop_list *out,
                                strbuf *msg);

/* What json.Unmarshal(raw, &any) gives, as far as ToAllowedSemver looks at it. */
typedef enum upgradeable_json_kind {
    UPG_J_STRING,
    UPG_J_NUMBER,
    UPG_J_BOOL,
    UPG_J_NULL,
    UPG_J_OBJECT,
    UPG_J_ARRAY,
} upgradeable_json_kind;

/* Decodes one valid JSON value.  For a string, `*str` (owned by the caller, may
 * hold NUL bytes, `*str_len` bytes) is the decoded Go string, with invalid UTF-8
 * and lone surrogates replaced by U+FFFD.  Returns 0, -1 with Go's error in `msg`
 * (syntax errors, a number overflowing float64), -2 on out of memory. */
int upgradeable_json_decode_any(const char *raw, size_t len, upgradeable_json_kind *kind, char **str, size_t *str_len,
                        strbuf *msg);

/* major.minor of an OpenShift version, with patch, pre-release and build dropped. */
typedef struct upgradeable_minor {
    uint64_t major, minor;
} upgradeable_minor;

/* cluster-olm-operator ToAllowedSemver on a property's raw JSON value (NULL for a
 * missing value).  Returns 0 and fills `out`, -1 with the reason in `msg` (the
 * text that follows "error converting to semver for version <raw>: "), -2 on out
 * of memory. */
int upgradeable_parse_max_version(const char *raw, size_t len, upgradeable_minor *out, strbuf *msg);

#endif

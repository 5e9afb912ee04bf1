/* upgradeable_internal: the pieces of Go behaviour the upgrade check reproduces
 * byte for byte (openshift-upgradeable.md §2, §4).  Upstream decodes the
 * olm.properties annotation with encoding/json and parses the value with
 * blang/semver; every error text it produces ends up in a condition message, so
 * the same texts are produced here.  Not a public API: used by upgradeable*.c
 * and their tests. */
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
    size_t n;
} upgradeable_prop_list;

void upgradeable_prop_list_free(upgradeable_prop_list *l);

/* Go's encoding/json checkValid: 0 when `text` is one valid JSON value, else -1
 * with Go's SyntaxError text in `msg` (e.g. "invalid character 'a' looking for
 * beginning of value", "unexpected end of JSON input"). */
int upgradeable_json_check(const char *text, size_t len, strbuf *msg);

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

/* Go's utf8.DecodeRune: the rune and its byte length (n > 0); an invalid
 * sequence gives -1 with *size 1. */
long upgradeable_utf8_decode(const unsigned char *p, size_t n, size_t *size);

/* Appends Go's strconv.Quote(s) (what %q prints for a string).  IsPrint is
 * approximated for rare non-ASCII code points (see upgradeable_quote.c). */
int upgradeable_go_quote(strbuf *sb, const char *s, size_t len);

/* Appends Go's compact JSON form of valid JSON `raw` as json.Marshal writes a
 * json.RawMessage: insignificant whitespace removed, and <, >, &, U+2028 and
 * U+2029 escaped as \u003c and so on. */
int upgradeable_json_compact(strbuf *sb, const char *raw, size_t len);

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

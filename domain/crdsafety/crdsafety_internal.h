/* crdsafety_internal: shared pieces of the CRD upgrade-safety preflight
 * (crdsafety_*.c).  Not part of the public contract. */
#ifndef OLM_CRDSAFETY_INTERNAL_H
#define OLM_CRDSAFETY_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "strbuf.h"

/* A list of owned, NUL-terminated messages (one per reported error line). */
typedef struct crdsafety_list {
    char **v;
    size_t n, cap;
} crdsafety_list;

/* Appends a printf-formatted line; 0 or -1 on OOM. */
int crdsafety_list_addf(crdsafety_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes ownership of s (freed on failure too); 0 or -1. */
int crdsafety_list_take(crdsafety_list *l, char *s);
int crdsafety_list_has(const crdsafety_list *l, const char *s);
void crdsafety_list_free(crdsafety_list *l);
/* Sorts by strcmp (Go's sort of []string is bytewise too). */
void crdsafety_strv_sort(const char **v, size_t n);

/* --- Go-compatible formatting (crdsafety_fmt.c, on gocompat) --- */
/* strconv.Quote / %q of a string. */
int crdsafety_go_quote(strbuf *sb, const char *s);
/* fmt's %v of a float64 (strconv 'g', shortest). */
int crdsafety_go_float(strbuf *sb, double v);
/* The bytes encoding/json would produce for a value (compact, sorted keys,
 * HTML-escaped); this is what apiextensions JSON.Raw holds once the CRD has gone
 * through the unstructured converter.  Caller frees; NULL on OOM. */
char *crdsafety_raw_json(const json_t *v);
/* k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings. */
int crdsafety_kube_version_cmp(const char *a, const char *b);

/* --- schemas (crdsafety_flatten.c) --- */
/* spec.versions[i].schema.openAPIV3Schema, or NULL. */
const json_t *crdsafety_version_schema(const json_t *version);
/* Finds spec.versions[] entry by name (borrowed) or NULL. */
const json_t *crdsafety_crd_version(const json_t *crd, const char *name);
/* Flattens a schema like crdify's FlattenCRDVersion: a new object mapping each
 * simple path ("^", "^.spec.foo", "^.spec.list.items", ...) to its schema
 * (borrowed refs held by the object).  NULL schema gives an empty object.
 * Returns NULL on OOM. */
json_t *crdsafety_flatten(const json_t *schema);
/* The object's keys sorted (borrowed from obj; caller frees the array only). */
const char **crdsafety_sorted_keys(const json_t *obj, size_t *n);

/* --- per-property comparison (crdsafety_props.c) --- */
/* crdify's CompareVersions for one old/new version pair: appends
 * "<label>: <path>: <check>: <msg>" lines for every failing comparator, in path
 * order then comparator order (registry order, "unhandled" last). */
int crdsafety_compare_versions(const json_t *oldv, const json_t *newv, const char *label, crdsafety_list *out);

#endif

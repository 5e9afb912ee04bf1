/* crd_upgrade_safety_internal: shared pieces of the CRD upgrade-safety preflight
 * (crd_upgrade_safety*.c).  Not part of the public contract. */
#ifndef OLM_CRD_UPGRADE_SAFETY_INTERNAL_H
#define OLM_CRD_UPGRADE_SAFETY_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "strbuf.h"

/* A list of owned, NUL-terminated messages (one per reported error line). */
typedef struct cus_list {
    char **v;
    size_t n, cap;
} cus_list;

/* Appends a printf-formatted line; 0 or -1 on OOM. */
int cus_list_addf(cus_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Takes ownership of s (freed on failure too); 0 or -1. */
int cus_list_take(cus_list *l, char *s);
int cus_list_has(const cus_list *l, const char *s);
void cus_list_free(cus_list *l);
/* Sorts by strcmp (Go's sort of []string is bytewise too). */
void cus_strv_sort(const char **v, size_t n);

/* --- Go-compatible formatting (crd_upgrade_safety_fmt.c) --- */
/* strconv.Quote / %q of a string. */
int cus_go_quote(strbuf *sb, const char *s);
/* fmt's %v of a float64 (strconv 'g', shortest). */
int cus_go_float(strbuf *sb, double v);
/* The bytes encoding/json would produce for a value (compact, sorted keys,
 * HTML-escaped); this is what apiextensions JSON.Raw holds once the CRD has gone
 * through the unstructured converter.  Caller frees; NULL on OOM. */
char *cus_raw_json(const json_t *v);
/* k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings. */
int cus_kube_version_cmp(const char *a, const char *b);

/* --- schemas (crd_upgrade_safety_flatten.c) --- */
/* spec.versions[i].schema.openAPIV3Schema, or NULL. */
const json_t *cus_version_schema(const json_t *version);
/* Finds spec.versions[] entry by name (borrowed) or NULL. */
const json_t *cus_crd_version(const json_t *crd, const char *name);
/* Flattens a schema like crdify's FlattenCRDVersion: a new object mapping each
 * simple path ("^", "^.spec.foo", "^.spec.list.items", ...) to its schema
 * (borrowed refs held by the object).  NULL schema gives an empty object.
 * Returns NULL on OOM. */
json_t *cus_flatten(const json_t *schema);
/* The object's keys sorted (borrowed from obj; caller frees the array only). */
const char **cus_sorted_keys(const json_t *obj, size_t *n);

/* --- per-property comparison (crd_upgrade_safety_props.c) --- */
/* crdify's CompareVersions for one old/new version pair: appends
 * "<label>: <path>: <check>: <msg>" lines for every failing comparator, in path
 * order then comparator order (registry order, "unhandled" last). */
int cus_compare_versions(const json_t *oldv, const json_t *newv, const char *label, cus_list *out);

#endif

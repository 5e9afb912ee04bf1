/* probe_internal: the assertions of boxcutter's probing package, shared by the built-in probes
 * (probe.c) and the user's progressionProbes (probe_user.c).  Not for other folders. */
#ifndef OLM_PROBE_INTERNAL_H
#define OLM_PROBE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "probe.h"
#include "strbuf.h"

/* What the assertions of one object said so far, combined as boxcutter's And: Unknown when
 * one is Unknown (the Unknown messages), else False when one is False (the False messages). */
typedef struct verdict {
    strbuf false_msgs, unknown_msgs; /* each joined by " and " */
    bool any_false, any_unknown;
    bool oom;
} verdict;

void probe_add(verdict *v, probe_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A dotted path ("status.phase") in obj; NULL when a step is missing or not an object. */
const json_t *probe_field(const json_t *obj, const char *path);
json_int_t probe_generation(const json_t *obj);
/* A value as Go's json.Marshal writes it; caller frees; NULL when memory ran out. */
char *probe_go_json(const json_t *v);
/* FieldsEqualProbe's comparison of the values va (at path a) and vb (at b), both present: adds
 * boxcutter's False "\"a\" != \"b\" expected: <va> got: <vb>" when they differ. */
void probe_compare_fields(verdict *v, const char *a, const json_t *va, const char *b, const json_t *vb);
/* ConditionProbe{Type: type, Status: want}. */
void probe_condition_equal(verdict *v, const json_t *obj, const char *type, const char *want);
/* FieldValueProbe{FieldPath: path, Value: want}. */
void probe_field_value(verdict *v, const json_t *obj, const char *path, const char *want);

#endif

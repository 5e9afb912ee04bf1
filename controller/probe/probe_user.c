/* probe_user: a ClusterObjectSet's spec.progressionProbes over one object (probe.h), as
 * operator-controller df2c201's buildProgressionProbes builds them for boxcutter v0.14.0:
 *
 *   And( for each progressionProbe:
 *          ObservedGenerationProbe( selector( And(assertions) ) ) )
 *
 * A selector that does not select the object passes it (True, no message).  Assertions:
 * ConditionEqual {type, status}, FieldsEqual {fieldA, fieldB}, FieldValue {fieldPath, value};
 * a field path is dotted, leading and trailing dots trimmed (strings.Trim(p, ".")).
 * Nested Ands flatten: an Unknown anywhere makes the whole Unknown with every Unknown message,
 * else a False makes it False with every False message, which is what nesting gives too. */
#include <stdlib.h>
#include <string.h>

#include "kube_label_selector.h"
#include "probe.h"
#include "probe_internal.h"

/* strings.Trim(p, ".") into a fresh string. */
static char *trim_dots(const char *p)
{
    while (*p == '.')
        p++;
    size_t n = strlen(p);
    while (n && p[n - 1] == '.')
        n--;
    return strndup(p, n);
}

/* FieldsEqualProbe (boxcutter's own messages: a missing field is False "\"<path>\" missing"). */
static void fields_equal(verdict *v, const json_t *obj, const char *a, const char *b)
{
    char *ta = trim_dots(a), *tb = trim_dots(b);
    if (!ta || !tb) {
        v->oom = true;
    } else {
        const json_t *va = probe_field(obj, ta), *vb = probe_field(obj, tb);
        if (!va) {
            probe_add(v, PROBE_FALSE, "\"%s\" missing", a);
        } else if (!vb) {
            probe_add(v, PROBE_FALSE, "\"%s\" missing", b);
        } else {
            probe_compare_fields(v, a, va, b, vb);
        }
    }
    free(ta);
    free(tb);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* One assertion; -1 with err on an unknown type (the spec's enum forbids it). */
static int assertion(verdict *v, const json_t *obj, const json_t *a, olm_error *err)
{
    const char *type = str(a, "type");
    if (strcmp(type, "ConditionEqual") == 0) {
        const json_t *c = json_object_get(a, "conditionEqual");
        probe_condition_equal(v, obj, str(c, "type"), str(c, "status"));
    } else if (strcmp(type, "FieldsEqual") == 0) {
        const json_t *f = json_object_get(a, "fieldsEqual");
        fields_equal(v, obj, str(f, "fieldA"), str(f, "fieldB"));
    } else if (strcmp(type, "FieldValue") == 0) {
        const json_t *f = json_object_get(a, "fieldValue");
        char *path = trim_dots(str(f, "fieldPath"));
        if (!path) {
            v->oom = true;
            return 0;
        }
        /* The messages name the path as the user wrote it. */
        const char *want = str(f, "value");
        const json_t *got = probe_field(obj, path);
        free(path);
        if (!got) {
            probe_add(v, PROBE_FALSE, "missing key: \"%s\"", str(f, "fieldPath"));
        } else if (!json_is_string(got) || strcmp(json_string_value(got), want) != 0) {
            char *j = probe_go_json(got);
            probe_add(v, PROBE_FALSE, "value at key \"%s\" != \"%s\"; expected: \"%s\" got: %s", str(f, "fieldPath"), want,
                      want, j ? j : "<value marshal failed>");
            free(j);
        }
    } else {
        olm_error_set(err, "unknown progressionProbe assertion probe type: %s", type);
        return -1;
    }
    return 0;
}

/* Whether the selector of one progressionProbe selects obj; -1 with err on a bad selector. */
static int selects(const json_t *sel, const json_t *obj, olm_error *err)
{
    const char *type = str(sel, "type");
    if (strcmp(type, "GroupKind") == 0) {
        const json_t *gk = json_object_get(sel, "groupKind");
        const char *av = str(obj, "apiVersion");
        const char *slash = strchr(av, '/');
        size_t glen = slash ? (size_t)(slash - av) : 0;
        const char *group = str(gk, "group");
        return strlen(group) == glen && strncmp(av, group, glen) == 0 && strcmp(str(gk, "kind"), str(obj, "kind")) == 0;
    }
    if (strcmp(type, "Label") == 0) {
        kube_label_selector *ls = NULL;
        olm_error lerr;
        if (kube_label_selector_parse(json_object_get(sel, "label"), &ls, &lerr) != 0) {
            olm_error_set(err, "invalid label selector in progressionProbe: %s", lerr.msg);
            return -1;
        }
        bool m = kube_label_selector_matches(ls, json_object_get(json_object_get(obj, "metadata"), "labels"));
        kube_label_selector_free(ls);
        return m;
    }
    olm_error_set(err, "unknown progressionProbe selector type: %s", type);
    return -1;
}

int probe_user_check(const json_t *probes, olm_error *err)
{
    json_t *empty = json_object();
    if (!empty) {
        olm_error_set(err, "out of memory");
        return -1;
    }
    probe_result r;
    int rc = probe_user(probes, empty, &r, err);
    probe_result_free(&r);
    json_decref(empty);
    return rc;
}

int probe_user(const json_t *probes, const json_t *obj, probe_result *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    verdict v = {STRBUF_INIT, STRBUF_INIT, false, false, false};
    int rc = 0;
    size_t i;
    const json_t *p;
    bool outdated = false;
    const json_t *og = probe_field(obj, "status.observedGeneration");
    if (json_is_integer(og) && json_integer_value(og) != probe_generation(obj))
        outdated = true;
    json_array_foreach(probes, i, p) {
        const json_t *sel = json_object_get(p, "selector");
        /* Checked for every probe, so a bad one is reported whatever the object. */
        int s = selects(sel, obj, err);
        if (s < 0) {
            rc = -1;
            break;
        }
        const json_t *as = json_object_get(p, "assertions");
        size_t j;
        const json_t *a;
        verdict dry = {STRBUF_INIT, STRBUF_INIT, false, false, false};
        json_array_foreach(as, j, a) {
            /* Types are checked even when the object is not selected (upstream builds the
             * probes before probing anything). */
            if (assertion(&dry, obj, a, err) != 0) {
                rc = -1;
                break;
            }
        }
        strbuf_free(&dry.false_msgs);
        strbuf_free(&dry.unknown_msgs);
        if (rc != 0)
            break;
        if (outdated) {
            /* ObservedGenerationProbe wraps each progressionProbe: one message per probe. */
            probe_add(&v, PROBE_UNKNOWN, ".status outdated");
            continue;
        }
        if (!s)
            continue;
        json_array_foreach(as, j, a) assertion(&v, obj, a, err);
    }
    if (rc == 0 && v.oom) {
        olm_error_set(err, "out of memory");
        rc = -1;
    }
    if (rc == 0 && v.any_unknown) {
        out->status = PROBE_UNKNOWN;
        out->messages = strbuf_detach(&v.unknown_msgs);
    } else if (rc == 0 && v.any_false) {
        out->status = PROBE_FALSE;
        out->messages = strbuf_detach(&v.false_msgs);
    }
    strbuf_free(&v.false_msgs);
    strbuf_free(&v.unknown_msgs);
    if (rc != 0)
        probe_result_free(out);
    return rc;
}

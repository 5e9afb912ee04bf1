/* probe: the built-in probes (probe.h).  Each assertion is one of boxcutter's three kinds,
 * with its messages word for word:
 *   condition_equal  ConditionProbe   .status.conditions[type] has `status`
 *   fields_equal     FieldsEqualProbe two fields hold the same value
 *   field_value      FieldValueProbe  a field holds a given string
 * and their results are combined as boxcutter's And: Unknown when one is Unknown (with the
 * Unknown messages), else False when one is False (the False messages), else True. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"
#include "olm_hash.h"
#include "probe.h"
#include "probe_internal.h"

void probe_add(verdict *v, probe_status st, const char *fmt, ...)
{
    if (st == PROBE_TRUE)
        return; /* upstream keeps the True messages too, but nothing ever shows them */
    strbuf *sb = st == PROBE_FALSE ? &v->false_msgs : &v->unknown_msgs;
    if (st == PROBE_FALSE)
        v->any_false = true;
    else
        v->any_unknown = true;
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0 || (sb->len && strbuf_puts(sb, " and ") != 0) || strbuf_puts(sb, msg) != 0)
        v->oom = true;
    if (n >= 0)
        free(msg);
}

/* A dotted path ("status.phase") in obj; NULL when a step is missing or not an object. */
const json_t *probe_field(const json_t *obj, const char *path)
{
    const json_t *cur = obj;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!json_is_object(cur))
            return NULL;
        cur = json_object_getn(cur, p, n);
        p += n + (dot ? 1 : 0);
    }
    return cur;
}

json_int_t probe_generation(const json_t *obj)
{
    const json_t *g = probe_field(obj, "metadata.generation");
    return json_is_integer(g) ? json_integer_value(g) : 0;
}

/* A value as Go's json.Marshal writes it ("<value marshal failed>" when memory runs out). */
char *probe_go_json(const json_t *v)
{
    strbuf sb = STRBUF_INIT;
    if (gocompat_json_encode(&sb, v, GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* ConditionProbe{Type: type, Status: want}. */
void probe_condition_equal(verdict *v, const json_t *obj, const char *type, const char *want)
{
    const json_t *conds = probe_field(obj, "status.conditions");
    if (!conds || json_is_null(conds)) {
        probe_add(v, PROBE_UNKNOWN, "missing .status.conditions");
        return;
    }
    if (!json_is_array(conds)) {
        probe_add(v, PROBE_UNKNOWN, "malformed .status.conditions");
        return;
    }
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c) {
        if (!json_is_object(c)) {
            probe_add(v, PROBE_UNKNOWN, "malformed .status.conditions");
            return;
        }
        const char *t = json_string_value(json_object_get(c, "type"));
        if (!t || strcmp(t, type) != 0)
            continue;
        const json_t *og = json_object_get(c, "observedGeneration");
        if (json_is_integer(og) && json_integer_value(og) != probe_generation(obj)) {
            probe_add(v, PROBE_UNKNOWN, ".status.condition[\"%s\"] outdated", type);
            return;
        }
        const json_t *st = json_object_get(c, "status");
        if (json_is_string(st) && strcmp(json_string_value(st), want) == 0)
            return;
        if (json_is_string(st) || !st) {
            /* Go's %s of a missing value is "%!s(<nil>)". */
            probe_add(v, PROBE_FALSE, ".status.condition[\"%s\"] is %s", type, st ? json_string_value(st) : "%!s(<nil>)");
        } else {
            char *j = probe_go_json(st);
            probe_add(v, PROBE_FALSE, ".status.condition[\"%s\"] is %s", type, j ? j : "?");
            free(j);
        }
        return;
    }
    probe_add(v, PROBE_UNKNOWN, "missing .status.condition[\"%s\"]", type);
}

/* A replica count: the apiserver leaves zero counts out (omitempty), so missing is `dflt`. */
static const json_t *count_or(const json_t *obj, const char *path, json_t *dflt)
{
    const json_t *f = probe_field(obj, path);
    return f && !json_is_null(f) ? f : dflt;
}

void probe_compare_fields(verdict *v, const char *a, const json_t *va, const char *b, const json_t *vb)
{
    /* Semantic.DeepEqual of unstructured values: numbers by value, the rest by structure. */
    bool equal = (json_is_number(va) && json_is_number(vb)) ? json_number_value(va) == json_number_value(vb)
                                                             : json_equal(va, vb);
    if (!equal) {
        char *ja = probe_go_json(va), *jb = probe_go_json(vb);
        probe_add(v, PROBE_FALSE, "\"%s\" != \"%s\" expected: %s got: %s", a, b, ja ? ja : "?", jb ? jb : "?");
        free(ja);
        free(jb);
    }
}

/* FieldsEqualProbe{FieldA: a, FieldB: b}, counts read by count_or (probe.h says why). */
static void fields_equal(verdict *v, const json_t *obj, const char *a, json_int_t a_dflt, const char *b,
                         json_int_t b_dflt)
{
    json_t *da = json_integer(a_dflt), *db = json_integer(b_dflt);
    if (!da || !db) {
        v->oom = true;
    } else {
        const json_t *va = count_or(obj, a, da), *vb = count_or(obj, b, db);
        probe_compare_fields(v, a, va, b, vb);
    }
    json_decref(da);
    json_decref(db);
}

/* FieldValueProbe{FieldPath: path, Value: want}. */
void probe_field_value(verdict *v, const json_t *obj, const char *path, const char *want)
{
    const json_t *f = probe_field(obj, path);
    if (!f) {
        probe_add(v, PROBE_FALSE, "missing key: \"%s\"", path);
        return;
    }
    if (json_is_string(f) && strcmp(json_string_value(f), want) == 0)
        return;
    char *got = probe_go_json(f);
    probe_add(v, PROBE_FALSE, "value at key \"%s\" != \"%s\"; expected: \"%s\" got: %s", path, want, want,
        got ? got : "<value marshal failed>");
    free(got);
}

static bool is(const char *group, size_t glen, const char *kind, const char *want_group, const char *want_kind)
{
    return strlen(want_group) == glen && strncmp(group, want_group, glen) == 0 && strcmp(kind, want_kind) == 0;
}

/* The kind's assertions (probe.h's table). */
static void probe_kind(verdict *v, const json_t *obj)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!av || !kind)
        return;
    const char *slash = strchr(av, '/');
    const char *group = slash ? av : "";
    size_t glen = slash ? (size_t)(slash - av) : 0;
    if (is(group, glen, kind, "apiextensions.k8s.io", "CustomResourceDefinition")) {
        probe_condition_equal(v, obj, "Established", "True");
    } else if (is(group, glen, kind, "cert-manager.io", "Certificate") ||
               is(group, glen, kind, "cert-manager.io", "Issuer")) {
        probe_condition_equal(v, obj, "Ready", "True");
    } else if (is(group, glen, kind, "", "Namespace")) {
        probe_field_value(v, obj, "status.phase", "Active");
    } else if (is(group, glen, kind, "", "PersistentVolumeClaim")) {
        probe_field_value(v, obj, "status.phase", "Bound");
    } else if (is(group, glen, kind, "apps", "Deployment")) {
        fields_equal(v, obj, "status.updatedReplicas", 0, "status.replicas", 0);
        probe_condition_equal(v, obj, "Available", "True");
    } else if (is(group, glen, kind, "apps", "StatefulSet")) {
        fields_equal(v, obj, "status.updatedReplicas", 0, "status.replicas", 0);
        fields_equal(v, obj, "status.readyReplicas", 0, "spec.replicas", 1);
    }
}

int probe_object(const json_t *obj, probe_result *out)
{
    memset(out, 0, sizeof *out);
    verdict v = {STRBUF_INIT, STRBUF_INIT, false, false, false};
    /* ObservedGenerationProbe: an outdated status says nothing about the current spec. */
    const json_t *og = probe_field(obj, "status.observedGeneration");
    if (json_is_integer(og) && json_integer_value(og) != probe_generation(obj))
        probe_add(&v, PROBE_UNKNOWN, ".status outdated");
    else
        probe_kind(&v, obj);
    int rc = 0;
    if (v.oom) {
        rc = -1;
    } else if (v.any_unknown) {
        out->status = PROBE_UNKNOWN;
        out->messages = strbuf_detach(&v.unknown_msgs);
    } else if (v.any_false) {
        out->status = PROBE_FALSE;
        out->messages = strbuf_detach(&v.false_msgs);
    }
    strbuf_free(&v.false_msgs);
    strbuf_free(&v.unknown_msgs);
    if (out->status != PROBE_TRUE && !out->messages)
        rc = -1;
    if (rc != 0)
        probe_result_free(out);
    return rc;
}

void probe_result_free(probe_result *r)
{
    if (!r)
        return;
    free(r->messages);
    memset(r, 0, sizeof *r);
}

int probe_describe(strbuf *out, const json_t *obj, const char *messages)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    return strbuf_printf(out, "Object %s.%s %s/%s: %s", kind ? kind : "", av ? av : "", ns ? ns : "",
                         name ? name : "", messages ? messages : "");
}

uint64_t probe_result_digest(const probe_result *r)
{
    if (r->status == PROBE_TRUE)
        return PROBE_DIGEST_PASS;
    unsigned char st = (unsigned char)r->status;
    uint64_t h = olm_fnv1a_str(olm_fnv1a(OLM_FNV1A_OFFSET, &st, 1), r->messages ? r->messages : "");
    return h == 0 || h == PROBE_DIGEST_PASS ? 2 : h;
}

uint64_t probe_digest(const json_t *obj)
{
    probe_result r;
    if (probe_object(obj, &r) != 0)
        return 0;
    uint64_t d = probe_result_digest(&r);
    probe_result_free(&r);
    return d;
}

int probe_verdict(const json_t *obj, uint64_t *digest, char **line)
{
    *digest = 0;
    *line = NULL;
    probe_result r;
    if (probe_object(obj, &r) != 0)
        return -1;
    int rc = 0;
    if (r.status != PROBE_TRUE) {
        strbuf s = STRBUF_INIT;
        if (probe_describe(&s, obj, r.messages) == 0)
            *line = strbuf_detach(&s);
        else
            rc = -1;
        strbuf_free(&s);
    }
    if (rc == 0)
        *digest = probe_result_digest(&r);
    probe_result_free(&r);
    return rc;
}

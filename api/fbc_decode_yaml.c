/* fbc_decode_yaml: multi-document YAML to jansson values, the way
 * sigs.k8s.io/yaml turns YAML into JSON (go-yaml v2 underneath).
 *
 * libyaml gives us events; we build the tree recursively.  Scalars follow
 * fbc_yaml_scalar.c.  Map keys become strings the way sigs.k8s.io/yaml does it
 * (ints in decimal, booleans as true/false, floats with strconv 'g' at 32 bits; a
 * null or huge unsigned key is an error).  Anchors are per document and aliases
 * share the anchored jansson value by reference; a budget on expanded nodes stops
 * "billion laughs" documents from blowing up the encoder later.  `<<` merge keys
 * copy the merged mappings' keys in place, later keys overriding earlier ones
 * (go-yaml v2 order); in a sequence of merges the first mapping wins. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fbc_internal.h"
#include "fbc_yaml.h"

#define MAX_DEPTH 1000
#define MAX_EXPANDED_NODES 5000000u

typedef struct anchor {
    char *name;   /* owned */
    json_t *val;  /* owned reference */
    size_t cost;  /* nodes the value stands for once aliases are expanded */
} anchor;

typedef struct ydec {
    yaml_parser_t p;
    const char *name;
    anchor *anchors;
    size_t nanch, cap;
    olm_error *err;
} ydec;

static void anchors_clear(ydec *d)
{
    for (size_t i = 0; i < d->nanch; i++) {
        free(d->anchors[i].name);
        json_decref(d->anchors[i].val);
    }
    d->nanch = 0;
}

static int oom(ydec *d) { return olm_error_set(d->err, "%s: out of memory", d->name); }

static int line_of(const yaml_event_t *ev) { return (int)ev->start_mark.line + 1; }

static int next_event(ydec *d, yaml_event_t *ev)
{
    if (yaml_parser_parse(&d->p, ev))
        return 0;
    const char *problem = d->p.problem ? d->p.problem : "unknown error";
    if (d->p.error == YAML_MEMORY_ERROR)
        return oom(d);
    if (d->p.context)
        return olm_error_set(d->err, "%s:%d: invalid YAML: %s %s", d->name,
                             (int)d->p.problem_mark.line + 1, problem, d->p.context);
    return olm_error_set(d->err, "%s:%d: invalid YAML: %s", d->name,
                         (int)d->p.problem_mark.line + 1, problem);
}

static int remember_anchor(ydec *d, const yaml_char_t *name, json_t *val, size_t cost)
{
    if (!name)
        return 0;
    /* A redefined anchor shadows the old one: search from the end. */
    if (d->nanch == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        anchor *na = realloc(d->anchors, cap * sizeof *na);
        if (!na)
            return oom(d);
        d->anchors = na;
        d->cap = cap;
    }
    char *n = strdup((const char *)name);
    if (!n)
        return oom(d);
    d->anchors[d->nanch++] = (anchor){n, json_incref(val), cost};
    return 0;
}

static const anchor *find_anchor(const ydec *d, const yaml_char_t *name)
{
    for (size_t i = d->nanch; i-- > 0;)
        if (strcmp(d->anchors[i].name, (const char *)name) == 0)
            return &d->anchors[i];
    return NULL;
}

/* go-yaml resolves only untagged scalars and the core type tags. */
static bool resolvable_tag(const yaml_char_t *tag)
{
    static const char *const tags[] = {
        "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp",
    };
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strcmp((const char *)tag, tags[i]) == 0)
            return true;
    return false;
}

/* Resolves a scalar event to a typed value (strings stay strings). */
static int scalar_resolve(ydec *d, const yaml_event_t *ev, fbc_yaml_scalar *out)
{
    const yaml_char_t *tag = ev->data.scalar.tag;
    bool resolve = tag ? resolvable_tag(tag) : ev->data.scalar.plain_implicit;
    if (!resolve) {
        memset(out, 0, sizeof *out);
        out->kind = FBC_Y_STRING;
        return 0;
    }
    if (fbc_yaml_resolve_plain((const char *)ev->data.scalar.value, ev->data.scalar.length, out) < 0)
        return oom(d);
    return 0;
}

static json_t *scalar_to_json(ydec *d, const yaml_event_t *ev)
{
    fbc_yaml_scalar s;
    if (scalar_resolve(d, ev, &s) < 0)
        return NULL;
    json_t *v = NULL;
    switch (s.kind) {
    case FBC_Y_STRING:
    case FBC_Y_MERGE:
        v = json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length);
        break;
    case FBC_Y_NULL: v = json_null(); break;
    case FBC_Y_BOOL: v = json_boolean(s.b); break;
    /* Every number ends up a float64: sigs.k8s.io/yaml writes JSON text that
     * encoding/json then reads back into interface{}. */
    case FBC_Y_INT: v = json_real((double)s.i); break;
    case FBC_Y_UINT: v = json_real((double)s.u); break;
    case FBC_Y_FLOAT:
        if (!isfinite(s.f)) {
            olm_error_set(d->err, "%s:%d: value %s cannot be represented in JSON", d->name,
                          line_of(ev), (const char *)ev->data.scalar.value);
            return NULL;
        }
        v = json_real(s.f);
        break;
    }
    if (!v)
        oom(d);
    return v;
}

static json_t *build(ydec *d, yaml_event_t *ev, int depth, size_t *cost);

/* The string form of a map key that was a scalar event.  Caller frees. */
static char *scalar_key(ydec *d, const yaml_event_t *ev, bool *is_merge)
{
    fbc_yaml_scalar s;
    char buf[64], *k = NULL;
    *is_merge = false;
    if (scalar_resolve(d, ev, &s) < 0)
        return NULL;
    switch (s.kind) {
    case FBC_Y_STRING:
        k = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        break;
    case FBC_Y_MERGE:
        *is_merge = true;
        k = strdup("<<");
        break;
    case FBC_Y_BOOL: k = strdup(s.b ? "true" : "false"); break;
    case FBC_Y_INT:
        snprintf(buf, sizeof buf, "%" PRId64, s.i);
        k = strdup(buf);
        break;
    case FBC_Y_FLOAT:
        fbc_format_float32_g(s.f, buf, sizeof buf);
        k = strdup(buf);
        break;
    case FBC_Y_NULL:
    case FBC_Y_UINT:
        olm_error_set(d->err, "%s:%d: unsupported map key %s", d->name, line_of(ev),
                      s.kind == FBC_Y_NULL ? "null" : (const char *)ev->data.scalar.value);
        return NULL;
    }
    if (!k)
        oom(d);
    return k;
}

/* The key text of an aliased value (only scalars can be keys). */
static char *alias_key(ydec *d, const yaml_event_t *ev, const json_t *v)
{
    char buf[64];
    const char *k = NULL;
    if (json_is_string(v))
        return strndup(json_string_value(v), json_string_length(v));
    if (json_is_boolean(v))
        k = json_is_true(v) ? "true" : "false";
    else if (json_is_number(v)) {
        double f = json_number_value(v);
        if (f == floor(f) && fabs(f) < 9.2e18)
            snprintf(buf, sizeof buf, "%" PRId64, (int64_t)f);
        else
            fbc_format_float32_g(f, buf, sizeof buf);
        k = buf;
    }
    if (!k) {
        olm_error_set(d->err, "%s:%d: invalid map key (alias to a %s)", d->name, line_of(ev),
                      json_is_null(v) ? "null" : "collection");
        return NULL;
    }
    char *s = strdup(k);
    if (!s)
        oom(d);
    return s;
}

/* Copies the keys of `src` (an object, or an array of objects) into `dst`. */
static int merge_into(ydec *d, json_t *dst, json_t *src, int line)
{
    if (json_is_object(src))
        return json_object_update(dst, src) < 0 ? oom(d) : 0;
    if (json_is_array(src)) {
        for (size_t i = json_array_size(src); i-- > 0;)
            if (!json_is_object(json_array_get(src, i)))
                goto bad;
        for (size_t i = json_array_size(src); i-- > 0;)
            if (json_object_update(dst, json_array_get(src, i)) < 0)
                return oom(d);
        return 0;
    }
bad:
    return olm_error_set(d->err, "%s:%d: map merge requires map or sequence of maps as the value",
                         d->name, line);
}

static json_t *build_mapping(ydec *d, int depth, size_t *cost)
{
    json_t *obj = json_object();
    if (!obj) {
        oom(d);
        return NULL;
    }
    for (;;) {
        yaml_event_t kev, vev;
        if (next_event(d, &kev) < 0)
            goto fail;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            return obj;
        }
        char *key = NULL;
        bool merge = false;
        int kline = line_of(&kev);
        if (kev.type == YAML_SCALAR_EVENT) {
            key = scalar_key(d, &kev, &merge);
        } else if (kev.type == YAML_ALIAS_EVENT) {
            const anchor *a = find_anchor(d, kev.data.alias.anchor);
            if (!a)
                olm_error_set(d->err, "%s:%d: unknown anchor '%s' referenced", d->name, kline,
                              (const char *)kev.data.alias.anchor);
            else
                key = alias_key(d, &kev, a->val);
        } else {
            olm_error_set(d->err, "%s:%d: invalid map key: a mapping or sequence cannot be a key",
                          d->name, kline);
        }
        yaml_event_delete(&kev);
        if (!key)
            goto fail;
        if (next_event(d, &vev) < 0) {
            free(key);
            goto fail;
        }
        size_t vcost = 0;
        json_t *val = build(d, &vev, depth + 1, &vcost);
        if (!val) {
            free(key);
            goto fail;
        }
        *cost += vcost;
        int rc;
        if (merge)
            rc = merge_into(d, obj, val, kline);
        else
            rc = json_object_setn(obj, key, strlen(key), val) < 0 ? oom(d) : 0;
        json_decref(val);
        free(key);
        if (rc < 0)
            goto fail;
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *build_sequence(ydec *d, int depth, size_t *cost)
{
    json_t *arr = json_array();
    if (!arr) {
        oom(d);
        return NULL;
    }
    for (;;) {
        yaml_event_t ev;
        if (next_event(d, &ev) < 0)
            break;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return arr;
        }
        size_t c = 0;
        json_t *v = build(d, &ev, depth + 1, &c);
        if (!v)
            break;
        *cost += c;
        if (json_array_append_new(arr, v) < 0) {
            oom(d);
            break;
        }
    }
    json_decref(arr);
    return NULL;
}

/* Builds the node that starts with `ev` (consumed).  NULL on error. */
static json_t *build(ydec *d, yaml_event_t *ev, int depth, size_t *cost)
{
    json_t *v = NULL;
    const yaml_char_t *anchor_name = NULL;
    int line = line_of(ev);
    *cost = 1;
    if (depth > MAX_DEPTH) {
        olm_error_set(d->err, "%s:%d: document nested deeper than %d levels", d->name, line,
                      MAX_DEPTH);
        yaml_event_delete(ev);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        anchor_name = ev->data.scalar.anchor;
        v = scalar_to_json(d, ev);
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor_name = ev->data.sequence_start.anchor;
        v = build_sequence(d, depth, cost);
        break;
    case YAML_MAPPING_START_EVENT:
        anchor_name = ev->data.mapping_start.anchor;
        v = build_mapping(d, depth, cost);
        break;
    case YAML_ALIAS_EVENT: {
        const anchor *a = find_anchor(d, ev->data.alias.anchor);
        if (!a) {
            olm_error_set(d->err, "%s:%d: unknown anchor '%s' referenced", d->name, line,
                          (const char *)ev->data.alias.anchor);
        } else {
            v = json_incref(a->val);
            *cost = a->cost;
        }
        break;
    }
    default:
        olm_error_set(d->err, "%s:%d: unexpected YAML event", d->name, line);
        break;
    }
    if (v && *cost > MAX_EXPANDED_NODES) {
        olm_error_set(d->err, "%s:%d: document contains excessive aliasing", d->name, line);
        json_decref(v);
        v = NULL;
    }
    if (v && anchor_name && remember_anchor(d, anchor_name, v, *cost) < 0) {
        json_decref(v);
        v = NULL;
    }
    yaml_event_delete(ev);
    return v;
}

static const char *type_name(const json_t *v)
{
    if (json_is_array(v))
        return "sequence";
    if (json_is_string(v))
        return "string";
    if (json_is_number(v))
        return "number";
    return "boolean";
}

/* Decodes one document after its DOCUMENT_START; 1 = stream ended, 0 = ok, -1 = error. */
static int decode_document(ydec *d, fbc_blob_fn fn, void *ud)
{
    yaml_event_t ev;
    if (next_event(d, &ev) < 0)
        return -1;
    int line = line_of(&ev);
    size_t cost = 0;
    json_t *root = build(d, &ev, 0, &cost);
    if (!root)
        return -1;
    if (next_event(d, &ev) < 0) { /* DOCUMENT_END */
        json_decref(root);
        return -1;
    }
    yaml_event_delete(&ev);
    anchors_clear(d);
    if (json_is_null(root)) { /* empty or comment-only document */
        json_decref(root);
        return 0;
    }
    if (!json_is_object(root)) {
        olm_error_set(d->err, "%s:%d: expected a YAML mapping (JSON object), got a %s", d->name,
                      line, type_name(root));
        json_decref(root);
        return -1;
    }
    return fn(ud, root, line, d->err);
}

int fbc_decode_yaml(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                    olm_error *err)
{
    ydec d = {.name = name, .err = err};
    if (!yaml_parser_initialize(&d.p))
        return olm_error_set(err, "%s: out of memory", name);
    yaml_parser_set_input_string(&d.p, (const unsigned char *)data, len);
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (next_event(&d, &ev) < 0) {
            rc = -1;
            break;
        }
        yaml_event_type_t t = ev.type;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT)
            break;
        if (t == YAML_DOCUMENT_START_EVENT && decode_document(&d, fn, ud) < 0) {
            rc = -1;
            break;
        }
    }
    anchors_clear(&d);
    free(d.anchors);
    yaml_parser_delete(&d.p);
    return rc;
}

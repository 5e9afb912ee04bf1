/* gocompat_yaml: YAML streams to jansson values the way sigs.k8s.io/yaml turns
 * YAML into JSON (go-yaml v2 underneath), and the kubeconfig reader's simpler
 * every-scalar-a-string flavour.
 *
 * Hand-written because what a YAML file means is observable and libyaml only
 * tokenises: a catalog's normalised bytes, a bundle's properties and a
 * kubeconfig must read as upstream reads them (YAML 1.1 booleans, integers in
 * every base, float32 map keys, merge keys), with errors that name the line.
 *
 * libyaml gives events and the tree is built recursively.  Scalars follow
 * gocompat_yaml_scalar.c.  Map keys become strings the way sigs.k8s.io/yaml
 * does it (ints in decimal, booleans as true/false, floats with strconv 'g' at
 * 32 bits; a null or huge unsigned key is an error).  Anchors are per document
 * and aliases share the anchored jansson value by reference; a budget on
 * expanded nodes and bytes stops "billion laughs" documents from blowing up an
 * encoder later (nodes alone let one 1 MiB scalar aliased 10 x 10 x 10 times
 * through: 31 nodes, 1 GiB of JSON).  `<<` merge keys copy the merged mappings' keys in place, later keys
 * overriding earlier ones (go-yaml v2 order); in a sequence of merges the first
 * mapping wins.  Problems are reported as codes (gocompat.h) so that every
 * caller keeps its own wording. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "olm_array.h"
#include "gocompat_internal.h"

/* What a value stands for once aliases are expanded: its nodes, and its bytes (the scalars'
 * and keys' text plus a few per node, about the size of its JSON text).  Sums saturate. */
typedef struct ycost {
    size_t nodes, bytes;
} ycost;

typedef struct anchor {
    char *name;  /* owned */
    json_t *val; /* owned reference */
    ycost cost;
} anchor;

typedef struct ydec {
    yaml_parser_t p;
    unsigned flags;
    int max_depth;
    size_t max_nodes, max_bytes;
    anchor *anchors;
    size_t nanch, cap;
    gocompat_yaml_bigs *bigs; /* non-NULL: integers stay integers (YAMLToJSON text) */
    gocompat_yaml_error *e;
} ydec;

/* Sets the error; returns -1 so that callers can `return fail(...)`. */
static int fail(ydec *d, gocompat_yaml_errcode code, int line, const char *text)
{
    d->e->code = code;
    d->e->line = line;
    snprintf(d->e->text, sizeof d->e->text, "%s", text ? text : "");
    return -1;
}

static int oom(ydec *d) { return fail(d, GOCOMPAT_YAML_ENOMEM, 0, NULL); }

static int line_of(const yaml_event_t *ev) { return (int)ev->start_mark.line + 1; }

static size_t sat_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

static void cost_add(ycost *to, ycost c)
{
    to->nodes = sat_add(to->nodes, c.nodes);
    to->bytes = sat_add(to->bytes, c.bytes);
}

static void anchors_clear(ydec *d)
{
    for (size_t i = 0; i < d->nanch; i++) {
        free(d->anchors[i].name);
        json_decref(d->anchors[i].val);
    }
    d->nanch = 0;
}

static int next_event(ydec *d, yaml_event_t *ev)
{
    if (yaml_parser_parse(&d->p, ev))
        return 0;
    if (d->p.error == YAML_MEMORY_ERROR)
        return oom(d);
    fail(d, GOCOMPAT_YAML_ESYNTAX, (int)d->p.problem_mark.line + 1, NULL);
    d->e->problem = d->p.problem;
    d->e->context = d->p.context;
    return -1;
}

static int remember_anchor(ydec *d, const yaml_char_t *name, json_t *val, ycost cost)
{
    if (!name || (d->flags & GOCOMPAT_YAML_NO_ALIASES))
        return 0;
    /* A redefined anchor shadows the old one: search from the end. */
    if (OLM_ARRAY_RESERVE(d->anchors, d->cap, d->nanch + 1) < 0)
        return oom(d);
    char *n = strdup((const char *)name);
    if (!n)
        return oom(d);
    d->anchors[d->nanch++] = (anchor){n, json_incref(val), cost};
    return 0;
}

/* The anchored value an alias event names; NULL with the error set. */
static const anchor *resolve_alias(ydec *d, const yaml_event_t *ev)
{
    int line = line_of(ev);
    const char *name = (const char *)ev->data.alias.anchor;
    if (d->flags & GOCOMPAT_YAML_NO_ALIASES) {
        fail(d, GOCOMPAT_YAML_EALIAS, line, name);
        return NULL;
    }
    for (size_t i = d->nanch; i-- > 0;)
        if (strcmp(d->anchors[i].name, name) == 0)
            return &d->anchors[i];
    fail(d, GOCOMPAT_YAML_EANCHOR, line, name);
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
static int scalar_resolve(ydec *d, const yaml_event_t *ev, gocompat_yaml_scalar *out)
{
    const yaml_char_t *tag = ev->data.scalar.tag;
    bool resolve = tag ? resolvable_tag(tag) : ev->data.scalar.plain_implicit;
    if (!resolve) {
        memset(out, 0, sizeof *out);
        out->kind = GOCOMPAT_YAML_STRING;
        return 0;
    }
    if (gocompat_yaml_resolve_plain((const char *)ev->data.scalar.value, ev->data.scalar.length,
                                    out) < 0)
        return oom(d);
    return 0;
}

/* Scalars and keys go to jansson with its _nocheck calls: libyaml hands out valid UTF-8 only
 * (its reader refuses bad, overlong and surrogate sequences in the input, its scanner escapes
 * that name a surrogate or pass U+10FFFF; test_yaml.c, test_invalid_utf8), so jansson's own
 * byte-by-byte check found nothing and cost ~7% of a catalog's decode (fbc_bench). */
static json_t *string_value(ydec *d, const yaml_event_t *ev)
{
    json_t *v = json_stringn_nocheck((const char *)ev->data.scalar.value, ev->data.scalar.length);
    if (!v)
        fail(d, GOCOMPAT_YAML_ESCALAR, line_of(ev), NULL);
    return v;
}

/* GOCOMPAT_YAML_STRINGS: a string unless a plain null spelling. */
static json_t *scalar_as_string(ydec *d, const yaml_event_t *ev)
{
    static const char *const nulls[] = {"null", "~", "Null", "NULL"};
    const char *s = (const char *)ev->data.scalar.value;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
            if (strcmp(s, nulls[i]) == 0)
                return json_null();
    return string_value(d, ev);
}

static json_t *scalar_to_json(ydec *d, const yaml_event_t *ev)
{
    if (d->flags & GOCOMPAT_YAML_STRINGS)
        return scalar_as_string(d, ev);
    gocompat_yaml_scalar s;
    if (scalar_resolve(d, ev, &s) < 0)
        return NULL;
    json_t *v = NULL;
    switch (s.kind) {
    case GOCOMPAT_YAML_STRING:
    case GOCOMPAT_YAML_MERGE: return string_value(d, ev);
    case GOCOMPAT_YAML_NULL: v = json_null(); break;
    case GOCOMPAT_YAML_BOOL: v = json_boolean(s.b); break;
    /* After json.Unmarshal into interface{} every number is a float64; the
     * text YAMLToJSON writes keeps integers (d->bigs set). */
    case GOCOMPAT_YAML_INT: v = d->bigs ? json_integer(s.i) : json_real((double)s.i); break;
    case GOCOMPAT_YAML_UINT:
        v = json_real((double)s.u);
        if (v && d->bigs && gocompat_yaml_bigs_add(d->bigs, v, s.u) < 0) {
            json_decref(v);
            v = NULL;
        }
        break;
    case GOCOMPAT_YAML_FLOAT:
        if (!isfinite(s.f)) {
            fail(d, GOCOMPAT_YAML_ENONFINITE, line_of(ev), (const char *)ev->data.scalar.value);
            d->e->value = s.f;
            return NULL;
        }
        v = json_real(s.f);
        break;
    }
    if (!v)
        oom(d);
    return v;
}

/* sigs.k8s.io/yaml's text for a float map key: FormatFloat 'g' at 32 bits, with
 * go-yaml's spellings of the specials (1e39 is +Inf as a float32: ".inf"). */
static void float_key(double f, char buf[GOCOMPAT_FLOAT_BUF])
{
    gocompat_format_float_g(f, 32, buf);
    if (strcmp(buf, "+Inf") == 0)
        snprintf(buf, GOCOMPAT_FLOAT_BUF, ".inf");
    else if (strcmp(buf, "-Inf") == 0)
        snprintf(buf, GOCOMPAT_FLOAT_BUF, "-.inf");
    else if (strcmp(buf, "NaN") == 0)
        snprintf(buf, GOCOMPAT_FLOAT_BUF, ".nan");
}

/* Room for a map key on build_mapping's stack (per nesting level, up to 1000 deep). */
#define KEY_SMALL 64

/* The string form of a map key that was a scalar event: in `small` (KEY_SMALL bytes, the
 * caller's) when it fits, as most keys do (one malloc and free less per key of a
 * catalog), else malloc'd; the caller frees it unless it is `small`. */
static char *scalar_key(ydec *d, const yaml_event_t *ev, bool *is_merge, char *small)
{
    gocompat_yaml_scalar s;
    char buf[64], *k = NULL;
    *is_merge = false;
    if (scalar_resolve(d, ev, &s) < 0)
        return NULL;
    switch (s.kind) {
    case GOCOMPAT_YAML_STRING:
        if (ev->data.scalar.length < KEY_SMALL) {
            /* The same string strndup gives: up to the first NUL. */
            k = small;
            memcpy(k, ev->data.scalar.value, ev->data.scalar.length);
            k[ev->data.scalar.length] = '\0';
        } else {
            k = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        }
        break;
    case GOCOMPAT_YAML_MERGE:
        *is_merge = true;
        k = strdup("<<");
        break;
    case GOCOMPAT_YAML_BOOL: k = strdup(s.b ? "true" : "false"); break;
    case GOCOMPAT_YAML_INT:
        snprintf(buf, sizeof buf, "%" PRId64, s.i);
        k = strdup(buf);
        break;
    case GOCOMPAT_YAML_FLOAT:
        float_key(s.f, buf);
        k = strdup(buf);
        break;
    case GOCOMPAT_YAML_NULL:
    case GOCOMPAT_YAML_UINT:
        fail(d, GOCOMPAT_YAML_EKEY, line_of(ev),
             s.kind == GOCOMPAT_YAML_NULL ? "null" : (const char *)ev->data.scalar.value);
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
    if (json_is_string(v)) {
        char *s = strndup(json_string_value(v), json_string_length(v));
        if (!s)
            oom(d);
        return s;
    }
    if (json_is_boolean(v)) {
        k = json_is_true(v) ? "true" : "false";
    } else if (json_is_number(v)) {
        double f = json_number_value(v);
        if (f == floor(f) && fabs(f) < 9.2e18)
            snprintf(buf, sizeof buf, "%" PRId64, (int64_t)f);
        else
            float_key(f, buf);
        k = buf;
    }
    if (!k) {
        fail(d, GOCOMPAT_YAML_EKEY_ALIAS, line_of(ev), json_is_null(v) ? "null" : "collection");
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
    return fail(d, GOCOMPAT_YAML_EMERGE, line, NULL);
}

static json_t *build(ydec *d, yaml_event_t *ev, int depth, ycost *cost);

/* GOCOMPAT_YAML_STRINGS: a key is built like any node (a collection too, so
 * that problems inside it come first) and must then be a string. */
static char *string_key(ydec *d, yaml_event_t *kev, int depth, int line)
{
    ycost cost = {0, 0};
    json_t *k = build(d, kev, depth + 1, &cost);
    if (!k)
        return NULL;
    char *s = NULL;
    if (json_is_string(k)) {
        if (!(s = strdup(json_string_value(k))))
            oom(d);
    } else {
        fail(d, json_is_null(k) ? GOCOMPAT_YAML_EKEY : GOCOMPAT_YAML_EKEY_COLLECTION, line,
             json_is_null(k) ? "null" : NULL);
    }
    json_decref(k);
    return s;
}

/* An anchor on a scalar key names that scalar, as a value, for later aliases
 * (go-yaml keeps it like any other node).  A .nan or .inf key is fine as a key
 * but has no JSON value: it is left unnamed. */
static int remember_key_anchor(ydec *d, const yaml_event_t *kev)
{
    if (!kev->data.scalar.anchor)
        return 0;
    json_t *v = scalar_to_json(d, kev);
    if (!v) {
        if (d->e->code != GOCOMPAT_YAML_ENONFINITE)
            return -1;
        d->e->code = GOCOMPAT_YAML_OK;
        return 0;
    }
    int rc = remember_anchor(d, kev->data.scalar.anchor, v, (ycost){1, kev->data.scalar.length + 2});
    json_decref(v);
    return rc;
}

/* The key that starts with `kev` (consumed); NULL with the error set.  Freed by the
 * caller unless it is `small` (see scalar_key). */
static char *mapping_key(ydec *d, yaml_event_t *kev, int depth, bool *merge, char *small)
{
    int kline = line_of(kev);
    char *key = NULL;
    *merge = false;
    if (d->flags & GOCOMPAT_YAML_STRINGS)
        return string_key(d, kev, depth, kline);
    if (kev->type == YAML_SCALAR_EVENT) {
        key = scalar_key(d, kev, merge, small);
        if (key && remember_key_anchor(d, kev) < 0) {
            if (key != small)
                free(key);
            key = NULL;
        }
    } else if (kev->type == YAML_ALIAS_EVENT) {
        const anchor *a = resolve_alias(d, kev);
        if (a)
            key = alias_key(d, kev, a->val);
    } else {
        fail(d, GOCOMPAT_YAML_EKEY_COLLECTION, kline, NULL);
    }
    yaml_event_delete(kev);
    return key;
}

static json_t *build_mapping(ydec *d, int depth, ycost *cost)
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
        int kline = line_of(&kev);
        bool merge;
        char small[KEY_SMALL];
        char *key = mapping_key(d, &kev, depth, &merge, small);
        if (!key)
            goto fail;
        if (next_event(d, &vev) < 0) {
            if (key != small)
                free(key);
            goto fail;
        }
        ycost vcost = {0, 0};
        json_t *val = build(d, &vev, depth + 1, &vcost);
        if (!val) {
            if (key != small)
                free(key);
            goto fail;
        }
        size_t klen = strlen(key);
        vcost.bytes = sat_add(vcost.bytes, klen + 4); /* "key": and a comma */
        cost_add(cost, vcost);
        int rc;
        if (merge) {
            rc = merge_into(d, obj, val, kline);
            json_decref(val);
        } else {
            /* The object takes our reference (and drops it on failure): an incref and a
             * decref less per key, each an atomic instruction (~1% of a catalog decode).
             * Unchecked UTF-8: see string_value. */
            rc = json_object_setn_new_nocheck(obj, key, klen, val) < 0 ? oom(d) : 0;
        }
        if (key != small)
            free(key);
        if (rc < 0)
            goto fail;
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *build_sequence(ydec *d, int depth, ycost *cost)
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
        ycost c = {0, 0};
        json_t *v = build(d, &ev, depth + 1, &c);
        if (!v)
            break;
        c.bytes = sat_add(c.bytes, 1); /* a comma */
        cost_add(cost, c);
        if (json_array_append_new(arr, v) < 0) {
            oom(d);
            break;
        }
    }
    json_decref(arr);
    return NULL;
}

/* Builds the node that starts with `ev` (consumed).  NULL on error. */
static json_t *build(ydec *d, yaml_event_t *ev, int depth, ycost *cost)
{
    json_t *v = NULL;
    const yaml_char_t *anchor_name = NULL;
    int line = line_of(ev);
    *cost = (ycost){1, 2}; /* the node, and its quotes or brackets */
    if (depth > d->max_depth) {
        fail(d, GOCOMPAT_YAML_EDEPTH, line, NULL);
        d->e->value = d->max_depth;
        yaml_event_delete(ev);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        anchor_name = ev->data.scalar.anchor;
        v = scalar_to_json(d, ev);
        cost->bytes = sat_add(cost->bytes, ev->data.scalar.length);
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
        const anchor *a = resolve_alias(d, ev);
        if (a) {
            v = json_incref(a->val);
            *cost = a->cost;
        }
        break;
    }
    default:
        fail(d, GOCOMPAT_YAML_EEVENT, line, NULL);
        d->e->value = ev->type;
        break;
    }
    if (v && (cost->nodes > d->max_nodes || cost->bytes > d->max_bytes)) {
        fail(d, GOCOMPAT_YAML_EALIASING, line, NULL);
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

/* Decodes one document after its DOCUMENT_START; returns the callback's 0 or 1,
 * or -1 on error. */
static int decode_document(ydec *d, gocompat_yaml_doc_fn fn, void *ud)
{
    yaml_event_t ev;
    if (next_event(d, &ev) < 0)
        return -1;
    int line = line_of(&ev);
    ycost cost = {0, 0};
    json_t *root = build(d, &ev, 0, &cost);
    if (!root)
        return -1;
    if (d->flags & GOCOMPAT_YAML_FIRST_ROOT) {
        int rc = fn(ud, root, line);
        return rc < 0 ? fail(d, GOCOMPAT_YAML_ECALLBACK, line, NULL) : 1;
    }
    if (next_event(d, &ev) < 0) { /* DOCUMENT_END */
        json_decref(root);
        return -1;
    }
    yaml_event_delete(&ev);
    anchors_clear(d);
    int rc = fn(ud, root, line);
    return rc < 0 ? fail(d, GOCOMPAT_YAML_ECALLBACK, line, NULL) : rc;
}

/* max(64 MiB, 4 x the input): a document without aliases stays under 2 x its input. */
static size_t default_max_bytes(size_t len)
{
    size_t four = len > SIZE_MAX / 4 ? SIZE_MAX : len * 4;
    return four > GOCOMPAT_YAML_DEFAULT_MAX_BYTES ? four : GOCOMPAT_YAML_DEFAULT_MAX_BYTES;
}

int gocompat_yaml_decode_ex(const char *data, size_t len, const gocompat_yaml_opts *opts,
                            gocompat_yaml_bigs *bigs, gocompat_yaml_doc_fn fn, void *ud,
                            gocompat_yaml_error *e)
{
    memset(e, 0, sizeof *e);
    ydec d = {
        .flags = opts ? opts->flags : 0,
        .max_depth = opts && opts->max_depth ? opts->max_depth : GOCOMPAT_YAML_DEFAULT_MAX_DEPTH,
        .max_nodes = opts && opts->max_nodes ? opts->max_nodes : GOCOMPAT_YAML_DEFAULT_MAX_NODES,
        .max_bytes = opts && opts->max_bytes ? opts->max_bytes : default_max_bytes(len),
        .bigs = bigs,
        .e = e,
    };
    if (!yaml_parser_initialize(&d.p))
        return oom(&d);
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
        if (t == YAML_DOCUMENT_START_EVENT) {
            int dr = decode_document(&d, fn, ud);
            if (dr != 0) {
                rc = dr < 0 ? -1 : 0;
                break;
            }
        }
    }
    anchors_clear(&d);
    free(d.anchors);
    yaml_parser_delete(&d.p);
    return rc;
}

int gocompat_yaml_decode(const char *data, size_t len, const gocompat_yaml_opts *opts,
                         gocompat_yaml_doc_fn fn, void *ud, gocompat_yaml_error *e)
{
    return gocompat_yaml_decode_ex(data, len, opts, NULL, fn, ud, e);
}

/* fbc_decode_yaml: multi-document YAML to jansson objects, the way
 * sigs.k8s.io/yaml turns YAML into JSON and catalogd then decodes it into
 * map[string]interface{} (gocompat_yaml_decode does both).  What is left here
 * is the FBC rule on top: every non-empty document must be a mapping, and the
 * wording of errors as "<name>:<line>: <reason>".  For the catalog loader, whose callback
 * keeps nothing of a blob (`consumed`), each document's DOM lives in a bump arena
 * (fbc_dom_arena.c), reset once the callback is done with it. */
#include "fbc_internal.h"

typedef struct ydoc {
    fbc_dom_arena arena;
    bool consumed; /* arena in use */
    const char *name;
    fbc_blob_fn fn;
    void *ud;
    olm_error *err;
} ydoc;

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

static int on_document(void *ud, json_t *root, int line)
{
    ydoc *d = ud;
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
    int rc = d->fn(d->ud, root, line, d->err) < 0 ? -1 : 0;
    /* The callback has dropped the DOM, and gocompat_yaml the document's anchors before it. */
    if (d->consumed)
        fbc_dom_arena_reset(&d->arena);
    return rc;
}

int fbc_decode_yaml(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                    bool consumed, olm_error *err)
{
    ydoc d = {.consumed = consumed, .name = name, .fn = fn, .ud = ud, .err = err};
    /* typed scalars, depth 1000; aliases expand to at most 5M nodes and max(64 MiB, 4 x the
     * file) bytes */
    gocompat_yaml_opts opts = {0, 0, 0, 0};
    gocompat_yaml_error e;
    if (consumed)
        fbc_dom_arena_begin(&d.arena);
    int rc = gocompat_yaml_decode(data, len, &opts, on_document, &d, &e);
    if (consumed)
        fbc_dom_arena_end(&d.arena); /* a failed document's values were dropped before this */
    if (rc < 0)
        return gocompat_yaml_strerror(&e, name, err); /* keeps a callback's own message */
    return 0;
}

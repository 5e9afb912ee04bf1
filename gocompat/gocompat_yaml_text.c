/* gocompat_yaml_text: sigs.k8s.io/yaml.YAMLToJSON as text, i.e. json.Marshal
 * of what go-yaml v2 decoded.
 *
 * Hand-written for the same reason as gocompat_yaml.c; this is the flavour for
 * a caller that keeps the JSON text itself (a bundle's properties.yaml becomes
 * json.RawMessage values upstream), where integers must stay exact, uint64
 * included, and floats are printed as float64.  The tree comes from
 * gocompat_yaml.c and the text from gocompat_json_encode.c; the only extra is
 * the list of uint64 values a jansson integer cannot hold. */
#include <inttypes.h>
#include <stdlib.h>

#include "gocompat_internal.h"

int gocompat_yaml_bigs_add(gocompat_yaml_bigs *b, const json_t *node, uint64_t u)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        gocompat_yaml_big *items = realloc(b->items, cap * sizeof *items);
        if (!items)
            return -1;
        b->items = items;
        b->cap = cap;
    }
    b->items[b->n++] = (gocompat_yaml_big){node, u};
    return 0;
}

/* The encoder's number hook: writes the listed uint64 values exactly. */
static int big_number(void *ud, const json_t *v, strbuf *out)
{
    const gocompat_yaml_bigs *b = ud;
    for (size_t i = 0; i < b->n; i++)
        if (b->items[i].node == v)
            return strbuf_printf(out, "%" PRIu64, b->items[i].u) < 0 ? -1 : 1;
    return 0;
}

static int take_first_root(void *ud, json_t *root, int line)
{
    (void)line;
    *(json_t **)ud = root;
    return 1; /* YAMLToJSON reads one document */
}

int gocompat_yaml_to_json(const char *data, size_t len, const gocompat_yaml_opts *opts,
                          unsigned json_flags, size_t max_len, strbuf *out,
                          gocompat_yaml_error *e)
{
    gocompat_yaml_bigs bigs = {NULL, 0, 0};
    json_t *root = NULL;
    int rc = gocompat_yaml_decode_ex(data, len, opts, &bigs, take_first_root, &root, e);
    if (rc == 0 && !root) {
        /* No document at all: Unmarshal leaves interface{} nil. */
        if (strbuf_puts(out, "null") < 0)
            rc = -1, e->code = GOCOMPAT_YAML_ENOMEM;
    } else if (rc == 0) {
        gocompat_json_limits lim = {
            .max_len = max_len,
            .max_depth = opts && opts->max_depth ? opts->max_depth : GOCOMPAT_YAML_DEFAULT_MAX_DEPTH,
            .number = bigs.n ? big_number : NULL,
            .ud = &bigs,
        };
        int er = gocompat_json_encode_limited(out, root, json_flags, &lim);
        if (er < 0) {
            rc = -1;
            e->code = er == GOCOMPAT_JSON_ETOOBIG  ? GOCOMPAT_YAML_ETOOBIG
                      : er == GOCOMPAT_JSON_EDEPTH ? GOCOMPAT_YAML_EDEPTH
                                                   : GOCOMPAT_YAML_ENOMEM;
            e->line = 0;
            e->value = e->code == GOCOMPAT_YAML_ETOOBIG ? (double)max_len : lim.max_depth;
        }
    }
    json_decref(root);
    free(bigs.items);
    return rc;
}

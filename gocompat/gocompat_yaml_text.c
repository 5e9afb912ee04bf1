/* gocompat_yaml_text: sigs.k8s.io/yaml.YAMLToJSON as text, i.e. json.Marshal
 * of what go-yaml v2 decoded.
 *
 * Hand-written for the same reason as gocompat_yaml.c; this is the flavour for
 * a caller that keeps the JSON text itself (a bundle's properties.yaml becomes
 * json.RawMessage values upstream), where integers must stay exact, uint64
 * included, and floats are printed as float64.  The tree comes from
 * gocompat_yaml.c and the text from gocompat_json_encode.c; the extras are the
 * list of uint64 values a jansson integer cannot hold, and a first pass that
 * reports what go-yaml's parser reports before anything is decoded. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "gocompat_internal.h"
#include "olm_array.h"

/* The encoder's number hook: writes the listed uint64 values exactly. */
static int big_number(void *ud, const json_t *v, strbuf *out)
{
    const gocompat_yaml_bigs *b = ud;
    for (size_t i = 0; i < b->n; i++)
        if (b->items[i].node == v)
            return strbuf_printf(out, "%" PRIu64, b->items[i].u) < 0 ? -1 : 1;
    return 0;
}

/* go-yaml parses the whole document before decoding it, so its syntax errors
 * and unknown anchors come before any problem with a key, a merge or a value:
 * this pass over the first document's events reports those first.  0, or -1
 * with `e` filled. */
static int check_first_document(const char *data, size_t len, gocompat_yaml_error *e)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        e->code = GOCOMPAT_YAML_ENOMEM;
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    char **anchors = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (bool done = false; !done && rc == 0;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            e->code = p.error == YAML_MEMORY_ERROR ? GOCOMPAT_YAML_ENOMEM : GOCOMPAT_YAML_ESYNTAX;
            e->line = (int)p.problem_mark.line + 1;
            e->problem = p.problem;
            e->context = p.context;
            rc = -1;
            break;
        }
        const yaml_char_t *anchor = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_END_EVENT: done = true; break;
        case YAML_SCALAR_EVENT: anchor = ev.data.scalar.anchor; break;
        case YAML_SEQUENCE_START_EVENT: anchor = ev.data.sequence_start.anchor; break;
        case YAML_MAPPING_START_EVENT: anchor = ev.data.mapping_start.anchor; break;
        case YAML_ALIAS_EVENT: {
            const char *name = (const char *)ev.data.alias.anchor;
            size_t i = 0;
            while (i < n && strcmp(anchors[i], name) != 0)
                i++;
            if (i == n) {
                e->code = GOCOMPAT_YAML_EANCHOR;
                e->line = (int)ev.start_mark.line + 1;
                snprintf(e->text, sizeof e->text, "%s", name);
                rc = -1;
            }
            break;
        }
        default: break;
        }
        if (anchor) {
            if (OLM_ARRAY_RESERVE(anchors, cap, n + 1) < 0 || !(anchors[n] = strdup((const char *)anchor))) {
                e->code = GOCOMPAT_YAML_ENOMEM;
                rc = -1;
            } else {
                n++;
            }
        }
        yaml_event_delete(&ev);
    }
    for (size_t i = 0; i < n; i++)
        free(anchors[i]);
    free(anchors);
    yaml_parser_delete(&p);
    return rc;
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
    memset(e, 0, sizeof *e);
    if (check_first_document(data, len, e) < 0)
        return -1;
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

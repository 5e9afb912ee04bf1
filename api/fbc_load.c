/* fbc_load: turn a directory or a buffer into an fbc_catalog.
 *
 * One blob at a time: decode it, extract schema/package/name, build its typed view
 * (copying the few strings the view keeps), append its normalised line (§4.3) to the
 * catalog's jsonl buffer, free the DOM.  Peak memory is thus the retained output plus
 * one blob's DOM and one file's bytes, not a DOM per blob.  Render and catalogd's
 * store then only write the buffer out, and a blob that cannot be normalised fails
 * the load, as upstream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "fbc_internal.h"

typedef struct loader {
    fbc_catalog *c;
    const char *file;    /* fbc_meta.file for blobs of the current source (catalog-owned) */
    const char *display; /* how messages name the current source */
    fbc_span_marks marks; /* reused for every blob */
    fbc_input *input;    /* the current file, NULL for a caller's buffer */
} loader;

static int add_meta(fbc_catalog *c, const char *schema, const char *package, const char *name,
                    const char *file, int lineno)
{
    fbc_priv *p = c->priv;
    if (OLM_ARRAY_RESERVE(c->metas, p->metas_cap, c->nmetas + 1) < 0)
        return -1;
    fbc_meta m = {.file = file, .lineno = lineno};
    if (!(m.schema = fbc_arena_strdup(&p->strings, schema)) ||
        !(m.package = fbc_arena_strdup(&p->strings, package)) ||
        !(m.name = fbc_arena_strdup(&p->strings, name)))
        return -1;
    c->metas[c->nmetas++] = m;
    return 0;
}

static int add_blob(void *ud, json_t *obj, int lineno, olm_error *err)
{
    loader *L = ud;
    fbc_catalog *c = L->c;
    fbc_priv *p = c->priv;
    const char *schema, *package, *name;
    if (L->input) /* blobs come in file order: what lies before this one is done */
        fbc_input_consumed_before_line(L->input, lineno);
    if (fbc_meta_keys(obj, &schema, &package, &name, err) < 0) {
        json_decref(obj);
        return olm_error_wrap(err, "%s:%d", L->display, lineno);
    }
    size_t start = p->jsonl.len;
    int rc = add_meta(c, schema, package, name, L->file, lineno);
    if (rc == 0)
        rc = fbc_model_add(c, c->nmetas - 1, obj, &L->marks);
    if (rc == 0) {
        rc = fbc_encode_json(obj, &p->jsonl, &L->marks);
        if (rc == 0)
            rc = strbuf_putc(&p->jsonl, '\n');
        if (rc == 0)
            rc = fbc_model_note_spans(c, &L->marks);
    }
    json_decref(obj);
    if (rc < 0)
        return olm_error_set(err, "%s:%d: out of memory", L->display, lineno);
    fbc_meta *m = &c->metas[c->nmetas - 1];
    m->offset = start;
    m->line_len = p->jsonl.len - start;
    return 0;
}

fbc_catalog *fbc_catalog_new(void)
{
    fbc_catalog *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->priv = calloc(1, sizeof(fbc_priv));
    if (!c->priv) {
        free(c);
        return NULL;
    }
    return c;
}

fbc_catalog *fbc_part_new(void)
{
    fbc_catalog *c = fbc_catalog_new();
    if (c)
        ((fbc_priv *)c->priv)->map_text = true;
    return c;
}

/* Keeps a copy of a source name for the catalog's lifetime. */
static const char *own_name(fbc_catalog *c, const char *name)
{
    fbc_priv *p = c->priv;
    if (OLM_ARRAY_RESERVE(p->files, p->files_cap, p->nfiles + 1) < 0)
        return NULL;
    char *s = strdup(name);
    if (s)
        p->files[p->nfiles++] = s;
    return s;
}

void fbc_catalog_free(fbc_catalog *c)
{
    if (!c)
        return;
    fbc_model_free(c);
    free(c->metas);
    fbc_priv *p = c->priv;
    if (p) {
        fbc_text_free(&p->jsonl);
        fbc_arena_free(&p->strings);
        free(p->value_offs);
        for (size_t i = 0; i < p->nfiles; i++)
            free(p->files[i]);
        free(p->files);
        for (size_t i = 0; i < p->nshape; i++)
            free(p->shape[i]);
        free(p->shape);
        free(p);
    }
    free(c);
}

static fbc_catalog *finish(loader *L, int rc, olm_error *err)
{
    free(L->marks.items);
    if (rc == 0 && fbc_model_finish(L->c, err) == 0)
        return L->c;
    fbc_catalog_free(L->c);
    return NULL;
}

fbc_catalog *fbc_load_buffer(const char *data, size_t len, const char *source_name,
                             olm_error *err)
{
    loader L = {0};
    if (!source_name)
        source_name = "<buffer>";
    if (!(L.c = fbc_catalog_new()) || !(L.file = own_name(L.c, source_name))) {
        fbc_catalog_free(L.c);
        olm_error_set(err, "%s: out of memory", source_name);
        return NULL;
    }
    L.display = L.file;
    int rc = fbc_decode_stream_consumed(data, len, source_name, add_blob, &L, err);
    return finish(&L, rc, err);
}

int fbc_load_path_into(fbc_catalog *c, const char *path, const char *rel, olm_error *err)
{
    loader L = {.c = c};
    fbc_input in;
    int rc;
    if (!(L.file = own_name(c, rel))) {
        rc = olm_error_set(err, "loading %s: out of memory", path);
    } else if ((rc = fbc_input_open(&in, path, err)) == 0) {
        fbc_priv *p = c->priv;
        if (p->map_text && !p->jsonl.data)
            (void)fbc_text_map(&p->jsonl, in.len); /* else an ordinary buffer, copied when joined */
        L.display = path;
        L.input = &in;
        rc = fbc_decode_stream_consumed(in.data, in.len, path, add_blob, &L, err);
        fbc_input_close(&in);
    }
    free(L.marks.items);
    return rc;
}

int fbc_load_file_into(fbc_catalog *c, const char *dir, const char *rel, olm_error *err)
{
    char *abs = NULL;
    if (asprintf(&abs, "%s/%s", dir, rel) < 0)
        return olm_error_set(err, "loading %s: out of memory", dir);
    /* Messages name the file as the user can open it (dir/relative). */
    int rc = fbc_load_path_into(c, abs, rel, err);
    free(abs);
    return rc;
}

fbc_catalog *fbc_load_finish(fbc_catalog *c, olm_error *err)
{
    if (fbc_model_finish(c, err) == 0)
        return c;
    fbc_catalog_free(c);
    return NULL;
}

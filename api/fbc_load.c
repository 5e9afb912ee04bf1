/* fbc_load: turn a directory or a buffer into an fbc_catalog.
 *
 * Every blob is decoded, its schema/package/name extracted and its normalised
 * line (§4.3) computed at load time: render and catalogd's store then only
 * concatenate, and a blob that cannot be normalised fails the load, as upstream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fbc_internal.h"

typedef struct loader {
    fbc_catalog *c;
    size_t metas_cap;
    const char *file;    /* fbc_meta.file for blobs of the current source (catalog-owned) */
    const char *display; /* how messages name the current source */
    strbuf sb;           /* reused for every blob */
} loader;

static int add_blob(void *ud, json_t *obj, int lineno, olm_error *err)
{
    loader *L = ud;
    fbc_catalog *c = L->c;
    const char *schema, *package, *name;
    if (fbc_meta_keys(obj, &schema, &package, &name, err) < 0) {
        json_decref(obj);
        return olm_error_wrap(err, "%s:%d", L->display, lineno);
    }
    strbuf_reset(&L->sb);
    if (fbc_encode_json(obj, &L->sb) < 0 || strbuf_putc(&L->sb, '\n') < 0) {
        json_decref(obj);
        return olm_error_set(err, "%s:%d: out of memory", L->display, lineno);
    }
    if (c->nmetas == L->metas_cap) {
        size_t cap = L->metas_cap ? L->metas_cap * 2 : 256;
        fbc_meta *nm = realloc(c->metas, cap * sizeof *nm);
        if (!nm) {
            json_decref(obj);
            return olm_error_set(err, "%s:%d: out of memory", L->display, lineno);
        }
        c->metas = nm;
        L->metas_cap = cap;
    }
    char *line = malloc(L->sb.len + 1);
    if (!line) {
        json_decref(obj);
        return olm_error_set(err, "%s:%d: out of memory", L->display, lineno);
    }
    memcpy(line, L->sb.data, L->sb.len + 1);
    c->metas[c->nmetas++] = (fbc_meta){
        .schema = schema, .package = package, .name = name, .obj = obj,
        .line = line, .line_len = L->sb.len, .file = L->file, .lineno = lineno,
    };
    return 0;
}

static fbc_catalog *catalog_new(void)
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

/* Keeps a copy of a source name for the catalog's lifetime. */
static const char *own_name(fbc_catalog *c, const char *name)
{
    fbc_priv *p = c->priv;
    if (p->nfiles == p->files_cap) {
        size_t cap = p->files_cap ? p->files_cap * 2 : 16;
        char **nf = realloc(p->files, cap * sizeof *nf);
        if (!nf)
            return NULL;
        p->files = nf;
        p->files_cap = cap;
    }
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
    for (size_t i = 0; i < c->nmetas; i++) {
        json_decref(c->metas[i].obj);
        free(c->metas[i].line);
    }
    free(c->metas);
    fbc_priv *p = c->priv;
    if (p) {
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
    strbuf_free(&L->sb);
    if (rc == 0 && fbc_model_build(L->c, err) == 0)
        return L->c;
    fbc_catalog_free(L->c);
    return NULL;
}

fbc_catalog *fbc_load_buffer(const char *data, size_t len, const char *source_name,
                             olm_error *err)
{
    loader L = {.sb = STRBUF_INIT};
    if (!source_name)
        source_name = "<buffer>";
    if (!(L.c = catalog_new()) || !(L.file = own_name(L.c, source_name))) {
        fbc_catalog_free(L.c);
        olm_error_set(err, "%s: out of memory", source_name);
        return NULL;
    }
    L.display = L.file;
    int rc = fbc_decode_stream(data, len, source_name, add_blob, &L, err);
    return finish(&L, rc, err);
}

fbc_catalog *fbc_load_dir(const char *dir, olm_error *err)
{
    fbc_file_list files = {0};
    if (fbc_walk_dir(dir, &files, err) < 0)
        return NULL;
    loader L = {.sb = STRBUF_INIT};
    int rc = 0;
    if (!(L.c = catalog_new())) {
        fbc_file_list_free(&files);
        olm_error_set(err, "loading %s: out of memory", dir);
        return NULL;
    }
    for (size_t i = 0; i < files.n && rc == 0; i++) {
        char *abs = NULL, *data = NULL;
        size_t len = 0;
        if (asprintf(&abs, "%s/%s", dir, files.paths[i]) < 0) {
            abs = NULL; /* asprintf leaves it undefined on failure */
            rc = olm_error_set(err, "loading %s: out of memory", dir);
        } else if (!(L.file = own_name(L.c, files.paths[i]))) {
            rc = olm_error_set(err, "loading %s: out of memory", dir);
        } else if ((rc = fbc_read_file(abs, &data, &len, err)) == 0) {
            /* Messages name the file as the user can open it (dir/relative). */
            L.display = abs;
            rc = fbc_decode_stream(data, len, abs, add_blob, &L, err);
        }
        free(data);
        free(abs);
    }
    fbc_file_list_free(&files);
    return finish(&L, rc, err);
}

/* The store's index made from a loaded catalog's metas, and index.json's text made from it.
 *
 * Why not jansson: building three jansson objects (one json_pack per range) and dumping them,
 * then parsing that text back for the view served before the write, was most of the time
 * between "loaded" and Serving (about 60 of 65 ms for a catalog 10x certified-operators).
 * Here each map is one sort of runs of metas with the same key; the text is written from
 * the maps. */
#include "catalog_store_index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int index_entry_cmp(const void *a, const void *b)
{
    return strcmp(((const index_entry *)a)->key, ((const index_entry *)b)->key);
}

void index_map_free(index_map *m)
{
    if (m->block) {
        free(m->block);
    } else {
        for (size_t i = 0; i < m->n; i++) {
            free(m->e[i].key);
            free(m->e[i].r);
        }
    }
    free(m->e);
    *m = (index_map){0};
}

void store_index_free(store_index *idx)
{
    for (int k = 0; k < 3; k++)
        index_map_free(&idx->maps[k]);
    free(idx->all);
    idx->all = NULL;
    idx->nall = 0;
}

/* A run: metas first..first+count-1 (consecutive in cat->metas), all with the same key.
 * Metas come grouped by package file, so by_package and by_schema have far fewer runs than
 * metas, and sorting runs instead of metas saves most of the string compares. */
typedef struct key_run {
    const char *key;
    size_t first; /* index in cat->metas: metas are in offset order, so this orders ranges */
    size_t count;
} key_run;

static int key_run_cmp(const void *a, const void *b)
{
    const key_run *x = a, *y = b;
    int c = x->key == y->key ? 0 : strcmp(x->key, y->key);
    if (c)
        return c;
    return x->first < y->first ? -1 : x->first > y->first;
}

static const char *meta_key(const fbc_meta *m, int which)
{
    return which == STORE_BY_SCHEMA ? m->schema : which == STORE_BY_PACKAGE ? m->package : m->name;
}

/* One map: the runs of non-empty keys sorted by key then position, cut into one entry per
 * key.  `runs` is scratch room for cat->nmetas runs. */
static int build_map(const fbc_catalog *cat, int which, key_run *runs, index_map *m)
{
    size_t nruns = 0, nranges = 0;
    for (size_t i = 0; i < cat->nmetas; i++) {
        const char *k = meta_key(&cat->metas[i], which);
        if (!k || !*k) /* §4.3: empty keys are not indexed */
            continue;
        nranges++;
        key_run *last = nruns ? &runs[nruns - 1] : NULL;
        if (last && last->first + last->count == i && (last->key == k || strcmp(last->key, k) == 0))
            last->count++;
        else
            runs[nruns++] = (key_run){k, i, 1};
    }
    qsort(runs, nruns, sizeof *runs, key_run_cmp);
    size_t distinct = 0;
    for (size_t i = 0; i < nruns; i++)
        distinct += i == 0 || strcmp(runs[i - 1].key, runs[i].key) != 0;
    m->e = calloc(distinct ? distinct : 1, sizeof *m->e);
    m->block = malloc((nranges ? nranges : 1) * sizeof *m->block);
    if (!m->e || !m->block)
        return -1;
    store_range *r = m->block;
    for (size_t i = 0; i < nruns; i++) {
        if (m->n == 0 || strcmp(m->e[m->n - 1].key, runs[i].key) != 0)
            m->e[m->n++] = (index_entry){(char *)(uintptr_t)runs[i].key, r, 0};
        for (size_t j = runs[i].first; j < runs[i].first + runs[i].count; j++)
            *r++ = (store_range){cat->metas[j].offset, cat->metas[j].line_len};
        m->e[m->n - 1].n += runs[i].count;
    }
    return 0;
}

int store_index_build(const fbc_catalog *cat, store_index *idx)
{
    *idx = (store_index){0};
    key_run *runs = malloc((cat->nmetas ? cat->nmetas : 1) * sizeof *runs);
    int rc = runs ? 0 : -1;
    for (int k = 0; k < 3 && rc == 0; k++)
        rc = build_map(cat, k, runs, &idx->maps[k]);
    free(runs);
    /* `all`: the union of by_schema, i.e. every meta with a schema, already in offset order. */
    if (rc == 0 && !(idx->all = malloc((cat->nmetas ? cat->nmetas : 1) * sizeof *idx->all)))
        rc = -1;
    for (size_t i = 0; rc == 0 && i < cat->nmetas; i++) {
        const fbc_meta *m = &cat->metas[i];
        if (m->schema && *m->schema)
            idx->all[idx->nall++] = (store_range){m->offset, m->line_len};
    }
    if (rc < 0)
        store_index_free(idx);
    return rc;
}

/* ---- index.json's text -------------------------------------------------------------- */

/* Escapes as jansson's dump_string without JSON_ESCAPE_SLASH / JSON_ENSURE_ASCII: '"' and
 * '\\' get a backslash, control characters below 0x20 get \b \f \n \r \t or \u00XX (upper
 * case hex, like jansson's "\\u%04X"), everything else ('/', DEL, UTF-8 sequences) is copied.
 * The keys are the catalog's strings, which its loader checked to be valid UTF-8 without
 * NULs.  Writes at most 6 * strlen(s) bytes; returns the end. */
static char *put_escaped(char *p, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') {
            *p++ = (char)c;
            continue;
        }
        *p++ = '\\';
        switch (c) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\b': *p++ = 'b'; break;
        case '\f': *p++ = 'f'; break;
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        case '\t': *p++ = 't'; break;
        default:
            memcpy(p, "u00", 3);
            p[3] = hex[c >> 4];
            p[4] = hex[c & 15];
            p += 5;
        }
    }
    return p;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

#define RANGE_MAX 44 /* "[" 20 digits "," 20 digits "]," */

/* "key":[[off,len],...] for each entry, comma separated, inside {} (jansson's {} when empty). */
static int put_map(strbuf *out, const index_map *m)
{
    if (strbuf_putc(out, '{') < 0)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        const index_entry *e = &m->e[i];
        size_t klen = strlen(e->key);
        if (e->n > (SIZE_MAX - 6 * klen - 16) / RANGE_MAX ||
            strbuf_reserve(out, 6 * klen + 16 + e->n * RANGE_MAX) < 0)
            return -1;
        char *p = out->data + out->len;
        if (i)
            *p++ = ',';
        *p++ = '"';
        p = put_escaped(p, e->key);
        memcpy(p, "\":[", 3);
        p += 3;
        for (size_t j = 0; j < e->n; j++) {
            if (j)
                *p++ = ',';
            *p++ = '[';
            p = put_u64(p, e->r[j].off);
            *p++ = ',';
            p = put_u64(p, e->r[j].len);
            *p++ = ']';
        }
        *p++ = ']';
        *p = '\0';
        out->len = (size_t)(p - out->data);
    }
    return strbuf_putc(out, '}');
}

int store_index_write_json(const store_index *idx, strbuf *out)
{
    /* Top-level keys in upstream's struct order; the inner maps are sorted like Go's map
     * encoding (and jansson's JSON_SORT_KEYS): byte order of the keys. */
    static const char *const names[3] = {"\"by_schema\":", "\"by_package\":", "\"by_name\":"};
    for (int k = 0; k < 3; k++)
        if (strbuf_putc(out, k ? ',' : '{') < 0 || strbuf_puts(out, names[k]) < 0 || put_map(out, &idx->maps[k]) < 0)
            return -1;
    return strbuf_puts(out, "}\n");
}

/* Immutable, reference-counted views of a stored catalog (see catalog_store.h). */
#include "catalog_store.h"

#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog_name.h"
#include "catalog_store_internal.h"
#include "olm_read_file.h"

struct store_view {
    atomic_size_t refs;
    char *name;         /* owned */
    char *data;         /* mmap of catalog.jsonl (NULL when the file is empty), or the
                         * catalog's own buffer in a memory view */
    size_t size;
    fbc_catalog *owner; /* a memory view's catalog, freed with the view (NULL: borrowed) */
    bool in_memory;     /* data is not a mapping: never munmap or madvise it */
    char *gz;           /* mmap of catalog.jsonl.gz; NULL when absent or not matching */
    size_t gz_size;
    time_t mtime;
    index_map maps[3];
    store_range *all;   /* owned: union of by_schema, sorted (the "every schema" set) */
    size_t nall;
    char *source;       /* owned: the digest ref the content came from, or NULL when unknown */
};

static int cmp_range(const void *a, const void *b)
{
    uint64_t x = ((const store_range *)a)->off, y = ((const store_range *)b)->off;
    return x < y ? -1 : x > y;
}

static void view_free(store_view *v)
{
    if (v->data && !v->in_memory)
        munmap(v->data, v->size);
    if (v->gz)
        munmap(v->gz, v->gz_size);
    for (int k = 0; k < 3; k++)
        index_map_free(&v->maps[k]);
    free(v->all);
    free(v->name);
    free(v->source);
    bool big = v->owner != NULL;
    fbc_catalog_free(v->owner);
    free(v);
    if (big) /* a whole catalog's model and text, in small blocks: hand the heap back */
        malloc_trim(0);
}

/* Converts one {"key":[[off,len],...]} object, checking every range lies inside the file
 * (the server hands these ranges straight to the mmap). */
static int map_load(index_map *m, json_t *obj, size_t size, olm_error *err)
{
    if (!json_is_object(obj))
        return olm_error_set(err, "index map is not an object");
    m->e = calloc(json_object_size(obj) ? json_object_size(obj) : 1, sizeof *m->e);
    if (!m->e)
        return olm_error_set(err, "out of memory");
    const char *key;
    json_t *arr;
    json_object_foreach(obj, key, arr) {
        index_entry *e = &m->e[m->n];
        if (!json_is_array(arr))
            return olm_error_set(err, "index entry %s is not an array", key);
        e->key = strdup(key);
        e->r = calloc(json_array_size(arr) ? json_array_size(arr) : 1, sizeof *e->r);
        m->n++;
        if (!e->key || !e->r)
            return olm_error_set(err, "out of memory");
        size_t i;
        json_t *pair;
        json_array_foreach(arr, i, pair) {
            json_int_t off, len;
            if (json_unpack(pair, "[II!]", &off, &len) < 0 || off < 0 || len < 0 || (uint64_t)off > size ||
                (uint64_t)len > size - (uint64_t)off)
                return olm_error_set(err, "index entry %s[%zu] is not an [offset,len] inside catalog.jsonl", key, i);
            e->r[i] = (store_range){(uint64_t)off, (uint64_t)len};
        }
        e->n = json_array_size(arr);
        qsort(e->r, e->n, sizeof *e->r, cmp_range);
    }
    qsort(m->e, m->n, sizeof *m->e, index_entry_cmp);
    return 0;
}

/* The union of every schema's ranges (a blob has one schema, so this is a concatenation). */
static int build_all(store_view *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->maps[STORE_BY_SCHEMA].n; i++)
        n += v->maps[STORE_BY_SCHEMA].e[i].n;
    v->all = malloc((n ? n : 1) * sizeof *v->all);
    if (!v->all)
        return -1;
    for (size_t i = 0; i < v->maps[STORE_BY_SCHEMA].n; i++) {
        const index_entry *e = &v->maps[STORE_BY_SCHEMA].e[i];
        memcpy(v->all + v->nall, e->r, e->n * sizeof *e->r);
        v->nall += e->n;
    }
    qsort(v->all, v->nall, sizeof *v->all, cmp_range);
    return 0;
}

/* Parses index.json's text into v's maps (v->size set: every range is checked against it). */
static int parse_index(store_view *v, const char *text, size_t len, olm_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!root)
        return errno = EINVAL, olm_error_set(err, "index.json: %s (line %d)", jerr.text, jerr.line);
    static const char *const names[3] = {"by_schema", "by_package", "by_name"};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        rc = map_load(&v->maps[k], json_object_get(root, names[k]), v->size, err);
        if (rc < 0)
            olm_error_wrap(err, "index.json %s", names[k]);
    }
    json_decref(root);
    if (rc == 0 && build_all(v) < 0)
        rc = olm_error_set(err, "out of memory");
    if (rc < 0)
        errno = EINVAL;
    return rc;
}

static int load_index(store_view *v, int dfd, olm_error *err)
{
    int fd = openat(dfd, "index.json", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return olm_error_set(err, "open index.json: %s", strerror(errno));
    /* Read whole, then parsed: json_loadfd reads one byte per read() call, 64 K system
     * calls (about 20 ms) for the index of certified-operators, on the way to Serving. */
    size_t len;
    char *text = olm_read_fd(fd, "index.json", 0, &len, err);
    int e = errno;
    close(fd);
    if (!text)
        return errno = e, -1;
    int rc = parse_index(v, text, len, err);
    free(text);
    return rc;
}

static int load_jsonl(store_view *v, int dfd, olm_error *err)
{
    int fd = openat(dfd, "catalog.jsonl", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return olm_error_set(err, "open catalog.jsonl: %s", strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0) {
        rc = olm_error_set(err, "stat catalog.jsonl: %s", strerror(errno));
    } else {
        v->size = (size_t)st.st_size;
        v->mtime = st.st_mtime;
        if (v->size) { /* mmap of 0 bytes is EINVAL; an empty catalog has no mapping */
            void *p = mmap(NULL, v->size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED)
                rc = olm_error_set(err, "mmap catalog.jsonl: %s", strerror(errno));
            else
                v->data = p;
        }
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Maps catalog.jsonl.gz when it is there and is the gzip of catalog.jsonl: a gzip member
 * of at least header + trailer whose trailer (ISIZE) is the jsonl's size mod 2^32.  A store
 * without it (an older catalogd wrote it) is served without the precompressed form. */
static void load_gzip(store_view *v, int dfd)
{
    int fd = openat(dfd, "catalog.jsonl.gz", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size >= 18) {
        unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            const unsigned char *t = p + st.st_size - 4;
            uint32_t isize = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
            if (p[0] == 0x1f && p[1] == 0x8b && isize == (uint32_t)v->size) {
                v->gz = (char *)p;
                v->gz_size = (size_t)st.st_size;
            } else {
                munmap(p, (size_t)st.st_size);
            }
        }
    }
    close(fd);
}

/* The `source` file beside the content, or NULL (none: written without one, or unreadable;
 * the view is served all the same). */
static char *read_source(int dfd)
{
    int fd = openat(dfd, STORE_SOURCE_FILE, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    return *buf ? strdup(buf) : NULL;
}

/* One attempt.  Both files are opened relative to one directory fd so they come from the
 * same store even if a swap happens meanwhile; a swap that already removed the old files
 * gives ENOENT and store_open retries on the new directory. */
static store_view *open_once(const char *dir, const char *name, olm_error *err)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        int e = errno;
        olm_error_set(err, "catalog %s is not stored (%s: %s)", name, dir, strerror(e));
        errno = e;
        return NULL;
    }
    store_view *v = calloc(1, sizeof *v);
    if (!v || !(v->name = strdup(name))) {
        free(v);
        close(dfd);
        olm_error_set(err, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    atomic_init(&v->refs, 1);
    if (load_jsonl(v, dfd, err) < 0 || load_index(v, dfd, err) < 0) {
        int e = errno;
        olm_error_wrap(err, "open store of %s", name);
        view_free(v);
        close(dfd);
        errno = e;
        return NULL;
    }
    load_gzip(v, dfd);
    v->source = read_source(dfd);
    close(dfd);
    return v;
}

store_view *store_open(const char *root, const char *name, olm_error *err)
{
    char msg[1024], dir[4096];
    if (catalog_name_check(name, strlen(name), msg, sizeof msg) < 0) {
        olm_error_set(err, "invalid catalog name: %s", msg);
        errno = EINVAL;
        return NULL;
    }
    if ((size_t)snprintf(dir, sizeof dir, "%s/catalogs/%s", root, name) >= sizeof dir) {
        olm_error_set(err, "store root path is too long: %s", root);
        errno = ENAMETOOLONG;
        return NULL;
    }
    store_view *v = NULL;
    for (int attempt = 0; attempt < 3 && !v; attempt++) {
        v = open_once(dir, name, err);
        if (!v && errno != ENOENT)
            break;
    }
    return v;
}

store_view *store_view_of_memory(const char *name, const fbc_catalog *cat, store_index *idx, time_t mtime,
                                 const char *source, olm_error *err)
{
    store_view *v = calloc(1, sizeof *v);
    if (!v || !(v->name = strdup(name)) || (source && !(v->source = strdup(source)))) {
        if (v)
            free(v->name);
        free(v);
        store_index_free(idx);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    atomic_init(&v->refs, 1);
    v->in_memory = true;
    v->data = cat->jsonl_len ? (char *)(uintptr_t)cat->jsonl : NULL;
    v->size = cat->jsonl_len;
    v->mtime = mtime;
    /* Moved in as built: no index.json text to parse back on the way to Serving. */
    memcpy(v->maps, idx->maps, sizeof v->maps);
    v->all = idx->all;
    v->nall = idx->nall;
    *idx = (store_index){0};
    return v;
}

void store_view_adopt_catalog(store_view *v, fbc_catalog *cat)
{
    v->owner = cat;
}

store_view *store_view_retain(store_view *v)
{
    atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    return v;
}

void store_view_release(store_view *v)
{
    if (v && atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1)
        view_free(v);
}

const char *store_view_name(const store_view *v) { return v->name; }
const char *store_view_data(const store_view *v) { return v->data; }
size_t store_view_size(const store_view *v) { return v->size; }
time_t store_view_mtime(const store_view *v) { return v->mtime; }
const char *store_view_source(const store_view *v) { return v->source; }

const char *store_view_gzip(const store_view *v, size_t *len)
{
    *len = v->gz_size;
    return v->gz;
}

#define DROP_MIN (256 * 1024) /* a whole catalog, a big slice of it: not a typical /metas answer */

static void drop_in(const char *map, size_t map_len, const char *p, size_t len)
{
    if (!map || p < map || p + len > map + map_len)
        return;
    static size_t pagesz;
    if (!pagesz)
        pagesz = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + pagesz - 1) & ~(uintptr_t)(pagesz - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)(pagesz - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void store_view_drop_pages(const store_view *v, const char *p, size_t len)
{
    if (len < DROP_MIN)
        return;
    if (!v->in_memory) /* DONTNEED on the heap would zero the catalog */
        drop_in(v->data, v->size, p, len);
    drop_in(v->gz, v->gz_size, p, len);
}

const store_range *store_view_lookup(const store_view *v, store_key which, const char *key, size_t *n)
{
    index_entry probe = {.key = (char *)key};
    const index_map *m = &v->maps[which];
    const index_entry *e = m->n ? bsearch(&probe, m->e, m->n, sizeof *m->e, index_entry_cmp) : NULL;
    *n = e ? e->n : 0;
    return e ? e->r : NULL;
}

/* Keeps in a[0..*na) only ranges whose offset is also in b (both sorted): a linear merge. */
static void intersect(store_range *a, size_t *na, const store_range *b, size_t nb)
{
    size_t i = 0, j = 0, k = 0;
    while (i < *na && j < nb) {
        if (a[i].off < b[j].off)
            i++;
        else if (a[i].off > b[j].off)
            j++;
        else {
            a[k++] = a[i++];
            j++;
        }
    }
    *na = k;
}

int store_view_select(const store_view *v, const char *schema, const char *package, const char *name,
                      store_range **out, size_t *n, uint64_t *total)
{
    const store_range *base = v->all;
    size_t nbase = v->nall;
    if (schema && *schema)
        base = store_view_lookup(v, STORE_BY_SCHEMA, schema, &nbase);
    *out = NULL;
    *n = 0;
    *total = 0;
    if (nbase == 0)
        return 0;
    store_range *r = malloc(nbase * sizeof *r);
    if (!r)
        return -1;
    memcpy(r, base, nbase * sizeof *r);
    size_t nr = nbase;
    const char *keys[2] = {package, name};
    for (int k = 0; k < 2; k++) {
        if (!keys[k] || !*keys[k])
            continue;
        size_t nb;
        const store_range *b = store_view_lookup(v, k == 0 ? STORE_BY_PACKAGE : STORE_BY_NAME, keys[k], &nb);
        intersect(r, &nr, b, nb);
    }
    /* Merge neighbours so the server sends few, large slices of the mapping. */
    size_t m = 0;
    for (size_t i = 0; i < nr; i++) {
        *total += r[i].len;
        if (m && r[m - 1].off + r[m - 1].len == r[i].off)
            r[m - 1].len += r[i].len;
        else
            r[m++] = r[i];
    }
    if (m == 0) {
        free(r);
        r = NULL;
    }
    *out = r;
    *n = m;
    return 0;
}

/* Writing, swapping, deleting and garbage-collecting catalog stores (see catalog_store.h). */
#include "catalog_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "catalog_name.h"
#include "catalog_store_internal.h"
#include "strbuf.h"
#include "olm_fs.h"

#define TEMP_SUFFIX_LEN 6 /* mkdtemp's XXXXXX */

/* snprintf into a path buffer; -1 (errno ENAMETOOLONG) instead of a silently cut path. */
static int pathf(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t sz, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sz, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sz)
        return errno = ENAMETOOLONG, -1;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int rc = (type == FTW_DP) ? rmdir(path) : unlink(path);
    return (rc < 0 && errno != ENOENT) ? -1 : 0;
}

int store_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return (unlink(path) < 0 && errno != ENOENT) ? -1 : 0;
    /* FTW_DEPTH: children before their directory; FTW_PHYS: never follow symlinks out. */
    return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

static int fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* True for "<name>-XXXXXX" after the leading dot: exactly mkdtemp's 6 characters, so the
 * temp dirs of catalog "a" never match those of catalog "a-b" (".a-b-XXXXXX"). */
static int is_temp_of(const char *entry, const char *name)
{
    size_t nl = strlen(name);
    return entry[0] == '.' && strncmp(entry + 1, name, nl) == 0 && entry[1 + nl] == '-' &&
           strlen(entry) == 1 + nl + 1 + TEMP_SUFFIX_LEN;
}

static int remove_temp_dirs(const char *catalogs, const char *name)
{
    DIR *d = opendir(catalogs);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_temp_of(e->d_name, name))
            continue;
        char p[4096];
        if (pathf(p, sizeof p, "%s/%s", catalogs, e->d_name) < 0 || store_remove_tree(p) < 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Errors name the file as `file` of `shown` rather than by its path: the path is in a
 * temp dir with a random name, and the message (catalogd's Progressing message) must read
 * the same on every retry, or each retry is a status write whose update event reruns the
 * reconcile at once, bypassing the back-off. */
static int create_file(const char *dir, const char *file, const char *shown, olm_error *err)
{
    char p[4096];
    if (pathf(p, sizeof p, "%s/%s", dir, file) < 0)
        return olm_error_set(err, "path too long: %s/%s", dir, file);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return olm_error_set(err, "create %s of %s: %s", file, shown, strerror(errno));
    return fd;
}

static int write_file(const char *dir, const char *file, const char *data, size_t len, const char *shown,
                      olm_error *err)
{
    int fd = create_file(dir, file, shown, err);
    if (fd < 0)
        return -1;
    if (write_all(fd, data, len) < 0) { /* fsynced later, by store_sync */
        int e = errno;
        close(fd);
        return olm_error_set(err, "write %s of %s: %s", file, shown, strerror(e));
    }
    if (close(fd) < 0)
        return olm_error_set(err, "close %s of %s: %s", file, shown, strerror(errno));
    return 0;
}

/* <path>: `data` gzipped (zlib level 6, Go's gzip.DefaultCompression), fsynced; an existing
 * file (a temp file left by a crash) is truncated.  Done once per content on the threadpool,
 * so no request ever compresses a catalog. */
static int write_gzip_file(const char *p, const char *data, size_t len, olm_error *err)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return olm_error_set(err, "create %s: %s", p, strerror(errno));
    z_stream z;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        close(fd);
        return olm_error_set(err, "gzip %s: out of memory", p);
    }
    static const size_t chunk = 256 * 1024;
    unsigned char *out = malloc(chunk);
    int rc = out ? 0 : olm_error_set(err, "gzip %s: out of memory", p);
    size_t off = 0;
    int zr = Z_OK;
    while (rc == 0 && zr != Z_STREAM_END) {
        size_t in = len - off > chunk ? chunk : len - off;
        z.next_in = (Bytef *)(data ? data + off : "");
        z.avail_in = (uInt)in;
        int flush = off + in == len ? Z_FINISH : Z_NO_FLUSH;
        do {
            z.next_out = out;
            z.avail_out = (uInt)chunk;
            zr = deflate(&z, flush);
            if (zr == Z_STREAM_ERROR) {
                rc = olm_error_set(err, "gzip %s: deflate failed", p);
                break;
            }
            if (write_all(fd, (const char *)out, chunk - z.avail_out) < 0)
                rc = olm_error_set(err, "write %s: %s", p, strerror(errno));
        } while (rc == 0 && zr != Z_STREAM_END && z.avail_out == 0);
        off += in;
    }
    deflateEnd(&z);
    free(out);
    if (rc == 0 && fsync(fd) < 0)
        rc = olm_error_set(err, "write %s: %s", p, strerror(errno));
    if (close(fd) < 0 && rc == 0)
        rc = olm_error_set(err, "close %s: %s", p, strerror(errno));
    return rc;
}

/* Puts `tmp` in place of `final`.  RENAME_EXCHANGE swaps two existing dirs in one step, so
 * there is no instant without a store; `tmp` then holds the old store, which we remove. */
static int swap_in(const char *tmp, const char *final, olm_error *err)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE) == 0)
        return store_remove_tree(tmp) < 0 ? olm_error_set(err, "remove old store %s: %s", tmp, strerror(errno)) : 0;
    if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
        return olm_error_set(err, "swap %s into %s: %s", tmp, final, strerror(errno));
    /* No old store (ENOENT), or a filesystem without RENAME_EXCHANGE: move the old one
     * aside first.  rename() of a directory over a non-empty directory is not allowed. */
    char old[4096];
    if (pathf(old, sizeof old, "%s.old", tmp) < 0)
        return olm_error_set(err, "path too long: %s.old", tmp);
    int had_old = rename(final, old) == 0;
    if (!had_old && errno != ENOENT)
        return olm_error_set(err, "move old store %s aside: %s", final, strerror(errno));
    if (rename(tmp, final) < 0) {
        int e = errno;
        if (had_old && rename(old, final) < 0) /* put the old store back */
            return olm_error_set(err, "swap %s into %s: %s (and restoring the old store failed: %s)", tmp, final,
                                 strerror(e), strerror(errno));
        return olm_error_set(err, "swap %s into %s: %s", tmp, final, strerror(e));
    }
    if (had_old && store_remove_tree(old) < 0)
        return olm_error_set(err, "remove old store %s: %s", old, strerror(errno));
    return 0;
}

struct store_draft {
    char tmp[4096], final[4096];
    char shown[4200];   /* "the new store of <name> in <dir>", for errors */
    int jsonl_fd;       /* catalog.jsonl in tmp, its space reserved; -1 once written */
    store_view *view;   /* the catalog, served from memory until the store is in place */
    bool swapped;
};

/* Writes the jsonl into d's reserved file, with the memory view's mtime (so Last-Modified
 * stays the same when the server moves from that view to the file's), and closes it. */
static int write_jsonl(store_draft *d, olm_error *err)
{
    time_t mtime = store_view_mtime(d->view);
    const struct timespec times[2] = {{mtime, 0}, {mtime, 0}};
    int bad = write_all(d->jsonl_fd, store_view_data(d->view) ? store_view_data(d->view) : "",
                        store_view_size(d->view)) < 0 ||
              futimens(d->jsonl_fd, times) < 0;
    int e = errno;
    if (close(d->jsonl_fd) < 0 && !bad) {
        bad = 1;
        e = errno;
    }
    d->jsonl_fd = -1;
    return bad ? olm_error_set(err, "write catalog.jsonl of %s: %s", d->shown, strerror(e)) : 0;
}

store_draft *store_draft_new(const char *root, const char *name, fbc_catalog *cat, bool adopt, const char *source,
                             olm_error *err)
{
    char msg[1024];
    if (catalog_name_check(name, strlen(name), msg, sizeof msg) < 0) {
        olm_error_set(err, "invalid catalog name: %s", msg);
        return NULL;
    }
    store_draft *d = calloc(1, sizeof *d);
    if (!d) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    d->jsonl_fd = -1;
    char catalogs[4096];
    if (pathf(catalogs, sizeof catalogs, "%s/catalogs", root) < 0 ||
        pathf(d->final, sizeof d->final, "%s/%s", catalogs, name) < 0 ||
        pathf(d->tmp, sizeof d->tmp, "%s/.%s-XXXXXX", catalogs, name) < 0) {
        olm_error_set(err, "store root path is too long: %s", root);
        free(d);
        return NULL;
    }
    snprintf(d->shown, sizeof d->shown, "the new store of %s in %s", name, catalogs);
    if (olm_mkdir_p(catalogs) < 0 || remove_temp_dirs(catalogs, name) < 0 || !mkdtemp(d->tmp)) {
        olm_error_set(err, "prepare %s: %s", d->shown, strerror(errno));
        free(d);
        return NULL;
    }
    strbuf idx = STRBUF_INIT;
    store_index index = {0};
    time_t now = time(NULL);
    /* The marker, fsynced by the commit before the directory can become the store: whatever
     * of the rest a power cut loses, a store without it was synced whole (store_sync). */
    if (write_file(d->tmp, STORE_NOT_DURABLE_FILE, "", 0, d->shown, err) < 0)
        goto fail;
    /* catalog.jsonl is the catalog's own jsonl buffer (the lines back to back in load
     * order), so the index's offsets are the metas' own. */
    if (store_index_build(cat, &index) < 0 || store_index_write_json(&index, &idx) < 0) {
        olm_error_set(err, "out of memory building %s", d->shown);
        goto fail;
    }
    if (write_file(d->tmp, "index.json", idx.data, idx.len, d->shown, err) < 0 ||
        (source && write_file(d->tmp, STORE_SOURCE_FILE, source, strlen(source), d->shown, err) < 0))
        goto fail;
    if ((d->jsonl_fd = create_file(d->tmp, "catalog.jsonl", d->shown, err)) < 0)
        goto fail;
    if (!(d->view = store_view_of_memory(name, cat, &index, now, source, err)))
        goto fail;
    /* Reserve the jsonl's room now, so that running out of space is this write's error
     * (the catalog served before stays), not the commit's after Serving was reported.  A
     * file system without fallocate gets the bytes themselves. */
    if (cat->jsonl_len && fallocate(d->jsonl_fd, 0, 0, (off_t)cat->jsonl_len) < 0) {
        if (errno != EOPNOTSUPP && errno != ENOSYS) {
            olm_error_set(err, "reserve %zu bytes for catalog.jsonl of %s: %s", cat->jsonl_len, d->shown,
                          strerror(errno));
            goto fail;
        }
        if (write_jsonl(d, err) < 0)
            goto fail;
    }
    strbuf_free(&idx);
    if (adopt)
        store_view_adopt_catalog(d->view, cat);
    return d;
fail:
    strbuf_free(&idx);
    store_index_free(&index);
    store_draft_free(d);
    return NULL;
}

store_view *store_draft_view(store_draft *d)
{
    return store_view_retain(d->view);
}

int store_draft_commit(store_draft *d, olm_error *err)
{
    if (d->swapped)
        return 0;
    if (d->jsonl_fd >= 0 && write_jsonl(d, err) < 0)
        return -1;
    if (fsync_path(d->tmp) < 0) /* the marker's entry */
        return olm_error_set(err, "fsync %s: %s", d->shown, strerror(errno));
    if (swap_in(d->tmp, d->final, err) < 0)
        return -1;
    d->swapped = true;
    return 0;
}

void store_draft_free(store_draft *d)
{
    if (!d)
        return;
    if (d->jsonl_fd >= 0)
        close(d->jsonl_fd);
    if (!d->swapped)
        store_remove_tree(d->tmp);
    store_view_release(d->view);
    free(d);
}

int store_write(const char *root, const char *name, const fbc_catalog *cat, const char *source, olm_error *err)
{
    store_draft *d = store_draft_new(root, name, (fbc_catalog *)(uintptr_t)cat, false, source, err);
    if (!d)
        return -1;
    int rc = store_draft_commit(d, err);
    store_draft_free(d);
    return rc;
}

/* fsync of `file` in dfd when it exists. */
static int fsync_at(int dfd, const char *file)
{
    int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int store_sync(const char *root, const char *name, olm_error *err)
{
    char msg[1024], catalogs[4096], dir[4200];
    if (catalog_name_check(name, strlen(name), msg, sizeof msg) < 0)
        return olm_error_set(err, "invalid catalog name: %s", msg);
    if (pathf(catalogs, sizeof catalogs, "%s/catalogs", root) < 0 || pathf(dir, sizeof dir, "%s/%s", catalogs, name) < 0)
        return olm_error_set(err, "store root path is too long: %s", root);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return olm_error_set(err, "open the store of %s: %s", name, strerror(errno));
    int rc = 0;
    if (faccessat(dfd, STORE_NOT_DURABLE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            rc = olm_error_set(err, "checking the store of %s: %s", name, strerror(errno));
        close(dfd);
        return rc; /* synced already */
    }
    /* Content, then the directory entries and the rename that put them in place, and only
     * then the marker goes. */
    static const char *const files[] = {"catalog.jsonl", "index.json", STORE_SOURCE_FILE};
    for (size_t i = 0; i < sizeof files / sizeof files[0] && rc == 0; i++)
        if (fsync_at(dfd, files[i]) < 0)
            rc = olm_error_set(err, "fsync %s of the store of %s: %s", files[i], name, strerror(errno));
    if (rc == 0 && fsync(dfd) < 0)
        rc = olm_error_set(err, "fsync the store of %s: %s", name, strerror(errno));
    if (rc == 0 && fsync_path(catalogs) < 0)
        rc = olm_error_set(err, "fsync %s: %s", catalogs, strerror(errno));
    if (rc == 0 && unlinkat(dfd, STORE_NOT_DURABLE_FILE, 0) < 0)
        rc = olm_error_set(err, "remove %s of the store of %s: %s", STORE_NOT_DURABLE_FILE, name, strerror(errno));
    if (rc == 0 && fsync(dfd) < 0)
        rc = olm_error_set(err, "fsync the store of %s: %s", name, strerror(errno));
    close(dfd);
    return rc;
}


/* <root>/catalogs/<name> into dir, the name checked. */
static int store_dir(const char *root, const char *name, char *dir, size_t dirsz, olm_error *err)
{
    char msg[1024];
    if (catalog_name_check(name, strlen(name), msg, sizeof msg) < 0)
        return olm_error_set(err, "invalid catalog name: %s", msg);
    if (pathf(dir, dirsz, "%s/catalogs/%s", root, name) < 0)
        return olm_error_set(err, "store root path is too long: %s", root);
    return 0;
}

/* The last 4 bytes of a gzip member: the uncompressed size mod 2^32. */
static int gzip_matches(int dfd, size_t jsonl_size)
{
    int fd = openat(dfd, "catalog.jsonl.gz", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char t[4];
    int ok = fstat(fd, &st) == 0 && st.st_size >= 18 && pread(fd, t, 4, st.st_size - 4) == 4 &&
             ((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24) ==
                 (uint32_t)jsonl_size;
    close(fd);
    return ok;
}

int store_add_gzip(const char *root, const char *name, olm_error *err)
{
    char dir[4096], tmp[4096], final[4096];
    if (store_dir(root, name, dir, sizeof dir, err) < 0)
        return -1;
    if (pathf(tmp, sizeof tmp, "%s/.catalog.jsonl.gz.tmp", dir) < 0 ||
        pathf(final, sizeof final, "%s/catalog.jsonl.gz", dir) < 0)
        return olm_error_set(err, "store root path is too long: %s", root);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return olm_error_set(err, "open %s: %s", dir, strerror(errno));
    int fd = openat(dfd, "catalog.jsonl", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        close(dfd);
        return olm_error_set(err, "open %s/catalog.jsonl: %s", dir, strerror(e));
    }
    size_t len = (size_t)st.st_size;
    if (gzip_matches(dfd, len)) {
        close(fd);
        close(dfd);
        return 0;
    }
    const char *data = NULL;
    if (len) {
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            close(dfd);
            return olm_error_set(err, "mmap %s/catalog.jsonl: %s", dir, strerror(e));
        }
        madvise(m, len, MADV_SEQUENTIAL);
        data = m;
    }
    close(fd);
    int rc = write_gzip_file(tmp, data, len, err);
    if (data)
        munmap((void *)data, len);
    if (rc == 0 && rename(tmp, final) < 0)
        rc = olm_error_set(err, "rename %s: %s", tmp, strerror(errno));
    if (rc == 0 && fsync(dfd) < 0)
        rc = olm_error_set(err, "fsync %s: %s", dir, strerror(errno));
    if (rc < 0)
        unlink(tmp);
    close(dfd);
    return rc < 0 ? -1 : 1;
}

char *store_read_source(const char *root, const char *name)
{
    char dir[4096], p[4200];
    olm_error err;
    if (store_dir(root, name, dir, sizeof dir, &err) < 0 || pathf(p, sizeof p, "%s/%s", dir, STORE_SOURCE_FILE) < 0)
        return NULL;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char buf[2048];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0 || (size_t)n == sizeof buf - 1) /* empty, unreadable or not a ref */
        return NULL;
    buf[n] = '\0';
    return strdup(buf);
}

bool store_is_durable(const char *root, const char *name)
{
    char dir[4096], p[4200];
    olm_error err;
    if (store_dir(root, name, dir, sizeof dir, &err) < 0 || pathf(p, sizeof p, "%s/%s", dir, STORE_NOT_DURABLE_FILE) < 0)
        return false;
    struct stat st;
    return lstat(p, &st) != 0 && errno == ENOENT;
}

int store_delete(const char *root, const char *name, olm_error *err)
{
    char msg[1024], catalogs[4096], final[4096];
    if (catalog_name_check(name, strlen(name), msg, sizeof msg) < 0)
        return olm_error_set(err, "invalid catalog name: %s", msg);
    if (pathf(catalogs, sizeof catalogs, "%s/catalogs", root) < 0 ||
        pathf(final, sizeof final, "%s/%s", catalogs, name) < 0)
        return olm_error_set(err, "store root path is too long: %s", root);
    if (store_remove_tree(final) < 0)
        return olm_error_set(err, "remove %s: %s", final, strerror(errno));
    if (remove_temp_dirs(catalogs, name) < 0)
        return olm_error_set(err, "remove temp dirs of %s in %s: %s", name, catalogs, strerror(errno));
    return 0;
}

static int gc_dir(const char *dir, const char *const *keep, size_t nkeep, olm_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : olm_error_set(err, "open %s: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[4096];
        if (pathf(p, sizeof p, "%s/%s", dir, e->d_name) < 0)
            continue;
        struct stat st;
        int kept = 0;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            for (size_t i = 0; i < nkeep && !kept; i++)
                kept = strcmp(keep[i], e->d_name) == 0;
        if (!kept && store_remove_tree(p) < 0 && rc == 0)
            rc = olm_error_set(err, "remove %s: %s", p, strerror(errno));
    }
    closedir(d);
    return rc;
}

int store_gc(const char *root, const char *const *keep, size_t nkeep, olm_error *err)
{
    static const char *const subdirs[] = {"catalogs", "unpack"};
    for (size_t i = 0; i < 2; i++) {
        char dir[4096];
        if (pathf(dir, sizeof dir, "%s/%s", root, subdirs[i]) < 0)
            return olm_error_set(err, "store root path is too long: %s", root);
        if (gc_dir(dir, keep, nkeep, err) < 0)
            return -1;
    }
    return 0;
}

/* A reproducible tar+gzip layer from a directory.
 *
 * Two libarchive writers are chained so that one pass gives both digests an
 * image needs: the tar writer's output is hashed (the diff_id, over the
 * uncompressed tar) and fed as the single entry of a "raw" writer with the gzip
 * filter, whose output is hashed (the blob digest) and written to a tmpfile.
 * Nothing from the host leaks into the bytes: no timestamps (the gzip header's
 * too), owners, xattrs or umask-dependent modes, and entries come in byte order. */
#include "oci_layer.h"
#include "oci_media.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct layer_ctx {
    struct archive *tar; /* writes the tar stream into `gz` */
    struct archive *gz;  /* raw + gzip, writes into `out` */
    oci_sha256 *tar_hash;
    oci_sha256 *gz_hash;
    FILE *out;
    uint64_t tar_size;
    uint64_t gz_size;
    size_t entries;
    olm_error *err;
    int failed; /* a callback already filled err */
};

/* tar writer output: hash it (diff_id) and compress it. */
static la_ssize_t tar_out(struct archive *a, void *data, const void *buf, size_t len)
{
    (void)a;
    struct layer_ctx *c = data;
    if (oci_sha256_update(c->tar_hash, buf, len) != 0) {
        c->failed = 1;
        olm_error_set(c->err, "hashing the layer tar failed");
        return -1;
    }
    la_ssize_t n = archive_write_data(c->gz, buf, len);
    if (n < 0 || (size_t)n != len) {
        c->failed = 1;
        olm_error_set(c->err, "compressing the layer: %s", archive_error_string(c->gz));
        return -1;
    }
    c->tar_size += len;
    return (la_ssize_t)len;
}

/* gzip writer output: hash it (blob digest) and store it. */
static la_ssize_t gz_out(struct archive *a, void *data, const void *buf, size_t len)
{
    (void)a;
    struct layer_ctx *c = data;
    if (oci_sha256_update(c->gz_hash, buf, len) != 0) {
        c->failed = 1;
        olm_error_set(c->err, "hashing the compressed layer failed");
        return -1;
    }
    if (fwrite(buf, 1, len, c->out) != len) {
        c->failed = 1;
        olm_error_set(c->err, "writing the layer to a temporary file: %s", strerror(errno));
        return -1;
    }
    c->gz_size += len;
    return (la_ssize_t)len;
}

static int tar_error(struct layer_ctx *c, const char *what, const char *path)
{
    if (!c->failed)
        olm_error_set(c->err, "%s %s: %s", what, path, archive_error_string(c->tar));
    return -1;
}

/* Writes one header; `pathname` is the name inside the layer. */
static int write_header(struct layer_ctx *c, const char *pathname, mode_t type, mode_t perm,
                        int64_t size, const char *link_target)
{
    struct archive_entry *e = archive_entry_new();
    if (!e)
        return olm_error_set(c->err, "out of memory");
    archive_entry_copy_pathname(e, pathname);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_mtime(e, 0, 0);
    archive_entry_set_size(e, size);
    if (link_target)
        archive_entry_copy_symlink(e, link_target);
    int r = archive_write_header(c->tar, e);
    archive_entry_free(e);
    if (r != ARCHIVE_OK)
        return tar_error(c, "adding", pathname);
    c->entries++;
    return 0;
}

static int write_file_data(struct layer_ctx *c, const char *abs, const char *name, int64_t size)
{
    int fd = open(abs, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return olm_error_set(c->err, "open %s: %s", abs, strerror(errno));
    char buf[64 * 1024];
    int64_t total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return olm_error_set(c->err, "read %s: %s", abs, strerror(e));
        }
        if (n == 0)
            break;
        if (total + n > size)
            break; /* grew while we read it: reported below */
        if (archive_write_data(c->tar, buf, (size_t)n) != n) {
            close(fd);
            return tar_error(c, "writing", name);
        }
        total += n;
    }
    close(fd);
    if (total != size)
        return olm_error_set(c->err, "%s changed size while it was being archived", abs);
    return 0;
}

static int by_bytes(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name); /* locale-independent order */
}

static int not_dots(const struct dirent *d)
{
    return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

/* Adds the children of directory `abs` (named `name` inside the layer, "" for the root). */
static int add_dir_children(struct layer_ctx *c, const char *abs, const char *name)
{
    struct dirent **list = NULL;
    int n = scandir(abs, &list, not_dots, by_bytes);
    if (n < 0)
        return olm_error_set(c->err, "read directory %s: %s", abs, strerror(errno));
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *child_abs = NULL, *child_name = NULL;
        if (asprintf(&child_abs, "%s/%s", abs, list[i]->d_name) < 0) {
            child_abs = NULL;
            rc = olm_error_set(c->err, "out of memory");
            break;
        }
        if (asprintf(&child_name, "%s%s%s", name, *name ? "/" : "", list[i]->d_name) < 0) {
            free(child_abs);
            rc = olm_error_set(c->err, "out of memory");
            break;
        }
        struct stat st;
        if (lstat(child_abs, &st) != 0) {
            rc = olm_error_set(c->err, "stat %s: %s", child_abs, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            char *dir_name = NULL;
            if (asprintf(&dir_name, "%s/", child_name) < 0)
                rc = olm_error_set(c->err, "out of memory");
            else
                rc = write_header(c, dir_name, AE_IFDIR, 0755, 0, NULL);
            free(dir_name);
            if (rc == 0)
                rc = add_dir_children(c, child_abs, child_name);
        } else if (S_ISREG(st.st_mode)) {
            mode_t perm = (st.st_mode & 0111) ? 0755 : 0644;
            rc = write_header(c, child_name, AE_IFREG, perm, (int64_t)st.st_size, NULL);
            if (rc == 0)
                rc = write_file_data(c, child_abs, child_name, (int64_t)st.st_size);
        } else if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t tl = readlink(child_abs, target, sizeof target - 1);
            if (tl < 0) {
                rc = olm_error_set(c->err, "readlink %s: %s", child_abs, strerror(errno));
            } else if ((size_t)tl >= sizeof target - 1) {
                rc = olm_error_set(c->err, "symlink %s: target is too long", child_abs);
            } else {
                target[tl] = '\0';
                rc = write_header(c, child_name, AE_IFLNK, 0777, 0, target);
            }
        } else {
            rc = olm_error_set(c->err,
                               "%s is not a regular file, directory or symlink; remove it "
                               "(sockets, fifos and devices cannot go into an image layer)",
                               child_abs);
        }
        free(child_abs);
        free(child_name);
    }
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    return rc;
}

/* "configs", "/configs/", "a//b" → "configs", "configs", "a/b".  Rejects "." and "..".
 * Returns a malloc'd string ("" for no prefix) or NULL with err set. */
static char *clean_prefix(const char *prefix, olm_error *err)
{
    size_t n = prefix ? strlen(prefix) : 0;
    char *out = malloc(n + 1);
    if (!out) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    size_t o = 0;
    const char *p = prefix ? prefix : "";
    while (*p) {
        while (*p == '/')
            p++;
        const char *start = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - start);
        if (len == 0)
            break;
        if ((len == 1 && start[0] == '.') || (len == 2 && start[0] == '.' && start[1] == '.')) {
            free(out);
            olm_error_set(err, "layer prefix \"%s\" must not contain \".\" or \"..\"", prefix);
            return NULL;
        }
        if (o)
            out[o++] = '/';
        memcpy(out + o, start, len);
        o += len;
    }
    out[o] = '\0';
    return out;
}

/* Entries "a/", "a/b/" for prefix "a/b". */
static int add_prefix_dirs(struct layer_ctx *c, const char *prefix)
{
    size_t n = strlen(prefix);
    char *buf = malloc(n + 2);
    if (!buf)
        return olm_error_set(c->err, "out of memory");
    int rc = 0;
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (i == n || prefix[i] == '/') {
            memcpy(buf, prefix, i);
            buf[i] = '/';
            buf[i + 1] = '\0';
            rc = write_header(c, buf, AE_IFDIR, 0755, 0, NULL);
        }
    }
    free(buf);
    return rc;
}

static int open_writers(struct layer_ctx *c)
{
    c->gz = archive_write_new();
    c->tar = archive_write_new();
    if (!c->gz || !c->tar)
        return olm_error_set(c->err, "out of memory");
    /* The compressed stream must end exactly with the gzip trailer: padding
     * after it would be "trailing garbage" to gzip readers. */
    if (archive_write_set_format_raw(c->gz) != ARCHIVE_OK ||
        archive_write_add_filter_gzip(c->gz) != ARCHIVE_OK ||
        archive_write_set_filter_option(c->gz, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
        archive_write_set_bytes_per_block(c->gz, 0) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(c->gz, 1) != ARCHIVE_OK)
        return olm_error_set(c->err, "setting up gzip: %s", archive_error_string(c->gz));
    if (archive_write_open2(c->gz, c, NULL, gz_out, NULL, NULL) != ARCHIVE_OK)
        return olm_error_set(c->err, "starting gzip: %s", archive_error_string(c->gz));
    struct archive_entry *e = archive_entry_new();
    if (!e)
        return olm_error_set(c->err, "out of memory");
    archive_entry_set_pathname(e, "layer.tar");
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    int r = archive_write_header(c->gz, e);
    archive_entry_free(e);
    if (r != ARCHIVE_OK)
        return olm_error_set(c->err, "starting gzip stream: %s", archive_error_string(c->gz));

    /* pax "restricted" writes plain ustar headers and adds pax records only for
     * what ustar cannot hold (long names, big files), as Go's archive/tar does. */
    if (archive_write_set_format_pax_restricted(c->tar) != ARCHIVE_OK)
        return olm_error_set(c->err, "setting up tar: %s", archive_error_string(c->tar));
    if (archive_write_open2(c->tar, c, NULL, tar_out, NULL, NULL) != ARCHIVE_OK)
        return olm_error_set(c->err, "starting tar: %s", archive_error_string(c->tar));
    return 0;
}

static int close_writers(struct layer_ctx *c)
{
    if (archive_write_close(c->tar) != ARCHIVE_OK) {
        if (!c->failed)
            olm_error_set(c->err, "finishing tar: %s", archive_error_string(c->tar));
        return -1;
    }
    if (archive_write_close(c->gz) != ARCHIVE_OK) {
        if (!c->failed)
            olm_error_set(c->err, "finishing gzip: %s", archive_error_string(c->gz));
        return -1;
    }
    return 0;
}

void oci_layer_free(oci_layer *layer)
{
    if (!layer)
        return;
    if (layer->blob.file)
        fclose(layer->blob.file);
    memset(layer, 0, sizeof *layer);
}

int oci_layer_from_dir(const char *dir, const char *prefix, oci_layer *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(dir, &st) != 0)
        return olm_error_set(err, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return olm_error_set(err, "%s is not a directory", dir);
    char *pfx = clean_prefix(prefix, err);
    if (!pfx)
        return -1;

    struct layer_ctx c = {0};
    c.err = err;
    int rc = -1;
    c.tar_hash = oci_sha256_new();
    c.gz_hash = oci_sha256_new();
    c.out = tmpfile();
    if (!c.tar_hash || !c.gz_hash) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    if (!c.out) {
        olm_error_set(err, "creating a temporary file for the layer (check TMPDIR): %s",
                      strerror(errno));
        goto done;
    }
    if (open_writers(&c) != 0)
        goto done;
    if (*pfx && add_prefix_dirs(&c, pfx) != 0)
        goto done;
    if (add_dir_children(&c, dir, pfx) != 0)
        goto done;
    if (close_writers(&c) != 0)
        goto done;
    if (fflush(c.out) != 0 || fseek(c.out, 0, SEEK_SET) != 0) {
        olm_error_set(err, "writing the layer to a temporary file: %s", strerror(errno));
        goto done;
    }
    if (oci_sha256_final(c.tar_hash, out->diff_id) != 0 ||
        oci_sha256_final(c.gz_hash, out->blob.digest) != 0) {
        olm_error_set(err, "computing layer digests failed");
        goto done;
    }
    out->blob.media_type = OCI_MT_LAYER_GZIP;
    out->blob.size = c.gz_size;
    out->blob.file = c.out;
    out->tar_size = c.tar_size;
    out->entries = c.entries;
    c.out = NULL; /* now owned by *out */
    rc = 0;
done:
    if (c.tar)
        archive_write_free(c.tar);
    if (c.gz)
        archive_write_free(c.gz);
    oci_sha256_free(c.tar_hash);
    oci_sha256_free(c.gz_hash);
    if (c.out)
        fclose(c.out);
    free(pfx);
    if (rc != 0) {
        olm_error_wrap(err, "building layer from %s", dir);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

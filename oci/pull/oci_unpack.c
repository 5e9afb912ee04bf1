/* Applying untrusted tar layers under a root directory.
 *
 * libarchive only reads here (tar, with zstd detected; gzip is gunzipped before it
 * with ISA-L, oci_unpack_source.c); every file system change is ours and made relative to an fd of the root:
 *   - entry paths are normalised lexically first; absolute paths and ".." are
 *     refused (oci_unpack_path.c);
 *   - parents are opened one component at a time with O_NOFOLLOW|O_DIRECTORY,
 *     so a symlink anywhere on the way is an error, never followed;
 *   - files are created with O_CREAT|O_EXCL|O_NOFOLLOW after removing what was
 *     there (a later layer replaces), symlinks with symlinkat (never followed
 *     afterwards), hard links only to regular files already in the tree;
 *   - devices, fifos and sockets are skipped; owners are never set (files
 *     belong to the process); modes are dirs (m & 0755) | 0700, files
 *     (m & 0755) | 0600: no setuid bits, nothing group- or world-writable
 *     whatever the layer says, and the tree stays removable;
 *   - a header libarchive could only partly apply (ARCHIVE_WARN: e.g. a pax
 *     path over 1 MB dropped for the ustar name) is refused, as Go's
 *     archive/tar refuses it, rather than unpacked under another name; only
 *     the warning that a name is not valid in the C locale is accepted;
 *   - OCI whiteouts delete lower-layer content (".wh.<name>", ".wh..wh..opq").
 * Limits (bytes, entries, path length) are checked before anything is written
 * for the entry; a parent directory made implicitly counts as an entry, and the data
 * of entries that are not extracted counts against max_skipped_bytes before libarchive
 * decompresses it to skip it.  Errors read "<layer>: entry "<path>": <rule>". */
#include "oci_unpack.h"
#include "oci_unpack_rules.h"
#include "oci_unpack_source.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

struct oci_unpacker {
    int rootfd;
    char *prefix; /* normalised, "" for none */
    int strip;
    oci_unpack_limits lim;
    uint64_t bytes, entries, skipped, skipped_bytes;
    int consumed;            /* the current entry's data was read (a regular file) */
    oci_pathset layer_paths; /* what the current layer created (whiteouts spare it) */
    char *path, *tpath;      /* scratch buffers of OCI_UNPACK_PATH_BUFSZ */
    char *root_dir;          /* for oci_unpacker_observe's paths */
    oci_unpack_file_fn on_file;
    void *on_file_ctx;
    size_t told;             /* files the observer was told of */
};

/* Whoever observes the unpack can no longer trust the files it was told of (an observer
 * takes that for good).  Nothing to say while it was told of none. */
static void forget_told(oci_unpacker *u)
{
    if (u->on_file && u->told)
        u->on_file(u->on_file_ctx, NULL, NULL);
}

/* One entry being applied, for error messages. */
struct ectx {
    oci_unpacker *u;
    const char *label;
    const char *raw;
    olm_error *err;
};

static int efail(const struct ectx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int efail(const struct ectx *c, const char *fmt, ...)
{
    char shown[160], why[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    oci_path_display(c->raw, shown, sizeof shown);
    return olm_error_set(c->err, "%s: entry \"%s\": %s", c->label, shown, why);
}

/* ---------------------------------------------------------------- setup */

oci_unpacker *oci_unpacker_new(const char *root_dir, const char *prefix, int strip_prefix,
                               const oci_unpack_limits *limits, olm_error *err)
{
    oci_unpacker *u = calloc(1, sizeof *u);
    if (!u) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    u->rootfd = -1;
    u->strip = strip_prefix;
    if (limits)
        u->lim = *limits;
    if (!u->lim.max_bytes)
        u->lim.max_bytes = OCI_UNPACK_DEFAULT_MAX_BYTES;
    if (!u->lim.max_files)
        u->lim.max_files = OCI_UNPACK_DEFAULT_MAX_FILES;
    if (!u->lim.max_path)
        u->lim.max_path = OCI_UNPACK_DEFAULT_MAX_PATH;
    if (!u->lim.max_skipped_bytes)
        u->lim.max_skipped_bytes = OCI_UNPACK_DEFAULT_MAX_SKIPPED_BYTES;
    if (u->lim.max_path >= OCI_UNPACK_PATH_BUFSZ)
        u->lim.max_path = OCI_UNPACK_PATH_BUFSZ - 1;
    u->prefix = malloc(OCI_UNPACK_PATH_BUFSZ);
    u->path = malloc(OCI_UNPACK_PATH_BUFSZ);
    u->tpath = malloc(OCI_UNPACK_PATH_BUFSZ);
    if (!u->prefix || !u->path || !u->tpath) {
        olm_error_set(err, "out of memory");
        goto fail;
    }
    const char *why;
    if (oci_prefix_normalize(prefix, u->prefix, OCI_UNPACK_PATH_BUFSZ, &why) != 0) {
        olm_error_set(err, "unpack prefix \"%s\": %s", prefix, why);
        goto fail;
    }
    if (!(u->root_dir = strdup(root_dir))) {
        olm_error_set(err, "out of memory");
        goto fail;
    }
    u->rootfd = open(root_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (u->rootfd < 0) {
        olm_error_set(err, "unpack directory %s: %s", root_dir, strerror(errno));
        goto fail;
    }
    return u;
fail:
    oci_unpacker_free(u);
    return NULL;
}

void oci_unpacker_free(oci_unpacker *u)
{
    if (!u)
        return;
    if (u->rootfd >= 0)
        close(u->rootfd);
    oci_pathset_clear(&u->layer_paths);
    free(u->prefix);
    free(u->path);
    free(u->tpath);
    free(u->root_dir);
    free(u);
}

void oci_unpacker_observe(oci_unpacker *u, oci_unpack_file_fn fn, void *ctx)
{
    u->on_file = fn;
    u->on_file_ctx = ctx;
}

/* Tells the observer of the regular file `mapped` (path below the root) just completed. */
static void tell_file(oci_unpacker *u, const char *mapped)
{
    if (!u->on_file)
        return;
    const char *rel = mapped;
    size_t plen = strlen(u->prefix);
    if (!u->strip && plen) {
        if (strlen(mapped) <= plen)
            return; /* the prefix itself as a file: nothing below it to load */
        rel = mapped + plen + 1;
    }
    char *abs = NULL;
    if (asprintf(&abs, "%s/%s", u->root_dir, mapped) < 0) {
        /* cannot tell it: better nobody relies on an incomplete list, even an empty one */
        u->on_file(u->on_file_ctx, NULL, NULL);
        return;
    }
    u->told++;
    u->on_file(u->on_file_ctx, abs, rel);
    free(abs);
}

uint64_t oci_unpacker_bytes(const oci_unpacker *u) { return u->bytes; }
uint64_t oci_unpacker_entries(const oci_unpacker *u) { return u->entries; }
uint64_t oci_unpacker_skipped(const oci_unpacker *u) { return u->skipped; }
uint64_t oci_unpacker_skipped_bytes(const oci_unpacker *u) { return u->skipped_bytes; }

/* ---------------------------------------------------------------- walking */

/* Opens the directory holding the last component of `path` (normalised,
 * non-empty) and points *name at that component.  With `create`, missing
 * parents are made (0755 before the umask), each one counted as an entry: a
 * 20 KB layer of 1,000 files 254 directories deep would otherwise make 256,000
 * directories under a limit of 200,000 entries.  Returns an fd, -1 on error, or
 * -2 when a parent is missing and !create. */
static int open_parent(const struct ectx *c, const char *path, int create, const char *what,
                       const char **name)
{
    int fd = openat(c->u->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return efail(c, "opening the unpack root: %s", strerror(errno));
    const char *p = path;
    for (;;) {
        const char *slash = strchr(p, '/');
        if (!slash) {
            *name = p;
            return fd;
        }
        char comp[OCI_UNPACK_MAX_NAME + 1];
        size_t len = (size_t)(slash - p);
        memcpy(comp, p, len); /* normalised: 0 < len <= 255 */
        comp[len] = '\0';
        int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (c->u->entries >= c->u->lim.max_files) {
                close(fd);
                return efail(c, "creating its parent directory \"%.*s\": more than %llu entries in the image "
                                "(the limit; parent directories an entry implies count too)",
                             (int)(slash - path), path, (unsigned long long)c->u->lim.max_files);
            }
            c->u->entries++;
            if (mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
                int e = errno;
                close(fd);
                return efail(c, "creating directory \"%.*s\": %s", (int)(slash - path), path,
                             strerror(e));
            }
            next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = errno;
            struct stat st;
            int is_link = fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
            close(fd);
            if (e == ENOENT && !create)
                return -2;
            if (is_link)
                return efail(c, "%s passes through the symlink \"%.*s\"", what,
                             (int)(slash - path), path);
            if (e == ENOTDIR || e == ELOOP)
                return efail(c, "%s: parent \"%.*s\" is not a directory", what,
                             (int)(slash - path), path);
            return efail(c, "opening \"%.*s\": %s", (int)(slash - path), path, strerror(e));
        }
        close(fd);
        fd = next;
        p = slash + 1;
    }
}

/* Removes whatever is at pfd/name so that a new entry can take its place.
 * With keep_dir, an existing directory stays (returns 1). */
static int clear_slot(const struct ectx *c, int pfd, const char *name, int keep_dir)
{
    struct stat st;
    if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return 0;
        return efail(c, "%s", strerror(errno));
    }
    if (S_ISDIR(st.st_mode) && keep_dir)
        return 1;
    forget_told(c->u); /* something already in the tree is replaced */
    if (S_ISDIR(st.st_mode)) {
        olm_error sub;
        if (oci_remove_tree_at(pfd, name, &sub) != 0)
            return efail(c, "replacing a directory: %s", sub.msg);
        return 0;
    }
    if (unlinkat(pfd, name, 0) != 0)
        return efail(c, "replacing an existing entry: %s", strerror(errno));
    return 0;
}

/* ---------------------------------------------------------------- entry kinds */

static int put_dir(const struct ectx *c, int pfd, const char *name, mode_t mode)
{
    int r = clear_slot(c, pfd, name, 1);
    if (r < 0)
        return -1;
    if (r == 0 && mkdirat(pfd, name, 0700) != 0)
        return efail(c, "creating the directory: %s", strerror(errno));
    int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return efail(c, "opening the directory: %s", strerror(errno));
    int rc = fchmod(fd, (mode & 0755) | 0700) == 0 ? 0 : efail(c, "chmod: %s", strerror(errno));
    close(fd);
    return rc;
}

static int write_all(int fd, const char *buf, size_t len, int64_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, buf, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

static int put_file(const struct ectx *c, struct archive *a, struct archive_entry *e, int pfd,
                    const char *name)
{
    oci_unpacker *u = c->u;
    int64_t declared = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
    if (declared < 0)
        return efail(c, "negative size");
    if ((uint64_t)declared > u->lim.max_bytes - u->bytes)
        return efail(c, "size %lld bytes exceeds the unpack limit of %llu bytes (%llu already "
                        "written)",
                     (long long)declared, (unsigned long long)u->lim.max_bytes,
                     (unsigned long long)u->bytes);
    if (clear_slot(c, pfd, name, 0) < 0)
        return -1;
    int fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return efail(c, "creating the file: %s", strerror(errno));
    u->consumed = 1;
    int rc = -1;
    for (;;) {
        const void *buf;
        size_t size;
        la_int64_t off;
        int r = archive_read_data_block(a, &buf, &size, &off);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            efail(c, "reading its data: %s", archive_error_string(a));
            goto out;
        }
        if (off < 0 || (uint64_t)off > (uint64_t)declared || size > (uint64_t)(declared - off)) {
            efail(c, "data beyond the declared size");
            goto out;
        }
        if (write_all(fd, buf, size, off) != 0) {
            efail(c, "writing: %s", strerror(errno));
            goto out;
        }
    }
    /* sparse files may end in a hole */
    if (ftruncate(fd, (off_t)declared) != 0) {
        efail(c, "truncate: %s", strerror(errno));
        goto out;
    }
    if (fchmod(fd, (archive_entry_perm(e) & 0755) | 0600) != 0) {
        efail(c, "chmod: %s", strerror(errno));
        goto out;
    }
    u->bytes += (uint64_t)declared;
    rc = 0;
out:
    if (close(fd) != 0 && rc == 0)
        rc = efail(c, "closing the file: %s", strerror(errno));
    return rc;
}

static int put_symlink(const struct ectx *c, int pfd, const char *name, const char *mapped,
                       const char *target)
{
    /* checked where the link lands in our tree: with a stripped prefix,
     * "configs/l -> ../x" would climb out of the root */
    const char *why = oci_symlink_target_check(mapped, target, c->u->lim.max_path);
    if (why) {
        char shown[160];
        oci_path_display(target, shown, sizeof shown);
        return efail(c, "%s (\"%s\")", why, shown);
    }
    if (clear_slot(c, pfd, name, 0) < 0)
        return -1;
    if (symlinkat(target, pfd, name) != 0)
        return efail(c, "creating the symlink: %s", strerror(errno));
    return 0;
}

static int put_hardlink(const struct ectx *c, int pfd, const char *name, const char *mapped,
                        const char *raw_target)
{
    oci_unpacker *u = c->u;
    char shown[160];
    oci_path_display(raw_target, shown, sizeof shown);
    const char *why =
        oci_path_normalize(raw_target, u->lim.max_path, u->tpath, OCI_UNPACK_PATH_BUFSZ);
    if (why)
        return efail(c, "hardlink target \"%s\": %s", shown, why);
    const char *tmapped;
    if (oci_prefix_map(u->prefix, u->strip, u->tpath, &tmapped) != OCI_PREFIX_INSIDE ||
        !*tmapped)
        return efail(c, "hardlink target \"%s\" is outside the extracted directory", shown);
    if (strcmp(tmapped, mapped) == 0)
        return efail(c, "hardlink to itself");
    const char *tname;
    int tfd = open_parent(c, tmapped, 0, "hardlink target", &tname);
    if (tfd == -2)
        return efail(c, "hardlink target \"%s\" does not exist (a link must follow its target)",
                     shown);
    if (tfd < 0)
        return -1;
    struct stat st;
    int rc = 0;
    if (fstatat(tfd, tname, &st, AT_SYMLINK_NOFOLLOW) != 0)
        rc = efail(c, "hardlink target \"%s\" does not exist (a link must follow its target)",
                   shown);
    else if (!S_ISREG(st.st_mode))
        rc = efail(c, "hardlink target \"%s\" is not a regular file", shown);
    else if (clear_slot(c, pfd, name, 0) < 0)
        rc = -1;
    else if (linkat(tfd, tname, pfd, name, 0) != 0) /* flags 0: a symlink is not followed */
        rc = efail(c, "creating the hardlink: %s", strerror(errno));
    close(tfd);
    return rc;
}

/* ---------------------------------------------------------------- whiteouts */

/* Opens the directory at `path` ("" = root) without creating or following
 * anything.  -2 when it does not exist. */
static int open_dir(const struct ectx *c, const char *path, const char *what)
{
    if (!*path) {
        int fd = openat(c->u->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd >= 0 ? fd : efail(c, "opening the unpack root: %s", strerror(errno));
    }
    const char *name;
    int pfd = open_parent(c, path, 0, what, &name);
    if (pfd < 0)
        return pfd;
    int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(pfd);
    if (fd >= 0)
        return fd;
    if (e == ENOENT || e == ENOTDIR)
        return -2; /* nothing to clear */
    if (e == ELOOP)
        return efail(c, "%s is a symlink", what);
    return efail(c, "opening \"%s\": %s", path, strerror(e));
}

/* Removes what lower layers left in the directory `dfd` (at `dpath`): every
 * child the current layer did not create; the layer's own subdirectories are
 * cleared the same way.  Closes dfd. */
static int clear_opaque(const struct ectx *c, int dfd, const char *dpath, int depth)
{
    int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* own read position */
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (!d) {
        int e = errno;
        if (rfd >= 0)
            close(rfd);
        close(dfd);
        return efail(c, "reading \"%s\": %s", dpath, strerror(e));
    }
    int rc = 0;
    struct dirent *de = NULL;
    char *child = NULL;
    while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        free(child);
        if (asprintf(&child, "%s%s%s", dpath, *dpath ? "/" : "", de->d_name) < 0) {
            child = NULL;
            rc = efail(c, "out of memory");
            break;
        }
        olm_error sub;
        if (!oci_pathset_has(&c->u->layer_paths, child)) {
            if (oci_remove_tree_at(dfd, de->d_name, &sub) != 0)
                rc = efail(c, "opaque whiteout: %s", sub.msg);
            continue;
        }
        struct stat st;
        if (depth < OCI_UNPACK_MAX_DEPTH &&
            fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
            int sfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = sfd >= 0 ? clear_opaque(c, sfd, child, depth + 1)
                          : efail(c, "opening \"%s\": %s", child, strerror(errno));
        }
    }
    if (rc == 0 && !de && errno != 0)
        rc = efail(c, "reading \"%s\": %s", dpath, strerror(errno));
    free(child);
    closedir(d);
    close(dfd);
    return rc;
}

/* `.wh.<name>` in `parent` or `.wh..wh..opq` (opaque) for `parent`. */
static int apply_whiteout(const struct ectx *c, const char *parent, const char *base, int opaque)
{
    oci_unpacker *u = c->u;
    char *target = u->tpath;
    const char *victim = base + strlen(WH_PREFIX);
    if (!opaque && (!*victim || strcmp(victim, ".") == 0 || strcmp(victim, "..") == 0))
        return efail(c, "invalid whiteout name");
    int n = opaque ? snprintf(target, OCI_UNPACK_PATH_BUFSZ, "%s", parent)
                   : snprintf(target, OCI_UNPACK_PATH_BUFSZ, "%s%s%s", parent,
                              *parent ? "/" : "", victim);
    if (n < 0 || (size_t)n >= OCI_UNPACK_PATH_BUFSZ)
        return efail(c, "path too long");
    const char *mapped;
    oci_prefix_match m = oci_prefix_map(u->prefix, u->strip, target, &mapped);
    if (m == OCI_PREFIX_OUTSIDE)
        return 0;
    /* a whiteout hides lower layers only, never what this layer made */
    if (!opaque && *mapped && oci_pathset_has(&u->layer_paths, mapped))
        return 0;
    forget_told(u); /* it may delete a file already told of */
    if (opaque || !*mapped) {
        /* opaque dir, or the whole extracted dir deleted: clear it in place */
        int dfd = open_dir(c, mapped, "whiteout path");
        if (dfd == -2)
            return 0;
        if (dfd < 0)
            return -1;
        return clear_opaque(c, dfd, mapped, 0);
    }
    const char *name;
    int pfd = open_parent(c, mapped, 0, "whiteout path", &name);
    if (pfd == -2)
        return 0;
    if (pfd < 0)
        return -1;
    olm_error sub;
    int rc = oci_remove_tree_at(pfd, name, &sub) == 0 ? 0 : efail(c, "whiteout: %s", sub.msg);
    close(pfd);
    return rc;
}

/* ---------------------------------------------------------------- one entry */

static int apply_entry(oci_unpacker *u, struct archive *a, struct archive_entry *e,
                       const char *label, olm_error *err)
{
    struct ectx c = {.u = u, .label = label, .err = err};
    c.raw = archive_entry_pathname(e);
    if (!c.raw)
        c.raw = archive_entry_pathname_utf8(e);
    const char *why = oci_path_normalize(c.raw, u->lim.max_path, u->path, OCI_UNPACK_PATH_BUFSZ);
    if (why == OCI_WHY_PATH_TOO_LONG)
        return efail(&c, "path longer than %zu bytes", u->lim.max_path);
    if (why)
        return efail(&c, "%s", why);
    char *path = u->path;
    if (!*path)
        return 0; /* "./": the root itself */

    char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strncmp(base, WH_PREFIX, strlen(WH_PREFIX)) == 0) {
        int opaque = strcmp(base, WH_OPAQUE) == 0;
        if (!opaque && strncmp(base, WH_PREFIX WH_PREFIX, 2 * strlen(WH_PREFIX)) == 0)
            return 0; /* other ".wh..wh." names are aufs bookkeeping */
        char *dup = strdup(path);
        if (!dup)
            return efail(&c, "out of memory");
        char *ds = strrchr(dup, '/');
        const char *parent = "";
        if (ds) {
            *ds = '\0';
            parent = dup;
        }
        int rc = apply_whiteout(&c, parent, ds ? ds + 1 : dup, opaque);
        free(dup);
        return rc;
    }

    const char *hard = archive_entry_hardlink(e);
    mode_t type = archive_entry_filetype(e);
    if (!hard && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
        u->skipped++; /* devices, fifos, sockets: never created */
        return 0;
    }
    const char *mapped;
    if (oci_prefix_map(u->prefix, u->strip, path, &mapped) != OCI_PREFIX_INSIDE || !*mapped)
        return 0; /* outside the filter, or the prefix dir itself when stripping */
    if (oci_pathset_add_with_parents(&u->layer_paths, mapped) != 0)
        return efail(&c, "out of memory");
    const char *name;
    int pfd = open_parent(&c, mapped, 1, "path", &name);
    if (pfd < 0)
        return -1;
    int rc;
    if (hard)
        rc = put_hardlink(&c, pfd, name, mapped, hard);
    else if (type == AE_IFDIR)
        rc = put_dir(&c, pfd, name, archive_entry_perm(e));
    else if (type == AE_IFLNK)
        rc = put_symlink(&c, pfd, name, mapped, archive_entry_symlink(e));
    else
        rc = put_file(&c, a, e, pfd, name);
    close(pfd);
    if (rc == 0 && !hard && type == AE_IFREG)
        tell_file(u, mapped);
    return rc;
}

/* ---------------------------------------------------------------- layers */

static struct archive *reader(const char *label, olm_error *err)
{
    struct archive *a = archive_read_new();
    if (!a) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    /* Only in-process decompressors: filter_all would also allow formats that
     * run external programs on untrusted data.  ARCHIVE_WARN means libarchive
     * would use an external program for it; we accept that for zstd only if
     * the library lacks it, which Debian's does not. */
    if (archive_read_support_filter_gzip(a) < ARCHIVE_WARN ||
        archive_read_support_filter_zstd(a) < ARCHIVE_WARN ||
        archive_read_support_format_tar(a) != ARCHIVE_OK ||
        archive_read_support_format_empty(a) != ARCHIVE_OK) {
        olm_error_set(err, "%s: setting up libarchive: %s", label, archive_error_string(a));
        archive_read_free(a);
        return NULL;
    }
    return a;
}

/* libarchive warns "Pathname can't be converted from UTF-8 to current locale." (and the
 * same for link, user and group names) for non-ASCII names in the C locale; the name is
 * then kept as its UTF-8 bytes, which is what the layer says. */
static int name_charset_warning(struct archive *a)
{
    const char *m = archive_error_string(a);
    return m && strstr(m, "can't be converted") != NULL;
}

/* The data of an entry that was not extracted is still decompressed, to be skipped, by the
 * next archive_read_next_header: count it first (a 363 KB zstd layer can hold 10 GiB). */
static int count_skipped(oci_unpacker *u, struct archive_entry *e, const char *label, olm_error *err)
{
    int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
    if (u->consumed || size <= 0)
        return 0;
    if ((uint64_t)size > u->lim.max_skipped_bytes - u->skipped_bytes) {
        struct ectx c = {.u = u, .label = label, .err = err, .raw = archive_entry_pathname(e)};
        return efail(&c,
                     "%lld bytes that are not extracted%s%s%s would pass the limit of %llu bytes read only to be "
                     "skipped (%llu so far)",
                     (long long)size, *u->prefix ? " (outside \"" : "", u->prefix, *u->prefix ? "\")" : "",
                     (unsigned long long)u->lim.max_skipped_bytes, (unsigned long long)u->skipped_bytes);
    }
    u->skipped_bytes += (uint64_t)size;
    return 0;
}

static int apply_archive(oci_unpacker *u, struct archive *a, const char *label, olm_error *err)
{
    oci_pathset_clear(&u->layer_paths);
    int rc = 0;
    for (;;) {
        struct archive_entry *e;
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            rc = olm_error_set(err, "%s: reading the layer: %s", label,
                               archive_error_string(a) ? archive_error_string(a) : "corrupt");
            break;
        }
        if (r == ARCHIVE_WARN && !name_charset_warning(a)) {
            struct ectx c = {.u = u, .label = label, .err = err, .raw = archive_entry_pathname(e)};
            rc = efail(&c, "its header could only be read in part (%s): refused rather than unpacked as something "
                           "the layer did not say",
                       archive_error_string(a) ? archive_error_string(a) : "libarchive warning");
            break;
        }
        if (++u->entries > u->lim.max_files) {
            rc = olm_error_set(err, "%s: more than %llu entries in the image (the limit)", label,
                               (unsigned long long)u->lim.max_files);
            break;
        }
        u->consumed = 0;
        if ((rc = apply_entry(u, a, e, label, err)) != 0)
            break;
        if ((rc = count_skipped(u, e, label, err)) != 0)
            break;
    }
    oci_pathset_clear(&u->layer_paths);
    return rc;
}

/* The gzip stream goes on after the tar's end (the tar's padding, the last CRC-32): read to its
 * end like the rest, and what comes out counts as skipped bytes (a bomb could sit there). */
static int finish_source(oci_unpacker *u, struct archive *a, oci_unpack_source *src, const char *label,
                         olm_error *err)
{
    uint64_t left = u->lim.max_skipped_bytes - u->skipped_bytes, read = 0;
    int r = oci_unpack_source_finish(a, src, left, &read);
    u->skipped_bytes += read;
    if (r < 0)
        return olm_error_set(err, "%s: reading the layer: %s", label, oci_unpack_source_error(src));
    if (r > 0)
        return olm_error_set(err,
                             "%s: more than %llu bytes of gzip data after the tar's end would pass the limit of "
                             "%llu bytes read only to be skipped",
                             label, (unsigned long long)left, (unsigned long long)u->lim.max_skipped_bytes);
    return 0;
}

/* Reads the layer through oci_unpack_source (gzip: ISA-L, see oci_unpack_source.c). */
static int apply_source(oci_unpacker *u, int fd, const void *data, size_t len, const char *label,
                        olm_error *err)
{
    oci_unpack_source *src = oci_unpack_source_new(fd, data, len);
    if (!src)
        return olm_error_set(err, "%s: out of memory", label);
    struct archive *a = reader(label, err);
    if (!a) {
        oci_unpack_source_free(src);
        return -1;
    }
    int rc;
    if (archive_read_open(a, src, NULL, oci_unpack_source_read, NULL) != ARCHIVE_OK) {
        const char *why = oci_unpack_source_error(src);
        rc = why ? olm_error_set(err, "%s: reading the layer: %s", label, why)
                 : olm_error_set(err, "%s: not a tar layer: %s", label, archive_error_string(a));
    } else if ((rc = apply_archive(u, a, label, err)) == 0) {
        rc = finish_source(u, a, src, label, err);
    }
    archive_read_free(a);
    oci_unpack_source_free(src);
    return rc;
}

int oci_unpacker_apply_fd(oci_unpacker *u, int fd, const char *label, olm_error *err)
{
    return apply_source(u, fd, NULL, 0, label, err);
}

int oci_unpacker_apply_mem(oci_unpacker *u, const void *data, size_t len, const char *label,
                           olm_error *err)
{
    return apply_source(u, -1, data, len, label, err);
}

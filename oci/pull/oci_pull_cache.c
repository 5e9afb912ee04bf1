/* The unpack cache: <base>/<owner>/<digest>/ plus <digest>.json beside it.
 *
 * The tag is resolved on every call (spec §4.2); a digest already unpacked is
 * returned as is.  The sidecar JSON keeps the config labels (and catalog
 * prefix) so that a hit needs no download at all.  It is written after the
 * tree is in place, so a tree without a sidecar is an interrupted pull and is
 * redone.  After a successful pull the owner's other digests are removed;
 * names starting with '.' (pulls in progress) are left alone. */
#include "oci_internal.h"
#include "oci_pull_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int valid_owner(const char *owner)
{
    return owner && *owner && !strchr(owner, '/') && strcmp(owner, ".") != 0 &&
           strcmp(owner, "..") != 0 && owner[0] != '.' && strlen(owner) <= 255;
}

static int mkdir_if_missing(const char *path, olm_error *err)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return olm_error_set(err, "creating %s: %s", path, strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return olm_error_set(err, "%s is not a directory", path);
    return 0;
}

/* Reads the sidecar; 0 = hit (labels/prefix set, caller frees), 1 = miss. */
static int read_sidecar(const char *path, char **labels, char **prefix)
{
    *labels = *prefix = NULL;
    json_t *root = json_load_file(path, 0, NULL);
    json_t *l = json_object_get(root, "labels");
    const char *p = json_string_value(json_object_get(root, "prefix"));
    if (json_is_object(l)) {
        *labels = json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS);
        *prefix = p ? strdup(p) : NULL;
    }
    json_decref(root);
    if (!*labels || (p && !*prefix)) {
        free(*labels);
        free(*prefix);
        *labels = *prefix = NULL;
        return 1;
    }
    return 0;
}

/* Writes the sidecar through a temp file and rename, so it is whole or absent. */
static int write_sidecar(const char *path, const char *digest_ref, const char *labels_json,
                         const char *prefix, olm_error *err)
{
    json_t *labels = json_loads(labels_json, 0, NULL);
    json_t *root = json_pack("{s:s, s:o?, s:s?}", "ref", digest_ref, "labels", labels, "prefix",
                             prefix);
    char *tmp = NULL;
    int rc = -1;
    if (!root || asprintf(&tmp, "%s.tmp", path) < 0) {
        tmp = NULL;
        olm_error_set(err, "out of memory");
        goto out;
    }
    if (json_dump_file(root, tmp, JSON_COMPACT | JSON_SORT_KEYS) != 0) {
        olm_error_set(err, "writing %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (rename(tmp, path) != 0) {
        olm_error_set(err, "writing %s: %s", path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    json_decref(root);
    free(tmp);
    return rc;
}

/* Removes every entry of the owner dir except `digest`, `digest`.json and dot-names. */
static void remove_other_digests(const char *owner_dir, const char *digest)
{
    int fd = open(owner_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    int rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (!d) {
        if (rfd >= 0)
            close(rfd);
        close(fd);
        return;
    }
    size_t dlen = strlen(digest);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (n[0] == '.' || strcmp(n, digest) == 0 ||
            (strncmp(n, digest, dlen) == 0 && strcmp(n + dlen, ".json") == 0))
            continue;
        olm_error ignored; /* best effort: a leftover is retried after the next pull */
        oci_remove_tree_at(fd, n, &ignored);
    }
    closedir(d);
    close(fd);
}

struct cached_pull {
    const oci_ref *ref; /* as asked for: names the result whatever source served it */
    const char *base, *owner;
    const oci_pull_opts *opts;
    oci_pull_result *result;
};

/* Whether the owner's cache holds an image (any entry not hidden: a digest, its sidecar). */
static bool holds_an_image(const char *owner_dir)
{
    DIR *d = opendir(owner_dir);
    if (!d)
        return false;
    bool any = false;
    struct dirent *e;
    while (!any && (e = readdir(d)) != NULL)
        any = e->d_name[0] != '.';
    closedir(d);
    return any;
}

/* The digest `src` names.  A tag is resolved with a HEAD, which is all a poll of an image
 * already cached needs; with nothing cached for the owner (a first pull, and every pull
 * after a restart, which empties the cache) the manifest is fetched by the tag instead,
 * its digest computed from its bytes, and kept in *m for the pull: one request, not two. */
static int resolve(oci_registry *reg, const oci_ref *src, const char *owner_dir, oci_image_meta *m,
                   char digest[OCI_DIGEST_BUFSZ], olm_error *err)
{
    if (src->digest || holds_an_image(owner_dir))
        return oci_resolve_digest(reg, src, digest, err);
    if (oci_manifest_fetch(reg, src->repository, src->tag, &m->known_manifest, &m->known_len, &m->known_type,
                           digest, err) != 0)
        return olm_error_wrap(err, "resolving %s/%s:%s", src->registry, src->repository, src->tag);
    return 0;
}

static int pull_cached_from(oci_registry *reg, const oci_ref *src, bool mirror, void *ctx, olm_error *err)
{
    struct cached_pull *c = ctx;
    const oci_pull_opts *opts = c->opts;
    char digest[OCI_DIGEST_BUFSZ];
    char *owner_dir = NULL, *entry = NULL, *sidecar = NULL, *labels = NULL, *prefix = NULL;
    oci_image_meta m = {0};
    int rc = -1;
    if (asprintf(&owner_dir, "%s/%s", c->base, c->owner) < 0) {
        owner_dir = NULL;
        olm_error_set(err, "out of memory");
        goto out;
    }
    if (resolve(reg, src, owner_dir, &m, digest, err) != 0)
        goto out;
    if (asprintf(&entry, "%s/%s", owner_dir, digest) < 0 ||
        asprintf(&sidecar, "%s.json", entry) < 0) {
        olm_error_set(err, "out of memory");
        goto out;
    }
    if (mkdir_if_missing(c->base, err) != 0 || mkdir_if_missing(owner_dir, err) != 0)
        goto out;
    struct stat st;
    if (lstat(entry, &st) == 0 && S_ISDIR(st.st_mode) && read_sidecar(sidecar, &labels, &prefix) == 0 &&
        (!opts->catalog || prefix)) {
        rc = oci_pull_fill_result(c->ref, digest, entry, labels, prefix, opts, c->result, err);
        c->result->cache_hit = 1;
        goto out;
    }
    /* a miss, or a leftover from an interrupted pull: start clean */
    oci_remove_path(entry);
    unlink(sidecar);
    if (mirror)
        oci_registry_progress(reg, "trying the mirror %s for %s", oci_registry_host(reg), c->ref->registry);
    if (oci_pull_to(reg, src, digest, entry, opts, &m, err) != 0)
        goto out;
    char *digest_ref = oci_ref_with_digest(c->ref, digest);
    if (!digest_ref) {
        olm_error_set(err, "out of memory");
        oci_remove_path(entry);
        goto out;
    }
    rc = write_sidecar(sidecar, digest_ref, m.labels_json, opts->catalog ? m.prefix : NULL, err);
    free(digest_ref);
    if (rc != 0) {
        oci_remove_path(entry);
        goto out;
    }
    rc = oci_pull_fill_result(c->ref, digest, entry, m.labels_json, m.prefix, opts, c->result, err);
    if (rc == 0)
        remove_other_digests(owner_dir, digest);
out:
    if (rc != 0)
        oci_pull_result_free(c->result);
    oci_image_meta_free(&m);
    free(labels);
    free(prefix);
    free(owner_dir);
    free(entry);
    free(sidecar);
    return rc;
}

int oci_pull_cached(const char *base, const char *owner, const char *s,
                    const oci_pull_opts *opts, oci_pull_result *result, olm_error *err)
{
    memset(result, 0, sizeof *result);
    opts = oci_pull_opts_or_default(opts);
    if (!valid_owner(owner))
        return olm_error_set(err, "cache owner \"%s\" must be one path component", owner ? owner : "");
    oci_ref ref;
    if (oci_ref_parse(s, &ref, err) != 0)
        return -1;
    struct cached_pull c = {.ref = &ref, .base = base, .owner = owner, .opts = opts, .result = result};
    int rc = oci_pull_each_source(&ref, opts, pull_cached_from, &c, err);
    if (rc != 0)
        oci_pull_result_free(result);
    oci_ref_free(&ref);
    return rc;
}

/* ".<name>.pull-XXXXXX", as oci_pull_to names its temp dirs (mkdtemp's six characters). */
static int is_pull_temp(const char *name)
{
    const char *p = strstr(name, ".pull-");
    return name[0] == '.' && p && p > name + 1 && strlen(p) == strlen(".pull-") + 6 && !strstr(p + 1, ".pull-");
}

int oci_pull_cache_sweep(const char *base, olm_error *err)
{
    int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (bfd < 0)
        return errno == ENOENT ? 0 : olm_error_set(err, "opening %s: %s", base, strerror(errno));
    int rfd = openat(bfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
    if (!d) {
        int e = errno;
        if (rfd >= 0)
            close(rfd);
        close(bfd);
        return olm_error_set(err, "reading %s: %s", base, strerror(e));
    }
    int removed = 0, rc = 0;
    struct dirent *owner;
    while ((owner = readdir(d)) != NULL && rc == 0) {
        if (owner->d_name[0] == '.')
            continue;
        int ofd = openat(bfd, owner->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ofd < 0)
            continue; /* a file, a symlink: not an owner dir */
        int lfd = openat(ofd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *od = lfd >= 0 ? fdopendir(lfd) : NULL;
        if (!od) {
            if (lfd >= 0)
                close(lfd);
            close(ofd);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(od)) != NULL && rc == 0) {
            if (!is_pull_temp(e->d_name))
                continue;
            olm_error sub;
            if (oci_remove_tree_at(ofd, e->d_name, &sub) != 0)
                rc = olm_error_set(err, "removing %s/%s/%s: %s", base, owner->d_name, e->d_name, sub.msg);
            else
                removed++;
        }
        closedir(od);
        close(ofd);
    }
    closedir(d);
    close(bfd);
    return rc ? -1 : removed;
}

int oci_pull_catalog(const char *base, const char *owner, const char *ref,
                     const oci_pull_opts *opts, oci_pull_result *result, olm_error *err)
{
    oci_pull_opts copy = *oci_pull_opts_or_default(opts);
    copy.catalog = 1;
    return oci_pull_cached(base, owner, ref, &copy, result, err);
}

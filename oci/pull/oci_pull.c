/* Pulling an image into a directory, and the per-owner unpack cache.
 *
 * A pull builds everything in a temp dir beside the destination
 * (".<name>.pull-XXXXXX/rootfs"), unpacking each layer as it downloads and
 * verifies (oci_layer_stream.c).  Only a complete, verified tree is
 * renamed into place, so a failed pull never leaves a partial one; the temp
 * dir is removed on every path out. */
#include "oci_internal.h"
#include "oci_pull_internal.h"
#include "oci_unpack_rules.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void oci_pull_result_free(oci_pull_result *r)
{
    if (!r)
        return;
    free(r->digest_ref);
    free(r->labels_json);
    free(r->dir);
    free(r->fbc_root);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- manifest + config */

void oci_image_meta_free(oci_image_meta *m)
{
    oci_manifest_free(&m->manifest);
    free(m->labels_json);
    free(m->prefix);
    free(m->known_manifest);
    free(m->known_type);
    memset(m, 0, sizeof *m);
}

/* Labels of an image config as compact JSON ("{}" when there are none). */
static char *config_labels(const char *config, size_t len, olm_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(config, len, 0, &je);
    if (!json_is_object(root)) {
        json_decref(root);
        olm_error_set(err, "image config is not a JSON object");
        return NULL;
    }
    json_t *labels = json_object_get(json_object_get(root, "config"), "Labels");
    char *out = NULL;
    if (json_is_object(labels))
        out = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
    else if (!labels || json_is_null(labels))
        out = strdup("{}");
    else
        olm_error_set(err, "image config: \"config.Labels\" is not an object");
    if (!out && (json_is_object(labels) || !labels || json_is_null(labels)))
        olm_error_set(err, "out of memory");
    json_decref(root);
    return out;
}

static int fetch_meta(oci_registry *reg, const oci_ref *ref, const char *digest,
                      const oci_pull_opts *opts, oci_image_meta *m, olm_error *err)
{
    char *body = NULL, *ct = NULL, *config = NULL;
    size_t len = 0, clen = 0;
    const char *repo = ref->repository;
    int rc = -1;
    if (m->known_manifest && digest) { /* fetched by tag already, its digest computed */
        body = m->known_manifest;
        ct = m->known_type;
        len = m->known_len;
        m->known_manifest = m->known_type = NULL;
        snprintf(m->top_digest, sizeof m->top_digest, "%s", digest);
    } else if (oci_manifest_fetch(reg, repo, digest ? digest : oci_ref_manifest_id(ref), &body, &len, &ct,
                                  m->top_digest, err) != 0) {
        return -1;
    }
    oci_manifest_kind kind;
    if (oci_manifest_kind_of(body, len, ct, &kind, err) != 0)
        goto out;
    if (kind == OCI_KIND_INDEX) {
        oci_platform want;
        oci_descriptor pick;
        if ((opts->platform ? oci_platform_parse(opts->platform, &want, err)
                            : oci_platform_host(&want, err)) != 0 ||
            oci_index_select(body, len, &want, &pick, err) != 0)
            goto out;
        free(body);
        free(ct);
        body = ct = NULL;
        char sub[OCI_DIGEST_BUFSZ];
        int frc = oci_manifest_fetch(reg, repo, pick.digest, &body, &len, &ct, sub, err);
        free(pick.media_type);
        if (frc != 0 || oci_manifest_kind_of(body, len, ct, &kind, err) != 0)
            goto out;
        if (kind != OCI_KIND_MANIFEST) {
            olm_error_set(err, "index entry %s is itself an index", sub);
            goto out;
        }
    }
    if (oci_manifest_parse(body, len, &m->manifest, err) != 0)
        goto out;
    bool want_config = !opts->skip_config || opts->catalog; /* a catalog needs its configs label */
    if (want_config &&
        oci_blob_fetch_mem(reg, repo, &m->manifest.config, OCI_MAX_CONFIG_SIZE, &config, &clen, err) != 0) {
        olm_error_wrap(err, "image config");
        goto out;
    }
    m->labels_json = want_config ? config_labels(config, clen, err) : strdup("{}");
    if (!m->labels_json) {
        if (!want_config)
            olm_error_set(err, "out of memory");
        goto out;
    }
    if (opts->catalog) {
        json_t *labels = json_loads(m->labels_json, 0, NULL);
        const char *dir = json_string_value(json_object_get(labels, OCI_LABEL_CATALOG_CONFIGS));
        if (dir)
            m->prefix = strdup(dir);
        json_decref(labels);
        if (!dir) {
            olm_error_set(err, "catalog image is missing the required label %s",
                          OCI_LABEL_CATALOG_CONFIGS);
            goto out;
        }
        if (!m->prefix) {
            olm_error_set(err, "out of memory");
            goto out;
        }
    } else if (opts->prefix && !(m->prefix = strdup(opts->prefix))) {
        olm_error_set(err, "out of memory");
        goto out;
    }
    rc = 0;
out:
    free(body);
    free(ct);
    free(config);
    return rc;
}

/* ---------------------------------------------------------------- layers */

static int unpack_layers(oci_registry *reg, const oci_ref *ref, const oci_image_meta *m,
                         const char *root, const oci_pull_opts *opts,
                         olm_error *err)
{
    oci_unpacker *u = oci_unpacker_new(root, m->prefix, opts->strip_prefix, &opts->limits, err);
    if (!u)
        return -1;
    oci_unpacker_observe(u, opts->on_file, opts->on_file_ctx);
    uint64_t max = opts->limits.max_bytes ? opts->limits.max_bytes : OCI_UNPACK_DEFAULT_MAX_BYTES;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->manifest.nlayers; i++) {
        const oci_descriptor *d = &m->manifest.layers[i];
        char label[48];
        snprintf(label, sizeof label, "layer %.19s", d->digest); /* "sha256:" + 12 hex */
        oci_registry_progress(reg, "pulling layer %zu/%zu %s (%llu bytes)", i + 1,
                              m->manifest.nlayers, d->digest, (unsigned long long)d->size);
        if (oci_layer_fetch_apply(reg, ref->repository, d, max, u, label, err) != 0) {
            olm_error_wrap(err, "layer %zu", i + 1);
            rc = -1;
        }
    }
    if (rc == 0 && oci_unpacker_skipped(u))
        oci_registry_progress(reg, "skipped %llu device, fifo or socket entries",
                              (unsigned long long)oci_unpacker_skipped(u));
    oci_unpacker_free(u);
    return rc;
}

/* dirname/basename without touching the argument.  Caller frees both. */
static int split_path(const char *path, char **dir, char **base, olm_error *err)
{
    char *a = strdup(path), *b = strdup(path);
    *dir = a ? strdup(dirname(a)) : NULL;
    *base = b ? strdup(basename(b)) : NULL;
    free(a);
    free(b);
    if (!*dir || !*base) {
        free(*dir);
        free(*base);
        *dir = *base = NULL;
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

void oci_remove_path(const char *path)
{
    char *dir = NULL, *base = NULL;
    olm_error ignored;
    if (split_path(path, &dir, &base, &ignored) != 0)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        oci_remove_tree_at(fd, base, &ignored); /* best effort: cleaning up after a failure */
        close(fd);
    }
    free(dir);
    free(base);
}

/* Pulls into `dest` through a temp dir beside it; fills m. */
int oci_pull_to(oci_registry *reg, const oci_ref *ref, const char *digest, const char *dest,
                   const oci_pull_opts *opts, oci_image_meta *m, olm_error *err)
{
    char *dir = NULL, *base = NULL, *tmpdir = NULL, *root = NULL;
    int rc = -1;
    if (fetch_meta(reg, ref, digest, opts, m, err) != 0)
        return -1;
    if (split_path(dest, &dir, &base, err) != 0)
        return -1;
    if (asprintf(&tmpdir, "%s/.%s.pull-XXXXXX", dir, base) < 0) {
        tmpdir = NULL;
        olm_error_set(err, "out of memory");
        goto out;
    }
    if (!mkdtemp(tmpdir)) {
        olm_error_set(err, "creating a temp dir beside %s: %s", dest, strerror(errno));
        free(tmpdir);
        tmpdir = NULL;
        goto out;
    }
    if (asprintf(&root, "%s/rootfs", tmpdir) < 0) {
        root = NULL;
        olm_error_set(err, "out of memory");
        goto out;
    }
    if (mkdir(root, 0755) != 0) {
        olm_error_set(err, "creating %s: %s", root, strerror(errno));
        goto out;
    }
    if (unpack_layers(reg, ref, m, root, opts, err) != 0)
        goto out;
    if (opts->catalog) {
        /* the label must name a directory that the image has */
        const char *why = NULL;
        char norm[OCI_UNPACK_PATH_BUFSZ];
        struct stat st;
        char *fbc = NULL;
        if (oci_prefix_normalize(m->prefix, norm, sizeof norm, &why) != 0) {
            olm_error_set(err, "catalog image label %s=\"%s\": %s", OCI_LABEL_CATALOG_CONFIGS,
                          m->prefix, why);
            goto out;
        }
        if (asprintf(&fbc, "%s/%s", root, opts->strip_prefix ? "" : norm) < 0) {
            olm_error_set(err, "out of memory");
            goto out;
        }
        int ok = lstat(fbc, &st) == 0 && S_ISDIR(st.st_mode);
        free(fbc);
        if (!ok) {
            olm_error_set(err, "catalog image has no directory \"%s\" (named by its label %s)",
                          m->prefix, OCI_LABEL_CATALOG_CONFIGS);
            goto out;
        }
    }
    /* rename(2) replaces an empty directory atomically and refuses a full one */
    if (rename(root, dest) != 0) {
        if (errno == ENOTEMPTY || errno == EEXIST)
            olm_error_set(err, "destination %s exists and is not empty", dest);
        else
            olm_error_set(err, "moving the unpacked image to %s: %s", dest, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (tmpdir)
        oci_remove_path(tmpdir);
    free(root);
    free(tmpdir);
    free(dir);
    free(base);
    return rc;
}

/* Fills result from what was pulled (or read back from the cache). */
int oci_pull_fill_result(const oci_ref *ref, const char *digest, const char *dest,
                       const char *labels_json, const char *prefix, const oci_pull_opts *opts,
                       oci_pull_result *r, olm_error *err)
{
    r->digest_ref = oci_ref_with_digest(ref, digest);
    r->labels_json = strdup(labels_json);
    r->dir = strdup(dest);
    if (!r->digest_ref || !r->labels_json || !r->dir)
        goto oom;
    if (opts->catalog) {
        char norm[OCI_UNPACK_PATH_BUFSZ];
        const char *why;
        if (oci_prefix_normalize(prefix, norm, sizeof norm, &why) != 0)
            return olm_error_set(err, "catalog label \"%s\": %s", prefix ? prefix : "", why);
        if (asprintf(&r->fbc_root, "%s%s%s", dest, norm[0] && !opts->strip_prefix ? "/" : "",
                     opts->strip_prefix ? "" : norm) < 0) {
            r->fbc_root = NULL;
            goto oom;
        }
    }
    return 0;
oom:
    return olm_error_set(err, "out of memory");
}

const oci_pull_opts *oci_pull_opts_or_default(const oci_pull_opts *opts)
{
    static const oci_pull_opts defaults; /* zero: all defaults */
    return opts ? opts : &defaults;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int oci_pull_each_source(const oci_ref *ref, const oci_pull_opts *opts, oci_source_fn fn, void *ctx, olm_error *err)
{
    oci_pull_sources src;
    int src_rc = opts->registry.registries_follow
                     ? oci_registries_follow_sources(opts->registry.registries_follow, ref, &src, err)
                     : oci_registries_conf_sources(opts->registry.registries, ref, &src, err);
    if (src_rc != 0)
        return -1;
    double start = mono_now();
    long deadline = opts->registry.deadline_seconds;
    char failures[OLM_ERROR_MAX] = "";
    size_t used = 0;
    int rc = -1;
    olm_error one;
    for (size_t i = 0; i < src.n && rc != 0; i++) {
        oci_registry_opts ro = opts->registry;
        ro.insecure = ro.insecure || src.v[i].insecure;
        if (deadline > 0) {
            long left = deadline - (long)(mono_now() - start);
            if (left <= 0) {
                olm_error_set(&one, "the pull did not finish within %ld s (its deadline; --pull-timeout)", deadline);
                break;
            }
            ro.deadline_seconds = left;
        }
        oci_ref sref;
        oci_registry *reg = NULL;
        if (oci_ref_parse(src.v[i].ref, &sref, &one) == 0) {
            if ((reg = oci_registry_new(sref.registry, &ro, &one)) != NULL)
                rc = fn(reg, &sref, src.v[i].mirror, ctx, &one);
            oci_registry_free(reg);
            oci_ref_free(&sref);
        }
        if (rc != 0 && src.n > 1 && used < sizeof failures)
            used += (size_t)snprintf(failures + used, sizeof failures - used, "%s%s %s: %s", used ? "; " : "",
                                     src.v[i].mirror ? "mirror" : "primary", src.v[i].ref, one.msg);
    }
    if (rc != 0) {
        if (src.n > 1)
            olm_error_set(err, "no source could be pulled from (registries.conf): %s", failures);
        else
            *err = one;
    }
    oci_pull_sources_free(&src);
    return rc;
}

struct direct_pull {
    const oci_ref *ref;
    const char *dest;
    const oci_pull_opts *opts;
    oci_image_meta m;
};

static int pull_direct(oci_registry *reg, const oci_ref *src, bool mirror, void *ctx, olm_error *err)
{
    struct direct_pull *d = ctx;
    oci_image_meta_free(&d->m);
    if (mirror)
        oci_registry_progress(reg, "trying the mirror %s for %s", oci_registry_host(reg), d->ref->registry);
    return oci_pull_to(reg, src, NULL, d->dest, d->opts, &d->m, err);
}

int oci_pull(const char *s, const char *dest, const oci_pull_opts *opts, oci_pull_result *result,
             olm_error *err)
{
    memset(result, 0, sizeof *result);
    opts = oci_pull_opts_or_default(opts);
    oci_ref ref;
    if (oci_ref_parse(s, &ref, err) != 0)
        return -1;
    struct direct_pull d = {.ref = &ref, .dest = dest, .opts = opts};
    int rc = -1;
    if (oci_pull_each_source(&ref, opts, pull_direct, &d, err) == 0)
        rc = oci_pull_fill_result(&ref, d.m.top_digest, dest, d.m.labels_json, d.m.prefix, opts, result, err);
    if (rc != 0)
        oci_pull_result_free(result);
    oci_image_meta_free(&d.m);
    oci_ref_free(&ref);
    return rc;
}

/* Pull-side requests: resolve tags to digests, fetch manifests and blobs.
 *
 * Every body goes through a verifying sink: it is hashed while it streams and
 * bounded in size, and nothing is handed on before its sha256 matches the
 * digest that names it.  The Docker-Content-Digest header is compared with the
 * body when both exist; on its own it is only used to resolve a tag, and the
 * manifest fetched by that digest is then checked against it. */
#include "oci_internal.h"
#include "oci_fetch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- verifying sink */

int oci_verify_sink_init(oci_verify_sink *s, FILE *file, uint64_t limit, olm_error *err)
{
    memset(s, 0, sizeof *s);
    s->file = file;
    s->limit = limit;
    if (!(s->hash = oci_sha256_new()))
        return olm_error_set(err, "out of memory");
    return 0;
}

size_t oci_verify_sink_write(const void *data, size_t len, void *ctx)
{
    oci_verify_sink *s = ctx;
    if (len > s->limit - s->received) {
        s->over_limit = 1;
        return 0;
    }
    if (oci_sha256_update(s->hash, data, len) != 0) {
        s->write_failed = 1;
        return 0;
    }
    if (s->file) {
        if (fwrite(data, 1, len, s->file) != len) {
            s->write_failed = errno ? errno : EIO;
            return 0;
        }
    } else {
        size_t need = (size_t)s->received + len + 1;
        if (need > s->cap) {
            size_t cap = s->cap ? s->cap : 16384;
            while (cap < need)
                cap *= 2;
            char *b = realloc(s->buf, cap);
            if (!b) {
                s->write_failed = ENOMEM;
                return 0;
            }
            s->buf = b;
            s->cap = cap;
        }
        memcpy(s->buf + s->received, data, len);
        s->buf[s->received + len] = '\0';
    }
    s->received += len;
    return len;
}

int oci_verify_sink_finish(oci_verify_sink *s, const char *what, const char *expected_digest,
                           uint64_t expected_size, char digest_out[OCI_DIGEST_BUFSZ],
                           olm_error *err)
{
    if (s->over_limit)
        return olm_error_set(err, "%s: the registry sent more than %llu bytes%s", what,
                             (unsigned long long)s->limit,
                             expected_size != UINT64_MAX && s->limit == expected_size
                                 ? " (the size its descriptor declares)"
                                 : " (the limit)");
    if (s->write_failed)
        return olm_error_set(err, "%s: storing the download failed: %s", what,
                             strerror(s->write_failed > 1 ? s->write_failed : EIO));
    if (s->file && fflush(s->file) != 0)
        return olm_error_set(err, "%s: storing the download failed: %s", what, strerror(errno));
    if (oci_sha256_final(s->hash, digest_out) != 0)
        return olm_error_set(err, "%s: computing the digest failed", what);
    if (expected_size != UINT64_MAX && s->received != expected_size)
        return olm_error_set(err, "%s: size mismatch: received %llu bytes, the descriptor says %llu",
                             what, (unsigned long long)s->received,
                             (unsigned long long)expected_size);
    if (expected_digest && strcmp(digest_out, expected_digest) != 0)
        return olm_error_set(err, "%s: digest mismatch: the content has digest %s, expected %s",
                             what, digest_out, expected_digest);
    return 0;
}

void oci_verify_sink_free(oci_verify_sink *s)
{
    oci_sha256_free(s->hash);
    free(s->buf);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- errors */

static int status_error(oci_registry *reg, const char *what, const char *repository,
                        const oci_response *resp, olm_error *err)
{
    char msg[1024];
    oci_format_registry_error(resp->status, resp->body, resp->body_len, msg, sizeof msg);
    const char *hint = "";
    if (resp->status == 401 || resp->status == 403)
        hint = " (check the credentials given with --authfile or REGISTRY_AUTH_FILE)";
    return olm_error_set(err, "%s from %s/%s: %s%s", what, oci_registry_host(reg), repository,
                         msg, hint);
}

static int is_digest(const char *reference) { return strncmp(reference, "sha256:", 7) == 0; }

/* ---------------------------------------------------------------- manifests */

int oci_manifest_fetch(oci_registry *reg, const char *repository, const char *reference,
                       char **body, size_t *len, char **content_type,
                       char digest_out[OCI_DIGEST_BUFSZ], olm_error *err)
{
    static const char *const accept[] = {OCI_MANIFEST_ACCEPT, NULL};
    *body = NULL;
    *len = 0;
    *content_type = NULL;
    char *path = NULL, what[300];
    snprintf(what, sizeof what, "manifest %s", reference);
    if (asprintf(&path, "/v2/%s/manifests/%s", repository, reference) < 0)
        return olm_error_set(err, "out of memory");
    oci_verify_sink sink;
    if (oci_verify_sink_init(&sink, NULL, OCI_MAX_MANIFEST_SIZE, err) != 0) {
        free(path);
        return -1;
    }
    oci_request req = {.method = "GET", .url_or_path = path, .repository = repository,
                       .actions = "pull", .headers = accept,
                       .sink = oci_verify_sink_write, .sink_ctx = &sink};
    oci_response resp;
    int rc = oci_registry_do(reg, &req, &resp, err);
    free(path);
    if (rc != 0) {
        /* a transfer aborted by the sink: say why rather than "write error" */
        if (sink.over_limit)
            olm_error_set(err, "%s from %s/%s: larger than %zu bytes", what,
                          oci_registry_host(reg), repository, OCI_MAX_MANIFEST_SIZE);
        oci_verify_sink_free(&sink);
        return -1;
    }
    if (resp.status != 200) {
        status_error(reg, "fetching the manifest", repository, &resp, err);
        olm_error_wrap(err, "%s", what);
        goto fail;
    }
    if (oci_verify_sink_finish(&sink, what, is_digest(reference) ? reference : NULL, UINT64_MAX,
                               digest_out, err) != 0)
        goto fail;
    if (resp.docker_digest && is_digest(resp.docker_digest) &&
        strcmp(resp.docker_digest, digest_out) != 0) {
        olm_error_set(err, "%s from %s/%s: the registry says its digest is %s but the content's "
                           "digest is %s",
                      what, oci_registry_host(reg), repository, resp.docker_digest, digest_out);
        goto fail;
    }
    if (!sink.buf) { /* an empty body is not a manifest */
        olm_error_set(err, "%s from %s/%s: empty response", what, oci_registry_host(reg),
                      repository);
        goto fail;
    }
    *body = sink.buf;
    *len = (size_t)sink.received;
    sink.buf = NULL;
    *content_type = resp.content_type;
    resp.content_type = NULL;
    oci_response_free(&resp);
    oci_verify_sink_free(&sink);
    return 0;
fail:
    oci_response_free(&resp);
    oci_verify_sink_free(&sink);
    return -1;
}

int oci_resolve_digest(oci_registry *reg, const oci_ref *ref, char digest[OCI_DIGEST_BUFSZ],
                       olm_error *err)
{
    if (ref->digest) {
        if (oci_digest_validate(ref->digest, err) != 0)
            return -1;
        snprintf(digest, OCI_DIGEST_BUFSZ, "%s", ref->digest);
        return 0;
    }
    static const char *const accept[] = {OCI_MANIFEST_ACCEPT, NULL};
    char *path = NULL;
    if (asprintf(&path, "/v2/%s/manifests/%s", ref->repository, ref->tag) < 0)
        return olm_error_set(err, "out of memory");
    oci_request req = {.method = "HEAD", .url_or_path = path, .repository = ref->repository,
                       .actions = "pull", .headers = accept};
    oci_response resp;
    int rc = oci_registry_do(reg, &req, &resp, err);
    free(path);
    if (rc != 0)
        return olm_error_wrap(err, "resolving %s/%s:%s", ref->registry, ref->repository, ref->tag);
    olm_error tmp;
    if (resp.status == 200 && resp.docker_digest &&
        oci_digest_validate(resp.docker_digest, &tmp) == 0) {
        snprintf(digest, OCI_DIGEST_BUFSZ, "%s", resp.docker_digest);
        oci_response_free(&resp);
        return 0;
    }
    if (resp.status == 404 || resp.status == 401 || resp.status == 403) {
        /* a HEAD has no error body: say what we know */
        status_error(reg, "manifest", ref->repository, &resp, err);
        oci_response_free(&resp);
        return olm_error_wrap(err, "resolving tag %s", ref->tag);
    }
    oci_response_free(&resp);
    /* no usable header (or HEAD refused): the digest of the body itself */
    char *body = NULL, *ct = NULL;
    size_t len = 0;
    if (oci_manifest_fetch(reg, ref->repository, ref->tag, &body, &len, &ct, digest, err) != 0)
        return olm_error_wrap(err, "resolving %s/%s:%s", ref->registry, ref->repository, ref->tag);
    free(body);
    free(ct);
    return 0;
}

char *oci_resolve(const char *s, const oci_registry_opts *opts, olm_error *err)
{
    oci_ref ref;
    if (oci_ref_parse(s, &ref, err) != 0)
        return NULL;
    char *out = NULL;
    char digest[OCI_DIGEST_BUFSZ];
    oci_registry *reg = oci_registry_new(ref.registry, opts, err);
    if (reg && oci_resolve_digest(reg, &ref, digest, err) == 0 &&
        !(out = oci_ref_with_digest(&ref, digest)))
        olm_error_set(err, "out of memory");
    oci_registry_free(reg);
    oci_ref_free(&ref);
    return out;
}

/* ---------------------------------------------------------------- blobs */

static int blob_fetch(oci_registry *reg, const char *repository, const oci_descriptor *desc,
                      uint64_t max_size, oci_verify_sink *sink, olm_error *err)
{
    char what[OCI_DIGEST_BUFSZ + 8];
    snprintf(what, sizeof what, "blob %s", desc->digest);
    if (oci_digest_validate(desc->digest, err) != 0)
        return -1;
    if (desc->size > max_size)
        return olm_error_set(err, "%s: its size %llu exceeds the limit of %llu bytes", what,
                             (unsigned long long)desc->size, (unsigned long long)max_size);
    sink->limit = desc->size; /* never accept more than declared */
    char *path = NULL;
    if (asprintf(&path, "/v2/%s/blobs/%s", repository, desc->digest) < 0)
        return olm_error_set(err, "out of memory");
    oci_request req = {.method = "GET", .url_or_path = path, .repository = repository,
                       .actions = "pull", .sink = oci_verify_sink_write, .sink_ctx = sink};
    oci_response resp;
    int rc = oci_registry_do(reg, &req, &resp, err);
    free(path);
    if (rc != 0) {
        if (sink->over_limit || sink->write_failed) {
            char digest[OCI_DIGEST_BUFSZ];
            oci_verify_sink_finish(sink, what, desc->digest, desc->size, digest, err);
        }
        return olm_error_wrap(err, "fetching from %s/%s", oci_registry_host(reg), repository);
    }
    if (resp.status != 200) {
        status_error(reg, "fetching the blob", repository, &resp, err);
        oci_response_free(&resp);
        return olm_error_wrap(err, "%s", what);
    }
    oci_response_free(&resp);
    char digest[OCI_DIGEST_BUFSZ];
    if (oci_verify_sink_finish(sink, what, desc->digest, desc->size, digest, err) != 0)
        return olm_error_wrap(err, "from %s/%s", oci_registry_host(reg), repository);
    return 0;
}

int oci_blob_fetch_file(oci_registry *reg, const char *repository, const oci_descriptor *desc,
                        uint64_t max_size, FILE *out, olm_error *err)
{
    oci_verify_sink sink;
    if (oci_verify_sink_init(&sink, out, desc->size, err) != 0)
        return -1;
    int rc = blob_fetch(reg, repository, desc, max_size, &sink, err);
    oci_verify_sink_free(&sink);
    return rc;
}

int oci_blob_fetch_mem(oci_registry *reg, const char *repository, const oci_descriptor *desc,
                       size_t max_size, char **data, size_t *len, olm_error *err)
{
    *data = NULL;
    *len = 0;
    oci_verify_sink sink;
    if (oci_verify_sink_init(&sink, NULL, desc->size, err) != 0)
        return -1;
    int rc = blob_fetch(reg, repository, desc, max_size, &sink, err);
    if (rc == 0) {
        *data = sink.buf ? sink.buf : strdup("");
        *len = (size_t)sink.received;
        sink.buf = NULL;
        if (!*data)
            rc = olm_error_set(err, "out of memory");
    }
    oci_verify_sink_free(&sink);
    return rc;
}

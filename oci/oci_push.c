/* Pushing blobs and manifests (distribution spec "push" workflow).
 *
 * A blob is skipped when HEAD finds it.  Otherwise an upload session is opened
 * with POST and either completed by one PUT ?digest= carrying the whole blob,
 * or, above the chunk size, fed with PATCH requests (Content-Range "start-end",
 * following the Location each response returns) and closed by an empty PUT. */
#include "oci_internal.h"
#include "oci_media.h"
#include "oci_registry.h"

#include <stdlib.h>
#include <string.h>

#define PUSH_ACTIONS "pull,push"

/* Fills err with "<what> <digest> to <host>/<repo>: <status> <registry error>". */
static int registry_error(oci_registry *reg, const char *what, const char *digest,
                          const char *repository, const oci_response *resp, olm_error *err)
{
    char msg[1024];
    oci_format_registry_error(resp->status, resp->body, resp->body_len, msg, sizeof msg);
    const char *hint = "";
    if (resp->status == 401 || resp->status == 403)
        hint = " (check the credentials given with --authfile or REGISTRY_AUTH_FILE)";
    return olm_error_set(err, "%s %s to %s/%s: %s%s", what, digest, oci_registry_host(reg),
                         repository, msg, hint);
}

int oci_blob_exists(oci_registry *reg, const char *repository, const char *digest,
                    olm_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "/v2/%s/blobs/%s", repository, digest) < 0)
        return olm_error_set(err, "out of memory");
    oci_request req = {.method = "HEAD", .url_or_path = path, .repository = repository,
                       .actions = PUSH_ACTIONS};
    oci_response resp;
    int rc = oci_registry_do(reg, &req, &resp, err);
    free(path);
    if (rc != 0)
        return -1;
    if (resp.status == 200)
        rc = 1;
    else if (resp.status == 404)
        rc = 0;
    else
        rc = registry_error(reg, "check blob", digest, repository, &resp, err);
    oci_response_free(&resp);
    return rc;
}

/* "<location>[?|&]digest=sha256%3A<hex>": the URL that completes an upload. */
static char *with_digest(const char *location, const char *digest)
{
    char *u = NULL;
    const char *colon = strchr(digest, ':');
    if (!colon)
        return NULL;
    if (asprintf(&u, "%s%cdigest=%.*s%%3A%s", location, strchr(location, '?') ? '&' : '?',
                 (int)(colon - digest), digest, colon + 1) < 0)
        return NULL;
    return u;
}

/* Takes the Location of an upload response as the next URL.  *url is replaced. */
static int next_location(oci_registry *reg, const char *repository, const char *digest,
                         oci_response *resp, char **url, olm_error *err)
{
    if (!resp->location || !*resp->location)
        return olm_error_set(err, "push %s to %s/%s: the registry's %ld response has no Location header",
                             digest, oci_registry_host(reg), repository, resp->status);
    free(*url);
    *url = resp->location;
    resp->location = NULL;
    return 0;
}

static int upload(oci_registry *reg, const char *repository, const oci_blob *blob, olm_error *err)
{
    static const char *const octets[] = {"Content-Type: application/octet-stream", NULL};
    char *path = NULL, *url = NULL, *final = NULL;
    oci_response resp = {0};
    int rc = -1;
    if (asprintf(&path, "/v2/%s/blobs/uploads/", repository) < 0) {
        path = NULL;
        olm_error_set(err, "out of memory");
        goto out;
    }
    oci_request post = {.method = "POST", .url_or_path = path, .repository = repository,
                        .actions = PUSH_ACTIONS};
    if (oci_registry_do(reg, &post, &resp, err) != 0)
        goto out;
    if (resp.status != 202) {
        registry_error(reg, "push", blob->digest, repository, &resp, err);
        goto out;
    }
    if (next_location(reg, repository, blob->digest, &resp, &url, err) != 0)
        goto out;
    oci_response_free(&resp);

    uint64_t chunk = oci_registry_chunk_size(reg);
    uint64_t put_offset = 0, put_len = blob->size;
    if (blob->size > chunk) {
        for (uint64_t off = 0; off < blob->size; off += chunk) {
            uint64_t len = blob->size - off < chunk ? blob->size - off : chunk;
            char range[80];
            snprintf(range, sizeof range, "Content-Range: %llu-%llu", (unsigned long long)off,
                     (unsigned long long)(off + len - 1));
            const char *hdrs[] = {octets[0], range, NULL};
            oci_request patch = {.method = "PATCH", .url_or_path = url, .repository = repository,
                                 .actions = PUSH_ACTIONS, .headers = hdrs, .body = blob,
                                 .body_offset = off, .body_len = len};
            if (oci_registry_do(reg, &patch, &resp, err) != 0)
                goto out;
            if (resp.status != 202) {
                registry_error(reg, "push (chunk) of", blob->digest, repository, &resp, err);
                goto out;
            }
            if (next_location(reg, repository, blob->digest, &resp, &url, err) != 0)
                goto out;
            oci_response_free(&resp);
        }
        put_offset = put_len = 0; /* everything went up in chunks: the PUT only closes */
    }
    if (!(final = with_digest(url, blob->digest))) {
        olm_error_set(err, "out of memory");
        goto out;
    }
    oci_request put = {.method = "PUT", .url_or_path = final, .repository = repository,
                       .actions = PUSH_ACTIONS, .headers = octets, .body = blob,
                       .body_offset = put_offset, .body_len = put_len};
    if (oci_registry_do(reg, &put, &resp, err) != 0)
        goto out;
    if (resp.status != 201 && resp.status != 204) {
        registry_error(reg, "push", blob->digest, repository, &resp, err);
        goto out;
    }
    rc = 0;
out:
    oci_response_free(&resp);
    free(path);
    free(url);
    free(final);
    return rc;
}

int oci_blob_push(oci_registry *reg, const char *repository, const oci_blob *blob, olm_error *err)
{
    int exists = oci_blob_exists(reg, repository, blob->digest, err);
    if (exists < 0)
        return -1;
    if (exists) {
        oci_registry_progress(reg, "blob %s already exists", blob->digest);
        return 0;
    }
    if (upload(reg, repository, blob, err) != 0)
        return -1;
    oci_registry_progress(reg, "pushed blob %s (%llu bytes)", blob->digest,
                          (unsigned long long)blob->size);
    return 0;
}

int oci_manifest_push(oci_registry *reg, const char *repository, const char *reference,
                      const char *media_type, const char *manifest, size_t len,
                      const char *expected_digest, olm_error *err)
{
    char *path = NULL, *ctype = NULL;
    if (asprintf(&path, "/v2/%s/manifests/%s", repository, reference) < 0)
        return olm_error_set(err, "out of memory");
    if (asprintf(&ctype, "Content-Type: %s", media_type) < 0) {
        free(path);
        return olm_error_set(err, "out of memory");
    }
    const char *hdrs[] = {ctype, NULL};
    oci_blob body = {.media_type = media_type, .size = len,
                     .data = (const unsigned char *)manifest};
    oci_request put = {.method = "PUT", .url_or_path = path, .repository = repository,
                       .actions = PUSH_ACTIONS, .headers = hdrs, .body = &body, .body_len = len};
    oci_response resp;
    int rc = oci_registry_do(reg, &put, &resp, err);
    free(path);
    free(ctype);
    if (rc != 0)
        return -1;
    if (resp.status != 201 && resp.status != 200) {
        rc = registry_error(reg, "push manifest", expected_digest ? expected_digest : reference,
                            repository, &resp, err);
    } else if (expected_digest && resp.docker_digest &&
               strcmp(resp.docker_digest, expected_digest) != 0) {
        rc = olm_error_set(err, "push manifest to %s/%s: the registry stored it as %s, but it is %s",
                           oci_registry_host(reg), repository, resp.docker_digest, expected_digest);
    }
    oci_response_free(&resp);
    return rc;
}

int oci_image_push(oci_registry *reg, const oci_ref *ref, const oci_image *img, olm_error *err)
{
    if (strcmp(ref->registry, oci_registry_host(reg)) != 0)
        return olm_error_set(err, "internal error: reference %s/%s pushed through a client for %s",
                             ref->registry, ref->repository, oci_registry_host(reg));
    if (ref->digest && strcmp(ref->digest, img->manifest_digest) != 0)
        return olm_error_set(err,
                             "the reference asks for digest %s but the built image is %s; drop "
                             "the @digest or use a tag",
                             ref->digest, img->manifest_digest);
    if (oci_blob_push(reg, ref->repository, &img->layer.blob, err) != 0 ||
        oci_blob_push(reg, ref->repository, &img->config, err) != 0)
        return -1;
    const char *reference = ref->tag ? ref->tag : img->manifest_digest;
    if (oci_manifest_push(reg, ref->repository, reference, OCI_MT_MANIFEST, img->manifest_json,
                          img->manifest_len, img->manifest_digest, err) != 0)
        return -1;
    oci_registry_progress(reg, "pushed manifest %s as %s/%s:%s", img->manifest_digest,
                          ref->registry, ref->repository, reference);
    return 0;
}

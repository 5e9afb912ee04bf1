/* applier_helm: upstream's install record (a Helm release in chunked Secrets, helm_release.h)
 * kept beside ours, so that upstream OLM v1 and this one can take over from each other:
 *   - after every record write of an installed bundle, the deployed release mirrors it
 *     (updated in place, or created as v1, or as the next version after upstream's history);
 *   - with no record of ours, a deployed release is adopted: its bundle and objects become
 *     our record, and nothing on the cluster is touched;
 *   - the uninstall deletes the release Secrets with the record.
 * Only the controller's own identity (ctx->admin) reads and writes them, as our record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "applier_internal.h"
#include "helm_release.h"
#include "olm_base64.h"
#include "olm_log.h"

/* The label selector of this extension's index Secrets. */
static const char *index_selector(const applier_ctx *ctx, char buf[400])
{
    snprintf(buf, 400, "owner=%s,type=index,name=%s", HELM_OWNER, ctx->extension);
    return buf;
}

/* The index Secrets of this extension's releases (a List object), or NULL with err. */
static json_t *list_indexes(const applier_ctx *ctx, olm_error *err)
{
    char selector[400];
    index_selector(ctx, selector);
    kube_list_options lo = {.label_selector = selector};
    json_t *list = NULL;
    if (kube_list(ctx->admin, "v1", "Secret", ctx->system_namespace, &lo, &list, err) < 0) {
        olm_error_wrap(err, "listing the Helm release Secrets of '%s'", ctx->extension);
        return NULL;
    }
    return list;
}

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

static const char *label_of(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), key));
}

/* The deployed release with the highest version (borrowed from `list`), or NULL; *max_version
 * is the highest version of any release. */
static const json_t *deployed_index(const json_t *list, int *max_version)
{
    const json_t *best = NULL;
    int best_v = 0;
    *max_version = 0;
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(list, "items"), i, s) {
        if (strcmp(str_or_empty(json_string_value(json_object_get(s, "type"))), HELM_INDEX_TYPE) != 0)
            continue;
        const char *vs = label_of(s, "version"), *status = label_of(s, "status");
        int v = vs ? atoi(vs) : 0;
        if (v > *max_version)
            *max_version = v;
        if (status && strcmp(status, "deployed") == 0 && v > best_v) {
            best = s;
            best_v = v;
        }
    }
    return best;
}

/* Decodes a release, fetching its extra chunks. */
static int decode_index(const applier_ctx *ctx, const json_t *index, helm_release *out, olm_error *err)
{
    json_t *names = helm_release_extra_chunk_names(index, err);
    if (!names)
        return -1;
    size_t n = json_array_size(names);
    char **data = calloc(n ? n : 1, sizeof *data);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    int rc = data && lens ? 0 : olm_error_set(err, "out of memory");
    if (n > HELM_MAX_CHUNKS)
        rc = olm_error_set(err, "release too large: %zu chunks, which exceeds the maximum of %d", n + 1,
                           HELM_MAX_CHUNKS);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *cname = json_string_value(json_array_get(names, i));
        json_t *c = NULL;
        if (kube_get(ctx->admin, "v1", "Secret", ctx->system_namespace, cname, &c, err) < 0) {
            rc = olm_error_wrap(err, "reading chunk %zu of the Helm release, Secret '%s'", i + 2, cname);
            break;
        }
        const json_t *v = json_object_get(json_object_get(c, "data"), "chunk");
        data[i] = json_is_string(v) ? olm_base64_decode(json_string_value(v), json_string_length(v), 0, &lens[i], err)
                                    : NULL;
        json_decref(c);
        if (!data[i])
            rc = json_is_string(v) ? -1 : olm_error_set(err, "chunk Secret '%s' has no data \"chunk\"", cname);
    }
    if (rc == 0)
        rc = helm_release_decode(index, (const char *const *)data, lens, n, out, err);
    for (size_t i = 0; data && i < n; i++)
        free(data[i]);
    free(data);
    free(lens);
    json_decref(names);
    return rc;
}

/* Deletes every Secret of the system namespace that `selector` selects. */
static int delete_selected(const applier_ctx *ctx, const char *selector, olm_error *err)
{
    kube_list_options lo = {.label_selector = selector};
    json_t *list = NULL;
    if (kube_list(ctx->admin, "v1", "Secret", ctx->system_namespace, &lo, &list, err) < 0)
        return -1;
    size_t i;
    json_t *s;
    int rc = 0;
    json_array_foreach(json_object_get(list, "items"), i, s) {
        const char *name = json_string_value(json_object_get(json_object_get(s, "metadata"), "name"));
        int d = name ? kube_delete(ctx->admin, "v1", "Secret", ctx->system_namespace, name, NULL, err) : 0;
        if (d < 0 && d != KUBE_NOT_FOUND)
            rc = -1;
    }
    json_decref(list);
    return rc;
}

/* Deletes the chunk Secrets of the index `key` (they are owned by it, but an update replaces
 * them while the index stays). */
static int delete_chunks(const applier_ctx *ctx, const char *key, olm_error *err)
{
    char selector[400];
    snprintf(selector, sizeof selector, "owner=%s,type=chunk,key=%s", HELM_OWNER, key);
    return delete_selected(ctx, selector, err);
}

/* Creates the chunk Secrets, each owned by the index (its uid from `index`). */
static int create_chunks(const applier_ctx *ctx, const json_t *index, json_t *chunks, olm_error *err)
{
    const json_t *md = json_object_get(index, "metadata");
    size_t i;
    json_t *c;
    json_array_foreach(chunks, i, c) {
        json_t *ref = json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "v1", "kind", "Secret", "name",
                                str_or_empty(json_string_value(json_object_get(md, "name"))), "uid",
                                str_or_empty(json_string_value(json_object_get(md, "uid"))), "controller", 1,
                                "blockOwnerDeletion", 0);
        if (!ref || json_object_set_new(json_object_get(c, "metadata"), "ownerReferences", ref) < 0)
            return olm_error_set(err, "out of memory");
        int rc = kube_create(ctx->admin, c, NULL, err);
        if (rc < 0 && rc != KUBE_ALREADY_EXISTS) /* the same data has the same name */
            return -1;
    }
    return 0;
}

static void set_time_label(json_t *secret, const char *key, const char *value)
{
    char now[32];
    if (!value) {
        snprintf(now, sizeof now, "%lld", (long long)time(NULL));
        value = now;
    }
    json_object_set_new(json_object_get(json_object_get(secret, "metadata"), "labels"), key, json_string(value));
}

int applier_write_helm_release(const applier_ctx *ctx, const install_record *rec, const json_t *objects,
                               olm_error *err)
{
    if (rec->pending)
        return 0; /* upstream records no release for an install that failed */
    /* The driver labels the index with its own name (label "key"), which Kubernetes limits to
     * 63 characters: upstream cannot record an extension whose name is longer than 41 (it fails
     * to install it), so there is nothing it could read here either. */
    char *probe = helm_release_secret_name(ctx->extension, 1);
    bool too_long = probe && strlen(probe) > 63;
    free(probe);
    if (too_long)
        return 0;
    /* A read in this reconcile found no release at all: nothing to list. */
    bool none = ctx->no_helm_release && *ctx->no_helm_release;
    json_t *list = none ? json_pack("{s:[]}", "items") : list_indexes(ctx, err);
    if (!list)
        return none ? olm_error_set(err, "out of memory") : -1;
    int max_version = 0, rc = -1;
    const json_t *cur = deployed_index(list, &max_version);
    helm_release old = {0};
    /* In place over the deployed release (keeping its version and first deployment), else the
     * next version after whatever history there is. */
    if (cur && decode_index(ctx, cur, &old, err) < 0)
        olm_error_clear(err); /* unreadable: write ours over it, keeping its name */
    int version = cur ? atoi(label_of(cur, "version")) : max_version + 1;
    helm_release_in in = {.rec = rec, .objects = objects, .release_namespace = ctx->release_namespace,
                          .version = version > 0 ? version : 1,
                          .first_deployed = old.first_deployed && *old.first_deployed ? old.first_deployed : NULL,
                          .owner_uid = ctx->owner_uid};
    json_t *chunks = NULL, *want = helm_release_secrets(&in, ctx->system_namespace, &chunks, err), *written = NULL;
    if (!want)
        goto done;
    if (cur) {
        const json_t *md = json_object_get(cur, "metadata");
        json_t *wmd = json_object_get(want, "metadata");
        json_object_set(wmd, "resourceVersion", json_object_get(md, "resourceVersion"));
        set_time_label(want, "createdAt", label_of(cur, "createdAt"));
        set_time_label(want, "modifiedAt", NULL);
        const char *key = json_string_value(json_object_get(md, "name"));
        if (delete_chunks(ctx, key, err) < 0 || kube_update(ctx->admin, want, &written, err) < 0)
            goto done;
    } else {
        set_time_label(want, "createdAt", NULL);
        int crc = kube_create(ctx->admin, want, &written, err);
        if (crc == KUBE_ALREADY_EXISTS && none) {
            /* "None" was not read but assumed (applier_ctx.never_installed): one is there,
             * so go by what a LIST finds after all. */
            json_decref(want);
            json_decref(chunks);
            json_decref(list);
            *ctx->no_helm_release = false;
            return applier_write_helm_release(ctx, rec, objects, err);
        }
        if (crc < 0)
            goto done;
    }
    rc = create_chunks(ctx, written, chunks, err);
    if (ctx->no_helm_release)
        *ctx->no_helm_release = false; /* there is one now */
done:
    if (rc < 0)
        olm_error_wrap(err, "writing the Helm release of '%s' (what upstream OLM v1 reads)", ctx->extension);
    helm_release_free(&old);
    json_decref(written);
    json_decref(want);
    json_decref(chunks);
    json_decref(list);
    return rc;
}

int applier_read_helm_release(const applier_ctx *ctx, install_record *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (ctx->never_installed) { /* nothing to adopt (applier.h) */
        if (ctx->no_helm_release)
            *ctx->no_helm_release = true;
        return 0;
    }
    json_t *list = list_indexes(ctx, err);
    if (!list)
        return -1;
    if (ctx->no_helm_release)
        *ctx->no_helm_release = json_array_size(json_object_get(list, "items")) == 0;
    int max_version = 0;
    const json_t *idx = deployed_index(list, &max_version);
    if (!idx) {
        json_decref(list);
        return 0;
    }
    helm_release rel;
    const char *key = json_string_value(json_object_get(json_object_get(idx, "metadata"), "name"));
    if (decode_index(ctx, idx, &rel, err) < 0) {
        olm_error_wrap(err, "reading the Helm release Secret '%s' in namespace '%s'", key, ctx->system_namespace);
        json_decref(list);
        return -1;
    }
    if (strcmp(rel.name, ctx->extension) != 0) {
        olm_error_set(err, "Helm release Secret '%s' holds release '%s', not '%s'", key, rel.name, ctx->extension);
        helm_release_free(&rel);
        json_decref(list);
        return -1;
    }
    /* Helm puts a namespaced object without a namespace into the release namespace. */
    for (size_t i = 0; i < rel.rec.nobjects; i++) {
        install_object_ref *o = &rel.rec.objects[i];
        kube_resource_info ri;
        if (*o->namespace_ || kube_resolve_kind(ctx->admin, o->api_version, o->kind, &ri, NULL) < 0 || !ri.namespaced)
            continue;
        char *ns = strdup(rel.namespace_);
        if (ns) {
            free(o->namespace_);
            o->namespace_ = ns;
        }
    }
    olm_log(OLM_LOG_INFO, "clusterExtension", ctx->extension,
            "adopting bundle %s version %s (%zu objects) from the Helm release Secret %s/%s that upstream OLM v1 wrote",
            rel.rec.bundle_name, rel.rec.bundle_version, rel.rec.nobjects, ctx->system_namespace, key);
    *out = rel.rec;
    memset(&rel.rec, 0, sizeof rel.rec);
    helm_release_free(&rel);
    json_decref(list);
    return 1;
}

int applier_delete_helm_releases(const applier_ctx *ctx, olm_error *err)
{
    /* Each index's chunks (found by its key), then the indexes. */
    json_t *list = list_indexes(ctx, err);
    if (!list)
        return -1;
    size_t i;
    json_t *s;
    int rc = 0;
    json_array_foreach(json_object_get(list, "items"), i, s) {
        const char *name = json_string_value(json_object_get(json_object_get(s, "metadata"), "name"));
        if (name && delete_chunks(ctx, name, err) < 0)
            rc = -1;
    }
    json_decref(list);
    char selector[400];
    if (rc == 0 && delete_selected(ctx, index_selector(ctx, selector), err) < 0)
        rc = -1;
    if (rc < 0)
        olm_error_wrap(err, "deleting the Helm release Secrets of '%s' in namespace '%s'", ctx->extension,
                       ctx->system_namespace);
    return rc;
}

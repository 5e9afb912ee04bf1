/* applier_record: the install record Secret on the cluster (install_record.h has the
 * format).  Only the controller's own identity (ctx->admin) reads and writes it: the
 * ServiceAccount of an extension must not be able to forge what gets pruned. */
#include <stdlib.h>
#include <string.h>

#include "applier_internal.h"

#define RECORD_WRITE_ATTEMPTS 5

/* 0 when the system namespace is there, KUBE_NOT_FOUND when it is gone, another negative
 * kube_result when it could not be read; err says which (applier_ctx.system_namespace_seen
 * follows what was found). */
static int system_namespace_state(const applier_ctx *ctx, olm_error *err)
{
    json_t *ns = NULL;
    int rc = kube_get(ctx->admin, "v1", "Namespace", NULL, ctx->system_namespace, &ns, err);
    json_decref(ns);
    if (ctx->system_namespace_seen && (rc == KUBE_OK || rc == KUBE_NOT_FOUND))
        atomic_store(ctx->system_namespace_seen, rc == KUBE_OK);
    if (rc == KUBE_NOT_FOUND)
        olm_error_set(err,
                      "the system namespace '%s' does not exist; operator-controller keeps install records "
                      "there (create it, or start operator-controller with the right system namespace)",
                      ctx->system_namespace);
    else if (rc < 0)
        olm_error_wrap(err, "reading the system namespace '%s'", ctx->system_namespace);
    return rc < 0 ? rc : 0;
}

int applier_check_system_namespace(const applier_ctx *ctx, olm_error *err)
{
    return system_namespace_state(ctx, err) < 0 ? -1 : 0;
}

void applier_record_seen(const applier_ctx *ctx, const json_t *secret)
{
    if (ctx->record_seen)
        ctx->record_seen(ctx->record_seen_data, ctx->extension, secret);
}

static bool json_str_eq(const json_t *a, const json_t *b)
{
    return json_is_string(a) && json_is_string(b) && json_equal(a, b);
}

int applier_write_record(const applier_ctx *ctx, const install_record *rec, bool likely_new, olm_error *err)
{
    return applier_write_record_mirrored(ctx, rec, NULL, true, likely_new, err);
}

int applier_write_record_mirrored(const applier_ctx *ctx, const install_record *rec, const json_t *objects,
                                  bool mirror, bool likely_new, olm_error *err)
{
    bool mirrored = !mirror || rec->pending;
    json_t *want = install_record_to_secret(rec, ctx->system_namespace);
    if (!want)
        return olm_error_set(err, "out of memory");
    const char *name = json_string_value(json_object_get(json_object_get(want, "metadata"), "name"));
    int rc = -1;
    /* Optimistic concurrency: GET, then create or update with the resourceVersion
     * read; a concurrent writer (409) makes us read again. */
    for (int attempt = 0; attempt < RECORD_WRITE_ATTEMPTS; attempt++) {
        json_t *cur = NULL;
        rc = attempt == 0 && likely_new ? KUBE_NOT_FOUND
                                         : kube_get(ctx->admin, "v1", "Secret", ctx->system_namespace, name, &cur, err);
        if (rc == KUBE_NOT_FOUND) {
            if (!mirrored && (rc = applier_write_helm_release(ctx, rec, objects, err)) < 0)
                break;
            mirrored = true;
            json_t *made = NULL;
            rc = kube_create(ctx->admin, want, &made, err);
            if (rc == KUBE_OK)
                applier_record_seen(ctx, made);
            json_decref(made);
            if (rc == KUBE_ALREADY_EXISTS)
                continue;
            break;
        }
        if (rc < 0)
            break;
        const json_t *labels = json_object_get(json_object_get(cur, "metadata"), "labels");
        const char *is_record = json_string_value(json_object_get(labels, INSTALL_RECORD_LABEL));
        if (!is_record || strcmp(is_record, "true") != 0) {
            json_decref(cur);
            rc = olm_error_set(err, "Secret '%s' in namespace '%s' exists but is not an install record (no label %s=true)",
                               name, ctx->system_namespace, INSTALL_RECORD_LABEL);
            break;
        }
        const char *cur_rv = json_string_value(json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
        bool same = json_str_eq(json_object_get(json_object_get(cur, "data"), "record.json"),
                                json_object_get(json_object_get(want, "data"), "record.json")) &&
                    json_equal(labels, json_object_get(json_object_get(want, "metadata"), "labels"));
        if (same) {
            applier_record_seen(ctx, cur);
            json_decref(cur);
            rc = 0;
            break;
        }
        if (!cur_rv || json_object_set_new(json_object_get(want, "metadata"), "resourceVersion", json_string(cur_rv)) < 0) {
            json_decref(cur);
            rc = olm_error_set(err, "Secret '%s' has no resourceVersion", name);
            break;
        }
        json_decref(cur);
        if (!mirrored && (rc = applier_write_helm_release(ctx, rec, objects, err)) < 0)
            break;
        mirrored = true;
        json_t *updated = NULL;
        rc = kube_update(ctx->admin, want, &updated, err);
        if (rc == KUBE_OK)
            applier_record_seen(ctx, updated);
        json_decref(updated);
        json_object_del(json_object_get(want, "metadata"), "resourceVersion");
        if (rc != KUBE_CONFLICT)
            break;
    }
    /* A create into a namespace that is gone answers NotFound (the Helm release's, which
     * comes first, too): say which is missing.  This is also where a namespace seen before
     * (applier_ctx.system_namespace_seen) is found gone. */
    if (rc < 0)
        applier_record_seen(ctx, NULL); /* what is there now is not known */
    olm_error nerr;
    if (rc < 0 && rc != KUBE_CONFLICT && system_namespace_state(ctx, &nerr) == KUBE_NOT_FOUND) {
        if (err)
            *err = nerr;
        json_decref(want);
        return -1;
    }
    if (rc < 0)
        olm_error_wrap(err, "writing the install record Secret '%s' in namespace '%s'", name, ctx->system_namespace);
    json_decref(want);
    return rc < 0 ? -1 : 0;
}

int applier_record_write(const applier_ctx *ctx, const install_record *rec, const json_t *objects, olm_error *err)
{
    return applier_write_record_mirrored(ctx, rec, objects, true, false, err);
}

int applier_record_set_properties(const applier_ctx *ctx, install_record *rec, const char *properties,
                                  olm_error *err)
{
    if (!properties || !*properties)
        properties = "[]";
    if (rec->properties && strcmp(rec->properties, properties) == 0)
        return 0;
    char *copy = strdup(properties), *old = rec->properties;
    if (!copy)
        return olm_error_set(err, "out of memory");
    rec->properties = copy;
    if (applier_write_record_mirrored(ctx, rec, NULL, false, false, err) < 0) {
        rec->properties = old;
        free(copy);
        return -1;
    }
    free(old);
    return 0;
}

int applier_refresh_record(const applier_ctx *ctx, const char *status_bundle, install_record *rec, olm_error *err)
{
    if (!status_bundle || !*status_bundle || rec->pending || strcmp(status_bundle, rec->bundle_name) == 0)
        return 0;
    install_record up;
    int rc = applier_read_helm_release(ctx, &up, err);
    if (rc <= 0)
        return rc;
    if (strcmp(up.bundle_name, status_bundle) != 0) {
        install_record_free(&up);
        return 0; /* not upstream's doing: our record stands */
    }
    if (applier_write_record_mirrored(ctx, &up, NULL, false, false, err) < 0) {
        install_record_free(&up);
        return -1;
    }
    install_record_free(rec);
    *rec = up;
    return 1;
}

int applier_read_record(const applier_ctx *ctx, install_record *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ctx || !ctx->admin || !ctx->system_namespace || !ctx->extension)
        return olm_error_set(err, "applier: admin client, system namespace and extension name are required");
    char *name = install_record_secret_name(ctx->extension);
    if (!name)
        return olm_error_set(err, "out of memory");
    json_t *s = NULL;
    int rc = ctx->record_secret ? (s = json_incref((json_t *)ctx->record_secret), KUBE_OK)
                                : kube_get(ctx->admin, "v1", "Secret", ctx->system_namespace, name, &s, err);
    if (rc != KUBE_OK || !ctx->record_secret)
        applier_record_seen(ctx, rc == KUBE_OK ? s : NULL);
    if (rc == KUBE_NOT_FOUND) {
        free(name);
        /* Upstream's record, if upstream installed it: adopted as it is. */
        rc = applier_read_helm_release(ctx, out, err);
        if (rc == 1 && applier_write_record_mirrored(ctx, out, NULL, false, true, err) < 0) {
            install_record_free(out);
            return -1;
        }
        return rc;
    }
    if (rc < 0) {
        olm_error_wrap(err, "reading the install record Secret '%s' in namespace '%s'", name, ctx->system_namespace);
        free(name);
        return -1;
    }
    rc = install_record_from_secret(s, out, err);
    json_decref(s);
    if (rc == 0 && strcmp(out->extension, ctx->extension) != 0) {
        olm_error_set(err, "install record Secret '%s' belongs to extension '%s', not '%s'", name, out->extension,
                      ctx->extension);
        install_record_free(out);
        rc = -1;
    }
    free(name);
    return rc < 0 ? -1 : 1;
}

int applier_record_set_hashes(const applier_ctx *ctx, install_record *rec, const uint64_t *hashes, bool repaired,
                              olm_error *err)
{
    if (!hashes)
        return 0;
    uint64_t *old = calloc(rec->nobjects ? rec->nobjects : 1, sizeof *old);
    if (!old)
        return olm_error_set(err, "out of memory");
    bool changed = false;
    for (size_t i = 0; i < rec->nobjects; i++) {
        uint64_t *h = &rec->objects[i].content_hash;
        old[i] = *h;
        if (hashes[i] && hashes[i] != *h && (!*h || repaired)) {
            *h = hashes[i];
            changed = true;
        }
    }
    int rc = changed ? applier_write_record_mirrored(ctx, rec, NULL, false, false, err) : 0;
    if (rc < 0)
        for (size_t i = 0; i < rec->nobjects; i++)
            rec->objects[i].content_hash = old[i];
    free(old);
    return rc < 0 ? -1 : 0;
}

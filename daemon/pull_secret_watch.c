/* pull_secret_watch: see pull_secret_watch.h. */
#include "pull_secret_watch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_log.h"
#include "olm_parse.h"

struct pull_secret_watch {
    pull_secret_watch_options o;
    char ref[320];
    kube_informer *inf;
    bool missing_logged; /* "not found" is said once until the Secret appears */
    void (*closed)(void *data);
    void *closed_data;
};

static const char *resource_version(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static void secret_set(pull_secret_watch *w, json_t *secret)
{
    olm_error err;
    char origin[400];
    snprintf(origin, sizeof origin, "global pull secret %s", w->ref);
    if (oci_auth_store_set_secret(w->o.store, secret, origin, &err) != 0) {
        olm_log(OLM_LOG_ERROR, w->o.log_key, NULL, "%s; pulls keep the credentials they had", err.msg);
        return;
    }
    const char *rv = resource_version(secret);
    olm_log(OLM_LOG_INFO, w->o.log_key, NULL, "global pull secret %s loaded (resourceVersion %s): used from the next pull",
            w->ref, rv ? rv : "?");
    w->missing_logged = false;
    if (w->o.on_loaded)
        w->o.on_loaded(w->o.data);
}

static void on_add(json_t *obj, void *data) { secret_set(data, obj); }

static void on_update(json_t *old_obj, json_t *new_obj, void *data)
{
    const char *was = resource_version(old_obj), *is = resource_version(new_obj);
    if (was && is && strcmp(was, is) == 0)
        return; /* a relist of the same Secret: nothing changed, nothing to re-queue */
    secret_set(data, new_obj);
}

static void on_delete(json_t *obj, void *data)
{
    (void)obj;
    pull_secret_watch *w = data;
    oci_auth_store_clear(w->o.store);
    olm_log(OLM_LOG_WARN, w->o.log_key, NULL, "global pull secret %s was deleted: pulling anonymously", w->ref);
}

static void on_synced(void *data)
{
    pull_secret_watch *w = data;
    if (kube_informer_count(w->inf) == 0 && !w->missing_logged) {
        w->missing_logged = true;
        olm_log(OLM_LOG_WARN, w->o.log_key, NULL,
                "global pull secret %s not found: pulling anonymously until it is created", w->ref);
    }
}

static void on_error(const char *msg, void *data)
{
    pull_secret_watch *w = data;
    olm_log(OLM_LOG_WARN, w->o.log_key, NULL, "watching the global pull secret %s: %s", w->ref, msg);
}

pull_secret_watch *pull_secret_watch_start(kube_uvcurl *uc, const kube_config *cfg, const pull_secret_watch_options *o,
                                           olm_error *err)
{
    char ns[64], name[254], path[400], field[300];
    if (olm_parse_ns_name(o->ref, ns, sizeof ns, name, sizeof name) != 0) {
        olm_error_set(err, "--global-pull-secret: want NAMESPACE/NAME, got \"%s\"", o->ref);
        return NULL;
    }
    pull_secret_watch *w = calloc(1, sizeof *w);
    if (!w) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    w->o = *o;
    snprintf(w->ref, sizeof w->ref, "%s", o->ref);
    w->o.ref = w->ref;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets", ns);
    snprintf(field, sizeof field, "metadata.name=%s", name);
    kube_watch_options wo = {.path = path, .field_selector = field};
    kube_informer_handlers h = {on_add, on_update, on_delete, on_synced, on_error};
    w->inf = kube_informer_new(uc, cfg, &wo, &h, w, err);
    if (!w->inf) {
        free(w);
        return NULL;
    }
    if (kube_informer_start(w->inf, err) != 0) {
        /* not started: stop still closes it asynchronously, like any informer */
        pull_secret_watch_stop(w, NULL, NULL);
        return NULL;
    }
    return w;
}

static void informer_closed(void *data)
{
    pull_secret_watch *w = data;
    void (*closed)(void *) = w->closed;
    void *closed_data = w->closed_data;
    free(w);
    if (closed)
        closed(closed_data);
}

void pull_secret_watch_stop(pull_secret_watch *w, void (*closed)(void *data), void *data)
{
    w->closed = closed;
    w->closed_data = data;
    kube_informer_stop(w->inf, informer_closed, w);
}

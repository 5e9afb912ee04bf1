/* clusterextension_record_memo: the install record Secrets as this process last saw them.
 *
 * Every reconcile of an installed extension needs its record, and read it with a GET: a
 * restart's 1,000 first reconciles made 1,000 GETs, and so did every later round (a Deployment
 * turning available, the periodic drift check every 5 minutes, a catalog change, which
 * enqueues every extension), whatever else they found unchanged.  Instead:
 *   - the first reconcile of the process lists every record Secret of the system namespace
 *     (label INSTALL_RECORD_LABEL=true) once, in pages;
 *   - each read, create or update of a record the applier makes tells what the apiserver
 *     answered (applier_ctx.record_seen), and a deletion or a write that ended without
 *     knowing tells NULL;
 *   - a reconcile takes its extension's record from here when there is one, else reads it.
 * So a reconcile that finds everything as it was makes no request for the record.
 *
 * Why the memo's copy is as good as a GET: records are written only by operator-controller
 * (its own identity, applier_record.c), one extension's only by that extension's reconciles,
 * which the work queue never runs two at a time, and each of those writes is told here; a
 * process that loses the leader Lease exits, so a new leader starts with a fresh LIST.  What
 * it does not see is a record edited or deleted by hand: that shows at the next write of the
 * record (which reads it first) or at the next start.  Entries are kept as compact text
 * (~1 KB each, managedFields dropped) and go with their extension (uninstalled, or gone).
 * (The ClusterExtensions themselves come from the informer's cache: clusterextension_cached.c.) */
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"
#include "install_record.h"
#include "olm_log.h"

/* Lists `kind` (in `ns`, NULL: cluster-scoped) with `selector` into name -> object, without
 * managedFields (nobody reads them).  In pages, so that the parsed
 * response held at once stays small next to the map.  NULL when a LIST failed. */
#define PREFETCH_PAGE 250
static json_t *list_by_name(clusterextension_reconciler *r, const char *api_version, const char *kind, const char *ns,
                            const char *selector)
{
    json_t *by_name = json_object();
    char *cont = NULL;
    do {
        kube_list_options lo = {.label_selector = selector, .limit = PREFETCH_PAGE, .continue_token = cont};
        json_t *list = NULL;
        olm_error err;
        if (!by_name || kube_list(r->cfg.admin, api_version, kind, ns, &lo, &list, &err) != 0) {
            olm_log(OLM_LOG_DEBUG, "clusterExtension", NULL, "listing %s: %s", kind, by_name ? err.msg : "out of memory");
            free(cont);
            json_decref(by_name);
            return NULL;
        }
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(list, "items"), i, o) {
            json_t *md = json_object_get(o, "metadata");
            const char *name = json_string_value(json_object_get(md, "name"));
            json_object_del(md, "managedFields");
            /* A List's items may come without them (built-in kinds); a GET's object has them. */
            if (!json_object_get(o, "apiVersion"))
                json_object_set_new(o, "apiVersion", json_string(api_version));
            if (!json_object_get(o, "kind"))
                json_object_set_new(o, "kind", json_string(kind));
            if (name)
                json_object_set(by_name, name, o);
        }
        free(cont);
        const char *next = json_string_value(json_object_get(json_object_get(list, "metadata"), "continue"));
        cont = next && *next ? strdup(next) : NULL;
        json_decref(list);
    } while (cont);
    return by_name;
}

/* Caller holds records_lock.  The first call lists them all. */
static void fill_once(clusterextension_reconciler *r)
{
    if (r->records_filled)
        return;
    r->records_filled = true;
    json_t *listed = list_by_name(r, "v1", "Secret", r->system_namespace, INSTALL_RECORD_LABEL "=true");
    const char *name;
    json_t *o;
    json_object_foreach(listed, name, o) {
        if (json_object_get(r->records, name))
            continue; /* told by a write since: what its answer said */
        char *text = json_dumps(o, JSON_COMPACT);
        if (!text || json_object_set_new(r->records, name, json_string(text)) != 0)
            json_object_del(r->records, name); /* out of memory: that one is read */
        free(text);
    }
    json_decref(listed);
}

json_t *clusterextension_record_memo_get(clusterextension_reconciler *r, const char *extension)
{
    char *name = install_record_secret_name(extension);
    pthread_mutex_lock(&r->records_lock);
    fill_once(r);
    const char *text = name ? json_string_value(json_object_get(r->records, name)) : NULL;
    json_t *secret = text ? json_loads(text, 0, NULL) : NULL;
    pthread_mutex_unlock(&r->records_lock);
    free(name);
    return secret;
}

void clusterextension_record_memo_seen(void *data, const char *extension, const json_t *secret)
{
    clusterextension_reconciler *r = data;
    char *name = extension ? install_record_secret_name(extension) : NULL, *text = NULL;
    if (!name)
        return;
    if (secret) {
        /* A shallow copy without managedFields: nobody reads them. */
        json_t *copy = json_copy((json_t *)secret);
        json_t *md = copy ? json_copy(json_object_get(copy, "metadata")) : NULL;
        if (md) {
            json_object_del(md, "managedFields");
            json_object_set_new(copy, "metadata", md);
            text = json_dumps(copy, JSON_COMPACT);
        }
        json_decref(copy);
    }
    pthread_mutex_lock(&r->records_lock);
    if (!text || json_object_set_new(r->records, name, json_string(text)) != 0)
        json_object_del(r->records, name); /* none, or out of memory: the next reconcile reads it */
    pthread_mutex_unlock(&r->records_lock);
    free(text);
    free(name);
}

void clusterextension_record_memo_forget(clusterextension_reconciler *r, const char *extension)
{
    clusterextension_record_memo_seen(r, extension, NULL);
}

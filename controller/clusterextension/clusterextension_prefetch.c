/* clusterextension_prefetch: the install records of a restart in one LIST.
 *
 * A restarted operator-controller reconciles every extension once, and each of those
 * reconciles read its record with a GET: 1,000 requests for 1,000 extensions, a third of
 * what a restart asked of the apiserver.  Instead, the first reconcile of the process lists
 * every record Secret of the system namespace (label INSTALL_RECORD_LABEL=true) once, and
 * each extension's first reconcile takes its record from that list.
 *
 * Why a listed record is as good as a GET: records are written only by operator-controller
 * (its own identity, applier_record.c), one extension's only by that extension's reconciles,
 * which the work queue never runs two at a time; the record an extension's first reconcile
 * takes is therefore the newest one, unless a previous leader was still writing it after
 * this process took the Lease (the same race a GET a moment later has).  Each entry is
 * taken once: the next reconcile of that extension reads with a GET as always.  A record
 * the LIST did not hold is read with a GET too (a first install: its reconcile then finds
 * it absent, or adopts upstream's). */
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"
#include "install_record.h"
#include "olm_log.h"

json_t *clusterextension_record_prefetched(clusterextension_reconciler *r, const char *extension)
{
    pthread_mutex_lock(&r->prefetch_lock);
    if (!r->prefetch_done) {
        r->prefetch_done = true;
        kube_list_options lo = {.label_selector = INSTALL_RECORD_LABEL "=true"};
        json_t *list = NULL;
        olm_error err;
        if (kube_list(r->cfg.admin, "v1", "Secret", r->system_namespace, &lo, &list, &err) == 0) {
            r->prefetched = json_object();
            size_t i;
            json_t *s;
            json_array_foreach(json_object_get(list, "items"), i, s) {
                const char *name = json_string_value(json_object_get(json_object_get(s, "metadata"), "name"));
                /* Kept until taken: without the bookkeeping nobody reads. */
                json_object_del(json_object_get(s, "metadata"), "managedFields");
                if (name && r->prefetched)
                    json_object_set(r->prefetched, name, s);
            }
        } else {
            olm_log(OLM_LOG_DEBUG, "clusterExtension", NULL, "listing the install records: %s", err.msg);
        }
        json_decref(list);
    }
    json_t *secret = NULL;
    char *name = r->prefetched ? install_record_secret_name(extension) : NULL;
    if (name && (secret = json_incref(json_object_get(r->prefetched, name)))) {
        json_object_del(r->prefetched, name);
        if (json_object_size(r->prefetched) == 0) {
            json_decref(r->prefetched);
            r->prefetched = NULL;
        }
    }
    free(name);
    pthread_mutex_unlock(&r->prefetch_lock);
    return secret;
}

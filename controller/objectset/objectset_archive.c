/* objectset_archive: an Archived ClusterObjectSet, as upstream's archive() over boxcutter's
 * RevisionEngine.Teardown: phases last first, each object deleted when this set controls it or
 * released (its ownerReference dropped) when a later revision took it over; a phase must be
 * gone before the one before it is torn down.  Then Progressing False / Available Unknown
 * "Archived", then the teardown finalizer off. */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "olm_log.h"
#include "objectset_internal.h"


/* Archive: tear the phases down, last first; then Archived, then the finalizer off. */
kube_wq_result objectset_archive(objectset_pass *p, const objectset_target *t, const objectset_phases *ph)
{
    p->s.deadline_exceeded = false;
    for (size_t i = ph->n; i-- > 0;) {
        bool complete = true;
        strbuf errs = STRBUF_INIT;
        size_t j;
        const json_t *o;
        json_array_foreach(ph->items[i].objects, j, o) {
            bool gone = false;
            olm_error oerr;
            if (objectset_object_teardown(t, o, &gone, &oerr) != 0) {
                strbuf_printf(&errs, "%steardown ", errs.len ? "\n" : "");
                objectset_object_ref(&errs, o);
                strbuf_printf(&errs, ": %s", oerr.msg);
                continue;
            }
            complete = complete && gone;
        }
        if (errs.len) {
            strbuf m = STRBUF_INIT;
            strbuf_printf(&m, "error archiving revision: teardown phase: %s", strbuf_str(&errs));
            objectset_set_retrying(&p->s, strbuf_str(&m));
            olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "%s", strbuf_str(&m));
            strbuf_free(&m);
            strbuf_free(&errs);
            return objectset_failed();
        }
        strbuf_free(&errs);
        if (!complete) {
            objectset_set_retrying(&p->s, "removing revision resources that are not owned by another revision");
            return objectset_after(5000);
        }
    }
    if (objectset_mark_archived(&p->s))
        return objectset_ok(); /* the status first; the update brings us back for the finalizer */
    olm_error ferr;
    if (objectset_set_finalizer(p, false, &ferr) != 0) {
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "%s", ferr.msg);
        return objectset_failed();
    }
    return objectset_ok();
}


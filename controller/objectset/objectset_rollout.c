/* objectset_rollout: an Active ClusterObjectSet's phases in order, as boxcutter's
 * RevisionEngine.Reconcile with upstream's options (sibling owners, the progression probes,
 * aggregated phase errors): a phase's objects are reconciled (objectset_object.c), errors are
 * Retrying, collisions Retrying after 10 s, and the next phase starts only once every object of
 * this one passes its probes.  Then upstream's conditions: RollingOut / ProbeFailure while it
 * rolls, Succeeded / ProbesSucceeded and the previous revisions archived once it has. */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "olm_log.h"
#include "objectset_internal.h"


#define VERSION_ANNOTATION "olm.operatorframework.io/bundle-version"

static void archive_previous(objectset_pass *p, const json_t *others, json_int_t revision)
{
    size_t i;
    const json_t *o;
    json_array_foreach(others, i, o) {
        if (json_integer_value(kube_object_path(o, "spec") ? json_object_get(kube_object_path(o, "spec"), "revision")
                                                           : NULL) >= revision)
            continue;
        olm_error perr;
        if (kube_patch(p->r->cfg.admin, OBJECTSET_API_VERSION, OBJECTSET_KIND, NULL,
                       kube_object_string(o, "metadata.name"), NULL, KUBE_PATCH_MERGE,
                       "{\"spec\":{\"lifecycleState\":\"Archived\"}}", NULL, &perr) != 0)
            olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "archive previous Revision: %s", perr.msg);
    }
}

/* Whether an older revision than `revision` is among the siblings (Active ones: archive_previous's work). */
static bool has_previous(const json_t *others, json_int_t revision)
{
    size_t i;
    const json_t *o;
    json_array_foreach(others, i, o) {
        const json_t *spec = kube_object_path(o, "spec");
        if (json_integer_value(spec ? json_object_get(spec, "revision") : NULL) < revision)
            return true;
    }
    return false;
}

kube_wq_result objectset_roll_out(objectset_pass *p, objectset_target *t, const objectset_phases *ph, const json_t *others)
{
    /* boxcutter validates the revision first and retries a failing one after 10 s. */
    char *invalid = objectset_validate(p->name, t->revision, ph);
    if (invalid) {
        strbuf m = STRBUF_INIT;
        strbuf_printf(&m, "revision validation error: %s", invalid);
        objectset_set_retrying(&p->s, strbuf_str(&m));
        olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "preflight validation failed, retrying after 10s: %s",
                invalid);
        strbuf_free(&m);
        free(invalid);
        return objectset_after(10000);
    }
    const char *version = json_string_value(json_object_get(kube_object_path(p->cos, "metadata.annotations"),
                                                            VERSION_ANNOTATION));
    version = version ? version : "";
    strbuf rolling = STRBUF_INIT;
    strbuf_printf(&rolling, "Revision %s is rolling out.", version);
    strbuf probe_msgs = STRBUF_INIT;
    size_t done = 0;
    bool in_transition = false;
    kube_wq_result res = objectset_ok();
    for (size_t i = 0; i < ph->n; i++) {
        const objectset_phase *phase = &ph->items[i];
        size_t n = json_array_size(phase->objects);
        objectset_object_result *rs = calloc(n + 1, sizeof *rs);
        strbuf errs = STRBUF_INIT, coll = STRBUF_INIT;
        bool complete = true, progressed_all = n > 0, any_progress_or_coll = false, failed_line = false;
        for (size_t j = 0; rs && j < n; j++) {
            const json_t *o = json_array_get(phase->objects, j);
            olm_error oerr;
            if (objectset_object_reconcile(t, o, phase->cp[j], &rs[j], &oerr) != 0) {
                strbuf_printf(&errs, "%sreconciling ", errs.len ? "\n" : "");
                objectset_object_ref(&errs, o);
                strbuf_printf(&errs, ": %s", oerr.msg);
                complete = false;
                continue;
            }
            if (rs[j].action == OBJECTSET_COLLISION) {
                strbuf_printf(&coll, "%s%s", coll.len ? "\n\n" : "", rs[j].collision);
                any_progress_or_coll = true;
            }
            if (rs[j].action == OBJECTSET_PROGRESSED)
                any_progress_or_coll = true;
            else
                progressed_all = false;
            bool ok_obj = rs[j].action != OBJECTSET_COLLISION && rs[j].probe.status == PROBE_TRUE;
            complete = complete && ok_obj;
            if (!failed_line && rs[j].probe.status != PROBE_TRUE) {
                /* upstream: the first object of an incomplete phase whose probe did not pass */
                if (probe_msgs.len)
                    strbuf_putc(&probe_msgs, '\n');
                probe_describe(&probe_msgs, rs[j].obj, rs[j].probe.messages);
                failed_line = true;
            }
        }
        if (!rs)
            strbuf_puts(&errs, "out of memory");
        for (size_t j = 0; rs && j < n; j++)
            objectset_object_result_free(&rs[j]);
        free(rs);
        if (errs.len) {
            strbuf m = STRBUF_INIT;
            strbuf_printf(&m, "revision reconcile: reconciling object: %s", strbuf_str(&errs));
            objectset_set_retrying(&p->s, strbuf_str(&m) + strlen("revision reconcile: "));
            olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "%s", strbuf_str(&m));
            strbuf_free(&m);
            strbuf_free(&errs);
            strbuf_free(&coll);
            res = objectset_failed();
            goto out;
        }
        strbuf_free(&errs);
        if (coll.len) {
            strbuf m = STRBUF_INIT;
            strbuf_printf(&m, "revision object collisions in phase %zu\n%s", i, strbuf_str(&coll));
            objectset_set_retrying(&p->s, strbuf_str(&m));
            olm_log(OLM_LOG_ERROR, "clusterObjectSet", p->name, "object collision, retrying after 10s");
            strbuf_free(&m);
            strbuf_free(&coll);
            res = objectset_after(10000);
            goto out;
        }
        strbuf_free(&coll);
        if (!progressed_all && any_progress_or_coll)
            in_transition = true;
        if (!complete)
            break;
        if (!failed_line)
            strbuf_reset(&probe_msgs); /* a complete phase contributes no line */
        done++;
    }
    if (done < ph->n)
        in_transition = true;
    if (in_transition)
        objectset_mark_progressing(&p->s, "RollingOut", strbuf_str(&rolling));
    if (done == ph->n) {
        /* Archive the previous revisions only once this one's Succeeded is stored: the
         * ClusterExtension's installed revision is the newest Active one with Succeeded, so
         * archiving first (in the same pass as the status write, as upstream's order) leaves a
         * moment with none, read as Installed False.  The first complete pass writes the
         * status and comes back at once (its own status echo queues nothing). */
        bool stored = kube_object_condition_is(p->cos, "Succeeded", "True");
        if (stored)
            archive_previous(p, others, t->revision);
        strbuf m = STRBUF_INIT;
        strbuf_printf(&m, "Revision %s has rolled out.", version);
        objectset_mark_progressing(&p->s, "Succeeded", strbuf_str(&m));
        strbuf_free(&m);
        objectset_mark_available(&p->s, "True", "ProbesSucceeded", "Objects are available and pass all probes.");
        objectset_mark_succeeded(&p->s);
        /* Drift repair and re-probing: the watches queue it on a change; the resync is the
         * safety net (a rare one when watched, --drift-repair-interval as the gate-off backstop:
         * 1,000 sets every 30 s would be ~270 GETs/s). */
        res = objectset_after(p->watched ? p->r->cfg.watched_resync_ms : p->r->cfg.resync_ms);
        if (!stored && has_previous(others, t->revision))
            res = objectset_after(1);
    } else {
        if (probe_msgs.len)
            objectset_mark_available(&p->s, "False", "ProbeFailure", strbuf_str(&probe_msgs));
        else
            objectset_mark_available(&p->s, "False", "RollingOut", strbuf_str(&rolling));
        objectset_mark_progressing(&p->s, "RollingOut", strbuf_str(&rolling));
        /* Watched objects queue the set when they change; otherwise poll, less often as the
         * rollout grows old. */
        uint64_t wait = p->watched ? p->r->cfg.resync_ms
                                   : objectset_poll_wait(p->r->cfg.poll_ms, p->r->cfg.poll_max_ms, p->age_ms);
        if (p->has_deadline && p->remaining_ms > 0 && (uint64_t)p->remaining_ms < wait)
            wait = (uint64_t)p->remaining_ms;
        res = objectset_after(wait);
    }
out:
    strbuf_free(&rolling);
    strbuf_free(&probe_msgs);
    return res;
}


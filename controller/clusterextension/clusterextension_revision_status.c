/* clusterextension_revision_status: the ClusterExtension status a successful BoxcutterRuntime
 * reconcile writes from its revisions, as upstream's ApplyBundleWithBoxcutter step does
 * (controllers/boxcutter_reconcile_steps.go at df2c201).  Pure. */
#include <string.h>

#include "clusterextension_internal.h"
#include "kube_object.h"

/* SetStatusCondition of a revision's condition `type` into `conds` with the extension's
 * generation; a condition that changes status keeps the revision's own transition time, as
 * apimeta does with a condition that carries one.  0 when the revision has none. */
static int mirror(json_t *conds, const json_t *cos, const char *type, int64_t generation, const char *now)
{
    const json_t *c = revision_condition(cos, type);
    if (!c)
        return 0;
    const char *ltt = json_string_value(json_object_get(c, "lastTransitionTime"));
    const char *status = json_string_value(json_object_get(c, "status"));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    return clusterextension_condition_set(conds, type, status ? status : "Unknown", reason ? reason : "",
                                          json_string_value(json_object_get(c, "message")), generation,
                                          ltt && *ltt ? ltt : now);
}

static int restore_progressing(json_t *conds, const json_t *old_status)
{
    const json_t *old = kube_conditions_find(json_object_get(old_status, "conditions"), "Progressing");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (!t || strcmp(t, "Progressing") != 0)
            continue;
        if (!old)
            return json_array_remove(conds, i);
        return json_array_set_new(conds, i, json_deep_copy(old));
    }
    return 0;
}

int clusterextension_revision_status(json_t *status, const json_t *old_status, const revision_info *revs,
                                     ssize_t installed, const size_t *rolling, size_t nrolling, int64_t generation,
                                     const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    json_t *active = json_array();
    if (!conds || !active)
        goto oom;
    bool progressing = false;
    if (installed >= 0) {
        const json_t *cos = revs[installed].object;
        if (mirror(conds, cos, "Available", generation, now) != 0 ||
            mirror(conds, cos, "Progressing", generation, now) != 0)
            goto oom;
        progressing = revision_condition(cos, "Progressing") != NULL;
        if (json_array_append_new(active, json_pack("{s:s}", "name", revs[installed].name)) != 0)
            goto oom;
    }
    for (size_t i = 0; i < nrolling; i++) {
        const json_t *cos = revs[rolling[i]].object;
        json_t *rconds = json_array();
        if (!rconds || mirror(rconds, cos, "Available", generation, now) != 0 ||
            mirror(rconds, cos, "Progressing", generation, now) != 0) {
            json_decref(rconds);
            goto oom;
        }
        json_t *rs = json_pack("{s:s}", "name", revs[rolling[i]].name);
        if (!rs || (json_array_size(rconds) && json_object_set(rs, "conditions", rconds) != 0) ||
            json_array_append_new(active, rs) != 0) {
            json_decref(rconds);
            goto oom;
        }
        json_decref(rconds);
        if (i == nrolling - 1 && revision_condition(cos, "Progressing")) {
            if (mirror(conds, cos, "Progressing", generation, now) != 0)
                goto oom;
            progressing = true;
        }
    }
    /* Upstream sets Progressing only from a revision: until one reports, it stays as it was. */
    if (!progressing && restore_progressing(conds, old_status) != 0)
        goto oom;
    if (json_array_size(active) == 0) {
        json_object_del(status, "activeRevisions");
        json_decref(active);
    } else if (json_object_set_new(status, "activeRevisions", active) != 0) {
        return -1;
    }
    return 0;
oom:
    json_decref(active);
    return -1;
}

int clusterextension_revision_installed_reason(json_t *status, const revision_info *revs, const size_t *rolling,
                                               size_t nrolling, int64_t generation, const char *now)
{
    if (nrolling == 0)
        return 0;
    const json_t *p = revision_condition(revs[rolling[nrolling - 1]].object, "Progressing");
    const char *reason = json_string_value(json_object_get(p, "reason"));
    if (reason && strcmp(reason, "Retrying") == 0)
        return 0;
    json_t *conds = json_object_get(status, "conditions");
    const json_t *inst = kube_conditions_find(conds, "Installed");
    const char *st = json_string_value(json_object_get(inst, "status"));
    if (!st || strcmp(st, "False") != 0)
        return 0;
    return clusterextension_condition_set(conds, "Installed", "False", "Absent", "No bundle installed", generation, now);
}

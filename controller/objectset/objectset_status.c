/* objectset_status: the conditions of a ClusterObjectSet, upstream's markAs* helpers with
 * their reasons and messages, and the progress deadline (progress_deadline.go). */
#include <string.h>

#include "kube_object.h"
#include "objectset_internal.h"

static bool set(objectset_status *s, const char *type, const char *status, const char *reason, const char *msg)
{
    json_t *before = json_deep_copy(kube_conditions_find(json_object_get(s->status, "conditions"), type));
    kube_condition c = {type, status, reason, msg, s->generation};
    kube_object_set_condition(s->status, &c, s->now);
    json_t *after = kube_conditions_find(json_object_get(s->status, "conditions"), type);
    bool changed = !before || !json_equal(before, after);
    json_decref(before);
    return changed;
}

bool objectset_mark_not_progressing(objectset_status *s, const char *reason, const char *msg)
{
    return set(s, "Progressing", "False", reason, msg);
}

/* Reasons other than Succeeded are not terminal: past the deadline they turn into
 * ProgressDeadlineExceeded. */
void objectset_mark_progressing(objectset_status *s, const char *reason, const char *msg)
{
    if (strcmp(reason, "Succeeded") != 0 && s->deadline_exceeded) {
        strbuf m = STRBUF_INIT;
        strbuf_printf(&m, "Revision has not rolled out for %lld minute(s). Last status: %s",
                      (long long)s->deadline_minutes, msg);
        objectset_mark_not_progressing(s, "ProgressDeadlineExceeded", strbuf_str(&m));
        strbuf_free(&m);
        return;
    }
    set(s, "Progressing", "True", reason, msg);
}

bool objectset_mark_available(objectset_status *s, const char *status, const char *reason, const char *msg)
{
    return set(s, "Available", status, reason, msg);
}

void objectset_mark_succeeded(objectset_status *s)
{
    set(s, "Succeeded", "True", "Succeeded", "Revision succeeded rolling out.");
}

/* setRetryingConditions: Available turns Unknown only when it was already set. */
void objectset_set_retrying(objectset_status *s, const char *msg)
{
    objectset_mark_progressing(s, "Retrying", msg);
    if (kube_conditions_find(json_object_get(s->status, "conditions"), "Available"))
        objectset_mark_available(s, "Unknown", "Reconciling", msg);
}

bool objectset_mark_archived(objectset_status *s)
{
    const char *msg = "revision is archived";
    bool a = objectset_mark_not_progressing(s, "Archived", msg);
    bool b = objectset_mark_available(s, "Unknown", "Archived", msg);
    return a || b;
}

int64_t objectset_deadline_remaining_ms(const json_t *cos, uint64_t minute_ms, time_t now, bool *has)
{
    *has = false;
    json_int_t pd = json_integer_value(kube_object_path(cos, "spec")
                                           ? json_object_get(kube_object_path(cos, "spec"), "progressDeadlineMinutes")
                                           : NULL);
    if (pd <= 0 || kube_object_condition_is(cos, "Succeeded", "True"))
        return 0;
    const char *ls = kube_object_string(cos, "spec.lifecycleState");
    if ((ls && strcmp(ls, "Archived") == 0) || kube_object_string(cos, "metadata.deletionTimestamp"))
        return 0;
    time_t created;
    const char *ct = kube_object_string(cos, "metadata.creationTimestamp");
    if (!ct || kube_parse_time(ct, &created) != 0)
        return 0;
    *has = true;
    return ((int64_t)created - (int64_t)now) * 1000 + (int64_t)pd * (int64_t)minute_ms;
}

uint64_t objectset_poll_wait(uint64_t poll_ms, uint64_t cap_ms, int64_t age_ms)
{
    uint64_t wait = age_ms > 0 ? (uint64_t)age_ms / 4 : 0;
    if (wait > cap_ms)
        wait = cap_ms;
    return wait > poll_ms ? wait : poll_ms;
}

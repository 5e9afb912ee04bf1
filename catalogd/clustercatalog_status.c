/* Pure status helpers of the ClusterCatalog reconciler; see clustercatalog_status.h. */
#include "clustercatalog_status.h"

#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "olm_time.h"

json_t *clustercatalog_find_condition(const json_t *status, const char *type)
{
    return kube_conditions_find(json_object_get(status, "conditions"), type);
}

int clustercatalog_set_condition(json_t *status, const char *type, const char *cstatus, const char *reason,
                                 const char *message, int64_t generation, time_t now)
{
    char ts[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(now, ts);
    kube_condition c = {type, cstatus, reason, message, generation};
    return kube_object_set_condition(status, &c, ts);
}

int clustercatalog_set_served_source(json_t *status, const char *digest_ref, const char *base_url, time_t last_unpacked)
{
    char ts[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(last_unpacked, ts);
    json_t *src = json_pack("{s:s, s:{s:s}}", "type", "Image", "image", "ref", digest_ref);
    json_t *urls = json_pack("{s:s}", "base", base_url);
    int rc = 0;
    rc |= json_object_set_new(status, "resolvedSource", src);
    rc |= json_object_set_new(status, "urls", urls);
    rc |= json_object_set_new(status, "lastUnpacked", json_string(ts));
    return rc ? -1 : 0;
}

void clustercatalog_clear_served_source(json_t *status)
{
    json_object_del(status, "resolvedSource");
    json_object_del(status, "urls");
    json_object_del(status, "lastUnpacked");
}

static bool str_eq(const json_t *o, const char *key, const char *want)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v && strcmp(v, want) == 0;
}

static bool cond_matches(const json_t *status, const char *type, const char *cstatus, const char *reason,
                         const char *message, int64_t generation)
{
    json_t *c = clustercatalog_find_condition(status, type);
    return c && str_eq(c, "status", cstatus) && str_eq(c, "reason", reason) && str_eq(c, "message", message) &&
           json_integer_value(json_object_get(c, "observedGeneration")) == generation;
}

bool clustercatalog_status_matches_success(const json_t *status, const char *digest_ref, const char *base_url,
                               time_t last_unpacked, int64_t generation)
{
    if (!status)
        return false;
    char ts[OLM_TIME_RFC3339_SIZE];
    olm_time_rfc3339(last_unpacked, ts);
    json_t *src = json_object_get(status, "resolvedSource");
    return cond_matches(status, CC_TYPE_PROGRESSING, "True", CC_REASON_SUCCEEDED, CC_MSG_UNPACKED, generation) &&
           cond_matches(status, CC_TYPE_SERVING, "True", CC_REASON_AVAILABLE, CC_MSG_SERVING, generation) &&
           str_eq(src, "type", "Image") && str_eq(json_object_get(src, "image"), "ref", digest_ref) &&
           str_eq(json_object_get(status, "urls"), "base", base_url) && str_eq(status, "lastUnpacked", ts);
}

uint64_t clustercatalog_jitter_ms(uint64_t interval_ms, unsigned *seed)
{
    double f = (double)rand_r(seed) / ((double)RAND_MAX + 1.0);
    return interval_ms + (uint64_t)((double)interval_ms * 0.01 * f);
}

uint64_t clustercatalog_poll_interval_ms(const json_t *catalog, uint64_t override_ms)
{
    json_t *image = json_object_get(json_object_get(json_object_get(catalog, "spec"), "source"), "image");
    json_t *minutes = json_object_get(image, "pollIntervalMinutes");
    if (!json_is_integer(minutes) || json_integer_value(minutes) < 1)
        return 0;
    if (override_ms)
        return override_ms;
    return (uint64_t)json_integer_value(minutes) * 60000u;
}

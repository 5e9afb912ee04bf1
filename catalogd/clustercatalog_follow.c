/* A follower's reconcile (clustercatalog_reconcile.h): a catalogd replica that does not hold
 * the Lease serves what the leader resolved, so that every replica behind the Service answers
 * with the current content.  Upstream makes its followers unready instead (#2674), which leaves
 * one Pod to serve every catalog request and nothing at all for the Lease's duration after the
 * leader is lost.
 *
 * The leader writes status.resolvedSource.image.ref (a digest) once it serves that content;
 * a follower pulls the same digest into its own image cache and store, and serves it.  It
 * writes nothing to the API server.  Its record of what it serves carries the status's own
 * lastUnpacked and generation, so that a follower that becomes leader finds its status
 * current and pulls nothing again (no storm of re-pulls on a leader change).
 *
 * What it does not follow: a catalog not yet Serving (nothing to serve yet; whatever it
 * served before stays, as on the leader); a catalog deleted, being deleted or Unavailable (its
 * content goes, as the leader's does). */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalogd_log.h"
#include "clustercatalog_internal.h"
#include "clustercatalog_status.h"
#include "olm_time.h"

static kube_wq_result result(kube_wq_result_kind kind)
{
    return (kube_wq_result){.kind = kind};
}

/* "2006-01-02T15:04:05Z" (metav1.Time) as seconds; 0 when it does not parse. */
static time_t parse_time(const char *s)
{
    struct tm tm = {0};
    const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
    return end && !*end ? timegm(&tm) : 0;
}

static kube_wq_result drop_content(clustercatalog_reconciler *r, const char *name, const char *why)
{
    clustercatalog_record_drop(r, name);
    olm_error err;
    if (clustercatalog_remove_content(r, name, &err) != 0) {
        catalogd_log(CATALOGD_LOG_WARN, name, "removing content of a catalog %s: %s", why, err.msg);
        return result(KUBE_WQ_ERROR);
    }
    return result(KUBE_WQ_OK);
}

const char *clustercatalog_followed_ref(const json_t *catalog, int64_t *generation)
{
    const json_t *status = json_object_get(catalog, "status");
    json_t *serving = clustercatalog_find_condition(status, CC_TYPE_SERVING);
    const char *st = json_string_value(json_object_get(serving, "status"));
    if (!st || strcmp(st, "True") != 0)
        return NULL;
    if (generation)
        *generation = json_integer_value(json_object_get(serving, "observedGeneration"));
    const json_t *src = json_object_get(status, "resolvedSource");
    const char *type = json_string_value(json_object_get(src, "type"));
    const char *ref = json_string_value(json_object_get(json_object_get(src, "image"), "ref"));
    return type && strcmp(type, "Image") == 0 && ref && strchr(ref, '@') ? ref : NULL;
}

/* Whether this replica's record says it serves `ref` already. */
static bool serves(clustercatalog_reconciler *r, const char *name, const char *ref)
{
    clustercatalog_record rec;
    if (!clustercatalog_record_get(r, name, &rec))
        return false;
    bool same = strcmp(rec.ref, ref) == 0;
    free(rec.ref);
    return same && clustercatalog_content_exists(r, name);
}

static kube_wq_result follow(clustercatalog_reconciler *r, const char *name, const json_t *cur)
{
    const json_t *meta = json_object_get(cur, "metadata");
    if (json_object_get(meta, "deletionTimestamp"))
        return drop_content(r, name, "being deleted");
    const char *mode = json_string_value(json_object_get(json_object_get(cur, "spec"), "availabilityMode"));
    if (mode && strcmp(mode, "Unavailable") == 0)
        return drop_content(r, name, "made Unavailable");
    int64_t generation = 0;
    const char *ref = clustercatalog_followed_ref(cur, &generation);
    if (!ref || serves(r, name, ref))
        return result(KUBE_WQ_OK);

    char *digest_ref = NULL, msg[OLM_ERROR_MAX];
    time_t last_unpacked = 0;
    bool terminal = false;
    store_draft *draft = NULL;
    /* No stored ref: the store's own `source` says whether it holds this digest already (a
     * restart, or the content the leader's store left) and then nothing is loaded again. */
    if (clustercatalog_unpack(r, name, ref, NULL, NULL, &digest_ref, &last_unpacked, &draft, msg, sizeof msg,
                              &terminal) != 0) {
        catalogd_log(CATALOGD_LOG_WARN, name, "following the leader's %s: %s; will retry", ref, msg);
        return result(KUBE_WQ_ERROR);
    }
    const char *lu = json_string_value(json_object_get(json_object_get(cur, "status"), "lastUnpacked"));
    clustercatalog_record rec = {.ref = digest_ref,
                                 .last_unpacked = parse_time(lu) ? parse_time(lu) : last_unpacked,
                                 .last_poll_ms = clustercatalog_wall_ms(),
                                 .generation = generation};
    int rc = clustercatalog_record_set(r, name, &rec);
    free(digest_ref);
    if (clustercatalog_settle_store(r, name, draft) != 0 || rc != 0)
        return result(KUBE_WQ_ERROR);
    catalogd_log(CATALOGD_LOG_INFO, name, "serving the leader's %s", ref);
    return result(KUBE_WQ_OK);
}

kube_wq_result clustercatalog_follow(const char *key, clustercatalog_reconciler *r)
{
    json_t *cur = kube_informer_get(r->cfg.informer, key);
    if (!cur) {
        kube_wq_result res = drop_content(r, key, "deleted");
        res.gone = res.kind == KUBE_WQ_OK;
        return res;
    }
    kube_wq_result res = follow(r, key, cur);
    json_decref(cur);
    return res;
}

/* clustercatalog_status: the pure parts of the ClusterCatalog reconciler (§4.1): conditions
 * with the apimachinery meta.SetStatusCondition semantics, the status a successful unpack
 * produces, the "does the status still match what we served" check, and the poll jitter.
 *
 * No I/O and no shared state: every function works on the caller's objects and may run on
 * any thread.  Kept apart from the reconciler so it can be unit-tested without a cluster. */
#ifndef OLM_CLUSTERCATALOG_STATUS_H
#define OLM_CLUSTERCATALOG_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define CC_FINALIZER "olm.operatorframework.io/delete-server-cache"
#define CC_NAME_LABEL "olm.operatorframework.io/metadata.name"

#define CC_TYPE_SERVING "Serving"
#define CC_TYPE_PROGRESSING "Progressing"
#define CC_REASON_AVAILABLE "Available"
#define CC_REASON_UNAVAILABLE "Unavailable"
#define CC_REASON_USER_UNAVAILABLE "UserSpecifiedUnavailable"
#define CC_REASON_SUCCEEDED "Succeeded"
#define CC_REASON_RETRYING "Retrying"
#define CC_REASON_BLOCKED "Blocked"

#define CC_MSG_UNAVAILABLE_MODE "Catalog availability mode is set to Unavailable"
#define CC_MSG_UNPACKED "Successfully unpacked and stored content from resolved source"
#define CC_MSG_SERVING "Serving desired content from resolved source"

/* meta.SetStatusCondition on status.conditions (created when missing): an existing condition
 * of `type` keeps its lastTransitionTime unless `cstatus` changes; reason, message and
 * observedGeneration are always updated; a new condition is appended with lastTransitionTime
 * `now`.  Returns -1 when memory runs out (status may then be partly updated). */
int clustercatalog_set_condition(json_t *status, const char *type, const char *cstatus, const char *reason,
                     const char *message, int64_t generation, time_t now);

/* The condition `type` of `status` (borrowed) or NULL. */
json_t *clustercatalog_find_condition(const json_t *status, const char *type);

/* Sets resolvedSource, urls.base and lastUnpacked (§4.1 step 7); `digest_ref` and `base_url`
 * are copied.  -1 when memory runs out. */
int clustercatalog_set_served_source(json_t *status, const char *digest_ref, const char *base_url, time_t last_unpacked);
/* Drops resolvedSource, urls and lastUnpacked (availabilityMode Unavailable, deletion). */
void clustercatalog_clear_served_source(json_t *status);

/* §4.1 step 3: true when `status` (may be NULL) equals what a successful unpack of
 * `digest_ref` at `generation` writes: both conditions (status, reason, message,
 * observedGeneration; lastTransitionTime ignored; other condition types ignored),
 * resolvedSource, urls.base and lastUnpacked. */
bool clustercatalog_status_matches_success(const json_t *status, const char *digest_ref, const char *base_url,
                               time_t last_unpacked, int64_t generation);

/* wait.Jitter(interval, 0.01): interval plus up to 1 % more, drawn from `*seed` (rand_r). */
uint64_t clustercatalog_jitter_ms(uint64_t interval_ms, unsigned *seed);

/* The poll interval of a ClusterCatalog in ms: spec.source.image.pollIntervalMinutes * 60000,
 * or `override_ms` instead when it is non-zero (test-only flag); 0 when polling is off. */
uint64_t clustercatalog_poll_interval_ms(const json_t *catalog, uint64_t override_ms);


#endif

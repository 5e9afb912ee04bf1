/* kube_leader: leader election on a coordination.k8s.io/v1 Lease, the client-go
 * algorithm.
 *
 * Every retry period a candidate reads the Lease.  It takes it when the Lease is
 * absent (create), released (empty holderIdentity), or expired: the record
 * (holder, renewTime, transitions) has not changed for leaseDurationSeconds of
 * *local* time since we first saw it, so clock skew between replicas does not
 * matter.  Taking over sets acquireTime and bumps leaseTransitions.  Writes are a
 * full PUT carrying the resourceVersion that was read, so two candidates racing
 * cannot both win (the loser gets 409 Conflict).  The leader renews (renewTime)
 * every retry period; if it cannot renew for renew_deadline it stops leading.  On
 * stop, a leader releases the Lease (holderIdentity "", leaseDurationSeconds 1) so
 * a successor need not wait for expiry: it first lets a request in flight finish
 * (a cancelled renewal may still be applied by the server), then re-reads the
 * Lease and releases it with that resourceVersion if it still names us.
 *
 * Requests are asynchronous on the shared kube_uvcurl.  Thread affinity: loop
 * thread only; callbacks run on the loop thread, except kube_leader_is_leader
 * (any thread). */
#ifndef OLM_KUBE_LEADER_H
#define OLM_KUBE_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "kube_config.h"
#include "kube_uvcurl.h"
#include "olm_error.h"

typedef struct kube_leader kube_leader;

typedef struct kube_leader_options {
    const char *lease_namespace; /* required, e.g. "olmv1-system" */
    const char *lease_name;      /* required, e.g. "9c4404e7.operatorframework.io" */
    const char *identity;        /* required, unique per replica (hostname_uuid) */
    uint64_t lease_duration_ms;  /* 0: 137000 (rounded up to whole seconds in the Lease) */
    uint64_t renew_deadline_ms;  /* 0: 107000 */
    uint64_t retry_period_ms;    /* 0: 26000 */
} kube_leader_options;

typedef struct kube_leader_callbacks {
    void (*on_started_leading)(void *data);  /* required */
    void (*on_stopped_leading)(void *data);  /* required; lost the Lease or released it */
    /* The observed holder changed (NULL or "" when nobody holds it).  Optional. */
    void (*on_new_leader)(const char *identity, void *data);
    /* A request failed; election goes on.  Optional, for logging. */
    void (*on_error)(const char *msg, void *data);
} kube_leader_callbacks;

/* Strings of `opts` are copied; `uc` and `cfg` borrowed and must outlive it. */
kube_leader *kube_leader_new(kube_uvcurl *uc, const kube_config *cfg, const kube_leader_options *opts,
                             const kube_leader_callbacks *cbs, void *data, olm_error *err);

int kube_leader_start(kube_leader *l, olm_error *err);

/* Any thread. */
bool kube_leader_is_leader(kube_leader *l);

/* Stops campaigning; a leader releases the Lease first (on_stopped_leading runs
 * when it is released or the release failed).  A request in flight is waited
 * for, not cancelled, so this can take up to the 10 s request timeout.  Then `l`
 * is freed and closed_cb (may be NULL) runs.  Safe to call from a callback. */
void kube_leader_stop(kube_leader *l, void (*closed_cb)(void *data), void *data);

/* RFC 3339 with microseconds in UTC ("2024-05-01T12:00:00.000000Z"), the
 * metav1.MicroTime format of renewTime/acquireTime.  buf needs 32 bytes. */
void kube_leader_format_microtime(char *buf, size_t len);

#endif

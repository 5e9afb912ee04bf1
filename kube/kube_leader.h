/* kube_leader: leader election on a coordination.k8s.io/v1 Lease, the client-go
 * algorithm.
 *
 * Every retry period a candidate reads the Lease.  It takes it when the Lease is
 * absent (create), released (empty holderIdentity), or expired: the record
 * (holder, renewTime, transitions) has not changed for the leaseDurationSeconds
 * it declares (the holder's lease duration; ours when it has none) of *local*
 * time since we first saw it, so clock skew between replicas does not matter.
 * Taking over sets acquireTime and bumps leaseTransitions.  Writes are a full PUT
 * carrying the resourceVersion that was read, so two candidates racing cannot
 * both win (the loser gets 409 Conflict).  The leader renews (renewTime) every
 * retry period; if it cannot renew for renew_deadline it stops leading, and at
 * once when it reads a Lease that names another holder.  On stop, a leader
 * releases the Lease (holderIdentity "", leaseDurationSeconds 1) so a successor
 * need not wait for expiry: it first lets a request in flight finish (a cancelled
 * renewal may still be applied by the server), then re-reads the Lease and
 * releases it with that resourceVersion if it still names us.
 *
 * Two bounds follow, and what they take:
 *   - takeover: a candidate sees the holder's last renewal at its next read (at
 *     most one retry period later) and takes the Lease lease_duration (the
 *     holder's, from the Lease) after that.  That read is timed to the moment of
 *     expiry, not rounded up to the next retry tick, so a holder that died
 *     (SIGKILL, node lost: nothing released) is replaced at most lease_duration +
 *     retry_period after its last renewal, plus a few request round trips.  A
 *     released Lease is taken at the next read, within one retry period.
 *   - no overlap: a leader counts its renew deadline from the moment it *sent*
 *     its last successful renewal (the server applied it later, and every
 *     candidate saw it later still), and no request of a leader outlives that
 *     deadline (each request's timeout is cut to what is left of it), so it stops
 *     leading at most renew_deadline after a moment that precedes every
 *     candidate's observation; a candidate takes over at least lease_duration
 *     after its observation.  renew_deadline < lease_duration leaves the
 *     difference for the old leader to stop its work.
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

/* The default timings, the daemons' (their --leader-elect-lease-duration,
 * --leader-elect-renew-deadline and --leader-elect-retry-period default to these).
 *
 * The goal: with 2 replicas, a leader that dies without releasing the Lease is
 * replaced as reconciler within 15 s.  The bound above is lease_duration +
 * retry_period after its last renewal: 10 s + 2 s = 12 s, leaving 3 s for the
 * round trips and for the new leader to list its caches and start reconciling on
 * a loaded node.  controller-runtime's defaults (15 s / 10 s / 2 s) give 17 s, over
 * the goal; upstream operator-controller's (OpenShift's 137 s / 107 s / 26 s,
 * chosen to ride out a 60 s+ API server outage on single-node clusters) give
 * 163 s.  The renew deadline, 7 s, lets a leader retry its renewal three times (at
 * 2, 4 and 6 s) before it gives up, and leaves 3 s between the moment it stops
 * leading and the earliest takeover.  The price of short timings: an API server
 * unreachable for more than 7 s makes the leader stop (and the daemon exit, to
 * be restarted); clusters that prefer to ride out long outages set the flags
 * (e.g. OpenShift's 137s/107s/26s) and accept the slow failover. */
#define KUBE_LEADER_DEFAULT_LEASE_DURATION_MS 10000
#define KUBE_LEADER_DEFAULT_RENEW_DEADLINE_MS 7000
#define KUBE_LEADER_DEFAULT_RETRY_PERIOD_MS 2000

typedef struct kube_leader_options {
    const char *lease_namespace; /* required, e.g. "olmv1-system" */
    const char *lease_name;      /* required, e.g. "9c4404e7.operatorframework.io" */
    const char *identity;        /* required, unique per replica (hostname_uuid) */
    /* 0: the defaults above.  lease_duration is rounded up to whole seconds in the
     * Lease (leaseDurationSeconds, informative: candidates use their own). */
    uint64_t lease_duration_ms;
    uint64_t renew_deadline_ms;
    uint64_t retry_period_ms;
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

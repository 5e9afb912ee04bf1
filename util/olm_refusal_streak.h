/* olm_refusal_streak: "after a few refusals in a row, stop asking new identities for a while".
 *
 * Where installers are namespace-bound, every new ServiceAccount asked to watch a type
 * cluster-wide is refused (403): 1,000 such extensions of two kinds were 2,000 requests the
 * apiserver authorized and refused.  The drift watches (drift_shared.c) and the ClusterObjectSet
 * watches (objectset_watch_offers.c) both keep one streak per type: after
 * OLM_REFUSALS_BEFORE_QUIET refusals in a row nobody new is asked until the quiet period ends,
 * and a watch that lists starts the count again.  Times are milliseconds of the caller's clock.
 * Plain data; the caller serializes. */
#ifndef OLM_REFUSAL_STREAK_H
#define OLM_REFUSAL_STREAK_H

#include <stdbool.h>
#include <stdint.h>

#define OLM_REFUSALS_BEFORE_QUIET 3

typedef struct olm_refusal_streak {
    unsigned in_a_row;
    uint64_t quiet_until_ms;
} olm_refusal_streak;

static inline void olm_refusal_streak_refused(olm_refusal_streak *s, uint64_t now_ms, uint64_t quiet_ms)
{
    if (++s->in_a_row >= OLM_REFUSALS_BEFORE_QUIET)
        s->quiet_until_ms = now_ms + quiet_ms;
}

/* A watch listed: the refusals are no longer in a row. */
static inline void olm_refusal_streak_reset(olm_refusal_streak *s)
{
    s->in_a_row = 0;
}

static inline bool olm_refusal_streak_quiet(const olm_refusal_streak *s, uint64_t now_ms)
{
    return s->in_a_row >= OLM_REFUSALS_BEFORE_QUIET && now_ms < s->quiet_until_ms;
}

#endif

/* objectset_watch_offers: which ServiceAccount credential a type operator-controller may not
 * watch is watched with next (objectset_watch.h says why a revision's credential may be used).
 * Each revision's pass offers the credential it acts with; the newest offer waits to be tried.
 * A ServiceAccount refused (403) is not asked again for DENIAL_SECONDS, since RBAC may be
 * mended meanwhile; a credential rejected (401: an expired token) is never tried again, and a
 * fresher one from the next pass is.  After a few refusals in a row (olm_refusal_streak.h:
 * namespace-bound installers), every ServiceAccount counts as refused for DENIAL_SECONDS
 * (their revisions watch in their namespaces); a watch that lists starts the count again.  Plain data: the caller holds objectset_watches.mu. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "objectset_watch_internal.h"
#include "olm_hash.h"

#define DENIAL_SECONDS 600

bool watch_offers_init(watch_offers *o)
{
    *o = (watch_offers){.denied = json_object()};
    return o->denied != NULL;
}

void watch_offers_drop(watch_offers *o)
{
    if (o->credential)
        explicit_bzero(o->credential, strlen(o->credential));
    free(o->credential);
    free(o->as);
    free(o->set);
    o->credential = o->as = o->set = NULL;
}

void watch_offers_free(watch_offers *o)
{
    watch_offers_drop(o);
    json_decref(o->denied);
    o->denied = NULL;
}

uint64_t watch_offers_hash(const char *credential)
{
    return olm_fnv1a_str(OLM_FNV1A_OFFSET, credential);
}

bool watch_offers_denied(const watch_offers *o, const char *as)
{
    if (olm_refusal_streak_quiet(&o->refusals, (uint64_t)time(NULL) * 1000))
        return true;
    const json_t *t = json_object_get(o->denied, as);
    return t && time(NULL) - (time_t)json_integer_value(t) < DENIAL_SECONDS;
}

static bool was_rejected(const watch_offers *o, const char *credential)
{
    uint64_t h = watch_offers_hash(credential);
    for (size_t i = 0; i < OBJECTSET_WATCH_REJECTED_KEPT; i++)
        if (o->rejected[i] == h)
            return true;
    return false;
}

bool watch_offers_put(watch_offers *o, const char *as, const char *credential, const char *set)
{
    if (!as || !credential || watch_offers_denied(o, as) || was_rejected(o, credential))
        return false;
    watch_offers_drop(o);
    o->as = strdup(as);
    o->credential = strdup(credential);
    o->set = set ? strdup(set) : NULL;
    if (!o->as || !o->credential || (set && !o->set)) {
        watch_offers_drop(o);
        return false;
    }
    return true;
}

bool watch_offers_take(watch_offers *o, char **as, char **credential, char **set)
{
    if (!o->credential)
        return false;
    if (watch_offers_denied(o, o->as) || was_rejected(o, o->credential)) {
        watch_offers_drop(o);
        return false;
    }
    *as = o->as;
    *credential = o->credential;
    *set = o->set;
    o->as = o->credential = o->set = NULL;
    return true;
}

void watch_offers_allowed(watch_offers *o, const char *as)
{
    olm_refusal_streak_reset(&o->refusals);
    if (as)
        json_object_del(o->denied, as);
}

bool watch_offers_refused(watch_offers *o, const char *as, long status, uint64_t credential_hash)
{
    bool again = as && json_object_get(o->denied, as) != NULL;
    if (status == 403 && o->denied && as) {
        json_object_set_new(o->denied, as, json_integer((json_int_t)time(NULL)));
        olm_refusal_streak_refused(&o->refusals, (uint64_t)time(NULL) * 1000, DENIAL_SECONDS * 1000);
    }
    if (status == 401) /* the same credential offered again would be rejected again */
        o->rejected[o->rejected_next++ % OBJECTSET_WATCH_REJECTED_KEPT] = credential_hash;
    return again;
}

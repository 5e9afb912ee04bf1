/* kube_leader: Lease-based leader election (see kube_leader.h). */
#include "kube_leader.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "kube_uvcurl_req.h"
#include "olm_time.h"

struct kube_leader {
    kube_uvcurl *uc;
    const kube_config *cfg;
    char *ns, *name, *identity;
    char *item_path;       /* .../leases/<name> */
    char *collection_path; /* .../leases */
    uint64_t duration_ms, renew_deadline_ms, retry_ms;
    kube_leader_callbacks cb;
    void *data;

    uv_timer_t timer;
    kube_uvcurl_req *req;
    atomic_bool leading;
    uint64_t last_renew;   /* loop time at which the last successful write was sent */
    uint64_t write_sent;   /* loop time at which the write in flight was sent */

    /* What we last saw of the Lease, and when (loop time) it last changed. */
    char *observed;        /* holder|renewTime|transitions */
    char *observed_holder;
    uint64_t observed_at;

    bool stopped;
    /* Set during stop when the write that was in flight may have left us the
     * holder on the server (it succeeded, or we cannot tell), although we never
     * announced leadership: the Lease is released then too. */
    bool may_hold;
    void (*closed_cb)(void *data);
    void *closed_data;
};

static void try_acquire_or_renew(uv_timer_t *t);
static void teardown(kube_leader *l);

void kube_leader_format_microtime(char *buf, size_t len)
{
    struct timespec now = olm_time_now();
    char t[OLM_TIME_RFC3339_MICRO_SIZE];
    olm_time_rfc3339_micro(&now, t);
    snprintf(buf, len, "%s", t);
}

static void report(kube_leader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(kube_leader *l, const char *fmt, ...)
{
    if (!l->cb.on_error)
        return;
    olm_error e;
    va_list ap;
    va_start(ap, fmt);
    olm_error_setv(&e, fmt, ap);
    va_end(ap);
    olm_error_wrap(&e, "leader election on lease %s/%s", l->ns, l->name);
    l->cb.on_error(e.msg, l->data);
}

static void schedule_in(kube_leader *l, uint64_t ms)
{
    if (!l->stopped)
        uv_timer_start(&l->timer, try_acquire_or_renew, ms, 0);
}

static void schedule(kube_leader *l)
{
    schedule_in(l, l->retry_ms);
}

static uint64_t now_ms(kube_leader *l)
{
    uv_loop_t *loop = kube_uvcurl_loop(l->uc);
    uv_update_time(loop);
    return uv_now(loop);
}

/* The request timeout (ms) of the next request, or 0 when a leader's renew deadline has
 * passed and it must not send anything more as leader.  A leader's requests end by its
 * deadline: a renewal hanging on a dead connection must not keep it leading past the
 * moment a candidate may take over (the no-overlap bound in kube_leader.h). */
#define REQUEST_TIMEOUT_MS 10000
static long request_timeout(kube_leader *l)
{
    if (!atomic_load(&l->leading))
        return REQUEST_TIMEOUT_MS;
    uint64_t since = now_ms(l) - l->last_renew;
    if (since >= l->renew_deadline_ms)
        return 0;
    uint64_t left = l->renew_deadline_ms - since;
    return left < REQUEST_TIMEOUT_MS ? (long)left : REQUEST_TIMEOUT_MS;
}

static void stop_leading(kube_leader *l)
{
    if (atomic_load(&l->leading)) {
        atomic_store(&l->leading, false);
        l->cb.on_stopped_leading(l->data);
    }
}

/* A round failed (could not read, lost a race, someone else holds it, or the renew
 * deadline passed); next_ms: when to try again. */
static void round_failed_next(kube_leader *l, uint64_t next_ms)
{
    if (atomic_load(&l->leading)) {
        uint64_t since = now_ms(l) - l->last_renew;
        if (since >= l->renew_deadline_ms)
            stop_leading(l);
        else if (l->renew_deadline_ms - since < next_ms)
            next_ms = l->renew_deadline_ms - since; /* stop leading on time, not a retry later */
    }
    schedule_in(l, next_ms);
}

static void round_failed(kube_leader *l)
{
    round_failed_next(l, l->retry_ms);
}

static void on_written(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_leader *l = data;
    l->req = NULL;
    if (l->stopped) {
        /* Stop waited for this write rather than cancel it (see teardown). */
        if (status == 200 || status == 201 || status == 0)
            l->may_hold = true;
        teardown(l);
        return;
    }
    if (status != 200 && status != 201) {
        if (status == 409)
            report(l, "lost an update race (409 Conflict)");
        else if (status == 0)
            report(l, "write failed: %s", err->msg);
        else
            report(l, "write returned HTTP %ld: %.300s", status, body);
        round_failed(l);
        return;
    }
    (void)len; /* the response body is not needed: release re-reads the Lease */
    /* When it was sent, not now: the server applied it in between, so every candidate's
     * observation of it comes after this moment (the no-overlap bound in kube_leader.h). */
    l->last_renew = l->write_sent;
    if (!atomic_load(&l->leading)) {
        atomic_store(&l->leading, true);
        l->cb.on_started_leading(l->data);
    }
    schedule(l);
}

/* Records the observed Lease; returns true if it changed since last time. */
static bool observe(kube_leader *l, const char *holder, const char *renew, json_int_t transitions)
{
    char *rec = NULL;
    if (asprintf(&rec, "%s|%s|%lld", holder, renew, (long long)transitions) < 0)
        return false; /* out of memory: treat as unchanged, i.e. not expiring early */
    if (l->observed && strcmp(rec, l->observed) == 0) {
        free(rec);
        return false;
    }
    free(l->observed);
    l->observed = rec;
    l->observed_at = now_ms(l);
    if (!l->observed_holder || strcmp(l->observed_holder, holder) != 0) {
        char *h = strdup(holder);
        if (h) {
            free(l->observed_holder);
            l->observed_holder = h;
            if (l->cb.on_new_leader)
                l->cb.on_new_leader(holder, l->data);
        }
    }
    return true;
}

static json_t *lease_spec(kube_leader *l, const char *now, const char *acquire, json_int_t transitions)
{
    return json_pack("{s:s, s:I, s:s, s:s, s:I}", "holderIdentity", l->identity, "leaseDurationSeconds",
                     (json_int_t)((l->duration_ms + 999) / 1000), "acquireTime", acquire, "renewTime", now,
                     "leaseTransitions", transitions);
}

static void write_lease(kube_leader *l, const char *method, const char *path, json_t *lease)
{
    olm_error err;
    long timeout = request_timeout(l);
    char *body = timeout ? json_dumps(lease, JSON_COMPACT) : NULL;
    json_decref(lease);
    if (!timeout) {
        round_failed(l); /* the renew deadline passed while reading */
        return;
    }
    if (!body) {
        report(l, "out of memory");
        round_failed(l);
        return;
    }
    l->write_sent = now_ms(l);
    l->req = kube_uvcurl_req_start(l->uc, l->cfg, method, path, body, timeout, on_written, l, &err);
    free(body);
    if (!l->req) {
        report(l, "%s", err.msg);
        round_failed(l);
    }
}

static void on_read(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_leader *l = data;
    l->req = NULL;
    if (l->stopped) {
        teardown(l);
        return;
    }
    char now[40];
    kube_leader_format_microtime(now, sizeof now);
    if (status == 404) {
        json_t *spec = lease_spec(l, now, now, 0);
        json_t *lease = spec ? json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "coordination.k8s.io/v1",
                                         "kind", "Lease", "metadata", "name", l->name, "namespace", l->ns,
                                         "spec", spec)
                             : NULL;
        if (!lease) {
            report(l, "out of memory");
            round_failed(l);
            return;
        }
        write_lease(l, "POST", l->collection_path, lease);
        return;
    }
    json_t *lease = status == 200 ? json_loadb(body, len, 0, NULL) : NULL;
    if (!lease) {
        if (status == 0)
            report(l, "read failed: %s", err->msg);
        else
            report(l, "read returned HTTP %ld: %.300s", status, body);
        round_failed(l);
        return;
    }
    json_t *spec = json_object_get(lease, "spec");
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    const char *renew = json_string_value(json_object_get(spec, "renewTime"));
    const char *acquire = json_string_value(json_object_get(spec, "acquireTime"));
    json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    holder = holder ? holder : "";
    observe(l, holder, renew ? renew : "", transitions);
    bool mine = strcmp(holder, l->identity) == 0;
    /* The holder's own lease duration, as it wrote it (client-go reads it so too): a holder
     * configured with longer timings, say a replica of an older version during a rolling
     * update, renews less often and must not be taken over after our shorter lease.  Ours
     * when the Lease has none. */
    json_int_t declared_s = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    uint64_t valid_ms = declared_s > 0 && declared_s <= 100000000 ? (uint64_t)declared_s * 1000 : l->duration_ms;
    uint64_t unchanged_ms = now_ms(l) - l->observed_at;
    bool expired = unchanged_ms >= valid_ms;
    if (*holder && !mine && !expired) {
        json_decref(lease);
        stop_leading(l); /* when we led: the Lease names another, so it is lost already */
        /* Someone else leads.  Read again at the moment its Lease would expire when that
         * comes before the next retry: a dead holder is replaced lease_duration after we saw
         * its last renewal, not up to a retry period later. */
        uint64_t left = valid_ms - unchanged_ms;
        round_failed_next(l, left < l->retry_ms ? left : l->retry_ms);
        return;
    }
    /* Take over or renew: keep metadata (resourceVersion makes the PUT conditional). */
    json_t *nspec = lease_spec(l, now, mine && acquire ? acquire : now, mine ? transitions : transitions + 1);
    if (!nspec || json_object_set_new(lease, "spec", nspec) != 0) {
        json_decref(lease);
        report(l, "out of memory");
        round_failed(l);
        return;
    }
    write_lease(l, "PUT", l->item_path, lease);
}

static void try_acquire_or_renew(uv_timer_t *t)
{
    kube_leader *l = t->data;
    olm_error err;
    if (l->stopped || l->req)
        return;
    long timeout = request_timeout(l);
    if (!timeout) {
        round_failed(l); /* the renew deadline passed: stop leading now */
        return;
    }
    l->req = kube_uvcurl_req_start(l->uc, l->cfg, "GET", l->item_path, NULL, timeout, on_read, l, &err);
    if (!l->req) {
        report(l, "%s", err.msg);
        round_failed(l);
    }
}

kube_leader *kube_leader_new(kube_uvcurl *uc, const kube_config *cfg, const kube_leader_options *opts,
                             const kube_leader_callbacks *cbs, void *data, olm_error *err)
{
    if (!opts->lease_namespace || !opts->lease_name || !opts->identity || !*opts->identity ||
        !cbs->on_started_leading || !cbs->on_stopped_leading) {
        olm_error_set(err, "leader election needs a lease namespace, name, identity and both callbacks");
        return NULL;
    }
    kube_leader *l = calloc(1, sizeof *l);
    if (!l) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    l->uc = uc;
    l->cfg = cfg;
    l->cb = *cbs;
    l->data = data;
    l->duration_ms = opts->lease_duration_ms ? opts->lease_duration_ms : KUBE_LEADER_DEFAULT_LEASE_DURATION_MS;
    l->renew_deadline_ms = opts->renew_deadline_ms ? opts->renew_deadline_ms : KUBE_LEADER_DEFAULT_RENEW_DEADLINE_MS;
    l->retry_ms = opts->retry_period_ms ? opts->retry_period_ms : KUBE_LEADER_DEFAULT_RETRY_PERIOD_MS;
    atomic_init(&l->leading, false);
    l->ns = strdup(opts->lease_namespace);
    l->name = strdup(opts->lease_name);
    l->identity = strdup(opts->identity);
    if (l->ns &&
        asprintf(&l->collection_path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns) < 0)
        l->collection_path = NULL;
    if (l->collection_path && l->name && asprintf(&l->item_path, "%s/%s", l->collection_path, l->name) < 0)
        l->item_path = NULL;
    int rc = -1;
    if (l->identity && l->item_path)
        rc = uv_timer_init(kube_uvcurl_loop(uc), &l->timer);
    if (rc != 0) {
        free(l->ns);
        free(l->name);
        free(l->identity);
        free(l->collection_path);
        free(l->item_path);
        free(l);
        olm_error_set(err, "out of memory or uv_timer_init failed");
        return NULL;
    }
    l->timer.data = l;
    return l;
}

int kube_leader_start(kube_leader *l, olm_error *err)
{
    if (l->stopped)
        return olm_error_set(err, "leader election already stopped");
    uv_timer_start(&l->timer, try_acquire_or_renew, 0, 0);
    return 0;
}

bool kube_leader_is_leader(kube_leader *l)
{
    return atomic_load(&l->leading);
}

static void on_closed(uv_handle_t *h)
{
    kube_leader *l = h->data;
    void (*cb)(void *) = l->closed_cb;
    void *data = l->closed_data;
    free(l->ns);
    free(l->name);
    free(l->identity);
    free(l->collection_path);
    free(l->item_path);
    free(l->observed);
    free(l->observed_holder);
    free(l);
    if (cb)
        cb(data);
}

static void finish(kube_leader *l)
{
    if (atomic_load(&l->leading)) {
        atomic_store(&l->leading, false);
        l->cb.on_stopped_leading(l->data);
    }
    uv_close((uv_handle_t *)&l->timer, on_closed);
}

static void on_released(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_leader *l = data;
    (void)body;
    (void)len;
    l->req = NULL;
    if (status != 200)
        report(l, "release failed (HTTP %ld) %s", status, status == 0 ? err->msg : "");
    finish(l);
}

/* The release is a PUT of the Lease as just read, so it carries the current
 * resourceVersion: the version of our own last write is not enough, because a
 * write whose outcome we did not see (timed out) may still have been applied. */
static void on_release_read(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_leader *l = data;
    l->req = NULL;
    json_t *lease = status == 200 ? json_loadb(body, len, 0, NULL) : NULL;
    if (!lease) {
        if (status == 0)
            report(l, "could not read the lease to release it: %s", err->msg);
        else if (status != 404)
            report(l, "could not read the lease to release it: HTTP %ld: %.300s", status, body);
        finish(l);
        return;
    }
    json_t *spec = json_object_get(lease, "spec");
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    if (!holder || strcmp(holder, l->identity) != 0) {
        json_decref(lease); /* someone else took it: not ours to release */
        finish(l);
        return;
    }
    json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    char now[40];
    kube_leader_format_microtime(now, sizeof now);
    json_t *nspec = json_pack("{s:s, s:i, s:s, s:s, s:I}", "holderIdentity", "", "leaseDurationSeconds", 1,
                              "acquireTime", now, "renewTime", now, "leaseTransitions", transitions);
    char *out = NULL;
    if (nspec && json_object_set_new(lease, "spec", nspec) == 0)
        out = json_dumps(lease, JSON_COMPACT);
    json_decref(lease);
    olm_error e;
    olm_error_set(&e, "out of memory");
    if (out)
        l->req = kube_uvcurl_req_start(l->uc, l->cfg, "PUT", l->item_path, out, REQUEST_TIMEOUT_MS, on_released, l, &e);
    free(out);
    if (l->req)
        return;
    report(l, "could not release the lease: %s", e.msg);
    finish(l);
}

/* Runs once stop was requested and again whenever a request completes after it;
 * acts only when no request is in flight.  A request in flight is waited for,
 * never cancelled: cancelling only drops our end, and the server may still apply
 * a renewal it had received, so we would never learn its new resourceVersion and
 * a successor would wait out the whole lease duration.  The wait is bounded by
 * the request timeout. */
static void teardown(kube_leader *l)
{
    if (l->req)
        return; /* its callback calls us again */
    if (!atomic_load(&l->leading) && !l->may_hold) {
        finish(l);
        return;
    }
    olm_error err;
    l->req = kube_uvcurl_req_start(l->uc, l->cfg, "GET", l->item_path, NULL, REQUEST_TIMEOUT_MS, on_release_read, l, &err);
    if (!l->req) {
        report(l, "could not release the lease: %s", err.msg);
        finish(l);
    }
}

/* Deferred to a timer callback: stop may be called from one of our callbacks
 * (e.g. on_started_leading inside on_written), and finish must not then run
 * on_stopped_leading and free `l` underneath that caller. */
static void on_teardown(uv_timer_t *t)
{
    teardown(t->data);
}

void kube_leader_stop(kube_leader *l, void (*closed_cb)(void *data), void *data)
{
    if (l->stopped)
        return;
    l->stopped = true;
    l->closed_cb = closed_cb;
    l->closed_data = data;
    uv_timer_stop(&l->timer);
    uv_timer_start(&l->timer, on_teardown, 0, 0);
}

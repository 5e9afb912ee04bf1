/* kube_workqueue: the client-go work queue contract, dispatching reconciles to
 * the libuv threadpool.
 *
 *  * add(key) deduplicates: a key waiting in the queue is queued once.
 *  * A key being reconciled is never handed out again at the same time; if it is
 *    added meanwhile, it is reconciled once more after the running one finished.
 *  * add_rate_limited(key) waits base * 2^failures (5 ms, 10 ms, 20 ms ... capped at
 *    1000 s by default; controller-runtime's default per-item limiter), and counts
 *    a failure; forget(key) resets the count.
 *  * add_after(key, ms) waits; several waits for one key keep the earliest.
 *  * shutdown: no more adds; waiting (delayed) keys are dropped; keys already in
 *    the queue are still reconciled (drain=true) or dropped (drain=false); the
 *    callback runs once every running reconcile has finished.
 *
 * Up to `concurrency` reconciles run at once, each via uv_queue_work: the
 * reconcile function runs on a threadpool thread and its result is applied on the
 * loop thread (ok → forget; error → add_rate_limited; requeue_after → forget +
 * add_after; terminal → forget, no retry).
 *
 * Thread affinity: every function is loop thread only, except that the reconcile
 * function itself runs on a threadpool thread.  (libuv's threadpool has 4 threads
 * unless UV_THREADPOOL_SIZE says otherwise; it is shared with file-system work.) */
#ifndef OLM_KUBE_WORKQUEUE_H
#define OLM_KUBE_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "olm_error.h"
#include "olm_metrics.h"
#include "strbuf.h"

typedef struct kube_workqueue kube_workqueue;

typedef enum kube_wq_result_kind {
    KUBE_WQ_OK,            /* done; reset the back-off */
    KUBE_WQ_ERROR,         /* failed; retry with back-off */
    KUBE_WQ_REQUEUE_AFTER, /* done for now; run again after requeue_after_ms */
    KUBE_WQ_TERMINAL,      /* failed in a way retrying cannot fix; do not retry */
} kube_wq_result_kind;

typedef struct kube_wq_result {
    kube_wq_result_kind kind;
    /* REQUEUE_AFTER: when to run again.  ERROR: when non-zero, retry no later than this
     * (the back-off still counts the failure; the earlier wake-up wins). */
    uint64_t requeue_after_ms;
    /* OK only: the key's object no longer exists.  A requeue still scheduled for it (a
     * periodic one, or a retry) is dropped, so the queue keeps nothing for the key: a
     * deleted object's key otherwise stayed until its periodic requeue came (5 min for
     * a ClusterExtension), only to find it gone. */
    bool gone;
} kube_wq_result;

/* Runs on a threadpool thread.  `key` is borrowed for the call.  Must not call
 * any kube_workqueue function (those are loop thread only). */
typedef kube_wq_result (*kube_workqueue_reconcile_fn)(const char *key, void *data);

typedef struct kube_workqueue_options {
    unsigned concurrency;    /* reconciles at once; 0: 1 */
    uint64_t base_delay_ms;  /* first rate-limited delay; 0: 5 */
    uint64_t max_delay_ms;   /* cap; 0: 1000000 (1000 s) */
} kube_workqueue_options;

/* `opts` may be NULL for the defaults.  `data` is passed to `reconcile`. */
kube_workqueue *kube_workqueue_new(uv_loop_t *loop, const kube_workqueue_options *opts,
                                   kube_workqueue_reconcile_fn reconcile, void *data, olm_error *err);

/* Return 0; -1 (err set) when out of memory or shut down (then nothing changes). */
int kube_workqueue_add(kube_workqueue *q, const char *key, olm_error *err);
int kube_workqueue_add_after(kube_workqueue *q, const char *key, uint64_t delay_ms, olm_error *err);
int kube_workqueue_add_rate_limited(kube_workqueue *q, const char *key, olm_error *err);

/* Stops tracking the key's failures (its next rate-limited delay is the base again). */
void kube_workqueue_forget(kube_workqueue *q, const char *key);

/* Rate-limited adds since the last forget. */
unsigned kube_workqueue_num_requeues(kube_workqueue *q, const char *key);

/* The delay add_rate_limited uses after `failures` earlier failures:
 * min(base * 2^failures, max).  Pure; any thread. */
uint64_t kube_workqueue_backoff_ms(uint64_t base_ms, uint64_t max_ms, unsigned failures);

size_t kube_workqueue_len(const kube_workqueue *q);        /* keys ready, not running */
unsigned kube_workqueue_running(const kube_workqueue *q);  /* reconciles in flight */
unsigned kube_workqueue_concurrency(const kube_workqueue *q); /* the most at once */
size_t kube_workqueue_waiting(const kube_workqueue *q);    /* keys in add_after/back-off */
bool kube_workqueue_shutting_down(const kube_workqueue *q);

/* What controller-runtime's controller metrics and client-go's workqueue metrics count,
 * kept by the queue on the loop thread (so reading them there needs no lock). */
#define KUBE_WQ_RECONCILE_NBOUNDS 40 /* controller-runtime's reconcile_time_seconds buckets */
#define KUBE_WQ_LATENCY_NBOUNDS 12   /* client-go's ExponentialBuckets(10e-9, 10, 12) */
typedef struct kube_workqueue_stats {
    unsigned long long adds;        /* keys that became pending (workqueue_adds_total) */
    unsigned long long retries;     /* rate-limited adds (workqueue_retries_total) */
    unsigned long long results[4];  /* finished reconciles by kube_wq_result_kind */
    olm_histogram queue_seconds;    /* add -> handed to a worker */
    olm_histogram work_seconds;     /* handed to a worker -> result applied */
    olm_histogram reconcile_seconds; /* the reconcile function itself */
} kube_workqueue_stats;

/* Loop thread only.  Borrowed; valid while q lives. */
const kube_workqueue_stats *kube_workqueue_get_stats(const kube_workqueue *q);

/* Appends controller-runtime's names for this queue: controller_runtime_reconcile_total
 * {controller,result} (success, error, requeue_after; terminal errors count as error and in
 * controller_runtime_terminal_reconcile_errors_total), ..._reconcile_errors_total,
 * ..._reconcile_panics_total (always 0: a C reconcile cannot panic and go on),
 * ..._reconcile_time_seconds, ..._active_workers, ..._max_concurrent_reconciles (label
 * controller), and workqueue_{depth,adds_total,retries_total,queue_duration_seconds,
 * work_duration_seconds} (label name).  Loop thread only; 0, or -1 when out of memory. */
int kube_workqueue_render_metrics(const kube_workqueue *q, const char *controller, strbuf *out);
/* The same for n queues (controllers[i] names qs[i]): each family's HELP and TYPE once, then
 * every queue's samples, as the text format wants when a daemon runs several controllers. */
int kube_workqueues_render_metrics(const kube_workqueue *const *qs, const char *const *controllers, size_t n,
                                   strbuf *out);

/* See the header comment.  `q` is freed after `done_cb` (may be NULL) returns. */
void kube_workqueue_shutdown(kube_workqueue *q, bool drain, void (*done_cb)(void *data), void *data);

#endif

/* kube_workqueue_metrics: a queue's counters under controller-runtime's and client-go's metric
 * names, so that upstream's dashboards and alerts work unchanged (see kube_workqueue.h). */
#include "kube_workqueue.h"

/* A family's HELP and TYPE once, then one sample (or histogram) per queue: the text format
 * allows one HELP line per family, so a daemon with two controllers must not repeat it
 * (Prometheus' parser, as upstream's e2e metrics check uses, rejects a second one). */
typedef double (*queue_value)(const kube_workqueue *q);
typedef const olm_histogram *(*queue_histogram)(const kube_workqueue *q);

static int family(strbuf *out, const char *name, const char *type, const char *help, const char *label,
                  const kube_workqueue *const *qs, const char *const *cs, size_t n, queue_value v, queue_histogram h)
{
    int rc = olm_metrics_header(out, name, help, type);
    for (size_t i = 0; i < n; i++)
        rc |= h ? olm_histogram_render(out, name, label, cs[i], h(qs[i]))
                : olm_metrics_sample(out, name, label, cs[i], v(qs[i]));
    return rc;
}

/* controller_runtime_reconcile_total{controller="c",result="r"}: two labels, so by hand. */
static int result_line(strbuf *out, const char *controller, const char *result, unsigned long long n)
{
    int rc = strbuf_puts(out, "controller_runtime_reconcile_total{controller=\"");
    rc |= olm_metrics_label_value(out, controller);
    rc |= strbuf_printf(out, "\",result=\"%s\"} %llu\n", result, n);
    return rc;
}

static unsigned long long errors_of(const kube_workqueue *q)
{
    const kube_workqueue_stats *st = kube_workqueue_get_stats(q);
    return st->results[KUBE_WQ_ERROR] + st->results[KUBE_WQ_TERMINAL];
}
static double errors(const kube_workqueue *q) { return (double)errors_of(q); }
static double terminal(const kube_workqueue *q) { return (double)kube_workqueue_get_stats(q)->results[KUBE_WQ_TERMINAL]; }
static double zero(const kube_workqueue *q) { (void)q; return 0; }
static double concurrency(const kube_workqueue *q) { return kube_workqueue_concurrency(q); }
static double running(const kube_workqueue *q) { return kube_workqueue_running(q); }
static double depth(const kube_workqueue *q) { return (double)kube_workqueue_len(q); }
static double adds(const kube_workqueue *q) { return (double)kube_workqueue_get_stats(q)->adds; }
static double retries(const kube_workqueue *q) { return (double)kube_workqueue_get_stats(q)->retries; }
static const olm_histogram *reconcile_seconds(const kube_workqueue *q) { return &kube_workqueue_get_stats(q)->reconcile_seconds; }
static const olm_histogram *queue_seconds(const kube_workqueue *q) { return &kube_workqueue_get_stats(q)->queue_seconds; }
static const olm_histogram *work_seconds(const kube_workqueue *q) { return &kube_workqueue_get_stats(q)->work_seconds; }

int kube_workqueues_render_metrics(const kube_workqueue *const *qs, const char *const *cs, size_t n, strbuf *out)
{
    if (n == 0)
        return 0;
    int rc = olm_metrics_header(out, "controller_runtime_reconcile_total",
                                "Total number of reconciliations per controller", "counter");
    for (size_t i = 0; i < n; i++) {
        const kube_workqueue_stats *st = kube_workqueue_get_stats(qs[i]);
        rc |= result_line(out, cs[i], "error", errors_of(qs[i]));
        rc |= result_line(out, cs[i], "requeue", 0); /* a C reconcile asks for requeue_after, never a bare requeue */
        rc |= result_line(out, cs[i], "requeue_after", st->results[KUBE_WQ_REQUEUE_AFTER]);
        rc |= result_line(out, cs[i], "success", st->results[KUBE_WQ_OK]);
    }
    rc |= family(out, "controller_runtime_reconcile_errors_total", "counter",
                 "Total number of reconciliation errors per controller", "controller", qs, cs, n, errors, NULL);
    rc |= family(out, "controller_runtime_terminal_reconcile_errors_total", "counter",
                 "Total number of terminal reconciliation errors per controller", "controller", qs, cs, n, terminal,
                 NULL);
    rc |= family(out, "controller_runtime_reconcile_panics_total", "counter",
                 "Total number of reconciliation panics per controller", "controller", qs, cs, n, zero, NULL);
    rc |= family(out, "controller_runtime_reconcile_time_seconds", "histogram",
                 "Length of time per reconciliation per controller", "controller", qs, cs, n, NULL, reconcile_seconds);
    rc |= family(out, "controller_runtime_max_concurrent_reconciles", "gauge",
                 "Maximum number of concurrent reconciles per controller", "controller", qs, cs, n, concurrency, NULL);
    rc |= family(out, "controller_runtime_active_workers", "gauge", "Number of currently used workers per controller",
                 "controller", qs, cs, n, running, NULL);
    rc |= family(out, "workqueue_depth", "gauge", "Current depth of workqueue", "name", qs, cs, n, depth, NULL);
    rc |= family(out, "workqueue_adds_total", "counter", "Total number of adds handled by workqueue", "name", qs, cs,
                 n, adds, NULL);
    rc |= family(out, "workqueue_retries_total", "counter", "Total number of retries handled by workqueue", "name",
                 qs, cs, n, retries, NULL);
    rc |= family(out, "workqueue_queue_duration_seconds", "histogram",
                 "How long in seconds an item stays in workqueue before being requested", "name", qs, cs, n, NULL,
                 queue_seconds);
    rc |= family(out, "workqueue_work_duration_seconds", "histogram",
                 "How long in seconds processing an item from workqueue takes", "name", qs, cs, n, NULL, work_seconds);
    return rc ? -1 : 0;
}

int kube_workqueue_render_metrics(const kube_workqueue *q, const char *c, strbuf *out)
{
    return kube_workqueues_render_metrics(&q, &c, 1, out);
}

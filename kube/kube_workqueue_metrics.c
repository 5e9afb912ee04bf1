/* kube_workqueue_metrics: a queue's counters under controller-runtime's and client-go's metric
 * names, so that upstream's dashboards and alerts work unchanged (see kube_workqueue.h). */
#include "kube_workqueue.h"

/* One series of one family: HELP, TYPE and the sample (or the histogram's lines). */
static int family(strbuf *out, const char *name, const char *type, const char *help, const char *label,
                  const char *value, double v, const olm_histogram *h)
{
    int rc = olm_metrics_header(out, name, help, type);
    return rc | (h ? olm_histogram_render(out, name, label, value, h) : olm_metrics_sample(out, name, label, value, v));
}

/* controller_runtime_reconcile_total{controller="c",result="r"}: two labels, so by hand. */
static int result_line(strbuf *out, const char *controller, const char *result, unsigned long long n)
{
    int rc = strbuf_puts(out, "controller_runtime_reconcile_total{controller=\"");
    rc |= olm_metrics_label_value(out, controller);
    rc |= strbuf_printf(out, "\",result=\"%s\"} %llu\n", result, n);
    return rc;
}

int kube_workqueue_render_metrics(const kube_workqueue *q, const char *c, strbuf *out)
{
    const kube_workqueue_stats *st = kube_workqueue_get_stats(q);
    unsigned long long errors = st->results[KUBE_WQ_ERROR] + st->results[KUBE_WQ_TERMINAL];
    int rc = olm_metrics_header(out, "controller_runtime_reconcile_total",
                                "Total number of reconciliations per controller", "counter");
    rc |= result_line(out, c, "error", errors);
    rc |= result_line(out, c, "requeue", 0); /* a C reconcile asks for requeue_after, never a bare requeue */
    rc |= result_line(out, c, "requeue_after", st->results[KUBE_WQ_REQUEUE_AFTER]);
    rc |= result_line(out, c, "success", st->results[KUBE_WQ_OK]);
    rc |= family(out, "controller_runtime_reconcile_errors_total", "counter",
                 "Total number of reconciliation errors per controller", "controller", c, (double)errors, NULL);
    rc |= family(out, "controller_runtime_terminal_reconcile_errors_total", "counter",
                 "Total number of terminal reconciliation errors per controller", "controller", c,
                 (double)st->results[KUBE_WQ_TERMINAL], NULL);
    rc |= family(out, "controller_runtime_reconcile_panics_total", "counter",
                 "Total number of reconciliation panics per controller", "controller", c, 0, NULL);
    rc |= family(out, "controller_runtime_reconcile_time_seconds", "histogram",
                 "Length of time per reconciliation per controller", "controller", c, 0, &st->reconcile_seconds);
    rc |= family(out, "controller_runtime_max_concurrent_reconciles", "gauge",
                 "Maximum number of concurrent reconciles per controller", "controller", c,
                 kube_workqueue_concurrency(q), NULL);
    rc |= family(out, "controller_runtime_active_workers", "gauge", "Number of currently used workers per controller",
                 "controller", c, kube_workqueue_running(q), NULL);
    rc |= family(out, "workqueue_depth", "gauge", "Current depth of workqueue", "name", c,
                 (double)kube_workqueue_len(q), NULL);
    rc |= family(out, "workqueue_adds_total", "counter", "Total number of adds handled by workqueue", "name", c,
                 (double)st->adds, NULL);
    rc |= family(out, "workqueue_retries_total", "counter", "Total number of retries handled by workqueue", "name", c,
                 (double)st->retries, NULL);
    rc |= family(out, "workqueue_queue_duration_seconds", "histogram",
                 "How long in seconds an item stays in workqueue before being requested", "name", c, 0,
                 &st->queue_seconds);
    rc |= family(out, "workqueue_work_duration_seconds", "histogram",
                 "How long in seconds processing an item from workqueue takes", "name", c, 0, &st->work_seconds);
    return rc ? -1 : 0;
}

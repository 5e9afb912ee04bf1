/* olm_metrics: histograms and escaping for the Prometheus text exposition format. */
#include "olm_metrics.h"

#include <string.h>

void olm_histogram_init(olm_histogram *h, const double *bounds, size_t nbounds)
{
    memset(h, 0, sizeof *h);
    h->bounds = bounds;
    h->nbounds = nbounds < OLM_HISTOGRAM_MAX_BUCKETS ? nbounds : OLM_HISTOGRAM_MAX_BUCKETS;
}

void olm_histogram_observe(olm_histogram *h, double value)
{
    for (size_t i = 0; i < h->nbounds; i++)
        if (value <= h->bounds[i]) {
            h->counts[i]++;
            break;
        }
    h->count++;
    h->sum += value;
}

int olm_metrics_header(strbuf *out, const char *name, const char *help, const char *type)
{
    return strbuf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type) < 0 ? -1 : 0;
}

int olm_metrics_label_value(strbuf *out, const char *v)
{
    for (; *v; v++) {
        int rc = (*v == '\\') ? strbuf_puts(out, "\\\\")
                 : (*v == '"') ? strbuf_puts(out, "\\\"")
                 : (*v == '\n') ? strbuf_puts(out, "\\n")
                               : strbuf_putc(out, *v);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* `{label="value"` for a labelled series, "" otherwise: what every line of it starts with. */
static int series_labels(strbuf *labels, const char *label_name, const char *label_value)
{
    if (!label_name)
        return strbuf_puts(labels, "");
    int rc = strbuf_printf(labels, "{%s=\"", label_name);
    rc |= olm_metrics_label_value(labels, label_value ? label_value : "");
    rc |= strbuf_putc(labels, '"');
    return rc;
}

int olm_histogram_render(strbuf *out, const char *name, const char *label_name, const char *label_value,
                         const olm_histogram *h)
{
    strbuf lb = STRBUF_INIT;
    int rc = series_labels(&lb, label_name, label_value);
    const char *l = strbuf_str(&lb);
    const char *open_le = label_name ? "," : "{"; /* le joins the labels or opens the braces */
    const char *close = label_name ? "}" : "";
    unsigned long long cum = 0;
    for (size_t b = 0; b < h->nbounds; b++) {
        cum += h->counts[b];
        rc |= strbuf_printf(out, "%s_bucket%s%sle=\"%g\"} %llu\n", name, l, open_le, h->bounds[b], cum);
    }
    rc |= strbuf_printf(out, "%s_bucket%s%sle=\"+Inf\"} %llu\n", name, l, open_le, h->count);
    rc |= strbuf_printf(out, "%s_sum%s%s %.9g\n", name, l, close, h->sum);
    rc |= strbuf_printf(out, "%s_count%s%s %llu\n", name, l, close, h->count);
    strbuf_free(&lb);
    return rc ? -1 : 0;
}

int olm_metrics_sample(strbuf *out, const char *name, const char *label_name, const char *label_value,
                       double value)
{
    strbuf lb = STRBUF_INIT;
    int rc = series_labels(&lb, label_name, label_value);
    if (label_name)
        rc |= strbuf_putc(&lb, '}');
    /* %.17g round-trips a double; counters and gauges below 2^53 print as integers. */
    rc |= strbuf_printf(out, "%s%s %.17g\n", name, strbuf_str(&lb), value) < 0;
    strbuf_free(&lb);
    return rc ? -1 : 0;
}

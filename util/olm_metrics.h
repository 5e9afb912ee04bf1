/* olm_metrics: pieces of the Prometheus text exposition format both daemons render.
 *
 * Histograms keep non-cumulative counts per bucket and render them cumulatively, with the
 * implicit +Inf bucket equal to the count, as the format requires.  Nothing here locks:
 * the owner serialises observe and render (a mutex, or one loop thread). */
#ifndef OLMV1_OLM_METRICS_H
#define OLMV1_OLM_METRICS_H

#include <stddef.h>

#include "strbuf.h"

/* controller-runtime's reconcile_time_seconds has 40 buckets. */
#define OLM_HISTOGRAM_MAX_BUCKETS 48

typedef struct olm_histogram {
    const double *bounds; /* ascending upper bounds, borrowed (static tables) */
    size_t nbounds;       /* at most OLM_HISTOGRAM_MAX_BUCKETS */
    unsigned long long counts[OLM_HISTOGRAM_MAX_BUCKETS];
    unsigned long long count;
    double sum;
} olm_histogram;

/* Zeroes h and sets its bounds (nbounds is clamped to OLM_HISTOGRAM_MAX_BUCKETS). */
void olm_histogram_init(olm_histogram *h, const double *bounds, size_t nbounds);
void olm_histogram_observe(olm_histogram *h, double value);

/* "# HELP name help\n# TYPE name type\n". */
int olm_metrics_header(strbuf *out, const char *name, const char *help, const char *type);
/* A label value escaped as the format requires (\\, \", \n). */
int olm_metrics_label_value(strbuf *out, const char *value);
/* The _bucket, _sum and _count lines of one series; label_name NULL for an unlabelled one.
 * Each returns 0, or -1 when out of memory. */
int olm_histogram_render(strbuf *out, const char *name, const char *label_name, const char *label_value,
                         const olm_histogram *h);
/* One sample line `name{label_name="label_value"} value` (label_name NULL: `name value`). */
int olm_metrics_sample(strbuf *out, const char *name, const char *label_name, const char *label_value,
                       double value);

#endif

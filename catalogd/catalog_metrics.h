/* catalog_metrics: catalogd's Prometheus metrics, rendered in the text exposition format.
 *
 * Exposed (only series that have been observed appear):
 *   catalogd_http_request_duration_seconds{code}   histogram, upstream's buckets (§4.4)
 *   catalogd_catalogs_served                        gauge, passed in at render time
 *   catalogd_unpack_duration_seconds{catalog}      histogram of successful unpack+store runs
 *   catalogd_unpack_failures_total{catalog}        counter of failed unpack+store runs
 *   catalogd_catalog_model_problems{catalog}       gauge: opm invariants the served content
 *                                                  breaks (never fatal; the WARN log lists them)
 *
 * Threads: not synchronised; the server owns one and touches it on its loop thread only.
 * The reconciler reports unpack results from its after-work callback (also the loop thread). */
#ifndef OLM_CATALOG_METRICS_H
#define OLM_CATALOG_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

typedef struct catalog_metrics catalog_metrics;

catalog_metrics *catalog_metrics_new(void); /* NULL when out of memory; free with _free */
void catalog_metrics_free(catalog_metrics *m);

/* Each returns 0, or -1 when out of memory (the observation is then dropped). */
int catalog_metrics_observe_http(catalog_metrics *m, int code, double seconds);
int catalog_metrics_observe_unpack(catalog_metrics *m, const char *catalog, double seconds, bool ok);
/* The model problems of the content just stored for `catalog` (fbc_validate's count). */
int catalog_metrics_set_model_problems(catalog_metrics *m, const char *catalog, unsigned problems);

/* Appends the exposition text to `out`. */
int catalog_metrics_render(const catalog_metrics *m, size_t catalogs_served, strbuf *out);

#endif

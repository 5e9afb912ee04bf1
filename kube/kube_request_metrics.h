/* kube_request_metrics: client-go's rest_client_requests_total{code,method,host}, counted for
 * every request to the API server that a kube_client (kube_transport.c) or a kube_uvcurl
 * (watches, Lease renewals, reviews) finishes.
 *
 * code is the HTTP status, or "<error>" when no response arrived (client-go's spelling);
 * method is upper case; host is the URL's host:port.  At most KUBE_REQUEST_METRICS_MAX
 * series are kept: a further one is dropped (there are only a few hosts and codes).
 *
 * Threads: observe from any thread (a mutex); render from any thread. */
#ifndef OLM_KUBE_REQUEST_METRICS_H
#define OLM_KUBE_REQUEST_METRICS_H

#include <curl/curl.h>

#include "strbuf.h"

#define KUBE_REQUEST_METRICS_MAX 256

typedef struct kube_request_metrics kube_request_metrics;

kube_request_metrics *kube_request_metrics_new(void); /* NULL when out of memory */
void kube_request_metrics_free(kube_request_metrics *m);

/* code 0: no response.  m NULL: nothing. */
void kube_request_metrics_observe(kube_request_metrics *m, const char *method, const char *host, long code);
/* The same, read from a finished easy handle (method, effective URL, response code). */
void kube_request_metrics_observe_easy(kube_request_metrics *m, CURL *easy, CURLcode result);

/* Appends the series (with HELP/TYPE even when there is none yet); 0, or -1 out of memory. */
int kube_request_metrics_render(kube_request_metrics *m, strbuf *out);

#endif

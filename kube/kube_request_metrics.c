/* kube_request_metrics: see the header. */
#include "kube_request_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "olm_metrics.h"

typedef struct series {
    char method[16];
    char host[256];
    long code;
    unsigned long long n;
} series;

struct kube_request_metrics {
    uv_mutex_t lock; /* observations come from the loop and from every pool thread */
    series s[KUBE_REQUEST_METRICS_MAX];
    size_t n;
};

kube_request_metrics *kube_request_metrics_new(void)
{
    kube_request_metrics *m = calloc(1, sizeof *m);
    if (m && uv_mutex_init(&m->lock) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void kube_request_metrics_free(kube_request_metrics *m)
{
    if (!m)
        return;
    uv_mutex_destroy(&m->lock);
    free(m);
}

void kube_request_metrics_observe(kube_request_metrics *m, const char *method, const char *host, long code)
{
    if (!m)
        return;
    uv_mutex_lock(&m->lock);
    size_t i = 0;
    while (i < m->n && !(m->s[i].code == code && strcmp(m->s[i].method, method) == 0 &&
                         strcmp(m->s[i].host, host) == 0))
        i++;
    if (i == m->n && m->n < KUBE_REQUEST_METRICS_MAX) {
        series *s = &m->s[m->n++];
        snprintf(s->method, sizeof s->method, "%s", method);
        snprintf(s->host, sizeof s->host, "%s", host);
        s->code = code;
    }
    if (i < m->n)
        m->s[i].n++;
    uv_mutex_unlock(&m->lock);
}

/* "https://h:6443/api/..." -> "h:6443" (userinfo never appears in a kubeconfig server). */
static void url_host(const char *url, char *out, size_t outsz)
{
    const char *p = url ? strstr(url, "://") : NULL;
    p = p ? p + 3 : (url ? url : "");
    size_t n = strcspn(p, "/?#");
    snprintf(out, outsz, "%.*s", (int)(n < outsz ? n : outsz - 1), p);
}

void kube_request_metrics_observe_easy(kube_request_metrics *m, CURL *easy, CURLcode result)
{
    if (!m)
        return;
    char *url = NULL, *method = NULL;
    long code = 0;
    curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url);
    curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_METHOD, &method);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    char host[256];
    url_host(url, host, sizeof host);
    (void)result; /* a watch cut off after its headers still had a response: its status counts */
    kube_request_metrics_observe(m, method ? method : "GET", host, code);
}

int kube_request_metrics_render(kube_request_metrics *m, strbuf *out)
{
    int rc = olm_metrics_header(out, "rest_client_requests_total",
                                "Number of HTTP requests, partitioned by status code, method, and host.", "counter");
    uv_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n; i++) {
        const series *s = &m->s[i];
        char code[24];
        if (s->code > 0)
            snprintf(code, sizeof code, "%ld", s->code);
        else
            snprintf(code, sizeof code, "<error>");
        rc |= strbuf_printf(out, "rest_client_requests_total{code=\"%s\",host=\"", code);
        rc |= olm_metrics_label_value(out, s->host);
        rc |= strbuf_printf(out, "\",method=\"%s\"} %llu\n", s->method, s->n);
    }
    uv_mutex_unlock(&m->lock);
    return rc ? -1 : 0;
}

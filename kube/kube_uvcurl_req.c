/* kube_uvcurl_req: buffered async API requests (see kube_uvcurl_req.h). */
#include "kube_uvcurl_req.h"

#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "strbuf.h"

struct kube_uvcurl_req {
    kube_uvcurl *uc;
    CURL *easy;
    struct curl_slist *headers;
    char *body;        /* request body (curl does not copy POSTFIELDS) */
    strbuf resp;
    int alloc_failed;  /* set by the write callback; the transfer is then aborted */
    kube_uvcurl_req_cb cb;
    void *data;
};

CURL *kube_uvcurl_easy_new(const kube_config *cfg, const char *path_and_query,
                           struct curl_slist **headers, olm_error *err)
{
    strbuf url = STRBUF_INIT;
    if (strbuf_puts(&url, cfg->server) != 0 || strbuf_puts(&url, path_and_query) != 0) {
        strbuf_free(&url);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    CURL *h = curl_easy_init();
    if (!h) {
        strbuf_free(&url);
        olm_error_set(err, "curl_easy_init failed");
        return NULL;
    }
    struct curl_slist *hl = curl_slist_append(*headers, "Accept: application/json");
    if (!hl) {
        strbuf_free(&url);
        curl_easy_cleanup(h);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    *headers = hl;
    if (kube_curl_apply(h, cfg, headers, err) != 0) {
        strbuf_free(&url);
        curl_easy_cleanup(h);
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_URL, strbuf_str(&url)); /* curl copies the string */
    strbuf_free(&url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *headers);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* Over https libcurl speaks HTTP/2 to the apiserver: transfers started together (many
     * watches) wait for the one connection being set up and become streams on it, instead
     * of each opening a connection of its own. */
    curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    return h;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    kube_uvcurl_req *r = userdata;
    if (strbuf_append(&r->resp, ptr, size * nmemb) != 0) {
        r->alloc_failed = 1;
        return 0;
    }
    return size * nmemb;
}

static void req_free(kube_uvcurl_req *r)
{
    curl_easy_cleanup(r->easy);
    http_headers_free(r->headers);
    free(r->body);
    strbuf_free(&r->resp);
    free(r);
}

static void on_done(CURL *easy, CURLcode res, void *data)
{
    kube_uvcurl_req *r = data;
    olm_error err;
    olm_error_clear(&err);
    long status = 0;
    if (r->alloc_failed)
        olm_error_set(&err, "out of memory reading the response");
    else if (res != CURLE_OK)
        olm_error_set(&err, "%s", curl_easy_strerror(res));
    else
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    r->cb(status, strbuf_str(&r->resp), r->resp.len, &err, r->data);
    req_free(r);
}

kube_uvcurl_req *kube_uvcurl_req_start(kube_uvcurl *uc, const kube_config *cfg, const char *method,
                                       const char *path_and_query, const char *body, long timeout_ms,
                                       kube_uvcurl_req_cb cb, void *data, olm_error *err)
{
    kube_uvcurl_req *r = calloc(1, sizeof *r);
    if (!r) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    r->uc = uc;
    r->cb = cb;
    r->data = data;
    if (body) {
        r->body = strdup(body);
        struct curl_slist *hl = r->body ? curl_slist_append(NULL, "Content-Type: application/json") : NULL;
        if (!hl) {
            free(r->body);
            free(r);
            olm_error_set(err, "out of memory");
            return NULL;
        }
        r->headers = hl;
    }
    r->easy = kube_uvcurl_easy_new(cfg, path_and_query, &r->headers, err);
    if (!r->easy) {
        http_headers_free(r->headers);
        free(r->body);
        free(r);
        return NULL;
    }
    curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, method);
    if (r->body) {
        curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
        curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(r->body));
    } else if (strcmp(method, "GET") != 0) {
        /* e.g. DELETE without body: no request body, but keep the verb. */
        curl_easy_setopt(r->easy, CURLOPT_NOBODY, 0L);
    }
    if (timeout_ms > 0)
        curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
    if (kube_uvcurl_add(uc, r->easy, on_done, r, err) != 0) {
        req_free(r);
        return NULL;
    }
    return r;
}

void kube_uvcurl_req_cancel(kube_uvcurl_req *r)
{
    kube_uvcurl_remove(r->uc, r->easy);
    req_free(r);
}

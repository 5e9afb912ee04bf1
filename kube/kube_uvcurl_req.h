/* kube_uvcurl_req: one buffered API-server request on a kube_uvcurl (LIST pages,
 * Lease GET/POST/PUT).  The whole response body is collected, then one callback
 * reports HTTP status and body.  Streaming responses (watches) set up their own
 * easy handle with kube_uvcurl_easy_new and a write callback instead.
 *
 * Thread affinity: loop thread only. */
#ifndef OLM_KUBE_UVCURL_REQ_H
#define OLM_KUBE_UVCURL_REQ_H

#include <curl/curl.h>

#include "kube_config.h"
#include "kube_uvcurl.h"
#include "olm_error.h"

typedef struct kube_uvcurl_req kube_uvcurl_req;

/* Runs on the loop thread once.  On a transport failure `status` is 0 and `err`
 * says why; otherwise `status` is the HTTP status and `body` (NUL-terminated,
 * borrowed for the duration of the call) the response.  The request is freed
 * right after the callback returns. */
typedef void (*kube_uvcurl_req_cb)(long status, const char *body, size_t len,
                                   const olm_error *err, void *data);

/* A new easy handle for cfg->server + `path_and_query`, with TLS/auth from
 * kube_curl_apply, "Accept: application/json" and the headers list in *headers
 * (caller frees it with curl_slist_free_all after the transfer, and the easy
 * handle with curl_easy_cleanup).  `cfg` is borrowed only during the call. */
CURL *kube_uvcurl_easy_new(const kube_config *cfg, const char *path_and_query,
                           struct curl_slist **headers, olm_error *err);

/* Starts `method` (GET, POST, PUT, DELETE) on `path_and_query`; `body` (may be NULL)
 * is copied and sent as application/json.  `timeout_ms` 0 means no overall timeout.
 * Returns the request (owned by the library, valid until the callback ran or it
 * was cancelled) or NULL with err set; the callback never runs on failure here. */
kube_uvcurl_req *kube_uvcurl_req_start(kube_uvcurl *uc, const kube_config *cfg, const char *method,
                                       const char *path_and_query, const char *body, long timeout_ms,
                                       kube_uvcurl_req_cb cb, void *data, olm_error *err);

/* Stops a request that has not completed; its callback will not run. */
void kube_uvcurl_req_cancel(kube_uvcurl_req *req);

#endif

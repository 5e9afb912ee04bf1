/* kube_uvcurl: drives a libcurl multi handle from a libuv loop.
 *
 * curl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION → one uv_poll_t
 * per socket) and when to wake it up (CURLMOPT_TIMERFUNCTION → one uv_timer_t);
 * libuv tells curl when a socket is ready (curl_multi_socket_action).  Finished
 * transfers are reported through a per-transfer callback.  Anything that needs
 * asynchronous HTTP on the loop (watches, Lease renewals, catalog fetches) shares
 * one kube_uvcurl, so all of it runs on one thread without blocking.
 *
 * Thread affinity: every function here is loop thread only. */
#ifndef OLM_KUBE_UVCURL_H
#define OLM_KUBE_UVCURL_H

#include <curl/curl.h>
#include <uv.h>

#include "olm_error.h"

typedef struct kube_uvcurl kube_uvcurl;

/* Called on the loop thread when a transfer finished (or failed).  The easy handle
 * has already been removed from the multi handle: the callback owns it again and
 * may clean it up or add it back (kube_uvcurl_add is allowed from here). */
typedef void (*kube_uvcurl_done_cb)(CURL *easy, CURLcode result, void *data);

/* A new multi handle bound to `loop`.  Returns NULL with err set on failure.
 * Free with kube_uvcurl_close. */
kube_uvcurl *kube_uvcurl_new(uv_loop_t *loop, olm_error *err);

/* Starts `easy` (fully configured by the caller).  The easy handle stays owned by
 * the caller; kube_uvcurl only borrows it until `cb` runs or it is removed.
 * CURLOPT_PRIVATE of `easy` is used internally and must not be set by the caller. */
int kube_uvcurl_add(kube_uvcurl *uc, CURL *easy, kube_uvcurl_done_cb cb, void *data, olm_error *err);

/* Cancels a running transfer without calling its callback; the caller owns `easy`
 * again.  No-op if `easy` is not running.  Must not be called from inside a curl
 * callback (write/header/progress) of that transfer: abort from there by
 * returning an error value instead. */
void kube_uvcurl_remove(kube_uvcurl *uc, CURL *easy);

/* The loop this multi handle runs on (borrowed). */
uv_loop_t *kube_uvcurl_loop(const kube_uvcurl *uc);

/* Counts every transfer that finishes from now on in `m` (borrowed; NULL stops counting):
 * everything on a kube_uvcurl goes to the API server. */
struct kube_request_metrics;
void kube_uvcurl_set_request_metrics(kube_uvcurl *uc, struct kube_request_metrics *m);

/* Number of transfers in flight. */
unsigned kube_uvcurl_running(const kube_uvcurl *uc);

/* Cancels every transfer still running (their callbacks run with
 * CURLE_ABORTED_BY_CALLBACK so owners can free them), cleans up the multi handle
 * and closes the libuv handles; `closed_cb` (may be NULL) runs once everything is
 * released and `uc` is freed. */
void kube_uvcurl_close(kube_uvcurl *uc, void (*closed_cb)(void *data), void *data);

#endif

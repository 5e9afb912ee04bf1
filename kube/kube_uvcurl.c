/* kube_uvcurl: libcurl multi interface on a libuv loop (see kube_uvcurl.h). */
#include "kube_uvcurl.h"

#include "kube_request_metrics.h"

#include <stdbool.h>
#include <stdlib.h>

/* One per socket curl asked us to watch; curl_multi_assign() ties it to the fd. */
typedef struct uvc_sock {
    uv_poll_t poll;
    curl_socket_t fd;
    struct kube_uvcurl *uc;
    struct uvc_sock *prev, *next;
} uvc_sock;

/* One per transfer in flight; stored as CURLOPT_PRIVATE of the easy handle. */
typedef struct uvc_xfer {
    CURL *easy;
    kube_uvcurl_done_cb cb;
    void *data;
    struct uvc_xfer *prev, *next;
} uvc_xfer;

struct kube_uvcurl {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;
    uvc_sock *socks;
    uvc_xfer *xfers;
    unsigned running;
    /* libuv handles not yet through their close callback (timer + polls): the
     * struct can only be freed once this is 0. */
    unsigned open_handles;
    /* > 0 while we are inside curl_multi_socket_action or dispatching completions:
     * a close requested from a callback must wait until we are back out. */
    int depth;
    bool closing;
    bool close_pending;
    kube_request_metrics *request_metrics; /* borrowed, or NULL */
    void (*closed_cb)(void *data);
    void *closed_data;
};

static void finish_close(kube_uvcurl *uc);

static void handle_closed(uv_handle_t *h)
{
    kube_uvcurl *uc;
    if (h->type == UV_POLL) {
        uvc_sock *s = h->data;
        uc = s->uc;
        free(s);
    } else {
        uc = h->data;
    }
    uc->open_handles--;
    if (uc->closing && uc->open_handles == 0) {
        void (*cb)(void *) = uc->closed_cb;
        void *data = uc->closed_data;
        free(uc);
        if (cb)
            cb(data);
    }
}

static void sock_close(kube_uvcurl *uc, uvc_sock *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        uc->socks = s->next;
    if (s->next)
        s->next->prev = s->prev;
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, handle_closed);
}

static void xfer_unlink(kube_uvcurl *uc, uvc_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        uc->xfers = x->next;
    if (x->next)
        x->next->prev = x->prev;
    uc->running--;
}

/* Reports finished transfers.  The message is copied before the handle is removed
 * because curl_multi_remove_handle invalidates it. */
static void check_info(kube_uvcurl *uc)
{
    CURLMsg *msg;
    int left;
    uc->depth++;
    while (!uc->closing && (msg = curl_multi_info_read(uc->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode res = msg->data.result;
        uvc_xfer *x = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(uc->multi, easy);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        if (!x)
            continue;
        kube_uvcurl_done_cb cb = x->cb;
        void *data = x->data;
        kube_request_metrics_observe_easy(uc->request_metrics, easy, res);
        xfer_unlink(uc, x);
        free(x);
        cb(easy, res, data);
    }
    uc->depth--;
    if (uc->depth == 0 && uc->close_pending)
        finish_close(uc);
}

static void on_timeout(uv_timer_t *t)
{
    kube_uvcurl *uc = t->data;
    int running;
    uc->depth++;
    curl_multi_socket_action(uc->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    uc->depth--;
    check_info(uc);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    uvc_sock *s = p->data;
    kube_uvcurl *uc = s->uc;
    curl_socket_t fd = s->fd; /* s may be closed during socket_action */
    int flags = 0, running;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else {
        if (events & UV_READABLE)
            flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
            flags |= CURL_CSELECT_OUT;
    }
    uc->depth++;
    curl_multi_socket_action(uc->multi, fd, flags, &running);
    uc->depth--;
    check_info(uc);
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    kube_uvcurl *uc = userp;
    uvc_sock *s = socketp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (s) {
            curl_multi_assign(uc->multi, fd, NULL);
            sock_close(uc, s);
        }
        return 0;
    }
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return -1;
        if (uv_poll_init_socket(uc->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->fd = fd;
        s->uc = uc;
        s->poll.data = s;
        uc->open_handles++;
        s->next = uc->socks;
        if (uc->socks)
            uc->socks->prev = s;
        uc->socks = s;
        curl_multi_assign(uc->multi, fd, s);
    }
    int ev = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
        ev |= UV_READABLE;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
        ev |= UV_WRITABLE;
    return uv_poll_start(&s->poll, ev, on_poll) == 0 ? 0 : -1;
}

/* curl asks for a wake-up; calling socket_action from here is not allowed, so a
 * zero timeout becomes a zero-delay libuv timer. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    kube_uvcurl *uc = userp;
    (void)multi;
    if (timeout_ms < 0)
        uv_timer_stop(&uc->timer);
    else
        uv_timer_start(&uc->timer, on_timeout, (uint64_t)timeout_ms, 0);
    return 0;
}

kube_uvcurl *kube_uvcurl_new(uv_loop_t *loop, olm_error *err)
{
    kube_uvcurl *uc = calloc(1, sizeof *uc);
    if (!uc) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    uc->loop = loop;
    uc->multi = curl_multi_init();
    if (!uc->multi) {
        free(uc);
        olm_error_set(err, "curl_multi_init failed");
        return NULL;
    }
    int rc = uv_timer_init(loop, &uc->timer);
    if (rc != 0) {
        curl_multi_cleanup(uc->multi);
        free(uc);
        olm_error_set(err, "uv_timer_init: %s", uv_strerror(rc));
        return NULL;
    }
    uc->timer.data = uc;
    uc->open_handles = 1;
    curl_multi_setopt(uc->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(uc->multi, CURLMOPT_SOCKETDATA, uc);
    curl_multi_setopt(uc->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(uc->multi, CURLMOPT_TIMERDATA, uc);
    return uc;
}

int kube_uvcurl_add(kube_uvcurl *uc, CURL *easy, kube_uvcurl_done_cb cb, void *data, olm_error *err)
{
    if (uc->closing)
        return olm_error_set(err, "HTTP client is shutting down");
    uvc_xfer *x = calloc(1, sizeof *x);
    if (!x)
        return olm_error_set(err, "out of memory");
    x->easy = easy;
    x->cb = cb;
    x->data = data;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, x);
    CURLMcode mc = curl_multi_add_handle(uc->multi, easy);
    if (mc != CURLM_OK) {
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        free(x);
        return olm_error_set(err, "curl_multi_add_handle: %s", curl_multi_strerror(mc));
    }
    x->next = uc->xfers;
    if (uc->xfers)
        uc->xfers->prev = x;
    uc->xfers = x;
    uc->running++;
    return 0;
}

void kube_uvcurl_remove(kube_uvcurl *uc, CURL *easy)
{
    uvc_xfer *x = NULL;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
    if (!x)
        return;
    curl_multi_remove_handle(uc->multi, easy);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
    xfer_unlink(uc, x);
    free(x);
}

uv_loop_t *kube_uvcurl_loop(const kube_uvcurl *uc)
{
    return uc->loop;
}

void kube_uvcurl_set_request_metrics(kube_uvcurl *uc, kube_request_metrics *m)
{
    uc->request_metrics = m;
}

unsigned kube_uvcurl_running(const kube_uvcurl *uc)
{
    return uc->running;
}

static void finish_close(kube_uvcurl *uc)
{
    uc->close_pending = false;
    /* Owners get their handles back so they can free them. */
    while (uc->xfers) {
        uvc_xfer *x = uc->xfers;
        CURL *easy = x->easy;
        kube_uvcurl_done_cb cb = x->cb;
        void *data = x->data;
        curl_multi_remove_handle(uc->multi, easy);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        xfer_unlink(uc, x);
        free(x);
        cb(easy, CURLE_ABORTED_BY_CALLBACK, data);
    }
    curl_multi_cleanup(uc->multi);
    uc->multi = NULL;
    /* Sockets curl kept in its connection cache without a REMOVE. */
    while (uc->socks)
        sock_close(uc, uc->socks);
    uv_timer_stop(&uc->timer);
    uv_close((uv_handle_t *)&uc->timer, handle_closed);
}

void kube_uvcurl_close(kube_uvcurl *uc, void (*closed_cb)(void *data), void *data)
{
    if (uc->closing)
        return;
    uc->closing = true;
    uc->closed_cb = closed_cb;
    uc->closed_data = data;
    if (uc->depth > 0)
        uc->close_pending = true;
    else
        finish_close(uc);
}

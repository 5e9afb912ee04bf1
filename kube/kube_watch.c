/* kube_watch: list, watch, resume, relist (see kube_watch.h). */
#include "kube_watch.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "kube_transport.h"
#include "kube_uvcurl_req.h"
#include "kube_watch_stream.h"
#include "strbuf.h"

#define ERR_BODY_MAX 65536

/* Why the write callback stopped a watch transfer early. */
enum watch_abort { ABORT_NONE, ABORT_RELIST, ABORT_ERROR };
/* What the back-off timer does when it fires. */
enum retry_kind { RETRY_LIST, RETRY_WATCH };

struct kube_watch {
    kube_uvcurl *uc;
    const kube_config *cfg;
    char *path, *label_selector, *field_selector;
    unsigned timeout_seconds, page_size;
    uint64_t backoff_initial, backoff_max, backoff_next;
    kube_watch_handlers h;
    void *data;

    /* key → object as last reported to the handlers; what a relist is compared to. */
    json_t *known;
    /* key → object collected over the pages of a LIST in progress. */
    json_t *listing;
    char *rv;
    char *continue_token;
    unsigned lists;
    bool synced;
    bool keep_metadata_only;
    bool drop_managed_fields;
    void (*transform)(json_t *obj);

    kube_uvcurl_req *list_req;

    CURL *watch_easy;
    struct curl_slist *watch_headers;
    kube_watch_stream stream;
    long watch_status;  /* HTTP status of the running watch, 0 until known */
    long failed_status; /* HTTP status of the last failed LIST/WATCH (kube_watch_last_status) */
    strbuf err_body;    /* body of a non-200 watch response */
    enum watch_abort abort;
    olm_error abort_err;
    bool abort_transient; /* ABORT_ERROR: an ERROR event of a status the watch gets past */
    bool error_transient; /* what on_error is told now (kube_watch_error_is_transient) */
    bool got_event;     /* the running watch delivered at least one event */

    uv_timer_t timer;   /* back-off retries, then the deferred teardown */
    enum retry_kind retry;
    bool stopped;
    void (*closed_cb)(void *data);
    void *closed_data;
};

static void start_list(kube_watch *w);
static void start_watch(kube_watch *w);

char *kube_object_key(const json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    if (!name || !*name)
        return NULL;
    char *key = NULL;
    if (ns && *ns) {
        if (asprintf(&key, "%s/%s", ns, name) < 0)
            return NULL;
        return key;
    }
    return strdup(name);
}

static const char *object_rv(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* Tells on_error; `transient`: a failure the watch gets past by itself by retrying or listing
 * again (kube_watch_error_is_transient), not one that needs someone to act. */
static void report_error(kube_watch *w, bool transient, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report_error(kube_watch *w, bool transient, const char *fmt, ...)
{
    if (!w->h.on_error || w->stopped)
        return;
    olm_error e;
    va_list ap;
    va_start(ap, fmt);
    olm_error_setv(&e, fmt, ap);
    va_end(ap);
    olm_error_wrap(&e, "watch %s", w->path);
    w->error_transient = transient;
    w->h.on_error(e.msg, w->data);
    w->error_transient = false;
}

bool kube_watch_status_is_transient(long status)
{
    return status == 0 || status == 408 || status == 410 || status == 429 || (status >= 500 && status <= 599);
}

static int set_rv(kube_watch *w, const char *rv)
{
    if (!rv || !*rv)
        return 0;
    char *copy = strdup(rv);
    if (!copy)
        return -1;
    free(w->rv);
    w->rv = copy;
    return 0;
}

static void on_retry(uv_timer_t *t)
{
    kube_watch *w = t->data;
    if (w->stopped)
        return;
    if (w->retry == RETRY_WATCH && w->rv && *w->rv)
        start_watch(w);
    else
        start_list(w);
}

/* Retries after the current back-off delay, doubling it for next time. */
static void retry_later(kube_watch *w, enum retry_kind kind)
{
    if (w->stopped)
        return;
    uint64_t d = w->backoff_next;
    w->backoff_next = d * 2 > w->backoff_max ? w->backoff_max : d * 2;
    w->retry = kind;
    uv_timer_start(&w->timer, on_retry, d, 0);
}

/* ---------------------------------------------------------------- LIST */

/* drop_managed_fields and transform (kube_watch_options): `obj` is the watch's own, fresh
 * from the parser. */
static void trim(const kube_watch *w, json_t *obj)
{
    if (w->drop_managed_fields)
        json_object_del(json_object_get(obj, "metadata"), "managedFields");
    if (w->transform)
        w->transform(obj);
}

static void emit(kube_watch *w, kube_watch_event_type t, json_t *obj)
{
    if (!w->stopped)
        w->h.on_event(t, obj, w->data);
}

/* What `known` keeps of `obj` (a new reference): the object, or with keep_metadata_only
 * its identity (kube_watch_options).  NULL on out of memory. */
static json_t *keep(const kube_watch *w, json_t *obj)
{
    if (!w->keep_metadata_only)
        return json_incref(obj);
    static const char *const top[] = {"apiVersion", "kind"};
    static const char *const meta[] = {"name", "namespace", "uid", "labels", "resourceVersion"};
    json_t *k = json_object(), *md = json_object(), *omd = json_object_get(obj, "metadata");
    if (!k || !md || json_object_set(k, "metadata", md) != 0) {
        json_decref(k);
        json_decref(md);
        return NULL;
    }
    json_decref(md);
    for (size_t i = 0; i < sizeof top / sizeof *top; i++)
        if (json_object_get(obj, top[i]))
            json_object_set(k, top[i], json_object_get(obj, top[i]));
    for (size_t i = 0; i < sizeof meta / sizeof *meta; i++)
        if (json_object_get(omd, meta[i]))
            json_object_set(md, meta[i], json_object_get(omd, meta[i]));
    return k;
}

/* Compares the fresh LIST with what was reported and reports the difference. */
static void apply_listing(kube_watch *w)
{
    const char *key;
    json_t *obj;
    json_t *listing = w->listing;
    w->listing = NULL;
    json_object_foreach(w->known, key, obj) {
        if (!json_object_get(listing, key))
            emit(w, KUBE_WATCH_DELETED, obj);
    }
    json_object_foreach(listing, key, obj) {
        json_t *old = json_object_get(w->known, key);
        if (!old)
            emit(w, KUBE_WATCH_ADDED, obj);
        else if (!object_rv(old) || !object_rv(obj) || strcmp(object_rv(old), object_rv(obj)) != 0)
            emit(w, KUBE_WATCH_MODIFIED, obj);
    }
    json_decref(w->known);
    w->known = listing;
    if (w->keep_metadata_only) { /* the events are out: from now on only what a relist needs */
        json_object_foreach(listing, key, obj) {
            json_t *k = keep(w, obj);
            if (k)
                json_object_set_new(listing, key, k); /* same key: the iteration goes on */
        }
    }
    w->synced = true;
    if (w->h.on_synced && !w->stopped)
        w->h.on_synced(w->data);
}

static int append_selectors(kube_watch *w, strbuf *q)
{
    const char *names[2] = {"labelSelector", "fieldSelector"};
    const char *vals[2] = {w->label_selector, w->field_selector};
    for (int i = 0; i < 2; i++) {
        if (!vals[i])
            continue;
        char *esc = curl_easy_escape(NULL, vals[i], 0);
        if (!esc)
            return -1;
        int rc = strbuf_printf(q, "&%s=%s", names[i], esc);
        curl_free(esc);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static void on_list_page(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_watch *w = data;
    w->list_req = NULL; /* freed by kube_uvcurl_req after we return */
    if (w->stopped)
        return;
    w->failed_status = status == 200 ? 0 : status;
    if (status == 0) {
        report_error(w, true, "LIST failed: %s", err->msg);
        retry_later(w, RETRY_LIST);
        return;
    }
    if (status == 410 && w->continue_token) {
        /* The continue token expired between pages: start the LIST over. */
        report_error(w, true, "LIST continue token expired; listing again");
        start_list(w);
        return;
    }
    json_error_t je;
    json_t *doc = status == 200 ? json_loadb(body, len, 0, &je) : NULL;
    json_t *items = json_object_get(doc, "items");
    if (!doc || !json_is_array(items)) {
        if (status != 200) { /* in the REST calls' words: the Status message, the code, a hint */
            olm_error e;
            kube_status_error(status, body, len, "LIST", w->path, &e);
            report_error(w, kube_watch_status_is_transient(status), "%s", e.msg);
        } else {
            report_error(w, false, "LIST returned HTTP %ld: %.300s", status, body);
        }
        json_decref(doc);
        retry_later(w, RETRY_LIST);
        return;
    }
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        trim(w, it);
        char *key = kube_object_key(it);
        if (!key || json_object_set(w->listing, key, it) != 0) {
            free(key);
            json_decref(doc);
            report_error(w, false, "LIST item without metadata.name, or out of memory");
            retry_later(w, RETRY_LIST);
            return;
        }
        free(key);
    }
    json_t *md = json_object_get(doc, "metadata");
    const char *cont = json_string_value(json_object_get(md, "continue"));
    free(w->continue_token);
    w->continue_token = NULL;
    if (cont && *cont) {
        w->continue_token = strdup(cont);
        json_decref(doc);
        if (!w->continue_token) {
            report_error(w, false, "out of memory");
            retry_later(w, RETRY_LIST);
            return;
        }
        start_list(w);
        return;
    }
    int rc = set_rv(w, json_string_value(json_object_get(md, "resourceVersion")));
    json_decref(doc);
    if (rc != 0) {
        report_error(w, false, "out of memory");
        retry_later(w, RETRY_LIST);
        return;
    }
    apply_listing(w);
    if (w->stopped)
        return;
    w->backoff_next = w->backoff_initial;
    start_watch(w);
}

/* Starts the first page of a LIST, or the next one when continue_token is set. */
static void start_list(kube_watch *w)
{
    if (w->stopped)
        return;
    olm_error err;
    strbuf q = STRBUF_INIT;
    if (!w->continue_token) {
        json_decref(w->listing);
        w->listing = json_object();
        w->lists++;
    }
    int rc = w->listing ? strbuf_printf(&q, "%s?limit=%u", w->path, w->page_size) : -1;
    if (rc == 0 && w->continue_token) {
        char *esc = curl_easy_escape(NULL, w->continue_token, 0);
        rc = esc ? strbuf_printf(&q, "&continue=%s", esc) : -1;
        curl_free(esc);
    }
    if (rc == 0)
        rc = append_selectors(w, &q);
    if (rc != 0) {
        strbuf_free(&q);
        report_error(w, false, "out of memory");
        retry_later(w, RETRY_LIST);
        return;
    }
    w->list_req = kube_uvcurl_req_start(w->uc, w->cfg, "GET", strbuf_str(&q), NULL, 60000, on_list_page,
                                        w, &err);
    strbuf_free(&q);
    if (!w->list_req) {
        report_error(w, false, "LIST: %s", err.msg);
        retry_later(w, RETRY_LIST);
    }
}

/* ---------------------------------------------------------------- WATCH */

static int on_stream_event(const char *type, json_t *obj, void *data)
{
    kube_watch *w = data;
    if (strcmp(type, "ERROR") == 0) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *msg = json_string_value(json_object_get(obj, "message"));
        if (code == 410) {
            w->abort = ABORT_RELIST;
        } else {
            w->abort = ABORT_ERROR;
            w->abort_transient = kube_watch_status_is_transient((long)code);
            olm_error_set(&w->abort_err, "ERROR event (code %lld): %s", (long long)code, msg ? msg : "");
        }
        return 1;
    }
    w->got_event = true;
    if (set_rv(w, object_rv(obj)) != 0) {
        w->abort = ABORT_ERROR;
        olm_error_set(&w->abort_err, "out of memory");
        return 1;
    }
    if (strcmp(type, "BOOKMARK") == 0)
        return 0;
    kube_watch_event_type t;
    if (strcmp(type, "ADDED") == 0)
        t = KUBE_WATCH_ADDED;
    else if (strcmp(type, "MODIFIED") == 0)
        t = KUBE_WATCH_MODIFIED;
    else if (strcmp(type, "DELETED") == 0)
        t = KUBE_WATCH_DELETED;
    else
        return 0; /* unknown event types are skipped, as client-go does */
    trim(w, obj);
    char *key = kube_object_key(obj);
    int rc = !key ? -1 : t == KUBE_WATCH_DELETED ? (json_object_del(w->known, key), 0)
                                                 : json_object_set_new(w->known, key, keep(w, obj));
    free(key);
    if (rc != 0) {
        w->abort = ABORT_ERROR;
        olm_error_set(&w->abort_err, "%s event without metadata.name, or out of memory", type);
        return 1;
    }
    emit(w, t, obj);
    return w->stopped ? 1 : 0;
}

static size_t on_watch_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    kube_watch *w = userdata;
    size_t n = size * nmemb;
    if (w->stopped)
        return 0;
    if (w->watch_status == 0)
        curl_easy_getinfo(w->watch_easy, CURLINFO_RESPONSE_CODE, &w->watch_status);
    if (w->watch_status != 200) {
        size_t room = ERR_BODY_MAX - w->err_body.len;
        strbuf_append(&w->err_body, ptr, n < room ? n : room); /* best effort: only for the message */
        return n;
    }
    olm_error err;
    int rc = kube_watch_stream_feed(&w->stream, ptr, n, &err);
    if (rc == -1) {
        w->abort = ABORT_ERROR;
        w->abort_err = err;
    }
    return rc == 0 ? n : 0;
}

static void watch_cleanup(kube_watch *w)
{
    curl_easy_cleanup(w->watch_easy);
    http_headers_free(w->watch_headers);
    w->watch_easy = NULL;
    w->watch_headers = NULL;
}

static void on_watch_done(CURL *easy, CURLcode res, void *data)
{
    kube_watch *w = data;
    long status = w->watch_status;
    if (status == 0)
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    watch_cleanup(w);
    if (w->stopped)
        return;
    w->failed_status = status == 200 ? 0 : status;
    if (w->abort == ABORT_RELIST || status == 410) {
        report_error(w, true, "resourceVersion %s is too old (410 Gone); listing again", w->rv);
        start_list(w);
    } else if (w->abort == ABORT_ERROR) {
        report_error(w, w->abort_transient, "%s", w->abort_err.msg);
        retry_later(w, RETRY_WATCH);
    } else if (res != CURLE_OK) {
        report_error(w, true, "connection failed: %s", curl_easy_strerror(res));
        retry_later(w, RETRY_WATCH);
    } else if (status != 200) {
        /* e.g. "<Status message> (HTTP 429 Too Many Requests): the API server is throttling
         * requests; retry later", as the REST calls say it, not the raw Status JSON */
        olm_error e;
        kube_status_error(status, strbuf_str(&w->err_body), w->err_body.len, "WATCH", w->path, &e);
        report_error(w, kube_watch_status_is_transient(status), "%s", e.msg);
        retry_later(w, RETRY_WATCH);
    } else if (w->got_event) {
        start_watch(w); /* normal end (timeoutSeconds): resume at once */
    } else {
        /* Ended without a single event: do not spin on a server that closes at once. */
        retry_later(w, RETRY_WATCH);
    }
}

static void start_watch(kube_watch *w)
{
    if (w->stopped)
        return;
    olm_error err;
    strbuf q = STRBUF_INIT;
    char *rv = curl_easy_escape(NULL, w->rv ? w->rv : "", 0);
    int rc = rv ? strbuf_printf(&q, "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%u",
                                w->path, rv, w->timeout_seconds)
                : -1;
    curl_free(rv);
    if (rc == 0)
        rc = append_selectors(w, &q);
    if (rc != 0) {
        strbuf_free(&q);
        report_error(w, false, "out of memory");
        retry_later(w, RETRY_WATCH);
        return;
    }
    w->watch_easy = kube_uvcurl_easy_new(w->cfg, strbuf_str(&q), &w->watch_headers, &err);
    strbuf_free(&q);
    if (!w->watch_easy) {
        http_headers_free(w->watch_headers);
        w->watch_headers = NULL;
        report_error(w, false, "%s", err.msg);
        retry_later(w, RETRY_WATCH);
        return;
    }
    curl_easy_setopt(w->watch_easy, CURLOPT_WRITEFUNCTION, on_watch_write);
    curl_easy_setopt(w->watch_easy, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(w->watch_easy, CURLOPT_TCP_KEEPALIVE, 1L);
    /* libcurl gives each transfer a receive buffer of this size for its whole life (16 KiB by
     * default).  A watch lives for hours and mostly idles; thousands of them (namespace-bound
     * installers: one per extension and kind) paid ~16 MiB per 1,000 for buffers.  Events larger
     * than this arrive in pieces, which the stream parser joins. */
    curl_easy_setopt(w->watch_easy, CURLOPT_BUFFERSIZE, 4096L);
    /* Safety net for a connection that dies silently; the server ends the watch
     * itself after timeoutSeconds. */
    curl_easy_setopt(w->watch_easy, CURLOPT_TIMEOUT_MS, (long)(w->timeout_seconds + 60) * 1000L);
    kube_watch_stream_reset(&w->stream);
    strbuf_reset(&w->err_body);
    w->watch_status = 0;
    w->abort = ABORT_NONE;
    w->abort_transient = false;
    w->got_event = false;
    if (kube_uvcurl_add(w->uc, w->watch_easy, on_watch_done, w, &err) != 0) {
        watch_cleanup(w);
        report_error(w, false, "%s", err.msg);
        retry_later(w, RETRY_WATCH);
    }
}

/* ---------------------------------------------------------------- lifecycle */

static char *dup_opt(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

static void watch_free(kube_watch *w)
{
    free(w->path);
    free(w->label_selector);
    free(w->field_selector);
    free(w->rv);
    free(w->continue_token);
    json_decref(w->known);
    json_decref(w->listing);
    kube_watch_stream_free(&w->stream);
    strbuf_free(&w->err_body);
    free(w);
}

kube_watch *kube_watch_new(kube_uvcurl *uc, const kube_config *cfg, const kube_watch_options *opts,
                           const kube_watch_handlers *handlers, void *data, olm_error *err)
{
    if (!opts->path || opts->path[0] != '/' || !handlers->on_event) {
        olm_error_set(err, "watch needs a collection path starting with '/' and an on_event handler");
        return NULL;
    }
    kube_watch *w = calloc(1, sizeof *w);
    if (!w) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    bool oom = false;
    w->uc = uc;
    w->cfg = cfg;
    w->path = dup_opt(opts->path, &oom);
    w->label_selector = dup_opt(opts->label_selector, &oom);
    w->field_selector = dup_opt(opts->field_selector, &oom);
    w->timeout_seconds = opts->timeout_seconds ? opts->timeout_seconds : 300;
    w->page_size = opts->list_page_size ? opts->list_page_size : 500;
    w->backoff_initial = opts->backoff_initial_ms ? opts->backoff_initial_ms : 200;
    w->backoff_max = opts->backoff_max_ms ? opts->backoff_max_ms : 30000;
    if (w->backoff_max < w->backoff_initial)
        w->backoff_max = w->backoff_initial;
    w->backoff_next = w->backoff_initial;
    w->keep_metadata_only = opts->keep_metadata_only;
    w->drop_managed_fields = opts->drop_managed_fields;
    w->transform = opts->transform;
    w->h = *handlers;
    w->data = data;
    w->known = json_object();
    kube_watch_stream_init(&w->stream, on_stream_event, w);
    if (oom || !w->known) {
        olm_error_set(err, "out of memory");
        watch_free(w);
        return NULL;
    }
    /* Last: once initialised the timer can only be released through uv_close. */
    int rc = uv_timer_init(kube_uvcurl_loop(uc), &w->timer);
    if (rc != 0) {
        olm_error_set(err, "uv_timer_init: %s", uv_strerror(rc));
        watch_free(w);
        return NULL;
    }
    w->timer.data = w;
    return w;
}

int kube_watch_start(kube_watch *w, olm_error *err)
{
    if (w->stopped || w->lists > 0)
        return olm_error_set(err, "watch %s already started or stopped", w->path);
    start_list(w);
    return 0;
}

bool kube_watch_has_synced(const kube_watch *w)
{
    return w->synced;
}

const char *kube_watch_resource_version(const kube_watch *w)
{
    return w->rv ? w->rv : "";
}

unsigned kube_watch_list_count(const kube_watch *w)
{
    return w->lists;
}

bool kube_watch_error_is_transient(const kube_watch *w)
{
    return w->error_transient;
}

long kube_watch_last_status(const kube_watch *w)
{
    return w->failed_status;
}

static void on_timer_closed(uv_handle_t *h)
{
    kube_watch *w = h->data;
    void (*cb)(void *) = w->closed_cb;
    void *data = w->closed_data;
    watch_free(w);
    if (cb)
        cb(data);
}

/* Runs from the loop, outside every curl callback, where removing transfers is allowed. */
static void on_teardown(uv_timer_t *t)
{
    kube_watch *w = t->data;
    if (w->list_req) {
        kube_uvcurl_req_cancel(w->list_req);
        w->list_req = NULL;
    }
    if (w->watch_easy) {
        kube_uvcurl_remove(w->uc, w->watch_easy);
        watch_cleanup(w);
    }
    uv_close((uv_handle_t *)&w->timer, on_timer_closed);
}

void kube_watch_stop(kube_watch *w, void (*closed_cb)(void *data), void *data)
{
    if (w->stopped)
        return;
    w->stopped = true;
    w->closed_cb = closed_cb;
    w->closed_data = data;
    uv_timer_stop(&w->timer);
    uv_timer_start(&w->timer, on_teardown, 0, 0);
}

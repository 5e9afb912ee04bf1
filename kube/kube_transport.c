/* kube_transport: the blocking REST client object and its HTTP requests (see
 * kube_transport.h for the threading and ownership rules).  One CURL easy handle per
 * call keeps calls independent; pooling idle handles keeps their keep-alive
 * connections for the next call.  Credentials go in per-request headers (set again
 * after every curl_easy_reset), which is what lets clients of different tokens share
 * one pool: a pooled handle carries connections, never the previous caller's token. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_client.h"
#include "kube_client_internal.h"
#include "kube_request_metrics.h"
#include "strbuf.h"

#define KUBE_MAX_BODY ((size_t)512 * 1024 * 1024) /* a runaway response must not eat the heap */
#define KUBE_MAX_RETRIES 10     /* client-go's default for responses with a Retry-After */
#define KUBE_MAX_RETRY_WAIT_S 10 /* one wait blocks a worker thread: never longer than this */

/* ------------------------------------------------------------ lifecycle */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *userp)
{
    (void)h;
    (void)access;
    kube_conn_pool *p = userp;
    pthread_mutex_lock(&p->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *userp)
{
    (void)h;
    kube_conn_pool *p = userp;
    pthread_mutex_unlock(&p->share_locks[data]);
}

static kube_conn_pool *conn_pool_new(void)
{
    kube_conn_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&p->share_locks[i], NULL);
    pthread_mutex_init(&p->lock, NULL);
    p->share = curl_share_init();
    if (!p->share) {
        for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
            pthread_mutex_destroy(&p->share_locks[i]);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    curl_share_setopt(p->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(p->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(p->share, CURLSHOPT_USERDATA, p);
    curl_share_setopt(p->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(p->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return p;
}

static void conn_pool_unref(kube_conn_pool *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    for (int i = 0; i < p->nidle; i++) /* before the share they point at */
        curl_easy_cleanup(p->idle[i]);
    curl_share_cleanup(p->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&p->share_locks[i]);
    pthread_mutex_destroy(&p->lock);
    kube_config_free(&p->tls);
    free(p);
}

/* Everything but the configuration and the connection pool. */
static kube_client *client_alloc(const kube_client_options *opts, olm_error *err)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        olm_error_set(err, "kube client: libcurl initialisation failed");
        return NULL;
    }
    kube_client *c = calloc(1, sizeof *c);
    if (c) {
        c->connect_timeout_ms = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
        c->timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : 60000;
        c->user_agent = strdup(opts && opts->user_agent ? opts->user_agent : "olmv1");
        c->disc = json_object();
        if (c->user_agent && c->disc) {
            pthread_mutex_init(&c->disc_lock, NULL);
            pthread_mutex_init(&c->token_lock, NULL);
            return c;
        }
        json_decref(c->disc);
        free(c->user_agent);
        free(c);
    }
    curl_global_cleanup();
    olm_error_set(err, "out of memory");
    return NULL;
}

kube_client *kube_client_new(kube_config *cfg, const kube_client_options *opts, olm_error *err)
{
    if (!cfg || !cfg->server) {
        olm_error_set(err, "kube client: the configuration has no server");
        return NULL;
    }
    kube_client *c = client_alloc(opts, err);
    if (!c)
        return NULL;
    if (!(c->conns = conn_pool_new())) {
        kube_client_free(c);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    c->cfg = *cfg; /* take ownership only once nothing can fail */
    memset(cfg, 0, sizeof *cfg);
    return c;
}

/* base's token pool, made on first use (its TLS template: base's settings and its own
 * copy of an inline CA, without credentials). */
static kube_conn_pool *token_pool(kube_client *base, olm_error *err)
{
    pthread_mutex_lock(&base->token_lock);
    kube_conn_pool *p = base->token_conns;
    if (!p) {
        p = conn_pool_new();
        if (!p) {
            olm_error_set(err, "out of memory");
        } else if (kube_config_with_token(&base->cfg, "-", &p->tls, err) != 0) {
            conn_pool_unref(p);
            p = NULL;
        } else {
            explicit_bzero(p->tls.token, strlen(p->tls.token));
            free(p->tls.token);
            p->tls.token = NULL;
            base->token_conns = p;
        }
    }
    if (p)
        atomic_fetch_add(&p->refs, 1);
    pthread_mutex_unlock(&base->token_lock);
    return p;
}

static char *dup_opt(const char *s, bool *oom)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *oom = true;
    return d;
}

/* An impersonating client sends base's own credentials, so it uses base's own pool: the same
 * TLS configuration (a client certificate is bound to the connection), the same connections. */
static kube_client *new_impersonating(kube_client *base, const char *credential, const kube_client_options *opts,
                                      olm_error *err)
{
    kube_client *c = client_alloc(opts, err);
    if (!c)
        return NULL;
    if (kube_config_with_credential(&base->cfg, credential, &c->cfg, err) != 0) {
        kube_client_free(c);
        return NULL;
    }
    atomic_fetch_add(&base->conns->refs, 1);
    c->conns = base->conns;
    return c;
}

kube_client *kube_client_new_for_token(kube_client *base, const char *token, const kube_client_options *opts,
                                       olm_error *err)
{
    if (!base || !token || !*token) {
        olm_error_set(err, "kube_client_new_for_token: a base client and a token are required");
        return NULL;
    }
    if (kube_credential_is_impersonation(token))
        return new_impersonating(base, token, opts, err);
    kube_conn_pool *p = token_pool(base, err);
    if (!p)
        return NULL;
    kube_client *c = client_alloc(opts, err);
    if (!c) {
        conn_pool_unref(p);
        return NULL;
    }
    c->conns = p;
    /* The CA path is the pool's (not a copy: the pool's reference keeps the file). */
    bool oom = false;
    c->cfg.server = dup_opt(p->tls.server, &oom);
    c->cfg.ca_file = dup_opt(p->tls.ca_file, &oom);
    c->cfg.namespace = dup_opt(p->tls.namespace, &oom);
    c->cfg.token = dup_opt(token, &oom);
    c->cfg.insecure_skip_tls_verify = p->tls.insecure_skip_tls_verify;
    c->cfg.request_metrics = p->tls.request_metrics;
    if (oom) {
        kube_client_free(c);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    return c;
}

void kube_client_free(kube_client *c)
{
    if (!c)
        return;
    conn_pool_unref(c->conns);
    conn_pool_unref(c->token_conns);
    pthread_mutex_destroy(&c->token_lock);
    pthread_mutex_destroy(&c->disc_lock);
    json_decref(c->disc);
    free(c->user_agent);
    kube_config_free(&c->cfg);
    free(c);
    curl_global_cleanup();
}

const kube_config *kube_client_config(const kube_client *c)
{
    return &c->cfg;
}

unsigned kube_client_unauthorized_count(kube_client *c)
{
    return atomic_load(&c->unauthorized);
}

void kube_response_free(kube_response *r)
{
    if (!r)
        return;
    free(r->body);
    free(r->content_type);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------ raw request */

/* An easy handle for one call: a pooled idle one (reset to defaults, which
 * keeps its live connections) or a new one. */
static CURL *handle_acquire(kube_client *c)
{
    CURL *h = NULL;
    kube_conn_pool *p = c->conns;
    pthread_mutex_lock(&p->lock);
    if (p->nidle > 0)
        h = p->idle[--p->nidle];
    pthread_mutex_unlock(&p->lock);
    if (h) {
        curl_easy_reset(h);
        return h;
    }
    return curl_easy_init();
}

static void handle_release(kube_client *c, CURL *h, bool reusable)
{
    if (reusable) {
        /* Drop per-call pointers (headers, error buffer, sink) before pooling. */
        curl_easy_reset(h);
        kube_conn_pool *p = c->conns;
        pthread_mutex_lock(&p->lock);
        if (p->nidle < KUBE_CLIENT_POOL) {
            p->idle[p->nidle++] = h;
            h = NULL;
        }
        pthread_mutex_unlock(&p->lock);
    }
    if (h)
        curl_easy_cleanup(h);
}

static void pool_close_idle(kube_conn_pool *p)
{
    if (!p)
        return;
    CURL *idle[KUBE_CLIENT_POOL];
    pthread_mutex_lock(&p->lock);
    int n = p->nidle;
    memcpy(idle, p->idle, (size_t)n * sizeof *idle);
    p->nidle = 0;
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < n; i++) /* outside the lock: closing may write a TLS close_notify */
        curl_easy_cleanup(idle[i]);
}

void kube_client_close_idle(kube_client *c)
{
    pool_close_idle(c->conns);
    pthread_mutex_lock(&c->token_lock);
    kube_conn_pool *tp = c->token_conns;
    if (tp)
        atomic_fetch_add(&tp->refs, 1);
    pthread_mutex_unlock(&c->token_lock);
    pool_close_idle(tp);
    conn_pool_unref(tp);
}

struct sink {
    strbuf sb;
    bool too_big;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    struct sink *s = userp;
    size_t n = size * nmemb;
    if (s->sb.len + n > KUBE_MAX_BODY) {
        s->too_big = true;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    return strbuf_append(&s->sb, data, n) < 0 ? 0 : n;
}

#define TRY_SETOPT(opt, val)                                                                     \
    do {                                                                                         \
        if ((cc = curl_easy_setopt(h, (opt), (val))) != CURLE_OK) {                              \
            olm_error_set(err, "libcurl: setting " #opt ": %s", curl_easy_strerror(cc));         \
            goto done;                                                                           \
        }                                                                                        \
    } while (0)

/* The server's Retry-After of a response that asks to be retried (429, or any 5xx, as
 * client-go's checkWait reads it): whole seconds, or -1 when there is none.  An HTTP-date
 * form counts as none, as in client-go. */
static long retry_after_seconds(CURL *h, long status)
{
    if (status != 429 && status < 500)
        return -1;
    struct curl_header *hdr = NULL;
    if (curl_easy_header(h, "Retry-After", 0, CURLH_HEADER, -1, &hdr) != CURLHE_OK || !hdr || !hdr->value)
        return -1;
    char *end = NULL;
    errno = 0;
    long secs = strtol(hdr->value, &end, 10);
    while (end && (*end == ' ' || *end == '\t'))
        end++;
    if (errno || end == hdr->value || !end || *end || secs < 0)
        return -1;
    return secs;
}

static long request_once(kube_client *c, const char *method, const char *path, const char *query,
                         const char *content_type, const char *body, size_t body_len,
                         kube_response *resp, long *retry_after, olm_error *err)
{
    memset(resp, 0, sizeof *resp);
    *retry_after = -1;
    long result = -1;
    CURLcode cc = CURLE_OK;
    struct curl_slist *headers = NULL;
    struct sink sink = {STRBUF_INIT, false};
    char errbuf[CURL_ERROR_SIZE] = "";
    char *url = NULL;
    CURL *h = handle_acquire(c);
    if (!h) {
        olm_error_set(err, "out of memory");
        return -1;
    }
    if (asprintf(&url, "%s%s%s%s", c->cfg.server, path, query && *query ? "?" : "", query ? query : "") < 0) {
        url = NULL;
        olm_error_set(err, "out of memory");
        goto done;
    }
    if (kube_curl_apply(h, &c->cfg, &headers, err) < 0)
        goto done;
    struct curl_slist *nl = curl_slist_append(headers, "Accept: application/json");
    if (nl)
        nl = curl_slist_append(headers = nl, "Expect:"); /* no 100-continue round trip */
    if (nl && content_type) {
        char ct[256];
        snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
        nl = curl_slist_append(headers = nl, ct);
    }
    if (!nl) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    headers = nl;
    TRY_SETOPT(CURLOPT_URL, url);
    TRY_SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
    TRY_SETOPT(CURLOPT_HTTPHEADER, headers);
    TRY_SETOPT(CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM-based DNS timeouts */
    TRY_SETOPT(CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    TRY_SETOPT(CURLOPT_TIMEOUT_MS, c->timeout_ms);
    TRY_SETOPT(CURLOPT_USERAGENT, c->user_agent);
    TRY_SETOPT(CURLOPT_SHARE, c->conns->share);
    TRY_SETOPT(CURLOPT_ERRORBUFFER, errbuf);
    TRY_SETOPT(CURLOPT_WRITEFUNCTION, on_body);
    TRY_SETOPT(CURLOPT_WRITEDATA, &sink);
    TRY_SETOPT(CURLOPT_ACCEPT_ENCODING, ""); /* lists compress well */
    if (strcmp(method, "GET") != 0)
        TRY_SETOPT(CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        TRY_SETOPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        TRY_SETOPT(CURLOPT_POSTFIELDS, body);
    }
    cc = curl_easy_perform(h);
    kube_request_metrics_observe_easy(c->cfg.request_metrics, h, cc);
    if (cc != CURLE_OK) {
        if (sink.too_big)
            olm_error_set(err, "%s %s%s: response larger than %zu bytes", method, c->cfg.server, path, KUBE_MAX_BODY);
        else
            olm_error_set(err, "cannot reach the Kubernetes API server %s (%s %s): %s", c->cfg.server, method, path,
                          errbuf[0] ? errbuf : curl_easy_strerror(cc));
        goto done;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    char *ctype = NULL;
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK && ctype &&
        !(resp->content_type = strdup(ctype))) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    resp->body_len = sink.sb.len;
    resp->body = strbuf_detach(&sink.sb);
    if (!resp->body) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    result = resp->status;
    if (result == 401)
        atomic_fetch_add(&c->unauthorized, 1);
    *retry_after = retry_after_seconds(h, result);
done:
    if (result < 0)
        kube_response_free(resp);
    strbuf_free(&sink.sb);
    http_headers_free(headers); /* holds the bearer token: wiped, freed promptly */
    handle_release(c, h, result >= 0);
    free(url);
    return result;
}

long kube_request(kube_client *c, const char *method, const char *path, const char *query,
                  const char *content_type, const char *body, size_t body_len,
                  kube_response *resp, olm_error *err)
{
    /* An API server that sheds load (API Priority and Fairness) answers 429 with a
     * Retry-After; it also sends one with some 5xx.  Such a request was not carried out,
     * so like client-go we wait as told and send it again, whatever its verb, up to
     * KUBE_MAX_RETRIES times: a reconcile then finishes instead of failing into the work
     * queue's back-off.  No Retry-After: the status goes back to the caller at once.
     * The waits stay within the client's request timeout, counted from the first send. */
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned attempt = 0;; attempt++) {
        long retry_after;
        long st = request_once(c, method, path, query, content_type, body, body_len, resp, &retry_after, err);
        if (st < 0 || retry_after < 0 || attempt >= KUBE_MAX_RETRIES)
            return st;
        unsigned wait = retry_after > KUBE_MAX_RETRY_WAIT_S ? KUBE_MAX_RETRY_WAIT_S : (unsigned)retry_after;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long elapsed_ms = (long)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (elapsed_ms + (long)wait * 1000 > c->timeout_ms)
            return st;
        kube_response_free(resp);
        struct timespec ts = {(time_t)wait, 0};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

/* ------------------------------------------------------------ JSON calls */

int kube_request_json(kube_client *c, const char *method, const char *path, const char *query,
                      const char *ctype, const char *body, json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    kube_response resp;
    long st = kube_request(c, method, path, query, ctype, body, body ? strlen(body) : 0, &resp, err);
    if (st < 0)
        return KUBE_ERROR;
    int rc = KUBE_OK;
    if (st < 200 || st >= 300) {
        rc = kube_status_error(st, resp.body, resp.body_len, method, path, err);
    } else if (out) {
        json_error_t je;
        *out = json_loadb(resp.body, resp.body_len, 0, &je);
        if (!*out)
            rc = olm_error_set(err, "%s %s: invalid JSON in the response (HTTP %ld): %s", method, path, st, je.text);
    }
    kube_response_free(&resp);
    return rc;
}


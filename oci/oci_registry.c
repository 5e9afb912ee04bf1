/* One registry host over the distribution v2 API, with libcurl.
 *
 * Every request may meet a 401 with a WWW-Authenticate challenge.  For Bearer we
 * fetch a token for "repository:<repo>:<actions>" (anonymously, or with basic
 * credentials from the auth file) and retry once; the token is cached per scope
 * and sent up front next time, so a large upload body is not sent just to be
 * refused.  For Basic we retry with the credentials.  The curl handle is reused
 * (curl_easy_reset keeps its connection cache), so a handle is single-threaded; it comes
 * from, and goes back to, the idle handles of oci_handle_pool.c. */
#include "oci_internal.h"
#include "oci_auth.h"
#include "oci_registry.h"
#include "http_client.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_TOKENS 8
#define MAX_BUFFERED_BODY ((size_t)32 * 1024 * 1024) /* manifests, errors, tokens */

struct token {
    char *scope; /* "repository:ns/app:pull,push" */
    char *value;
};

struct oci_registry {
    char *host;     /* as in references */
    char *base_url; /* "https://registry-1.docker.io" */
    const char *scheme;
    /* An insecure registry (containers-registries.conf's meaning): TLS without verifying
     * the peer, and plain HTTP if TLS does not connect at all.  The scheme is settled by
     * the first exchange with the registry itself. */
    bool tls_unverified;
    bool http_fallback_pending;
    /* Plain HTTP because this process learned it (oci_scheme_memo.c): a transport failure
     * over it forgets that and tries TLS, once. */
    bool plain_from_memo;
    char *auth_file;
    oci_auth_store *auth_store;
    char *ca_path;
    const olm_ca_set *extra_cas;
    long timeout;
    long deadline_seconds;
    uint64_t deadline_ms; /* CLOCK_MONOTONIC milliseconds; 0 = none */
    long min_speed, stall_seconds;
    uint64_t chunk_size;
    void (*progress)(void *, const char *);
    void *progress_ctx;
    CURL *curl;
    oci_credentials creds;
    int creds_loaded;
    char *creds_repository; /* what creds were looked up for (NULL: the host alone) */
    enum { AUTH_NONE, AUTH_BEARER, AUTH_BASIC } mode;
    char *realm; /* from the last Bearer challenge */
    char *service;
    struct token tokens[MAX_TOKENS];
    size_t next_token; /* round-robin slot to replace */
};

/* ---------------------------------------------------------------- setup */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int host_in_list(const char *host, const char *list)
{
    if (!list)
        return 0;
    size_t hlen = strlen(host);
    const char *colon = strrchr(host, ':');
    size_t bare = colon && host[0] != '[' ? (size_t)(colon - host) : hlen;
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ')
            p++;
        const char *start = p;
        while (*p && *p != ',' && *p != ' ')
            p++;
        size_t n = (size_t)(p - start);
        /* "host:port" matches exactly; a bare "host" matches any port */
        if (n && ((n == hlen && strncasecmp(start, host, n) == 0) ||
                  (n == bare && strncasecmp(start, host, n) == 0)))
            return 1;
    }
    return 0;
}

oci_registry *oci_registry_new(const char *registry, const oci_registry_opts *opts,
                               olm_error *err)
{
    static const oci_registry_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    oci_registry *reg = calloc(1, sizeof *reg);
    if (!reg) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    /* A registry named insecure speaks TLS (unverified) or, failing that, plain HTTP, as
     * containers/image does; one on loopback that nobody named speaks plain HTTP. */
    bool named_insecure = opts->insecure || host_in_list(registry, opts->insecure_hosts);
    reg->tls_unverified = named_insecure;
    reg->plain_from_memo = named_insecure && oci_scheme_memo_plain_http(registry);
    reg->http_fallback_pending = named_insecure && !reg->plain_from_memo;
    reg->scheme = reg->plain_from_memo ? "http"
                  : named_insecure || !oci_registry_is_loopback(registry) ? "https" : "http";
    /* docker.io is the name; the API lives on registry-1.docker.io */
    const char *api_host = strcmp(registry, "docker.io") == 0 ? "registry-1.docker.io" : registry;
    reg->host = strdup(registry);
    reg->auth_file = opts->auth_file ? strdup(opts->auth_file) : NULL;
    reg->auth_store = opts->auth_store;
    reg->ca_path = opts->ca_path ? strdup(opts->ca_path) : NULL;
    reg->extra_cas = opts->extra_cas;
    reg->timeout = opts->timeout_seconds;
    reg->deadline_seconds = opts->deadline_seconds > 0 ? opts->deadline_seconds : 0;
    reg->deadline_ms = reg->deadline_seconds ? now_ms() + (uint64_t)reg->deadline_seconds * 1000 : 0;
    reg->min_speed = opts->min_bytes_per_second > 0 ? opts->min_bytes_per_second : OCI_DEFAULT_MIN_BYTES_PER_SECOND;
    reg->stall_seconds = opts->stall_seconds > 0 ? opts->stall_seconds : OCI_DEFAULT_STALL_SECONDS;
    reg->chunk_size = opts->chunk_size ? opts->chunk_size : OCI_DEFAULT_CHUNK_SIZE;
    reg->progress = opts->progress;
    reg->progress_ctx = opts->progress_ctx;
    if (asprintf(&reg->base_url, "%s://%s", reg->scheme, api_host) < 0)
        reg->base_url = NULL;
    else
        reg->curl = oci_handle_take(reg->base_url);
    if (!reg->host || !reg->base_url || !reg->curl || (opts->auth_file && !reg->auth_file) ||
        (opts->ca_path && !reg->ca_path)) {
        olm_error_set(err, "out of memory");
        oci_registry_free(reg);
        return NULL;
    }
    return reg;
}

void oci_registry_free(oci_registry *reg)
{
    if (!reg)
        return;
    oci_handle_give(reg->curl, reg->base_url); /* its connections serve the next pull */
    oci_credentials_free(&reg->creds);
    free(reg->creds_repository);
    for (size_t i = 0; i < MAX_TOKENS; i++) {
        free(reg->tokens[i].scope);
        free(reg->tokens[i].value);
    }
    free(reg->host);
    free(reg->base_url);
    free(reg->auth_file);
    free(reg->ca_path);
    free(reg->realm);
    free(reg->service);
    free(reg);
}

const char *oci_registry_scheme(const oci_registry *reg) { return reg->scheme; }
const char *oci_registry_host(const oci_registry *reg) { return reg->host; }
uint64_t oci_registry_chunk_size(const oci_registry *reg) { return reg->chunk_size; }

void oci_registry_progress(const oci_registry *reg, const char *fmt, ...)
{
    if (!reg->progress)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    reg->progress(reg->progress_ctx, buf);
}

void oci_response_free(oci_response *r)
{
    if (!r)
        return;
    free(r->body);
    free(r->location);
    free(r->content_type);
    free(r->docker_digest);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- one HTTP exchange */

struct exchange {
    CURL *curl;
    /* request body */
    const oci_blob *body;
    uint64_t body_start, body_len, body_pos;
    /* response */
    oci_response *resp;
    char *www_authenticate; /* all WWW-Authenticate values joined by ", " */
    size_t body_cap;
    size_t (*sink)(const void *, size_t, void *);
    void *sink_ctx;
    int sink_failed;
    int too_big;
};

static size_t read_body(char *buf, size_t size, size_t nitems, void *userdata)
{
    struct exchange *x = userdata;
    uint64_t left = x->body_len - x->body_pos;
    size_t want = size * nitems;
    if (want > left)
        want = (size_t)left;
    if (want == 0)
        return 0;
    if (x->body->data) {
        memcpy(buf, x->body->data + x->body_start + x->body_pos, want);
    } else {
        if (fseeko(x->body->file, (off_t)(x->body_start + x->body_pos), SEEK_SET) != 0)
            return CURL_READFUNC_ABORT;
        if (fread(buf, 1, want, x->body->file) != want)
            return CURL_READFUNC_ABORT;
    }
    x->body_pos += want;
    return want;
}

static int seek_body(void *userdata, curl_off_t offset, int origin)
{
    struct exchange *x = userdata;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->body_len)
        return CURL_SEEKFUNC_CANTSEEK;
    x->body_pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

static size_t write_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct exchange *x = userdata;
    size_t n = size * nmemb;
    long code = 0;
    curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
    if (x->sink && code >= 200 && code < 300) {
        if (x->sink(data, n, x->sink_ctx) != n) {
            x->sink_failed = 1;
            return 0; /* aborts the transfer */
        }
        return n;
    }
    oci_response *r = x->resp;
    if (r->body_len + n + 1 > x->body_cap) {
        if (r->body_len + n + 1 > MAX_BUFFERED_BODY) {
            x->too_big = 1;
            return 0;
        }
        size_t cap = x->body_cap ? x->body_cap : 4096;
        while (cap < r->body_len + n + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b)
            return 0;
        r->body = b;
        x->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    return n;
}

static char *trimmed_dup(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return strndup(s, n);
}

/* Keeps the headers of the last response only (a redirect or "100 Continue"
 * starts a new header block with a status line). */
static size_t on_header(char *line, size_t size, size_t nitems, void *userdata)
{
    struct exchange *x = userdata;
    size_t n = size * nitems;
    oci_response *r = x->resp;
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        free(r->location);
        free(r->content_type);
        free(r->docker_digest);
        free(x->www_authenticate);
        r->location = r->content_type = r->docker_digest = x->www_authenticate = NULL;
        r->content_length = 0;
        return n;
    }
    const char *colon = memchr(line, ':', n);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - line);
    const char *val = colon + 1;
    size_t val_len = n - name_len - 1;
    char **slot = NULL;
    if (name_len == 8 && strncasecmp(line, "Location", 8) == 0)
        slot = &r->location;
    else if (name_len == 12 && strncasecmp(line, "Content-Type", 12) == 0)
        slot = &r->content_type;
    else if (name_len == 21 && strncasecmp(line, "Docker-Content-Digest", 21) == 0)
        slot = &r->docker_digest;
    if (slot) {
        free(*slot);
        if (!(*slot = trimmed_dup(val, val_len)))
            return 0;
    } else if (name_len == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
        char *v = trimmed_dup(val, val_len); /* header lines are not NUL-terminated */
        if (!v)
            return 0;
        r->content_length = strtoull(v, NULL, 10);
        free(v);
    } else if (name_len == 16 && strncasecmp(line, "WWW-Authenticate", 16) == 0) {
        char *v = trimmed_dup(val, val_len);
        if (!v)
            return 0;
        if (x->www_authenticate) {
            char *joined = NULL;
            if (asprintf(&joined, "%s, %s", x->www_authenticate, v) < 0) {
                free(v);
                return 0;
            }
            free(x->www_authenticate);
            free(v);
            x->www_authenticate = joined;
        } else {
            x->www_authenticate = v;
        }
    }
    return n;
}

#define SETOPT(opt, val)                                                                      \
    do {                                                                                      \
        CURLcode c_ = curl_easy_setopt(reg->curl, opt, val);                                  \
        if (c_ != CURLE_OK) {                                                                 \
            olm_error_set(err, "curl option %s: %s", #opt, curl_easy_strerror(c_));           \
            goto out;                                                                         \
        }                                                                                     \
    } while (0)

/* Drops what curl's error text counts of the attempt (" after 1001 milliseconds", " after
 * 3 ms", " with 0 bytes received", " with 10 out of 20 bytes received"), keeping what failed.
 * The message becomes a status condition (catalogd's Progressing): one that differed on every
 * retry would be a status write each time, and its update event would rerun the reconcile at
 * once, bypassing the back-off. */
static void drop_attempt_counts(char *msg)
{
    static const char *const prefixes[] = {" after ", " with "};
    for (size_t k = 0; k < 2; k++) {
        char *p = msg;
        while ((p = strstr(p, prefixes[k])) != NULL) {
            char *q = p + strlen(prefixes[k]);
            char *end = NULL;
            if (*q >= '0' && *q <= '9') {
                while (*q >= '0' && *q <= '9')
                    q++;
                if (strncmp(q, " milliseconds", 13) == 0)
                    end = q + 13;
                else if (strncmp(q, " ms", 3) == 0 && (q[3] == ':' || q[3] == '\0' || q[3] == ' '))
                    end = q + 3;
                else if (strncmp(q, " out of ", 8) == 0 && q[8] >= '0' && q[8] <= '9') {
                    q += 8;
                    while (*q >= '0' && *q <= '9')
                        q++;
                }
                if (!end && strncmp(q, " bytes received", 15) == 0)
                    end = q + 15;
            }
            if (end)
                memmove(p, end, strlen(end) + 1);
            else
                p++;
        }
    }
}

/* Performs one request with the given Authorization header (may be NULL) and
 * basic credentials (may be NULL).  Fills resp and *www_auth (caller frees).
 * *transport_failed is set when no HTTP response came back at all (connect, TLS), as opposed
 * to a deadline, a stall or our own sink failing. */
static int perform(oci_registry *reg, const char *url, const oci_request *req,
                   const char *authz, const oci_credentials *basic, oci_response *resp,
                   char **www_auth, bool *transport_failed, olm_error *err)
{
    struct exchange x = {0};
    struct curl_slist *hdrs = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    int rc = -1;
    memset(resp, 0, sizeof *resp);
    *www_auth = NULL;
    x.curl = reg->curl;
    x.resp = resp;
    x.sink = req->sink;
    x.sink_ctx = req->sink_ctx;

    curl_easy_reset(reg->curl);
    long timeout_ms = reg->timeout > 0 ? reg->timeout * 1000 : 0;
    int deadline_binds = 0;
    if (reg->deadline_ms) {
        uint64_t now = now_ms();
        if (now >= reg->deadline_ms)
            goto deadline;
        long left = (long)(reg->deadline_ms - now);
        if (!timeout_ms || left < timeout_ms) {
            timeout_ms = left;
            deadline_binds = 1;
        }
    }
    /* a stalled or dripping transfer (under 1 KiB/s for 60 s by default) fails instead of
     * hanging; the deadline bounds one that stays just above that */
    http_client_opts o = {.tls = {.ca_dir = reg->ca_path, .extra_cas = reg->extra_cas,
                                  .skip_verify = reg->tls_unverified},
                          .timeout_ms = timeout_ms, .low_speed_limit = reg->min_speed,
                          .low_speed_time = reg->stall_seconds};
    if (http_client_setup(reg->curl, url, &o, err) < 0)
        goto out;
    SETOPT(CURLOPT_URL, url);
    SETOPT(CURLOPT_ERRORBUFFER, errbuf);
    SETOPT(CURLOPT_USERAGENT, "olmv1");
    SETOPT(CURLOPT_HEADERFUNCTION, on_header);
    SETOPT(CURLOPT_HEADERDATA, &x);
    SETOPT(CURLOPT_WRITEFUNCTION, write_body);
    SETOPT(CURLOPT_WRITEDATA, &x);

    const char *m = req->method;
    if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
        /* blob GETs are redirected to storage; curl drops our Authorization there */
        SETOPT(CURLOPT_FOLLOWLOCATION, 1L);
        SETOPT(CURLOPT_MAXREDIRS, 5L);
        if (m[0] == 'H')
            SETOPT(CURLOPT_NOBODY, 1L);
    } else {
        /* POST, PUT, PATCH: always an "upload", possibly of zero bytes, so that
         * curl sends Content-Length: 0 rather than chunked encoding */
        x.body = req->body;
        x.body_start = req->body_offset;
        x.body_len = req->body ? req->body_len : 0;
        SETOPT(CURLOPT_UPLOAD, 1L);
        SETOPT(CURLOPT_CUSTOMREQUEST, m);
        SETOPT(CURLOPT_INFILESIZE_LARGE, (curl_off_t)x.body_len);
        SETOPT(CURLOPT_READFUNCTION, read_body);
        SETOPT(CURLOPT_READDATA, &x);
        SETOPT(CURLOPT_SEEKFUNCTION, seek_body);
        SETOPT(CURLOPT_SEEKDATA, &x);
        if (!(hdrs = curl_slist_append(hdrs, "Expect:"))) {
            olm_error_set(err, "out of memory");
            goto out;
        }
    }
    for (const char *const *h = req->headers; h && *h; h++) {
        struct curl_slist *n = curl_slist_append(hdrs, *h);
        if (!n) {
            olm_error_set(err, "out of memory");
            goto out;
        }
        hdrs = n;
    }
    if (authz) {
        struct curl_slist *n = curl_slist_append(hdrs, authz);
        if (!n) {
            olm_error_set(err, "out of memory");
            goto out;
        }
        hdrs = n;
    }
    if (hdrs)
        SETOPT(CURLOPT_HTTPHEADER, hdrs);
    if (basic && basic->username) {
        SETOPT(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        SETOPT(CURLOPT_USERNAME, basic->username);
        SETOPT(CURLOPT_PASSWORD, basic->password);
    }

    CURLcode cc = curl_easy_perform(reg->curl);
    oci_handle_count_connects(reg->curl);
    if (cc != CURLE_OK) {
        if (x.sink_failed)
            olm_error_set(err, "%s %s: writing the response failed", m, url);
        else if (x.too_big)
            olm_error_set(err, "%s %s: response larger than %zu bytes", m, url, MAX_BUFFERED_BODY);
        else if (cc == CURLE_OPERATION_TIMEDOUT && deadline_binds && now_ms() + 50 >= reg->deadline_ms)
            goto deadline;
        else if (cc == CURLE_OPERATION_TIMEDOUT && strstr(errbuf, "too slow"))
            olm_error_set(err, "%s %s: the registry sent less than %ld bytes/s for %ld s: giving up on a stalled "
                               "transfer",
                          m, url, reg->min_speed, reg->stall_seconds);
        else {
            drop_attempt_counts(errbuf);
            olm_error_set(err, "%s %s: %s", m, url, errbuf[0] ? errbuf : curl_easy_strerror(cc));
            if (transport_failed)
                *transport_failed = cc != CURLE_OPERATION_TIMEDOUT;
        }
        goto out;
    }
    curl_easy_getinfo(reg->curl, CURLINFO_RESPONSE_CODE, &resp->status);
    *www_auth = x.www_authenticate;
    x.www_authenticate = NULL;
    rc = 0;
    goto out;
deadline:
    olm_error_set(err, "%s %s: the pull did not finish within %ld s (its deadline; --pull-timeout)", req->method,
                  url, reg->deadline_seconds);
out:
    http_headers_free(hdrs);
    free(x.www_authenticate);
    /* The error buffer is on our stack: unhook it so a later curl call cannot write there. */
    curl_easy_setopt(reg->curl, CURLOPT_ERRORBUFFER, NULL);
    if (rc != 0)
        oci_response_free(resp);
    return rc;
}

/* ---------------------------------------------------------------- auth */

/* "repository:ns/app:pull,push" → "ns/app" into out; "" for another scope or none. */
static void scope_repository(const char *scope, char *out, size_t outsz)
{
    out[0] = '\0';
    const char *prefix = "repository:";
    size_t pn = strlen(prefix);
    if (!scope || strncmp(scope, prefix, pn) != 0)
        return;
    const char *name = scope + pn, *end = strrchr(name, ':');
    size_t n = end ? (size_t)(end - name) : strlen(name);
    if (n < outsz)
        snprintf(out, outsz, "%.*s", (int)n, name);
}

/* The credentials for the repository of `scope` (keys may be scoped to a repository or
 * namespace), looked up again only when the repository changes. */
static int load_creds(oci_registry *reg, const char *scope, olm_error *err)
{
    char repository[512];
    scope_repository(scope, repository, sizeof repository);
    const char *had = reg->creds_repository ? reg->creds_repository : "";
    if (reg->creds_loaded && strcmp(had, repository) == 0)
        return 0;
    oci_credentials_free(&reg->creds);
    free(reg->creds_repository);
    reg->creds_repository = NULL;
    reg->creds_loaded = 0;
    char name[1024];
    snprintf(name, sizeof name, "%s%s%s", reg->host, repository[0] ? "/" : "", repository);
    /* the global pull secret first; the auth file for registries it does not name */
    if (reg->auth_store && oci_auth_store_lookup(reg->auth_store, name, &reg->creds, err) != 0)
        return -1;
    if (!reg->creds.username && oci_credentials_from_file(reg->auth_file, name, &reg->creds, err) != 0)
        return -1;
    if (repository[0] && !(reg->creds_repository = strdup(repository))) {
        oci_credentials_free(&reg->creds);
        return olm_error_set(err, "out of memory");
    }
    reg->creds_loaded = 1;
    return 0;
}

static const char *cached_token(const oci_registry *reg, const char *scope)
{
    for (size_t i = 0; i < MAX_TOKENS; i++)
        if (reg->tokens[i].scope && strcmp(reg->tokens[i].scope, scope) == 0)
            return reg->tokens[i].value;
    return NULL;
}

static int store_token(oci_registry *reg, const char *scope, char *value /* taken */)
{
    struct token *t = NULL;
    for (size_t i = 0; i < MAX_TOKENS && !t; i++)
        if (reg->tokens[i].scope && strcmp(reg->tokens[i].scope, scope) == 0)
            t = &reg->tokens[i];
    if (!t) {
        t = &reg->tokens[reg->next_token];
        reg->next_token = (reg->next_token + 1) % MAX_TOKENS;
        free(t->scope);
        t->scope = NULL;
    }
    char *s = t->scope ? t->scope : strdup(scope);
    if (!s) {
        free(value);
        return -1;
    }
    t->scope = s;
    free(t->value);
    t->value = value;
    return 0;
}

static int append_param(char **url, const char *name, const char *value, CURL *curl)
{
    char *esc = curl_easy_escape(curl, value, 0);
    if (!esc)
        return -1;
    char *next = NULL;
    int n = asprintf(&next, "%s%c%s=%s", *url, strchr(*url, '?') ? '&' : '?', name, esc);
    curl_free(esc);
    if (n < 0)
        return -1;
    free(*url);
    *url = next;
    return 0;
}

/* GET <realm>?service=..&scope=<ours>[&scope=<challenge's>] → token. */
static int fetch_token(oci_registry *reg, const char *scope, const char *extra_scope,
                       olm_error *err)
{
    if (strncmp(reg->realm, "https://", 8) != 0 && strncmp(reg->realm, "http://", 7) != 0)
        return olm_error_set(err, "registry %s sent a token realm that is not an http(s) URL: \"%s\"",
                             reg->host, reg->realm);
    if (load_creds(reg, scope, err) != 0)
        return -1;
    /* The realm is whatever the registry's challenge names.  Over https the credentials are
     * safe on the way to the registry; they must not then travel in clear text to a realm
     * it names over plain http (a hostile or misconfigured registry, or a proxy rewriting
     * the challenge).  Anonymous token requests carry no secret and may go. */
    if (reg->creds.username && strcmp(reg->scheme, "https") == 0 && strncmp(reg->realm, "http://", 7) == 0)
        return olm_error_set(err,
                             "registry %s (https) sent a token realm over plain http (\"%s\"): refusing to send "
                             "the credentials for %s there in clear text; the registry's auth service must use https",
                             reg->host, reg->realm, reg->host);
    char *url = strdup(reg->realm);
    if (!url)
        return olm_error_set(err, "out of memory");
    if ((reg->service && append_param(&url, "service", reg->service, reg->curl) != 0) ||
        (scope && append_param(&url, "scope", scope, reg->curl) != 0) ||
        (extra_scope && (!scope || strcmp(extra_scope, scope) != 0) &&
         append_param(&url, "scope", extra_scope, reg->curl) != 0)) {
        free(url);
        return olm_error_set(err, "out of memory");
    }
    oci_request req = {.method = "GET", .url_or_path = url};
    oci_response resp;
    char *www = NULL;
    int rc = perform(reg, url, &req, NULL, reg->creds.username ? &reg->creds : NULL, &resp, &www, NULL,
                     err);
    free(www);
    if (rc != 0) {
        olm_error_wrap(err, "fetching a registry token");
        free(url);
        return -1;
    }
    if (resp.status != 200) {
        char msg[1024];
        oci_format_registry_error(resp.status, resp.body, resp.body_len, msg, sizeof msg);
        olm_error_set(err, "fetching a token for %s from %s: %s%s", scope ? scope : reg->host,
                      reg->realm, msg,
                      resp.status == 401 || resp.status == 403
                          ? (reg->creds.username ? (reg->auth_store ? " (check the credentials in the global pull secret or the auth file)"
                                                                    : " (check the credentials in the auth file)")
                                                 : (reg->auth_store ? " (no credentials for this registry in the global pull secret or the auth file)"
                                                                    : " (log in: pass --authfile or set REGISTRY_AUTH_FILE)"))
                          : "");
        oci_response_free(&resp);
        free(url);
        return -1;
    }
    free(url);
    json_t *root = json_loadb(resp.body ? resp.body : "", resp.body_len, 0, NULL);
    const char *tok = json_string_value(json_object_get(root, "token"));
    if (!tok || !*tok)
        tok = json_string_value(json_object_get(root, "access_token"));
    char *value = NULL;
    int have_token = tok && *tok;
    if (have_token && asprintf(&value, "Authorization: Bearer %s", tok) < 0)
        value = NULL;
    json_decref(root); /* tok pointed into root: not used below */
    oci_response_free(&resp);
    if (!have_token)
        return olm_error_set(err, "the token service %s answered without a token", reg->realm);
    if (!value || store_token(reg, scope ? scope : "", value) != 0)
        return olm_error_set(err, "out of memory");
    return 0;
}

/* Learns from a 401: remembers the scheme and realm.  Returns 0 if a retry makes sense. */
static int handle_challenge(oci_registry *reg, const char *www, const char *scope, olm_error *err)
{
    oci_auth_challenge ch;
    if (!www)
        return olm_error_set(err, "registry %s answered 401 without a WWW-Authenticate challenge",
                             reg->host);
    if (oci_auth_parse_challenge(www, &ch, err) != 0)
        return olm_error_wrap(err, "registry %s", reg->host);
    int rc = 0;
    if (strcmp(ch.scheme, "bearer") == 0) {
        free(reg->realm);
        free(reg->service);
        reg->realm = ch.realm;
        reg->service = ch.service;
        ch.realm = ch.service = NULL;
        reg->mode = AUTH_BEARER;
        rc = fetch_token(reg, scope, ch.scope, err);
    } else if (strcmp(ch.scheme, "basic") == 0) {
        if (load_creds(reg, scope, err) != 0)
            rc = -1;
        else if (!reg->creds.username && reg->auth_store)
            rc = olm_error_set(err,
                               "registry %s requires a login (Basic auth) and neither the global pull secret "
                               "(--global-pull-secret) nor the auth file has credentials for %s",
                               reg->host, reg->host);
        else if (!reg->creds.username)
            rc = olm_error_set(err,
                               "registry %s requires a login (Basic auth) and no credentials for it "
                               "were given; pass --authfile or set REGISTRY_AUTH_FILE to a docker "
                               "config JSON with an \"auths\" entry for %s",
                               reg->host, reg->host);
        else
            reg->mode = AUTH_BASIC;
    } else {
        rc = olm_error_set(err, "registry %s asks for unsupported authentication \"%s\"", reg->host,
                           ch.scheme);
    }
    oci_auth_challenge_free(&ch);
    return rc;
}

/* ---------------------------------------------------------------- requests */

/* An insecure registry that did not take a connection over its scheme: from now on the
 * other one (the registry's base URL and the request's URL, which starts with it).  `why`
 * is the failure, for the progress line. */
static int switch_scheme(oci_registry *reg, char **url, const char *why, olm_error *err)
{
    bool to_http = strcmp(reg->scheme, "https") == 0;
    const char *from = to_http ? "https://" : "http://", *to = to_http ? "http" : "https";
    size_t n = strlen(from);
    char *base = NULL, *u = NULL;
    if (asprintf(&base, "%s://%s", to, reg->base_url + n) < 0)
        base = NULL;
    if (base && asprintf(&u, "%s://%s", to, *url + n) < 0)
        u = NULL;
    if (!base || !u) {
        free(base);
        olm_error_set(err, "out of memory");
        return -1;
    }
    if (to_http)
        oci_registry_progress(reg, "%s: no TLS connection (%s); trying plain HTTP (an insecure registry)",
                              reg->host, why);
    else
        oci_registry_progress(reg, "%s: no plain HTTP connection any more (%s); trying TLS (an insecure registry)",
                              reg->host, why);
    free(reg->base_url);
    reg->base_url = base;
    free(*url);
    *url = u;
    reg->scheme = to_http ? "http" : "https";
    reg->http_fallback_pending = false;
    reg->plain_from_memo = false;
    return 0;
}

/* The scheme an insecure registry was tried over did not serve (`why`): forget a remembered
 * plain HTTP, keep which scheme failed and why for the final error, and switch. */
static int retry_over_other_scheme(oci_registry *reg, char **url, const char *why, const char **first_scheme,
                                   char *first_error, size_t first_error_size, olm_error *err)
{
    if (reg->plain_from_memo)
        oci_scheme_memo_set(reg->host, false);
    *first_scheme = strcmp(reg->scheme, "http") == 0 ? "plain HTTP" : "TLS";
    snprintf(first_error, first_error_size, "%s", why);
    return switch_scheme(reg, url, first_error, err);
}

int oci_registry_do(oci_registry *reg, const oci_request *req, oci_response *resp,
                    olm_error *err)
{
    memset(resp, 0, sizeof *resp);
    char *url = NULL;
    char *scope = NULL;
    int rc = -1;
    const char *u = req->url_or_path;
    if (strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0)
        url = strdup(u);
    else if (asprintf(&url, "%s%s%s", reg->base_url, u[0] == '/' ? "" : "/", u) < 0)
        url = NULL;
    if (req->repository &&
        asprintf(&scope, "repository:%s:%s", req->repository, req->actions ? req->actions : "pull") < 0)
        scope = NULL;
    if (!url || (req->repository && !scope)) {
        olm_error_set(err, "out of memory");
        goto out;
    }
    /* Credentials and tokens go only to the registry itself, never to another
     * host an upload Location might point at. */
    size_t blen = strlen(reg->base_url);
    int same_host = strncmp(url, reg->base_url, blen) == 0 && (url[blen] == '/' || !url[blen]);
    /* An insecure registry's first scheme that did not serve, and why ("TLS": this request
     * went on over plain HTTP, which the process remembers once the registry answers). */
    const char *first_scheme = NULL;
    char first_error[sizeof err->msg] = "";
    for (int attempt = 0;; attempt++) {
        const char *authz = NULL;
        if (same_host && reg->mode == AUTH_BEARER) {
            authz = cached_token(reg, scope ? scope : "");
            /* a new scope on a registry known to want tokens: get one first, so
             * that a body is not sent only to be refused */
            if (!authz && attempt == 0) {
                if (fetch_token(reg, scope, NULL, err) != 0)
                    goto out;
                authz = cached_token(reg, scope ? scope : "");
            }
        }
        /* Basic auth: the credentials of this request's repository */
        if (same_host && reg->mode == AUTH_BASIC && load_creds(reg, scope, err) != 0)
            goto out;
        char *www = NULL;
        bool transport_failed = false;
        if (perform(reg, url, req, authz,
                    same_host && reg->mode == AUTH_BASIC ? &reg->creds : NULL, resp, &www,
                    &transport_failed, err) != 0) {
            free(www);
            if (same_host && transport_failed && (reg->http_fallback_pending || reg->plain_from_memo)) {
                if (retry_over_other_scheme(reg, &url, err->msg, &first_scheme, first_error, sizeof first_error,
                                            err) != 0)
                    goto out;
                attempt--; /* the same attempt, over the other scheme */
                continue;
            }
            if (first_scheme) {
                char second_error[sizeof err->msg];
                snprintf(second_error, sizeof second_error, "%s", err->msg);
                olm_error_set(err, "%s (and over %s before that: %s)", second_error, first_scheme, first_error);
            }
            goto out;
        }
        if (same_host) {
            /* 400 over plain HTTP is what a TLS port says to a plain request (Go's net/http,
             * nginx): not a registry speaking plain HTTP.  Remembered, it goes back to TLS. */
            bool tls_port = strcmp(reg->scheme, "http") == 0 && resp->status == 400;
            if (reg->plain_from_memo && tls_port) {
                free(www);
                oci_response_free(resp);
                char why[sizeof err->msg];
                snprintf(why, sizeof why, "%s answered HTTP 400 over plain HTTP", reg->host);
                if (retry_over_other_scheme(reg, &url, why, &first_scheme, first_error, sizeof first_error, err) != 0)
                    goto out;
                attempt--;
                continue;
            }
            /* the registry answered: its scheme is settled */
            reg->http_fallback_pending = false;
            reg->plain_from_memo = false;
            bool learned_plain = first_scheme && strcmp(first_scheme, "TLS") == 0;
            if (learned_plain && !tls_port && attempt == 0) /* over plain HTTP, after TLS failed: the next pulls start there */
                oci_scheme_memo_set(reg->host, true);
        }
        if (resp->status != 401 || attempt > 0 || !same_host) {
            free(www);
            break;
        }
        /* 401: learn the challenge (or refresh an expired token) and retry once */
        int hc = handle_challenge(reg, www, scope, err);
        free(www);
        if (hc != 0) {
            oci_response_free(resp);
            goto out;
        }
        oci_response_free(resp);
    }
    rc = 0;
out:
    free(url);
    free(scope);
    return rc;
}

/* ---------------------------------------------------------------- error bodies */

static const char *reason(long status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "unexpected status";
    }
}

void oci_format_registry_error(long status, const char *body, size_t body_len, char *out,
                               size_t out_size)
{
    if (!out || out_size == 0)
        return;
    size_t n = (size_t)snprintf(out, out_size, "%ld", status);
    json_t *root = body && body_len ? json_loadb(body, body_len, 0, NULL) : NULL;
    json_t *errors = json_object_get(root, "errors");
    size_t idx;
    json_t *e;
    int listed = 0;
    json_array_foreach(errors, idx, e) {
        const char *code = json_string_value(json_object_get(e, "code"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (!code && !msg)
            continue;
        if (n < out_size)
            n += (size_t)snprintf(out + n, out_size - n, "%s%s%s%s", listed ? "; " : " ",
                                  code ? code : "", code && msg && *msg ? ": " : "",
                                  msg ? msg : "");
        listed = 1;
    }
    json_decref(root);
    if (listed)
        return;
    if (body && body_len) {
        /* a plain-text or HTML body: its first line, printable characters only, bounded */
        size_t i = 0;
        while (i < body_len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r'))
            i++;
        if (i < body_len && n + 1 < out_size) {
            out[n++] = ' ';
            size_t copied = 0;
            for (; i < body_len && body[i] != '\n' && body[i] != '\r' && copied < 200 &&
                   n + 1 < out_size;
                 i++, copied++)
                out[n++] = (body[i] >= 0x20 && body[i] < 0x7f) ? body[i] : '?';
            out[n] = '\0';
            return;
        }
    }
    if (n < out_size)
        snprintf(out + n, out_size - n, " %s", reason(status));
}

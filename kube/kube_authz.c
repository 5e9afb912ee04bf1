/* kube_authz: TokenReview + SubjectAccessReview with caches (see kube_authz.h). */
#include "kube_authz.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "kube_uvcurl_req.h"

#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SUBJECTACCESSREVIEWS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

typedef struct digest {
    unsigned char b[32];
} digest;

/* One cached decision.  authn: `user` is the TokenReview's status.user (a reference), NULL
 * when the token was not authenticated.  authz: `allowed`. */
typedef struct cache_entry {
    digest key;
    uint64_t expires; /* loop time, ms */
    json_t *user;
    bool allowed;
} cache_entry;

typedef struct cache {
    cache_entry e[KUBE_AUTHZ_CACHE_MAX];
    size_t n;
} cache;

struct kube_authz_pending {
    kube_authz *az;
    kube_authz_pending *prev, *next;
    kube_uvcurl_req *req; /* the review in flight */
    digest token_key, authz_key;
    json_t *user;         /* once authenticated */
    char *verb, *path;
    kube_authz_cb cb;
    void *data;
};

struct kube_authz {
    kube_uvcurl *uc;
    const kube_config *cfg;
    kube_authz_options o;
    cache authn, authz;
    kube_authz_pending *pending;
    unsigned npending;
    unsigned long long reviews;
};

/* ------------------------------------------------------------ caches */

static uint64_t now_ms(const kube_authz *az)
{
    return uv_now(kube_uvcurl_loop(az->uc));
}

static digest sha256(const char *s, size_t n)
{
    digest d;
    unsigned len = sizeof d.b;
    if (EVP_Digest(s, n, d.b, &len, EVP_sha256(), NULL) != 1)
        memset(d.b, 0, sizeof d.b); /* cannot happen with the default provider */
    return d;
}

static cache_entry *cache_find(cache *c, const digest *k, uint64_t now)
{
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(c->e[i].key.b, k->b, sizeof k->b) == 0)
            return c->e[i].expires > now ? &c->e[i] : NULL;
    return NULL;
}

static void cache_drop(cache *c, size_t i)
{
    json_decref(c->e[i].user);
    c->e[i] = c->e[--c->n];
}

/* Replaces the entry for e->key (taking e->user's reference); makes room by dropping the
 * expired entries, then the one closest to expiry. */
static void cache_put(cache *c, cache_entry e, uint64_t now)
{
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(c->e[i].key.b, e.key.b, sizeof e.key.b) == 0 || c->e[i].expires <= now)
            cache_drop(c, i--);
    if (c->n == KUBE_AUTHZ_CACHE_MAX) {
        size_t soonest = 0;
        for (size_t i = 1; i < c->n; i++)
            if (c->e[i].expires < c->e[soonest].expires)
                soonest = i;
        cache_drop(c, soonest);
    }
    c->e[c->n++] = e;
}

static void cache_clear(cache *c)
{
    while (c->n)
        cache_drop(c, c->n - 1);
}

/* The authz key: who (user, uid, groups, extra: the whole userInfo, serialised with sorted
 * keys) and what (verb, path). */
static int authz_key(const json_t *user, const char *verb, const char *path, digest *out)
{
    char *u = json_dumps(user, JSON_COMPACT | JSON_SORT_KEYS);
    char *s = NULL;
    int n = u ? asprintf(&s, "%s\n%s\n%s", u, verb, path) : -1;
    free(u);
    if (n < 0)
        return -1;
    *out = sha256(s, (size_t)n);
    free(s);
    return 0;
}

/* ------------------------------------------------------------ decisions */

static const char *user_name(const json_t *user)
{
    const char *n = json_string_value(json_object_get(user, "username"));
    return n ? n : "";
}

static int denied_msg(const json_t *user, char *msg, size_t msgsz)
{
    snprintf(msg, msgsz, "Authorization denied for user %s", user_name(user));
    return 403;
}

static void pending_unlink_free(kube_authz_pending *p)
{
    kube_authz *az = p->az;
    if (p->prev)
        p->prev->next = p->next;
    else
        az->pending = p->next;
    if (p->next)
        p->next->prev = p->prev;
    az->npending--;
    json_decref(p->user);
    free(p->verb);
    free(p->path);
    free(p);
}

/* Ends a pending check: the callback, then the handle is gone. */
static void finish(kube_authz_pending *p, int status, const char *msg, const char *detail)
{
    p->req = NULL;
    kube_authz_cb cb = p->cb;
    void *data = p->data;
    pending_unlink_free(p);
    cb(status, msg, detail, data);
}

static int start_review(kube_authz_pending *p, const char *path, json_t *body,
                        void (*on_done)(long, const char *, size_t, const olm_error *, void *), olm_error *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text)
        return olm_error_set(err, "out of memory");
    kube_authz *az = p->az;
    p->req = kube_uvcurl_req_start(az->uc, az->cfg, "POST", path, text, az->o.review_timeout_ms, on_done, p, err);
    /* The body holds a bearer token (TokenReview): wipe it; the request keeps its own copy. */
    memset(text, 0, strlen(text));
    free(text);
    if (!p->req)
        return -1;
    az->reviews++;
    return 0;
}

/* The HTTP status and parsed body of a review, or NULL with detail set. */
static json_t *review_result(const char *what, long status, const char *body, size_t len, const olm_error *err,
                             char *detail, size_t detailsz)
{
    if (status == 0) {
        snprintf(detail, detailsz, "%s: %.1900s", what, err ? err->msg : "no response");
        return NULL;
    }
    json_t *doc = json_loadb(body, len, 0, NULL);
    if (status != 200 && status != 201) {
        const char *m = json_string_value(json_object_get(doc, "message"));
        snprintf(detail, detailsz, "%s: HTTP %ld%s%.1900s", what, status, m ? ": " : "", m ? m : "");
        json_decref(doc);
        return NULL;
    }
    if (!json_is_object(json_object_get(doc, "status"))) {
        snprintf(detail, detailsz, "%s: HTTP %ld without a status", what, status);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static void on_sar(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_authz_pending *p = data;
    kube_authz *az = p->az;
    char detail[OLM_ERROR_MAX], msg[512];
    json_t *doc = review_result("SubjectAccessReview", status, body, len, err, detail, sizeof detail);
    if (!doc) {
        snprintf(msg, sizeof msg, "Authorization for user %s failed", user_name(p->user));
        finish(p, 500, msg, detail);
        return;
    }
    bool allowed = json_is_true(json_object_get(json_object_get(doc, "status"), "allowed"));
    json_decref(doc);
    uint64_t ttl = allowed ? az->o.authz_allow_ttl_ms : az->o.authz_deny_ttl_ms;
    cache_put(&az->authz, (cache_entry){.key = p->authz_key, .expires = now_ms(az) + ttl, .allowed = allowed},
              now_ms(az));
    int code = allowed ? 200 : denied_msg(p->user, msg, sizeof msg);
    finish(p, code, allowed ? "" : msg, NULL);
}

static json_t *sar_body(const json_t *user, const char *verb, const char *path)
{
    json_t *spec = json_pack("{s:{s:s,s:s}}", "nonResourceAttributes", "path", path, "verb", verb);
    const char *keys[][2] = {{"username", "user"}, {"uid", "uid"}, {"groups", "groups"}, {"extra", "extra"}};
    for (size_t i = 0; spec && i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(user, keys[i][0]);
        if (v && json_object_set(spec, keys[i][1], v) != 0) {
            json_decref(spec);
            spec = NULL;
        }
    }
    return spec ? json_pack("{s:s,s:s,s:o}", "apiVersion", "authorization.k8s.io/v1", "kind",
                            "SubjectAccessReview", "spec", spec)
                : NULL;
}

/* Authenticated as p->user: a cached authz decision, else a SubjectAccessReview.  Returns the
 * status when decided now, 0 when the review runs, -1 with err when it could not start. */
static int authorize(kube_authz_pending *p, char *msg, size_t msgsz, olm_error *err)
{
    kube_authz *az = p->az;
    if (authz_key(p->user, p->verb, p->path, &p->authz_key) != 0)
        return olm_error_set(err, "out of memory");
    const cache_entry *hit = cache_find(&az->authz, &p->authz_key, now_ms(az));
    if (hit)
        return hit->allowed ? 200 : denied_msg(p->user, msg, msgsz);
    return start_review(p, SUBJECTACCESSREVIEWS, sar_body(p->user, p->verb, p->path), on_sar, err);
}

static void on_tokenreview(long status, const char *body, size_t len, const olm_error *err, void *data)
{
    kube_authz_pending *p = data;
    kube_authz *az = p->az;
    p->req = NULL;
    char detail[OLM_ERROR_MAX], msg[512];
    json_t *doc = review_result("TokenReview", status, body, len, err, detail, sizeof detail);
    if (!doc) {
        finish(p, 500, "Authentication failed", detail);
        return;
    }
    const json_t *st = json_object_get(doc, "status");
    json_t *user = json_is_true(json_object_get(st, "authenticated")) ? json_object_get(st, "user") : NULL;
    if (user && !json_is_object(user))
        user = NULL;
    json_incref(user);
    json_decref(doc);
    cache_put(&az->authn,
              (cache_entry){.key = p->token_key, .expires = now_ms(az) + az->o.authn_ttl_ms, .user = json_incref(user)},
              now_ms(az));
    if (!user) {
        finish(p, 401, "Unauthorized", NULL);
        return;
    }
    p->user = user;
    olm_error e;
    int code = authorize(p, msg, sizeof msg, &e);
    if (code > 0)
        finish(p, code, code == 200 ? "" : msg, NULL);
    else if (code < 0)
        finish(p, 500, "Authorization failed", e.msg);
}

/* ------------------------------------------------------------ API */

kube_authz *kube_authz_new(kube_uvcurl *uc, const kube_config *cfg, const kube_authz_options *opts, olm_error *err)
{
    kube_authz *az = calloc(1, sizeof *az);
    if (!az) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    az->uc = uc;
    az->cfg = cfg;
    if (opts)
        az->o = *opts;
    if (!az->o.authn_ttl_ms)
        az->o.authn_ttl_ms = 60000;
    if (!az->o.authz_allow_ttl_ms)
        az->o.authz_allow_ttl_ms = 300000;
    if (!az->o.authz_deny_ttl_ms)
        az->o.authz_deny_ttl_ms = 30000;
    if (!az->o.review_timeout_ms)
        az->o.review_timeout_ms = 10000;
    if (!az->o.max_pending)
        az->o.max_pending = 64;
    return az;
}

void kube_authz_free(kube_authz *az)
{
    if (!az)
        return;
    while (az->pending) {
        kube_authz_pending *p = az->pending;
        if (p->req)
            kube_uvcurl_req_cancel(p->req);
        finish(p, 503, "shutting down", NULL);
    }
    cache_clear(&az->authn);
    cache_clear(&az->authz);
    free(az);
}

/* The token of "Bearer <token>" (the scheme in any case, as the apiserver's bearer
 * authenticator), or NULL. */
static const char *bearer_token(const char *h, size_t *len)
{
    if (!h)
        return NULL;
    h += strspn(h, " \t");
    if (strncasecmp(h, "bearer ", 7) != 0)
        return NULL;
    h += 7;
    h += strspn(h, " \t");
    size_t n = strcspn(h, " \t\r\n");
    if (n == 0 || h[n + strspn(h + n, " \t\r\n")] != '\0')
        return NULL; /* empty, or more than one word */
    *len = n;
    return h;
}

int kube_authz_check(kube_authz *az, const char *authorization, const char *verb, const char *path, kube_authz_cb cb,
                     void *data, kube_authz_pending **pending, char *msg, size_t msgsz)
{
    *pending = NULL;
    size_t tlen = 0;
    const char *token = bearer_token(authorization, &tlen);
    if (!token) {
        snprintf(msg, msgsz, "Unauthorized");
        return 401;
    }
    digest tk = sha256(token, tlen);
    uint64_t now = now_ms(az);
    const cache_entry *hit = cache_find(&az->authn, &tk, now);
    if (hit && !hit->user) {
        snprintf(msg, msgsz, "Unauthorized");
        return 401;
    }
    if (az->npending >= az->o.max_pending) {
        snprintf(msg, msgsz, "too many requests waiting for authentication; retry later");
        return 503;
    }
    kube_authz_pending *p = calloc(1, sizeof *p);
    if (p) {
        p->verb = strdup(verb);
        p->path = strdup(path);
    }
    if (!p || !p->verb || !p->path) {
        if (p) {
            free(p->verb);
            free(p->path);
        }
        free(p);
        snprintf(msg, msgsz, "out of memory");
        return 503;
    }
    *p = (kube_authz_pending){.az = az, .next = az->pending, .token_key = tk, .verb = p->verb, .path = p->path,
                              .cb = cb, .data = data};
    if (az->pending)
        az->pending->prev = p;
    az->pending = p;
    az->npending++;
    olm_error err;
    int code;
    if (hit) {
        p->user = json_incref(hit->user);
        code = authorize(p, msg, msgsz, &err);
    } else {
        char *tok = strndup(token, tlen);
        json_t *body = tok ? json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                                       "TokenReview", "spec", "token", tok)
                           : NULL;
        if (tok) {
            memset(tok, 0, tlen);
            free(tok);
        }
        code = start_review(p, TOKENREVIEWS, body, on_tokenreview, &err);
    }
    if (code == 0) {
        *pending = p;
        return 0;
    }
    pending_unlink_free(p);
    if (code < 0) {
        snprintf(msg, msgsz, "Authentication failed");
        return 500;
    }
    return code;
}

void kube_authz_cancel(kube_authz_pending *p)
{
    if (!p)
        return;
    if (p->req)
        kube_uvcurl_req_cancel(p->req);
    pending_unlink_free(p);
}

unsigned long long kube_authz_reviews(const kube_authz *az)
{
    return az->reviews;
}

static int gate_check(void *gate, const char *authorization, const char *verb, const char *path,
                      olm_http_gate_done done, void *req_data, void **handle, char *msg, size_t msgsz)
{
    kube_authz_pending *p = NULL;
    int rc = kube_authz_check(gate, authorization, verb, path, done, req_data, &p, msg, msgsz);
    *handle = p;
    return rc;
}

static void gate_cancel(void *handle)
{
    kube_authz_cancel(handle);
}

olm_http_gate kube_authz_gate(kube_authz *az)
{
    return (olm_http_gate){.check = gate_check, .cancel = gate_cancel, .gate = az};
}

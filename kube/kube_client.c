/* kube_client: the blocking REST client (see kube_client.h for the threading
 * and ownership rules).  One CURL easy handle per call keeps calls independent;
 * pooling idle handles keeps their keep-alive connections for the next call. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_client_internal.h"
#include "strbuf.h"

#define KUBE_MAX_BODY ((size_t)512 * 1024 * 1024) /* a runaway response must not eat the heap */

/* ------------------------------------------------------------ lifecycle */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *userp)
{
    (void)h;
    (void)access;
    kube_client *c = userp;
    pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *userp)
{
    (void)h;
    kube_client *c = userp;
    pthread_mutex_unlock(&c->share_locks[data]);
}

kube_client *kube_client_new(kube_config *cfg, const kube_client_options *opts, olm_error *err)
{
    if (!cfg || !cfg->server) {
        olm_error_set(err, "kube client: the configuration has no server");
        return NULL;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        olm_error_set(err, "kube client: libcurl initialisation failed");
        return NULL;
    }
    kube_client *c = calloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->connect_timeout_ms = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
    c->timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : 60000;
    c->user_agent = strdup(opts && opts->user_agent ? opts->user_agent : "olmv1");
    c->disc = json_object();
    if (!c->user_agent || !c->disc)
        goto oom_free;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    pthread_mutex_init(&c->disc_lock, NULL);
    pthread_mutex_init(&c->pool_lock, NULL);
    c->share = curl_share_init();
    if (!c->share) {
        kube_client_free(c);
        goto oom;
    }
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    c->cfg = *cfg; /* take ownership only once nothing can fail */
    memset(cfg, 0, sizeof *cfg);
    return c;
oom_free:
    json_decref(c->disc);
    free(c->user_agent);
    free(c);
    curl_global_cleanup();
oom:
    olm_error_set(err, "out of memory");
    return NULL;
}

void kube_client_free(kube_client *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->npool; i++) /* before the share they point at */
        curl_easy_cleanup(c->pool[i]);
    pthread_mutex_destroy(&c->pool_lock);
    if (c->share)
        curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
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
    pthread_mutex_lock(&c->pool_lock);
    if (c->npool > 0)
        h = c->pool[--c->npool];
    pthread_mutex_unlock(&c->pool_lock);
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
        pthread_mutex_lock(&c->pool_lock);
        if (c->npool < KUBE_CLIENT_POOL) {
            c->pool[c->npool++] = h;
            h = NULL;
        }
        pthread_mutex_unlock(&c->pool_lock);
    }
    if (h)
        curl_easy_cleanup(h);
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

long kube_request(kube_client *c, const char *method, const char *path, const char *query,
                  const char *content_type, const char *body, size_t body_len,
                  kube_response *resp, olm_error *err)
{
    memset(resp, 0, sizeof *resp);
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
    TRY_SETOPT(CURLOPT_SHARE, c->share);
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
done:
    if (result < 0)
        kube_response_free(resp);
    strbuf_free(&sink.sb);
    curl_slist_free_all(headers); /* holds the bearer token: free promptly */
    handle_release(c, h, result >= 0);
    free(url);
    return result;
}

/* ------------------------------------------------------------ JSON calls */

/* Sends a request and decodes a 2xx JSON answer into *out (when out != NULL).
 * Failures go through kube_status_error. */
static int call_json(kube_client *c, const char *method, const char *path, const char *query,
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

struct target {
    kube_resource_info ri;
    const char *ns, *name;
};

/* apiVersion, kind, metadata.namespace and metadata.name of an object. */
static int object_target(kube_client *c, const json_t *obj, bool need_name, struct target *t, olm_error *err)
{
    if (!json_is_object(obj))
        return olm_error_set(err, "the object is not a JSON object");
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const json_t *md = json_object_get(obj, "metadata");
    t->name = json_string_value(json_object_get(md, "name"));
    t->ns = json_string_value(json_object_get(md, "namespace"));
    if (!av || !kind)
        return olm_error_set(err, "the object has no apiVersion or kind");
    if (need_name && (!t->name || !*t->name))
        return olm_error_set(err, "%s object has no metadata.name", kind);
    if (kube_resolve_kind(c, av, kind, &t->ri, err) < 0)
        return -1;
    if (t->ri.namespaced && (!t->ns || !*t->ns))
        return olm_error_set(err, "%s \"%s\" is namespaced but has no metadata.namespace", kind,
                             t->name ? t->name : "");
    return 0;
}

static int object_call(kube_client *c, const char *method, const json_t *obj, bool with_name,
                       const char *sub, const char *query, const char *ctype, json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    struct target t;
    if (object_target(c, obj, true, &t, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&t.ri, t.ns, with_name ? t.name : NULL, sub, err);
    if (!path)
        return KUBE_ERROR;
    char *body = json_dumps(obj, JSON_COMPACT);
    if (!body) {
        free(path);
        return olm_error_set(err, "out of memory");
    }
    int rc = call_json(c, method, path, query, ctype, body, out, err);
    free(body);
    free(path);
    return rc;
}

int kube_get_resource(kube_client *c, const kube_resource_info *ri, const char *ns, const char *name, json_t **out,
                      olm_error *err)
{
    *out = NULL;
    char *path = kube_resource_path(ri, ns, name, NULL, err);
    if (!path)
        return KUBE_ERROR;
    int rc = call_json(c, "GET", path, NULL, NULL, NULL, out, err);
    free(path);
    return rc;
}

int kube_get(kube_client *c, const char *api_version, const char *kind, const char *ns,
             const char *name, json_t **out, olm_error *err)
{
    *out = NULL;
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    return kube_get_resource(c, &ri, ns, name, out, err);
}

int kube_list(kube_client *c, const char *api_version, const char *kind, const char *ns,
              const kube_list_options *opts, json_t **out, olm_error *err)
{
    *out = NULL;
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&ri, ns, NULL, NULL, err);
    if (!path)
        return KUBE_ERROR;
    char *q = NULL;
    int oom = 0;
    if (opts) {
        char lim[32];
        snprintf(lim, sizeof lim, "%ld", opts->limit);
        if (opts->label_selector && *opts->label_selector)
            oom |= kube_query_add(&q, "labelSelector", opts->label_selector);
        if (opts->field_selector && *opts->field_selector)
            oom |= kube_query_add(&q, "fieldSelector", opts->field_selector);
        if (opts->limit > 0)
            oom |= kube_query_add(&q, "limit", lim);
        if (opts->continue_token && *opts->continue_token)
            oom |= kube_query_add(&q, "continue", opts->continue_token);
        if (opts->resource_version)
            oom |= kube_query_add(&q, "resourceVersion", opts->resource_version);
    }
    int rc = oom ? olm_error_set(err, "out of memory") : call_json(c, "GET", path, q, NULL, NULL, out, err);
    free(q);
    free(path);
    return rc;
}

int kube_create(kube_client *c, const json_t *obj, json_t **out, olm_error *err)
{
    return object_call(c, "POST", obj, false, NULL, NULL, "application/json", out, err);
}

int kube_update(kube_client *c, const json_t *obj, json_t **out, olm_error *err)
{
    return object_call(c, "PUT", obj, true, NULL, NULL, "application/json", out, err);
}

int kube_update_status(kube_client *c, const json_t *obj, json_t **out, olm_error *err)
{
    return object_call(c, "PUT", obj, true, "status", NULL, "application/json", out, err);
}

static const char *patch_content_type(kube_patch_type t)
{
    switch (t) {
    case KUBE_PATCH_JSON: return "application/json-patch+json";
    case KUBE_PATCH_STRATEGIC: return "application/strategic-merge-patch+json";
    case KUBE_PATCH_MERGE: break;
    }
    return "application/merge-patch+json";
}

int kube_patch(kube_client *c, const char *api_version, const char *kind, const char *ns,
               const char *name, const char *subresource, kube_patch_type type, const char *patch,
               json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&ri, ns, name, subresource, err);
    if (!path)
        return KUBE_ERROR;
    int rc = call_json(c, "PATCH", path, NULL, patch_content_type(type), patch, out, err);
    free(path);
    return rc;
}

char *kube_apply_query(const char *field_manager, bool force)
{
    char *q = NULL;
    if (kube_query_add(&q, "fieldManager", field_manager) < 0 || (force && kube_query_add(&q, "force", "true") < 0)) {
        free(q);
        return NULL;
    }
    return q;
}

int kube_apply(kube_client *c, const json_t *obj, const char *field_manager, bool force,
               const char *subresource, json_t **out, olm_error *err)
{
    if (out)
        *out = NULL;
    if (!field_manager || !*field_manager)
        return olm_error_set(err, "server-side apply needs a field manager");
    char *q = kube_apply_query(field_manager, force);
    if (!q)
        return olm_error_set(err, "out of memory");
    int rc = object_call(c, "PATCH", obj, true, subresource, q, "application/apply-patch+yaml", out, err);
    free(q);
    return rc;
}

int kube_delete(kube_client *c, const char *api_version, const char *kind, const char *ns,
                const char *name, const kube_delete_options *opts, olm_error *err)
{
    kube_resource_info ri;
    if (kube_resolve_kind(c, api_version, kind, &ri, err) < 0)
        return KUBE_ERROR;
    char *path = kube_resource_path(&ri, ns, name, NULL, err);
    if (!path)
        return KUBE_ERROR;
    char *body = NULL;
    int rc = KUBE_OK;
    if (opts) {
        json_t *d = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "DeleteOptions");
        json_t *pre = json_object();
        int bad = !d || !pre;
        if (!bad && opts->propagation_policy)
            bad |= json_object_set_new(d, "propagationPolicy", json_string(opts->propagation_policy));
        if (!bad && opts->grace_period_seconds >= 0)
            bad |= json_object_set_new(d, "gracePeriodSeconds", json_integer(opts->grace_period_seconds));
        if (!bad && opts->precondition_uid)
            bad |= json_object_set_new(pre, "uid", json_string(opts->precondition_uid));
        if (!bad && opts->precondition_resource_version)
            bad |= json_object_set_new(pre, "resourceVersion", json_string(opts->precondition_resource_version));
        if (!bad && json_object_size(pre) > 0)
            bad |= json_object_set(d, "preconditions", pre);
        if (!bad)
            body = json_dumps(d, JSON_COMPACT);
        json_decref(pre);
        json_decref(d);
        if (!body)
            rc = olm_error_set(err, "out of memory");
    }
    if (rc == KUBE_OK)
        rc = call_json(c, "DELETE", path, NULL, body ? "application/json" : NULL, body, NULL, err);
    free(body);
    free(path);
    return rc;
}

/* ------------------------------------------------------------ TokenRequest */

int kube_parse_time(const char *s, time_t *out)
{
    if (!s)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    if (*p == '.') /* fractional seconds: dropped */
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int hh = 0, mm = 0;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = t - off;
    return 0;
}

int kube_token_request(kube_client *c, const char *ns, const char *sa, int64_t expiration_seconds,
                       const char *const *audiences, char **token, time_t *expires, olm_error *err)
{
    *token = NULL;
    if (expiration_seconds < 600)
        return olm_error_set(err, "TokenRequest for %s/%s: expirationSeconds %lld is below the API server's "
                             "minimum of 600 (10 minutes)", ns, sa, (long long)expiration_seconds);
    kube_resource_info ri;
    kube_builtin_kind("v1", "ServiceAccount", &ri);
    char *path = kube_resource_path(&ri, ns, sa, "token", err);
    if (!path)
        return KUBE_ERROR;
    json_t *spec = json_pack("{s:I}", "expirationSeconds", (json_int_t)expiration_seconds);
    json_t *auds = json_array();
    int bad = !spec || !auds;
    for (size_t i = 0; !bad && audiences && audiences[i]; i++)
        bad |= json_array_append_new(auds, json_string(audiences[i]));
    if (!bad && json_array_size(auds) > 0)
        bad |= json_object_set(spec, "audiences", auds);
    json_decref(auds);
    json_t *req = bad ? NULL
                      : json_pack("{s:s, s:s, s:O}", "apiVersion", "authentication.k8s.io/v1", "kind",
                                  "TokenRequest", "spec", spec);
    json_decref(spec);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!body) {
        free(path);
        return olm_error_set(err, "out of memory");
    }
    json_t *resp = NULL;
    int rc = call_json(c, "POST", path, NULL, "application/json", body, &resp, err);
    free(body);
    free(path);
    if (rc < 0) {
        olm_error_wrap(err, "TokenRequest for ServiceAccount %s/%s", ns, sa);
        return rc; /* keep the kube_result (NotFound, Forbidden, ...) */
    }
    const json_t *st = json_object_get(resp, "status");
    const char *tok = json_string_value(json_object_get(st, "token"));
    const char *exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    time_t when = 0;
    if (!tok || !*tok)
        rc = olm_error_set(err, "TokenRequest for ServiceAccount %s/%s: the response has no status.token", ns, sa);
    else if (expires && kube_parse_time(exp, &when) < 0)
        rc = olm_error_set(err, "TokenRequest for ServiceAccount %s/%s: bad status.expirationTimestamp \"%s\"", ns,
                           sa, exp ? exp : "");
    else if (!(*token = strdup(tok)))
        rc = olm_error_set(err, "out of memory");
    if (rc == KUBE_OK && expires)
        *expires = when;
    json_decref(resp); /* jansson does not wipe strings; the token copy is the caller's */
    return rc;
}

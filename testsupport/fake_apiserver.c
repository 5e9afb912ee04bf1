/* fake_apiserver: see fake_apiserver.h. */
#include "fake_apiserver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fake_http_server.h"
#include "olm_array.h"

typedef struct stored {
    char *path;
    json_t *obj;
} stored;

typedef struct fail_rule {
    char *method, *target, *token, *message;
    int code, times;
} fail_rule;

typedef struct logged {
    char *line; /* "METHOD path?query" */
    char *token;
    char *body; /* writes only: what was sent */
    bool get;
} logged;

struct fake_apiserver {
    fake_http_server http;
    pthread_mutex_t lock;
    stored *objs;
    size_t nobjs, capobjs;
    unsigned long rv, uid, tokens;
    fail_rule *rules;
    size_t nrules, caprules;
    logged *log;
    size_t nlog, caplog;
};

/* Resources whose status only /status writes: a main-resource write keeps it. */
static const char *const STATUS_SUBRESOURCE[] = {"clusterextensions", "clusterobjectsets", "clustercatalogs", "clusteroperators",
                                                 "deployments", "customresourcedefinitions", "persistentvolumeclaims"};

static void *xmalloc_fail(void)
{
    fprintf(stderr, "fake_apiserver: out of memory\n");
    abort();
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    return d ? d : xmalloc_fail();
}

/* ------------------------------------------------------------ paths */

typedef enum target_kind { T_OTHER, T_COLLECTION, T_ITEM, T_SUB } target_kind;

typedef struct rest_target {
    target_kind kind;
    char item[8192];       /* T_ITEM, T_SUB: the item's path */
    char collection[4096]; /* T_COLLECTION, T_ITEM, T_SUB: the collection's */
    char ns[256];          /* namespace of a namespaced path, else "" */
    char resource[256];
    char sub[64];          /* T_SUB */
} rest_target;

/* Splits a Kubernetes REST path: /api/v1/... or /apis/<group>/<version>/..., then
 * [namespaces/<ns>/]<resource>[/<name>[/<sub>]] (namespaces/<ns> alone is an item). */
static void classify(const char *path, rest_target *t)
{
    memset(t, 0, sizeof *t);
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    char *seg[16];
    size_t n = 0;
    for (char *save = NULL, *s = strtok_r(copy, "/", &save); s && n < 16; s = strtok_r(NULL, "/", &save))
        seg[n++] = s;
    size_t base = n > 0 && strcmp(seg[0], "api") == 0 ? 2 : n > 0 && strcmp(seg[0], "apis") == 0 ? 3 : n;
    if (base > n)
        return;
    char **r = seg + base;
    size_t k = n - base, res;
    if (k >= 3 && strcmp(r[0], "namespaces") == 0 && strcmp(r[2], "status") != 0 && strcmp(r[2], "finalize") != 0) {
        snprintf(t->ns, sizeof t->ns, "%s", r[1]);
        res = 2;
    } else {
        res = 0;
    }
    if (k <= res)
        return;
    snprintf(t->resource, sizeof t->resource, "%s", r[res]);
    /* the collection: everything up to the resource */
    size_t len = 0;
    for (size_t i = 0; i <= base + res; i++)
        len += (size_t)snprintf(t->collection + len, sizeof t->collection - len, "/%s", seg[i]);
    size_t rest = k - res; /* resource[, name[, sub]] */
    if (rest == 1) {
        t->kind = T_COLLECTION;
        return;
    }
    snprintf(t->item, sizeof t->item, "%s/%s", t->collection, r[res + 1]);
    if (rest == 2) {
        t->kind = T_ITEM;
    } else if (rest == 3) {
        t->kind = T_SUB;
        snprintf(t->sub, sizeof t->sub, "%s", r[res + 2]);
    }
}

static bool has_status_subresource(const char *resource)
{
    for (size_t i = 0; i < sizeof STATUS_SUBRESOURCE / sizeof STATUS_SUBRESOURCE[0]; i++)
        if (strcmp(resource, STATUS_SUBRESOURCE[i]) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------ the store */

static stored *find(fake_apiserver *fs, const char *path)
{
    for (size_t i = 0; i < fs->nobjs; i++)
        if (strcmp(fs->objs[i].path, path) == 0)
            return &fs->objs[i];
    return NULL;
}

static json_t *meta(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!md) {
        md = json_object();
        json_object_set_new(obj, "metadata", md);
    }
    return md;
}

static const char *meta_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* Stores `obj` (stolen) at `path`: a new resourceVersion, a uid once. */
static json_t *store(fake_apiserver *fs, const char *path, json_t *obj)
{
    char buf[32];
    json_t *md = meta(obj);
    snprintf(buf, sizeof buf, "%lu", ++fs->rv);
    json_object_set_new(md, "resourceVersion", json_string(buf));
    if (!json_object_get(md, "uid")) {
        snprintf(buf, sizeof buf, "uid-%lu", ++fs->uid);
        json_object_set_new(md, "uid", json_string(buf));
    }
    if (strstr(path, "/customresourcedefinitions/"))
        json_object_set_new(obj, "status",
                            json_pack("{s:[{s:s, s:s}]}", "conditions", "type", "Established", "status", "True"));
    stored *s = find(fs, path);
    if (s) {
        json_decref(s->obj);
        s->obj = obj;
        return obj;
    }
    if (OLM_ARRAY_RESERVE(fs->objs, fs->capobjs, fs->nobjs + 1) < 0)
        xmalloc_fail();
    fs->objs[fs->nobjs++] = (stored){xstrdup(path), obj};
    return obj;
}

static void drop(fake_apiserver *fs, stored *s)
{
    free(s->path);
    json_decref(s->obj);
    *s = fs->objs[--fs->nobjs];
}

/* ------------------------------------------------------------ answers */

static void answer(fake_http_response *resp, int code, const json_t *obj)
{
    resp->status = code;
    resp->body_owned = json_dumps(obj, JSON_COMPACT);
}

static const char *reason_of(int code)
{
    switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 503: return "ServiceUnavailable";
    default: return code >= 500 ? "InternalError" : "";
    }
}

static void status_answer(fake_http_response *resp, int code, const char *reason, const char *message)
{
    json_t *st = json_pack("{s:s, s:s, s:s, s:s, s:i}", "kind", "Status", "status", code < 300 ? "Success" : "Failure",
                           "reason", reason ? reason : reason_of(code), "message", message, "code", code);
    answer(resp, code, st);
    json_decref(st);
}

static void not_found(fake_http_response *resp, const rest_target *t)
{
    char msg[512];
    const char *slash = strrchr(t->item, '/');
    snprintf(msg, sizeof msg, "%s \"%s\" not found", t->resource, slash ? slash + 1 : "");
    status_answer(resp, 404, "NotFound", msg);
}

static void conflict(fake_http_response *resp, const rest_target *t)
{
    char msg[512];
    const char *slash = strrchr(t->item, '/');
    snprintf(msg, sizeof msg,
             "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes "
             "to the latest version and try again",
             t->resource, slash ? slash + 1 : "");
    status_answer(resp, 409, "Conflict", msg);
}

/* ------------------------------------------------------------ label selectors */

static void url_decode(const char *in, char *out, size_t outsz)
{
    size_t n = 0;
    for (const char *p = in; *p && *p != '&' && n + 1 < outsz; p++) {
        unsigned c;
        if (*p == '%' && sscanf(p + 1, "%2x", &c) == 1) {
            out[n++] = (char)c;
            p += 2;
        } else {
            out[n++] = *p == '+' ? ' ' : *p;
        }
    }
    out[n] = '\0';
}

/* Whether obj's labels satisfy every requirement of `sel` (k=v, k==v, k!=v, k, !k). */
static bool selected(const json_t *obj, const char *sel_in)
{
    char sel[1024];
    snprintf(sel, sizeof sel, "%s", sel_in);
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    for (char *save = NULL, *req = strtok_r(sel, ",", &save); req; req = strtok_r(NULL, ",", &save)) {
        char *ne = strstr(req, "!="), *eq = strchr(req, '=');
        if (ne) {
            *ne = '\0';
            const char *v = json_string_value(json_object_get(labels, req));
            if (v && strcmp(v, ne + 2) == 0)
                return false;
        } else if (eq) {
            *eq = '\0';
            const char *want = eq[1] == '=' ? eq + 2 : eq + 1;
            const char *v = json_string_value(json_object_get(labels, req));
            if (!v || strcmp(v, want) != 0)
                return false;
        } else if (req[0] == '!') {
            if (json_object_get(labels, req + 1))
                return false;
        } else if (!json_object_get(labels, req)) {
            return false;
        }
    }
    return true;
}

/* The value of query parameter `key` (decoded) into buf; false when absent. */
static bool query_param(const char *query, const char *key, char *buf, size_t bufsz)
{
    size_t kl = strlen(key);
    for (const char *p = query; p && *p;) {
        if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
            url_decode(p + kl + 1, buf, bufsz);
            return true;
        }
        p = strchr(p, '&');
        if (p)
            p++;
    }
    return false;
}

static void list(fake_apiserver *fs, const rest_target *t, const char *query, fake_http_response *resp)
{
    char sel[1024] = "";
    query_param(query, "labelSelector", sel, sizeof sel);
    json_t *items = json_array();
    for (size_t i = 0; i < fs->nobjs; i++) {
        rest_target it;
        classify(fs->objs[i].path, &it);
        if (it.kind != T_ITEM || strcmp(it.resource, t->resource) != 0)
            continue;
        /* the same collection, or, for a list across namespaces, the same resource path */
        bool same = strcmp(it.collection, t->collection) == 0;
        if (!same && !*t->ns && *it.ns) {
            char all[4096];
            const char *nsp = strstr(it.collection, "/namespaces/");
            snprintf(all, sizeof all, "%.*s/%s", nsp ? (int)(nsp - it.collection) : 0, it.collection, it.resource);
            same = strcmp(all, t->collection) == 0;
        }
        if (same && (!*sel || selected(fs->objs[i].obj, sel)))
            json_array_append(items, fs->objs[i].obj);
    }
    char rv[32];
    snprintf(rv, sizeof rv, "%lu", fs->rv);
    json_t *l = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", "List", "apiVersion", "v1", "metadata",
                          "resourceVersion", rv, "items", items);
    answer(resp, 200, l);
    json_decref(l);
}

/* ------------------------------------------------------------ writes */

/* RFC 7386 JSON merge patch of `patch` onto `target` (modified). */
static void merge_patch(json_t *dst, const json_t *patch)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)patch, k, v) {
        if (json_is_null(v)) {
            json_object_del(dst, k);
        } else if (json_is_object(v) && json_is_object(json_object_get(dst, k))) {
            merge_patch(json_object_get(dst, k), v);
        } else if (json_is_object(v)) {
            json_t *fresh = json_object();
            merge_patch(fresh, v);
            json_object_set_new(dst, k, fresh);
        } else {
            json_object_set(dst, k, v);
        }
    }
}

static bool stale(const json_t *stored_obj, const json_t *incoming)
{
    const char *want = meta_str(incoming, "resourceVersion");
    return want && *want && strcmp(want, meta_str(stored_obj, "resourceVersion")) != 0;
}

/* What a write keeps of the stored object whatever the body says: identity and deletion. */
static void keep_server_fields(const json_t *old, json_t *next)
{
    static const char *const keep[] = {"uid", "creationTimestamp", "deletionTimestamp"};
    json_t *md = meta(next);
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        json_t *v = json_object_get(json_object_get(old, "metadata"), keep[i]);
        if (v)
            json_object_set(md, keep[i], v);
        else
            json_object_del(md, keep[i]);
    }
    json_t *gen = json_object_get(json_object_get(old, "metadata"), "generation");
    json_int_t g = json_integer_value(gen);
    if (!json_equal(json_object_get(old, "spec"), json_object_get(next, "spec")))
        g++;
    if (gen || g)
        json_object_set_new(md, "generation", json_integer(g));
}

/* Stores the new version of an item, or removes it when it is being deleted and has no
 * finalizers left; answers with it. */
static void write_item(fake_apiserver *fs, const rest_target *t, json_t *next, fake_http_response *resp)
{
    json_t *fins = json_object_get(json_object_get(next, "metadata"), "finalizers");
    if (meta_str(next, "deletionTimestamp") && json_array_size(fins) == 0) {
        stored *s = find(fs, t->item);
        if (s)
            drop(fs, s);
        answer(resp, 200, next);
        json_decref(next);
        return;
    }
    answer(resp, 200, store(fs, t->item, next));
}

static void create(fake_apiserver *fs, const rest_target *t, json_t *body, fake_http_response *resp)
{
    const char *name = meta_str(body, "name");
    if (!name) {
        json_decref(body);
        status_answer(resp, 422, NULL, "metadata.name: Required value");
        return;
    }
    char item[8192];
    snprintf(item, sizeof item, "%s/%s", t->collection, name);
    if (find(fs, item)) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s \"%s\" already exists", t->resource, name);
        json_decref(body);
        status_answer(resp, 409, "AlreadyExists", msg);
        return;
    }
    if (*t->ns)
        json_object_set_new(meta(body), "namespace", json_string(t->ns));
    if (!json_object_get(meta(body), "generation"))
        json_object_set_new(meta(body), "generation", json_integer(1));
    answer(resp, 201, store(fs, item, body));
}

/* POST .../serviceaccounts/<sa>/token. */
static void token_request(fake_apiserver *fs, const rest_target *t, fake_http_response *resp)
{
    if (strcmp(t->resource, "serviceaccounts") != 0 || strcmp(t->sub, "token") != 0) {
        status_answer(resp, 404, NULL, "the server could not find the requested resource");
        return;
    }
    if (!find(fs, t->item)) {
        not_found(resp, t);
        return;
    }
    char tok[64];
    snprintf(tok, sizeof tok, "fake-token-%lu", ++fs->tokens);
    json_t *tr = json_pack("{s:s, s:s, s:{s:s, s:s}}", "kind", "TokenRequest", "apiVersion", "authentication.k8s.io/v1",
                           "status", "token", tok, "expirationTimestamp", "2099-01-01T00:00:00Z");
    answer(resp, 201, tr);
    json_decref(tr);
}

static void update(fake_apiserver *fs, const rest_target *t, json_t *body, fake_http_response *resp)
{
    stored *s = find(fs, t->item);
    if (!s) {
        json_decref(body);
        not_found(resp, t);
        return;
    }
    if (stale(s->obj, body)) {
        json_decref(body);
        conflict(resp, t);
        return;
    }
    json_t *next;
    if (t->kind == T_SUB) { /* /status: the status alone */
        next = json_deep_copy(s->obj);
        json_t *st = json_object_get(body, "status");
        if (st)
            json_object_set(next, "status", st);
        else
            json_object_del(next, "status");
        json_decref(body);
    } else {
        next = body;
        keep_server_fields(s->obj, next);
        if (has_status_subresource(t->resource)) {
            json_t *st = json_object_get(s->obj, "status");
            if (st)
                json_object_set(next, "status", st);
            else
                json_object_del(next, "status");
        }
    }
    write_item(fs, t, next, resp);
}

static void patch(fake_apiserver *fs, const rest_target *t, const char *content_type, json_t *body,
                  fake_http_response *resp)
{
    stored *s = find(fs, t->item);
    if (strncmp(content_type, "application/apply-patch+yaml", 28) == 0 && t->kind == T_ITEM) {
        if (!s) {
            if (*t->ns)
                json_object_set_new(meta(body), "namespace", json_string(t->ns));
            json_object_set_new(meta(body), "generation", json_integer(1));
            answer(resp, 200, store(fs, t->item, body));
            return;
        }
        keep_server_fields(s->obj, body);
        json_t *st = json_object_get(s->obj, "status");
        if (st && !json_object_get(body, "status"))
            json_object_set(body, "status", st);
        write_item(fs, t, body, resp);
        return;
    }
    if (strncmp(content_type, "application/merge-patch+json", 28) != 0) {
        json_decref(body);
        status_answer(resp, 415, NULL, "the fake apiserver takes merge patches and server-side apply only");
        return;
    }
    if (!s) {
        json_decref(body);
        not_found(resp, t);
        return;
    }
    if (stale(s->obj, body)) {
        json_decref(body);
        conflict(resp, t);
        return;
    }
    json_t *next = json_deep_copy(s->obj);
    json_object_del(json_object_get(body, "metadata"), "resourceVersion");
    if (t->kind == T_SUB) {
        json_t *st = json_object_get(body, "status");
        if (st) {
            json_t *cur = json_object_get(next, "status");
            if (!json_is_object(cur)) {
                cur = json_object();
                json_object_set_new(next, "status", cur);
            }
            merge_patch(cur, st);
        }
    } else {
        json_t *old_status = json_incref(json_object_get(s->obj, "status"));
        merge_patch(next, body);
        keep_server_fields(s->obj, next);
        if (has_status_subresource(t->resource)) {
            if (old_status)
                json_object_set(next, "status", old_status);
            else
                json_object_del(next, "status");
        }
        json_decref(old_status);
    }
    json_decref(body);
    write_item(fs, t, next, resp);
}

static void delete_item(fake_apiserver *fs, const rest_target *t, fake_http_response *resp)
{
    stored *s = find(fs, t->item);
    if (!s) {
        not_found(resp, t);
        return;
    }
    if (json_array_size(json_object_get(json_object_get(s->obj, "metadata"), "finalizers")) > 0) {
        if (!meta_str(s->obj, "deletionTimestamp")) {
            json_t *next = json_deep_copy(s->obj);
            json_object_set_new(meta(next), "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
            store(fs, t->item, next);
        }
        answer(resp, 200, s->obj);
        return;
    }
    drop(fs, s);
    status_answer(resp, 200, "", "deleted");
}

/* ------------------------------------------------------------ dispatch */

static const char *bearer(const fake_http_request *req, char *buf, size_t bufsz)
{
    fake_http_header(req, "Authorization", buf, bufsz);
    return strncmp(buf, "Bearer ", 7) == 0 ? buf + 7 : "";
}

static bool matches(const char *want, const char *have)
{
    return !want || strcmp(want, have) == 0;
}

/* An injected failure for this request: true with *resp filled. */
static bool injected(fake_apiserver *fs, const fake_http_request *req, const char *token, fake_http_response *resp)
{
    for (size_t i = 0; i < fs->nrules; i++) {
        fail_rule *r = &fs->rules[i];
        if (r->times == 0 || !matches(r->method, req->method) || !matches(r->token, token) ||
            (r->target && !strstr(req->target, r->target)))
            continue;
        if (r->times > 0)
            r->times--;
        status_answer(resp, r->code, NULL, r->message ? r->message : "injected failure");
        return true;
    }
    return false;
}

static void record(fake_apiserver *fs, const fake_http_request *req, const char *token)
{
    if (OLM_ARRAY_RESERVE(fs->log, fs->caplog, fs->nlog + 1) < 0)
        xmalloc_fail();
    char *line = NULL;
    if (asprintf(&line, "%s %s", req->method, req->target) < 0)
        xmalloc_fail();
    bool get = strcmp(req->method, "GET") == 0;
    fs->log[fs->nlog++] = (logged){line, xstrdup(token), !get && req->body ? xstrdup(req->body) : NULL, get};
}

static void handle(fake_apiserver *fs, const fake_http_request *req, fake_http_response *resp)
{
    char auth[1024], ct[256];
    const char *token = bearer(req, auth, sizeof auth);
    fake_http_header(req, "Content-Type", ct, sizeof ct);
    record(fs, req, token);
    if (injected(fs, req, token, resp))
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s", req->target);
    char *q = strchr(path, '?');
    if (q)
        *q++ = '\0';
    rest_target t;
    classify(path, &t);
    if (strcmp(req->method, "GET") == 0) {
        stored *s = find(fs, t.kind == T_SUB ? t.item : path);
        if (s)
            answer(resp, 200, s->obj);
        else if (t.kind == T_COLLECTION)
            list(fs, &t, q, resp);
        else
            not_found(resp, &t);
        return;
    }
    if (strcmp(req->method, "DELETE") == 0) {
        if (t.kind == T_ITEM)
            delete_item(fs, &t, resp);
        else
            status_answer(resp, 405, NULL, "the fake apiserver deletes items only");
        return;
    }
    if (strcmp(req->method, "POST") == 0 && t.kind == T_SUB) {
        token_request(fs, &t, resp);
        return;
    }
    json_error_t je;
    json_t *body = json_loads(req->body ? req->body : "", 0, &je);
    if (!json_is_object(body)) {
        json_decref(body);
        status_answer(resp, 400, NULL, "the request body is not a JSON object");
        return;
    }
    bool status_sub = t.kind == T_SUB && strcmp(t.sub, "status") == 0;
    if (strcmp(req->method, "POST") == 0 && t.kind == T_COLLECTION)
        create(fs, &t, body, resp);
    else if (strcmp(req->method, "PUT") == 0 && (t.kind == T_ITEM || status_sub))
        update(fs, &t, body, resp);
    else if (strcmp(req->method, "PATCH") == 0 && (t.kind == T_ITEM || status_sub))
        patch(fs, &t, ct, body, resp);
    else {
        json_decref(body);
        status_answer(resp, 405, NULL, "the fake apiserver does not serve this");
    }
}

static void handler(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    fake_apiserver *fs = s->user;
    pthread_mutex_lock(&fs->lock);
    handle(fs, req, resp);
    pthread_mutex_unlock(&fs->lock);
}

/* ------------------------------------------------------------ the API */

fake_apiserver *fake_apiserver_start(void)
{
    fake_apiserver *fs = calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    pthread_mutex_init(&fs->lock, NULL);
    if (fake_http_start(&fs->http) != 0) {
        pthread_mutex_destroy(&fs->lock);
        free(fs);
        return NULL;
    }
    fs->http.user = fs;
    pthread_mutex_lock(&fs->http.lock);
    fs->http.handler = handler;
    pthread_mutex_unlock(&fs->http.lock);
    return fs;
}

void fake_apiserver_stop(fake_apiserver *fs)
{
    if (!fs)
        return;
    fake_http_stop(&fs->http);
    while (fs->nobjs)
        drop(fs, &fs->objs[0]);
    free(fs->objs);
    fake_apiserver_fail_clear(fs);
    fake_apiserver_log_clear(fs);
    pthread_mutex_destroy(&fs->lock);
    free(fs);
}

const char *fake_apiserver_url(const fake_apiserver *fs)
{
    return fs->http.url;
}

void fake_apiserver_put(fake_apiserver *fs, const char *path, json_t *obj)
{
    pthread_mutex_lock(&fs->lock);
    store(fs, path, obj);
    pthread_mutex_unlock(&fs->lock);
}

void fake_apiserver_put_json(fake_apiserver *fs, const char *path, const char *text)
{
    json_error_t je;
    json_t *obj = json_loads(text, 0, &je);
    if (!obj) {
        fprintf(stderr, "fake_apiserver_put_json: bad JSON (%s): %s\n", je.text, text);
        abort();
    }
    fake_apiserver_put(fs, path, obj);
}

json_t *fake_apiserver_object(fake_apiserver *fs, const char *path)
{
    pthread_mutex_lock(&fs->lock);
    stored *s = find(fs, path);
    json_t *obj = s ? s->obj : NULL;
    pthread_mutex_unlock(&fs->lock);
    return obj;
}

bool fake_apiserver_remove(fake_apiserver *fs, const char *path)
{
    pthread_mutex_lock(&fs->lock);
    stored *s = find(fs, path);
    if (s)
        drop(fs, s);
    pthread_mutex_unlock(&fs->lock);
    return s != NULL;
}

void fake_apiserver_remove_under(fake_apiserver *fs, const char *prefix)
{
    pthread_mutex_lock(&fs->lock);
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < fs->nobjs;) {
        if (strncmp(fs->objs[i].path, prefix, pl) == 0)
            drop(fs, &fs->objs[i]); /* the last one moved here: look at i again */
        else
            i++;
    }
    pthread_mutex_unlock(&fs->lock);
}

void fake_apiserver_fail(fake_apiserver *fs, const char *method, const char *target, const char *token, int code,
                         const char *message, int times)
{
    pthread_mutex_lock(&fs->lock);
    if (OLM_ARRAY_RESERVE(fs->rules, fs->caprules, fs->nrules + 1) < 0)
        xmalloc_fail();
    fs->rules[fs->nrules++] = (fail_rule){method ? xstrdup(method) : NULL, target ? xstrdup(target) : NULL,
                                          token ? xstrdup(token) : NULL, message ? xstrdup(message) : NULL, code,
                                          times};
    pthread_mutex_unlock(&fs->lock);
}

void fake_apiserver_fail_clear(fake_apiserver *fs)
{
    pthread_mutex_lock(&fs->lock);
    for (size_t i = 0; i < fs->nrules; i++) {
        free(fs->rules[i].method);
        free(fs->rules[i].target);
        free(fs->rules[i].token);
        free(fs->rules[i].message);
    }
    free(fs->rules);
    fs->rules = NULL;
    fs->nrules = fs->caprules = 0;
    pthread_mutex_unlock(&fs->lock);
}

size_t fake_apiserver_count(fake_apiserver *fs, const char *method, const char *target, const char *token)
{
    pthread_mutex_lock(&fs->lock);
    size_t n = 0;
    for (size_t i = 0; i < fs->nlog; i++) {
        const char *line = fs->log[i].line, *sp = strchr(line, ' ');
        if (method && (strncmp(line, method, (size_t)(sp - line)) != 0 || strlen(method) != (size_t)(sp - line)))
            continue;
        if ((target && !strstr(sp + 1, target)) || !matches(token, fs->log[i].token))
            continue;
        n++;
    }
    pthread_mutex_unlock(&fs->lock);
    return n;
}

size_t fake_apiserver_nwrites(fake_apiserver *fs)
{
    pthread_mutex_lock(&fs->lock);
    size_t n = 0;
    for (size_t i = 0; i < fs->nlog; i++)
        n += !fs->log[i].get;
    pthread_mutex_unlock(&fs->lock);
    return n;
}

const char *fake_apiserver_write_at(fake_apiserver *fs, size_t want)
{
    pthread_mutex_lock(&fs->lock);
    const char *line = NULL;
    for (size_t i = 0, n = 0; i < fs->nlog && !line; i++)
        if (!fs->log[i].get && n++ == want)
            line = fs->log[i].line;
    pthread_mutex_unlock(&fs->lock);
    return line;
}

const char *fake_apiserver_write_body_at(fake_apiserver *fs, size_t want)
{
    pthread_mutex_lock(&fs->lock);
    const char *body = NULL;
    for (size_t i = 0, n = 0; i < fs->nlog; i++)
        if (!fs->log[i].get && n++ == want) {
            body = fs->log[i].body;
            break;
        }
    pthread_mutex_unlock(&fs->lock);
    return body;
}

void fake_apiserver_log_clear(fake_apiserver *fs)
{
    pthread_mutex_lock(&fs->lock);
    for (size_t i = 0; i < fs->nlog; i++) {
        free(fs->log[i].line);
        free(fs->log[i].token);
        free(fs->log[i].body);
    }
    free(fs->log);
    fs->log = NULL;
    fs->nlog = fs->caplog = 0;
    pthread_mutex_unlock(&fs->lock);
}

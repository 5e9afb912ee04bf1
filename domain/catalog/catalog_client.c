/* catalog_client: fetch one package from catalogd's /api/v1/metas, cache it, and build
 * the resolver's catalog list.  See catalog.h for the contract. */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "catalog.h"
#include "catalogd_http_api.h"
#include "http_client.h"
#include "kube_object.h"
#include "olm_hash.h"
#include "strbuf.h"

#define MAX_RESPONSE ((size_t)512 * 1024 * 1024)
/* Idle easy handles kept, each with its keep-alive connection to catalogd: one per reconcile
 * worker is enough (--max-concurrent-reconciles defaults to 8). */
#define CATALOG_CLIENT_POOL 8
/* The cache's hash index: a reconcile looks its package up under the client's lock, so a
 * walk of the list (three strcmp per entry, all of one catalog and ref alike) grew with the
 * packages cached (1.5% of operator-controller's CPU at 1,000). */
#define CACHE_BUCKETS 1024

typedef struct catalog_ref {
    struct catalog_ref *next;
    char *catalog, *ref;
} catalog_ref;

struct catalog_package {
    catalog_package *next;  /* cache list, guarded by the client's lock */
    catalog_package *hnext; /* its bucket's chain, likewise */
    uint64_t hash;          /* of catalog, ref and package */
    char *catalog, *ref, *package;
    fbc_catalog *fbc;
    unsigned refs;  /* guarded by the client's lock: the cache holds one */
    bool cached;    /* still in the list */
    uv_mutex_t *lock; /* the client's; the client outlives every package handed out */
};

struct catalog_client {
    const olm_ca_set *cas; /* borrowed */
    const olm_tls_profile *tls; /* borrowed, or NULL */
    long timeout_seconds;
    uv_mutex_t lock;
    catalog_package *head;
    catalog_package *buckets[CACHE_BUCKETS]; /* the same entries, by hash */
    size_t count;
    /* Idle handles, guarded by `lock`.  A new handle per request meant a new TLS connection
     * per request: over https, libcurl loading the system CA store into a fresh SSL_CTX and a
     * full handshake, ~40 ms of CPU each and two per resolution (1,000 extensions: 90% of
     * operator-controller's CPU).  A pooled handle keeps its connection alive. */
    CURL *idle[CATALOG_CLIENT_POOL];
    int nidle;
    /* The ref of each catalog's newest entry, guarded by `lock`: an insert under that ref has
     * no older entries to drop, so it skips the walk of the whole cache (1.7% of
     * operator-controller's CPU over 1,000 installs from one catalog: a walk per package). */
    catalog_ref *refs;
};

static void package_destroy(catalog_package *p)
{
    fbc_catalog_free(p->fbc);
    free(p->catalog);
    free(p->ref);
    free(p->package);
    free(p);
}

const fbc_catalog *catalog_package_fbc(const catalog_package *p)
{
    return p->fbc;
}

void catalog_package_release(catalog_package *p)
{
    if (!p)
        return;
    uv_mutex_lock(p->lock);
    bool last = --p->refs == 0;
    uv_mutex_unlock(p->lock);
    if (last)
        package_destroy(p);
}

catalog_client *catalog_client_new(const catalog_client_options *opts, olm_error *err)
{
    catalog_client *cc = calloc(1, sizeof *cc);
    if (!cc) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    cc->cas = opts ? opts->cas : NULL;
    cc->tls = opts ? opts->tls : NULL;
    cc->timeout_seconds = opts && opts->timeout_seconds > 0 ? opts->timeout_seconds : 300;
    if (uv_mutex_init(&cc->lock) != 0) {
        free(cc);
        olm_error_set(err, "cannot create a mutex");
        return NULL;
    }
    return cc;
}

static uint64_t key_hash(const char *cat, const char *ref, const char *pkg)
{
    /* the NULs keep ("ab", "c") and ("a", "bc") apart */
    uint64_t h = olm_fnv1a(OLM_FNV1A_OFFSET, cat, strlen(cat) + 1);
    h = olm_fnv1a(h, ref, strlen(ref) + 1);
    return olm_fnv1a_str(h, pkg);
}

/* Unlinks `p` from the cache; the caller holds the lock.  Returns true if that
 * dropped the last reference (destroy it after unlocking). */
static bool unlink_locked(catalog_client *cc, catalog_package **link)
{
    catalog_package *p = *link;
    for (catalog_package **b = &cc->buckets[p->hash % CACHE_BUCKETS]; *b; b = &(*b)->hnext)
        if (*b == p) {
            *b = p->hnext;
            break;
        }
    p->hnext = NULL;
    *link = p->next;
    p->next = NULL;
    p->cached = false;
    cc->count--;
    return --p->refs == 0;
}

/* Drops the entries whose catalog (by_package false) or package (true) is `name`. */
static void forget(catalog_client *cc, const char *name, bool by_package)
{
    catalog_package *dead = NULL;
    uv_mutex_lock(&cc->lock);
    for (catalog_package **l = &cc->head; *l;) {
        catalog_package *p = *l;
        if (strcmp(by_package ? p->package : p->catalog, name) != 0) {
            l = &p->next;
            continue;
        }
        if (unlink_locked(cc, l)) {
            p->next = dead;
            dead = p;
        }
    }
    uv_mutex_unlock(&cc->lock);
    while (dead) {
        catalog_package *n = dead->next;
        package_destroy(dead);
        dead = n;
    }
}

void catalog_client_forget(catalog_client *cc, const char *name)
{
    forget(cc, name, false);
    catalog_ref *gone = NULL;
    uv_mutex_lock(&cc->lock);
    for (catalog_ref **l = &cc->refs; *l; l = &(*l)->next)
        if (strcmp((*l)->catalog, name) == 0) {
            gone = *l;
            *l = gone->next;
            break;
        }
    uv_mutex_unlock(&cc->lock);
    if (gone) {
        free(gone->catalog);
        free(gone->ref);
        free(gone);
    }
}

void catalog_client_forget_package(catalog_client *cc, const char *package)
{
    forget(cc, package, true);
}

void catalog_client_close_idle(catalog_client *cc)
{
    if (!cc)
        return;
    CURL *idle[CATALOG_CLIENT_POOL];
    uv_mutex_lock(&cc->lock);
    int n = cc->nidle;
    memcpy(idle, cc->idle, (size_t)n * sizeof *idle);
    cc->nidle = 0;
    uv_mutex_unlock(&cc->lock);
    for (int i = 0; i < n; i++) /* outside the lock: closing may write a TLS close_notify */
        curl_easy_cleanup(idle[i]);
}

void catalog_client_free(catalog_client *cc)
{
    if (!cc)
        return;
    catalog_client_close_idle(cc);
    while (cc->head) {
        catalog_package *p = cc->head;
        bool last = unlink_locked(cc, &cc->head);
        if (last)
            package_destroy(p);
    }
    while (cc->refs) {
        catalog_ref *r = cc->refs;
        cc->refs = r->next;
        free(r->catalog);
        free(r->ref);
        free(r);
    }
    uv_mutex_destroy(&cc->lock);
    free(cc);
}

size_t catalog_client_cached(catalog_client *cc)
{
    uv_mutex_lock(&cc->lock);
    size_t n = cc->count;
    uv_mutex_unlock(&cc->lock);
    return n;
}

/* ------------------------------------------------------------ HTTP */

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    strbuf *sb = userp;
    size_t n = size * nmemb;
    if (sb->len + n > MAX_RESPONSE || strbuf_append(sb, data, n) != 0)
        return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
    return n;
}

/* GETs `url` and appends the body to `sb`.  The error says what failed, never where
 * an ephemeral local port was (messages must be stable across retries). */
#define HTTP_NOT_FOUND 1 /* http_get: a 404, err set */
#define HTTP_BEHIND 2    /* http_get: answered by a catalogd replica that serves another ref, err set */

/* An idle pooled handle (reset to defaults, which keeps its connections) or a new one. */
static CURL *handle_acquire(catalog_client *cc)
{
    CURL *h = NULL;
    uv_mutex_lock(&cc->lock);
    if (cc->nidle > 0)
        h = cc->idle[--cc->nidle];
    uv_mutex_unlock(&cc->lock);
    if (h) {
        curl_easy_reset(h);
        return h;
    }
    return curl_easy_init();
}

/* Pools `h` after a complete response (its connection is then reusable), else closes it. */
static void handle_release(catalog_client *cc, CURL *h, bool reusable)
{
    if (reusable) {
        curl_easy_reset(h); /* drops the pointers into the caller's frame (options, sink) */
        uv_mutex_lock(&cc->lock);
        if (cc->nidle < CATALOG_CLIENT_POOL) {
            cc->idle[cc->nidle++] = h;
            h = NULL;
        }
        uv_mutex_unlock(&cc->lock);
    }
    if (h)
        curl_easy_cleanup(h);
}

/* The content's ref as the answer states it (catalogd_http_api.h), or NULL when it says none. */
static const char *answered_ref(CURL *h)
{
    struct curl_header *hdr = NULL;
    return curl_easy_header(h, CATALOGD_RESOLVED_REF_HEADER, 0, CURLH_HEADER, -1, &hdr) == CURLHE_OK && hdr
               ? hdr->value
               : NULL;
}

/* With `want_ref`, an answer that states another ref is HTTP_BEHIND: a catalogd replica that
 * has not pulled the ref the ClusterCatalog's status names yet (or, for a moment, a leader
 * already serving a ref the status does not name yet).  Its connection is closed, so that the
 * next attempt may reach another replica. */
static int http_get(catalog_client *cc, const char *url, const char *want_ref, strbuf *sb, olm_error *err)
{
    CURL *h = handle_acquire(cc);
    if (!h)
        return olm_error_set(err, "cannot create an HTTP handle");
    char ebuf[CURL_ERROR_SIZE] = "";
    /* --catalogd-cas-dir's CAs and --tls-profile: the handshake is the one upstream's makes */
    http_client_opts o = {.tls = {.extra_cas = cc->cas, .profile = cc->tls}, .timeout_ms = cc->timeout_seconds * 1000};
    if (http_client_setup(h, url, &o, err) < 0) {
        curl_easy_cleanup(h);
        return -1;
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, sb);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* catalogd may serve gzip */
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    const char *got = rc == CURLE_OK && status == 200 && want_ref ? answered_ref(h) : NULL;
    bool behind = got && strcmp(got, want_ref) != 0;
    if (behind)
        olm_error_set(err, "the catalogd replica that answered %s serves %s, not yet %s", url, got, want_ref);
    handle_release(cc, h, rc == CURLE_OK && !behind);
    if (behind)
        return HTTP_BEHIND;
    if (rc != CURLE_OK)
        return olm_error_set(err, "Get \"%s\": %s", url, ebuf[0] ? ebuf : curl_easy_strerror(rc));
    if (status != 200) {
        olm_error_set(err, "error: received unexpected response status code %ld from %s", status, url);
        return status == 404 ? HTTP_NOT_FOUND : -1;
    }
    return 0;
}

/* ------------------------------------------------------------ catalog checks */

static bool is_serving(const json_t *catalog)
{
    return kube_object_condition_is(catalog, "Serving", "True");
}

static const char *catalog_name(const json_t *catalog)
{
    const char *n = json_string_value(json_object_get(json_object_get(catalog, "metadata"), "name"));
    return n ? n : "";
}

/* Whether `ref` is already the ref of `cat`'s newest entry; else records it as that (when it
 * cannot, out of memory, the caller walks the cache as if the ref were new: always safe). */
static bool newest_ref_locked(catalog_client *cc, const char *cat, const char *ref)
{
    catalog_ref *r = cc->refs;
    while (r && strcmp(r->catalog, cat) != 0)
        r = r->next;
    if (r && strcmp(r->ref, ref) == 0)
        return true;
    char *copy = strdup(ref);
    if (!copy)
        return false;
    if (!r && (r = calloc(1, sizeof *r)) && !(r->catalog = strdup(cat))) {
        free(r);
        r = NULL;
    }
    if (!r) {
        free(copy);
        return false;
    }
    if (!r->ref) { /* new: linked now */
        r->next = cc->refs;
        cc->refs = r;
    }
    free(r->ref);
    r->ref = copy;
    return false;
}

static catalog_package *lookup_locked(catalog_client *cc, const char *cat, const char *ref, const char *pkg)
{
    uint64_t h = key_hash(cat, ref, pkg);
    for (catalog_package *p = cc->buckets[h % CACHE_BUCKETS]; p; p = p->hnext)
        if (p->hash == h && strcmp(p->catalog, cat) == 0 && strcmp(p->ref, ref) == 0 &&
            strcmp(p->package, pkg) == 0)
            return p;
    return NULL;
}

/* Whether one line of /api/v1/all (a meta) belongs to `pkg`: its olm.package blob, or any blob
 * of the package. */
static bool meta_of_package(const char *line, size_t len, const char *pkg)
{
    json_t *m = json_loadb(line, len, 0, NULL);
    const char *schema = json_string_value(json_object_get(m, "schema"));
    const char *name = json_string_value(json_object_get(m, "name"));
    const char *package = json_string_value(json_object_get(m, "package"));
    bool mine = (schema && name && strcmp(schema, "olm.package") == 0 && strcmp(name, pkg) == 0) ||
                (package && strcmp(package, pkg) == 0);
    json_decref(m);
    return mine;
}

/* The package's metas out of the whole catalog (/api/v1/all): for a catalogd that serves no
 * /metas (upstream's --feature-gates APIV1MetasHandler=false, the default of its standard
 * manifest), as upstream's client always reads the whole catalog. */
static int fetch_from_all(catalog_client *cc, const char *base, size_t blen, const char *ref, const char *pkg,
                          strbuf *out, olm_error *err)
{
    strbuf url = STRBUF_INIT, all = STRBUF_INIT;
    int rc = strbuf_printf(&url, "%.*s/api/v1/all", (int)blen, base) < 0
                 ? olm_error_set(err, "out of memory")
                 : http_get(cc, strbuf_str(&url), ref, &all, err);
    for (size_t i = 0; rc == 0 && i < all.len;) {
        const char *line = all.data + i, *nl = memchr(line, '\n', all.len - i);
        size_t n = nl ? (size_t)(nl - line) : all.len - i;
        if (n && meta_of_package(line, n, pkg) && (strbuf_append(out, line, n) < 0 || strbuf_putc(out, '\n') < 0))
            rc = olm_error_set(err, "out of memory");
        i += n + 1;
    }
    strbuf_free(&url);
    strbuf_free(&all);
    return rc;
}

/* Fetches both metas selections of content `ref` and loads them as one FBC; *behind when a
 * replica answered with another ref's content. */
static fbc_catalog *fetch_package_once(catalog_client *cc, const char *cat, const char *base, const char *ref,
                                       const char *pkg, bool *behind, olm_error *err)
{
    char *esc = curl_easy_escape(NULL, pkg, 0);
    if (!esc) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    strbuf url = STRBUF_INIT, body = STRBUF_INIT;
    size_t blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/')
        blen--;
    fbc_catalog *fbc = NULL;
    olm_error herr;
    int rc = strbuf_printf(&url, "%.*s/api/v1/metas?schema=olm.package&name=%s", (int)blen, base, esc);
    if (rc == 0)
        rc = http_get(cc, strbuf_str(&url), ref, &body, &herr);
    else
        olm_error_set(&herr, "out of memory");
    if (rc == HTTP_NOT_FOUND) { /* no /metas here: the whole catalog, filtered */
        strbuf_reset(&body);
        rc = fetch_from_all(cc, base, blen, ref, pkg, &body, &herr);
        curl_free(esc);
        strbuf_free(&url);
        esc = NULL;
        goto loaded;
    }
    if (rc == 0 && body.len > 0 && body.data[body.len - 1] != '\n')
        rc = strbuf_putc(&body, '\n');
    strbuf_reset(&url);
    if (rc == 0 && (rc = strbuf_printf(&url, "%.*s/api/v1/metas?package=%s", (int)blen, base, esc)) == 0)
        rc = http_get(cc, strbuf_str(&url), ref, &body, &herr);
    curl_free(esc);
    strbuf_free(&url);
loaded:
    *behind = rc == HTTP_BEHIND;
    if (rc != 0) {
        olm_error_set(err, "error retrieving cache for catalog \"%s\": %s", cat, herr.msg);
    } else {
        fbc = fbc_load_buffer(body.data ? body.data : "", body.len, "metas", &herr);
        if (!fbc)
            olm_error_set(err, "error retrieving cache for catalog \"%s\": error loading package \"%s\": %s", cat,
                          pkg, herr.msg);
    }
    strbuf_free(&body);
    return fbc;
}

/* Replicas catch up within a pull of the leader's new digest; the first answer from one that
 * has not may be followed at once by one from a replica that has (the connection that reached
 * it is closed).  Still behind: an error like any other failed fetch, not cached, asked again
 * by the next reconcile (the caller's backoff), rather than resolving against old content the
 * status no longer names, which would then stay cached under the new ref. */
#define FETCH_ATTEMPTS_WHEN_BEHIND 3

static fbc_catalog *fetch_package(catalog_client *cc, const char *cat, const char *base, const char *ref,
                                  const char *pkg, olm_error *err)
{
    bool behind = false;
    fbc_catalog *fbc = NULL;
    for (int i = 0; i < FETCH_ATTEMPTS_WHEN_BEHIND && !fbc; i++) {
        fbc = fetch_package_once(cc, cat, base, ref, pkg, &behind, err);
        if (!behind)
            break;
    }
    return fbc;
}

int catalog_client_get_package(catalog_client *cc, const json_t *catalog, const char *package,
                               catalog_package **out, olm_error *err)
{
    *out = NULL;
    const char *cat = catalog_name(catalog);
    const json_t *status = json_object_get(catalog, "status");
    if (!is_serving(catalog))
        return olm_error_set(err, "catalog \"%s\" is not being served", cat);
    const char *ref =
        json_string_value(json_object_get(json_object_get(json_object_get(status, "resolvedSource"), "image"), "ref"));
    if (!ref || !*ref)
        return olm_error_set(err, "error: catalog \"%s\" has a nil status.resolvedSource value", cat);
    const char *base = json_string_value(json_object_get(json_object_get(status, "urls"), "base"));
    if (!base || !*base)
        return olm_error_set(err, "error: catalog \"%s\" has no status.urls.base", cat);

    uv_mutex_lock(&cc->lock);
    catalog_package *p = lookup_locked(cc, cat, ref, package);
    if (p)
        p->refs++;
    uv_mutex_unlock(&cc->lock);
    if (p) {
        *out = p;
        return 0;
    }
    /* Fetch outside the lock: other catalogs and packages need not wait.  Two threads
     * may fetch the same entry; the second one to finish uses the first one's. */
    fbc_catalog *fbc = fetch_package(cc, cat, base, ref, package, err);
    if (!fbc)
        return -1;
    catalog_package *np = calloc(1, sizeof *np);
    if (np) {
        np->catalog = strdup(cat);
        np->ref = strdup(ref);
        np->package = strdup(package);
    }
    if (!np || !np->catalog || !np->ref || !np->package) {
        if (np)
            np->fbc = NULL, package_destroy(np);
        fbc_catalog_free(fbc);
        return olm_error_set(err, "out of memory");
    }
    np->fbc = fbc;
    np->lock = &cc->lock;
    catalog_package *dead = NULL;
    uv_mutex_lock(&cc->lock);
    p = lookup_locked(cc, cat, ref, package);
    if (p) {
        p->refs++;
        dead = np;
    } else if (!newest_ref_locked(cc, cat, ref)) {
        /* One resolved ref per catalog: entries of an older ref go. */
        for (catalog_package **l = &cc->head; *l;) {
            catalog_package *q = *l;
            if (strcmp(q->catalog, cat) == 0 && strcmp(q->ref, ref) != 0) {
                if (unlink_locked(cc, l)) {
                    q->next = dead;
                    dead = q;
                }
            } else {
                l = &q->next;
            }
        }
    }
    if (!p) {
        np->refs = 2; /* the cache and the caller */
        np->cached = true;
        np->next = cc->head;
        cc->head = np;
        np->hash = key_hash(cat, ref, package);
        np->hnext = cc->buckets[np->hash % CACHE_BUCKETS];
        cc->buckets[np->hash % CACHE_BUCKETS] = np;
        cc->count++;
        p = np;
    }
    uv_mutex_unlock(&cc->lock);
    while (dead) {
        catalog_package *n = dead->next;
        package_destroy(dead);
        dead = n;
    }
    *out = p;
    return 0;
}

/* ------------------------------------------------------------ the walk */

void catalog_set_free(catalog_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        catalog_package_release(s->held ? s->held[i] : NULL);
        if (s->strings) {
            free(s->strings[2 * i]);
            free(s->strings[2 * i + 1]);
        }
    }
    free(s->items);
    free(s->held);
    free(s->strings);
    memset(s, 0, sizeof *s);
}

int catalog_client_collect(catalog_client *cc, const json_t *catalogs, const json_t *selector,
                           const char *package, catalog_set *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    catalog_pick *picked;
    size_t n;
    if (catalog_select(catalogs, selector, &picked, &n, err) != 0)
        return -1;
    out->items = calloc(n ? n : 1, sizeof *out->items);
    out->held = calloc(n ? n : 1, sizeof *out->held);
    out->strings = calloc(2 * (n ? n : 1), sizeof *out->strings);
    if (!out->items || !out->held || !out->strings) {
        free(picked);
        catalog_set_free(out);
        return olm_error_set(err, "out of memory");
    }
    out->matched = n;
    for (size_t i = 0; i < n; i++) {
        resolve_catalog *rc = &out->items[i];
        out->n = i + 1;
        out->strings[2 * i] = strdup(picked[i].name);
        if (!out->strings[2 * i]) {
            free(picked);
            catalog_set_free(out);
            return olm_error_set(err, "out of memory");
        }
        rc->name = out->strings[2 * i];
        rc->priority = picked[i].priority;
        rc->unavailable = picked[i].unavailable;
        if (rc->unavailable)
            continue; /* not fetched: the resolver skips it */
        olm_error ferr;
        if (catalog_client_get_package(cc, picked[i].obj, package, &out->held[i], &ferr) == 0) {
            rc->fbc = catalog_package_fbc(out->held[i]);
            continue;
        }
        out->strings[2 * i + 1] = strdup(ferr.msg);
        if (!out->strings[2 * i + 1]) {
            free(picked);
            catalog_set_free(out);
            return olm_error_set(err, "out of memory");
        }
        rc->fetch_error = out->strings[2 * i + 1];
    }
    free(picked);
    return 0;
}

/* cluster_catalogs: ClusterCatalogs and their served content (cluster_catalogs.h). */
#include <stdlib.h>
#include <string.h>

#include "cluster_catalogs.h"
#include "catalog.h"
#include "cluster_objects.h"
#include "kube_label_selector.h"
#include "strbuf.h"

/* ------------------------------------------------------------ source */

int catalog_source_open(kube_client *api, const char *url, catalog_source *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    out->api = api;
    if (!url) {
        url = getenv("OLMV1_CATALOGD_URL");
        if (!url || !*url)
            return 0;
    }
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return cluster_error(err, CLI_EXIT_USAGE, "catalogd URL \"%s\" must start with http:// or https://", url);
    kube_config cfg = {0};
    cfg.server = strdup(url);
    const char *ca = getenv("OLMV1_CATALOGD_CA_FILE");
    if (ca && *ca)
        cfg.ca_file = strdup(ca);
    if (!cfg.server || (ca && *ca && !cfg.ca_file)) {
        kube_config_free(&cfg);
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    /* A root URL ends without '/': paths start with one. */
    size_t n = strlen(cfg.server);
    while (n > 0 && cfg.server[n - 1] == '/')
        cfg.server[--n] = '\0';
    kube_client_options co = {.user_agent = "olmv1", .timeout_ms = 300000};
    out->direct = kube_client_new(&cfg, &co, err);
    if (!out->direct) {
        kube_config_free(&cfg);
        return CLI_EXIT_FAILED;
    }
    return 0;
}

void catalog_source_close(catalog_source *s)
{
    kube_client_free(s->direct);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ URLs */

/* Splits an http(s) URL into scheme, host, port (0 when absent) and path (points into
 * url).  -1 when it is not one. */
static int split_url(const char *url, char scheme[8], char host[256], long *port, const char **path)
{
    const char *rest;
    if (strncmp(url, "https://", 8) == 0) {
        strcpy(scheme, "https");
        rest = url + 8;
    } else if (strncmp(url, "http://", 7) == 0) {
        strcpy(scheme, "http");
        rest = url + 7;
    } else {
        return -1;
    }
    size_t alen = strcspn(rest, "/?#");
    const char *colon = memchr(rest, ':', alen);
    size_t hlen = colon ? (size_t)(colon - rest) : alen;
    if (hlen == 0 || hlen >= 256)
        return -1;
    memcpy(host, rest, hlen);
    host[hlen] = '\0';
    *port = 0;
    if (colon) {
        char *end = NULL;
        *port = strtol(colon + 1, &end, 10);
        if (end != rest + alen || *port <= 0 || *port > 65535)
            return -1;
    }
    *path = rest + alen;
    return 0;
}

char *catalog_base_path(const char *base)
{
    char scheme[8], host[256];
    long port;
    const char *path;
    if (split_url(base, scheme, host, &port, &path) < 0)
        return NULL;
    size_t n = strcspn(path, "?#");
    while (n > 0 && path[n - 1] == '/')
        n--;
    return strndup(path, n);
}

int catalog_proxy_path(const char *base, const char *suffix, char **out, olm_error *err)
{
    *out = NULL;
    char scheme[8], host[256];
    long port;
    const char *path;
    if (split_url(base, scheme, host, &port, &path) < 0)
        return olm_error_set(err, "status.urls.base \"%s\" is not an http(s) URL", base);
    /* <service>.<namespace>.svc[.<cluster domain>] */
    char *dot1 = strchr(host, '.');
    char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot1 || !dot2 || dot1 == host || dot2 == dot1 + 1 || strncmp(dot2, ".svc", 4) != 0 ||
        (dot2[4] != '\0' && dot2[4] != '.'))
        return olm_error_set(err, "catalog content is served at %s, which is not a cluster Service "
                                  "(<service>.<namespace>.svc): set OLMV1_CATALOGD_URL (or --catalogd-url) "
                                  "to reach catalogd directly",
                             base);
    if (!port)
        port = strcmp(scheme, "https") == 0 ? 443 : 80;
    size_t plen = strcspn(path, "?#");
    while (plen > 0 && path[plen - 1] == '/')
        plen--;
    if (asprintf(out, "/api/v1/namespaces/%.*s/services/%s:%.*s:%ld/proxy%.*s%s", (int)(dot2 - dot1 - 1), dot1 + 1,
                 scheme, (int)(dot1 - host), host, port, (int)plen, path, suffix) < 0) {
        *out = NULL;
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

/* ------------------------------------------------------------ selection */

static bool named(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* The selection is operator-controller's own (catalog_select); --catalog names narrow it. */
int catalog_set_select(kube_client *api, const json_t *selector, const char *const *names, size_t nnames,
                       cluster_catalog_set *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *items = NULL;
    int rc = cluster_list(api, cluster_kind_get(CLUSTER_KIND_CATALOG), NULL, &items, err);
    if (rc != 0)
        return rc;
    catalog_pick *picks = NULL;
    size_t n = 0;
    if (catalog_select(items, selector, &picks, &n, err) != 0) {
        json_decref(items);
        return cluster_wrap(err, CLI_EXIT_USAGE, "catalog selector");
    }
    out->items = calloc(n ? n : 1, sizeof *out->items);
    if (!out->items) {
        free(picks);
        json_decref(items);
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        if (nnames && !named(picks[i].name, names, nnames))
            continue;
        cluster_catalog *cat = &out->items[out->n++];
        cat->obj = json_incref((json_t *)picks[i].obj);
        cat->name = picks[i].name; /* borrowed from obj, which the set holds */
        cat->priority = picks[i].priority;
        cat->unavailable = picks[i].unavailable;
    }
    free(picks);
    json_decref(items);
    for (size_t k = 0; k < nnames; k++) {
        bool found = false;
        for (size_t j = 0; j < out->n && !found; j++)
            found = strcmp(out->items[j].name, names[k]) == 0;
        if (!found) {
            cluster_catalog_set_free(out);
            return cluster_error(err, CLI_EXIT_NOT_FOUND, "clustercatalogs.olm.operatorframework.io \"%s\" not found", names[k]);
        }
    }
    return 0;
}

void cluster_catalog_set_free(cluster_catalog_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        json_decref(set->items[i].obj);
        fbc_catalog_free(set->items[i].fbc);
        free(set->items[i].fetch_error);
    }
    free(set->items);
    memset(set, 0, sizeof *set);
}

void catalog_set_resolve_view(const cluster_catalog_set *set, resolve_catalog *out)
{
    for (size_t i = 0; i < set->n; i++) {
        const cluster_catalog *c = &set->items[i];
        out[i] = (resolve_catalog){.name = c->name, .priority = c->priority, .unavailable = c->unavailable,
                                   .fetch_error = c->fetch_error, .fbc = c->fbc};
    }
}

/* ------------------------------------------------------------ content */

/* GET <base><suffix>?<query> from catalogd, appended to body.  Returns 0 or an exit code. */
static int get_content(const catalog_source *src, const char *base, const char *suffix, const char *query,
                       strbuf *body, olm_error *err)
{
    char *path = NULL;
    kube_client *c = src->direct ? src->direct : src->api;
    if (src->direct) {
        char *bp = catalog_base_path(base);
        if (!bp)
            return cluster_error(err, CLI_EXIT_UNREACHABLE, "status.urls.base \"%s\" is not an http(s) URL", base);
        if (asprintf(&path, "%s%s", bp, suffix) < 0)
            path = NULL;
        free(bp);
        if (!path)
            return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    } else if (catalog_proxy_path(base, suffix, &path, err) < 0) {
        return CLI_EXIT_UNREACHABLE;
    }
    kube_response resp;
    long status = kube_request(c, "GET", path, query, NULL, NULL, 0, &resp, err);
    int rc = 0;
    if (status < 0) {
        rc = CLI_EXIT_UNREACHABLE;
        /* kube_request speaks of the API server; here it is catalogd. */
        static const char api[] = "cannot reach the Kubernetes API server ";
        if (src->direct && strncmp(err->msg, api, sizeof api - 1) == 0) {
            olm_error e = *err;
            olm_error_set(err, "cannot reach catalogd at %s", e.msg + sizeof api - 1);
        }
    } else if (status != 200) {
        int kr = kube_status_error(status, resp.body, resp.body_len, "GET", path, err);
        rc = kr == KUBE_FORBIDDEN || kr == KUBE_UNAUTHORIZED ? CLI_EXIT_FORBIDDEN : CLI_EXIT_UNREACHABLE;
    } else if (strbuf_append(body, resp.body ? resp.body : "", resp.body_len) < 0 ||
               (body->len && body->data[body->len - 1] != '\n' && strbuf_putc(body, '\n') < 0)) {
        rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    kube_response_free(&resp);
    free(path);
    return rc;
}

static bool is_serving(const json_t *catalog)
{
    return strcmp(cluster_str(cluster_condition(catalog, "Serving"), "status"), "True") == 0;
}

/* Reads one catalog; returns 0 or an exit code with err set. */
static int fetch_one(const catalog_source *src, cluster_catalog *cat, const char *package, olm_error *err)
{
    if (!is_serving(cat->obj))
        return cluster_error(err, CLI_EXIT_NO_CATALOGS, "catalog \"%s\" is not being served", cat->name);
    const char *base = cluster_str(cat->obj, "status.urls.base");
    if (!*base)
        return cluster_error(err, CLI_EXIT_NO_CATALOGS, "catalog \"%s\" has no status.urls.base", cat->name);
    strbuf body = STRBUF_INIT;
    int rc = 0;
    if (package) {
        char *q1 = NULL, *q2 = NULL;
        if (kube_query_add(&q1, "schema", "olm.package") < 0 || kube_query_add(&q1, "name", package) < 0 ||
            kube_query_add(&q2, "package", package) < 0)
            rc = cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        if (rc == 0)
            rc = get_content(src, base, "/api/v1/metas", q1, &body, err);
        if (rc == 0)
            rc = get_content(src, base, "/api/v1/metas", q2, &body, err);
        free(q1);
        free(q2);
    } else {
        rc = get_content(src, base, "/api/v1/all", NULL, &body, err);
    }
    if (rc == 0) {
        char what[300];
        snprintf(what, sizeof what, "catalog %s", cat->name);
        cat->fbc = fbc_load_buffer(body.data ? body.data : "", body.len, what, err);
        if (!cat->fbc)
            rc = CLI_EXIT_INVALID;
    }
    strbuf_free(&body);
    if (rc != 0)
        olm_error_wrap(err, "catalog \"%s\"", cat->name);
    return rc;
}

int catalog_set_fetch(const catalog_source *src, cluster_catalog_set *set, const char *package, olm_error *err)
{
    return catalog_set_fetch_wanted(src, set, package, NULL, err);
}

int catalog_set_fetch_wanted(const catalog_source *src, cluster_catalog_set *set, const char *package,
                             const bool *wanted, olm_error *err)
{
    for (size_t i = 0; i < set->n; i++) {
        cluster_catalog *cat = &set->items[i];
        if (cat->unavailable || cat->fbc || cat->fetch_error || (wanted && !wanted[i]))
            continue;
        olm_error ferr;
        int rc = fetch_one(src, cat, package, &ferr);
        if (rc == 0)
            continue;
        if (rc == CLI_EXIT_FAILED && strcmp(ferr.msg, "out of memory") == 0)
            return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        cat->fetch_code = rc;
        if (!(cat->fetch_error = strdup(ferr.msg)))
            return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    return 0;
}

/* drift_paths: what the drift watcher watches for one extension (the
 * collection paths of its recorded objects), the owner-label selector, and the content
 * hash that tells a real change from status churn.  Pure functions, any thread. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "kube_object.h"
#include "olm_array.h"

static void wipe(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void path_free(drift_path *p)
{
    free(p->path);
    free(p->resource);
    free(p->ns);
    for (size_t i = 0; i < p->nkeys; i++)
        free(p->keys[i]);
    free(p->keys);
    free(p->probes);
    free(p->contents);
    memset(p, 0, sizeof *p);
}

static void paths_free(drift_path *paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        path_free(&paths[i]);
    free(paths);
}

void drift_spec_free(drift_spec *s)
{
    if (!s)
        return;
    free(s->extension);
    free(s->ns);
    free(s->sa);
    wipe(s->token);
    paths_free(s->paths, s->npaths);
    memset(s, 0, sizeof *s);
}

char *drift_selector(const char *extension)
{
    char *sel = NULL;
    if (asprintf(&sel, "%s=ClusterExtension,%s=%s", OWNER_KIND_LABEL, OWNER_NAME_LABEL, extension) < 0)
        return NULL;
    return sel;
}

/* ------------------------------------------------------------ paths */

/* One resource type while grouping: its cluster-wide path, the namespaces its
 * objects are in, and their keys. */
typedef struct group {
    kube_resource_info ri;
    char *cluster_path;
    const char *only_ns; /* the one namespace so far (borrowed from rec); NULL: none yet */
    bool many_ns;
    char **keys;
    uint64_t *probes, *contents; /* beside keys */
    size_t nkeys, keys_cap, probes_cap, contents_cap;
} group;

static int add_key(group *g, const install_object_ref *o, uint64_t probe, uint64_t content)
{
    char *key = NULL;
    if (g->ri.namespaced ? asprintf(&key, "%s/%s", o->namespace_, o->name) < 0 : !(key = strdup(o->name)))
        return -1;
    if (OLM_ARRAY_RESERVE(g->keys, g->keys_cap, g->nkeys + 1) < 0 ||
        OLM_ARRAY_RESERVE(g->probes, g->probes_cap, g->nkeys + 1) < 0 ||
        OLM_ARRAY_RESERVE(g->contents, g->contents_cap, g->nkeys + 1) < 0) {
        free(key);
        return -1;
    }
    g->probes[g->nkeys] = probe;
    g->contents[g->nkeys] = content;
    g->keys[g->nkeys++] = key;
    return 0;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(((const drift_path *)a)->path, ((const drift_path *)b)->path);
}

int drift_spec_paths(drift_spec *spec, const install_record *rec, const uint64_t *probes, const uint64_t *contents,
                     drift_resolve_fn resolve, void *rdata, olm_error *err)
{
    group *groups = calloc(rec->nobjects ? rec->nobjects : 1, sizeof *groups);
    drift_path *paths = NULL;
    size_t ngroups = 0, npaths = 0;
    int rc = groups ? 0 : olm_error_set(err, "out of memory");
    for (size_t i = 0; rc == 0 && i < rec->nobjects; i++) {
        const install_object_ref *o = &rec->objects[i];
        kube_resource_info ri;
        if (resolve(rdata, o->api_version, o->kind, &ri, err) < 0) {
            rc = olm_error_wrap(err, "drift watch: resolving %s %s", o->api_version, o->kind);
            break;
        }
        char *cluster_path = kube_resource_path(&ri, NULL, NULL, NULL, err);
        if (!cluster_path) {
            rc = -1;
            break;
        }
        group *g = NULL;
        for (size_t j = 0; j < ngroups && !g; j++)
            if (strcmp(groups[j].cluster_path, cluster_path) == 0)
                g = &groups[j];
        if (g) {
            free(cluster_path);
        } else {
            g = &groups[ngroups++];
            g->ri = ri;
            g->cluster_path = cluster_path;
        }
        const char *ns = o->namespace_ ? o->namespace_ : "";
        if (ri.namespaced && *ns) {
            if (!g->only_ns)
                g->only_ns = ns;
            else if (strcmp(g->only_ns, ns) != 0)
                g->many_ns = true;
        }
        if (add_key(g, o, probes ? probes[i] : 0, contents ? contents[i] : 0) != 0)
            rc = olm_error_set(err, "out of memory");
    }
    if (rc == 0 && !(paths = calloc(ngroups ? ngroups : 1, sizeof *paths)))
        rc = olm_error_set(err, "out of memory");
    for (size_t j = 0; rc == 0 && j < ngroups; j++) {
        group *g = &groups[j];
        drift_path *p = &paths[npaths++];
        /* One namespace: watch there, which a namespace-scoped ServiceAccount may do. */
        if (g->ri.namespaced && g->only_ns && !g->many_ns) {
            p->path = kube_resource_path(&g->ri, g->only_ns, NULL, NULL, err);
            p->ns = strdup(g->only_ns);
            if (!p->path || !p->ns)
                rc = p->path ? olm_error_set(err, "out of memory") : -1;
        }
        p->resource = g->cluster_path;
        g->cluster_path = NULL;
        if (rc == 0 && !p->path && !(p->path = strdup(p->resource)))
            rc = olm_error_set(err, "out of memory");
        p->keys = g->keys;
        p->probes = g->probes;
        p->contents = g->contents;
        p->nkeys = g->nkeys;
        g->keys = NULL;
        g->probes = NULL;
        g->contents = NULL;
        g->nkeys = g->keys_cap = g->probes_cap = g->contents_cap = 0;
    }
    for (size_t j = 0; j < ngroups; j++) {
        free(groups[j].cluster_path);
        for (size_t k = 0; k < groups[j].nkeys; k++)
            free(groups[j].keys[k]);
        free(groups[j].keys);
        free(groups[j].probes);
        free(groups[j].contents);
    }
    free(groups);
    if (rc != 0) {
        paths_free(paths, npaths);
        return -1;
    }
    qsort(paths, npaths, sizeof *paths, cmp_path);
    paths_free(spec->paths, spec->npaths);
    spec->paths = paths;
    spec->npaths = npaths;
    return 0;
}

/* ------------------------------------------------------------ content hash */

uint64_t drift_content_hash(const json_t *obj)
{
    return kube_object_content_hash(obj);
}

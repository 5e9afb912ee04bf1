/* cluster_catalogs: the ClusterCatalogs of a cluster and the content catalogd serves
 * for them, read the way operator-controller reads it.
 *
 * Content comes from catalogd's HTTP API (/api/v1/all, or /api/v1/metas for one
 * package):
 *   - directly, when a catalogd URL is given (--catalogd-url or $OLMV1_CATALOGD_URL,
 *     e.g. http://127.0.0.1:8443 or a port-forward; $OLMV1_CATALOGD_CA_FILE adds a CA
 *     for https);
 *   - otherwise through the API server's service proxy, derived from the catalog's
 *     status.urls.base (https://catalogd-service.olmv1-system.svc/catalogs/NAME ->
 *     /api/v1/namespaces/olmv1-system/services/https:catalogd-service:443/proxy/catalogs/NAME),
 *     which works on any cluster whose user may `get services/proxy` there, without a
 *     port-forward. */
#ifndef OLMV1_CLI_CLUSTER_CATALOGS_H
#define OLMV1_CLI_CLUSTER_CATALOGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "fbc.h"
#include "resolve.h"

/* Where catalog content is read from. */
typedef struct catalog_source {
    kube_client *api;    /* borrowed: the cluster */
    kube_client *direct; /* owned: catalogd itself, or NULL for the service proxy */
} catalog_source;

/* url NULL: $OLMV1_CATALOGD_URL when set and not empty, else the service proxy. */
int catalog_source_open(kube_client *api, const char *url, catalog_source *out, olm_error *err);
void catalog_source_close(catalog_source *s);

typedef struct cluster_catalog {
    json_t *obj;        /* owned reference: the ClusterCatalog */
    const char *name;   /* borrowed from obj */
    int32_t priority;
    bool unavailable;   /* spec.availabilityMode Unavailable: not read */
    fbc_catalog *fbc;   /* owned: the content read, or NULL */
    char *fetch_error;  /* owned: why it could not be read, or NULL */
    int fetch_code;     /* the exit code that goes with fetch_error */
} cluster_catalog;

typedef struct cluster_catalog_set {
    cluster_catalog *items; /* sorted by name */
    size_t n;
} cluster_catalog_set;

/* The ClusterCatalogs selected by `selector` (a metav1.LabelSelector object; NULL
 * selects all) and, when nnames > 0, named in `names` (each must exist: else
 * CLI_EXIT_NOT_FOUND).  Nothing is fetched yet. */
int catalog_set_select(kube_client *api, const json_t *selector, const char *const *names, size_t nnames,
                       cluster_catalog_set *out, olm_error *err);

/* Reads the content of every available catalog of the set: only `package` (its
 * olm.package blob and the blobs of the package) or, with package NULL, everything.
 * A catalog that cannot be read gets fetch_error (not serving, unreachable, ...); the
 * call itself fails only when memory runs out. */
int catalog_set_fetch(const catalog_source *src, cluster_catalog_set *set, const char *package, olm_error *err);

/* The same for the catalogs i with wanted[i] (wanted NULL: all). */
int catalog_set_fetch_wanted(const catalog_source *src, cluster_catalog_set *set, const char *package,
                             const bool *wanted, olm_error *err);

void cluster_catalog_set_free(cluster_catalog_set *set);

/* The resolver's view of the set (borrowed pointers; `out` has set->n entries). */
void catalog_set_resolve_view(const cluster_catalog_set *set, resolve_catalog *out);

/* The API server path (with `suffix` appended, e.g. "/api/v1/all") that reaches the
 * catalog content at `base` through the service proxy.  Caller frees *out.  Fails
 * when base is not served by a cluster Service (host <service>.<namespace>.svc...). */
int catalog_proxy_path(const char *base, const char *suffix, char **out, olm_error *err);

/* The path part of `base` ("https://h/catalogs/x" -> "/catalogs/x"), no trailing '/';
 * caller frees.  NULL when base is no http(s) URL. */
char *catalog_base_path(const char *base);

#endif

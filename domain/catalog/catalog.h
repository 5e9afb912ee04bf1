/* catalog: the ClusterCatalog side of operator-controller: fetching package content from
 * catalogd (cached by resolved image), picking catalogs for an extension, and telling
 * which catalog updates change what a resolution sees. */
#ifndef OLM_CATALOG_H
#define OLM_CATALOG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "fbc.h"
#include "kube_label_selector.h"
#include "olm_error.h"
#include "olm_tls.h"
#include "olm_tls_profile.h"
#include "resolve.h"

/* catalog_client: operator-controller's view of the catalogs catalogd serves
 * (olmv1-behaviour.md §3.1 and §4.6, adapted to decision 3: only the package a
 * ClusterExtension needs is fetched, through /api/v1/metas).
 *
 *  - catalog_selector_parse: spec.source.catalog.selector (a metav1.LabelSelector,
 *    kube_label_selector.h) picks ClusterCatalogs;
 *  - catalog_client_get_package: a ClusterCatalog object -> the package's FBC.  The
 *    catalog must be Serving=True with status.resolvedSource.image.ref set; two GETs
 *    `<urls.base>/api/v1/metas?package=<pkg>` (channels, bundles, deprecations) and
 *    `?schema=olm.package&name=<pkg>` (the olm.package blob has no package key) are
 *    loaded with fbc_load_buffer and cached by (catalog, resolved ref, package);
 *  - catalog_client_collect: the walk the resolver needs (resolve_catalog[]).
 *
 * Only successful fetches are cached: a transport error or an unexpected HTTP status is
 * reported (as resolve_catalog.fetch_error) and the next reconcile asks again, rather
 * than keeping the error until the catalog changes as upstream does.  When a catalog's
 * resolved ref changes, its entries for older refs are dropped (one ref per catalog).
 *
 * Threading: a catalog_client may be used from several threads at once (a mutex guards
 * the cache; HTTP runs outside it).  Calls block (HTTP): threadpool only. */

/* ------------------------------------------------------------ catalog selection */

/* kube_label_selector_parse for spec.source.catalog.selector: NULL, JSON null or {}
 * select every catalog.  On a bad selector returns -1 with err "desired catalog selector
 * is invalid: <why>".  *out is owned by the caller (kube_label_selector_free); match
 * with kube_label_selector_matches. */
int catalog_selector_parse(const json_t *selector, kube_label_selector **out, olm_error *err);

/* One ClusterCatalog a selection picked: what the resolver needs of it. */
typedef struct catalog_pick {
    const json_t *obj;   /* borrowed from the listing */
    const char *name;    /* metadata.name, borrowed */
    int32_t priority;    /* spec.priority */
    bool unavailable;    /* spec.availabilityMode Unavailable: the resolver skips it */
} catalog_pick;

/* The ClusterCatalogs of `catalogs` (a JSON array, e.g. the informer's or a LIST's items)
 * that `selector` picks, sorted by name: the one selection operator-controller and the CLI
 * make.  *out is a new array of *n picks (free()), borrowing from `catalogs`.  -1 with err
 * for an invalid selector ("desired catalog selector is invalid: ...") or out of memory. */
int catalog_select(const json_t *catalogs, const json_t *selector, catalog_pick **out, size_t *n, olm_error *err);

/* ------------------------------------------------------------ the client */

typedef struct catalog_client catalog_client;

typedef struct catalog_client_options {
    const olm_ca_set *cas; /* trusted for https catalog URLs in addition to the system store
                              (--catalogd-cas-dir), or NULL; borrowed: it must outlive the client */
    long timeout_seconds;  /* whole request; 0: 300 (upstream's 5 minutes) */
    /* The TLS versions, ciphers and curves of https catalog requests: operator-controller's
     * --tls-profile, as upstream's client to catalogd follows it.  NULL: TLS 1.2 or later,
     * libcurl's ciphers.  Borrowed. */
    const olm_tls_profile *tls;
} catalog_client_options;

/* NULL with err on out of memory. */
catalog_client *catalog_client_new(const catalog_client_options *opts, olm_error *err);
void catalog_client_free(catalog_client *cc);

/* One package of one catalog at one resolved ref; shared and immutable.  Hold it
 * while the fbc is in use; release from any thread. */
typedef struct catalog_package catalog_package;
const fbc_catalog *catalog_package_fbc(const catalog_package *p);
void catalog_package_release(catalog_package *p);

/* Returns 0 and a held *out, or -1 with the §3.1 reason in err (without the
 * "error walking catalogs: ..." wrapper the resolver adds), e.g.
 *   catalog "<cat>" is not being served
 *   error: catalog "<cat>" has a nil status.resolvedSource value
 *   error retrieving cache for catalog "<cat>": <transport or HTTP error>
 * `catalog` is a ClusterCatalog object (borrowed). */
int catalog_client_get_package(catalog_client *cc, const json_t *catalog, const char *package,
                               catalog_package **out, olm_error *err);

/* Drops every cached entry of the catalog `name` (deleted catalogs). */
void catalog_client_forget(catalog_client *cc, const char *name);
/* Drops every cached entry of `package`, from any catalog (its extension was
 * uninstalled: the cache would otherwise only ever grow with the packages ever
 * installed; another extension of the package fetches it again once). */
void catalog_client_forget_package(catalog_client *cc, const char *package);
/* Closes the idle keep-alive connections to catalogd (operator-controller calls it when its
 * work queue is idle; the next request connects again).  Any thread. */
void catalog_client_close_idle(catalog_client *cc);
/* Cached (catalog, ref, package) entries, for metrics and tests. */
size_t catalog_client_cached(catalog_client *cc);

/* ------------------------------------------------------------ the walk */

/* The catalogs selected for one resolution.  items[i].fbc and fetch_error point into
 * `held` / `errors`; everything is owned by the set (catalog_set_free). */
typedef struct catalog_set {
    resolve_catalog *items;
    size_t n;
    catalog_package **held; /* n entries, NULL where no content */
    char **strings;         /* 2n entries: names and fetch errors */
    size_t matched;         /* catalogs matching the selector, unavailable ones included */
} catalog_set;

/* Selects the ClusterCatalogs of `catalogs` (a JSON array of objects, borrowed) that
 * match `selector` (spec.source.catalog.selector, may be NULL), sorted by name, and
 * fetches `package` from each available one.  A fetch failure is not an error here:
 * it becomes that catalog's fetch_error and the resolver reports it.  Returns -1 with
 * err only for an invalid selector ("desired catalog selector is invalid: ...") or out
 * of memory. */
int catalog_client_collect(catalog_client *cc, const json_t *catalogs, const json_t *selector,
                           const char *package, catalog_set *out, olm_error *err);
void catalog_set_free(catalog_set *s);

/* catalog_change: does a ClusterCatalog update change what a resolution sees? */

/* True when `old_obj` and `new_obj` (two versions of one ClusterCatalog) differ in anything
 * catalog_client_collect or the resolver reads: the labels (selectors), spec.priority (ties),
 * spec.availabilityMode, the Serving condition's status, status.urls.base (where content is
 * fetched) or status.resolvedSource.image.ref (the content itself).  Bookkeeping writes such
 * as lastUnpacked or a condition's message return false, so catalogd's status updates do not
 * requeue every ClusterExtension.  Upstream requeues only on a resolvedSource change; with
 * that alone, raising a catalog's priority to break a tie or relabelling it for a selector
 * waits for the next unrelated event. */
bool catalog_resolution_inputs_changed(const json_t *old_obj, const json_t *new_obj);

#endif

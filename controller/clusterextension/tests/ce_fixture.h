/* ce_fixture: one ClusterExtension reconciler wired to fakes, for the reconcile tests.
 *
 * The cluster is testsupport's fake apiserver (the controller's identity sends the bearer
 * token "admin", the ServiceAccount's the tokens the fake mint hands out: "sa-token-1", ...).
 * catalogd is a handler of the shared HTTP fake serving one catalog "cat" with package "pkg";
 * which of its bundles (1.0.0, 1.1.0 replacing it) it lists is up to each test.  The
 * ClusterCatalog informer is fed by hand (kube_informer_apply), never started.  Bundle
 * images are digest references on that same HTTP fake, which answers 404 to every registry
 * request: a bundle is "pullable" only when the fixture has put it in the reconciler's
 * image cache (<cache>/bundles/<extension>/<digest>, as oci_pull_cached leaves a pull), so
 * no test needs a registry. */
#ifndef CE_FIXTURE_H
#define CE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "clusterextension.h"
#include "fake_apiserver.h"
#include "fake_http_server.h"
#include "kube_uvcurl.h"

#define CE_NAME "demo"
#define CE_NS "demo-ns"
#define CE_SA "installer"
#define CE_SYS "sys"
#define CE_PATH "/apis/olm.operatorframework.io/v1/clusterextensions/" CE_NAME
#define CE_RECORD_PATH "/api/v1/namespaces/" CE_SYS "/secrets/olmv1-install-" CE_NAME
#define CE_V1 "pkg.v1.0.0"
#define CE_V11 "pkg.v1.1.0"

/* Which bundles the fake catalog lists. */
enum { CE_CATALOG_V1 = 1, CE_CATALOG_V11 = 2 };

typedef struct ce_fixture {
    fake_apiserver *api;
    fake_http_server catalogd;     /* also the (404-only) registry of the bundle images */
    char pkg_blob[256], pkg_rest[2048]; /* what catalogd serves, built from `catalog_bundles` */
    unsigned catalog_bundles;
    char image_v1[256], image_v11[256];
    char cache_dir[64];
    uv_loop_t loop;
    kube_uvcurl *uc;
    kube_config informer_cfg;
    kube_informer *catalogs;
    catalog_client *cc;
    kube_client *admin;
    clusterextension_token_cache *tokens;
    int mints;                     /* tokens minted by the fake mint */
    uint64_t deadline_minute_ms;   /* reconciler config; set before ce_fixture_reconciler */
    drift_watcher *drift;          /* reconciler config (borrowed, the test's); set before ce_fixture_reconciler */
    bool no_available_condition;   /* reconciler config; set before ce_fixture_reconciler */
    bool boxcutter;                /* reconciler config (BoxcutterRuntime); set before ce_fixture_reconciler */
    kube_informer *extensions;     /* reconciler config: a ClusterExtension informer fed by hand
                                    * (ce_fixture_extensions_informer); NULL: none */
    clusterextension_reconciler *r;
} ce_fixture;

/* cmocka group setup/teardown: the fakes, the cache dir, the system namespace, the
 * extension's namespace and ServiceAccount.  No reconciler yet (ce_fixture_reconciler). */
int ce_fixture_setup(void **state);
int ce_fixture_teardown(void **state);

/* The reconciler over the fixture's fakes (made once; later calls return it). */
clusterextension_reconciler *ce_fixture_reconciler(ce_fixture *f);

/* Serves `bundles` (CE_CATALOG_*) from the catalog "cat" and puts it into the informer. */
void ce_fixture_catalog(ce_fixture *f, unsigned bundles);
/* Takes the catalog "cat" out of the informer (deleted). */
void ce_fixture_catalog_gone(ce_fixture *f);
/* Puts bundle `name` (CE_V1 or CE_V11) in the image cache: it pulls without a registry. */
void ce_fixture_pullable(ce_fixture *f, const char *name);

/* Stores the ClusterExtension: package "pkg", namespace CE_NS, ServiceAccount CE_SA, the
 * given finalizers (JSON array text, NULL: none) and `extra_spec` merged into spec (JSON
 * object text, NULL: nothing). */
void ce_fixture_extension(ce_fixture *f, const char *finalizers, const char *extra_spec);

/* Empties the image cache: no bundle pulls any more. */
void ce_fixture_unpullable(ce_fixture *f);

/* Makes f->extensions (before ce_fixture_reconciler), holding the stored ClusterExtension as
 * a synced informer would; stopped by the teardown. */
/* Feeds a copy of `obj` to the fixture's ClusterExtension informer as the controller's watch
 * would (managedFields dropped, clusterextension_cache_form). */
void ce_fixture_informer_apply(ce_fixture *f, kube_watch_event_type type, const json_t *obj);
void ce_fixture_extensions_informer(ce_fixture *f);

/* One reconcile of CE_NAME. */
kube_wq_result ce_fixture_reconcile(ce_fixture *f);

/* The stored extension's condition `type` (borrowed), or NULL. */
json_t *ce_fixture_condition(ce_fixture *f, const char *type);
/* A string field of that condition ("" when absent). */
const char *ce_fixture_condition_field(ce_fixture *f, const char *type, const char *field);
/* Whether the stored extension lists `finalizer`. */
bool ce_fixture_has_finalizer(ce_fixture *f, const char *finalizer);

#endif

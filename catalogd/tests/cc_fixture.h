/* cc_fixture: one ClusterCatalog reconciler wired to fakes, for the reconcile tests.
 *
 * The cluster is testsupport's fake apiserver; the informer the reconciler reads is fed by
 * the test (cc_fixture_sync copies the fake's object into it, as the watch would after each
 * write).  Catalog images are digest references on a shared HTTP fake that answers 404 to
 * every registry request but the tag a test may ask for: an image "pulls" only when the fixture has put it in the image
 * cache (<cache>/unpack/<name>/<digest> and its sidecar, as oci_pull_catalog leaves a pull),
 * so no registry is needed.  Publish events are counted per kind. */
#ifndef CC_FIXTURE_H
#define CC_FIXTURE_H

#include <stdbool.h>
#include <uv.h>

#include "clustercatalog_internal.h"
#include "clustercatalog_status.h"
#include "fake_apiserver.h"
#include "fake_http_server.h"
#include "kube_uvcurl.h"

#define CC_NAME "cat"
#define CC_PATH "/apis/olm.operatorframework.io/v1/clustercatalogs/" CC_NAME
#define CC_URL_ROOT "http://catalogd.test/catalogs"

typedef struct cc_fixture {
    fake_apiserver *api;
    fake_http_server registry; /* 404 for everything */
    char image[256];           /* the catalog's digest reference */
    char cache_dir[64];
    uv_loop_t loop;
    kube_uvcurl *uc;
    kube_config informer_cfg;
    kube_informer *informer;
    kube_client *client;
    clustercatalog_reconciler *r;
    uv_mutex_t lock;
    unsigned published[CC_PUBLISH_UNPACK + 1]; /* events per clustercatalog_publish_kind */
} cc_fixture;

int cc_fixture_setup(void **state);
int cc_fixture_teardown(void **state);

/* Stores ClusterCatalog CC_NAME with the image source (`extra` merged into the object: JSON
 * text, NULL: nothing) and syncs the informer. */
void cc_fixture_catalog(cc_fixture *f, const char *extra);
/* The informer takes the fake's current object (or its deletion), as a watch would. */
void cc_fixture_sync(cc_fixture *f);
/* Puts the image in the image cache: it pulls without a registry. */
void cc_fixture_pullable(cc_fixture *f);

/* The catalog's image becomes a tag ("latest", resolved by the registry to the cached
 * digest): before cc_fixture_catalog. */
void cc_fixture_use_tag(cc_fixture *f);

kube_wq_result cc_fixture_reconcile(cc_fixture *f);

/* A string field of the stored catalog's condition `type` ("" when absent). */
const char *cc_fixture_condition(cc_fixture *f, const char *type, const char *field);
bool cc_fixture_has_finalizer(cc_fixture *f);
/* Whether the store of CC_NAME exists on disk. */
bool cc_fixture_stored(cc_fixture *f);
unsigned cc_fixture_published(cc_fixture *f, clustercatalog_publish_kind kind);

#endif

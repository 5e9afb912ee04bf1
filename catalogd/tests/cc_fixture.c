/* cc_fixture: see cc_fixture.h. */
#include "cc_fixture.h"
#include "olm_fs.h"
#include "kube_object.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DIGEST "sha256:3333333333333333333333333333333333333333333333333333333333333333"

/* The catalog's content: one package, one channel, one bundle. */
static const char FBC[] =
    "{\"schema\":\"olm.package\",\"name\":\"pkg\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"pkg\",\"entries\":[{\"name\":\"pkg.v1.0.0\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"pkg.v1.0.0\",\"package\":\"pkg\",\"image\":\"reg/pkg@sha256:aa\","
    "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"pkg\",\"version\":\"1.0.0\"}}]}\n";

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_true(fputs(text, fp) >= 0);
    assert_int_equal(fclose(fp), 0);
}

void cc_fixture_pullable(cc_fixture *f)
{
    char dir[512], file[640];
    snprintf(dir, sizeof dir, "%s/unpack/%s/%s/configs", f->cache_dir, CC_NAME, DIGEST);
    assert_int_equal(olm_mkdir_p(dir), 0);
    snprintf(file, sizeof file, "%s/catalog.json", dir);
    write_file(file, FBC);
    /* The sidecar of a finished catalog pull: its labels and the configs dir (oci_pull_cache.c). */
    snprintf(file, sizeof file, "%s/unpack/%s/%s.json", f->cache_dir, CC_NAME, DIGEST);
    write_file(file, "{\"labels\":{\"operators.operatorframework.io.index.configs.v1\":\"/configs\"},"
                     "\"prefix\":\"configs\"}");
}

/* ------------------------------------------------------------ the object */

void cc_fixture_sync(cc_fixture *f)
{
    json_t *obj = fake_apiserver_object(f->api, CC_PATH);
    if (obj) {
        json_t *copy = json_deep_copy(obj);
        kube_informer_apply(f->informer, KUBE_WATCH_MODIFIED, copy);
        json_decref(copy);
        return;
    }
    json_t *cached = kube_informer_get(f->informer, CC_NAME);
    if (cached) {
        kube_informer_apply(f->informer, KUBE_WATCH_DELETED, cached);
        json_decref(cached);
    }
}

void cc_fixture_catalog(cc_fixture *f, const char *extra)
{
    json_t *cat = json_pack("{s:s, s:s, s:{s:s, s:i}, s:{s:{s:s, s:{s:s}}}}", "apiVersion",
                            "olm.operatorframework.io/v1", "kind", "ClusterCatalog", "metadata", "name", CC_NAME,
                            "generation", 1, "spec", "source", "type", "Image", "image", "ref", f->image);
    assert_non_null(cat);
    if (extra) {
        json_t *x = json_loads(extra, 0, NULL);
        assert_non_null(x);
        json_object_update_recursive(cat, x);
        json_decref(x);
    }
    fake_apiserver_put(f->api, CC_PATH, cat);
    cc_fixture_sync(f);
}

void cc_fixture_use_tag(cc_fixture *f)
{
    snprintf(f->image, sizeof f->image, "127.0.0.1:%d/catalog:latest", f->registry.port);
}

kube_wq_result cc_fixture_reconcile(cc_fixture *f)
{
    kube_wq_result res = clustercatalog_reconcile(CC_NAME, f->r);
    cc_fixture_sync(f);
    return res;
}

const char *cc_fixture_condition(cc_fixture *f, const char *type, const char *field)
{
    json_t *c = clustercatalog_find_condition(json_object_get(fake_apiserver_object(f->api, CC_PATH), "status"), type);
    const char *v = json_string_value(json_object_get(c, field));
    return v ? v : "";
}

bool cc_fixture_has_finalizer(cc_fixture *f)
{
    return kube_object_has_finalizer(fake_apiserver_object(f->api, CC_PATH), CC_FINALIZER);
}

bool cc_fixture_stored(cc_fixture *f)
{
    return clustercatalog_content_exists(f->r, CC_NAME);
}

unsigned cc_fixture_published(cc_fixture *f, clustercatalog_publish_kind kind)
{
    uv_mutex_lock(&f->lock);
    unsigned n = f->published[kind];
    uv_mutex_unlock(&f->lock);
    return n;
}

/* ------------------------------------------------------------ setup and teardown */

/* The HTTP server's side, counted (any thread). */
static void publish(const clustercatalog_publish_event *ev, void *data)
{
    cc_fixture *f = data;
    uv_mutex_lock(&f->lock);
    f->published[ev->kind]++;
    uv_mutex_unlock(&f->lock);
    store_view_release(ev->view);
}

/* The registry: the tag "latest" resolves to the cached digest (a HEAD, as a poll of a cached
 * image asks); everything else is unknown. */
static void registry(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    (void)s;
    if (strcmp(req->method, "HEAD") == 0 && strcmp(req->target, "/v2/catalog/manifests/latest") == 0) {
        resp->status = 200;
        resp->content_type = "application/vnd.oci.image.manifest.v1+json";
        resp->headers = "Docker-Content-Digest: " DIGEST "\r\n";
        resp->body = "";
        return;
    }
    resp->status = 404;
    resp->body = "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest unknown\"}]}";
}

int cc_fixture_setup(void **state)
{
    cc_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    uv_mutex_init(&f->lock);
    f->api = fake_apiserver_start();
    assert_non_null(f->api);
    assert_int_equal(fake_http_start(&f->registry), 0);
    pthread_mutex_lock(&f->registry.lock);
    f->registry.handler = registry;
    pthread_mutex_unlock(&f->registry.lock);
    snprintf(f->image, sizeof f->image, "127.0.0.1:%d/catalog@" DIGEST, f->registry.port);
    snprintf(f->cache_dir, sizeof f->cache_dir, "/tmp/olm-cc-test-XXXXXX");
    assert_non_null(mkdtemp(f->cache_dir));

    olm_error err;
    assert_int_equal(uv_loop_init(&f->loop), 0);
    f->uc = kube_uvcurl_new(&f->loop, &err);
    assert_non_null(f->uc);
    f->informer_cfg.server = "http://127.0.0.1:9"; /* never contacted: not started */
    kube_watch_options wo = {.path = "/apis/olm.operatorframework.io/v1/clustercatalogs"};
    f->informer = kube_informer_new(f->uc, &f->informer_cfg, &wo, NULL, NULL, &err);
    assert_non_null(f->informer);
    kube_config kc = {0};
    kc.server = strdup(fake_apiserver_url(f->api));
    kc.token = strdup("catalogd");
    kube_client_options ko = {.connect_timeout_ms = 2000, .timeout_ms = 10000};
    f->client = kube_client_new(&kc, &ko, &err);
    assert_non_null(f->client);
    clustercatalog_reconciler_config cfg = {.client = f->client, .informer = f->informer, .cache_dir = f->cache_dir,
                                            .url_root = CC_URL_ROOT, .publish = publish, .publish_data = f};
    f->r = clustercatalog_reconciler_new(&cfg, &err);
    assert_non_null(f->r);
    clustercatalog_reconciler_lead(f->r); /* the follower's tests say otherwise */
    *state = f;
    return 0;
}

static void on_closed(void *data)
{
    kube_uvcurl_close(data, NULL, NULL);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int cc_fixture_teardown(void **state)
{
    cc_fixture *f = *state;
    clustercatalog_reconciler_free(f->r);
    kube_client_free(f->client);
    kube_informer_stop(f->informer, on_closed, f->uc);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    fake_http_stop(&f->registry);
    fake_apiserver_stop(f->api);
    nftw(f->cache_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    uv_mutex_destroy(&f->lock);
    free(f);
    return 0;
}

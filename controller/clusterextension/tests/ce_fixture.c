/* ce_fixture: see ce_fixture.h. */
#include "ce_fixture.h"
#include "clusterextension_controller.h"
#include "olm_fs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIGEST_V1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define DIGEST_V11 "sha256:2222222222222222222222222222222222222222222222222222222222222222"

/* ------------------------------------------------------------ the bundles */

/* A registry+v1 bundle for AllNamespaces: a Deployment, its ServiceAccount and cluster RBAC. */
static const char CSV_FMT[] =
    "apiVersion: operators.coreos.com/v1alpha1\n"
    "kind: ClusterServiceVersion\n"
    "metadata:\n"
    "  name: %s\n"
    "spec:\n"
    "  version: %s\n"
    "  install:\n"
    "    strategy: deployment\n"
    "    spec:\n"
    "      clusterPermissions:\n"
    "      - serviceAccountName: pkg-operator\n"
    "        rules:\n"
    "        - apiGroups: [\"\"]\n"
    "          resources: [configmaps]\n"
    "          verbs: [get]\n"
    "      deployments:\n"
    "      - name: pkg-operator\n"
    "        spec:\n"
    "          selector:\n"
    "            matchLabels: {app: pkg-operator}\n"
    "          template:\n"
    "            metadata:\n"
    "              labels: {app: pkg-operator}\n"
    "            spec:\n"
    "              serviceAccountName: pkg-operator\n"
    "              containers:\n"
    "              - name: manager\n"
    "                image: example.com/pkg-operator:%s\n"
    "  installModes:\n"
    "  - {type: OwnNamespace, supported: false}\n"
    "  - {type: SingleNamespace, supported: false}\n"
    "  - {type: MultiNamespace, supported: false}\n"
    "  - {type: AllNamespaces, supported: true}\n";

static const char ANNOTATIONS[] = "annotations:\n"
                                  "  operators.operatorframework.io.bundle.package.v1: pkg\n"
                                  "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n";

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
}

void ce_fixture_pullable(ce_fixture *f, const char *name)
{
    bool v1 = strcmp(name, CE_V1) == 0;
    const char *digest = v1 ? DIGEST_V1 : DIGEST_V11, *version = v1 ? "1.0.0" : "1.1.0";
    char dir[512], file[640], text[sizeof CSV_FMT + 128];
    snprintf(dir, sizeof dir, "%s/bundles/%s/%s/manifests", f->cache_dir, CE_NAME, digest);
    assert_int_equal(olm_mkdir_p(dir), 0);
    snprintf(file, sizeof file, "%s/csv.yaml", dir);
    snprintf(text, sizeof text, CSV_FMT, name, version, version);
    write_file(file, text);
    snprintf(dir, sizeof dir, "%s/bundles/%s/%s/metadata", f->cache_dir, CE_NAME, digest);
    assert_int_equal(olm_mkdir_p(dir), 0);
    snprintf(file, sizeof file, "%s/annotations.yaml", dir);
    write_file(file, ANNOTATIONS);
    /* The sidecar that makes the entry a finished pull (oci_pull_cache.c). */
    snprintf(file, sizeof file, "%s/bundles/%s/%s.json", f->cache_dir, CE_NAME, digest);
    write_file(file, "{\"labels\":{}}");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void ce_fixture_unpullable(ce_fixture *f)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bundles", f->cache_dir);
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------ catalogd */

static void catalogd(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    ce_fixture *f = s->user;
    resp->status = 200;
    resp->content_type = "application/jsonl";
    if (strcmp(req->target, "/catalogs/cat/api/v1/metas?schema=olm.package&name=pkg") == 0)
        resp->body = f->pkg_blob;
    else if (strcmp(req->target, "/catalogs/cat/api/v1/metas?package=pkg") == 0)
        resp->body = f->pkg_rest;
    else
        resp->status = 404, resp->content_type = "text/plain", resp->body = "404 page not found\n";
}

static void bundle_blob(char *buf, size_t bufsz, const char *name, const char *version, const char *image)
{
    snprintf(buf, bufsz,
             "{\"schema\":\"olm.bundle\",\"name\":\"%s\",\"package\":\"pkg\",\"image\":\"%s\",\"properties\":"
             "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"pkg\",\"version\":\"%s\"}}]}\n",
             name, image, version);
}

void ce_fixture_catalog(ce_fixture *f, unsigned bundles)
{
    char b1[512] = "", b11[512] = "";
    if (bundles & CE_CATALOG_V1)
        bundle_blob(b1, sizeof b1, CE_V1, "1.0.0", f->image_v1);
    if (bundles & CE_CATALOG_V11)
        bundle_blob(b11, sizeof b11, CE_V11, "1.1.0", f->image_v11);
    const char *e1 = "{\"name\":\"" CE_V1 "\"}", *e11 = "{\"name\":\"" CE_V11 "\",\"replaces\":\"" CE_V1 "\"}";
    char entries[256];
    snprintf(entries, sizeof entries, "%s%s%s", bundles & CE_CATALOG_V1 ? e1 : "",
             (bundles & CE_CATALOG_V1) && (bundles & CE_CATALOG_V11) ? "," : "", bundles & CE_CATALOG_V11 ? e11 : "");
    snprintf(f->pkg_blob, sizeof f->pkg_blob, "{\"schema\":\"olm.package\",\"name\":\"pkg\",\"defaultChannel\":\"stable\"}\n");
    snprintf(f->pkg_rest, sizeof f->pkg_rest,
             "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"pkg\",\"entries\":[%s]}\n%s%s", entries, b1,
             b11);
    f->catalog_bundles = bundles;
    /* A new resolved ref per content: the catalog client caches by ref. */
    char ref[128], base[128];
    snprintf(ref, sizeof ref, "reg/cat@sha256:%064x", bundles);
    snprintf(base, sizeof base, "%s/catalogs/cat", f->catalogd.url);
    json_t *cat = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s, s:{s:s}}}, s:{s:[{s:s, s:s}], s:{s:s, s:{s:s}}, "
                            "s:{s:s}}}",
                            "apiVersion", "olm.operatorframework.io/v1", "kind", "ClusterCatalog", "metadata", "name",
                            "cat", "resourceVersion", "1", "spec", "source", "type", "Image", "image", "ref", "reg/cat:1",
                            "status", "conditions", "type", "Serving", "status", "True", "resolvedSource", "type",
                            "Image", "image", "ref", ref, "urls", "base", base);
    assert_non_null(cat);
    kube_informer_apply(f->catalogs, KUBE_WATCH_ADDED, cat);
    json_decref(cat);
}

void ce_fixture_catalog_gone(ce_fixture *f)
{
    json_t *cat = kube_informer_get(f->catalogs, "cat");
    assert_non_null(cat);
    kube_informer_apply(f->catalogs, KUBE_WATCH_DELETED, cat);
    json_decref(cat);
}

/* ------------------------------------------------------------ the extension */

void ce_fixture_extension(ce_fixture *f, const char *finalizers, const char *extra_spec)
{
    json_t *ce = json_pack("{s:s, s:s, s:{s:s, s:i}, s:{s:s, s:{s:s}, s:{s:s, s:{s:s}}}}", "apiVersion",
                           "olm.operatorframework.io/v1", "kind", "ClusterExtension", "metadata", "name", CE_NAME,
                           "generation", 1, "spec", "namespace", CE_NS, "serviceAccount", "name", CE_SA, "source",
                           "sourceType", "Catalog", "catalog", "packageName", "pkg");
    assert_non_null(ce);
    if (finalizers)
        json_object_set_new(json_object_get(ce, "metadata"), "finalizers", json_loads(finalizers, 0, NULL));
    if (extra_spec) {
        json_t *extra = json_loads(extra_spec, 0, NULL);
        assert_non_null(extra);
        json_object_update_recursive(json_object_get(ce, "spec"), extra);
        json_decref(extra);
    }
    fake_apiserver_put(f->api, CE_PATH, ce);
}

json_t *ce_fixture_condition(ce_fixture *f, const char *type)
{
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(ce, "status"), "conditions"), i, c) {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return c;
    }
    return NULL;
}

const char *ce_fixture_condition_field(ce_fixture *f, const char *type, const char *field)
{
    const char *v = json_string_value(json_object_get(ce_fixture_condition(f, type), field));
    return v ? v : "";
}

bool ce_fixture_has_finalizer(ce_fixture *f, const char *finalizer)
{
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(ce, "metadata"), "finalizers"), i, v) {
        if (strcmp(json_string_value(v), finalizer) == 0)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------ the reconciler */

/* The TokenRequest stand-in: "sa-token-<n>" for the n-th mint, lifetime as requested; a
 * NotFound, as the apiserver's, when the fake holds no such ServiceAccount. */
static int fake_mint(void *data, const char *ns, const char *sa, int64_t seconds, char **token, time_t *expires,
                     olm_error *err)
{
    ce_fixture *f = data;
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts/%s", ns, sa);
    if (!fake_apiserver_object(f->api, path)) {
        olm_error_set(err, "serviceaccounts \"%s\" not found", sa);
        return KUBE_NOT_FOUND;
    }
    if (asprintf(token, "sa-token-%d", ++f->mints) < 0)
        return olm_error_set(err, "out of memory");
    *expires = 0;
    return 0;
}

clusterextension_reconciler *ce_fixture_reconciler(ce_fixture *f)
{
    if (f->r)
        return f->r;
    clusterextension_reconciler_config cfg = {
        .admin = f->admin,
        .catalogs = f->catalogs,
        .catalog_client = f->cc,
        .system_namespace = CE_SYS,
        .cache_dir = f->cache_dir,
        .tokens = f->tokens,
        .deadline_minute_ms = f->deadline_minute_ms,
        .drift = f->drift,
        .no_available_condition = f->no_available_condition,
        .boxcutter = f->boxcutter,
        .extensions = f->extensions,
    };
    olm_error err;
    f->r = clusterextension_reconciler_new(&cfg, &err);
    assert_non_null(f->r);
    return f->r;
}

void ce_fixture_extensions_informer(ce_fixture *f)
{
    olm_error err;
    kube_watch_options wo = {.path = "/apis/olm.operatorframework.io/v1/clusterextensions"};
    f->extensions = kube_informer_new(f->uc, &f->informer_cfg, &wo, NULL, NULL, &err);
    assert_non_null(f->extensions);
    ce_fixture_informer_apply(f, KUBE_WATCH_ADDED, fake_apiserver_object(f->api, CE_PATH)); /* as the watch saw it then */
    kube_informer_mark_synced(f->extensions);
}

void ce_fixture_informer_apply(ce_fixture *f, kube_watch_event_type type, const json_t *obj)
{
    json_t *copy = json_deep_copy(obj);
    json_object_del(json_object_get(copy, "metadata"), "managedFields");
    clusterextension_cache_form(copy); /* what the controller's watch keeps */
    kube_informer_apply(f->extensions, type, copy);
    json_decref(copy);
}

kube_wq_result ce_fixture_reconcile(ce_fixture *f)
{
    return clusterextension_reconcile(CE_NAME, ce_fixture_reconciler(f));
}

/* ------------------------------------------------------------ setup and teardown */

int ce_fixture_setup(void **state)
{
    ce_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->api = fake_apiserver_start();
    assert_non_null(f->api);
    assert_int_equal(fake_http_start(&f->catalogd), 0);
    pthread_mutex_lock(&f->catalogd.lock);
    f->catalogd.user = f;
    f->catalogd.handler = catalogd;
    pthread_mutex_unlock(&f->catalogd.lock);
    /* The registry is the catalogd fake: plain HTTP on loopback, 404 for every image. */
    snprintf(f->image_v1, sizeof f->image_v1, "127.0.0.1:%d/pkg@" DIGEST_V1, f->catalogd.port);
    snprintf(f->image_v11, sizeof f->image_v11, "127.0.0.1:%d/pkg@" DIGEST_V11, f->catalogd.port);
    snprintf(f->cache_dir, sizeof f->cache_dir, "/tmp/olm-ce-test-XXXXXX");
    assert_non_null(mkdtemp(f->cache_dir));

    olm_error err;
    assert_int_equal(uv_loop_init(&f->loop), 0);
    f->uc = kube_uvcurl_new(&f->loop, &err);
    assert_non_null(f->uc);
    f->informer_cfg.server = "http://127.0.0.1:9"; /* never contacted: not started */
    kube_watch_options wo = {.path = "/apis/olm.operatorframework.io/v1/clustercatalogs"};
    f->catalogs = kube_informer_new(f->uc, &f->informer_cfg, &wo, NULL, NULL, &err);
    assert_non_null(f->catalogs);
    f->cc = catalog_client_new(NULL, &err);
    assert_non_null(f->cc);

    kube_config kc = {0};
    kc.server = strdup(fake_apiserver_url(f->api));
    kc.token = strdup("admin");
    kube_client_options ko = {.connect_timeout_ms = 2000, .timeout_ms = 10000};
    f->admin = kube_client_new(&kc, &ko, &err);
    assert_non_null(f->admin);
    clusterextension_token_cache_options to = {.mint = fake_mint, .mint_data = f};
    f->tokens = clusterextension_token_cache_new(&to, &err);
    assert_non_null(f->tokens);

    fake_apiserver_put_json(f->api, "/api/v1/namespaces/" CE_SYS, "{\"metadata\":{\"name\":\"" CE_SYS "\"}}");
    fake_apiserver_put_json(f->api, "/api/v1/namespaces/" CE_NS,
                            "{\"metadata\":{\"name\":\"" CE_NS "\"},\"status\":{\"phase\":\"Active\"}}");
    fake_apiserver_put_json(f->api, "/api/v1/namespaces/" CE_NS "/serviceaccounts/" CE_SA,
                            "{\"metadata\":{\"name\":\"" CE_SA "\",\"namespace\":\"" CE_NS "\"}}");
    *state = f;
    return 0;
}

static void on_closed(void *data)
{
    kube_uvcurl_close(data, NULL, NULL);
}

int ce_fixture_teardown(void **state)
{
    ce_fixture *f = *state;
    if (f->drift) /* a test that failed before stopping its watcher */
        drift_watcher_stop(f->drift, NULL, NULL);
    clusterextension_reconciler_free(f->r);
    clusterextension_token_cache_free(f->tokens);
    kube_client_free(f->admin);
    catalog_client_free(f->cc);
    if (f->extensions)
        kube_informer_stop(f->extensions, NULL, NULL);
    kube_informer_stop(f->catalogs, on_closed, f->uc);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    fake_http_stop(&f->catalogd);
    fake_apiserver_stop(f->api);
    nftw(f->cache_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

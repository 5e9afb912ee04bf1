/* clusterextension_revision_same: with BoxcutterRuntime on, the latest revision written by
 * another operator-controller (upstream's, an older one of ours) holds the rendered bundle in
 * other bytes -- its Secrets named and keyed by other hashes.  The reconcile reads them back
 * and, the objects being the same, makes no new revision; it reads them once, not at every
 * reconcile.  A revision whose objects do differ is replaced by a new one, as upstream does.
 * Real reconciler against the fake apiserver (ce_fixture.h).
 *
 * Mutation checks (production line broken, test seen failing, line restored): listed in the
 * commit message that added this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ce_fixture.h"
#include "olm_base64.h"

#define COS_PREFIX "/apis/olm.operatorframework.io/v1/clusterobjectsets/"
#define COS1 COS_PREFIX CE_NAME "-1"
#define COS2 COS_PREFIX CE_NAME "-2"
#define THEIRS "theirs-1-0123456789abcdef"
#define THEIRS_PATH "/api/v1/namespaces/" CE_SYS "/secrets/" THEIRS

static int setup_gate(void **state)
{
    int rc = ce_fixture_setup(state);
    ((ce_fixture *)*state)->boxcutter = true;
    return rc;
}

static char *b64(const char *s)
{
    olm_error err;
    return olm_base64_encode(s, strlen(s), NULL, &err);
}

static json_t *decode(const char *v)
{
    olm_error err;
    size_t n;
    char *raw = olm_base64_decode(v, strlen(v), 0, &n, &err);
    assert_non_null(raw);
    json_t *o = json_loadb(raw, n, 0, NULL);
    free(raw);
    assert_non_null(o);
    return o;
}

/* Revision 1 rewritten as another writer stores it: every object moved into one Secret of
 * other name and keys, `edit` applied to each object first, the refs pointed at it. */
static void rewrite_revision_1(ce_fixture *f, void (*edit)(json_t *obj))
{
    json_t *cos = fake_apiserver_object(f->api, COS1);
    assert_non_null(cos);
    json_t *data = json_object();
    size_t i, j, k = 0;
    json_t *ph, *slot;
    json_array_foreach(json_object_get(json_object_get(cos, "spec"), "phases"), i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, slot) {
            json_t *ref = json_object_get(slot, "ref");
            char path[512];
            snprintf(path, sizeof path, "/api/v1/namespaces/" CE_SYS "/secrets/%s",
                     json_string_value(json_object_get(ref, "name")));
            json_t *secret = fake_apiserver_object(f->api, path);
            assert_non_null(secret);
            json_t *obj = decode(json_string_value(
                json_object_get(json_object_get(secret, "data"), json_string_value(json_object_get(ref, "key")))));
            edit(obj);
            char *text = json_dumps(obj, JSON_COMPACT | JSON_INDENT(1)); /* not encoding/json's bytes */
            char *enc = b64(text);
            char key[32];
            snprintf(key, sizeof key, "k%zu", k++);
            json_object_set_new(data, key, json_string(enc));
            free(enc);
            free(text);
            json_decref(obj);
            json_object_set_new(ref, "name", json_string(THEIRS));
            json_object_set_new(ref, "key", json_string(key));
        }
    }
    json_t *secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:b, s:s, s:o}", "apiVersion", "v1", "kind",
                               "Secret", "metadata", "name", THEIRS, "namespace", CE_SYS, "labels",
                               "olm.operatorframework.io/revision-name", CE_NAME "-1",
                               "olm.operatorframework.io/owner-name", CE_NAME, "immutable", 1, "type",
                               "olm.operatorframework.io/object-data", "data", data);
    fake_apiserver_put(f->api, THEIRS_PATH, secret);
}

/* What Go's types may write and we do not: a null, an empty object, a number as a float. */
static void go_typed(json_t *obj)
{
    json_object_set_new(json_object_get(obj, "metadata"), "creationTimestamp", json_null());
    json_t *spec = json_object_get(obj, "spec");
    if (json_is_object(spec)) {
        json_object_set_new(spec, "paused", json_null());
        json_t *r = json_object_get(spec, "replicas");
        if (json_is_integer(r))
            json_object_set_new(spec, "replicas", json_real((double)json_integer_value(r)));
        json_object_del(spec, "strategy"); /* an older writer of ours */
    }
}

/* The same change, and the Deployment's image another. */
static void other_image(json_t *obj)
{
    go_typed(obj);
    json_t *c = json_array_get(
        json_object_get(json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "spec"), "containers"),
        0);
    if (c)
        json_object_set_new(c, "image", json_string("example.com/other:v9"));
}

static void first_reconcile(ce_fixture *f)
{
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_non_null(fake_apiserver_object(f->api, COS1));
}

static void test_other_bytes_same_objects_no_new_revision(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    rewrite_revision_1(f, go_typed);
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, COS2));
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/" THEIRS, NULL), 1);
    /* The answer is kept: the next reconciles read nothing more. */
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, COS2));
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/" THEIRS, NULL), 1);
    /* Still the current revision: the extension's status names it. */
    const json_t *active =
        json_object_get(json_object_get(fake_apiserver_object(f->api, CE_PATH), "status"), "activeRevisions");
    assert_string_equal(json_string_value(json_object_get(json_array_get(active, 0), "name")), CE_NAME "-1");
}

static void test_other_objects_new_revision(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    rewrite_revision_1(f, other_image);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *cos2 = fake_apiserver_object(f->api, COS2);
    assert_non_null(cos2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cos2, "spec"), "revision")), 2);
}

/* A revision whose Secret is gone cannot be read: a new revision, as upstream would write. */
static void test_unreadable_revision_new_revision(void **state)
{
    ce_fixture *f = *state;
    first_reconcile(f);
    rewrite_revision_1(f, go_typed);
    fake_apiserver_remove(f->api, THEIRS_PATH);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_non_null(fake_apiserver_object(f->api, COS2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_other_bytes_same_objects_no_new_revision, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_other_objects_new_revision, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_revision_new_revision, setup_gate, ce_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

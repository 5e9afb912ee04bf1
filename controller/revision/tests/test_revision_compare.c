/* revision_compare, revision_typed: a revision is the current one when it holds the same
 * objects as the desired one, whatever bytes its Secrets store them in (another
 * operator-controller's gzip, Go's empty structs, 1 or 1.0); and the Deployments of our
 * revisions hold the empty structs upstream's typed objects hold, so that upstream's byte
 * comparison finds our revisions to be its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "olm_base64.h"
#include "revision.h"

static const revision_bundle BUNDLE = {.name = "test.1.2.0", .version = "1.2.0", .image = "reg/test:1.2.0",
                                       .package = "test"};

static revision_input input(int64_t n)
{
    return (revision_input){.extension = "ext", .extension_uid = "uid-ce", .number = n,
                            .system_namespace = "olmv1-system"};
}

static json_t *deployment(void)
{
    return json_loads("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"m\","
                      "\"namespace\":\"ns\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
                      "\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":"
                      "\"manager\",\"image\":\"example.com/m:v1\"}],\"initContainers\":[{\"name\":\"init\","
                      "\"image\":\"example.com/i:v1\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}}}",
                      0, NULL);
}

static json_t *bundle_objects(void)
{
    json_t *objs = json_array();
    json_array_append_new(objs, deployment());
    json_array_append_new(objs, json_loads("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                                           "\"c\",\"namespace\":\"ns\"},\"data\":{\"k\":\"v\"}}",
                                           0, NULL));
    json_array_append_new(objs, json_loads("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
                                           "\"metadata\":{\"name\":\"r\"},\"rules\":[{\"apiGroups\":[\"\"],"
                                           "\"resources\":[\"configmaps\"],\"verbs\":[\"get\"]}]}",
                                           0, NULL));
    return objs;
}

static json_t *phases_inline(const revision_built *b)
{
    olm_error err;
    json_t *p = revision_phases_inline(json_object_get(json_object_get(b->cos, "spec"), "phases"), b->secrets, &err);
    assert_non_null(p);
    return p;
}

static const json_t *find_object(const json_t *phases, const char *kind)
{
    size_t i, j;
    const json_t *ph, *slot;
    json_array_foreach(phases, i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, slot) {
            const json_t *o = json_object_get(slot, "object");
            if (strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0)
                return o;
        }
    }
    fail_msg("no %s in the revision", kind);
    return NULL;
}

/* Upstream's revision of a CSV Deployment without strategy nor resources holds them empty
 * (observed: test_upstream_door.py); ours too, the resources given kept. */
static void test_deployment_as_upstream_types_it(void **state)
{
    (void)state;
    json_t *objs = bundle_objects();
    revision_input in = input(1);
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    json_t *phases = phases_inline(&b);
    const json_t *d = find_object(phases, "Deployment");
    const json_t *spec = json_object_get(d, "spec");
    assert_true(json_is_object(json_object_get(spec, "strategy")));
    assert_int_equal(json_object_size(json_object_get(spec, "strategy")), 0);
    const json_t *pod = json_object_get(json_object_get(spec, "template"), "spec");
    const json_t *c = json_array_get(json_object_get(pod, "containers"), 0);
    assert_true(json_is_object(json_object_get(c, "resources")));
    assert_int_equal(json_object_size(json_object_get(c, "resources")), 0);
    const json_t *init = json_array_get(json_object_get(pod, "initContainers"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(init, "resources"), "limits"),
                                                          "cpu")),
                        "1");
    /* Other kinds: nothing added. */
    const json_t *cm = find_object(phases, "ConfigMap");
    assert_null(json_object_get(cm, "spec"));
    assert_null(json_object_get(cm, "resources"));
    /* The stored bytes: encoding/json's, keys sorted, the empty objects in them. */
    size_t n;
    char *bytes = revision_object_bytes(d, &n);
    assert_non_null(strstr(bytes, "\"strategy\":{}"));
    assert_non_null(strstr(bytes, "\"image\":\"example.com/m:v1\",\"name\":\"manager\",\"resources\":{}"));
    free(bytes);
    /* A strategy given is kept. */
    json_t *dep = json_array_get(objs, 0);
    json_object_set_new(json_object_get(dep, "spec"), "strategy", json_pack("{s:s}", "type", "Recreate"));
    revision_built b2;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b2, &err), 0);
    json_t *phases2 = phases_inline(&b2);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(find_object(phases2, "Deployment"), "spec"), "strategy"),
                            "type")),
                        "Recreate");
    json_decref(phases2);
    revision_built_free(&b2);
    json_decref(phases);
    revision_built_free(&b);
    json_decref(objs);
}

/* gzip at another level than ours: other bytes, the same object. */
static char *gzip_b64(const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    z_stream zs = {0};
    assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    unsigned char out[65536];
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)strlen(text);
    zs.next_out = out;
    zs.avail_out = sizeof out;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t len = zs.total_out;
    deflateEnd(&zs);
    free(text);
    olm_error err;
    return olm_base64_encode(out, len, NULL, &err);
}

/* "Upstream's" revision 1 of the same objects, written in other bytes: its Deployment gzip'd,
 * keys in another order, replicas as 1.0, an empty securityContext and a null field more, the
 * ConfigMap without the resources/strategy ours adds to nothing.  Our byte check says changed;
 * the comparison by meaning says the same. */
static void test_other_bytes_same_objects(void **state)
{
    (void)state;
    json_t *objs = bundle_objects();
    revision_input in = input(1);
    revision_built ours;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &ours, &err), 0);

    /* Theirs: our revision, its Secret rewritten. */
    json_t *theirs = json_deep_copy(ours.cos);
    json_t *secrets = json_deep_copy(ours.secrets);
    json_t *want = phases_inline(&ours);
    json_t *dep = json_deep_copy(find_object(want, "Deployment"));
    json_object_set_new(json_object_get(dep, "spec"), "replicas", json_real(1.0));
    json_t *pod = json_object_get(json_object_get(json_object_get(dep, "spec"), "template"), "spec");
    json_object_set_new(pod, "securityContext", json_object());
    json_object_set_new(pod, "hostname", json_null());
    json_object_set_new(pod, "volumes", json_array());
    json_object_del(json_object_get(dep, "spec"), "strategy"); /* an older writer of ours: no empty strategy */
    char *z = gzip_b64(dep);
    /* The Deployment's ref: its key in the one Secret. */
    size_t i, j;
    json_t *ph, *slot;
    json_array_foreach(json_object_get(json_object_get(theirs, "spec"), "phases"), i, ph) {
        if (strcmp(json_string_value(json_object_get(ph, "name")), "deploy") != 0)
            continue;
        json_array_foreach(json_object_get(ph, "objects"), j, slot) {
            json_t *ref = json_object_get(slot, "ref");
            json_object_set_new(ref, "key", json_string("theirs"));
            json_object_set_new(json_object_get(json_array_get(secrets, 0), "data"), "theirs", json_string(z));
        }
    }
    free(z);
    json_t *have = revision_phases_inline(json_object_get(json_object_get(theirs, "spec"), "phases"), secrets, &err);
    assert_non_null(have);
    assert_false(revision_unchanged(theirs, ours.cos)); /* the bytes differ */
    assert_int_equal(revision_equivalent(theirs, have, ours.cos, want), 1);

    /* A real change is one: another image. */
    json_t *changed = json_deep_copy(want);
    json_t *cdep = (json_t *)find_object(changed, "Deployment");
    json_t *c0 = json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(cdep, "spec"),
                                                                                "template"),
                                                                "spec"),
                                                "containers"),
                                0);
    json_object_set_new(c0, "image", json_string("example.com/m:v2"));
    assert_int_equal(revision_equivalent(theirs, have, ours.cos, changed), 0);
    /* ... and so is a value that is empty only on one side of an array, a string set to "". */
    json_object_set_new(c0, "image", json_string("example.com/m:v1"));
    assert_int_equal(revision_equivalent(theirs, have, ours.cos, changed), 1);
    json_object_set_new(c0, "workingDir", json_string(""));
    assert_int_equal(revision_equivalent(theirs, have, ours.cos, changed), 0);
    json_decref(changed);

    /* collisionProtection and the archived state count, as for upstream. */
    json_object_set_new(json_object_get(theirs, "spec"), "collisionProtection", json_string("None"));
    assert_int_equal(revision_equivalent(theirs, have, ours.cos, want), 0);
    json_object_set_new(json_object_get(theirs, "spec"), "collisionProtection", json_string("Prevent"));
    json_object_set_new(json_object_get(theirs, "spec"), "lifecycleState", json_string("Archived"));
    assert_int_equal(revision_equivalent(theirs, have, ours.cos, want), 0);
    json_object_set_new(json_object_get(theirs, "spec"), "lifecycleState", json_string("Active"));

    /* Objects in another phase, or another order: not the same. */
    json_t *moved = json_deep_copy(have);
    json_t *first = json_array_get(moved, 0);
    json_object_set_new(first, "name", json_string("policies"));
    assert_int_equal(revision_phases_equivalent(moved, want), 0);
    json_decref(moved);

    json_decref(dep);
    json_decref(have);
    json_decref(want);
    json_decref(secrets);
    json_decref(theirs);
    revision_built_free(&ours);
    json_decref(objs);
}

/* A ref that cannot be read is an error that says which. */
static void test_unreadable_ref(void **state)
{
    (void)state;
    json_t *objs = bundle_objects();
    revision_input in = input(1);
    revision_built b;
    olm_error err;
    assert_int_equal(revision_build(&in, &BUNDLE, objs, &b, &err), 0);
    const json_t *phases = json_object_get(json_object_get(b.cos, "spec"), "phases");
    json_t *none = json_array();
    assert_null(revision_phases_inline(phases, none, &err));
    assert_non_null(strstr(err.msg, "Secret olmv1-system/ext-1-"));
    assert_non_null(strstr(err.msg, "not found"));
    json_t *s = json_deep_copy(json_array_get(b.secrets, 0));
    json_object_set_new(s, "data", json_object());
    json_array_append_new(none, s);
    assert_null(revision_phases_inline(phases, none, &err));
    assert_non_null(strstr(err.msg, "not found in Secret olmv1-system/ext-1-"));
    json_decref(none);
    revision_built_free(&b);
    json_decref(objs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deployment_as_upstream_types_it),
        cmocka_unit_test(test_other_bytes_same_objects),
        cmocka_unit_test(test_unreadable_ref),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

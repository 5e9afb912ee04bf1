/* clusterextension_revision_retire: BoxcutterRuntime switched OFF over an extension installed
 * with it on.  Through the real reconciler against the fake apiserver (ce_fixture.h): the
 * installed revision becomes the install record, the objects lose their ClusterObjectSet
 * ownerReferences and stay the same objects (uid, never re-created), the revisions (teardown
 * finalizer and all) and their Secrets go, the uninstall still removes the objects, and the
 * gate switched on again migrates the record into revision 1 as before.
 *
 * Mutation checks (production line broken, test seen failing, line restored):
 *   reconcile.c  retire not called in run_pipeline -> test_gate_off_takes_the_install_over
 *   reconcile.c  retire not called in handle_delete -> test_uninstall_right_after_switching_off
 *   retire.c  drop_revision_owners skipped -> test_gate_off_takes_the_install_over
 *   retire.c  teardown finalizer not removed -> test_gate_off_takes_the_install_over
 *   retire.c  object Secrets not deleted -> test_gate_off_takes_the_install_over
 *   retire.c  retire_done not called (revisions listed on every reconcile) -> test_gate_off_takes_the_install_over
 *   retire.c  the rolling revision's objects left out of the record -> test_gate_off_mid_upgrade_records_both
 *   reconcile.c  activeRevisions kept with the gate off -> test_gate_off_takes_the_install_over */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ce_fixture.h"
#include "install_record.h"

#define COS_PREFIX "/apis/olm.operatorframework.io/v1/clusterobjectsets/"
#define COS1 COS_PREFIX CE_NAME "-1"
#define COS2 COS_PREFIX CE_NAME "-2"
#define DEPLOYMENT_PATH "/apis/apps/v1/namespaces/" CE_NS "/deployments/pkg-operator"
#define SECRETS_PATH "/api/v1/namespaces/" CE_SYS "/secrets/"

static int setup_gate(void **state)
{
    int rc = ce_fixture_setup(state);
    ((ce_fixture *)*state)->boxcutter = true;
    return rc;
}

static const char *str(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_string_value(v) ? json_string_value(v) : "";
}

/* The revision rolled out as its controller would leave it: Succeeded, the teardown finalizer
 * on it, and the Deployment applied with its controller ownerReference (beside someone
 * else's reference, which must stay). */
static void rolled_out(ce_fixture *f, const char *path, const char *cos_name)
{
    json_t *cos = fake_apiserver_object(f->api, path);
    assert_non_null(cos);
    json_object_set_new(cos, "status",
                        json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "conditions", "type", "Succeeded", "status", "True",
                                  "reason", "Succeeded", "lastTransitionTime", "2026-01-01T00:00:00Z"));
    json_object_set_new(json_object_get(cos, "metadata"), "finalizers", json_pack("[s]", "olm.operatorframework.io/teardown"));
    char dep[2048];
    snprintf(dep, sizeof dep,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"pkg-operator\","
             "\"namespace\":\"" CE_NS "\",\"uid\":\"dep-uid\",\"labels\":{\"olm.operatorframework.io/owner-kind\":"
             "\"ClusterExtension\",\"olm.operatorframework.io/owner-name\":\"" CE_NAME "\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"olm.operatorframework.io/v1\",\"kind\":\"ClusterObjectSet\","
             "\"name\":\"%s\",\"uid\":\"cos-uid\",\"controller\":true,\"blockOwnerDeletion\":true},"
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"keep-me\",\"uid\":\"cm-uid\"}]},"
             "\"spec\":{\"replicas\":1}}",
             cos_name);
    fake_apiserver_put_json(f->api, DEPLOYMENT_PATH, dep);
}

/* The names of the Secrets `cos` references (malloc'd, NULL-terminated). */
static char **ref_secrets(ce_fixture *f, const char *path)
{
    json_t *cos = fake_apiserver_object(f->api, path);
    char **names = calloc(64, sizeof *names);
    size_t n = 0, i, j;
    json_t *ph, *o;
    json_array_foreach(json_object_get(json_object_get(cos, "spec"), "phases"), i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, o) {
            const char *name = str(o, "ref", "name", NULL);
            if (*name && n < 63)
                names[n++] = strdup(name);
        }
    }
    assert_true(n > 0);
    return names;
}

static void free_names(char **names)
{
    for (size_t i = 0; names[i]; i++)
        free(names[i]);
    free(names);
}

static void switch_gate(ce_fixture *f, bool on)
{
    clusterextension_reconciler_free(f->r);
    f->r = NULL;
    f->boxcutter = on;
    fake_apiserver_log_clear(f->api);
}

static void read_record(ce_fixture *f, install_record *rec)
{
    json_t *s = fake_apiserver_object(f->api, CE_RECORD_PATH);
    assert_non_null(s);
    olm_error err;
    assert_int_equal(install_record_from_secret(s, rec, &err), 0);
}

static bool has_object(const install_record *rec, const char *kind, const char *name)
{
    for (size_t i = 0; i < rec->nobjects; i++)
        if (strcmp(rec->objects[i].kind, kind) == 0 && strcmp(rec->objects[i].name, name) == 0)
            return true;
    return false;
}

/* Installed with the gate on (revision 1 rolled out); then the gate goes off (a new process). */
static char **installed_with_gate_on(ce_fixture *f)
{
    ce_fixture_catalog(f, CE_CATALOG_V1);
    ce_fixture_pullable(f, CE_V1);
    ce_fixture_extension(f, NULL, NULL);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    rolled_out(f, COS1, CE_NAME "-1");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    assert_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
    return ref_secrets(f, COS1);
}

static void test_gate_off_takes_the_install_over(void **state)
{
    ce_fixture *f = *state;
    char **secrets = installed_with_gate_on(f);
    switch_gate(f, false);
    /* The fake's server-side apply replaces the whole object: the drift repair that follows is
     * held off once, to see the Deployment as the takeover left it. */
    fake_apiserver_fail(f->api, "PATCH", "/deployments/pkg-operator?", NULL, 500, NULL, -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    fake_apiserver_fail_clear(f->api);
    /* The same Deployment, without the revision's ownerReference (someone else's stays). */
    json_t *dep = fake_apiserver_object(f->api, DEPLOYMENT_PATH);
    assert_non_null(dep);
    assert_string_equal(str(dep, "metadata", "uid", NULL), "dep-uid");
    const json_t *refs = json_object_get(json_object_get(dep, "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(str(json_array_get(refs, 0), "kind", NULL, NULL), "ConfigMap");
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    /* Installed, the same bundle, from an install record now. */
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    json_t *status = json_object_get(fake_apiserver_object(f->api, CE_PATH), "status");
    assert_string_equal(str(status, "install", "bundle", "name"), CE_V1);
    assert_null(json_object_get(status, "activeRevisions"));
    install_record rec;
    read_record(f, &rec);
    assert_string_equal(rec.bundle_name, CE_V1);
    assert_string_equal(rec.bundle_image, f->image_v1);
    assert_false(rec.pending);
    assert_true(has_object(&rec, "Deployment", "pkg-operator"));
    install_record_free(&rec);
    /* The same Deployment throughout: never deleted or created. */
    assert_string_equal(str(fake_apiserver_object(f->api, DEPLOYMENT_PATH), "metadata", "uid", NULL), "dep-uid");
    assert_int_equal(fake_apiserver_count(f->api, "DELETE", "/deployments/", NULL), 0);
    assert_int_equal(fake_apiserver_count(f->api, "POST", "/deployments", NULL), 0);
    /* The revision is gone (its teardown finalizer taken off), and so are its Secrets. */
    assert_null(fake_apiserver_object(f->api, COS1));
    for (size_t i = 0; secrets[i]; i++) {
        char path[512];
        snprintf(path, sizeof path, SECRETS_PATH "%s", secrets[i]);
        assert_null(fake_apiserver_object(f->api, path));
    }
    free_names(secrets);
    /* Done once: the next reconcile lists no revisions. */
    fake_apiserver_log_clear(f->api);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/clusterobjectsets", NULL), 0);
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    /* And back on: the record becomes revision 1 again, the same Deployment kept. */
    switch_gate(f, true);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    json_t *cos = fake_apiserver_object(f->api, COS1);
    assert_non_null(cos);
    assert_string_equal(str(cos, "metadata", "labels", "olm.operatorframework.io/migrated-from-helm"), "true");
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    assert_string_equal(str(fake_apiserver_object(f->api, DEPLOYMENT_PATH), "metadata", "uid", NULL), "dep-uid");
}

/* The revisions deleted, then the process stopped before their Secrets were: the next
 * process finds the Secrets (no revision is left to point at them) and deletes them. */
static void test_secrets_left_by_a_stop_are_deleted(void **state)
{
    ce_fixture *f = *state;
    char **secrets = installed_with_gate_on(f);
    switch_gate(f, false);
    fake_apiserver_fail(f->api, "DELETE", SECRETS_PATH, NULL, 500, "stopped", -1);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_ERROR);
    fake_apiserver_fail_clear(f->api);
    assert_null(fake_apiserver_object(f->api, COS1));
    char path[512];
    snprintf(path, sizeof path, SECRETS_PATH "%s", secrets[0]);
    assert_non_null(fake_apiserver_object(f->api, path)); /* left behind */
    switch_gate(f, false); /* the next process */
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    for (size_t i = 0; secrets[i]; i++) {
        snprintf(path, sizeof path, SECRETS_PATH "%s", secrets[i]);
        assert_null(fake_apiserver_object(f->api, path));
    }
    assert_non_null(fake_apiserver_object(f->api, CE_RECORD_PATH)); /* the record stays */
    assert_string_equal(ce_fixture_condition_field(f, "Installed", "status"), "True");
    free_names(secrets);
}

/* Deleted before any reconcile of the gate-off process: the uninstall finds the objects. */
static void test_uninstall_right_after_switching_off(void **state)
{
    ce_fixture *f = *state;
    free_names(installed_with_gate_on(f));
    switch_gate(f, false);
    json_t *ce = fake_apiserver_object(f->api, CE_PATH);
    json_object_set_new(json_object_get(ce, "metadata"), "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_null(fake_apiserver_object(f->api, DEPLOYMENT_PATH));
    assert_null(fake_apiserver_object(f->api, COS1));
    assert_null(fake_apiserver_object(f->api, CE_RECORD_PATH));
    assert_null(fake_apiserver_object(f->api, CE_PATH));
}

/* Switched off mid-upgrade (revision 2 still rolling out): the installed one is revision 1,
 * and the record lists revision 2's objects too (the next apply or the uninstall prunes them). */
static void test_gate_off_mid_upgrade_records_both(void **state)
{
    ce_fixture *f = *state;
    free_names(installed_with_gate_on(f));
    ce_fixture_catalog(f, CE_CATALOG_V1 | CE_CATALOG_V11);
    ce_fixture_pullable(f, CE_V11);
    assert_int_equal(ce_fixture_reconcile(f).kind, KUBE_WQ_OK);
    assert_non_null(fake_apiserver_object(f->api, COS2));
    /* Revision 2 renders one more object: a ConfigMap only it has. */
    json_t *cos2 = fake_apiserver_object(f->api, COS2);
    json_array_append_new(json_object_get(json_array_get(json_object_get(json_object_get(cos2, "spec"), "phases"), 0), "objects"),
                          json_pack("{s:{s:s, s:s, s:{s:s, s:s}}}", "object", "apiVersion", "v1", "kind", "ConfigMap",
                                    "metadata", "name", "only-in-2", "namespace", CE_NS));
    ce_fixture_unpullable(f); /* the gate-off reconcile keeps what is installed */
    switch_gate(f, false);
    ce_fixture_reconcile(f);
    install_record rec;
    read_record(f, &rec);
    assert_string_equal(rec.bundle_name, CE_V1);
    assert_false(rec.pending);
    assert_true(has_object(&rec, "Deployment", "pkg-operator"));
    assert_true(has_object(&rec, "ConfigMap", "only-in-2"));
    install_record_free(&rec);
    assert_null(fake_apiserver_object(f->api, COS1));
    assert_null(fake_apiserver_object(f->api, COS2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_secrets_left_by_a_stop_are_deleted, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_gate_off_takes_the_install_over, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_uninstall_right_after_switching_off, setup_gate, ce_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_gate_off_mid_upgrade_records_both, setup_gate, ce_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

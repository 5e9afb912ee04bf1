/* The ClusterObjectSet reconciler against the fake apiserver: phases gated by progression
 * probes, upstream's conditions and messages, Secret references (immutability, digests),
 * collision protection, archive teardown and the progress deadline; and what spares apiserver
 * requests: one GET per referenced Secret per pass, the shared token source, the echoes of our
 * own writes, the rare resync of a watched revision.
 *
 * Mutation checks (line broken, test seen failing, line restored):
 *   objectset_reconcile.c  no Secret memo (NULL)              -> test_secret_read_once_per_pass
 *   objectset_reconcile.c  token source ignored               -> test_token_source
 *   objectset_reconcile.c  tokens.rejected not called         -> test_token_source
 *   objectset_reconcile.c  status write not noted / not consumed -> test_own_status_write_is_an_echo
 *   objectset_object.c     apply not noted to the watches     -> test_watch_skips_own_write_echo
 *   objectset_watch.c      echo not skipped / DELETED not forgotten -> test_watch_skips_own_write_echo
 *   objectset_rollout.c    watched resync as the unwatched    -> test_watch_skips_own_write_echo
 *   objectset_watch.c      unchanged never true / latest not tracked / DELETED not untracked /
 *                          forget_set a no-op                 -> test_unchanged_objects_not_read
 *   objectset_object.c     a failing probe's verdict kept     -> test_unchanged_objects_not_read */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_apiserver.h"
#include "kube_informer.h"
#include "kube_uvcurl.h"
#include "kube_object.h"
#include "objectset.h"
#include "objectset_internal.h"
#include "name_log.h"
#include "objectset_watch.h"
#include "olm_base64.h"
#include "probe.h"

#define COS "/apis/olm.operatorframework.io/v1/clusterobjectsets/"
#define PVC "/api/v1/namespaces/ns/persistentvolumeclaims/test-pvc"
#define CM "/api/v1/namespaces/ns/configmaps/test-configmap"

typedef struct fx {
    fake_apiserver *api;
    kube_client *admin;
    objectset_reconciler *rec;
} fx;

static time_t fake_now_value;
static time_t fake_now(void)
{
    return fake_now_value;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->api = fake_apiserver_start();
    kube_config kc = {0};
    kc.server = strdup(fake_apiserver_url(f->api));
    kc.token = strdup("admin");
    olm_error err;
    f->admin = kube_client_new(&kc, NULL, &err);
    assert_non_null(f->admin);
    fake_now_value = 1700000000; /* 2023-11-14T22:13:20Z */
    objectset_reconciler_config rc = {.admin = f->admin, .now = fake_now};
    f->rec = objectset_reconciler_new(&rc, &err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    objectset_reconciler_free(f->rec);
    kube_client_free(f->admin);
    fake_apiserver_stop(f->api);
    free(f);
    return 0;
}

/* A COS: phase "pvc" (a PVC) then phase "configmap", PVCs probed for status.phase Bound. */
#define PVC_COS \
    "{\"apiVersion\":\"olm.operatorframework.io/v1\",\"kind\":\"ClusterObjectSet\"," \
    "\"metadata\":{\"name\":\"%s\",\"generation\":1,\"creationTimestamp\":\"2023-11-14T22:00:00Z\"%s}," \
    "\"spec\":{\"lifecycleState\":\"Active\",\"revision\":1,\"collisionProtection\":\"%s\"%s," \
    "\"progressionProbes\":[{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"\",\"kind\":" \
    "\"PersistentVolumeClaim\"}},\"assertions\":[{\"type\":\"FieldValue\",\"fieldValue\":{\"fieldPath\":" \
    "\"status.phase\",\"value\":\"Bound\"}}]}]," \
    "\"phases\":[{\"name\":\"pvc\",\"objects\":[{\"object\":{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\"," \
    "\"metadata\":{\"name\":\"test-pvc\",\"namespace\":\"ns\"},\"spec\":{\"volumeName\":\"test-pv\"}}}]}," \
    "{\"name\":\"configmap\",\"objects\":[%s]}]}}"

static const char *CM_INLINE = "{\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                               "\"test-configmap\",\"namespace\":\"ns\"},\"data\":{\"version\":\"v1.2.0\"}}}";

static void put_cos(fx *f, const char *name, const char *md_extra, const char *cp, const char *spec_extra,
                    const char *cm)
{
    char buf[8192], path[256];
    snprintf(buf, sizeof buf, PVC_COS, name, md_extra, cp, spec_extra, cm);
    snprintf(path, sizeof path, COS "%s", name);
    fake_apiserver_put_json(f->api, path, buf);
}

static kube_wq_result run(fx *f, const char *name)
{
    return objectset_reconcile(name, f->rec);
}

static const json_t *cond(fx *f, const char *name, const char *type)
{
    char path[256];
    snprintf(path, sizeof path, COS "%s", name);
    json_t *o = fake_apiserver_object(f->api, path);
    return o ? kube_object_condition(o, type) : NULL;
}

static void assert_cond(fx *f, const char *name, const char *type, const char *status, const char *reason,
                        const char *msg)
{
    const json_t *c = cond(f, name, type);
    assert_non_null(c);
    assert_string_equal(kube_object_string(c, "status"), status);
    assert_string_equal(kube_object_string(c, "reason"), reason);
    if (msg)
        assert_string_equal(kube_object_string(c, "message"), msg);
}

static void bind_pvc(fx *f)
{
    json_t *pvc = fake_apiserver_object(f->api, PVC);
    assert_non_null(pvc);
    json_object_set_new(pvc, "status", json_pack("{s:s}", "phase", "Bound"));
}

static void test_probe_gates_phases(void **state)
{
    fx *f = *state;
    put_cos(f, "a", "", "Prevent", "", CM_INLINE);
    fake_apiserver_put_json(f->api, "/api/v1/namespaces/ns", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"}");
    kube_wq_result r = run(f, "a");
    assert_int_equal(r.kind, KUBE_WQ_REQUEUE_AFTER);
    /* The PVC is applied with the COS's ownership marks; the next phase is not. */
    json_t *pvc = fake_apiserver_object(f->api, PVC);
    assert_non_null(pvc);
    assert_string_equal(kube_object_string(pvc, "metadata.annotations.olm\\.operatorframework\\.io/revision") ?: "1", "1");
    const json_t *refs = kube_object_path(pvc, "metadata") ? json_object_get(kube_object_path(pvc, "metadata"),
                                                                             "ownerReferences") : NULL;
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(kube_object_string(json_array_get(refs, 0), "kind"), "ClusterObjectSet");
    assert_true(json_is_true(json_object_get(json_array_get(refs, 0), "controller")));
    assert_string_equal(json_string_value(json_object_get(kube_object_path(pvc, "metadata.labels"),
                                                          "app.kubernetes.io/managed-by")),
                        "olm.operatorframework.io");
    assert_null(fake_apiserver_object(f->api, CM));
    assert_cond(f, "a", "Available", "False", "ProbeFailure",
                "Object PersistentVolumeClaim.v1 ns/test-pvc: missing key: \"status.phase\"");
    assert_cond(f, "a", "Progressing", "True", "RollingOut", "Revision  is rolling out.");
    json_t *pvcs = fake_apiserver_object(f->api, PVC);
    json_object_set_new(pvcs, "status", json_pack("{s:s}", "phase", "Pending"));
    run(f, "a");
    assert_cond(f, "a", "Available", "False", "ProbeFailure",
                "Object PersistentVolumeClaim.v1 ns/test-pvc: value at key \"status.phase\" != \"Bound\"; expected: "
                "\"Bound\" got: \"Pending\"");
    assert_null(fake_apiserver_object(f->api, CM));
    /* Bound: the next phase rolls out and the revision succeeds. */
    bind_pvc(f);
    r = run(f, "a");
    assert_non_null(fake_apiserver_object(f->api, CM));
    assert_cond(f, "a", "Progressing", "True", "Succeeded", "Revision  has rolled out.");
    assert_cond(f, "a", "Available", "True", "ProbesSucceeded", "Objects are available and pass all probes.");
    assert_cond(f, "a", "Succeeded", "True", "Succeeded", "Revision succeeded rolling out.");
    json_t *cos = fake_apiserver_object(f->api, COS "a");
    assert_true(kube_object_has_finalizer(cos, OBJECTSET_FINALIZER));
    const json_t *obs = json_object_get(json_object_get(cos, "status"), "observedPhases");
    assert_int_equal(json_array_size(obs), 2);
    assert_string_equal(kube_object_string(json_array_get(obs, 1), "name"), "configmap");
    assert_memory_equal(kube_object_string(json_array_get(obs, 1), "digest"), "sha256:", 7);
}

/* A Secret holding the ConfigMap under key "cm". */
static void put_secret(fx *f, bool immutable, const char *version)
{
    char obj[512], b64buf[1024], buf[2048];
    snprintf(obj, sizeof obj,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"test-configmap\",\"namespace\":"
             "\"ns\"},\"data\":{\"version\":\"%s\"}}",
             version);
    olm_error err;
    size_t n = 0;
    char *b64 = olm_base64_encode(obj, strlen(obj), &n, &err);
    snprintf(b64buf, sizeof b64buf, "%s", b64);
    free(b64);
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"objs\",\"namespace\":\"ns\"},"
             "\"type\":\"olm.operatorframework.io/object-data\",\"immutable\":%s,\"data\":{\"cm\":\"%s\"}}",
             immutable ? "true" : "false", b64buf);
    fake_apiserver_put_json(f->api, "/api/v1/namespaces/ns/secrets/objs", buf);
}

static const char *CM_REF = "{\"ref\":{\"name\":\"objs\",\"namespace\":\"ns\",\"key\":\"cm\"}}";

static void test_secret_refs(void **state)
{
    fx *f = *state;
    put_secret(f, false, "v1");
    put_cos(f, "s", "", "Prevent", "", CM_REF);
    run(f, "s");
    assert_cond(f, "s", "Progressing", "False", "Blocked",
                "the following secrets are not immutable (referenced secrets must have immutable set to true): "
                "ns/objs");
    assert_null(fake_apiserver_object(f->api, PVC)); /* blocked before anything is applied */
    put_secret(f, true, "v1");
    run(f, "s");
    bind_pvc(f);
    run(f, "s");
    json_t *cm = fake_apiserver_object(f->api, CM);
    assert_non_null(cm);
    assert_string_equal(kube_object_string(cm, "data.version"), "v1");
    assert_cond(f, "s", "Succeeded", "True", "Succeeded", NULL);
    /* The Secret recreated with other content: the phase's digest changed. */
    put_secret(f, true, "v2");
    run(f, "s");
    const json_t *c = cond(f, "s", "Progressing");
    assert_string_equal(kube_object_string(c, "reason"), "Blocked");
    assert_non_null(strstr(kube_object_string(c, "message"),
                           "resolved content of 1 phase(s) has changed: phase \"configmap\" (expected digest sha256:"));
    assert_string_equal(kube_object_string(fake_apiserver_object(f->api, CM), "data.version"), "v1");
    /* Back to the content it had: unblocked. */
    put_secret(f, true, "v1");
    run(f, "s");
    assert_cond(f, "s", "Progressing", "True", "Succeeded", NULL);
}

static void test_collision_prevent(void **state)
{
    fx *f = *state;
    fake_apiserver_put_json(f->api, CM,
                            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"test-configmap\","
                            "\"namespace\":\"ns\"},\"data\":{\"mine\":\"yes\"}}");
    put_cos(f, "c", "", "Prevent", "", CM_INLINE);
    run(f, "c");
    bind_pvc(f);
    kube_wq_result r = run(f, "c");
    assert_int_equal(r.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_int_equal(r.requeue_after_ms, 10000);
    const json_t *c = cond(f, "c", "Progressing");
    assert_string_equal(kube_object_string(c, "reason"), "Retrying");
    assert_memory_equal(kube_object_string(c, "message"), "revision object collisions in phase 1\nObject ConfigMap.v1 ns/test-configmap", 70);
    /* The existing object is untouched. */
    json_t *cm = fake_apiserver_object(f->api, CM);
    assert_string_equal(kube_object_string(cm, "data.mine"), "yes");
    assert_null(json_object_get(json_object_get(cm, "metadata"), "ownerReferences"));
    /* IfNoController adopts it. */
    fake_apiserver_remove(f->api, COS "c");
    fake_apiserver_remove(f->api, PVC); /* controlled by the removed COS: would collide too */
    put_cos(f, "c", "", "IfNoController", "", CM_INLINE);
    run(f, "c");
    bind_pvc(f);
    run(f, "c");
    cm = fake_apiserver_object(f->api, CM);
    assert_int_equal(json_array_size(json_object_get(json_object_get(cm, "metadata"), "ownerReferences")), 1);
    assert_cond(f, "c", "Succeeded", "True", "Succeeded", NULL);
    /* A second revision of another owner claims the same objects under Prevent: collision. */
    put_cos(f, "d", "", "Prevent", "", CM_INLINE);
    run(f, "d");
    c = cond(f, "d", "Progressing");
    assert_string_equal(kube_object_string(c, "reason"), "Retrying");
    assert_non_null(strstr(kube_object_string(c, "message"), "revision object collisions in phase 0"));
}

static void test_archive_teardown(void **state)
{
    fx *f = *state;
    put_cos(f, "t", "", "Prevent", "", CM_INLINE);
    run(f, "t");
    bind_pvc(f);
    run(f, "t");
    assert_non_null(fake_apiserver_object(f->api, CM));
    json_t *cos = fake_apiserver_object(f->api, COS "t");
    json_object_set_new(json_object_get(cos, "spec"), "lifecycleState", json_string("Archived"));
    run(f, "t");
    /* Last phase first: the ConfigMap goes, the PVC waits for the next pass. */
    assert_null(fake_apiserver_object(f->api, CM));
    assert_non_null(fake_apiserver_object(f->api, PVC));
    assert_cond(f, "t", "Progressing", "True", "Retrying",
                "removing revision resources that are not owned by another revision");
    run(f, "t"); /* deleted now; the next pass sees it gone */
    assert_null(fake_apiserver_object(f->api, PVC));
    assert_cond(f, "t", "Progressing", "True", "Retrying", NULL);
    run(f, "t");
    assert_cond(f, "t", "Progressing", "False", "Archived", "revision is archived");
    assert_cond(f, "t", "Available", "Unknown", "Archived", "revision is archived");
    assert_true(kube_object_has_finalizer(fake_apiserver_object(f->api, COS "t"), OBJECTSET_FINALIZER));
    run(f, "t");
    assert_false(kube_object_has_finalizer(fake_apiserver_object(f->api, COS "t"), OBJECTSET_FINALIZER));
}

/* A rollout waiting on an object that is not watched (no watches here) is probed every 2 s at
 * first, then less often as it grows old (a quarter of its age), at most every 10 s. */
static void test_poll_slows_as_the_rollout_ages(void **state)
{
    fx *f = *state;
    put_cos(f, "w", "", "Prevent", "", CM_INLINE); /* created 22:00:00; its PVC is never Bound */
    const time_t created = 1700000000 - 13 * 60 - 20;
    const struct {
        time_t age_s;
        uint64_t want_ms;
    } at[] = {{1, 2000}, {4, 2000}, {20, 5000}, {36, 9000}, {60, 10000}, {3600, 10000}};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        fake_now_value = created + at[i].age_s;
        kube_wq_result r = run(f, "w");
        assert_int_equal(r.kind, KUBE_WQ_REQUEUE_AFTER);
        assert_cond(f, "w", "Progressing", "True", "RollingOut", NULL);
        if (r.requeue_after_ms != at[i].want_ms)
            fail_msg("rolling out for %lld s: requeued after %llu ms, want %llu", (long long)at[i].age_s,
                     (unsigned long long)r.requeue_after_ms, (unsigned long long)at[i].want_ms);
    }
    assert_int_equal(objectset_poll_wait(2000, 30000, -1), 2000); /* no creation time: as before */
    bind_pvc(f);
    run(f, "w");
    assert_cond(f, "w", "Progressing", "True", "Succeeded", NULL);
}

static void test_progress_deadline(void **state)
{
    fx *f = *state;
    put_cos(f, "p", "", "Prevent", ",\"progressDeadlineMinutes\":10", CM_INLINE);
    fake_now_value = 1700000000 - 13 * 60 + 5 * 60; /* created 22:00, now 22:05: 5 minutes left */
    kube_wq_result r = run(f, "p");
    assert_int_equal(r.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_cond(f, "p", "Progressing", "True", "RollingOut", NULL);
    fake_now_value = 1700000000; /* 22:13:20, past 22:10 */
    run(f, "p");
    assert_cond(f, "p", "Progressing", "False", "ProgressDeadlineExceeded",
                "Revision has not rolled out for 10 minute(s). Last status: Revision  is rolling out.");
    bind_pvc(f);
    run(f, "p");
    assert_cond(f, "p", "Progressing", "True", "Succeeded", NULL);
}

/* An object the apiserver refuses: Progressing Retrying with boxcutter's wording, Available
 * Unknown once it was set, and a retry with back-off. */
static void test_apply_error_retries(void **state)
{
    fx *f = *state;
    put_cos(f, "e", "", "Prevent", "", CM_INLINE);
    run(f, "e"); /* Available False: the PVC has no status yet */
    bind_pvc(f);
    fake_apiserver_fail(f->api, "PATCH", "configmaps/test-configmap", NULL, 403, "nope", -1);
    kube_wq_result r = run(f, "e");
    assert_int_equal(r.kind, KUBE_WQ_ERROR);
    const json_t *c = cond(f, "e", "Progressing");
    assert_string_equal(kube_object_string(c, "reason"), "Retrying");
    assert_memory_equal(kube_object_string(c, "message"),
                        "reconciling object: reconciling /v1, Kind=ConfigMap ns/test-configmap: creating resource: ", 87);
    assert_cond(f, "e", "Available", "Unknown", "Reconciling", kube_object_string(c, "message"));
    fake_apiserver_fail_clear(f->api);
    run(f, "e");
    assert_cond(f, "e", "Succeeded", "True", "Succeeded", NULL);
}

/* A rolled-out revision re-applies nothing that is already there, and repairs what changed. */
static void test_idle_and_repair(void **state)
{
    fx *f = *state;
    put_cos(f, "i", "", "Prevent", "", CM_INLINE);
    run(f, "i");
    bind_pvc(f);
    kube_wq_result res = run(f, "i");
    assert_cond(f, "i", "Succeeded", "True", "Succeeded", NULL);
    assert_int_equal(res.requeue_after_ms, 30000); /* no watches: re-applied and re-probed every 30 s */
    size_t patches = fake_apiserver_count(f->api, "PATCH", "configmaps/test-configmap", NULL);
    run(f, "i");
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", "configmaps/test-configmap", NULL), patches);
    /* someone changes a field the set holds, and adds one of their own: ours is put back */
    json_t *cm = fake_apiserver_object(f->api, CM);
    json_object_set_new(json_object_get(cm, "data"), "version", json_string("changed"));
    run(f, "i");
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", "configmaps/test-configmap", NULL), patches + 1);
    assert_string_equal(kube_object_string(fake_apiserver_object(f->api, CM), "data.version"), "v1.2.0");
}

/* An object in two phases: boxcutter's revision validation error, nothing applied. */
static void test_duplicate_object(void **state)
{
    fx *f = *state;
    char cm2[1024];
    snprintf(cm2, sizeof cm2, "%s,%s", CM_INLINE,
             "{\"object\":{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"test-pvc\",\"namespace\":\"ns\"}}}");
    put_cos(f, "dup", "", "Prevent", "", cm2);
    kube_wq_result r = run(f, "dup");
    assert_int_equal(r.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_int_equal(r.requeue_after_ms, 10000);
    assert_cond(f, "dup", "Progressing", "True", "Retrying",
                "revision validation error: revision \"dup\" (1): phase \"pvc\": /v1, Kind=PersistentVolumeClaim "
                "ns/test-pvc: duplicate object found in phases: configmap, pvc, phase \"configmap\": /v1, "
                "Kind=PersistentVolumeClaim ns/test-pvc: duplicate object found in phases: configmap, pvc");
    assert_null(fake_apiserver_object(f->api, PVC));
}

/* Revision handover: revision 2 of the same owner takes the objects of revision 1 (a sibling
 * with a lower revision), archives it once its own Succeeded is stored, and archiving revision 1 only drops its
 * ownerReference from the objects revision 2 now controls. */
static void test_revision_handover(void **state)
{
    fx *f = *state;
    const char *owner = ",\"labels\":{\"olm.operatorframework.io/owner-name\":\"ext\"}";
    put_cos(f, "ext-1", owner, "Prevent", "", CM_INLINE);
    run(f, "ext-1");
    bind_pvc(f);
    run(f, "ext-1");
    assert_cond(f, "ext-1", "Succeeded", "True", "Succeeded", NULL);
    char buf[8192];
    snprintf(buf, sizeof buf, PVC_COS, "ext-2", owner, "Prevent", "", CM_INLINE);
    json_t *rev2 = json_loads(buf, 0, NULL);
    json_object_set_new(json_object_get(rev2, "spec"), "revision", json_integer(2));
    fake_apiserver_put(f->api, COS "ext-2", rev2);
    run(f, "ext-2");
    const json_t *refs = json_object_get(json_object_get(fake_apiserver_object(f->api, CM), "metadata"),
                                         "ownerReferences");
    assert_int_equal(json_array_size(refs), 2);
    /* ext-1's reference stays, released; ext-2 is the controller now */
    for (size_t i = 0; i < 2; i++) {
        const json_t *r = json_array_get(refs, i);
        bool is2 = strcmp(kube_object_string(r, "name"), "ext-2") == 0;
        assert_int_equal(json_is_true(json_object_get(r, "controller")), is2);
    }
    assert_cond(f, "ext-2", "Succeeded", "True", "Succeeded", NULL);
    /* Not archived in the pass that wrote ext-2's Succeeded: until it is stored, ext-1 is the
     * extension's installed revision (no moment without one). */
    assert_string_equal(kube_object_string(fake_apiserver_object(f->api, COS "ext-1"), "spec.lifecycleState"),
                        "Active");
    run(f, "ext-2");
    assert_string_equal(kube_object_string(fake_apiserver_object(f->api, COS "ext-1"), "spec.lifecycleState"),
                        "Archived");
    run(f, "ext-1");
    run(f, "ext-1");
    assert_cond(f, "ext-1", "Progressing", "False", "Archived", NULL);
    json_t *cm = fake_apiserver_object(f->api, CM);
    assert_non_null(cm); /* kept: ext-2's */
    refs = json_object_get(json_object_get(cm, "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(kube_object_string(json_array_get(refs, 0), "name"), "ext-2");
    assert_non_null(fake_apiserver_object(f->api, PVC));
}

/* User progression probes: ConditionEqual, FieldsEqual, and a Label selector with matchExpressions. */
static void test_user_probes(void **state)
{
    (void)state;
    json_error_t je;
    json_t *probes = json_loads(
        "[{\"selector\":{\"type\":\"Label\",\"label\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\","
        "\"values\":[\"web\"]}]}},\"assertions\":[{\"type\":\"ConditionEqual\",\"conditionEqual\":{\"type\":\"Ready\","
        "\"status\":\"True\"}},{\"type\":\"FieldsEqual\",\"fieldsEqual\":{\"fieldA\":\"spec.replicas\",\"fieldB\":"
        "\"status.readyReplicas\"}}]}]",
        0, &je);
    assert_non_null(probes);
    json_t *obj = json_loads("{\"apiVersion\":\"apps/v1\",\"kind\":\"X\",\"metadata\":{\"labels\":{\"app\":\"web\"}},"
                             "\"spec\":{\"replicas\":2},\"status\":{\"readyReplicas\":1,\"conditions\":[{\"type\":"
                             "\"Ready\",\"status\":\"False\"}]}}",
                             0, &je);
    probe_result r;
    olm_error err;
    assert_int_equal(probe_user(probes, obj, &r, &err), 0);
    assert_int_equal(r.status, PROBE_FALSE);
    assert_string_equal(r.messages, ".status.condition[\"Ready\"] is False and \"spec.replicas\" != "
                                    "\"status.readyReplicas\" expected: 2 got: 1");
    probe_result_free(&r);
    /* Not selected: passes. */
    json_object_set_new(json_object_get(json_object_get(obj, "metadata"), "labels"), "app", json_string("db"));
    assert_int_equal(probe_user(probes, obj, &r, &err), 0);
    assert_int_equal(r.status, PROBE_TRUE);
    probe_result_free(&r);
    /* An outdated status is Unknown whatever the selector. */
    json_object_set_new(json_object_get(obj, "status"), "observedGeneration", json_integer(3));
    assert_int_equal(probe_user(probes, obj, &r, &err), 0);
    assert_int_equal(r.status, PROBE_UNKNOWN);
    assert_string_equal(r.messages, ".status outdated");
    probe_result_free(&r);
    json_decref(obj);
    json_decref(probes);
    /* A bad type is an error in upstream's words. */
    probes = json_loads("[{\"selector\":{\"type\":\"Nope\"},\"assertions\":[]}]", 0, &je);
    assert_int_equal(probe_user_check(probes, &err), -1);
    assert_string_equal(err.msg, "unknown progressionProbe selector type: Nope");
    json_decref(probes);
}

/* A referenced Secret is read once per pass (the immutability check and the ref share it); the
 * later passes of a set still rolling out (same generation) read it no more: it is immutable, and
 * such a set is passed at each change of its objects.  Once rolled out, each pass reads it again
 * (it may have been deleted or made anew). */
static void test_secret_read_once_per_pass(void **state)
{
    fx *f = *state;
    put_secret(f, true, "v1");
    put_cos(f, "once", "", "Prevent", "", CM_REF);
    run(f, "once"); /* rolling out: the PVC is not bound */
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/objs", NULL), 1);
    fake_apiserver_log_clear(f->api);
    run(f, "once");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/objs", NULL), 0);
    bind_pvc(f);
    fake_apiserver_log_clear(f->api);
    run(f, "once"); /* rolls out, from the Secret read before */
    assert_non_null(fake_apiserver_object(f->api, CM)); /* the ref was resolved and applied */
    assert_cond(f, "once", "Succeeded", "True", "Succeeded", NULL);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/objs", NULL), 0);
    fake_apiserver_log_clear(f->api);
    run(f, "once"); /* rolled out: read again */
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/objs", NULL), 1);
    fake_apiserver_log_clear(f->api);
    run(f, "once");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "/secrets/objs", NULL), 1);
}

/* The token source (objectset_token_source): the objects are handled with its token, no
 * TokenRequest is made, and a failed pass hands its token back as rejected. */
typedef struct fake_tokens {
    int gets, rejected;
    char last_rejected[64];
} fake_tokens;

static int fake_token_get(void *data, const char *ns, const char *sa, char **token, olm_error *err)
{
    (void)err;
    fake_tokens *ft = data;
    assert_string_equal(ns, "ns");
    assert_string_equal(sa, "installer");
    ft->gets++;
    *token = strdup("cached-token");
    return 0;
}

static void fake_token_rejected(void *data, const char *ns, const char *sa, const char *token)
{
    (void)ns;
    (void)sa;
    fake_tokens *ft = data;
    ft->rejected++;
    snprintf(ft->last_rejected, sizeof ft->last_rejected, "%s", token);
}

static void test_token_source(void **state)
{
    fx *f = *state;
    fake_tokens ft = {0};
    objectset_reconciler_free(f->rec);
    olm_error err;
    objectset_reconciler_config rc = {.admin = f->admin, .now = fake_now,
                                      .tokens = {fake_token_get, fake_token_rejected, &ft}};
    f->rec = objectset_reconciler_new(&rc, &err);
    assert_non_null(f->rec);
    put_cos(f, "sa", ",\"annotations\":{\"olm.operatorframework.io/service-account-name\":\"installer\","
            "\"olm.operatorframework.io/service-account-namespace\":\"ns\"}", "Prevent", "", CM_INLINE);
    run(f, "sa");
    bind_pvc(f);
    run(f, "sa");
    assert_cond(f, "sa", "Succeeded", "True", "Succeeded", NULL);
    assert_int_equal(ft.gets, 2);
    assert_int_equal(fake_apiserver_count(f->api, "POST", "/token", NULL), 0);
    assert_true(fake_apiserver_count(f->api, "PATCH", "configmaps/test-configmap", "cached-token") > 0);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", "configmaps/test-configmap", "admin"), 0);
    assert_int_equal(ft.rejected, 0);
    /* A pass that fails (here: the apiserver refuses the token) gives it back. */
    fake_apiserver_remove(f->api, CM);
    fake_apiserver_fail(f->api, "PATCH", "configmaps/test-configmap", "cached-token", 401, "Unauthorized", -1);
    assert_int_equal(run(f, "sa").kind, KUBE_WQ_ERROR);
    assert_int_equal(ft.rejected, 1);
    assert_string_equal(ft.last_rejected, "cached-token");
}

/* objectset_reconciler_own_write: the resourceVersion our status write made is an echo
 * (once); any other version of the set is not. */
static void test_own_status_write_is_an_echo(void **state)
{
    fx *f = *state;
    put_cos(f, "echo", "", "Prevent", "", CM_INLINE);
    run(f, "echo");
    json_t *cos = fake_apiserver_object(f->api, COS "echo");
    assert_non_null(json_object_get(cos, "status"));
    char rv[64];
    snprintf(rv, sizeof rv, "%s", kube_object_string(cos, "metadata.resourceVersion"));
    assert_false(objectset_reconciler_own_write(f->rec, "echo", "1"));
    assert_false(objectset_reconciler_own_write(f->rec, "other", rv));
    assert_true(objectset_reconciler_own_write(f->rec, "echo", rv));
    assert_false(objectset_reconciler_own_write(f->rec, "echo", rv)); /* consumed */
    /* A pass that changes nothing writes nothing, and leaves no echo to expect. */
    run(f, "echo");
    size_t puts = fake_apiserver_count(f->api, "PUT", "/clusterobjectsets/echo/status", NULL);
    run(f, "echo");
    assert_int_equal(fake_apiserver_count(f->api, "PUT", "/clusterobjectsets/echo/status", NULL), puts);
    cos = fake_apiserver_object(f->api, COS "echo");
    assert_false(objectset_reconciler_own_write(f->rec, "echo", kube_object_string(cos, "metadata.resourceVersion")));
    /* Forgotten with the set. */
    bind_pvc(f);
    run(f, "echo");
    cos = fake_apiserver_object(f->api, COS "echo");
    snprintf(rv, sizeof rv, "%s", kube_object_string(cos, "metadata.resourceVersion"));
    objectset_reconciler_forget(f->rec, "echo");
    assert_false(objectset_reconciler_own_write(f->rec, "echo", rv));
    /* And by a pass that finds it gone: a pass that wrote it may end after the informer's
     * deletion (and its forget) came. */
    put_cos(f, "gone", "", "Prevent", "", CM_INLINE);
    run(f, "gone");
    cos = fake_apiserver_object(f->api, COS "gone");
    snprintf(rv, sizeof rv, "%s", kube_object_string(cos, "metadata.resourceVersion"));
    fake_apiserver_remove(f->api, COS "gone");
    assert_true(run(f, "gone").gone);
    assert_false(objectset_reconciler_own_write(f->rec, "gone", rv));
}

/* objectset_watches: an object event queues the set that controls it, except the echo of our
 * own write (the uid and resourceVersion our apply returned), once; a DELETED event queues. */
static name_log queued;

static void watches_closed(void *data)
{
    *(bool *)data = true;
}

static void test_watch_skips_own_write_echo(void **state)
{
    fx *f = *state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    olm_error err;
    name_log_clear(&queued);
    objectset_watches *ws = objectset_watches_new(&loop, NULL, NULL, name_log_record, &queued, &err);
    assert_non_null(ws);
    json_error_t je;
    json_t *v5 = json_loads("{\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"5\","
                            "\"ownerReferences\":[{\"kind\":\"ClusterObjectSet\",\"name\":\"set-1\",\"controller\":true}]}}",
                            0, &je);
    json_t *v6 = json_deep_copy(v5);
    json_object_set_new(json_object_get(v6, "metadata"), "resourceVersion", json_string("6"));
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, v5); /* someone else's change */
    assert_int_equal(queued.n, 1);
    assert_string_equal(queued.names[0], "set-1");
    objectset_watches_note_write(ws, v6); /* our apply made version 6 */
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, v6);
    assert_int_equal(queued.n, 1); /* its echo queues nothing */
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, v6); /* consumed: a repeat queues */
    assert_int_equal(queued.n, 2);
    objectset_watches_note_write(ws, v6);
    objectset_watches_handle_event(ws, KUBE_WATCH_DELETED, v6); /* a deletion always queues */
    assert_int_equal(queued.n, 3);
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, v6); /* and forgot the write */
    assert_int_equal(queued.n, 4);
    json_decref(v5);
    json_decref(v6);
    /* A pass's apply tells the watches: the created ConfigMap's event is an echo. */
    objectset_reconciler_free(f->rec);
    objectset_reconciler_config rc = {.admin = f->admin, .now = fake_now, .watches = ws};
    f->rec = objectset_reconciler_new(&rc, &err);
    put_cos(f, "w", "", "Prevent", "", CM_INLINE);
    run(f, "w");
    bind_pvc(f);
    kube_wq_result res = run(f, "w");
    /* Rolled out, every type watched: the resync is the rare safety net (not 30 s). */
    assert_cond(f, "w", "Succeeded", "True", "Succeeded", NULL);
    assert_int_equal(res.kind, KUBE_WQ_REQUEUE_AFTER);
    assert_int_equal(res.requeue_after_ms, 300000);
    json_t *cm = fake_apiserver_object(f->api, CM);
    assert_non_null(cm);
    name_log_clear(&queued);
    objectset_watches_handle_event(ws, KUBE_WATCH_ADDED, cm);
    assert_int_equal(queued.n, 0);
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, cm);
    assert_int_equal(queued.n, 1);
    assert_string_equal(queued.names[0], "w");
    bool closed = false;
    objectset_watches_stop(ws, watches_closed, &closed);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    objectset_watches_free(ws);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Verdicts: once a pass found an object in order (ours, nothing to apply, its probe passing)
 * at the version the watch reports, the next pass does not GET it; a new version reported by
 * the watch (a change) makes the pass read it and repair it; a deleted one is re-created. */
static void test_unchanged_objects_not_read(void **state)
{
    fx *f = *state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    olm_error err;
    name_log_clear(&queued);
    objectset_watches *ws = objectset_watches_new(&loop, NULL, NULL, name_log_record, &queued, &err);
    objectset_reconciler_free(f->rec);
    objectset_reconciler_config rc = {.admin = f->admin, .now = fake_now, .watches = ws};
    f->rec = objectset_reconciler_new(&rc, &err);
    put_cos(f, "v", "", "Prevent", "", CM_INLINE);
    run(f, "v");
    bind_pvc(f);
    run(f, "v");
    assert_cond(f, "v", "Succeeded", "True", "Succeeded", NULL);
    /* Without the watch's word nothing is taken for granted. */
    fake_apiserver_log_clear(f->api);
    run(f, "v");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "configmaps/test-configmap", NULL), 1);
    /* The watch reports the versions the pass saw: the next pass reads neither object. */
    objectset_watches_handle_event(ws, KUBE_WATCH_ADDED, fake_apiserver_object(f->api, PVC));
    objectset_watches_handle_event(ws, KUBE_WATCH_ADDED, fake_apiserver_object(f->api, CM));
    fake_apiserver_log_clear(f->api);
    assert_int_equal(run(f, "v").kind, KUBE_WQ_REQUEUE_AFTER);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "configmaps/test-configmap", NULL), 0);
    assert_int_equal(fake_apiserver_count(f->api, "GET", "persistentvolumeclaims/test-pvc", NULL), 0);
    assert_int_equal(fake_apiserver_count(f->api, "PUT", "/status", NULL), 0);
    assert_cond(f, "v", "Succeeded", "True", "Succeeded", NULL);
    /* Someone changes the ConfigMap: the watch reports a new version, the pass reads and repairs it. */
    json_t *cm = fake_apiserver_object(f->api, CM);
    json_object_set_new(json_object_get(cm, "data"), "version", json_string("changed"));
    json_object_set_new(json_object_get(cm, "metadata"), "resourceVersion", json_string("9999"));
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, cm);
    run(f, "v");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "configmaps/test-configmap", NULL), 1);
    assert_int_equal(fake_apiserver_count(f->api, "PATCH", "configmaps/test-configmap", NULL), 1);
    assert_string_equal(kube_object_string(fake_apiserver_object(f->api, CM), "data.version"), "v1.2.0");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "persistentvolumeclaims/test-pvc", NULL), 0);
    /* Deleted: the watch says so, the pass creates it again. */
    objectset_watches_handle_event(ws, KUBE_WATCH_DELETED, fake_apiserver_object(f->api, CM));
    fake_apiserver_remove(f->api, CM);
    run(f, "v");
    assert_non_null(fake_apiserver_object(f->api, CM));
    /* A PVC whose probe fails is read every pass (its message needs it). */
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, PVC), "status"), "phase", json_string("Pending"));
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, PVC), "metadata"), "resourceVersion",
                        json_string("10001"));
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, fake_apiserver_object(f->api, PVC));
    run(f, "v");
    fake_apiserver_log_clear(f->api);
    run(f, "v");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "persistentvolumeclaims/test-pvc", NULL), 1);
    /* The set's verdicts go with it. */
    bind_pvc(f);
    run(f, "v");
    objectset_watches_handle_event(ws, KUBE_WATCH_MODIFIED, fake_apiserver_object(f->api, PVC));
    fake_apiserver_log_clear(f->api);
    run(f, "v");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "persistentvolumeclaims/test-pvc", NULL), 0);
    objectset_watches_forget_set(ws, kube_object_string(fake_apiserver_object(f->api, COS "v"), "metadata.uid"), "v");
    run(f, "v");
    assert_int_equal(fake_apiserver_count(f->api, "GET", "persistentvolumeclaims/test-pvc", NULL), 1);
    bool closed = false;
    objectset_watches_stop(ws, watches_closed, &closed);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    objectset_watches_free(ws);
    objectset_reconciler_free(f->rec);
    f->rec = NULL;
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* A Secret "pvcobj" holding the PVC of PVC_COS under key "pvc". */
static void put_pvc_secret(fx *f)
{
    const char *obj = "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":\"test-pvc\","
                      "\"namespace\":\"ns\"},\"spec\":{\"volumeName\":\"test-pv\"}}";
    olm_error err;
    size_t n = 0;
    char *b64 = olm_base64_encode(obj, strlen(obj), &n, &err);
    json_t *secret = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:b, s:{s:s}}", "apiVersion", "v1", "kind", "Secret",
                               "metadata", "name", "pvcobj", "namespace", "ns", "type",
                               "olm.operatorframework.io/object-data", "immutable", 1, "data", "pvc", b64);
    free(b64);
    fake_apiserver_put(f->api, "/api/v1/namespaces/ns/secrets/pvcobj", secret);
}

/* While a set rolls out, a pass starts from the set as our last GET or write of it returned when
 * the informer reports that resourceVersion: no GET.  A version written by someone else (the
 * informer reports another one) is read; so is a set with its objects inline (not kept: it may be
 * large), and one rolled out (not kept: passed rarely, and 1,000 of them need not stay in memory). */
static void test_set_not_read_again_while_unchanged(void **state)
{
    fx *f = *state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    kube_config icfg = {.server = (char *)fake_apiserver_url(f->api)};
    kube_watch_options wo = {.path = "/apis/olm.operatorframework.io/v1/clusterobjectsets"};
    kube_informer *sets = kube_informer_new(uc, &icfg, &wo, NULL, NULL, &err);
    assert_non_null(sets);
    kube_informer_mark_synced(sets);
    objectset_reconciler_free(f->rec);
    objectset_reconciler_config rc = {.admin = f->admin, .now = fake_now, .sets = sets};
    f->rec = objectset_reconciler_new(&rc, &err);
    put_pvc_secret(f);
    fake_apiserver_put_json(f->api, COS "refs",
                            "{\"apiVersion\":\"olm.operatorframework.io/v1\",\"kind\":\"ClusterObjectSet\","
                            "\"metadata\":{\"name\":\"refs\",\"generation\":1,\"creationTimestamp\":"
                            "\"2023-11-14T22:00:00Z\"},\"spec\":{\"lifecycleState\":\"Active\",\"revision\":1,"
                            "\"collisionProtection\":\"Prevent\",\"progressionProbes\":[{\"selector\":{\"type\":"
                            "\"GroupKind\",\"groupKind\":{\"group\":\"\",\"kind\":\"PersistentVolumeClaim\"}},"
                            "\"assertions\":[{\"type\":\"FieldValue\",\"fieldValue\":{\"fieldPath\":\"status.phase\","
                            "\"value\":\"Bound\"}}]}],\"phases\":[{\"name\":\"pvc\",\"objects\":["
                            "{\"ref\":{\"name\":\"pvcobj\",\"namespace\":\"ns\",\"key\":\"pvc\"}}]}]}}");
#define INFORMER_SEES(name) kube_informer_apply(sets, KUBE_WATCH_MODIFIED, fake_apiserver_object(f->api, COS name))
#define SET_GETS(name) fake_apiserver_count(f->api, "GET", "/clusterobjectsets/" name, NULL)
    INFORMER_SEES("refs");
    run(f, "refs"); /* reads it, adds the finalizer, applies the PVC, writes the status: rolling out */
    assert_cond(f, "refs", "Progressing", "True", "RollingOut", NULL);
    INFORMER_SEES("refs"); /* the echo of our status write */
    fake_apiserver_log_clear(f->api);
    run(f, "refs"); /* e.g. queued by a change of its PVC */
    assert_int_equal(SET_GETS("refs"), 0);
    /* Someone else's write: another resourceVersion, read again. */
    json_object_set_new(json_object_get(fake_apiserver_object(f->api, COS "refs"), "metadata"), "labels",
                        json_pack("{s:s}", "edited", "by-hand"));
    fake_apiserver_put(f->api, COS "refs", json_deep_copy(fake_apiserver_object(f->api, COS "refs")));
    INFORMER_SEES("refs");
    run(f, "refs");
    assert_int_equal(SET_GETS("refs"), 1);
    /* What that GET returned is kept, though its pass wrote nothing. */
    fake_apiserver_log_clear(f->api);
    run(f, "refs");
    assert_int_equal(SET_GETS("refs"), 0);
    /* The informer behind our last write (its echo not come yet): read. */
    fake_apiserver_log_clear(f->api);
    json_t *old = json_pack("{s:{s:s, s:s}}", "metadata", "name", "refs", "resourceVersion", "1");
    kube_informer_apply(sets, KUBE_WATCH_MODIFIED, old);
    json_decref(old);
    run(f, "refs");
    assert_int_equal(SET_GETS("refs"), 1);
    /* Rolled out: no longer kept. */
    bind_pvc(f);
    INFORMER_SEES("refs");
    run(f, "refs");
    assert_cond(f, "refs", "Succeeded", "True", "Succeeded", NULL);
    INFORMER_SEES("refs");
    fake_apiserver_log_clear(f->api);
    run(f, "refs");
    assert_int_equal(SET_GETS("refs"), 1);
    /* A set with inline objects is read each pass, rolling out or not. */
    put_cos(f, "inline", "", "Prevent", "", CM_INLINE);
    fake_apiserver_remove(f->api, PVC);
    INFORMER_SEES("inline");
    run(f, "inline");
    assert_cond(f, "inline", "Progressing", "True", "RollingOut", NULL);
    INFORMER_SEES("inline");
    fake_apiserver_log_clear(f->api);
    run(f, "inline");
    assert_int_equal(SET_GETS("inline"), 1);
#undef INFORMER_SEES
#undef SET_GETS
    objectset_reconciler_free(f->rec);
    f->rec = NULL;
    bool closed = false;
    kube_informer_stop(sets, watches_closed, &closed);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    bool uc_closed = false;
    kube_uvcurl_close(uc, watches_closed, &uc_closed);
    while (!uc_closed)
        uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_probe_gates_phases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_refs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collision_prevent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_archive_teardown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_slows_as_the_rollout_ages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revision_handover, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apply_error_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_and_repair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_object, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_read_once_per_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_own_status_write_is_an_echo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_skips_own_write_echo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unchanged_objects_not_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_not_read_again_while_unchanged, setup, teardown),
        cmocka_unit_test(test_user_probes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

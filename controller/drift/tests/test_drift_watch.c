/* drift: which kinds are watched and where, the owner selector,
 * the content hash, and the watcher's bookkeeping driven through a fake backend on a
 * private libuv loop: no enqueue during the initial list, enqueue on delete / real
 * modification after it, a missing expected object, re-creation on new kinds or a new
 * token, 403 and 401 handling, the refresh timer, posts from another thread, forget
 * and stop; and the probe trigger (drift.h): a status write that changes what an object's
 * probes say enqueues its extension, one that does not enqueues nothing, whether the watch
 * is its own or shared, after the sync, at the sync, and at a post.
 *
 * Mutation checks of the probe trigger (production line broken, test seen failing, restored):
 *   drift_watch.c  own event: `|| drift_watch_probe_changed(...)` dropped
 *       -> test_probe_change_after_sync_enqueues, test_probe_unknown_compares_with_the_previous_state
 *   drift_watch.c  drift_watch_probe_changed: `*exp = now` dropped (not counted as told)
 *       -> test_probe_change_after_sync_enqueues
 *   drift_watch.c  drift_watch_probe_changed: `told = *exp ? *exp : prev` -> `told = prev`
 *       -> test_shared_joining_compares_probes
 *   drift_watch.c  own sync: drift_watch_probes_differ not called -> test_probe_changed_before_the_watch_listed
 *   drift_watcher.c  apply_spec: drift_watch_recheck not called -> test_post_behind_what_the_watch_saw
 *   drift_watch.c  expected(): every key matches (`return &w->probes[0]`) -> test_probe_of_unrecorded_objects_ignored
 *   drift_shared.c  event: probe change not looked at -> test_shared_probe_change_goes_to_the_owner
 *   drift_shared.c  attach to a synced watch: probes not compared -> test_shared_joining_compares_probes
 *   drift_shared.c  check_expected: probes not compared -> test_shared_probe_change_goes_to_the_owner
 *   drift_paths.c  add_key: the digest not kept (`probes[n] = 0`) -> test_paths_carry_the_probe_digests
 *   drift_watch.c  own event / drift_watch_probes_differ: ignore_probes not looked at
 *       -> test_probes_ignored_when_asked */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drift.h"
#include "probe.h"
#include "strbuf.h"

/* ------------------------------------------------------------ the fake backend */

#define MAXW 32

typedef struct fake_watch {
    char path[256], selector[256], token[64], ca_file[256];
    drift_watch *w;
    bool running;
    void (*closed)(void *);
    void *cdata;
} fake_watch;

typedef struct world {
    uv_loop_t loop;
    kube_config base;
    fake_watch fw[MAXW];
    int nfw;
    bool defer_close;
    /* callbacks seen */
    char enq[64][64];
    uint64_t enq_delay[64];
    int nenq;
    char rejected[128];
    char logs[8][1024];
    int nlogs;
    bool stopped;
    drift_watcher *d;
} world;

static void *fake_start(void *data, const kube_config *cfg, const char *path, const char *selector, drift_watch *w,
                        olm_error *err)
{
    world *wd = data;
    if (wd->nfw >= MAXW) {
        olm_error_set(err, "too many");
        return NULL;
    }
    fake_watch *f = &wd->fw[wd->nfw++];
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->selector, sizeof f->selector, "%s", selector);
    snprintf(f->token, sizeof f->token, "%s", cfg->token);
    snprintf(f->ca_file, sizeof f->ca_file, "%s", cfg->ca_file ? cfg->ca_file : "");
    f->w = w;
    f->running = true;
    return f;
}

static void fake_stop(void *data, void *handle, void (*closed)(void *), void *cdata)
{
    world *wd = data;
    fake_watch *f = handle;
    f->running = false;
    if (wd->defer_close) {
        f->closed = closed;
        f->cdata = cdata;
    } else {
        closed(cdata);
    }
}

static void run_deferred_closes(world *wd)
{
    for (int i = 0; i < wd->nfw; i++) {
        if (wd->fw[i].closed) {
            void (*c)(void *) = wd->fw[i].closed;
            wd->fw[i].closed = NULL;
            c(wd->fw[i].cdata);
        }
    }
}

static void on_enqueue(const char *ext, uint64_t delay_ms, void *data)
{
    world *wd = data;
    snprintf(wd->enq[wd->nenq], sizeof wd->enq[0], "%s", ext);
    wd->enq_delay[wd->nenq++] = delay_ms;
}

static void on_rejected(const char *ns, const char *sa, const char *token, void *data)
{
    world *wd = data;
    snprintf(wd->rejected, sizeof wd->rejected, "%s/%s:%s", ns, sa, token);
}

static void on_log(const char *extension, const char *line, void *data)
{
    world *wd = data;
    if (wd->nlogs < 8)
        snprintf(wd->logs[wd->nlogs++], sizeof wd->logs[0], "%s: %s", extension, line);
}

static fake_watch *running(world *wd, const char *path)
{
    for (int i = wd->nfw - 1; i >= 0; i--)
        if (wd->fw[i].running && strcmp(wd->fw[i].path, path) == 0)
            return &wd->fw[i];
    return NULL;
}

static int nrunning(world *wd)
{
    int n = 0;
    for (int i = 0; i < wd->nfw; i++)
        n += wd->fw[i].running;
    return n;
}

/* setup: per-extension watches only (drift_watcher_options.per_extension_only);
 * setup_shared: the default, shared watches per resource type. */
static bool shared_mode;
static uint64_t refusal_quiet_ms; /* 0: the default */

static int setup(void **state)
{
    world *wd = calloc(1, sizeof *wd);
    assert_int_equal(uv_loop_init(&wd->loop), 0);
    wd->base.server = "https://127.0.0.1:6443";
    drift_backend be = {fake_start, fake_stop, wd};
    drift_callbacks cb = {on_enqueue, on_rejected, on_log, wd};
    drift_watcher_options o = {.coalesce_ms = 1000,
                               .min_refresh_ms = 5,
                               .per_extension_only = !shared_mode,
                               .refusal_quiet_ms = refusal_quiet_ms};
    olm_error err;
    wd->d = drift_watcher_new(&wd->loop, &wd->base, &be, &cb, &o, &err);
    assert_non_null(wd->d);
    *state = wd;
    return 0;
}

static int setup_shared(void **state)
{
    shared_mode = true;
    int rc = setup(state);
    shared_mode = false;
    return rc;
}

static void on_stopped(void *data)
{
    ((world *)data)->stopped = true;
}

static int teardown(void **state)
{
    world *wd = *state;
    if (wd->d) {
        drift_watcher_stop(wd->d, on_stopped, wd);
        run_deferred_closes(wd);
        uv_run(&wd->loop, UV_RUN_DEFAULT);
        assert_true(wd->stopped);
    }
    assert_int_equal(uv_loop_close(&wd->loop), 0);
    free(wd);
    return 0;
}

/* ------------------------------------------------------------ specs */

static int builtin(void *data, const char *av, const char *kind, kube_resource_info *out, olm_error *err)
{
    if (!kube_builtin_kind(av, kind, out))
        return olm_error_set(err, "no kind %s %s", av, kind);
    return 0;
}

static install_object_ref one_ns_refs[] = {
    {"apps/v1", "Deployment", "ops", "mgr", 0},
    {"v1", "ConfigMap", "ops", "cfg", 0},
    {"v1", "ServiceAccount", "ops", "mgr", 0},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", "", "mgr-role", 0},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "mgr-role", 0},
    {"v1", "ConfigMap", "ops", "cfg2", 0},
};

/* A spec with the probe digests `probes` (NULL: unknown) of the reconcile that posts it. */
static drift_spec make_spec_probed(const char *ext, const char *token, install_object_ref *refs, size_t n,
                                   const uint64_t *probes)
{
    install_record rec = {.objects = refs, .nobjects = n};
    drift_spec s = {.extension = strdup(ext), .ns = strdup("ops"), .sa = strdup("installer"),
                       .token = token ? strdup(token) : NULL};
    olm_error err;
    assert_int_equal(drift_spec_paths(&s, &rec, probes, NULL, builtin, NULL, &err), 0);
    return s;
}

static drift_spec make_spec(const char *ext, const char *token, install_object_ref *refs, size_t n)
{
    return make_spec_probed(ext, token, refs, n, NULL);
}

static void test_paths_one_namespace_and_cluster_scoped(void **state)
{
    drift_spec s = make_spec("ext", "t", one_ns_refs, 6);
    assert_int_equal(s.npaths, 5);
    /* Sorted by path; namespaced kinds in their one namespace. */
    assert_string_equal(s.paths[0].path, "/api/v1/namespaces/ops/configmaps");
    assert_int_equal(s.paths[0].nkeys, 2);
    assert_string_equal(s.paths[0].keys[0], "ops/cfg");
    assert_string_equal(s.paths[0].keys[1], "ops/cfg2");
    assert_string_equal(s.paths[1].path, "/api/v1/namespaces/ops/serviceaccounts");
    assert_string_equal(s.paths[2].path, "/apis/apps/v1/namespaces/ops/deployments");
    assert_string_equal(s.paths[2].keys[0], "ops/mgr");
    assert_string_equal(s.paths[3].path, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
    assert_string_equal(s.paths[4].path, "/apis/rbac.authorization.k8s.io/v1/clusterroles");
    assert_string_equal(s.paths[4].keys[0], "mgr-role");
    drift_spec_free(&s);
}

static void test_paths_many_namespaces_watch_cluster_wide(void **state)
{
    install_object_ref refs[] = {
        {"rbac.authorization.k8s.io/v1", "Role", "ops", "r", 0},
        {"rbac.authorization.k8s.io/v1", "Role", "watched", "r", 0},
        {"v1", "ConfigMap", "ops", "c", 0},
    };
    drift_spec s = make_spec("ext", "t", refs, 3);
    assert_int_equal(s.npaths, 2);
    assert_string_equal(s.paths[0].path, "/api/v1/namespaces/ops/configmaps");
    assert_string_equal(s.paths[1].path, "/apis/rbac.authorization.k8s.io/v1/roles");
    assert_int_equal(s.paths[1].nkeys, 2);
    assert_string_equal(s.paths[1].keys[1], "watched/r");
    drift_spec_free(&s);
}

static void test_paths_unknown_kind_fails(void **state)
{
    install_object_ref refs[] = {{"example.com/v1", "Widget", "ops", "w", 0}};
    install_record rec = {.objects = refs, .nobjects = 1};
    drift_spec s = {0};
    olm_error err;
    assert_int_equal(drift_spec_paths(&s, &rec, NULL, NULL, builtin, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "drift watch: resolving example.com/v1 Widget"));
    assert_int_equal(s.npaths, 0);
}

static void test_selector(void **state)
{
    char *sel = drift_selector("my-ext");
    assert_string_equal(sel, "olm.operatorframework.io/owner-kind=ClusterExtension,"
                             "olm.operatorframework.io/owner-name=my-ext");
    free(sel);
}

static json_t *cm(const char *name, const char *value, const char *rv)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:I, s:[{s:s}]}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "namespace", "ops", "resourceVersion", rv, "generation", (json_int_t)1,
                     "managedFields", "manager", "x", "data", "k", value);
}

static void test_content_hash_ignores_server_bookkeeping(void **state)
{
    json_t *a = cm("c", "v", "1"), *b = cm("c", "v", "2"), *c = cm("c", "changed", "3");
    json_object_set_new(b, "status", json_pack("{s:i}", "replicas", 3));
    json_object_set_new(json_object_get(b, "metadata"), "generation", json_integer(7));
    json_object_set_new(json_object_get(b, "metadata"), "managedFields", json_array());
    assert_true(drift_content_hash(a) == drift_content_hash(b));
    assert_true(drift_content_hash(a) != drift_content_hash(c));
    json_t *labelled = cm("c", "v", "4");
    json_object_set_new(json_object_get(labelled, "metadata"), "labels", json_pack("{s:s}", "x", "y"));
    assert_true(drift_content_hash(a) != drift_content_hash(labelled));
    /* The Deployment controller's revision annotation is bookkeeping too; other annotations are not. */
    json_t *rev = cm("c", "v", "5");
    json_object_set_new(json_object_get(rev, "metadata"), "annotations",
                        json_pack("{s:s}", "deployment.kubernetes.io/revision", "1"));
    assert_true(drift_content_hash(a) == drift_content_hash(rev));
    json_object_set_new(json_object_get(json_object_get(rev, "metadata"), "annotations"), "x", json_string("y"));
    assert_true(drift_content_hash(a) != drift_content_hash(rev));
    json_decref(rev);
    /* A LIST's items have no kind and apiVersion, a GET's and a watch event's have: the same
     * object (a mismatch here made every reconcile of a restart ask for another). */
    json_t *listed = cm("c", "v", "6");
    json_object_del(listed, "kind");
    json_object_del(listed, "apiVersion");
    assert_non_null(json_object_get(a, "kind"));
    assert_true(drift_content_hash(a) == drift_content_hash(listed));
    json_decref(listed);
    /* The input is not modified. */
    assert_non_null(json_object_get(json_object_get(b, "metadata"), "resourceVersion"));
    assert_non_null(json_object_get(b, "status"));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(labelled);
}

/* ------------------------------------------------------------ the watcher */

static void post(world *wd, drift_spec *s)
{
    olm_error err;
    assert_int_equal(drift_watcher_post(wd->d, s, &err), 0);
    assert_null(s->extension); /* taken over */
    drift_watcher_flush(wd->d);
}

static void list_and_sync(fake_watch *f, json_t **objs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        drift_watch_event(f->w, KUBE_WATCH_ADDED, objs[i]);
    drift_watch_synced(f->w);
}

static const char *CM_PATH = "/api/v1/namespaces/ops/configmaps";

static void test_watches_started_with_token_and_selector(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "token-1", one_ns_refs, 6);
    post(wd, &s);
    assert_int_equal(drift_watcher_active(wd->d), 5);
    assert_int_equal(drift_watcher_extensions(wd->d), 1);
    fake_watch *f = running(wd, "/apis/apps/v1/namespaces/ops/deployments");
    assert_non_null(f);
    assert_string_equal(f->token, "token-1");
    assert_string_equal(f->selector,
                        "olm.operatorframework.io/owner-kind=ClusterExtension,olm.operatorframework.io/owner-name=ext");
    /* The same spec again changes nothing. */
    s = make_spec("ext", "token-1", one_ns_refs, 6);
    post(wd, &s);
    assert_int_equal(wd->nfw, 5);
    assert_int_equal(nrunning(wd), 5);
}

static void test_enqueue_only_after_the_initial_list(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "t", one_ns_refs, 2); /* Deployment, ConfigMap cfg */
    post(wd, &s);
    fake_watch *f = running(wd, CM_PATH);
    json_t *c1 = cm("cfg", "v", "1");
    /* Initial list: ADDED and even MODIFIED/DELETED before the sync enqueue nothing. */
    drift_watch_event(f->w, KUBE_WATCH_ADDED, c1);
    drift_watch_event(f->w, KUBE_WATCH_MODIFIED, c1);
    assert_int_equal(wd->nenq, 0);
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 0);

    /* Status-only churn: nothing. */
    json_t *c1s = cm("cfg", "v", "2");
    json_object_set_new(c1s, "status", json_pack("{s:b}", "x", 1));
    drift_watch_event(f->w, KUBE_WATCH_MODIFIED, c1s);
    assert_int_equal(wd->nenq, 0);

    /* A real change: enqueued with the coalescing delay. */
    json_t *c2 = cm("cfg", "edited", "3");
    drift_watch_event(f->w, KUBE_WATCH_MODIFIED, c2);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "ext");
    assert_int_equal(wd->enq_delay[0], 1000);

    /* Our repair puts it back: that MODIFIED changes content again (one more, harmless,
     * reconcile); the re-apply after it is a no-op and raises no event at all. */
    drift_watch_event(f->w, KUBE_WATCH_MODIFIED, c1);
    assert_int_equal(wd->nenq, 2);
    drift_watch_event(f->w, KUBE_WATCH_MODIFIED, c1);
    assert_int_equal(wd->nenq, 2); /* same content: nothing */

    /* Deleted: enqueued; re-created by us (ADDED): nothing. */
    drift_watch_event(f->w, KUBE_WATCH_DELETED, c1);
    assert_int_equal(wd->nenq, 3);
    drift_watch_event(f->w, KUBE_WATCH_ADDED, c1);
    assert_int_equal(wd->nenq, 3);
    json_decref(c1);
    json_decref(c1s);
    json_decref(c2);
}

static void test_expected_object_missing_from_initial_list(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "t", one_ns_refs, 6);
    post(wd, &s);
    fake_watch *f = running(wd, CM_PATH);
    json_t *objs[] = {cm("cfg", "v", "1")}; /* cfg2 is missing */
    list_and_sync(f, objs, 1);
    assert_int_equal(wd->nenq, 1);
    /* A relist later does not repeat it (its differences come as events). */
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 1);
    json_decref(objs[0]);
}

static void test_new_kinds_and_new_token(void **state)
{
    world *wd = *state;
    wd->defer_close = true;
    drift_spec s = make_spec("ext", "t1", one_ns_refs, 3); /* deployments, configmaps, serviceaccounts */
    post(wd, &s);
    assert_int_equal(drift_watcher_active(wd->d), 3);
    fake_watch *dep = running(wd, "/apis/apps/v1/namespaces/ops/deployments");

    /* An upgrade drops the ServiceAccount and adds a ClusterRole: only those change. */
    install_object_ref up[] = {one_ns_refs[0], one_ns_refs[1], one_ns_refs[3]};
    s = make_spec("ext", "t1", up, 3);
    post(wd, &s);
    assert_int_equal(drift_watcher_active(wd->d), 3);
    assert_null(running(wd, "/api/v1/namespaces/ops/serviceaccounts"));
    assert_non_null(running(wd, "/apis/rbac.authorization.k8s.io/v1/clusterroles"));
    assert_ptr_equal(running(wd, "/apis/apps/v1/namespaces/ops/deployments"), dep);
    assert_int_equal(wd->nfw, 4);

    /* A new token: every watch is opened again with it. */
    s = make_spec("ext", "t2", up, 3);
    post(wd, &s);
    assert_int_equal(wd->nfw, 7);
    assert_int_equal(nrunning(wd), 3);
    assert_string_equal(running(wd, "/apis/apps/v1/namespaces/ops/deployments")->token, "t2");
    /* The old watches close later (their config stays alive until then). */
    run_deferred_closes(wd);
    assert_int_equal(drift_watcher_active(wd->d), 3);
}

static void test_forget_stops_everything(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("a", "t", one_ns_refs, 6);
    post(wd, &s);
    s = make_spec("b", "t", one_ns_refs, 1);
    post(wd, &s);
    assert_int_equal(drift_watcher_active(wd->d), 6);
    olm_error err;
    assert_int_equal(drift_watcher_forget(wd->d, "a", &err), 0);
    drift_watcher_flush(wd->d);
    assert_int_equal(drift_watcher_active(wd->d), 1);
    assert_int_equal(drift_watcher_extensions(wd->d), 1);
    assert_int_equal(nrunning(wd), 1);
    assert_int_equal(drift_watcher_forget(wd->d, "b", &err), 0);
    assert_int_equal(drift_watcher_forget(wd->d, "never-seen", &err), 0);
    drift_watcher_flush(wd->d);
    assert_int_equal(drift_watcher_active(wd->d), 0);
    assert_int_equal(drift_watcher_extensions(wd->d), 0);
    assert_int_equal(nrunning(wd), 0);
}

static void test_forbidden_logs_once_and_falls_back(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "t", one_ns_refs, 4);
    post(wd, &s);
    fake_watch *f = running(wd, "/apis/rbac.authorization.k8s.io/v1/clusterroles");
    drift_watch_error(f->w, 403, "LIST returned HTTP 403: ...");
    assert_int_equal(wd->nlogs, 1);
    assert_string_equal(wd->logs[0],
                        "ext: drift watch: ServiceAccount ops/installer may not list "
                        "/apis/rbac.authorization.k8s.io/v1/clusterroles (HTTP 403); drift of those objects is "
                        "repaired only by the periodic check (--drift-repair-interval)");
    assert_false(f->running);
    assert_int_equal(drift_watcher_active(wd->d), 3);
    assert_int_equal(wd->nenq, 0);
    /* A new token tries again; a second 403 is not logged again. */
    s = make_spec("ext", "t2", one_ns_refs, 4);
    post(wd, &s);
    f = running(wd, "/apis/rbac.authorization.k8s.io/v1/clusterroles");
    assert_non_null(f);
    drift_watch_error(f->w, 403, "again");
    assert_int_equal(wd->nlogs, 1);
    /* Other errors are the watch's own business (retried); each distinct one logged once. */
    fake_watch *g = running(wd, CM_PATH);
    drift_watch_error(g->w, 0, "connection refused");
    drift_watch_error(g->w, 0, "connection refused");
    assert_int_equal(wd->nlogs, 2);
    assert_true(g->running);
}

static void test_unauthorized_drops_the_token(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "old-token", one_ns_refs, 3);
    post(wd, &s);
    fake_watch *f = running(wd, CM_PATH);
    drift_watch_error(f->w, 401, "Unauthorized");
    assert_string_equal(wd->rejected, "ops/installer:old-token");
    assert_int_equal(wd->nenq, 1);
    assert_int_equal(nrunning(wd), 0);
    assert_int_equal(drift_watcher_active(wd->d), 0);
    /* No token in the log line. */
    assert_int_equal(wd->nlogs, 1);
    assert_null(strstr(wd->logs[0], "old-token"));
    /* A reconcile that had taken the old token before the 401 posts it again: nothing is
     * started with it, another reconcile is asked for. */
    s = make_spec("ext", "old-token", one_ns_refs, 3);
    post(wd, &s);
    assert_int_equal(nrunning(wd), 0);
    assert_int_equal(wd->nenq, 2);
    /* The reconcile posts a fresh token: the watches come back. */
    s = make_spec("ext", "new-token", one_ns_refs, 3);
    post(wd, &s);
    assert_int_equal(nrunning(wd), 3);
}

static void test_refresh_timer_asks_for_a_reconcile(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "t", one_ns_refs, 1);
    s.refresh_at = time(NULL) - 1; /* already due: after min_refresh_ms */
    post(wd, &s);
    /* The first turns may only deliver the post's uv_async; the timer follows. */
    for (int i = 0; i < 100 && wd->nenq == 0; i++)
        uv_run(&wd->loop, UV_RUN_ONCE);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "ext");
    assert_int_equal(wd->enq_delay[0], 0);
}

typedef struct poster {
    drift_watcher *d;
    int rc;
} poster;

static void *post_from_thread(void *data)
{
    poster *p = data;
    olm_error err;
    for (int i = 0; i < 50 && p->rc == 0; i++) {
        drift_spec s = make_spec("threaded", i % 2 ? "t-odd" : "t-even", one_ns_refs, 2);
        p->rc = drift_watcher_post(p->d, &s, &err);
    }
    return NULL;
}

static void test_posts_from_another_thread_reach_the_loop(void **state)
{
    world *wd = *state;
    poster p = {wd->d, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, post_from_thread, &p), 0);
    pthread_join(th, NULL);
    assert_int_equal(p.rc, 0);
    uv_run(&wd->loop, UV_RUN_NOWAIT); /* the uv_async wakes the loop */
    assert_int_equal(drift_watcher_extensions(wd->d), 1);
    assert_int_equal(drift_watcher_active(wd->d), 2);
    /* Posts not yet applied were replaced by later ones: the last token wins. */
    assert_string_equal(running(wd, CM_PATH)->token, "t-odd");
}

static void test_stop_with_pending_posts_and_closes(void **state)
{
    world *wd = *state;
    wd->defer_close = true;
    drift_spec s = make_spec("ext", "t", one_ns_refs, 3);
    post(wd, &s);
    s = make_spec("later", "t", one_ns_refs, 3);
    olm_error err;
    assert_int_equal(drift_watcher_post(wd->d, &s, &err), 0); /* never applied */
    drift_watcher_stop(wd->d, on_stopped, wd);
    uv_run(&wd->loop, UV_RUN_NOWAIT);
    assert_false(wd->stopped); /* watches still closing */
    run_deferred_closes(wd);
    uv_run(&wd->loop, UV_RUN_DEFAULT);
    assert_true(wd->stopped);
    wd->d = NULL;
}


/* ------------------------------------------------------------ shared watches */

static install_object_ref refs_a[] = {
    {"apps/v1", "Deployment", "ns-a", "mgr", 0},
    {"v1", "ConfigMap", "ns-a", "cfg", 0},
};
static install_object_ref refs_b[] = {
    {"apps/v1", "Deployment", "ns-b", "mgr", 0},
    {"v1", "ConfigMap", "ns-b", "cfg", 0},
};
static const char *CM_ALL = "/api/v1/configmaps", *DEP_ALL = "/apis/apps/v1/deployments";

/* Extension `ext` installed as ServiceAccount ns/installer. */
static drift_spec spec_in(const char *ext, const char *ns, const char *token, install_object_ref *refs, size_t n)
{
    drift_spec s = make_spec(ext, token, refs, n);
    free(s.ns);
    s.ns = strdup(ns);
    return s;
}

/* An object of `owner` as the watch reports it. */
static json_t *owned(const char *kind, const char *ns, const char *name, const char *owner, const char *value)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s}}, s:{s:s}}", "apiVersion", "v1", "kind", kind,
                     "metadata", "name", name, "namespace", ns, "resourceVersion", "1", "labels",
                     "olm.operatorframework.io/owner-kind", "ClusterExtension", "olm.operatorframework.io/owner-name",
                     owner, "data", "k", value);
}

static void sync_shared(fake_watch *f, const char *kind, const char *owners[][2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *o = owned(kind, owners[i][1], strcmp(kind, "Deployment") == 0 ? "mgr" : "cfg", owners[i][0], "v");
        drift_watch_event(f->w, KUBE_WATCH_ADDED, o);
        json_decref(o);
    }
    drift_watch_synced(f->w);
}

static bool enqueued(world *wd, const char *ext)
{
    for (int i = 0; i < wd->nenq; i++)
        if (strcmp(wd->enq[i], ext) == 0)
            return true;
    return false;
}

static void test_shared_one_watch_per_type_for_many_extensions(void **state)
{
    world *wd = *state;
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    s = spec_in("b", "ns-b", "token-b", refs_b, 2);
    post(wd, &s);
    /* Two types: two cluster-wide watches, filtered by the owner kind only, with the
     * first extension's token; nothing per extension. */
    assert_int_equal(nrunning(wd), 2);
    assert_int_equal(drift_watcher_shared(wd->d), 2);
    assert_int_equal(drift_watcher_active(wd->d), 2);
    fake_watch *cmw = running(wd, CM_ALL);
    assert_non_null(cmw);
    assert_non_null(running(wd, DEP_ALL));
    assert_string_equal(cmw->selector, "olm.operatorframework.io/owner-kind=ClusterExtension");
    assert_string_equal(cmw->token, "token-a");

    /* The initial list enqueues only an extension whose expected object is missing. */
    const char *cms[][2] = {{"a", "ns-a"}, {"b", "ns-b"}};
    sync_shared(cmw, "ConfigMap", cms, 2);
    const char *deps[][2] = {{"a", "ns-a"}};
    sync_shared(running(wd, DEP_ALL), "Deployment", deps, 1);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "b");

    /* Events go to the object's owner only. */
    json_t *b2 = owned("ConfigMap", "ns-b", "cfg", "b", "edited");
    drift_watch_event(cmw->w, KUBE_WATCH_MODIFIED, b2);
    assert_int_equal(wd->nenq, 2);
    assert_string_equal(wd->enq[1], "b");
    drift_watch_event(cmw->w, KUBE_WATCH_MODIFIED, b2); /* same content: nothing */
    assert_int_equal(wd->nenq, 2);
    json_t *a1 = owned("ConfigMap", "ns-a", "cfg", "a", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, a1);
    assert_int_equal(wd->nenq, 3);
    assert_string_equal(wd->enq[2], "a");
    /* Re-created by the repair (ADDED): nothing.  An object labelled for "a" outside a's
     * namespace, or for an extension not watched: nothing. */
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, a1);
    json_t *stray = owned("ConfigMap", "elsewhere", "cfg", "a", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, stray);
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, stray);
    json_t *other = owned("ConfigMap", "ns-z", "cfg", "zzz", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, other);
    assert_int_equal(wd->nenq, 3);
    json_decref(a1);
    json_decref(b2);
    json_decref(stray);
    json_decref(other);

    /* More extensions join the running watches: nothing new opens.  One whose object
     * was deleted between its apply and its joining is enqueued; one whose objects have
     * not come as events yet (they are on their way) is not. */
    json_t *c1 = owned("ConfigMap", "ns-c", "cfg", "c", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, c1);
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, c1);
    json_decref(c1);
    install_object_ref refs_c[] = {{"v1", "ConfigMap", "ns-c", "cfg", 0}};
    s = spec_in("c", "ns-c", "token-c", refs_c, 1);
    post(wd, &s);
    install_object_ref refs_d[] = {{"v1", "ConfigMap", "ns-d", "cfg", 0}};
    s = spec_in("d", "ns-d", "token-d", refs_d, 1);
    post(wd, &s);
    assert_int_equal(nrunning(wd), 2);
    assert_int_equal(wd->nenq, 4);
    assert_string_equal(wd->enq[3], "c");
    /* ... and is watched from then on. */
    json_t *d1 = owned("ConfigMap", "ns-d", "cfg", "d", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, d1);
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, d1);
    json_decref(d1);
    assert_int_equal(wd->nenq, 5);
    assert_string_equal(wd->enq[4], "d");
}

static void test_shared_uninstalling_the_runner_keeps_the_others_repaired(void **state)
{
    world *wd = *state;
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    s = spec_in("b", "ns-b", "token-b", refs_b, 2);
    post(wd, &s);
    const char *cms[][2] = {{"a", "ns-a"}, {"b", "ns-b"}};
    sync_shared(running(wd, CM_ALL), "ConfigMap", cms, 2);
    sync_shared(running(wd, DEP_ALL), "Deployment", cms, 2);
    assert_int_equal(wd->nenq, 0);

    /* "a" (whose token runs the watches) is uninstalled: they go on with b's token. */
    olm_error err;
    assert_int_equal(drift_watcher_forget(wd->d, "a", &err), 0);
    drift_watcher_flush(wd->d);
    assert_int_equal(nrunning(wd), 2);
    fake_watch *cmw = running(wd, CM_ALL);
    assert_string_equal(cmw->token, "token-b");
    assert_string_equal(running(wd, DEP_ALL)->token, "token-b");
    const char *only_b[][2] = {{"b", "ns-b"}};
    sync_shared(cmw, "ConfigMap", only_b, 1);
    sync_shared(running(wd, DEP_ALL), "Deployment", only_b, 1);
    assert_int_equal(wd->nenq, 0);
    /* b is still repaired; a's objects (uninstalled) ask for nothing. */
    json_t *b1 = owned("ConfigMap", "ns-b", "cfg", "b", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, b1);
    json_t *a1 = owned("ConfigMap", "ns-a", "cfg", "a", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, a1);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "b");
    json_decref(a1);
    json_decref(b1);

    /* The last one goes: nothing runs. */
    assert_int_equal(drift_watcher_forget(wd->d, "b", &err), 0);
    drift_watcher_flush(wd->d);
    assert_int_equal(nrunning(wd), 0);
    assert_int_equal(drift_watcher_shared(wd->d), 0);
    assert_int_equal(drift_watcher_active(wd->d), 0);
}

/* Issue 25: an extension whose reconcile needed no token (a restart that found everything as
 * its apply left it) posts tokenless: it is watched through the shared watches another
 * extension's token runs, opening nothing; should they stop (their runner gone, nobody else
 * with a token), it asks for a reconcile (which brings a token) instead of opening a watch
 * without one.  A tokenless post never replaces a token the extension has. */
static void test_shared_tokenless_extension_is_covered(void **state)
{
    world *wd = *state;
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    s = spec_in("b", "ns-b", NULL, refs_b, 2);
    s.tokenless = true;
    post(wd, &s);
    assert_int_equal(nrunning(wd), 2); /* a's shared watches only */
    assert_int_equal(drift_watcher_extensions(wd->d), 2);
    const char *both[][2] = {{"a", "ns-a"}, {"b", "ns-b"}};
    sync_shared(running(wd, CM_ALL), "ConfigMap", both, 2);
    sync_shared(running(wd, DEP_ALL), "Deployment", both, 2);
    assert_int_equal(wd->nenq, 0);
    /* b's drift is seen. */
    json_t *b1 = owned("ConfigMap", "ns-b", "cfg", "b", "edited");
    drift_watch_event(running(wd, CM_ALL)->w, KUBE_WATCH_MODIFIED, b1);
    json_decref(b1);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "b");
    /* a tokenless post of a keeps its token and watches. */
    s = spec_in("a", "ns-a", NULL, refs_a, 2);
    s.tokenless = true;
    post(wd, &s);
    assert_int_equal(nrunning(wd), 2);
    assert_string_equal(running(wd, CM_ALL)->token, "token-a");

    /* a goes: nobody has a token to run the shared watches with; b asks for one. */
    olm_error err;
    assert_int_equal(drift_watcher_forget(wd->d, "a", &err), 0);
    drift_watcher_flush(wd->d);
    assert_int_equal(nrunning(wd), 0);
    assert_true(wd->nenq >= 2);
    assert_string_equal(wd->enq[wd->nenq - 1], "b");
    /* Its reconcile brings one: its own watches start... and become the shared ones. */
    s = spec_in("b", "ns-b", "token-b", refs_b, 2);
    post(wd, &s);
    assert_int_equal(nrunning(wd), 2);
    assert_string_equal(running(wd, CM_ALL)->token, "token-b");
}

static void test_shared_403_for_one_identity_does_not_affect_another(void **state)
{
    world *wd = *state;
    wd->defer_close = true;
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    s = spec_in("b", "ns-b", "token-b", refs_b, 2);
    post(wd, &s);
    /* a's ServiceAccount may not list ConfigMaps cluster-wide: b's is asked instead, and
     * a stays covered by it.  Not worth a warning (a's own watch would log its own 403). */
    fake_watch *cmw = running(wd, CM_ALL);
    drift_watch_error(cmw->w, 403, "LIST returned HTTP 403");
    assert_false(cmw->running);
    cmw = running(wd, CM_ALL);
    assert_non_null(cmw);
    assert_string_equal(cmw->token, "token-b");
    assert_int_equal(nrunning(wd), 2);
    assert_int_equal(wd->nlogs, 0);
    const char *cms[][2] = {{"a", "ns-a"}, {"b", "ns-b"}};
    sync_shared(cmw, "ConfigMap", cms, 2);
    json_t *a1 = owned("ConfigMap", "ns-a", "cfg", "a", "edited");
    drift_watch_event(cmw->w, KUBE_WATCH_MODIFIED, a1);
    assert_true(enqueued(wd, "a"));
    json_decref(a1);

    /* Later b loses cluster-wide access as well (a relist gets 403): nobody is left to run
     * it, so each extension opens its own watch in its namespace with its own token. */
    wd->nenq = 0;
    drift_watch_error(cmw->w, 403, "LIST returned HTTP 403");
    assert_null(running(wd, CM_ALL));
    fake_watch *own_a = running(wd, "/api/v1/namespaces/ns-a/configmaps");
    fake_watch *own_b = running(wd, "/api/v1/namespaces/ns-b/configmaps");
    assert_non_null(own_a);
    assert_non_null(own_b);
    assert_string_equal(own_a->token, "token-a");
    assert_string_equal(own_b->token, "token-b");
    assert_string_equal(own_b->selector,
                        "olm.operatorframework.io/owner-kind=ClusterExtension,olm.operatorframework.io/owner-name=b");
    assert_non_null(running(wd, DEP_ALL)); /* the other type is not affected */
    assert_int_equal(drift_watcher_shared(wd->d), 1);

    /* a's own watch gets a 403 too: logged for a only; b's own watch goes on repairing. */
    drift_watch_error(own_a->w, 403, "LIST returned HTTP 403");
    assert_int_equal(wd->nlogs, 1);
    assert_non_null(strstr(wd->logs[0], "a: drift watch: ServiceAccount ns-a/installer may not list"));
    json_t *b1 = owned("ConfigMap", "ns-b", "cfg", "b", "v");
    list_and_sync(own_b, &b1, 1);
    drift_watch_event(own_b->w, KUBE_WATCH_DELETED, b1);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "b");
    json_decref(b1);
    run_deferred_closes(wd);
    /* A new extension of a refused identity does not try again: it watches on its own. */
    install_object_ref refs_a2[] = {{"v1", "ConfigMap", "ns-a", "cfg2", 0}};
    s = spec_in("a2", "ns-a", "token-a", refs_a2, 1);
    post(wd, &s);
    assert_null(running(wd, CM_ALL));
}

/* Namespace-bound installers: after OLM_REFUSALS_BEFORE_QUIET identities in a row were
 * refused the shared watch of a type, a new extension is not asked (it watches on its own)
 * until the quiet period ends; then the next one is, and when it may, its shared watch covers
 * everyone again; a sync starts the count again.  Mutation checks: quiet() not consulted at
 * the attach, the count not kept, or not reset at a sync: each seen failing this test. */
static int setup_shared_quiet(void **state)
{
    refusal_quiet_ms = 40;
    int rc = setup_shared(state);
    refusal_quiet_ms = 0;
    return rc;
}

static int starts_of(world *wd, const char *path)
{
    int n = 0;
    for (int i = 0; i < wd->nfw; i++)
        n += strcmp(wd->fw[i].path, path) == 0;
    return n;
}

static void post_cm_of(world *wd, const char *ext)
{
    char ns[32], token[32];
    snprintf(ns, sizeof ns, "ns-%s", ext);
    snprintf(token, sizeof token, "token-%s", ext);
    install_object_ref refs[] = {{"v1", "ConfigMap", ns, "cfg", 0}};
    drift_spec s = spec_in(ext, ns, token, refs, 1);
    post(wd, &s);
}

static void test_shared_quiet_after_refusals(void **state)
{
    world *wd = *state;
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < OLM_REFUSALS_BEFORE_QUIET; i++) {
        post_cm_of(wd, names[i]);
        fake_watch *cmw = running(wd, CM_ALL);
        assert_non_null(cmw);
        drift_watch_error(cmw->w, 403, "LIST returned HTTP 403");
        assert_null(running(wd, CM_ALL));
    }
    assert_int_equal(starts_of(wd, CM_ALL), OLM_REFUSALS_BEFORE_QUIET);
    /* Quiet: d is not asked; it watches in its namespace. */
    post_cm_of(wd, "d");
    assert_int_equal(starts_of(wd, CM_ALL), OLM_REFUSALS_BEFORE_QUIET);
    assert_non_null(running(wd, "/api/v1/namespaces/ns-d/configmaps"));
    /* After it, e is asked; it may: its watch covers everyone once it has listed. */
    usleep(60 * 1000);
    uv_update_time(&wd->loop);
    post_cm_of(wd, "e");
    fake_watch *cmw = running(wd, CM_ALL);
    assert_non_null(cmw);
    assert_string_equal(cmw->token, "token-e");
    const char *cms[][2] = {{"a", "ns-a"}, {"b", "ns-b"}, {"c", "ns-c"}, {"d", "ns-d"}, {"e", "ns-e"}};
    sync_shared(cmw, "ConfigMap", cms, 5);
    assert_null(running(wd, "/api/v1/namespaces/ns-d/configmaps"));
    assert_int_equal(nrunning(wd), 1);
    /* The count starts again at a sync: e refused later is one refusal, and d, never asked,
     * is asked next. */
    drift_watch_error(cmw->w, 403, "LIST returned HTTP 403");
    cmw = running(wd, CM_ALL);
    assert_non_null(cmw);
    assert_string_equal(cmw->token, "token-d");
}

static void test_shared_own_watches_are_covered_once_it_syncs(void **state)
{
    world *wd = *state;
    wd->defer_close = true;
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    fake_watch *cmw = running(wd, CM_ALL);
    drift_watch_error(cmw->w, 403, "403"); /* a: refused, own watch */
    assert_non_null(running(wd, "/api/v1/namespaces/ns-a/configmaps"));
    s = spec_in("b", "ns-b", "token-b", refs_b, 2);
    post(wd, &s); /* b tries: covered while it runs */
    cmw = running(wd, CM_ALL);
    assert_string_equal(cmw->token, "token-b");
    assert_non_null(running(wd, "/api/v1/namespaces/ns-a/configmaps")); /* until the sync */
    const char *cms[][2] = {{"a", "ns-a"}, {"b", "ns-b"}};
    sync_shared(cmw, "ConfigMap", cms, 2);
    assert_null(running(wd, "/api/v1/namespaces/ns-a/configmaps"));
    assert_int_equal(wd->nenq, 0);
    json_t *a1 = owned("ConfigMap", "ns-a", "cfg", "a", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, a1);
    assert_true(enqueued(wd, "a"));
    json_decref(a1);
    run_deferred_closes(wd);
}

static void test_shared_new_token_of_the_runner(void **state)
{
    world *wd = *state;
    wd->defer_close = true;
    drift_spec s = spec_in("a", "ns-a", "t1", refs_a, 2);
    post(wd, &s);
    s = spec_in("a", "ns-a", "t2", refs_a, 2);
    post(wd, &s);
    assert_int_equal(nrunning(wd), 2);
    assert_string_equal(running(wd, CM_ALL)->token, "t2");
    run_deferred_closes(wd);
    assert_int_equal(drift_watcher_active(wd->d), 2);
    /* A 401 of the shared watch asks the runner's extension for a fresh token. */
    drift_watch_error(running(wd, CM_ALL)->w, 401, "Unauthorized");
    assert_true(enqueued(wd, "a"));
    assert_non_null(running(wd, "/api/v1/namespaces/ns-a/configmaps")); /* its own, meanwhile */
}

/* Every watch names the daemon's own CA file (base's path), not a copy of it: libcurl puts
 * a watch on a connection already open (the informers') only when the TLS settings, the CA
 * file's path included, are the same.  base here is what kube_config leaves for a CA given
 * inline: the file in base's temp dir. */
static void test_watches_use_the_base_ca_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/drift-ca-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ca[256];
    snprintf(ca, sizeof ca, "%s/ca.crt", dir);
    FILE *f = fopen(ca, "w");
    assert_non_null(f);
    fputs("-----BEGIN CERTIFICATE-----\n", f);
    fclose(f);
    world *wd = calloc(1, sizeof *wd);
    assert_int_equal(uv_loop_init(&wd->loop), 0);
    wd->base.server = "https://127.0.0.1:6443";
    wd->base.ca_file = ca;
    wd->base.tmp_dir = dir;
    drift_backend be = {fake_start, fake_stop, wd};
    drift_callbacks cb = {on_enqueue, on_rejected, on_log, wd};
    olm_error err;
    wd->d = drift_watcher_new(&wd->loop, &wd->base, &be, &cb, NULL, &err);
    assert_non_null(wd->d);
    drift_spec s = make_spec("ext", "t", one_ns_refs, 6);
    post(wd, &s);
    assert_true(nrunning(wd) > 0);
    for (int i = 0; i < wd->nfw; i++)
        assert_string_equal(wd->fw[i].ca_file, ca);
    void *st = wd;
    teardown(&st);
    /* Nothing of the watcher's own was left in base's temp dir, nor anywhere else. */
    assert_int_equal(unlink(ca), 0);
    assert_int_equal(rmdir(dir), 0);
}

/* ------------------------------------------------------------ the probe trigger */

/* Deployment ns/mgr of `owner` as a watch reports it: Available `available`, with a status
 * field the probes do not read (`heartbeat`, as lastUpdateTime). */
static json_t *deploy(const char *ns, const char *name, const char *owner, const char *available, const char *heartbeat)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:I, s:{s:s, s:s}}, s:{s:i}, "
                     "s:{s:I, s:i, s:i, s:[{s:s, s:s, s:s}]}}",
                     "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name", name, "namespace", ns,
                     "resourceVersion", heartbeat, "generation", (json_int_t)1, "labels",
                     "olm.operatorframework.io/owner-kind", "ClusterExtension", "olm.operatorframework.io/owner-name",
                     owner, "spec", "replicas", 1, "status", "observedGeneration", (json_int_t)1, "replicas", 1,
                     "updatedReplicas", 1, "conditions", "type", "Available", "status", available, "lastUpdateTime",
                     heartbeat);
}

static uint64_t digest_of(const char *available)
{
    json_t *d = deploy("ops", "mgr", "ext", available, "0");
    uint64_t h = probe_digest(d);
    json_decref(d);
    return h;
}

static void event(fake_watch *f, kube_watch_event_type t, json_t *obj)
{
    drift_watch_event(f->w, t, obj);
    json_decref(obj);
}

static const char *DEP_PATH = "/apis/apps/v1/namespaces/ops/deployments";

static void test_paths_carry_the_probe_digests(void **state)
{
    (void)state;
    uint64_t probes[] = {11, 22, 33, 44, 55, 66};
    drift_spec s = make_spec_probed("ext", "t", one_ns_refs, 6, probes);
    /* Sorted by path: configmaps (cfg, cfg2), serviceaccounts, deployments, ... */
    assert_int_equal(s.paths[0].probes[0], 22);
    assert_int_equal(s.paths[0].probes[1], 66);
    assert_int_equal(s.paths[1].probes[0], 33);
    assert_int_equal(s.paths[2].probes[0], 11);
    drift_spec_free(&s);
}

static void test_probe_change_after_sync_enqueues(void **state)
{
    world *wd = *state;
    uint64_t probes[] = {digest_of("False"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("ext", "t", one_ns_refs, 2, probes); /* the reconcile saw it unavailable */
    post(wd, &s);
    fake_watch *f = running(wd, DEP_PATH) ? running(wd, DEP_PATH) : running(wd, DEP_ALL); /* own, or shared */
    assert_non_null(f);
    event(f, KUBE_WATCH_ADDED, deploy("ops", "mgr", "ext", "False", "1"));
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 0);
    /* A status write the probes do not read: nothing. */
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "False", "2"));
    assert_int_equal(wd->nenq, 0);
    /* Available: the condition must follow. */
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "True", "3"));
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "ext");
    /* More writes of the same verdict before the reconcile posts: told once only. */
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "True", "4"));
    assert_int_equal(wd->nenq, 1);
    /* The reconcile posts what it saw: nothing more to tell. */
    probes[0] = digest_of("True");
    s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    assert_int_equal(wd->nenq, 1);
    /* It loses readiness again. */
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "False", "5"));
    assert_int_equal(wd->nenq, 2);
}

static void test_probe_changed_before_the_watch_listed(void **state)
{
    world *wd = *state;
    uint64_t probes[] = {digest_of("False"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_PATH);
    /* Available between the reconcile's read and the LIST: no event tells it. */
    event(f, KUBE_WATCH_ADDED, deploy("ops", "mgr", "ext", "True", "1"));
    assert_int_equal(wd->nenq, 0);
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 1);
    drift_watch_synced(f->w); /* a relist: its differences come as events */
    assert_int_equal(wd->nenq, 1);
}

static void test_post_behind_what_the_watch_saw(void **state)
{
    world *wd = *state;
    uint64_t probes[] = {digest_of("False"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_PATH);
    event(f, KUBE_WATCH_ADDED, deploy("ops", "mgr", "ext", "False", "1"));
    drift_watch_synced(f->w);
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "True", "2"));
    assert_int_equal(wd->nenq, 1);
    /* That reconcile read the Deployment just before the change: its post is behind. */
    s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    assert_int_equal(wd->nenq, 2);
    /* The next one saw it: quiet. */
    probes[0] = digest_of("True");
    s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    assert_int_equal(wd->nenq, 2);
}

static void test_probe_unknown_compares_with_the_previous_state(void **state)
{
    world *wd = *state;
    drift_spec s = make_spec("ext", "t", one_ns_refs, 2); /* no digests */
    post(wd, &s);
    fake_watch *f = running(wd, DEP_PATH);
    event(f, KUBE_WATCH_ADDED, deploy("ops", "mgr", "ext", "False", "1"));
    drift_watch_synced(f->w);
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "False", "2"));
    assert_int_equal(wd->nenq, 0);
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "True", "3"));
    assert_int_equal(wd->nenq, 1);
}

static void test_probe_of_unrecorded_objects_ignored(void **state)
{
    world *wd = *state;
    uint64_t probes[] = {digest_of("True"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_PATH);
    event(f, KUBE_WATCH_ADDED, deploy("ops", "mgr", "ext", "True", "1"));
    event(f, KUBE_WATCH_ADDED, deploy("ops", "old", "ext", "True", "1")); /* labelled, not recorded */
    drift_watch_synced(f->w);
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "old", "ext", "False", "2"));
    assert_int_equal(wd->nenq, 0);
}

static void test_shared_probe_change_goes_to_the_owner(void **state)
{
    world *wd = *state;
    uint64_t unavailable[] = {digest_of("False"), PROBE_DIGEST_PASS}, available[] = {digest_of("True"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("a", "token-a", refs_a, 2, unavailable);
    post(wd, &s);
    s = make_spec_probed("b", "token-b", refs_b, 2, unavailable);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_ALL);
    assert_non_null(f);
    event(f, KUBE_WATCH_ADDED, deploy("ns-a", "mgr", "a", "False", "1"));
    event(f, KUBE_WATCH_ADDED, deploy("ns-b", "mgr", "b", "True", "1")); /* b turned available meanwhile */
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "b");
    event(f, KUBE_WATCH_MODIFIED, deploy("ns-a", "mgr", "a", "False", "2"));
    assert_int_equal(wd->nenq, 1);
    event(f, KUBE_WATCH_MODIFIED, deploy("ns-a", "mgr", "a", "True", "3"));
    assert_int_equal(wd->nenq, 2);
    assert_string_equal(wd->enq[1], "a");
    s = make_spec_probed("b", "token-b", refs_b, 2, available);
    post(wd, &s);
    event(f, KUBE_WATCH_MODIFIED, deploy("ns-b", "mgr", "b", "True", "4"));
    assert_int_equal(wd->nenq, 2);
}

/* The line probe_describe gives `obj` (it fails its probes). */
static char *describe(const json_t *obj)
{
    probe_result r;
    assert_int_equal(probe_object(obj, &r), 0);
    assert_true(r.status != PROBE_TRUE);
    strbuf line = STRBUF_INIT;
    assert_int_equal(probe_describe(&line, obj, r.messages), 0);
    probe_result_free(&r);
    return strbuf_detach(&line);
}

/* A failing object's lookup gives its line in the Available condition, as reading the object
 * would (so a reconcile needs no GET for it); a passing one gives none.  Mutation checks: the
 * line not kept by the shared event (drift_probed_set with NULL), or not handed out by
 * drift_shared_lookup: each seen failing this test. */
static void test_lookup_gives_a_failing_objects_line(void **state)
{
    world *wd = *state;
    uint64_t unavailable[] = {digest_of("False"), PROBE_DIGEST_PASS}, c, p;
    drift_spec s = make_spec_probed("a", "token-a", refs_a, 2, unavailable);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_ALL);
    assert_non_null(f);
    json_t *failing = deploy("ns-a", "mgr", "a", "False", "1");
    drift_watch_event(f->w, KUBE_WATCH_ADDED, failing);
    drift_watch_synced(f->w);
    char *line = NULL, *want = describe(failing);
    assert_int_equal(drift_watcher_lookup(wd->d, DEP_ALL, "ns-a/mgr", &c, &p, &line), 1);
    assert_true(p == probe_digest(failing));
    assert_non_null(line);
    assert_string_equal(line, want);
    free(line);
    free(want);
    json_decref(failing);
    event(f, KUBE_WATCH_MODIFIED, deploy("ns-a", "mgr", "a", "True", "2"));
    line = (char *)"unset";
    assert_int_equal(drift_watcher_lookup(wd->d, DEP_ALL, "ns-a/mgr", &c, &p, &line), 1);
    assert_true(p == PROBE_DIGEST_PASS);
    assert_null(line);
}

static void test_probes_ignored_when_asked(void **state)
{
    world *wd = *state;
    drift_watcher_stop(wd->d, NULL, NULL); /* the setup's: another, with ignore_probes */
    drift_backend be = {fake_start, fake_stop, wd};
    drift_callbacks cb = {on_enqueue, on_rejected, on_log, wd};
    drift_watcher_options o = {.coalesce_ms = 1000, .min_refresh_ms = 5, .per_extension_only = true,
                               .ignore_probes = true};
    olm_error err;
    wd->d = drift_watcher_new(&wd->loop, &wd->base, &be, &cb, &o, &err);
    assert_non_null(wd->d);
    uint64_t probes[] = {digest_of("False"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("ext", "t", one_ns_refs, 2, probes);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_PATH);
    event(f, KUBE_WATCH_ADDED, deploy("ops", "mgr", "ext", "True", "1"));
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 0); /* the sync compares nothing */
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "False", "2"));
    event(f, KUBE_WATCH_MODIFIED, deploy("ops", "mgr", "ext", "True", "3"));
    assert_int_equal(wd->nenq, 0); /* nor do events */
}

static void test_shared_joining_compares_probes(void **state)
{
    world *wd = *state;
    uint64_t available[] = {digest_of("True"), PROBE_DIGEST_PASS}, unavailable[] = {digest_of("False"), PROBE_DIGEST_PASS};
    drift_spec s = make_spec_probed("a", "token-a", refs_a, 2, available);
    post(wd, &s);
    fake_watch *f = running(wd, DEP_ALL);
    event(f, KUBE_WATCH_ADDED, deploy("ns-a", "mgr", "a", "True", "1"));
    event(f, KUBE_WATCH_ADDED, deploy("ns-b", "mgr", "b", "True", "1"));
    drift_watch_synced(f->w);
    assert_int_equal(wd->nenq, 0);
    /* b joins the running watch with a status older than what the watch has seen. */
    s = make_spec_probed("b", "token-b", refs_b, 2, unavailable);
    post(wd, &s);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "b");
    /* c joins just after its apply, its Deployment not reported yet; it comes available. */
    install_object_ref refs_c[] = {{"apps/v1", "Deployment", "ns-c", "mgr", 0}};
    s = make_spec_probed("c", "token-c", refs_c, 1, unavailable);
    post(wd, &s);
    assert_int_equal(wd->nenq, 1);
    event(f, KUBE_WATCH_ADDED, deploy("ns-c", "mgr", "c", "True", "1"));
    assert_int_equal(wd->nenq, 2);
    assert_string_equal(wd->enq[1], "c");
}

/* ------------------------------------------------------------ the caches and content hashes */

/* Extension `ext` in ns, with the content hash a reconcile saw of each object. */
static drift_spec spec_contents(const char *ext, const char *ns, const char *token, install_object_ref *refs, size_t n,
                                const uint64_t *contents)
{
    install_record rec = {.objects = refs, .nobjects = n};
    drift_spec s = {.extension = strdup(ext), .ns = strdup(ns), .sa = strdup("installer"), .token = strdup(token)};
    olm_error err;
    assert_int_equal(drift_spec_paths(&s, &rec, NULL, contents, builtin, NULL, &err), 0);
    return s;
}

static uint64_t hash_of(const char *kind, const char *ns, const char *name, const char *owner, const char *value)
{
    json_t *o = owned(kind, ns, name, owner, value);
    uint64_t h = drift_content_hash(o);
    json_decref(o);
    return h;
}

/* `cmw` reports a's ConfigMap `a1` and lists: the lookup answers for it from then on (its
 * content hash, passing), not before, and not for what it has not seen or another type. */
static void answers_once_synced(world *wd, fake_watch *cmw, json_t *a1)
{
    uint64_t c, p;
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, a1);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 0); /* not synced yet */
    drift_watch_synced(cmw->w);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 1);
    assert_true(c == drift_content_hash(a1));
    assert_true(p == PROBE_DIGEST_PASS);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/other", &c, &p, NULL), 0);
    assert_int_equal(drift_watcher_lookup(wd->d, DEP_ALL, "ns-a/mgr", &c, &p, NULL), 0); /* its watch has not listed */
}

/* Extension a forgotten: the lookup answers nothing for its ConfigMap. */
static void forgotten_answers_nothing(world *wd)
{
    uint64_t c, p;
    olm_error err;
    assert_int_equal(drift_watcher_forget(wd->d, "a", &err), 0);
    drift_watcher_flush(wd->d);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 0);
}

/* drift_watcher_lookup answers from a shared watch once it has synced: the content hash and
 * the probe digest of what it holds; nothing before the sync, for an object it does not hold,
 * or once it stopped.  Mutation checks: drift_shared_lookup not checking `synced`, or
 * answering the probe digest for the content: each seen failing this test. */
static void test_lookup_answers_from_a_synced_shared_watch(void **state)
{
    world *wd = *state;
    uint64_t c, p;
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 0);
    fake_watch *cmw = running(wd, CM_ALL);
    json_t *a1 = owned("ConfigMap", "ns-a", "cfg", "a", "v");
    answers_once_synced(wd, cmw, a1);
    /* An edit shows at once; a deletion too. */
    json_t *a2 = owned("ConfigMap", "ns-a", "cfg", "a", "edited");
    drift_watch_event(cmw->w, KUBE_WATCH_MODIFIED, a2);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 1);
    assert_true(c == drift_content_hash(a2));
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, a2);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 0);
    json_decref(a1);
    json_decref(a2);
    forgotten_answers_nothing(wd); /* the watch stops, and says nothing more */
}

/* An extension's own watches (per-extension mode: its ServiceAccount may not watch the type
 * cluster-wide) answer drift_watcher_lookup as a shared watch does: after their sync, the
 * content hash and probe digest of what they hold, each event at once; nothing once the watch
 * stopped (a 403), started over (a new credential) or the extension is forgotten.  Mutation
 * checks: drift_published_put not called for an event, drift_published_all not called at the
 * sync, drift_published_withdraw not called when a watch halts: each seen failing this test. */
static void test_lookup_answers_from_own_watches(void **state)
{
    world *wd = *state;
    uint64_t c, p;
    const char *cm_a = "/api/v1/namespaces/ns-a/configmaps", *dep_a = "/apis/apps/v1/namespaces/ns-a/deployments";
    drift_spec s = spec_in("a", "ns-a", "token-a", refs_a, 2);
    post(wd, &s);
    fake_watch *cmw = running(wd, cm_a), *dw = running(wd, dep_a);
    assert_non_null(cmw);
    assert_non_null(dw);
    json_t *a1 = owned("ConfigMap", "ns-a", "cfg", "a", "v");
    answers_once_synced(wd, cmw, a1);
    /* A Deployment failing its probes: its digest. */
    drift_watch_synced(dw->w);
    json_t *d1 = deploy("ns-a", "mgr", "a", "False", "1");
    drift_watch_event(dw->w, KUBE_WATCH_ADDED, d1);
    assert_int_equal(drift_watcher_lookup(wd->d, DEP_ALL, "ns-a/mgr", &c, &p, NULL), 1);
    assert_true(c == drift_content_hash(d1));
    assert_true(p == probe_digest(d1) && p != PROBE_DIGEST_PASS);
    json_decref(d1);
    /* An edit shows at once; a deletion too. */
    json_t *a2 = owned("ConfigMap", "ns-a", "cfg", "a", "edited");
    drift_watch_event(cmw->w, KUBE_WATCH_MODIFIED, a2);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 1);
    assert_true(c == drift_content_hash(a2));
    drift_watch_event(cmw->w, KUBE_WATCH_DELETED, a2);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 0);
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, a1);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 1);
    /* Refused (403): the watch stops, and what it held answers no more. */
    drift_watch_error(cmw->w, 403, "WATCH returned HTTP 403");
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 0);
    assert_int_equal(drift_watcher_lookup(wd->d, DEP_ALL, "ns-a/mgr", &c, &p, NULL), 1);
    /* A new credential: the watches start over, and answer again only once synced. */
    s = spec_in("a", "ns-a", "token-a2", refs_a, 2);
    post(wd, &s);
    assert_int_equal(drift_watcher_lookup(wd->d, DEP_ALL, "ns-a/mgr", &c, &p, NULL), 0);
    cmw = running(wd, cm_a);
    assert_non_null(cmw);
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, a1);
    drift_watch_synced(cmw->w);
    assert_int_equal(drift_watcher_lookup(wd->d, CM_ALL, "ns-a/cfg", &c, &p, NULL), 1);
    json_decref(a1);
    json_decref(a2);
    forgotten_answers_nothing(wd);
}

/* A post carries the content hash its reconcile relied on: when the watch holds another one
 * (an edit between the reconcile's read and its post, which no watch of the extension was
 * there to judge), the extension is enqueued, at the sync or when it joins a synced watch; the
 * same hash enqueues nothing.  Mutation checks: drift_watch_contents_differ not called at the
 * sync (check_expected) or at the join (drift_shared_attach): each seen failing this test. */
static void test_shared_compares_the_contents_a_post_relied_on(void **state)
{
    world *wd = *state;
    install_object_ref cm_a[] = {{"v1", "ConfigMap", "ns-a", "cfg", 0}};
    install_object_ref cm_b[] = {{"v1", "ConfigMap", "ns-b", "cfg", 0}};
    /* At the sync: a relied on an older content, b on the current one. */
    uint64_t ha = hash_of("ConfigMap", "ns-a", "cfg", "a", "old"), hb = hash_of("ConfigMap", "ns-b", "cfg", "b", "v");
    drift_spec s = spec_contents("a", "ns-a", "token-a", cm_a, 1, &ha);
    post(wd, &s);
    s = spec_contents("b", "ns-b", "token-b", cm_b, 1, &hb);
    post(wd, &s);
    fake_watch *cmw = running(wd, CM_ALL);
    const char *cms[][2] = {{"a", "ns-a"}, {"b", "ns-b"}};
    sync_shared(cmw, "ConfigMap", cms, 2);
    assert_int_equal(wd->nenq, 1);
    assert_string_equal(wd->enq[0], "a");
    /* Joining the synced watch: c's object was edited after c's reconcile saw it; d's was not. */
    json_t *c1 = owned("ConfigMap", "ns-c", "cfg", "c", "edited");
    json_t *d1 = owned("ConfigMap", "ns-d", "cfg", "d", "v");
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, c1);
    drift_watch_event(cmw->w, KUBE_WATCH_ADDED, d1);
    json_decref(c1);
    json_decref(d1);
    install_object_ref cm_c[] = {{"v1", "ConfigMap", "ns-c", "cfg", 0}};
    install_object_ref cm_d[] = {{"v1", "ConfigMap", "ns-d", "cfg", 0}};
    uint64_t hc = hash_of("ConfigMap", "ns-c", "cfg", "c", "v"), hd = hash_of("ConfigMap", "ns-d", "cfg", "d", "v");
    s = spec_contents("c", "ns-c", "token-c", cm_c, 1, &hc);
    post(wd, &s);
    s = spec_contents("d", "ns-d", "token-d", cm_d, 1, &hd);
    post(wd, &s);
    assert_int_equal(wd->nenq, 2);
    assert_string_equal(wd->enq[1], "c");
    /* Told once: c's next post with the hash it now saw enqueues nothing. */
    hc = hash_of("ConfigMap", "ns-c", "cfg", "c", "edited");
    s = spec_contents("c", "ns-c", "token-c", cm_c, 1, &hc);
    post(wd, &s);
    assert_int_equal(wd->nenq, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_one_namespace_and_cluster_scoped),
        cmocka_unit_test(test_paths_many_namespaces_watch_cluster_wide),
        cmocka_unit_test(test_paths_unknown_kind_fails),
        cmocka_unit_test(test_selector),
        cmocka_unit_test(test_watches_use_the_base_ca_file),
        cmocka_unit_test(test_content_hash_ignores_server_bookkeeping),
        cmocka_unit_test_setup_teardown(test_watches_started_with_token_and_selector, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enqueue_only_after_the_initial_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expected_object_missing_from_initial_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_kinds_and_new_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_stops_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forbidden_logs_once_and_falls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unauthorized_drops_the_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refresh_timer_asks_for_a_reconcile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_posts_from_another_thread_reach_the_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_with_pending_posts_and_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_one_watch_per_type_for_many_extensions, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_shared_uninstalling_the_runner_keeps_the_others_repaired, setup_shared,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_tokenless_extension_is_covered, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_shared_403_for_one_identity_does_not_affect_another, setup_shared,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shared_quiet_after_refusals, setup_shared_quiet, teardown),
        cmocka_unit_test_setup_teardown(test_shared_own_watches_are_covered_once_it_syncs, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_shared_new_token_of_the_runner, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_stop_with_pending_posts_and_closes, setup_shared, teardown),
        cmocka_unit_test(test_paths_carry_the_probe_digests),
        cmocka_unit_test_setup_teardown(test_probe_change_after_sync_enqueues, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_changed_before_the_watch_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_behind_what_the_watch_saw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_unknown_compares_with_the_previous_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_of_unrecorded_objects_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probes_ignored_when_asked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_probe_change_after_sync_enqueues, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_gives_a_failing_objects_line, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_shared_probe_change_goes_to_the_owner, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_shared_joining_compares_probes, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_answers_from_a_synced_shared_watch, setup_shared, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_answers_from_own_watches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_compares_the_contents_a_post_relied_on, setup_shared, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* watch_live_check: the async half of kube/ against a real kube-apiserver.
 *
 * Not a unit test (needs a cluster; run by e2e/tests/test_kube_watch.py with
 * KUBECONFIG set).  On one libuv loop it:
 *   1. watches namespaces labelled olmv1-live=<pid>, and ConfigMaps in the
 *      namespace it is about to create;
 *   2. creates the namespace (plain curl easy request) → ADDED;
 *   3. creates a ConfigMap → ADDED; deletes it → DELETED;
 *   4. acquires a Lease with kube_leader, checks holderIdentity, stops (release)
 *      and checks the holder is empty again;
 *   5. deletes the namespace → DELETED, or MODIFIED to Terminating (without
 *      kube-controller-manager a namespace never finishes terminating).
 * Prints one "ok - ..." line per step; exits 1 at the first failure or after 90 s. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "kube_leader.h"
#include "kube_uvcurl_req.h"
#include "kube_watch.h"
#include "strbuf.h"

static kube_config cfg;
static kube_uvcurl *uc;
static kube_watch *ns_watch, *cm_watch;
static kube_leader *leader;
static uv_timer_t deadline;
static char ns[64], label[64];
static int step;
static int synced;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL - ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static size_t sink(char *p, size_t s, size_t n, void *d)
{
    return strbuf_append(d, p, s * n) == 0 ? s * n : 0;
}

/* Blocking request (a check program may stall its loop for a moment). Returns
 * the HTTP status; *out gets the parsed body when asked. */
static long request(const char *method, const char *path, const char *body, json_t **out)
{
    olm_error err;
    struct curl_slist *hdrs = body ? curl_slist_append(NULL, "Content-Type: application/json") : NULL;
    CURL *h = kube_uvcurl_easy_new(&cfg, path, &hdrs, &err);
    if (!h)
        fail("%s %s: %s", method, path, err.msg);
    strbuf resp = STRBUF_INIT;
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK)
        fail("%s %s: %s", method, path, curl_easy_strerror(rc));
    if (out)
        *out = json_loads(strbuf_str(&resp), 0, NULL);
    strbuf_free(&resp);
    return status;
}

static void ok(const char *what)
{
    printf("ok - %s\n", what);
    fflush(stdout);
}

static const char *name_of(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

static void finish_closed(void *d)
{
    (void)d;
    if (--synced == 0) {
        uv_close((uv_handle_t *)&deadline, NULL);
        kube_uvcurl_close(uc, NULL, NULL);
    }
}

static void lease_path(char *buf, size_t len)
{
    snprintf(buf, len, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/olmv1-live-lock", ns);
}

static void leader_closed(void *d)
{
    (void)d;
    char p[256];
    lease_path(p, sizeof p);
    json_t *lease = NULL;
    long st = request("GET", p, NULL, &lease);
    const char *holder = json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity"));
    if (st != 200 || !holder || *holder)
        fail("lease not released: HTTP %ld holder %s", st, holder ? holder : "(none)");
    json_decref(lease);
    ok("Lease released on stop (holderIdentity empty)");
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s", ns);
    step = 5;
    if (request("DELETE", path, NULL, NULL) / 100 != 2)
        fail("deleting namespace %s", ns);
}

static void on_started(void *d)
{
    (void)d;
    char p[256];
    lease_path(p, sizeof p);
    json_t *lease = NULL;
    long st = request("GET", p, NULL, &lease);
    const char *holder = json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity"));
    if (st != 200 || !holder || strcmp(holder, "live-check") != 0)
        fail("lease holder after acquire: HTTP %ld holder %s", st, holder ? holder : "(none)");
    json_decref(lease);
    ok("Lease acquired (holderIdentity live-check)");
    kube_leader_stop(leader, leader_closed, NULL);
}

static void on_stopped(void *d)
{
    (void)d;
}

static void on_error(const char *msg, void *d)
{
    fprintf(stderr, "note - %s: %s\n", (const char *)d, msg);
}

static void start_leader(void)
{
    olm_error err;
    kube_leader_options o = {ns, "olmv1-live-lock", "live-check", 15000, 10000, 2000};
    kube_leader_callbacks cb = {on_started, on_stopped, NULL, on_error};
    leader = kube_leader_new(uc, &cfg, &o, &cb, (void *)"leader", &err);
    if (!leader || kube_leader_start(leader, &err) != 0)
        fail("leader: %s", err.msg);
}

static void on_cm(kube_watch_event_type t, json_t *obj, void *d)
{
    (void)d;
    const char *n = name_of(obj);
    char path[160];
    if (step == 3 && t == KUBE_WATCH_ADDED && strcmp(n, "live-cm") == 0) {
        ok("watch saw the ConfigMap ADDED");
        step = 4;
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/live-cm", ns);
        if (request("DELETE", path, NULL, NULL) != 200)
            fail("deleting the ConfigMap");
    } else if (step == 4 && t == KUBE_WATCH_DELETED && strcmp(n, "live-cm") == 0) {
        ok("watch saw the ConfigMap DELETED");
        start_leader();
    }
}

static void on_ns(kube_watch_event_type t, json_t *obj, void *d)
{
    (void)d;
    const char *n = name_of(obj);
    if (strcmp(n, ns) != 0)
        return;
    if (step == 2 && t == KUBE_WATCH_ADDED) {
        ok("watch saw the namespace ADDED");
        step = 3;
        char path[128], body[256];
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
        snprintf(body, sizeof body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"live-cm\"},"
                                    "\"data\":{\"k\":\"v\"}}");
        if (request("POST", path, body, NULL) != 201)
            fail("creating the ConfigMap");
    } else if (step == 5 && (t == KUBE_WATCH_DELETED || t == KUBE_WATCH_MODIFIED)) {
        ok(t == KUBE_WATCH_DELETED ? "watch saw the namespace DELETED"
                                   : "watch saw the namespace MODIFIED (Terminating)");
        step = 6;
        kube_watch_stop(ns_watch, finish_closed, NULL);
        kube_watch_stop(cm_watch, finish_closed, NULL);
    }
}

static void on_synced(void *d)
{
    (void)d;
    if (++synced != 2 || step != 0)
        return;
    ok("both watches listed (synced)");
    step = 2;
    char body[256];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"olmv1-live\":\"%s\"}}}",
             ns, label + strlen("olmv1-live="));
    if (request("POST", "/api/v1/namespaces", body, NULL) != 201)
        fail("creating namespace %s", ns);
}

static void on_deadline(uv_timer_t *t)
{
    (void)t;
    fail("timed out at step %d", step);
}

int main(void)
{
    olm_error err;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (kube_config_load(NULL, &cfg, &err) != 0)
        fail("kubeconfig: %s", err.msg);
    snprintf(ns, sizeof ns, "olmv1-watch-%d", (int)getpid());
    snprintf(label, sizeof label, "olmv1-live=%d", (int)getpid());
    uv_loop_t *loop = uv_default_loop();
    uc = kube_uvcurl_new(loop, &err);
    if (!uc)
        fail("%s", err.msg);
    char cm_path[128];
    snprintf(cm_path, sizeof cm_path, "/api/v1/namespaces/%s/configmaps", ns);
    kube_watch_options nso = {.path = "/api/v1/namespaces", .label_selector = label, .timeout_seconds = 60};
    kube_watch_options cmo = {.path = cm_path, .timeout_seconds = 60};
    kube_watch_handlers nsh = {on_ns, on_synced, on_error};
    kube_watch_handlers cmh = {on_cm, on_synced, on_error};
    ns_watch = kube_watch_new(uc, &cfg, &nso, &nsh, (void *)"namespaces", &err);
    cm_watch = ns_watch ? kube_watch_new(uc, &cfg, &cmo, &cmh, (void *)"configmaps", &err) : NULL;
    if (!cm_watch || kube_watch_start(ns_watch, &err) != 0 || kube_watch_start(cm_watch, &err) != 0)
        fail("watch: %s", err.msg);
    uv_timer_init(loop, &deadline);
    uv_timer_start(&deadline, on_deadline, 90000, 0);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    kube_config_free(&cfg);
    curl_global_cleanup();
    if (step != 6)
        fail("loop ended at step %d", step);
    ok("all watch/lease checks passed");
    return 0;
}

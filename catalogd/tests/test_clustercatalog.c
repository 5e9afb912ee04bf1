/* The cluster-free parts of the ClusterCatalog reconciler: condition bookkeeping
 * (meta.SetStatusCondition semantics), the "status still matches" check, poll interval and
 * jitter, the in-memory records, and catalogd's flag parsing.  The reconcile itself runs
 * against a real apiserver and registry in e2e/tests/test_catalogd.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "catalogd_flags.h"
#include "clustercatalog_internal.h"
#include "clustercatalog_status.h"
#include "kube_object.h"
#include "olm_parse.h"

static const char *cond_str(json_t *status, const char *type, const char *key)
{
    return json_string_value(json_object_get(clustercatalog_find_condition(status, type), key));
}

static void test_set_condition(void **state)
{
    (void)state;
    json_t *st = json_object();
    assert_int_equal(clustercatalog_set_condition(st, "Progressing", "True", "Retrying", "boom", 1, 1000), 0);
    assert_string_equal(cond_str(st, "Progressing", "lastTransitionTime"), "1970-01-01T00:16:40Z");
    /* same status: reason/message/generation move, lastTransitionTime stays */
    assert_int_equal(clustercatalog_set_condition(st, "Progressing", "True", "Succeeded", "ok", 2, 2000), 0);
    assert_string_equal(cond_str(st, "Progressing", "lastTransitionTime"), "1970-01-01T00:16:40Z");
    assert_string_equal(cond_str(st, "Progressing", "reason"), "Succeeded");
    assert_string_equal(cond_str(st, "Progressing", "message"), "ok");
    assert_int_equal(json_integer_value(json_object_get(clustercatalog_find_condition(st, "Progressing"), "observedGeneration")), 2);
    /* a flip moves it */
    assert_int_equal(clustercatalog_set_condition(st, "Progressing", "False", "Blocked", "no", 2, 3000), 0);
    assert_string_equal(cond_str(st, "Progressing", "lastTransitionTime"), "1970-01-01T00:50:00Z");
    /* a new type is appended */
    assert_int_equal(clustercatalog_set_condition(st, "Serving", "True", "Available", "m", 2, 4000), 0);
    assert_int_equal(json_array_size(json_object_get(st, "conditions")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), 1), "type")),
                        "Serving");
    json_decref(st);
}

static void test_status_matches(void **state)
{
    (void)state;
    const char *ref = "r.example/c@sha256:0123456789abcdef0123456789abcdef";
    json_t *st = json_object();
    assert_false(clustercatalog_status_matches_success(NULL, ref, "http://h/catalogs/c", 5, 1));
    assert_false(clustercatalog_status_matches_success(st, ref, "http://h/catalogs/c", 5, 1));
    clustercatalog_set_condition(st, CC_TYPE_PROGRESSING, "True", CC_REASON_SUCCEEDED, CC_MSG_UNPACKED, 1, 10);
    clustercatalog_set_condition(st, CC_TYPE_SERVING, "True", CC_REASON_AVAILABLE, CC_MSG_SERVING, 1, 10);
    clustercatalog_set_served_source(st, ref, "http://h/catalogs/c", 5);
    assert_true(clustercatalog_status_matches_success(st, ref, "http://h/catalogs/c", 5, 1));
    /* unknown condition types are ignored */
    clustercatalog_set_condition(st, "Other", "False", "X", "", 1, 10);
    assert_true(clustercatalog_status_matches_success(st, ref, "http://h/catalogs/c", 5, 1));
    assert_false(clustercatalog_status_matches_success(st, ref, "http://h/catalogs/c", 5, 2));
    assert_false(clustercatalog_status_matches_success(st, ref, "http://other/catalogs/c", 5, 1));
    assert_false(clustercatalog_status_matches_success(st, ref, "http://h/catalogs/c", 6, 1));
    assert_false(clustercatalog_status_matches_success(st, "r.example/c@sha256:ff", "http://h/catalogs/c", 5, 1));
    clustercatalog_set_condition(st, CC_TYPE_PROGRESSING, "True", CC_REASON_RETRYING, "pull failed", 1, 20);
    assert_false(clustercatalog_status_matches_success(st, ref, "http://h/catalogs/c", 5, 1));
    clustercatalog_clear_served_source(st);
    assert_null(json_object_get(st, "resolvedSource"));
    assert_null(json_object_get(st, "urls"));
    assert_null(json_object_get(st, "lastUnpacked"));
    json_decref(st);
}

static void test_poll_and_jitter(void **state)
{
    (void)state;
    json_t *c = json_loads("{\"spec\":{\"source\":{\"type\":\"Image\",\"image\":{\"ref\":\"a/b:c\","
                           "\"pollIntervalMinutes\":3}}}}", 0, NULL);
    assert_non_null(c);
    assert_int_equal(clustercatalog_poll_interval_ms(c, 0), 180000);
    assert_int_equal(clustercatalog_poll_interval_ms(c, 2000), 2000);
    json_object_del(json_object_get(json_object_get(json_object_get(c, "spec"), "source"), "image"),
                    "pollIntervalMinutes");
    assert_int_equal(clustercatalog_poll_interval_ms(c, 0), 0);
    assert_int_equal(clustercatalog_poll_interval_ms(c, 2000), 0); /* the override never turns polling on */
    json_decref(c);
    unsigned seed = 42;
    for (int i = 0; i < 1000; i++) {
        uint64_t j = clustercatalog_jitter_ms(100000, &seed);
        assert_true(j >= 100000 && j <= 101000);
    }
}

static void test_finalizer(void **state)
{
    (void)state;
    json_t *o = json_loads("{\"metadata\":{\"finalizers\":[\"x\",\"" CC_FINALIZER "\"]}}", 0, NULL);
    assert_true(kube_object_has_finalizer(o, CC_FINALIZER));
    assert_false(kube_object_has_finalizer(o, "y"));
    json_decref(o);
    o = json_loads("{\"metadata\":{}}", 0, NULL);
    assert_false(kube_object_has_finalizer(o, CC_FINALIZER));
    json_decref(o);
}

static void test_records(void **state)
{
    (void)state;
    clustercatalog_reconciler_config cfg = {.cache_dir = "/nonexistent"};
    clustercatalog_reconciler *r = clustercatalog_reconciler_new(&cfg, NULL);
    assert_non_null(r);
    clustercatalog_record rec;
    assert_false(clustercatalog_record_get(r, "a", &rec));
    char names[20][8];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "c%d", i);
        clustercatalog_record in = {.ref = names[i], .last_unpacked = i, .last_poll_ms = (uint64_t)i * 10, .generation = i};
        assert_int_equal(clustercatalog_record_set(r, names[i], &in), 0);
    }
    clustercatalog_record in = {.ref = "new", .generation = 99};
    assert_int_equal(clustercatalog_record_set(r, "c3", &in), 0);
    assert_true(clustercatalog_record_get(r, "c3", &rec));
    assert_string_equal(rec.ref, "new");
    assert_int_equal(rec.generation, 99);
    free(rec.ref);
    clustercatalog_record_drop(r, "c0");
    assert_false(clustercatalog_record_get(r, "c0", &rec));
    assert_true(clustercatalog_record_get(r, "c19", &rec));
    assert_int_equal(rec.last_poll_ms, 190);
    free(rec.ref);
    assert_false(clustercatalog_content_exists(r, "c1"));
    clustercatalog_reconciler_free(r);
}

static void test_flags(void **state)
{
    (void)state;
    catalogd_flags f;
    char msg[256];
    char *a1[] = {"catalogd", NULL};
    assert_int_equal(catalogd_flags_parse(1, a1, &f, msg, sizeof msg), 0);
    assert_string_equal(f.server_addr, "127.0.0.1:8443");
    assert_string_equal(f.cache_dir, "/var/cache/catalogd");
    assert_int_equal(f.gc_interval_ms, 12u * 3600u * 1000u);
    assert_false(f.leader_elect);
    assert_int_equal(f.pull_timeout_ms, 10u * 60u * 1000u);
    char *a7[] = {"catalogd", "--pull-timeout", "90s", NULL};
    assert_int_equal(catalogd_flags_parse(3, a7, &f, msg, sizeof msg), 0);
    assert_int_equal(f.pull_timeout_ms, 90000);
    char *a8[] = {"catalogd", "--pull-timeout=0", NULL};
    assert_int_equal(catalogd_flags_parse(2, a8, &f, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--pull-timeout"));
    char *a2[] = {"catalogd", "--cache-dir=/tmp/x", "--catalogs-server-addr", "127.0.0.1:0", "--leader-elect",
                  "--gc-interval", "90s", "--poll-interval-override-seconds=2", "--external-address", "h:1",
                  "--insecure-registries", "r:5000", "--no-access-log", NULL};
    assert_int_equal(catalogd_flags_parse(13, a2, &f, msg, sizeof msg), 0);
    assert_string_equal(f.cache_dir, "/tmp/x");
    assert_string_equal(f.server_addr, "127.0.0.1:0");
    assert_true(f.leader_elect);
    assert_int_equal(f.gc_interval_ms, 90000);
    assert_int_equal(f.poll_override_ms, 2000);
    assert_string_equal(f.external_addr, "h:1");
    assert_string_equal(f.insecure_registries, "r:5000");
    assert_false(f.access_log);
    char *a3[] = {"catalogd", "--tls-cert", "c", NULL};
    assert_int_equal(catalogd_flags_parse(3, a3, &f, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "--tls-key"));
    char *a4[] = {"catalogd", "--bogus", NULL};
    assert_int_equal(catalogd_flags_parse(2, a4, &f, msg, sizeof msg), -1);
    char *a5[] = {"catalogd", "--cache-dir", NULL};
    assert_int_equal(catalogd_flags_parse(2, a5, &f, msg, sizeof msg), -1);
    char *a6[] = {"catalogd", "--catalogs-server-addr", "nope", NULL};
    assert_int_equal(catalogd_flags_parse(3, a6, &f, msg, sizeof msg), -1);
    char host[64];
    int port;
    assert_int_equal(olm_parse_host_port(":8443", CATALOGD_ANY_HOST, host, sizeof host, &port), 0);
    assert_string_equal(host, "0.0.0.0");
    assert_int_equal(port, 8443);
    assert_int_equal(olm_parse_host_port("[::1]:9", CATALOGD_ANY_HOST, host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_condition), cmocka_unit_test(test_status_matches),
        cmocka_unit_test(test_poll_and_jitter), cmocka_unit_test(test_finalizer),
        cmocka_unit_test(test_records), cmocka_unit_test(test_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

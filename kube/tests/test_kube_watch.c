/* Tests of kube_watch_stream (the incremental event parser) and kube_watch
 * (list, paged list, watch, resume, bookmark, 410 relist with synthetic deletes,
 * back-off on server errors) against testsupport's HTTP fake (streaming mode). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_http_server.h"
#include "kube_watch.h"
#include "kube_watch_stream.h"

/* ---------------------------------------------------------------- parser */

typedef struct seen {
    char log[4096];
    int n;
    int stop_at; /* return 7 from the callback at this event number (1-based); 0: never */
} seen;

static int record_event(const char *type, json_t *obj, void *data)
{
    seen *s = data;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    size_t used = strlen(s->log);
    snprintf(s->log + used, sizeof s->log - used, "%s%s %s", used ? "," : "", type, name ? name : "?");
    s->n++;
    return s->n == s->stop_at ? 7 : 0;
}

static const char STREAM[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
    "\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"},"
    "\"data\":\"\\u00e9\\n\"}}\r\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"name\":\"\",\"resourceVersion\":\"3\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"4\"}}}\n";
static const char STREAM_LOG[] = "ADDED a,MODIFIED a,BOOKMARK ,DELETED a";

static void test_parser_whole(void **state)
{
    (void)state;
    seen s = {0};
    kube_watch_stream ws;
    kube_watch_stream_init(&ws, record_event, &s);
    olm_error err;
    assert_int_equal(kube_watch_stream_feed(&ws, STREAM, strlen(STREAM), &err), 0);
    assert_string_equal(s.log, STREAM_LOG);
    assert_int_equal(kube_watch_stream_pending(&ws), 0);
    kube_watch_stream_free(&ws);
}

/* Every two-way and many three-way cuts of the stream give the same events. */
static void test_parser_every_split(void **state)
{
    (void)state;
    size_t len = strlen(STREAM);
    olm_error err;
    for (size_t i = 0; i <= len; i++) {
        for (size_t j = i; j <= len; j += 7) {
            seen s = {0};
            kube_watch_stream ws;
            kube_watch_stream_init(&ws, record_event, &s);
            assert_int_equal(kube_watch_stream_feed(&ws, STREAM, i, &err), 0);
            assert_int_equal(kube_watch_stream_feed(&ws, STREAM + i, j - i, &err), 0);
            assert_int_equal(kube_watch_stream_feed(&ws, STREAM + j, len - j, &err), 0);
            assert_string_equal(s.log, STREAM_LOG);
            kube_watch_stream_free(&ws);
        }
    }
}

static void test_parser_byte_by_byte(void **state)
{
    (void)state;
    seen s = {0};
    kube_watch_stream ws;
    kube_watch_stream_init(&ws, record_event, &s);
    olm_error err;
    for (size_t i = 0; STREAM[i]; i++) {
        assert_int_equal(kube_watch_stream_feed(&ws, STREAM + i, 1, &err), 0);
        if (STREAM[i] != '\n')
            assert_true(kube_watch_stream_pending(&ws) > 0 || STREAM[i] == '\r' || i == 0 || STREAM[i - 1] == '\n');
    }
    assert_string_equal(s.log, STREAM_LOG);
    kube_watch_stream_free(&ws);
}

/* Nothing stays allocated between events: complete events are parsed where the caller's
 * buffer has them, and the start of an event kept for the next chunk is freed once that event
 * is complete (a long-lived watch must not keep its largest chunk's size for good). */
static void test_parser_keeps_no_buffer_between_events(void **state)
{
    (void)state;
    seen s = {0};
    kube_watch_stream ws;
    kube_watch_stream_init(&ws, record_event, &s);
    olm_error err;
    assert_int_equal(kube_watch_stream_feed(&ws, STREAM, strlen(STREAM), &err), 0);
    assert_null(ws.pending.data);
    assert_int_equal(ws.pending.cap, 0);
    /* An event cut in two: its start is kept, then released with the event. */
    size_t line = (size_t)(strchr(STREAM, '\n') - STREAM) + 1;
    assert_int_equal(kube_watch_stream_feed(&ws, STREAM, 10, &err), 0);
    assert_int_equal(kube_watch_stream_pending(&ws), 10);
    assert_int_equal(kube_watch_stream_feed(&ws, STREAM + 10, line - 10, &err), 0);
    assert_int_equal(kube_watch_stream_pending(&ws), 0);
    assert_null(ws.pending.data);
    assert_int_equal(s.n, 5);
    /* A reset (a new connection) releases it too. */
    assert_int_equal(kube_watch_stream_feed(&ws, STREAM, 10, &err), 0);
    kube_watch_stream_reset(&ws);
    assert_null(ws.pending.data);
    kube_watch_stream_free(&ws);
}

static void test_parser_errors(void **state)
{
    (void)state;
    seen s = {0};
    kube_watch_stream ws;
    kube_watch_stream_init(&ws, record_event, &s);
    olm_error err;
    assert_int_equal(kube_watch_stream_feed(&ws, "{nope}\n", 7, &err), -1);
    assert_non_null(strstr(err.msg, "not JSON"));
    assert_int_equal(kube_watch_stream_feed(&ws, "{\"object\":{}}\n", 14, &err), -1);
    assert_non_null(strstr(err.msg, "type"));
    /* After an error the parser starts clean. */
    assert_int_equal(kube_watch_stream_pending(&ws), 0);
    ws.max_line = 16;
    assert_int_equal(kube_watch_stream_feed(&ws, "{\"type\":\"ADDED\",\"object\"", 24, &err), -1);
    assert_non_null(strstr(err.msg, "larger"));
    assert_int_equal(s.n, 0);
    kube_watch_stream_free(&ws);
}

static void test_parser_callback_stops(void **state)
{
    (void)state;
    seen s = {.stop_at = 2};
    kube_watch_stream ws;
    kube_watch_stream_init(&ws, record_event, &s);
    olm_error err;
    assert_int_equal(kube_watch_stream_feed(&ws, STREAM, strlen(STREAM), &err), 7);
    assert_string_equal(s.log, "ADDED a,MODIFIED a");
    kube_watch_stream_free(&ws);
}

static void test_object_key(void **state)
{
    (void)state;
    json_t *o = json_pack("{s:{s:s, s:s}}", "metadata", "name", "n", "namespace", "ns");
    char *k = kube_object_key(o);
    assert_string_equal(k, "ns/n");
    free(k);
    json_object_del(json_object_get(o, "metadata"), "namespace");
    k = kube_object_key(o);
    assert_string_equal(k, "n");
    free(k);
    json_object_del(json_object_get(o, "metadata"), "name");
    assert_null(kube_object_key(o));
    json_decref(o);
}

/* ---------------------------------------------------------------- watch over HTTP */

#define OBJ(name, rv)                                                                                                 \
    "{\"metadata\":{\"name\":\"" name "\",\"resourceVersion\":\"" rv "\",\"managedFields\":[{\"manager\":\"m\"}]},"      \
    "\"spec\":{\"x\":1}}"

/* test_watch_scenario_metadata_only / _no_managed_fields: the same scenario with
 * keep_metadata_only / drop_managed_fields. */
static bool keep_metadata_only, drop_managed_fields;

/* The transform of test_watch_scenario_no_managed_fields: spec goes, the rest stays. */
static void drop_spec(json_t *obj)
{
    json_object_del(obj, "spec");
}
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"

typedef struct scenario {
    char targets[16][4096];
    unsigned n_targets;
    char log[4096];
    int synced;
    int errors;
    int transient_errors; /* of those, what kube_watch_error_is_transient said was */
    bool stop_at_error;   /* stop the watch at the first error */
    char first_error[512];
    uv_loop_t *loop;
    kube_uvcurl *uc;
    kube_watch *w;
    uv_timer_t guard;
    bool closed;
} scenario;

static void watch_handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    scenario *sc = user;
    pthread_mutex_lock(&c->s->lock);
    if (req->seq < 16) {
        snprintf(sc->targets[req->seq], sizeof sc->targets[0], "%s", req->target);
        sc->n_targets = req->seq + 1;
    }
    pthread_mutex_unlock(&c->s->lock);
    switch (req->seq) {
    case 0: /* LIST, first page */
        fake_http_respond(c, 200, "{\"kind\":\"List\",\"metadata\":{\"continue\":\"abc\"},\"items\":[" OBJ("a", "1") "]}");
        break;
    case 1: /* LIST, second page */
        fake_http_respond(c, 200, "{\"metadata\":{\"resourceVersion\":\"10\"},\"items\":[" OBJ("b", "2") "]}");
        break;
    case 2: /* server error: retried after back-off from the same resourceVersion */
        fake_http_respond(c, 500, "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd is sad\"}");
        break;
    case 3: /* events cut every 7 bytes, then a normal end (timeoutSeconds) */
        fake_http_chunked_begin(c, 200);
        fake_http_chunks_cut(c, EV("ADDED", OBJ("c", "11")) EV("BOOKMARK", OBJ("", "15")) EV("MODIFIED", OBJ("a", "16")), 7);
        fake_http_chunked_end(c);
        break;
    case 4: /* resumed at 16: the server has compacted it away */
        fake_http_chunked_begin(c, 200);
        fake_http_chunks_cut(c, EV("ERROR", "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}"), 4096);
        fake_http_hold_open(c);
        break;
    case 5: /* relist: b vanished, c changed, d is new, a unchanged */
        fake_http_respond(c, 200, "{\"metadata\":{\"resourceVersion\":\"30\"},\"items\":[" OBJ("a", "16") "," OBJ("c", "20") ","
                            OBJ("d", "21") "]}");
        break;
    case 6: /* 410 as an HTTP status this time */
        fake_http_respond(c, 410, "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Gone\"}");
        break;
    case 7: /* relist: nothing changed */
        fake_http_respond(c, 200, "{\"metadata\":{\"resourceVersion\":\"31\"},\"items\":[" OBJ("a", "16") "," OBJ("c", "20") ","
                            OBJ("d", "21") "]}");
        break;
    case 8: /* a delete, then the stream stays open until the client stops */
        fake_http_chunked_begin(c, 200);
        fake_http_chunks_cut(c, EV("DELETED", OBJ("d", "32")), 4096);
        fake_http_hold_open(c);
        break;
    default:
        fake_http_respond(c, 500, "{\"message\":\"unexpected request\"}");
    }
}

static void on_uc_closed(void *data)
{
    scenario *sc = data;
    sc->closed = true;
    uv_close((uv_handle_t *)&sc->guard, NULL);
}

static void on_watch_closed(void *data)
{
    scenario *sc = data;
    sc->w = NULL;
    kube_uvcurl_close(sc->uc, on_uc_closed, sc);
}

static void sc_event(kube_watch_event_type t, json_t *obj, void *data)
{
    scenario *sc = data;
    static const char *names[] = {"ADDED", "MODIFIED", "DELETED"};
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    bool has_mf = json_object_get(json_object_get(obj, "metadata"), "managedFields") != NULL;
    if (drop_managed_fields) { /* never reported, from a LIST or a watch event; nor the spec */
        assert_false(has_mf);
        assert_null(json_object_get(obj, "spec"));
    }
    else if (!keep_metadata_only || t != KUBE_WATCH_DELETED)
        assert_true(has_mf);
    size_t used = strlen(sc->log);
    snprintf(sc->log + used, sizeof sc->log - used, "%s%s %s", used ? "," : "", names[t], name);
    /* "b" vanishes at a relist: its DELETED carries what the watch kept of it. */
    if (t == KUBE_WATCH_DELETED && strcmp(name, "b") == 0) {
        assert_true((keep_metadata_only || drop_managed_fields) == !json_object_get(obj, "spec"));
        assert_string_equal(json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion")), "2");
    }
    if (t == KUBE_WATCH_DELETED && strcmp(name, "d") == 0)
        kube_watch_stop(sc->w, on_watch_closed, sc); /* stopping from inside a callback is allowed */
}

static void sc_synced(void *data)
{
    scenario *sc = data;
    sc->synced++;
    size_t used = strlen(sc->log);
    snprintf(sc->log + used, sizeof sc->log - used, ",SYNC");
}

static void sc_error(const char *msg, void *data)
{
    scenario *sc = data;
    if (kube_watch_error_is_transient(sc->w))
        sc->transient_errors++;
    if (sc->errors++ == 0)
        snprintf(sc->first_error, sizeof sc->first_error, "%s", msg);
    if (sc->stop_at_error && sc->errors == 1)
        kube_watch_stop(sc->w, on_watch_closed, sc);
}

static void on_guard(uv_timer_t *t)
{
    (void)t;
    fail_msg("watch scenario did not finish within 60 s");
}

/* Runs a watch with `o` and `h` against a fake server answering with `handler` until the
 * handlers stop it (sc_event at "DELETED d"), within 60 s. */
static void run_scenario(scenario *sc, fake_http_stream_handler handler, const kube_watch_options *o,
                         const kube_watch_handlers *h)
{
    fake_http_server srv;
    assert_int_equal(fake_http_start_streaming(&srv, handler, sc), 0);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    sc->loop = &loop;
    olm_error err;
    sc->uc = kube_uvcurl_new(&loop, &err);
    assert_non_null(sc->uc);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = srv.url;
    sc->w = kube_watch_new(sc->uc, &cfg, o, h, sc, &err);
    assert_non_null(sc->w);
    uv_timer_init(&loop, &sc->guard);
    uv_timer_start(&sc->guard, on_guard, 60000, 0);
    assert_int_equal(kube_watch_start(sc->w, &err), 0);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_true(sc->closed);
    assert_int_equal(uv_loop_close(&loop), 0);
    sc->loop = NULL;
    fake_http_stop(&srv);
}

static void test_watch_scenario(void **state)
{
    (void)state;
    scenario sc;
    memset(&sc, 0, sizeof sc);
    kube_watch_options o = {
        .path = "/api/v1/namespaces",
        .label_selector = "app=x,tier in (a,b)",
        .timeout_seconds = 30,
        .list_page_size = 1,
        .backoff_initial_ms = 10,
        .backoff_max_ms = 40,
        .keep_metadata_only = keep_metadata_only,
        .drop_managed_fields = drop_managed_fields,
        .transform = drop_managed_fields ? drop_spec : NULL,
    };
    kube_watch_handlers h = {sc_event, sc_synced, sc_error};
    run_scenario(&sc, watch_handler, &o, &h);

    assert_string_equal(sc.log, "ADDED a,ADDED b,SYNC,"          /* paged LIST */
                                "ADDED c,MODIFIED a,"            /* watch 1 (after a 500) */
                                "DELETED b,MODIFIED c,ADDED d,SYNC," /* relist after ERROR 410 */
                                "SYNC,"                          /* relist after HTTP 410 */
                                "DELETED d");
    assert_int_equal(sc.synced, 3);
    assert_true(sc.errors >= 3); /* the 500, the ERROR event, the 410 status */
    assert_int_equal(sc.transient_errors, sc.errors); /* all of them got past by the watch itself */
    /* A failed watch is reported like a failed REST call: the Status message and the code. */
    assert_string_equal(sc.first_error, "watch /api/v1/namespaces: etcd is sad (HTTP 500 Internal Server Error)");
    assert_int_equal(sc.n_targets, 9);
    /* Paged LIST with the selector URL-encoded. */
    assert_non_null(strstr(sc.targets[0], "/api/v1/namespaces?limit=1&labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29"));
    assert_null(strstr(sc.targets[0], "continue="));
    assert_non_null(strstr(sc.targets[1], "continue=abc"));
    assert_null(strstr(sc.targets[1], "watch="));
    /* Watches resume from the last resourceVersion seen (events and bookmarks). */
    const char *want[][2] = {{"2", "resourceVersion=10&"}, {"3", "resourceVersion=10&"}, {"4", "resourceVersion=16&"},
                             {"6", "resourceVersion=30&"}, {"8", "resourceVersion=31&"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *t = sc.targets[atoi(want[i][0])];
        assert_non_null(strstr(t, "watch=1&allowWatchBookmarks=true&"));
        assert_non_null(strstr(t, want[i][1]));
        assert_non_null(strstr(t, "timeoutSeconds=30"));
        assert_non_null(strstr(t, "labelSelector=app%3Dx"));
    }
    assert_null(strstr(sc.targets[5], "watch="));
    assert_null(strstr(sc.targets[7], "watch="));
}

/* A LIST refused (403: RBAC) or of a kind the apiserver does not serve (404) needs someone to
 * act: not transient, unlike a throttled one (429, e.g. the storage of a CRD just created). */
static int refusal_status;
static void refusing_handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    (void)req;
    (void)user;
    char body[160];
    snprintf(body, sizeof body, "{\"kind\":\"Status\",\"code\":%d,\"message\":\"no\"}", refusal_status);
    fake_http_respond(c, refusal_status, body);
}

static void test_error_transient_or_not(void **state)
{
    (void)state;
    const struct {
        int status;
        bool transient;
    } cases[] = {{403, false}, {404, false}, {401, false}, {429, true}, {503, true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scenario sc;
        memset(&sc, 0, sizeof sc);
        sc.stop_at_error = true;
        refusal_status = cases[i].status;
        kube_watch_options o = {.path = "/api/v1/namespaces", .backoff_initial_ms = 10, .backoff_max_ms = 40};
        kube_watch_handlers h = {sc_event, sc_synced, sc_error};
        run_scenario(&sc, refusing_handler, &o, &h);
        assert_int_equal(sc.errors, 1);
        if (sc.transient_errors != (cases[i].transient ? 1 : 0))
            fail_msg("HTTP %d: transient %d, want %d (%s)", cases[i].status, sc.transient_errors, cases[i].transient,
                     sc.first_error);
    }
    assert_true(kube_watch_status_is_transient(0));   /* no answer: a lost connection */
    assert_true(kube_watch_status_is_transient(410));
    assert_false(kube_watch_status_is_transient(400));
    assert_false(kube_watch_status_is_transient(200 + 222));
}

/* The same, keeping only the objects' identity: the same events and relist differences. */
static void test_watch_scenario_metadata_only(void **state)
{
    keep_metadata_only = true;
    test_watch_scenario(state);
    keep_metadata_only = false;
}

/* The same, dropping managedFields and (transform) the spec: the same events, none of them
 * carries either. */
static void test_watch_scenario_no_managed_fields(void **state)
{
    drop_managed_fields = true;
    test_watch_scenario(state);
    drop_managed_fields = false;
}

/* Stopping right after start (LIST in flight) releases everything. */
static void slow_handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    (void)req;
    (void)user;
    fake_http_hold_open(c);
}

static void on_stop_closed(void *data)
{
    kube_uvcurl_close(data, NULL, NULL);
}

static void test_watch_stop_during_list(void **state)
{
    (void)state;
    fake_http_server srv;
    assert_int_equal(fake_http_start_streaming(&srv, slow_handler, NULL), 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    kube_uvcurl *uc = kube_uvcurl_new(&loop, &err);
    kube_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.server = srv.url;
    kube_watch_options o = {.path = "/api/v1/pods"};
    scenario sc;
    memset(&sc, 0, sizeof sc);
    kube_watch_handlers h = {sc_event, NULL, NULL};
    kube_watch *w = kube_watch_new(uc, &cfg, &o, &h, &sc, &err);
    assert_non_null(w);
    assert_int_equal(kube_watch_start(w, &err), 0);
    uv_run(&loop, UV_RUN_NOWAIT);
    kube_watch_stop(w, on_stop_closed, uc);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    fake_http_stop(&srv);
    assert_string_equal(sc.log, "");
}


/* An event far larger than the watch's receive buffer (kube_watch.c keeps it small: one per
 * watch, thousands of watches) arrives whole, in the order sent. */
#define BIG_DATA (256 * 1024)
static char *big_event;

static void big_handler(fake_http_conn *c, const fake_http_request *req, void *user)
{
    (void)user;
    if (req->seq == 0) {
        fake_http_respond(c, 200, "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}");
        return;
    }
    if (req->seq != 1) {
        fake_http_respond(c, 500, "{\"message\":\"unexpected request\"}");
        return;
    }
    fake_http_chunked_begin(c, 200);
    fake_http_chunks_cut(c, big_event, strlen(big_event)); /* one chunk */
    fake_http_chunks_cut(c, EV("DELETED", OBJ("d", "3")), 4096);
    fake_http_hold_open(c);
}

static size_t big_len;
static bool big_intact;

static void big_seen(kube_watch_event_type t, json_t *obj, void *data)
{
    if (t == KUBE_WATCH_ADDED) {
        const char *v = json_string_value(json_object_get(json_object_get(obj, "data"), "v"));
        big_len = v ? strlen(v) : 0;
        big_intact = v != NULL;
        for (size_t i = 0; v && i < big_len; i++)
            big_intact = big_intact && v[i] == (char)('a' + i % 26);
    }
    sc_event(t, obj, data);
}

static void test_watch_event_larger_than_buffer(void **state)
{
    (void)state;
    size_t cap = BIG_DATA + 512;
    big_event = malloc(cap);
    assert_non_null(big_event);
    int off = snprintf(big_event, cap, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"big\","
                                       "\"resourceVersion\":\"2\",\"managedFields\":[{}]},\"data\":{\"v\":\"");
    for (size_t i = 0; i < BIG_DATA; i++)
        big_event[off + i] = (char)('a' + i % 26);
    snprintf(big_event + off + BIG_DATA, cap - off - BIG_DATA, "\"}}}\n");

    scenario sc;
    memset(&sc, 0, sizeof sc);
    kube_watch_options o = {.path = "/api/v1/configmaps", .timeout_seconds = 30};
    kube_watch_handlers h = {big_seen, sc_synced, sc_error};
    run_scenario(&sc, big_handler, &o, &h);
    free(big_event);
    assert_string_equal(sc.log, ",SYNC,ADDED big,DELETED d");
    assert_int_equal(big_len, BIG_DATA);
    assert_true(big_intact);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parser_whole),
        cmocka_unit_test(test_parser_every_split),
        cmocka_unit_test(test_parser_byte_by_byte),
        cmocka_unit_test(test_parser_keeps_no_buffer_between_events),
        cmocka_unit_test(test_parser_errors),
        cmocka_unit_test(test_parser_callback_stops),
        cmocka_unit_test(test_object_key),
        cmocka_unit_test(test_watch_scenario),
        cmocka_unit_test(test_error_transient_or_not),
        cmocka_unit_test(test_watch_scenario_metadata_only),
        cmocka_unit_test(test_watch_scenario_no_managed_fields),
        cmocka_unit_test(test_watch_stop_during_list),
        cmocka_unit_test(test_watch_event_larger_than_buffer),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}

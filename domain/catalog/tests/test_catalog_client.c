/* catalog_client: the §3.1 error texts, /api/v1/metas fetching through an in-process fake
 * catalogd (a handler of testsupport/fake_http_server.h),
 * caching by (catalog, ref, package), and the walk with its selector (whose semantics and
 * error texts are kube_label_selector's, tested in kube/tests/test_kube_label_selector.c;
 * test_collect checks the "desired catalog selector is invalid: " this adds). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/ssl.h>

#include "catalog.h"
#include "fake_http_server.h"

/* ------------------------------------------------------------ fake catalogd */

static const char *PKG_BLOB = "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n";
static const char *PKG_REST =
    "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"foo\",\"entries\":[{\"name\":\"foo.v1.0.0\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"foo.v1.0.0\",\"package\":\"foo\",\"image\":\"reg/foo@sha256:aa\","
    "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"foo\",\"version\":\"1.0.0\"}}]}\n";

/* The whole catalog: foo's blobs among another package's. */
static const char *ALL =
    "{\"schema\":\"olm.package\",\"name\":\"bar\"}\n"
    "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"bar\",\"entries\":[{\"name\":\"bar.v1\"}]}\n"
    "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"foo\",\"entries\":[{\"name\":\"foo.v1.0.0\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"name\":\"foo.v1.0.0\",\"package\":\"foo\",\"image\":\"reg/foo@sha256:aa\","
    "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"foo\",\"version\":\"1.0.0\"}}]}\n";

/* Catalog "lagging": a catalogd replica that answers with the content of ref ...:old for its
 * next `lagging_answers` requests, then with ...:new (the Catalog-Resolved-Ref header). */
static atomic_int lagging_answers;

/* The fake catalogd: a handler of the shared HTTP fake (testsupport/fake_http_server.h). */
static void serve(fake_http_server *s, const fake_http_request *req, fake_http_response *resp)
{
    (void)s;
    const char *t = req->target;
    resp->status = 200;
    resp->content_type = "application/jsonl";
    if (strncmp(t, "/catalogs/lagging/", 18) == 0) {
        bool old = atomic_fetch_sub(&lagging_answers, 1) > 0;
        resp->headers = old ? "Catalog-Resolved-Ref: reg/c@sha256:old\r\n" : "Catalog-Resolved-Ref: reg/c@sha256:new\r\n";
        resp->body = strstr(t, "schema=olm.package") ? PKG_BLOB : PKG_REST;
    } else if (strcmp(t, "/catalogs/good/api/v1/metas?schema=olm.package&name=foo") == 0)
        resp->body = PKG_BLOB;
    else if (strcmp(t, "/catalogs/good/api/v1/metas?package=foo") == 0)
        resp->body = PKG_REST;
    else if (strncmp(t, "/catalogs/good/api/v1/metas?", 28) == 0)
        resp->body = ""; /* another package: empty */
    else if (strcmp(t, "/catalogs/nometas/api/v1/all") == 0) /* --feature-gates APIV1MetasHandler=false */
        resp->body = ALL;
    else
        resp->status = 404, resp->content_type = "text/plain", resp->body = "404 page not found\n";
}

typedef fake_http_server fake;

static int fake_start(void **state)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(fake_http_start(f), 0);
    pthread_mutex_lock(&f->lock);
    f->handler = serve;
    pthread_mutex_unlock(&f->lock);
    *state = f;
    return 0;
}

static int fake_stop(void **state)
{
    fake *f = *state;
    fake_http_stop(f);
    free(f);
    return 0;
}

/* A ClusterCatalog object. */
static json_t *catalog(const char *name, const char *base, const char *ref, bool serving, const char *labels_json)
{
    json_t *c = json_pack("{s:{s:s}, s:{}, s:{s:[{s:s,s:s}]}}", "metadata", "name", name, "spec", "status",
                          "conditions", "type", "Serving", "status", serving ? "True" : "False");
    json_t *st = json_object_get(c, "status");
    if (ref)
        json_object_set_new(st, "resolvedSource", json_pack("{s:s,s:{s:s}}", "type", "Image", "image", "ref", ref));
    if (base)
        json_object_set_new(st, "urls", json_pack("{s:s}", "base", base));
    if (labels_json)
        json_object_set_new(json_object_get(c, "metadata"), "labels", json_loads(labels_json, 0, NULL));
    return c;
}

static char *base_of(fake *f, const char *name)
{
    char *s = NULL;
    assert_true(asprintf(&s, "http://127.0.0.1:%d/catalogs/%s", f->port, name) > 0);
    return s;
}

/* ------------------------------------------------------------ fetching */

static void expect_get_error(catalog_client *cc, json_t *cat, const char *want_prefix)
{
    catalog_package *p = NULL;
    olm_error err;
    assert_int_equal(catalog_client_get_package(cc, cat, "foo", &p, &err), -1);
    assert_null(p);
    if (strncmp(err.msg, want_prefix, strlen(want_prefix)) != 0)
        fail_msg("got %s\nwant prefix %s", err.msg, want_prefix);
}

static void test_catalog_errors(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *good = base_of(f, "good"), *missing = base_of(f, "missing");
    json_t *c = catalog("c", good, "reg/c@sha256:1", false, NULL);
    expect_get_error(cc, c, "catalog \"c\" is not being served");
    json_decref(c);
    c = catalog("c", good, NULL, true, NULL);
    expect_get_error(cc, c, "error: catalog \"c\" has a nil status.resolvedSource value");
    json_decref(c);
    c = catalog("c", missing, "reg/c@sha256:1", true, NULL);
    expect_get_error(cc, c, "error retrieving cache for catalog \"c\": error: received unexpected response status code 404");
    json_decref(c);
    /* Nothing listens on port 1 of 127.0.0.1: a transport error. */
    c = catalog("c", "http://127.0.0.1:1/catalogs/c", "reg/c@sha256:1", true, NULL);
    expect_get_error(cc, c, "error retrieving cache for catalog \"c\": Get \"http://127.0.0.1:1/catalogs/c/api/v1/metas");
    json_decref(c);
    assert_int_equal(catalog_client_cached(cc), 0); /* errors are not cached */
    free(good);
    free(missing);
    catalog_client_free(cc);
}

static void test_fetch_and_cache(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *good = base_of(f, "good");
    json_t *c = catalog("good", good, "reg/c@sha256:1", true, NULL);
    catalog_package *p;
    olm_error err;
    int before = (int)fake_http_count(f);
    assert_int_equal(catalog_client_get_package(cc, c, "foo", &p, &err), 0);
    const fbc_catalog *fbc = catalog_package_fbc(p);
    assert_int_equal(fbc->npackages, 1);
    assert_string_equal(fbc->packages[0].name, "foo");
    assert_int_equal(fbc->nbundles, 1);
    assert_string_equal(fbc->bundles[0].image, "reg/foo@sha256:aa");
    assert_int_equal((int)fake_http_count(f) - before, 2);
    /* Cached: no new request. */
    catalog_package *p2;
    assert_int_equal(catalog_client_get_package(cc, c, "foo", &p2, &err), 0);
    assert_ptr_equal(p, p2);
    assert_int_equal((int)fake_http_count(f) - before, 2);
    catalog_package_release(p2);
    /* A new resolved ref fetches again and drops the old entry (still held by us). */
    json_t *c2 = catalog("good", good, "reg/c@sha256:2", true, NULL);
    assert_int_equal(catalog_client_get_package(cc, c2, "foo", &p2, &err), 0);
    assert_ptr_not_equal(p, p2);
    assert_int_equal((int)fake_http_count(f) - before, 4);
    assert_int_equal(catalog_client_cached(cc), 1);
    assert_string_equal(catalog_package_fbc(p)->packages[0].name, "foo"); /* still valid */
    catalog_package_release(p);
    catalog_package_release(p2);
    /* An absent package is an empty FBC, not an error. */
    assert_int_equal(catalog_client_get_package(cc, c2, "bar", &p, &err), 0);
    assert_int_equal(catalog_package_fbc(p)->nbundles, 0);
    catalog_package_release(p);
    /* An uninstalled extension's package is dropped (from every catalog), the others stay. */
    assert_int_equal(catalog_client_cached(cc), 2);
    catalog_client_forget_package(cc, "bar");
    assert_int_equal(catalog_client_cached(cc), 1);
    catalog_client_forget_package(cc, "never-fetched");
    assert_int_equal(catalog_client_cached(cc), 1);
    before = (int)fake_http_count(f);
    assert_int_equal(catalog_client_get_package(cc, c2, "foo", &p, &err), 0); /* still cached */
    assert_int_equal((int)fake_http_count(f) - before, 0);
    catalog_package_release(p);
    catalog_client_forget(cc, "good");
    assert_int_equal(catalog_client_cached(cc), 0);
    /* Forgotten from the index too: fetched again, not found there (freed) */
    before = (int)fake_http_count(f);
    assert_int_equal(catalog_client_get_package(cc, c2, "foo", &p, &err), 0);
    assert_int_equal((int)fake_http_count(f) - before, 2);
    assert_int_equal(catalog_client_cached(cc), 1);
    catalog_package_release(p);
    json_decref(c);
    json_decref(c2);
    free(good);
    catalog_client_free(cc);
}

/* More packages than the cache's index has buckets (so chains of several): every one found
 * again without a request, every other one forgotten from the middle of its chain. */
static void test_cache_many_packages(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *good = base_of(f, "good");
    json_t *c = catalog("good", good, "reg/c@sha256:1", true, NULL);
    enum { N = 1500 };
    char name[32];
    catalog_package *p;
    olm_error err;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "pkg-%d", i);
        assert_int_equal(catalog_client_get_package(cc, c, name, &p, &err), 0);
        catalog_package_release(p);
    }
    assert_int_equal(catalog_client_cached(cc), N);
    for (int i = 0; i < N; i += 2) {
        snprintf(name, sizeof name, "pkg-%d", i);
        catalog_client_forget_package(cc, name);
    }
    assert_int_equal(catalog_client_cached(cc), N / 2);
    int before = (int)fake_http_count(f);
    for (int i = 1; i < N; i += 2) {
        snprintf(name, sizeof name, "pkg-%d", i);
        assert_int_equal(catalog_client_get_package(cc, c, name, &p, &err), 0);
        catalog_package_release(p);
    }
    assert_int_equal((int)fake_http_count(f) - before, 0);
    snprintf(name, sizeof name, "pkg-%d", 0);
    assert_int_equal(catalog_client_get_package(cc, c, name, &p, &err), 0); /* forgotten: fetched */
    catalog_package_release(p);
    assert_int_equal((int)fake_http_count(f) - before, 2);
    json_decref(c);
    free(good);
    catalog_client_free(cc);
}

static void get_and_release(catalog_client *cc, const json_t *cat, const char *package)
{
    catalog_package *p = NULL;
    olm_error err;
    assert_int_equal(catalog_client_get_package(cc, cat, package, &p, &err), 0);
    catalog_package_release(p);
}

/* A catalog's new ref drops that catalog's entries of other refs, whichever ref came before
 * (a racing fetch may bring an older one back), and never another catalog's entries. */
static void test_new_ref_drops_only_that_catalogs_older_entries(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *good = base_of(f, "good");
    json_t *a1 = catalog("a", good, "reg/a@sha256:1", true, NULL), *a2 = catalog("a", good, "reg/a@sha256:2", true, NULL);
    json_t *b1 = catalog("b", good, "reg/b@sha256:1", true, NULL);
    get_and_release(cc, a1, "x");
    get_and_release(cc, a1, "y");
    get_and_release(cc, b1, "x");
    assert_int_equal(catalog_client_cached(cc), 3);
    get_and_release(cc, a2, "x"); /* a@1's two go */
    assert_int_equal(catalog_client_cached(cc), 2);
    get_and_release(cc, a2, "y");
    assert_int_equal(catalog_client_cached(cc), 3);
    get_and_release(cc, a1, "x"); /* back to ref 1: a@2's two go */
    assert_int_equal(catalog_client_cached(cc), 2);
    catalog_client_forget(cc, "a");
    assert_int_equal(catalog_client_cached(cc), 1);
    get_and_release(cc, a2, "x");
    get_and_release(cc, a1, "y"); /* after a forget, a ref change still drops the other ref */
    assert_int_equal(catalog_client_cached(cc), 2);
    size_t before = fake_http_count(f);
    get_and_release(cc, b1, "x"); /* b's entry stayed through all of a's changes */
    assert_int_equal(fake_http_count(f) - before, 0);
    json_decref(a1);
    json_decref(a2);
    json_decref(b1);
    free(good);
    catalog_client_free(cc);
}

/* A catalogd replica still serving the content of a ref the ClusterCatalog's status no longer
 * names (a follower that has not pulled the leader's new digest yet): its answer is not taken
 * as the new ref's content, nor cached under it; one that has caught up is. */
static void test_replica_behind(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *base = base_of(f, "lagging");
    json_t *c = catalog("lagging", base, "reg/c@sha256:new", true, NULL);
    catalog_package *p = NULL;
    olm_error err;

    atomic_store(&lagging_answers, 1000); /* behind all along: an error, nothing cached */
    size_t before = fake_http_count(f);
    assert_int_equal(catalog_client_get_package(cc, c, "foo", &p, &err), -1);
    assert_null(p);
    if (!strstr(err.msg, "serves reg/c@sha256:old, not yet reg/c@sha256:new"))
        fail_msg("got %s", err.msg);
    assert_int_equal(fake_http_count(f) - before, 3); /* the first GET of each of 3 attempts */
    assert_int_equal(catalog_client_cached(cc), 0);

    atomic_store(&lagging_answers, 1); /* caught up by the second attempt */
    before = fake_http_count(f);
    assert_int_equal(catalog_client_get_package(cc, c, "foo", &p, &err), 0);
    assert_int_equal(catalog_package_fbc(p)->nbundles, 1);
    assert_int_equal(fake_http_count(f) - before, 3);
    assert_int_equal(catalog_client_cached(cc), 1);
    catalog_package_release(p);

    /* The old ref's content, asked for by its own ref (a client whose informer is behind), is taken. */
    json_t *old = catalog("lagging", base, "reg/c@sha256:old", true, NULL);
    atomic_store(&lagging_answers, 1000);
    assert_int_equal(catalog_client_get_package(cc, old, "foo", &p, &err), 0);
    catalog_package_release(p);
    json_decref(old);
    json_decref(c);
    free(base);
    catalog_client_free(cc);
}

/* A catalogd without /metas (upstream's standard manifest turns it off): the package is
 * taken out of /api/v1/all, as upstream's client always does. */
static void test_fetch_without_metas(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *base = base_of(f, "nometas");
    json_t *c = catalog("nometas", base, "reg/c@sha256:2", true, NULL);
    catalog_package *p;
    olm_error err;
    assert_int_equal(catalog_client_get_package(cc, c, "foo", &p, &err), 0);
    const fbc_catalog *fbc = catalog_package_fbc(p);
    assert_int_equal(fbc->npackages, 1);
    assert_string_equal(fbc->packages[0].name, "foo");
    assert_int_equal(fbc->nchannels, 1);
    assert_int_equal(fbc->nbundles, 1);
    catalog_package_release(p);
    json_decref(c);
    free(base);
    catalog_client_free(cc);
}

static void test_collect(void **state)
{
    fake *f = *state;
    catalog_client *cc = catalog_client_new(NULL, NULL);
    char *good = base_of(f, "good");
    json_t *cats = json_array();
    json_t *z = catalog("zeta", good, "reg/z@sha256:1", true, "{\"tier\":\"prod\"}");
    json_object_set_new(json_object_get(z, "spec"), "priority", json_integer(7));
    json_array_append_new(cats, z);
    json_array_append_new(cats, catalog("alpha", good, NULL, true, "{\"tier\":\"prod\"}"));
    json_t *u = catalog("mid", good, "reg/m@sha256:1", false, "{\"tier\":\"prod\"}");
    json_object_set_new(json_object_get(u, "spec"), "availabilityMode", json_string("Unavailable"));
    json_array_append_new(cats, u);
    json_array_append_new(cats, catalog("dev", good, "reg/d@sha256:1", true, "{\"tier\":\"dev\"}"));
    json_t *sel = json_loads("{\"matchLabels\":{\"tier\":\"prod\"}}", 0, NULL);
    catalog_set s;
    olm_error err;
    assert_int_equal(catalog_client_collect(cc, cats, sel, "foo", &s, &err), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.matched, 3);
    assert_string_equal(s.items[0].name, "alpha");
    assert_string_equal(s.items[0].fetch_error, "error: catalog \"alpha\" has a nil status.resolvedSource value");
    assert_string_equal(s.items[1].name, "mid");
    assert_true(s.items[1].unavailable);
    assert_null(s.items[1].fetch_error);
    assert_string_equal(s.items[2].name, "zeta");
    assert_int_equal(s.items[2].priority, 7);
    assert_non_null(s.items[2].fbc);
    assert_null(s.items[2].fetch_error);
    catalog_set_free(&s);
    json_decref(sel);
    sel = json_loads("{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"Bogus\"}]}", 0, NULL);
    assert_int_equal(catalog_client_collect(cc, cats, sel, "foo", &s, &err), -1);
    assert_non_null(strstr(err.msg, "desired catalog selector is invalid: "));
    json_decref(sel);
    /* No selector: all four. */
    assert_int_equal(catalog_client_collect(cc, cats, NULL, "foo", &s, &err), 0);
    assert_int_equal(s.n, 4);
    catalog_set_free(&s);
    json_decref(cats);
    free(good);
    catalog_client_free(cc);
}

/* ------------------------------------------------------------ TLS profile */

/* operator-controller's --tls-profile decides what its requests to catalogd offer, as
 * upstream's client follows it: "modern" (TLS 1.3 only) cannot talk to a TLS 1.2 server,
 * "intermediate" (the default) can. */
static void test_tls_profile(void **state)
{
    (void)state;
    /* An old catalogd: TLS 1.2 at most (the shared HTTP fake, serving no catalog there). */
    fake_http_server old;
    assert_int_equal(fake_http_start_tls_max(&old, TLS_FIXTURES "/server.crt", TLS_FIXTURES "/server.key",
                                             TLS1_2_VERSION),
                     0);
    pthread_mutex_lock(&old.lock);
    old.handler = serve;
    pthread_mutex_unlock(&old.lock);
    olm_error err;
    olm_ca_set *cas = olm_ca_set_new(&err);
    assert_int_equal(olm_ca_set_add_file(cas, TLS_FIXTURES "/server.crt", &err), 0);
    char base[128];
    snprintf(base, sizeof base, "%s/catalogs/c", old.url);
    json_t *cat = catalog("c", base, "reg/c@sha256:1", true, NULL);
    char msg[64];
    for (int modern = 0; modern <= 1; modern++) {
        olm_tls_profile p;
        assert_int_equal(olm_tls_profile_from_flags(modern ? "modern" : "intermediate", NULL, NULL, NULL, &p, msg,
                                                    sizeof msg),
                         0);
        catalog_client_options o = {.cas = cas, .tls = &p, .timeout_seconds = 10};
        catalog_client *cc = catalog_client_new(&o, &err);
        catalog_package *pkg = NULL;
        assert_int_equal(catalog_client_get_package(cc, cat, "foo", &pkg, &err), -1); /* no catalog "c" there */
        bool handshake_failed = strstr(err.msg, "SSL") || strstr(err.msg, "alert") || strstr(err.msg, "TLS");
        if (handshake_failed != (modern == 1))
            fail_msg("profile %s: %s", modern ? "modern" : "intermediate", err.msg);
        catalog_client_free(cc);
    }
    json_decref(cat);
    olm_ca_set_free(cas);
    fake_http_stop(&old);
}

/* ------------------------------------------------------------ keep-alive */

/* A catalogd that keeps connections open (HTTP/1.1 keep-alive, as catalogd's h2o does) and
 * counts the connections it accepted: testsupport's fake closes each one. */
typedef struct keepalive_server {
    int lfd, port;
    pthread_t thread;
    pthread_mutex_t lock;
    int accepted;
} keepalive_server;

static void *keepalive_main(void *arg)
{
    keepalive_server *k = arg;
    struct pollfd fds[9];
    char buf[8192];
    int n = 1;
    fds[0] = (struct pollfd){.fd = k->lfd, .events = POLLIN};
    for (;;) {
        if (poll(fds, (nfds_t)n, -1) < 0)
            return NULL;
        if (fds[0].revents) {
            int c = accept(k->lfd, NULL, NULL);
            if (c < 0) { /* the test shut the listener down */
                for (int i = 1; i < n; i++)
                    close(fds[i].fd);
                return NULL;
            }
            pthread_mutex_lock(&k->lock);
            k->accepted++;
            pthread_mutex_unlock(&k->lock);
            if (n < 9) {
                fds[n++] = (struct pollfd){.fd = c, .events = POLLIN};
            } else {
                close(c);
            }
        }
        for (int i = 1; i < n; i++) {
            if (!fds[i].revents)
                continue;
            /* one request at a time per connection: headers only (GETs) */
            ssize_t r = read(fds[i].fd, buf, sizeof buf - 1);
            if (r <= 0) {
                close(fds[i].fd);
                fds[i--] = fds[--n];
                continue;
            }
            buf[r] = 0;
            const char *body = strstr(buf, "name=foo") ? PKG_BLOB : strstr(buf, "package=foo") ? PKG_REST : "";
            char resp[1024];
            int len = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Type: application/jsonl\r\n"
                               "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
            assert_int_equal(write(fds[i].fd, resp, (size_t)len), len);
        }
    }
}

static int keepalive_accepted(keepalive_server *k)
{
    pthread_mutex_lock(&k->lock);
    int n = k->accepted;
    pthread_mutex_unlock(&k->lock);
    return n;
}

/* Consecutive fetches reuse one connection to catalogd (over https a new connection is a
 * handshake and a CA store load: tens of ms of CPU per resolution); close_idle closes it. */
static void test_connection_reuse(void **state)
{
    (void)state;
    keepalive_server k = {0};
    pthread_mutex_init(&k.lock, NULL);
    k.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(k.lfd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(k.lfd, (struct sockaddr *)&a, &al), 0);
    assert_int_equal(listen(k.lfd, 8), 0);
    assert_int_equal(pthread_create(&k.thread, NULL, keepalive_main, &k), 0);
    char base[96];
    snprintf(base, sizeof base, "http://127.0.0.1:%d/catalogs/c", ntohs(a.sin_port));
    catalog_client *cc = catalog_client_new(NULL, NULL);
    olm_error err;
    for (int i = 0; i < 3; i++) { /* three refs: three fetches of two requests each */
        char ref[64];
        snprintf(ref, sizeof ref, "reg/c@sha256:%d", i);
        json_t *c = catalog("c", base, ref, true, NULL);
        catalog_package *p = NULL;
        assert_int_equal(catalog_client_get_package(cc, c, "foo", &p, &err), 0);
        assert_string_equal(catalog_package_fbc(p)->packages[0].name, "foo");
        catalog_package_release(p);
        json_decref(c);
    }
    assert_int_equal(keepalive_accepted(&k), 1);
    catalog_client_close_idle(cc);
    json_t *c = catalog("c", base, "reg/c@sha256:new", true, NULL);
    catalog_package *p = NULL;
    assert_int_equal(catalog_client_get_package(cc, c, "foo", &p, &err), 0);
    catalog_package_release(p);
    json_decref(c);
    assert_int_equal(keepalive_accepted(&k), 2);
    catalog_client_free(cc);
    shutdown(k.lfd, SHUT_RDWR);
    pthread_join(k.thread, NULL);
    close(k.lfd);
    pthread_mutex_destroy(&k.lock);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_errors),
        cmocka_unit_test(test_fetch_and_cache),
        cmocka_unit_test(test_cache_many_packages),
        cmocka_unit_test(test_new_ref_drops_only_that_catalogs_older_entries),
        cmocka_unit_test(test_fetch_without_metas),
        cmocka_unit_test(test_replica_behind),
        cmocka_unit_test(test_collect),
        cmocka_unit_test(test_tls_profile),
        cmocka_unit_test(test_connection_reuse),
    };
    int rc = cmocka_run_group_tests(tests, fake_start, fake_stop);
    curl_global_cleanup();
    return rc;
}

/* catalog_server over real sockets: every rule of shared/spec/olmv1-behaviour.md §4.4
 * exercised with libcurl against a server on 127.0.0.1:<ephemeral>, plus hostile inputs
 * over raw sockets and TLS.  No assertion depends on timing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <zlib.h>

#include "catalog_http_util.h"
#include "catalog_server_internal.h" /* the gate switches, flipped on the loop thread */
#include "catalog_store.h"
#include "server_fixture.h"
#include "strbuf.h"

static const char SMALL[] =
    "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"foo\",\"name\":\"stable\",\"entries\":[{\"name\":\"foo.v1\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"foo\",\"name\":\"foo.v1\",\"image\":\"x\",\"properties\":[]}\n"
    "{\"schema\":\"olm.package\",\"name\":\"bar\"}\n";

#define LIT(s) (s), (sizeof(s) - 1)
#define SAMPLE_PKG "gpu-operator-certified"

typedef struct world {
    char root[256];
    fbc_catalog *sample; /* sample20, loaded once */
    store_view *sample_view;
    srv_fixture *fx;
    int port;
    FILE *access_log; /* of fx */
} world;

static world W;

/* ---- HTTP client helpers ------------------------------------------------------------ */

typedef struct resp {
    long code;
    strbuf body;
    strbuf headers; /* raw header block of the final response */
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    return strbuf_append(ud, p, sz * n) == 0 ? sz * n : 0;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    strbuf *h = ud;
    if (sz * n > 5 && strncmp(p, "HTTP/", 5) == 0)
        strbuf_reset(h); /* a new response (e.g. after 100-continue): keep only the last */
    return strbuf_append(h, p, sz * n) == 0 ? sz * n : 0;
}

/* One request on a fresh connection (closed before returning, so the server can drain). */
static void request(resp *r, const char *method, const char *target, const char *const *hdrs)
{
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    char url[70000];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", W.port, target);
    struct curl_slist *list = NULL;
    for (size_t i = 0; hdrs && hdrs[i]; i++)
        list = curl_slist_append(list, hdrs[i]);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET") != 0)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK)
        fail_msg("%s %s: %s", method, target, curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
    curl_slist_free_all(list);
    curl_easy_cleanup(c);
}

static void resp_free(resp *r)
{
    strbuf_free(&r->body);
    strbuf_free(&r->headers);
}

/* The value of header `name` (case-insensitive) in a malloc'd string, or NULL. */
static char *header(const resp *r, const char *name)
{
    const char *p = strbuf_str(&r->headers);
    size_t nl = strlen(name);
    while ((p = strchr(p, '\n')) != NULL) {
        p++;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t len = strcspn(v, "\r\n");
            return strndup(v, len);
        }
    }
    return NULL;
}

static void assert_header(const resp *r, const char *name, const char *want)
{
    char *v = header(r, name);
    if (!want) {
        if (v)
            fail_msg("unexpected header %s: %s", name, v);
        return;
    }
    if (!v)
        fail_msg("missing header %s (want %s)", name, want);
    assert_string_equal(v, want);
    free(v);
}

static void expect(const resp *r, long code, const char *body)
{
    if (r->code != code)
        fail_msg("status %ld, want %ld (body %.200s)", r->code, code, strbuf_str(&r->body));
    if (body)
        assert_string_equal(strbuf_str(&r->body), body);
}

/* Concatenation of the normalised lines of the metas that pass the filter, in file order:
 * the expected /metas body computed independently of the index. */
static char *expected_metas(const fbc_catalog *c, const char *schema, const char *package, const char *name)
{
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < c->nmetas; i++) {
        const fbc_meta *m = &c->metas[i];
        if (schema && strcmp(m->schema, schema) != 0)
            continue;
        if (!schema && !*m->schema)
            continue;
        if (package && strcmp(m->package, package) != 0)
            continue;
        if (name && strcmp(m->name, name) != 0)
            continue;
        assert_int_equal(strbuf_append(&sb, m->line, m->line_len), 0);
    }
    return strbuf_detach(&sb);
}

static const char *shared_dir(void)
{
    const char *s = getenv("OLMV1_SHARED");
    return s && *s ? s : "../../../shared";
}

static void set_catalog(catalog_server *srv, void *arg)
{
    store_view *v = arg;
    assert_int_equal(catalog_server_set_catalog(srv, store_view_name(v), v), 0);
}

/* ---- setup ---------------------------------------------------------------------------- */

static void store_text(const char *name, const char *text)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(text, strlen(text), name, &err);
    assert_non_null(c);
    assert_int_equal(store_write(W.root, name, c, NULL, &err), 0);
    assert_int_equal(store_add_gzip(W.root, name, &err), 1);
    fbc_catalog_free(c);
    store_view *v = store_open(W.root, name, &err);
    assert_non_null(v);
    fixture_call(W.fx, set_catalog, v);
    store_view_release(v);
}

static int group_setup(void **state)
{
    (void)state;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    snprintf(W.root, sizeof W.root, "/tmp/catalogd-server-XXXXXX");
    assert_non_null(mkdtemp(W.root));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs-small/sample20", shared_dir());
    olm_error err;
    W.sample = fbc_load_dir(dir, &err);
    if (!W.sample)
        fail_msg("load %s: %s", dir, err.msg);
    assert_int_equal(store_write(W.root, "sample20", W.sample, NULL, &err), 0);
    assert_int_equal(store_add_gzip(W.root, "sample20", &err), 1);
    W.sample_view = store_open(W.root, "sample20", &err);
    assert_non_null(W.sample_view);
    W.access_log = tmpfile();
    assert_non_null(W.access_log);
    W.fx = fixture_start(NULL, NULL, W.access_log);
    W.port = fixture_port(W.fx);
    fixture_call(W.fx, set_catalog, W.sample_view);
    store_text("small", SMALL);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    fixture_stop(W.fx);
    fclose(W.access_log);
    store_view_release(W.sample_view);
    fbc_catalog_free(W.sample);
    store_remove_tree(W.root);
    curl_global_cleanup();
    return 0;
}

/* ---- /all ----------------------------------------------------------------------------- */

static void test_all_is_the_render(void **state)
{
    (void)state;
    resp r;
    request(&r, "GET", "/catalogs/sample20/api/v1/all", NULL);
    expect(&r, 200, NULL);
    /* Byte for byte what `olmv1 catalog render` prints: the normalised lines in load order. */
    char *want = expected_metas(W.sample, NULL, NULL, NULL);
    assert_int_equal(r.body.len, strlen(want));
    assert_memory_equal(r.body.data, want, r.body.len);
    free(want);
    assert_header(&r, "content-type", "application/jsonl");
    assert_header(&r, "accept-ranges", "bytes");
    assert_header(&r, "vary", "Accept-Encoding");
    assert_header(&r, "content-encoding", NULL);
    char len[32], lm[40];
    snprintf(len, sizeof len, "%zu", store_view_size(W.sample_view));
    assert_header(&r, "content-length", len);
    catalog_http_format_time(store_view_mtime(W.sample_view), lm);
    assert_header(&r, "last-modified", lm);
    resp_free(&r);
}

/* Optional cross-check with the CLI when it has been built beside us. */
static void test_all_equals_cli_render(void **state)
{
    (void)state;
    const char *cli = getenv("OLMV1_CLI");
    if (!cli || access(cli, X_OK) != 0)
        skip();
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s catalog render %s/data/catalogs-small/sample20", cli, shared_dir());
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    strbuf out = STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        assert_int_equal(strbuf_append(&out, buf, n), 0);
    assert_int_equal(pclose(p), 0);
    resp r;
    request(&r, "GET", "/catalogs/sample20/api/v1/all", NULL);
    assert_int_equal(r.body.len, out.len);
    assert_memory_equal(r.body.data, out.data, out.len);
    strbuf_free(&out);
    resp_free(&r);
}

static void test_head_has_no_body(void **state)
{
    (void)state;
    resp r;
    request(&r, "HEAD", "/catalogs/sample20/api/v1/all", NULL);
    expect(&r, 200, "");
    char len[32];
    snprintf(len, sizeof len, "%zu", store_view_size(W.sample_view));
    assert_header(&r, "content-length", len);
    assert_header(&r, "content-type", "application/jsonl");
    resp_free(&r);
    request(&r, "HEAD", "/catalogs/sample20/api/v1/metas?package=" SAMPLE_PKG, NULL);
    expect(&r, 200, "");
    assert_header(&r, "content-type", "application/jsonl");
    assert_non_null(strstr(strbuf_str(&r.headers), "ast-modified: "));
    resp_free(&r);
}

static char *gunzip(const resp *r, size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    size_t cap = 64 << 20;
    char *out = malloc(cap);
    z.next_in = (Bytef *)r->body.data;
    z.avail_in = (uInt)r->body.len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    *outlen = z.total_out;
    inflateEnd(&z);
    return out;
}

static void test_gzip(void **state)
{
    (void)state;
    const char *h[] = {"Accept-Encoding: gzip", NULL};
    resp r;
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h);
    expect(&r, 200, NULL);
    assert_header(&r, "content-encoding", "gzip");
    assert_header(&r, "vary", "Accept-Encoding");
    assert_header(&r, "content-type", "application/jsonl");
    assert_true(r.body.len < store_view_size(W.sample_view));
    size_t n;
    char *plain = gunzip(&r, &n);
    assert_int_equal(n, store_view_size(W.sample_view));
    assert_memory_equal(plain, store_view_data(W.sample_view), n);
    free(plain);
    resp_free(&r);

    /* /metas too, even without a Content-Length. */
    request(&r, "GET", "/catalogs/sample20/api/v1/metas?package=" SAMPLE_PKG, h);
    expect(&r, 200, NULL);
    assert_header(&r, "content-encoding", "gzip");
    plain = gunzip(&r, &n);
    char *want = expected_metas(W.sample, NULL, SAMPLE_PKG, NULL);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(plain, want, n);
    free(plain);
    free(want);
    resp_free(&r);

    /* A body under ~1 KiB is sent as is (still with Vary). */
    request(&r, "GET", "/catalogs/small/api/v1/metas?schema=olm.package&name=bar", h);
    expect(&r, 200, "{\"name\":\"bar\",\"schema\":\"olm.package\"}\n");
    assert_header(&r, "content-encoding", NULL);
    assert_header(&r, "vary", "Accept-Encoding");
    resp_free(&r);

    /* No Accept-Encoding: never compressed. */
    request(&r, "GET", "/catalogs/sample20/api/v1/metas?package=" SAMPLE_PKG, NULL);
    assert_header(&r, "content-encoding", NULL);
    resp_free(&r);
}

static void remove_named(catalog_server *srv, void *arg)
{
    catalog_server_remove_catalog(srv, arg);
}

/* The gzip form of the whole catalog is made once, when the store is written, and served
 * like the plain file (a Content-Length, bytes straight from the store): the loop never
 * compresses a catalog (it took 0.39 s of the loop per request and stalled /healthz). */
static void test_gzip_is_precompressed(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs/sample20/catalog.jsonl.gz", W.root);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    strbuf gz = STRBUF_INIT;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        assert_int_equal(strbuf_append(&gz, buf, n), 0);
    fclose(f);

    const char *h[] = {"Accept-Encoding: gzip", NULL};
    resp r;
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h);
    expect(&r, 200, NULL);
    assert_header(&r, "content-encoding", "gzip");
    assert_header(&r, "accept-ranges", "none");
    char len[32];
    snprintf(len, sizeof len, "%zu", gz.len);
    assert_header(&r, "content-length", len);
    assert_int_equal(r.body.len, gz.len);
    assert_memory_equal(r.body.data, gz.data, gz.len);
    resp_free(&r);
    /* /metas without a filter is the whole catalog too: the same bytes, streamed. */
    request(&r, "GET", "/catalogs/sample20/api/v1/metas", h);
    expect(&r, 200, NULL);
    assert_header(&r, "content-encoding", "gzip");
    assert_header(&r, "content-length", NULL);
    assert_int_equal(r.body.len, gz.len);
    assert_memory_equal(r.body.data, gz.data, gz.len);
    resp_free(&r);
    strbuf_free(&gz);
    /* HEAD, a Range and HTTP/1.0 stay as they were: the plain representation. */
    request(&r, "HEAD", "/catalogs/sample20/api/v1/all", h);
    assert_header(&r, "content-encoding", NULL);
    snprintf(len, sizeof len, "%zu", store_view_size(W.sample_view));
    assert_header(&r, "content-length", len);
    resp_free(&r);
    const char *hr[] = {"Accept-Encoding: gzip", "Range: bytes=0-9", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", hr);
    expect(&r, 206, NULL);
    assert_header(&r, "content-encoding", NULL);
    assert_int_equal(r.body.len, 10);
    resp_free(&r);

    /* A store without the gzip form (not added yet, or an older catalogd wrote it) is sent
     * plain, never compressed on the loop. */
    olm_error err;
    assert_int_equal(store_write(W.root, "nogz", W.sample, NULL, &err), 0);
    snprintf(p, sizeof p, "%s/catalogs/nogz/catalog.jsonl.gz", W.root);
    assert_int_equal(access(p, F_OK), -1);
    store_view *v = store_open(W.root, "nogz", &err);
    assert_non_null(v);
    fixture_call(W.fx, set_catalog, v);
    store_view_release(v);
    request(&r, "GET", "/catalogs/nogz/api/v1/all", h);
    expect(&r, 200, NULL);
    assert_header(&r, "content-encoding", NULL);
    assert_int_equal(r.body.len, store_view_size(W.sample_view));
    resp_free(&r);
    fixture_call(W.fx, remove_named, "nogz");
}

static void test_range(void **state)
{
    (void)state;
    const char *data = store_view_data(W.sample_view);
    size_t size = store_view_size(W.sample_view);
    char cr[80];
    resp r;
    const char *h1[] = {"Range: bytes=0-9", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h1);
    expect(&r, 206, NULL);
    assert_int_equal(r.body.len, 10);
    assert_memory_equal(r.body.data, data, 10);
    snprintf(cr, sizeof cr, "bytes 0-9/%zu", size);
    assert_header(&r, "content-range", cr);
    assert_header(&r, "content-length", "10");
    resp_free(&r);

    const char *h2[] = {"Range: bytes=-100", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h2);
    expect(&r, 206, NULL);
    assert_int_equal(r.body.len, 100);
    assert_memory_equal(r.body.data, data + size - 100, 100);
    resp_free(&r);

    /* A Range with gzip accepted: still a plain 206. */
    const char *h3[] = {"Range: bytes=5-", "Accept-Encoding: gzip", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h3);
    expect(&r, 206, NULL);
    assert_header(&r, "content-encoding", NULL);
    assert_int_equal(r.body.len, size - 5);
    assert_memory_equal(r.body.data, data + 5, size - 5);
    resp_free(&r);

    const char *h4[] = {"Range: bytes=999999999-", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h4);
    expect(&r, 416, "invalid range: failed to overlap\n");
    snprintf(cr, sizeof cr, "bytes */%zu", size);
    assert_header(&r, "content-range", cr);
    resp_free(&r);

    const char *h5[] = {"Range: bytes=9-1", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h5);
    expect(&r, 416, "invalid range\n");
    resp_free(&r);

    const char *h6[] = {"Range: bytes=0-1,4-5", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h6);
    expect(&r, 206, NULL);
    char *ct = header(&r, "content-type");
    assert_non_null(ct);
    assert_true(strncmp(ct, "multipart/byteranges; boundary=", 31) == 0);
    char part[200];
    snprintf(part, sizeof part, "--%s\r\nContent-Range: bytes 0-1/%zu\r\nContent-Type: application/jsonl\r\n\r\n%.2s\r\n",
             ct + 31, size, data);
    assert_true(strncmp(strbuf_str(&r.body), part, strlen(part)) == 0);
    free(ct);
    resp_free(&r);

    /* If-Range with another date: the Range is ignored. */
    const char *h7[] = {"Range: bytes=0-9", "If-Range: Sun, 06 Nov 1994 08:49:37 GMT", NULL};
    request(&r, "GET", "/catalogs/sample20/api/v1/all", h7);
    expect(&r, 200, NULL);
    assert_int_equal(r.body.len, size);
    resp_free(&r);

    /* /metas has no Range support. */
    request(&r, "GET", "/catalogs/sample20/api/v1/metas?package=" SAMPLE_PKG, h1);
    expect(&r, 200, NULL);
    assert_true(r.body.len > 10);
    resp_free(&r);
}

/* Every content answer names the digest its content came from (Catalog-Resolved-Ref), so a
 * client that read a newer ref in the ClusterCatalog's status knows a replica that has not
 * caught up; a store written without a source sends none. */
static void test_resolved_ref_header(void **state)
{
    (void)state;
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(SMALL, strlen(SMALL), "sourced", &err);
    assert_non_null(c);
    assert_int_equal(store_write(W.root, "sourced", c, "reg/sourced@sha256:abc", &err), 0);
    fbc_catalog_free(c);
    store_view *v = store_open(W.root, "sourced", &err);
    assert_non_null(v);
    fixture_call(W.fx, set_catalog, v);
    store_view_release(v);
    const char *paths[] = {"/catalogs/sourced/api/v1/all", "/catalogs/sourced/api/v1/metas?schema=olm.package",
                           "/catalogs/sample20/api/v1/all"};
    for (int i = 0; i < 3; i++) {
        resp r;
        request(&r, "GET", paths[i], NULL);
        expect(&r, 200, NULL);
        assert_header(&r, "catalog-resolved-ref", i < 2 ? "reg/sourced@sha256:abc" : NULL);
        resp_free(&r);
    }
    fixture_call(W.fx, remove_named, "sourced");
    store_delete(W.root, "sourced", &err);
}

static void test_conditionals(void **state)
{
    (void)state;
    char lm[40], ims[80], old[] = "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT";
    catalog_http_format_time(store_view_mtime(W.sample_view), lm);
    snprintf(ims, sizeof ims, "If-Modified-Since: %s", lm);
    const char *paths[] = {"/catalogs/sample20/api/v1/all", "/catalogs/sample20/api/v1/metas?package=" SAMPLE_PKG};
    for (int i = 0; i < 2; i++) {
        resp r;
        const char *h1[] = {ims, NULL};
        request(&r, "GET", paths[i], h1);
        expect(&r, 304, "");
        assert_header(&r, "last-modified", lm);
        assert_header(&r, "content-type", NULL);
        assert_header(&r, "content-length", NULL);
        resp_free(&r);

        const char *h2[] = {"If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT", NULL};
        request(&r, "GET", paths[i], h2);
        expect(&r, 200, NULL);
        assert_true(r.body.len > 0);
        resp_free(&r);

        const char *h3[] = {old, NULL};
        request(&r, "GET", paths[i], h3);
        expect(&r, 412, "");
        resp_free(&r);

        char ius[80];
        snprintf(ius, sizeof ius, "If-Unmodified-Since: %s", lm);
        const char *h4[] = {ius, NULL};
        request(&r, "GET", paths[i], h4);
        expect(&r, 200, NULL);
        resp_free(&r);

        const char *h5[] = {"If-None-Match: *", NULL};
        request(&r, "HEAD", paths[i], h5);
        expect(&r, 304, "");
        resp_free(&r);

        const char *h6[] = {"If-Match: \"abc\"", NULL};
        request(&r, "GET", paths[i], h6);
        expect(&r, 412, "");
        resp_free(&r);
    }
    resp r;
    /* /metas: any If-None-Match is a 304; /all only matches "*". */
    const char *h7[] = {"If-None-Match: \"v1\"", NULL};
    request(&r, "GET", paths[1], h7);
    expect(&r, 304, "");
    resp_free(&r);
    request(&r, "GET", paths[0], h7);
    expect(&r, 200, NULL);
    resp_free(&r);
    /* A malformed If-Modified-Since: ignored by /all, a 500 from /metas. */
    const char *h8[] = {"If-Modified-Since: yesterday", NULL};
    request(&r, "GET", paths[0], h8);
    expect(&r, 200, NULL);
    resp_free(&r);
    request(&r, "GET", paths[1], h8);
    expect(&r, 500, "500 Internal Server Error\n");
    resp_free(&r);
}

/* ---- /metas --------------------------------------------------------------------------- */

static void check_metas(const char *query, const char *schema, const char *package, const char *name)
{
    char target[512];
    snprintf(target, sizeof target, "/catalogs/sample20/api/v1/metas%s", query);
    resp r;
    request(&r, "GET", target, NULL);
    expect(&r, 200, NULL);
    char *want = expected_metas(W.sample, schema, package, name);
    if (r.body.len != strlen(want) || memcmp(strbuf_str(&r.body), want, r.body.len) != 0)
        fail_msg("%s: got %zu bytes, want %zu", query, r.body.len, strlen(want));
    assert_header(&r, "content-type", "application/jsonl");
    assert_header(&r, "content-length", NULL); /* streamed, like upstream */
    free(want);
    resp_free(&r);
}

static void test_metas_selection(void **state)
{
    (void)state;
    check_metas("", NULL, NULL, NULL);
    check_metas("?package=" SAMPLE_PKG, NULL, SAMPLE_PKG, NULL);
    check_metas("?schema=olm.bundle&package=" SAMPLE_PKG, "olm.bundle", SAMPLE_PKG, NULL);
    check_metas("?schema=olm.channel&package=" SAMPLE_PKG "&name=stable", "olm.channel", SAMPLE_PKG, "stable");
    check_metas("?name=stable", NULL, NULL, "stable");
    check_metas("?schema=olm.package&name=" SAMPLE_PKG, "olm.package", NULL, SAMPLE_PKG);
    check_metas("?schema=olm.package", "olm.package", NULL, NULL);
    check_metas("?package=no-such-package", NULL, "no-such-package", NULL);
    check_metas("?schema=&package=&name=", NULL, NULL, NULL);                 /* empty = unfiltered */
    check_metas("?package=" SAMPLE_PKG "&package=other", NULL, SAMPLE_PKG, NULL); /* first wins */
    check_metas("?sch%65ma=olm.package", "olm.package", NULL, NULL);           /* escaped key */
    check_metas("?schema=olm.package&bad%zz=1", "olm.package", NULL, NULL);    /* bad pair dropped */

    /* ?package=foo never returns the olm.package blob (it has no package key). */
    resp r;
    request(&r, "GET", "/catalogs/small/api/v1/metas?package=foo", NULL);
    expect(&r, 200, NULL);
    assert_null(strstr(strbuf_str(&r.body), "olm.package"));
    assert_non_null(strstr(strbuf_str(&r.body), "olm.channel"));
    assert_non_null(strstr(strbuf_str(&r.body), "olm.bundle"));
    resp_free(&r);
    request(&r, "GET", "/catalogs/small/api/v1/metas?schema=olm.package&name=foo", NULL);
    expect(&r, 200, "{\"defaultChannel\":\"stable\",\"name\":\"foo\",\"schema\":\"olm.package\"}\n");
    resp_free(&r);
}

static void set_gates(catalog_server *srv, void *arg)
{
    const bool *g = arg; /* {no_metas, graphql_501} */
    srv->no_metas = g[0];
    srv->graphql_501 = g[1];
}

/* --feature-gates APIV1MetasHandler=false: no /metas route, as upstream without the gate;
 * GraphQLCatalogQueries=true (not built): 501 with what to use instead.  /all stays. */
static void test_feature_gates(void **state)
{
    (void)state;
    resp r;
    request(&r, "GET", "/catalogs/small/api/v1/graphql", NULL);
    expect(&r, 404, NULL);
    resp_free(&r);
    bool gates[2] = {true, true};
    fixture_call(W.fx, set_gates, gates);
    request(&r, "GET", "/catalogs/small/api/v1/metas?schema=olm.package", NULL);
    expect(&r, 404, "404 page not found\n");
    resp_free(&r);
    request(&r, "POST", "/catalogs/small/api/v1/graphql", NULL);
    expect(&r, 501, NULL);
    assert_non_null(strstr(strbuf_str(&r.body), "GraphQLCatalogQueries"));
    resp_free(&r);
    request(&r, "GET", "/catalogs/small/api/v1/all", NULL);
    expect(&r, 200, NULL);
    assert_non_null(strstr(strbuf_str(&r.body), "\"name\":\"bar\""));
    resp_free(&r);
    gates[0] = gates[1] = false;
    fixture_call(W.fx, set_gates, gates);
    request(&r, "GET", "/catalogs/small/api/v1/metas?schema=olm.package&name=bar", NULL);
    expect(&r, 200, "{\"name\":\"bar\",\"schema\":\"olm.package\"}\n");
    resp_free(&r);
}

static void test_metas_unknown_param(void **state)
{
    (void)state;
    const char *q[] = {"?foo=bar", "?schema=olm.package&limit=1", "?=x", "?Schema=olm.package", "?package"};
    for (size_t i = 0; i < 4; i++) {
        char target[256];
        snprintf(target, sizeof target, "/catalogs/sample20/api/v1/metas%s", q[i]);
        resp r;
        request(&r, "GET", target, NULL);
        expect(&r, 400, "400 Bad Request\n");
        assert_header(&r, "content-type", "text/plain; charset=utf-8");
        assert_header(&r, "x-content-type-options", "nosniff");
        resp_free(&r);
    }
    /* A known key without a value is fine. */
    check_metas(q[4], NULL, NULL, NULL);
}

/* ---- errors ----------------------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    resp r;
    request(&r, "GET", "/catalogs/Bad_Name/api/v1/all", NULL);
    expect(&r, 400,
           "invalid catalog name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
           "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
           "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n");
    assert_header(&r, "content-type", "text/plain; charset=utf-8");
    resp_free(&r);
    /* An escaped slash or dot-dot in the name is a bad name, not a path. */
    request(&r, "GET", "/catalogs/..%2Fx/api/v1/metas", NULL);
    expect(&r, 400, NULL);
    assert_true(strncmp(strbuf_str(&r.body), "invalid catalog name: ", 22) == 0);
    resp_free(&r);

    request(&r, "GET", "/catalogs/absent/api/v1/all", NULL);
    expect(&r, 404, "404 Not Found\n");
    resp_free(&r);
    request(&r, "GET", "/catalogs/absent/api/v1/metas?package=x", NULL);
    expect(&r, 404, "404 Not Found\n");
    resp_free(&r);

    const char *methods[] = {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    for (size_t i = 0; i < 5; i++) {
        request(&r, methods[i], "/catalogs/sample20/api/v1/all", NULL);
        expect(&r, 405, "Method Not Allowed\n");
        assert_header(&r, "allow", "GET, HEAD");
        resp_free(&r);
    }
    request(&r, "POST", "/catalogs/sample20/api/v1/metas", NULL);
    expect(&r, 405, "Method Not Allowed\n");
    resp_free(&r);

    const char *paths[] = {"/", "/catalogs", "/catalogs/sample20", "/catalogs/sample20/api/v1",
                           "/catalogs/sample20/api/v1/all/", "/catalogs/sample20/api/v2/all",
                           "/catalogs//api/v1/all", "/catalogs/sample20/api/v1/graphql", "/healthz/x"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        request(&r, "GET", paths[i], NULL);
        if (r.code != 404 || strcmp(strbuf_str(&r.body), "404 page not found\n") != 0)
            fail_msg("%s: %ld %s", paths[i], r.code, strbuf_str(&r.body));
        resp_free(&r);
    }
}

static void test_health_and_metrics(void **state)
{
    (void)state;
    resp r;
    request(&r, "GET", "/healthz", NULL);
    expect(&r, 200, "ok");
    resp_free(&r);
    request(&r, "GET", "/readyz", NULL);
    expect(&r, 200, "ok");
    resp_free(&r);
    request(&r, "GET", "/catalogs/absent/api/v1/all", NULL); /* at least one 404 */
    resp_free(&r);
    request(&r, "GET", "/metrics", NULL);
    expect(&r, 200, NULL);
    const char *b = strbuf_str(&r.body);
    assert_non_null(strstr(b, "# TYPE catalogd_http_request_duration_seconds histogram\n"));
    assert_non_null(strstr(b, "catalogd_http_request_duration_seconds_bucket{code=\"200\",le=\"0.1\"} "));
    assert_non_null(strstr(b, "catalogd_http_request_duration_seconds_bucket{code=\"200\",le=\"3.6\"} "));
    assert_non_null(strstr(b, "catalogd_http_request_duration_seconds_bucket{code=\"404\",le=\"+Inf\"} "));
    assert_non_null(strstr(b, "catalogd_http_request_duration_seconds_count{code=\"404\"} "));
    assert_non_null(strstr(b, "catalogd_catalogs_served 2\n"));
    assert_null(strstr(b, "unpack")); /* nothing reported yet: nothing exposed */
    resp_free(&r);
}

/* ---- the gate (metrics filter) ---- */

/* No token 401 and "no" 403 at once, "ok" 200 at once, "later" 200 from a helper thread a
 * little later (on the loop thread, as a review answers). */
typedef struct fake_gate {
    olm_http_gate_done done;
    void *req;
    int checks;
    char verb[8], path[64];
} fake_gate;

static fake_gate G;

static int gate_check(void *gate, const char *authorization, const char *verb, const char *path,
                      olm_http_gate_done done, void *req_data, void **handle, char *msg, size_t msgsz)
{
    fake_gate *g = gate;
    g->checks++;
    snprintf(g->verb, sizeof g->verb, "%s", verb);
    snprintf(g->path, sizeof g->path, "%s", path);
    *handle = NULL;
    if (!authorization) {
        snprintf(msg, msgsz, "Unauthorized");
        return 401;
    }
    if (strcmp(authorization, "Bearer no") == 0) {
        snprintf(msg, msgsz, "Authorization denied for user no");
        return 403;
    }
    if (strcmp(authorization, "Bearer ok") == 0)
        return 200;
    g->done = done;
    g->req = req_data;
    *handle = g;
    return 0;
}

static void gate_cancel(void *handle)
{
    ((fake_gate *)handle)->req = NULL;
}

static void set_gate(catalog_server *srv, void *arg)
{
    catalog_server_set_gate(srv, arg);
}

/* On the loop thread: answers the waiting request, if one waits yet. */
static void answer_gate(catalog_server *srv, void *arg)
{
    (void)srv;
    if (G.req) {
        void *r = G.req;
        G.req = NULL;
        G.done(200, "", NULL, r);
        *(bool *)arg = true;
    }
}

static void answer_later(void *arg)
{
    bool answered = false; /* written on the loop thread inside fixture_call, which waits */
    while (!answered) {
        usleep(20000);
        fixture_call(arg, answer_gate, &answered);
    }
}

static void test_gate(void **state)
{
    (void)state;
    static const olm_http_gate gate = {.check = gate_check, .cancel = gate_cancel, .gate = &G};
    fixture_call(W.fx, set_gate, (void *)&gate);
    resp r;
    request(&r, "GET", "/metrics", NULL);
    expect(&r, 401, "Unauthorized\n");
    resp_free(&r);
    const char *no[] = {"Authorization: Bearer no", NULL}, *ok[] = {"Authorization: Bearer ok", NULL},
               *later[] = {"Authorization: Bearer later", NULL};
    request(&r, "GET", "/metrics", no);
    expect(&r, 403, "Authorization denied for user no\n");
    resp_free(&r);
    request(&r, "GET", "/metrics?x", ok);
    expect(&r, 200, NULL);
    assert_non_null(strstr(strbuf_str(&r.body), "catalogd_catalogs_served "));
    resp_free(&r);
    uv_thread_t t;
    assert_int_equal(uv_thread_create(&t, answer_later, W.fx), 0);
    request(&r, "GET", "/metrics", later);
    uv_thread_join(&t);
    expect(&r, 200, NULL);
    resp_free(&r);
    request(&r, "GET", "/healthz", NULL); /* only /metrics is guarded */
    expect(&r, 200, "ok");
    resp_free(&r);
    assert_int_equal(G.checks, 4);
    assert_string_equal(G.verb, "get");
    assert_string_equal(G.path, "/metrics");
    fixture_call(W.fx, set_gate, NULL);
}

static void report_unpacks(catalog_server *srv, void *arg)
{
    (void)arg;
    catalog_metrics_observe_unpack(catalog_server_metrics(srv), "sample20", 0.7, true);
    catalog_metrics_observe_unpack(catalog_server_metrics(srv), "broken", 0, false);
    catalog_metrics_set_model_problems(catalog_server_metrics(srv), "sample20", 3);
    catalog_metrics_set_model_problems(catalog_server_metrics(srv), "sample20", 2); /* the latest content's */
}

static void test_unpack_metrics(void **state)
{
    (void)state;
    fixture_call(W.fx, report_unpacks, NULL);
    resp r;
    request(&r, "GET", "/metrics", NULL);
    const char *b = strbuf_str(&r.body);
    assert_non_null(strstr(b, "catalogd_unpack_duration_seconds_bucket{catalog=\"sample20\",le=\"0.5\"} 0\n"));
    assert_non_null(strstr(b, "catalogd_unpack_duration_seconds_bucket{catalog=\"sample20\",le=\"1\"} 1\n"));
    assert_non_null(strstr(b, "catalogd_unpack_duration_seconds_count{catalog=\"sample20\"} 1\n"));
    assert_null(strstr(b, "catalogd_unpack_duration_seconds_count{catalog=\"broken\"}"));
    assert_non_null(strstr(b, "catalogd_unpack_failures_total{catalog=\"broken\"} 1\n"));
    assert_non_null(strstr(b, "# TYPE catalogd_catalog_model_problems gauge\n"));
    assert_non_null(strstr(b, "catalogd_catalog_model_problems{catalog=\"sample20\"} 2\n"));
    assert_null(strstr(b, "catalogd_catalog_model_problems{catalog=\"broken\"}"));
    resp_free(&r);
}

/* ---- registry updates -------------------------------------------------------------------- */

static void remove_small(catalog_server *srv, void *arg)
{
    (void)arg;
    catalog_server_remove_catalog(srv, "small");
}

static void test_swap_and_remove(void **state)
{
    (void)state;
    store_text("small", "{\"schema\":\"olm.package\",\"name\":\"swapped\"}\n");
    resp r;
    request(&r, "GET", "/catalogs/small/api/v1/all", NULL);
    expect(&r, 200, "{\"name\":\"swapped\",\"schema\":\"olm.package\"}\n");
    resp_free(&r);
    fixture_call(W.fx, remove_small, NULL);
    request(&r, "GET", "/catalogs/small/api/v1/all", NULL);
    expect(&r, 404, "404 Not Found\n");
    resp_free(&r);
    store_text("small", SMALL); /* back for the other tests */
}

/* ---- hostile input ----------------------------------------------------------------------- */

/* Sends raw bytes, reads whatever comes back until the server closes or 2 s pass. */
static size_t raw_exchange(const void *data, size_t len, char *out, size_t outsz)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)W.port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(fd, (const char *)data + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may close early on garbage */
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < outsz && (n = recv(fd, out + got, outsz - got - 1, 0)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(fd);
    return got;
}

static void assert_alive(void)
{
    resp r;
    request(&r, "GET", "/healthz", NULL);
    expect(&r, 200, "ok");
    resp_free(&r);
}

static void test_hostile(void **state)
{
    (void)state;
    char out[8192];
    /* Bad percent-encoding in the path: 400 like Go's request-line check. */
    raw_exchange(LIT("GET /catalogs/%zz/api/v1/all HTTP/1.1\r\nHost: x\r\n\r\n"), out, sizeof out);
    assert_true(strncmp(out, "HTTP/1.1 400", 12) == 0);
    raw_exchange(LIT("GET /catalogs/sample20/api/v1/all% HTTP/1.1\r\nHost: x\r\n\r\n"), out, sizeof out);
    assert_true(strncmp(out, "HTTP/1.1 400", 12) == 0);
    assert_alive();

    /* A very long URL (64 KiB). */
    size_t n = 65536;
    char *big = malloc(n + 128);
    int l = snprintf(big, 128, "GET /catalogs/sample20/api/v1/metas?package=");
    memset(big + l, 'a', n);
    snprintf(big + l + n, 128, " HTTP/1.1\r\nHost: x\r\n\r\n");
    raw_exchange(big, strlen(big), out, sizeof out);
    assert_alive();
    /* ... and through curl, a long path. */
    memcpy(big, "/catalogs/", 10);
    memset(big + 10, 'a', 60000);
    strcpy(big + 60010, "/api/v1/all");
    resp r;
    request(&r, "GET", big, NULL);
    assert_true(r.code == 400 || r.code == 404 || r.code == 414 || r.code == 431);
    resp_free(&r);
    free(big);

    static const char bin[] = {'\x00', '\xff', '\x16', '\x03', '\x01', '\x02', '\x00', '\x01', '\r', '\n', '\r', '\n'};
    const struct {
        const void *p;
        size_t n;
    } junk[] = {
        {LIT("GARBAGE\r\n\r\n")},
        {bin, sizeof bin},
        {LIT("GET / HTTP/1.1\r\n")},                                     /* truncated, then EOF */
        {LIT("GET /healthz HTTP/9.9\r\n\r\n")},
        {LIT("GET /healthz HTTP/1.1\r\nContent-Length: -5\r\n\r\n")},
        {LIT("POST /catalogs/sample20/api/v1/all HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")},
        {LIT("\r\n\r\n\r\n")},
        {LIT("GET /catalogs/sample20/api/v1/all HTTP/1.1\r\nRange: bytes=--\r\nIf-Modified-Since: \x01\r\n\r\n")},
    };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        raw_exchange(junk[i].p, junk[i].n, out, sizeof out);
        assert_alive();
    }
    /* Many headers. */
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "GET /healthz HTTP/1.1\r\n");
    for (int i = 0; i < 2000; i++)
        strbuf_printf(&sb, "X-H%d: %d\r\n", i, i);
    strbuf_puts(&sb, "\r\n");
    raw_exchange(sb.data, sb.len, out, sizeof out);
    strbuf_free(&sb);
    assert_alive();
}

/* Only GET and HEAD are served, so a request body is refused once past a few KiB (413),
 * whether it is announced by Content-Length or streamed in chunks; h2o's default was to read
 * up to 1 GiB into memory first. */
static void test_request_body_cap(void **state)
{
    (void)state;
    char out[4096];
    size_t n = 64 * 1024;
    char *big = malloc(n + 256);
    int l = snprintf(big, 256, "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 900000000\r\n\r\n");
    memset(big + l, 'a', n);
    raw_exchange(big, (size_t)l + n, out, sizeof out);
    if (strncmp(out, "HTTP/1.1 413", 12) != 0)
        fail_msg("POST of 900 MB announced: want 413 at once, got \"%.40s\"", out);
    l = snprintf(big, 256, "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n", n);
    memset(big + l, 'a', n);
    raw_exchange(big, (size_t)l + n, out, sizeof out);
    if (strncmp(out, "HTTP/1.1 413", 12) != 0)
        fail_msg("chunked POST of 64 KiB: want 413, got \"%.40s\"", out);
    free(big);
    /* A small body on a GET is still read and ignored. */
    raw_exchange(LIT("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 10\r\n\r\n0123456789"),
                 out, sizeof out);
    assert_true(strncmp(out, "HTTP/1.1 200", 12) == 0);
    assert_alive();
}

/* The access log's duration of each request: /metas printed duration=0.000000 for every
 * request, because h2o's timestamps are the loop's cached time and a /metas response is
 * sent within one loop turn. */
static void test_access_log_duration(void **state)
{
    (void)state;
    resp r;
    for (int i = 0; i < 3; i++) {
        request(&r, "GET", "/catalogs/sample20/api/v1/metas?schema=olm.package", NULL);
        resp_free(&r);
    }
    assert_alive(); /* the log line of the last request is written once its response is done */
    fflush(W.access_log);
    rewind(W.access_log);
    char line[8192];
    int metas = 0;
    while (fgets(line, sizeof line, W.access_log)) {
        if (!strstr(line, "uri=/catalogs/sample20/api/v1/metas?schema=olm.package"))
            continue;
        const char *d = strstr(line, " duration=");
        assert_non_null(d);
        double secs = strtod(d + 10, NULL);
        if (!(secs > 0 && secs < 60))
            fail_msg("duration %f in: %s", secs, line);
        metas++;
    }
    assert_true(metas >= 3);
}

/* An HTTP/1.1 request without Host is a 400, as net/http answers it (RFC 7230 §5.4);
 * HTTP/1.0 had no Host and is served, as by net/http. */
static void test_missing_host(void **state)
{
    (void)state;
    char out[4096];
    raw_exchange(LIT("GET /healthz HTTP/1.1\r\n\r\n"), out, sizeof out);
    if (strncmp(out, "HTTP/1.1 400", 12) != 0 || !strstr(out, "missing required Host header"))
        fail_msg("HTTP/1.1 without Host: got \"%.80s\"", out);
    raw_exchange(LIT("GET /catalogs/sample20/api/v1/all HTTP/1.1\r\nRange: bytes=0-1\r\n\r\n"), out, sizeof out);
    assert_true(strncmp(out, "HTTP/1.1 400", 12) == 0);
    raw_exchange(LIT("GET /healthz HTTP/1.0\r\n\r\n"), out, sizeof out);
    assert_true(strncmp(out, "HTTP/1.1 200", 12) == 0 || strncmp(out, "HTTP/1.0 200", 12) == 0);
    raw_exchange(LIT("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), out, sizeof out);
    assert_true(strncmp(out, "HTTP/1.1 200", 12) == 0);
}

/* Bytes a client puts in the request target reach the access log printable: anything but
 * printable ASCII is written as \xNN (and a backslash as \\), so a log line is one line of
 * ASCII whatever the request held. */
static void test_access_log_bytes(void **state)
{
    (void)state;
    char out[4096];
    raw_exchange(LIT("GET /catalogs/\xff\xfe\xc3/api/v1/all?a=\\b HTTP/1.1\r\nHost: x\r\n\r\n"), out, sizeof out);
    assert_alive();
    fflush(W.access_log);
    rewind(W.access_log);
    char line[8192];
    int found = 0;
    while (fgets(line, sizeof line, W.access_log)) {
        for (const unsigned char *c = (const unsigned char *)line; *c; c++)
            if ((*c < 0x20 && *c != '\n') || *c >= 0x7f)
                fail_msg("byte 0x%02x in the access log: %s", *c, line);
        found |= strstr(line, "uri=/catalogs/\\xff\\xfe\\xc3/api/v1/all?a=\\\\b ") != NULL;
    }
    assert_true(found);
}

/* ---- TLS ----------------------------------------------------------------------------------- */

static void test_tls(void **state)
{
    (void)state;
    char cert[512], key[512], cmd[2048];
    snprintf(cert, sizeof cert, "%s/tls.crt", W.root);
    snprintf(key, sizeof key, "%s/tls.key", W.root);
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
             "-addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s 2>/dev/null",
             key, cert);
    if (system(cmd) != 0)
        skip(); /* no openssl CLI: nothing to test with */
    srv_fixture *fx = fixture_start(cert, key, NULL);
    fixture_call(fx, set_catalog, W.sample_view);
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/catalogs/sample20/api/v1/metas?package=%s", fixture_port(fx),
             SAMPLE_PKG);
    strbuf body = STRBUF_INIT;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, cert);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    long code;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    assert_int_equal(code, 200);
    char *want = expected_metas(W.sample, NULL, SAMPLE_PKG, NULL);
    assert_string_equal(strbuf_str(&body), want);
    free(want);
    strbuf_free(&body);
    curl_easy_cleanup(c);
    /* Plain HTTP to the TLS port and a TLS hello cut short: refused, no crash. */
    int port = W.port;
    W.port = fixture_port(fx);
    char out[1024];
    raw_exchange(LIT("GET / HTTP/1.1\r\n\r\n"), out, sizeof out);
    raw_exchange(LIT("\x16\x03\x01\x00\x05\x01\x00"), out, sizeof out);
    W.port = port;
    fixture_stop(fx);
}

static void test_start_errors(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    olm_error err;
    catalog_server_opts o = {.host = "not-an-ip", .port = 0};
    assert_null(catalog_server_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "not an IP address"));
    o = (catalog_server_opts){.host = "127.0.0.1", .port = W.port}; /* in use */
    assert_null(catalog_server_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "listen on 127.0.0.1"));
    o = (catalog_server_opts){.host = "127.0.0.1", .tls_cert = "/nonexistent.crt", .tls_key = "/nonexistent.key"};
    assert_null(catalog_server_start(&loop, &o, &err));
    assert_non_null(strstr(err.msg, "TLS"));
    o = (catalog_server_opts){.host = "127.0.0.1", .tls_cert = "/x.crt"};
    assert_null(catalog_server_start(&loop, &o, &err));
    uv_run(&loop, UV_RUN_DEFAULT); /* frees the failed listeners */
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_is_the_render),
        cmocka_unit_test(test_all_equals_cli_render),
        cmocka_unit_test(test_head_has_no_body),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_gzip_is_precompressed),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_conditionals),
        cmocka_unit_test(test_resolved_ref_header),
        cmocka_unit_test(test_metas_selection),
        cmocka_unit_test(test_metas_unknown_param),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_health_and_metrics),
        cmocka_unit_test(test_unpack_metrics),
        cmocka_unit_test(test_gate),
        cmocka_unit_test(test_swap_and_remove),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_request_body_cap),
        cmocka_unit_test(test_access_log_duration),
        cmocka_unit_test(test_missing_host),
        cmocka_unit_test(test_access_log_bytes),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_start_errors),
        cmocka_unit_test(test_feature_gates),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

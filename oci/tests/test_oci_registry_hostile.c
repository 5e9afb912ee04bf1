/* Pulls against hostile registries (issue 12, items 6 and 7): a fake registry written here as a
 * handler of testsupport's HTTP fake in its streaming mode (it writes its responses itself,
 * dripped or cut short), on 127.0.0.1 and an ephemeral port, over plain HTTP or TLS.
 *
 *   - a manifest of 3,000 layers is refused before any layer is requested;
 *   - a blob dripping one byte at a time trips the stall guard;
 *   - a blob flowing just fast enough is cut off by the pull deadline;
 *   - an https registry whose Bearer challenge names a plain-http realm gets no
 *     credentials sent there;
 *   - an insecure registry: TLS without verification, else plain HTTP;
 *   - a layer is unpacked while it downloads (oci_layer_stream.c): a valid tar whose bytes are
 *     not what its digest names fails the pull and leaves nothing at the destination, and an
 *     unpack refused at its first entry of a layer far bigger than the pipe fails at once with
 *     the unpacker's error instead of blocking the download, and stops the download (the fake
 *     counts the bytes it serves); a download cut short fails with the fetch's error.
 * The https registry is named 127.1:PORT (getaddrinfo's short form of 127.0.0.1), which the
 * registry client does not take for a loopback registry that always speaks plain HTTP, so
 * that pull really uses TLS (the certificate names DNS:127.1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fake_http_server.h"
#include "olm_base64.h"
#include "oci_pull_internal.h"

/* ---------------------------------------------------------------- a fake registry */

typedef struct fake fake;
typedef fake_http_conn conn;

/* Answers one request (every connection is closed after its response). */
typedef int (*fake_handler)(fake *f, conn *c, const char *method, const char *path, const char *authz);

struct fake {
    fake_http_server srv;
    int port;
    fake_handler handle;
    pthread_mutex_t mu;
    int requests;        /* requests answered */
    int authz_seen;      /* requests that carried an Authorization header */
    char realm[256];     /* for the registry: the realm its challenge names */
    const char *manifest, *config, *blob;
    size_t manifest_len, config_len, blob_len;
    char config_digest[OCI_DIGEST_BUFSZ], blob_digest[OCI_DIGEST_BUFSZ];
    int drip_bytes, drip_ms; /* blob: this many bytes, then a pause, until done */
    size_t blob_served;      /* bytes of the blob handed to the socket, all requests */
    size_t blob_cut_at;      /* when set: the blob's response ends (closed) after this many bytes */
};

/* The server is stopping: a handler still writing gives up. */
static bool stopping(const fake *f)
{
    return atomic_load(&f->srv.stop) != 0;
}

static int conn_printf(conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int conn_printf(conn *c, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return fake_http_write(c, buf, (size_t)n);
}

static int respond(conn *c, int status, const char *ctype, const char *body, size_t len)
{
    if (conn_printf(c, "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n", status, ctype, len) != 0)
        return -1;
    return fake_http_write(c, body, len);
}

/* Every request: counted (and whether it carried credentials), then the test's handler. */
static void serve(fake_http_conn *c, const fake_http_request *req, void *user)
{
    fake *f = user;
    char authz[1024];
    fake_http_header(req, "Authorization", authz, sizeof authz);
    pthread_mutex_lock(&f->mu);
    f->requests++;
    f->authz_seen += authz[0] != '\0';
    pthread_mutex_unlock(&f->mu);
    f->handle(f, c, req->method, req->target, authz[0] ? authz : NULL);
}

static fake *fake_start(fake_handler h, const char *cert, const char *key)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->handle = h;
    pthread_mutex_init(&f->mu, NULL);
    if (cert)
        assert_int_equal(fake_http_start_streaming_tls(&f->srv, serve, f, cert, key), 0);
    else
        assert_int_equal(fake_http_start_streaming(&f->srv, serve, f), 0);
    f->port = f->srv.port;
    return f;
}

/* Stops and frees the fake; returns the bytes of the blob it served (counted once its
 * threads are joined, so a transfer the client gave up on is over). */
static size_t fake_stop(fake *f)
{
    fake_http_stop(&f->srv);
    size_t served = f->blob_served;
    pthread_mutex_destroy(&f->mu);
    free(f);
    return served;
}

/* ---------------------------------------------------------------- images */

/* A manifest of `nlayers` layers, all the blob; the config is f->config. */
static char *make_manifest(fake *f, int nlayers)
{
    size_t cap = 512 + (size_t)nlayers * 200;
    char *m = malloc(cap);
    assert_non_null(m);
    int n = snprintf(m, cap,
                     "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
                     "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\",\"digest\":\"%s\","
                     "\"size\":%zu},\"layers\":[",
                     f->config_digest, f->config_len);
    for (int i = 0; i < nlayers; i++)
        n += snprintf(m + n, cap - (size_t)n,
                      "%s{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"%s\",\"size\":%zu}",
                      i ? "," : "", f->blob_digest, f->blob_len);
    snprintf(m + n, cap - (size_t)n, "]}");
    return m;
}

static void set_image(fake *f, const char *blob, size_t blob_len, int nlayers)
{
    static const char config[] = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{},\"rootfs\":"
                                 "{\"type\":\"layers\",\"diff_ids\":[]}}";
    f->config = config;
    f->config_len = strlen(config);
    assert_int_equal(oci_sha256_buf(config, f->config_len, f->config_digest), 0);
    f->blob = blob;
    f->blob_len = blob_len;
    assert_int_equal(oci_sha256_buf(blob, blob_len, f->blob_digest), 0);
    f->manifest = make_manifest(f, nlayers);
    f->manifest_len = strlen(f->manifest);
}

/* Appends one ustar entry (a regular file of `size` bytes of `fill`) to buf at *off. */
static void tar_entry(char *buf, size_t *off, const char *name, size_t size, char fill)
{
    char *h = buf + *off;
    memset(h, 0, 512);
    snprintf(h, 100, "%s", name);
    snprintf(h + 100, 8, "%07o", 0644);
    snprintf(h + 108, 8, "%07o", 0);
    snprintf(h + 116, 8, "%07o", 0);
    snprintf(h + 124, 12, "%011zo", size);
    snprintf(h + 136, 12, "%011o", 0);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += (unsigned char)h[i];
    snprintf(h + 148, 8, "%06o", sum);
    *off += 512;
    memset(buf + *off, fill, size);
    *off += (size + 511) / 512 * 512; /* the buffer is zeroed: padding is NULs */
}

/* /v2/, manifests, the config and the blob (dripped when drip_bytes is set). */
static int registry_handler(fake *f, conn *c, const char *method, const char *path, const char *authz)
{
    if (f->realm[0] && !authz) {
        char hdr[512];
        snprintf(hdr, sizeof hdr, "Bearer realm=\"%s\",service=\"fake\"", f->realm);
        conn_printf(c, "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: %s\r\nContent-Length: 0\r\n\r\n", hdr);
        return 0;
    }
    int head = strcmp(method, "HEAD") == 0;
    if (strstr(path, "/manifests/"))
        return respond(c, 200, "application/vnd.oci.image.manifest.v1+json", f->manifest, head ? 0 : f->manifest_len);
    if (strstr(path, "/blobs/") && strstr(path, f->config_digest))
        return respond(c, 200, "application/octet-stream", f->config, f->config_len);
    if (strstr(path, "/blobs/") && strstr(path, f->blob_digest)) {
        /* in pieces, counted, so that a test can tell how much a pull downloaded */
        if (conn_printf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %zu\r\n\r\n",
                        f->blob_len) != 0)
            return -1;
        size_t piece = f->drip_bytes ? (size_t)f->drip_bytes : 65536;
        size_t end = f->blob_cut_at ? f->blob_cut_at : f->blob_len;
        for (size_t off = 0; off < end && !stopping(f);) {
            size_t n = end - off < piece ? end - off : piece;
            if (fake_http_write(c, f->blob + off, n) != 0)
                return -1; /* the client gave up */
            off += n;
            pthread_mutex_lock(&f->mu);
            f->blob_served += n;
            pthread_mutex_unlock(&f->mu);
            if (f->drip_bytes) {
                struct timespec ts = {f->drip_ms / 1000, (long)(f->drip_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
        }
        return f->blob_cut_at ? -1 : 0; /* cut: close the connection short of Content-Length */
    }
    return respond(c, 404, "text/plain", "no", 2);
}

static int token_handler(fake *f, conn *c, const char *method, const char *path, const char *authz)
{
    (void)f, (void)method, (void)path, (void)authz;
    return respond(c, 200, "application/json", "{\"token\":\"t0k3n\"}", 17);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char tmpdir[64];

static int group_setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN); /* the fake writes to clients that give up */
    snprintf(tmpdir, sizeof tmpdir, "/tmp/oci-hostile-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    oci_remove_path(tmpdir);
    return 0;
}

static int pull(const char *host, const char *dest_name, const oci_pull_opts *opts, olm_error *err)
{
    char ref[128], dest[256];
    snprintf(ref, sizeof ref, "%s/hostile/image:v1", host);
    snprintf(dest, sizeof dest, "%s/%s", tmpdir, dest_name);
    oci_pull_result res;
    int rc = oci_pull(ref, dest, opts, &res, err);
    if (rc == 0)
        oci_pull_result_free(&res);
    return rc;
}

/* A self-signed certificate for DNS:127.1 and 127.0.0.1 in tmpdir, and a CA directory that
 * trusts it.  Returns -1 without the openssl CLI. */
static int make_cert(char cert[128], char key[128], char cadir[128])
{
    char cmd[2048]; /* room for its 8 paths of up to 127 bytes */
    snprintf(cert, 128, "%s/tls.crt", tmpdir);
    snprintf(key, 128, "%s/tls.key", tmpdir);
    snprintf(cadir, 128, "%s/ca", tmpdir);
    snprintf(cmd, sizeof cmd,
             "[ -f %s ] || { openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
             "-addext subjectAltName=DNS:127.1,IP:127.0.0.1 -keyout %s -out %s 2>/dev/null && "
             "mkdir -p %s && cp %s %s/ && openssl rehash %s 2>/dev/null; }",
             cert, key, cert, cadir, cert, cadir, cadir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- tests */

static void test_too_many_layers(void **state)
{
    (void)state;
    fake *f = fake_start(registry_handler, NULL, NULL);
    set_image(f, "x", 1, 3000);
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    olm_error err;
    assert_int_equal(pull(host, "layers", NULL, &err), -1);
    if (!strstr(err.msg, "manifest has 3000 layers; images of more than 128 layers are refused (the limit)"))
        fail_msg("unexpected error: %s", err.msg);
    assert_true(f->requests <= 2); /* the manifest; no layer was asked for */
    free((char *)f->manifest);
    fake_stop(f);
}

static void test_drip_trips_the_stall_guard(void **state)
{
    (void)state;
    fake *f = fake_start(registry_handler, NULL, NULL);
    static char blob[64 * 1024]; /* a valid tar: only the stall may stop the pull */
    size_t off = 0;
    tar_entry(blob, &off, "configs/drip", sizeof blob - 3 * 512, 'b');
    set_image(f, blob, sizeof blob, 1);
    f->drip_bytes = 1;
    f->drip_ms = 100; /* 10 B/s: "under 1 B/s" never trips on it */
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    oci_pull_opts o = {.registry = {.stall_seconds = 2}};
    olm_error err;
    double t0 = mono();
    assert_int_equal(pull(host, "drip", &o, &err), -1);
    double secs = mono() - t0;
    if (!strstr(err.msg, "the registry sent less than 1024 bytes/s for 2 s: giving up on a stalled transfer"))
        fail_msg("unexpected error: %s", err.msg);
    assert_true(secs < 30);
    free((char *)f->manifest);
    fake_stop(f);
}

static void test_pull_deadline(void **state)
{
    (void)state;
    fake *f = fake_start(registry_handler, NULL, NULL);
    /* a valid tar, so that the unpack keeps reading and the deadline is what stops the pull */
    static char blob[4 * 1024 * 1024];
    size_t off = 0;
    tar_entry(blob, &off, "configs/big", sizeof blob - 3 * 512, 'c');
    set_image(f, blob, sizeof blob, 1);
    f->drip_bytes = 4096;
    f->drip_ms = 100; /* 40 KiB/s: well above the stall guard, 100 s for the blob */
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    oci_pull_opts o = {.registry = {.deadline_seconds = 2}};
    olm_error err;
    double t0 = mono();
    assert_int_equal(pull(host, "deadline", &o, &err), -1);
    double secs = mono() - t0;
    if (!strstr(err.msg, "the pull did not finish within 2 s (its deadline; --pull-timeout)"))
        fail_msg("unexpected error: %s", err.msg);
    if (secs > 10)
        fail_msg("the 2 s deadline took %.1f s", secs);
    /* Every request of the same handle counts against it: one made after it passed fails
     * at once. */
    oci_registry_opts ro = {.deadline_seconds = 1};
    oci_registry *reg = oci_registry_new(host, &ro, &err);
    assert_non_null(reg);
    sleep(1);
    char digest[OCI_DIGEST_BUFSZ];
    oci_ref ref;
    assert_int_equal(oci_ref_parse("127.0.0.1:1/x/y:z", &ref, &err), 0);
    assert_int_equal(oci_resolve_digest(reg, &ref, digest, &err), -1);
    assert_non_null(strstr(err.msg, "did not finish within 1 s"));
    oci_ref_free(&ref);
    oci_registry_free(reg);
    free((char *)f->manifest);
    fake_stop(f);
}

static void test_no_credentials_to_a_plain_http_realm(void **state)
{
    (void)state;
    char cert[128], key[128], cadir[128];
    if (make_cert(cert, key, cadir) != 0)
        skip(); /* no openssl CLI */
    fake *tok = fake_start(token_handler, NULL, NULL);
    fake *f = fake_start(registry_handler, cert, key);
    set_image(f, "x", 1, 1);
    snprintf(f->realm, sizeof f->realm, "http://127.0.0.1:%d/token", tok->port);
    char host[64], auth[256];
    snprintf(host, sizeof host, "127.1:%d", f->port);
    snprintf(auth, sizeof auth, "%s/auth.json", tmpdir);
    olm_error err;
    char *b64 = olm_base64_encode("user:secret", 11, NULL, &err);
    assert_non_null(b64);
    FILE *af = fopen(auth, "w");
    assert_non_null(af);
    fprintf(af, "{\"auths\":{\"%s\":{\"auth\":\"%s\"}}}\n", host, b64);
    fclose(af);
    free(b64);

    oci_pull_opts o = {.registry = {.auth_file = auth, .ca_path = cadir}};
    assert_int_equal(pull(host, "realm", &o, &err), -1);
    if (!strstr(err.msg, "sent a token realm over plain http") || !strstr(err.msg, "refusing to send the credentials"))
        fail_msg("unexpected error: %s", err.msg);
    assert_int_equal(tok->authz_seen, 0); /* nothing reached the plain-http realm with a secret */
    assert_true(f->requests >= 1);        /* the registry was reached over TLS */

    /* Without credentials the token is fetched anonymously (no secret to leak) and the pull
     * gets past authentication. */
    oci_pull_opts anon = {.registry = {.ca_path = cadir}};
    int rc = pull(host, "realm-anon", &anon, &err);
    assert_true(tok->requests >= 1);
    assert_int_equal(tok->authz_seen, 0);
    (void)rc;
    free((char *)f->manifest);
    fake_stop(f);
    fake_stop(tok);
}

/* What a TLS port says to a plain HTTP request. */
static int bad_request_handler(fake *f, conn *c, const char *method, const char *path, const char *authz)
{
    (void)f, (void)method, (void)path, (void)authz;
    return respond(c, 400, "text/plain", "Client sent an HTTP request to an HTTPS server.", 47);
}

/* Counts the progress lines saying that TLS did not connect and plain HTTP comes next. */
static void count_tls_fallbacks(void *ctx, const char *line)
{
    if (strstr(line, "no TLS connection"))
        ++*(int *)ctx;
}

/* An insecure registry, as containers/image means it: TLS whose certificate is not checked,
 * and plain HTTP when TLS does not connect at all.  Named 127.1:PORT, so that the client
 * does not take it for a loopback registry (always plain HTTP). */
static void test_insecure_registry_tls_then_http(void **state)
{
    (void)state;
    char cert[128], key[128], cadir[128];
    if (make_cert(cert, key, cadir) != 0)
        skip(); /* no openssl CLI */
    olm_error err;
    char host[64];
    /* a layer that unpacks: 1024 zero bytes, an empty tar archive */
    static const char empty_tar[1024];

    /* TLS with an untrusted certificate: refused unless the registry is named insecure */
    fake *tls = fake_start(registry_handler, cert, key);
    set_image(tls, empty_tar, sizeof empty_tar, 1);
    snprintf(host, sizeof host, "127.1:%d", tls->port);
    assert_int_equal(pull(host, "tls-verified", NULL, &err), -1);
    if (!strstr(err.msg, "certificate"))
        fail_msg("unexpected error: %s", err.msg);
    oci_pull_opts insecure = {.registry = {.insecure_hosts = host}};
    if (pull(host, "tls-unverified", &insecure, &err) != 0)
        fail_msg("insecure TLS pull failed: %s", err.msg);
    free((char *)tls->manifest);
    fake_stop(tls);

    /* plain HTTP: reached only when named insecure (after TLS failed to connect) */
    fake *plain = fake_start(registry_handler, NULL, NULL);
    set_image(plain, empty_tar, sizeof empty_tar, 1);
    snprintf(host, sizeof host, "127.1:%d", plain->port);
    assert_int_equal(pull(host, "plain-refused", NULL, &err), -1);
    assert_non_null(strstr(err.msg, "https://127.1:"));
    insecure.registry.insecure_hosts = host;
    insecure.registry.progress = count_tls_fallbacks;
    int fallbacks = 0;
    insecure.registry.progress_ctx = &fallbacks;
    if (pull(host, "plain-fallback", &insecure, &err) != 0)
        fail_msg("insecure plain-HTTP pull failed: %s", err.msg);
    assert_int_equal(fallbacks, 1);
    /* learned for this process: the next pull starts over plain HTTP, with no TLS attempt */
    if (pull(host, "plain-again", &insecure, &err) != 0)
        fail_msg("second insecure plain-HTTP pull failed: %s", err.msg);
    assert_int_equal(fallbacks, 1);
    /* only for a registry named insecure: without the name it is TLS, refused */
    assert_int_equal(pull(host, "plain-not-named", NULL, &err), -1);
    assert_non_null(strstr(err.msg, "https://127.1:"));
    free((char *)plain->manifest);
    fake_stop(plain);
    /* gone: plain HTTP fails, TLS is tried at once, and the memory is forgotten (the next
     * attempt starts with TLS again) */
    assert_int_equal(pull(host, "plain-gone", &insecure, &err), -1);
    if (!strstr(err.msg, "https://127.1:") || !strstr(err.msg, "and over plain HTTP before that: "))
        fail_msg("unexpected error: %s", err.msg);
    assert_int_equal(pull(host, "plain-gone-again", &insecure, &err), -1);
    if (!strstr(err.msg, "and over TLS before that: "))
        fail_msg("unexpected error: %s", err.msg);

    /* A plain answer of 400 is a TLS port refusing plain HTTP, not a plain registry: not
     * remembered, so the next pull tries TLS first again. */
    fake *tls_port = fake_start(bad_request_handler, NULL, NULL);
    snprintf(host, sizeof host, "127.1:%d", tls_port->port);
    insecure.registry.insecure_hosts = host;
    fallbacks = 0;
    assert_int_equal(pull(host, "tls-port-1", &insecure, &err), -1);
    assert_int_equal(pull(host, "tls-port-2", &insecure, &err), -1);
    assert_int_equal(fallbacks, 2);
    fake_stop(tls_port);
    insecure.registry.progress = NULL;

    /* nothing listening: the error names both attempts */
    insecure.registry.insecure_hosts = "127.1:1";
    assert_int_equal(pull("127.1:1", "nothing", &insecure, &err), -1);
    if (!strstr(err.msg, "http://127.1:1/") || !strstr(err.msg, "and over TLS before that: ") ||
        !strstr(err.msg, "https://127.1:1/"))
        fail_msg("unexpected error: %s", err.msg);
}

/* Credentials scoped to a repository path in the auth file reach the token service only for
 * that repository (here over plain HTTP on loopback, where sending them is allowed). */
static void test_credentials_scoped_to_a_repository_path(void **state)
{
    (void)state;
    static const char empty_tar[1024];
    fake *tok = fake_start(token_handler, NULL, NULL);
    fake *f = fake_start(registry_handler, NULL, NULL);
    set_image(f, empty_tar, sizeof empty_tar, 1);
    snprintf(f->realm, sizeof f->realm, "http://127.0.0.1:%d/token", tok->port);
    char host[64], auth[256];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    snprintf(auth, sizeof auth, "%s/scoped-auth.json", tmpdir);
    olm_error err;
    oci_pull_opts o = {.registry = {.auth_file = auth}};

    /* a key for another namespace: the token is asked for anonymously */
    FILE *af = fopen(auth, "w");
    assert_non_null(af);
    fprintf(af, "{\"auths\":{\"%s/other\":{\"username\":\"u\",\"password\":\"p\"}}}\n", host);
    fclose(af);
    if (pull(host, "scoped-other", &o, &err) != 0)
        fail_msg("pull failed: %s", err.msg);
    assert_true(tok->requests >= 1);
    assert_int_equal(tok->authz_seen, 0);

    /* a key for the image's namespace ("hostile/image"): the token request carries it */
    af = fopen(auth, "w");
    assert_non_null(af);
    fprintf(af, "{\"auths\":{\"%s/hostile\":{\"username\":\"u\",\"password\":\"p\"}}}\n", host);
    fclose(af);
    if (pull(host, "scoped-own", &o, &err) != 0)
        fail_msg("pull failed: %s", err.msg);
    assert_true(tok->authz_seen >= 1);
    free((char *)f->manifest);
    fake_stop(f);
    fake_stop(tok);
}

/* ---------------------------------------------------------------- streamed layers */

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_tampered_layer_unpacks_nothing(void **state)
{
    (void)state;
    static char blob[4 * 512];
    size_t off = 0;
    tar_entry(blob, &off, "configs/a.json", 100, 'a');
    fake *f = fake_start(registry_handler, NULL, NULL);
    set_image(f, blob, sizeof blob, 1); /* the digest of the 'a' content */
    memset(blob + 512, 'b', 100);       /* same size, other bytes: still a valid tar */
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    olm_error err;
    assert_int_equal(pull(host, "tampered", NULL, &err), -1);
    if (!strstr(err.msg, "digest mismatch"))
        fail_msg("unexpected error: %s", err.msg);
    char dest[256];
    snprintf(dest, sizeof dest, "%s/tampered", tmpdir);
    assert_false(exists(dest));
    free((char *)f->manifest);
    fake_stop(f);
}

static void test_refused_entry_stops_a_big_layer(void **state)
{
    (void)state;
    size_t big = 8u << 20; /* far more than the pipe holds */
    char *blob = calloc(1, 3 * 512 + big + 1024);
    assert_non_null(blob);
    size_t off = 0;
    tar_entry(blob, &off, "../evil", 4, 'e');
    tar_entry(blob, &off, "big", big, 'x');
    off += 1024; /* end of archive */
    fake *f = fake_start(registry_handler, NULL, NULL);
    set_image(f, blob, off, 1);
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    olm_error err;
    assert_int_equal(pull(host, "refused", NULL, &err), -1);
    if (!strstr(err.msg, "entry \"../evil\": path escapes the unpack root"))
        fail_msg("unexpected error: %s", err.msg);
    char dest[256];
    snprintf(dest, sizeof dest, "%s/refused", tmpdir);
    assert_false(exists(dest));
    free((char *)f->manifest);
    fake_stop(f);
    free(blob);
}

/* The unpack of a layer fails at its first entry: the download stops there rather than
 * fetching (and hashing) the rest for nothing.  The layer is 64 MiB; what the fake hands to
 * its socket before the client hangs up is bounded by the pipe (1 MiB), curl's buffer and
 * the socket buffers on both sides, far below the layer's size; the old code drained the
 * pipe and so downloaded all of it.  The error is the unpacker's, not the aborted
 * transfer's. */
static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void test_refused_entry_stops_the_download(void **state)
{
    (void)state;
    int fds = open_fds();
    size_t big = 64u << 20;
    char *blob = calloc(1, 3 * 512 + big + 1024);
    assert_non_null(blob);
    size_t off = 0;
    tar_entry(blob, &off, "../evil", 4, 'e');
    tar_entry(blob, &off, "big", big, 'x');
    off += 1024; /* end of archive */
    fake *f = fake_start(registry_handler, NULL, NULL);
    set_image(f, blob, off, 1);
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    olm_error err;
    assert_int_equal(pull(host, "stopped", NULL, &err), -1);
    if (!strstr(err.msg, "entry \"../evil\": path escapes the unpack root") || strstr(err.msg, "writing") ||
        strstr(err.msg, "storing") || strstr(err.msg, "cancel"))
        fail_msg("unexpected error: %s", err.msg);
    char dest[256];
    snprintf(dest, sizeof dest, "%s/stopped", tmpdir);
    assert_false(exists(dest));
    free((char *)f->manifest);
    size_t served = fake_stop(f);
    print_message("served %zu of %zu bytes\n", served, off);
    if (served > off / 4)
        fail_msg("the fake served %zu of the layer's %zu bytes: the download went on after the unpack failed",
                 served, off);
    assert_int_equal(open_fds(), fds); /* the pipe's two ends closed, the connection too */
    free(blob);
}

/* A download cut short fails the pull with the fetch's error, not the unpacker's: the
 * unpacker fails too (a truncated tar), but only once the pipe is closed, after the fetch. */
static void test_short_download_is_the_fetch_error(void **state)
{
    (void)state;
    static char blob[4 * 1024 * 1024];
    size_t off = 0;
    tar_entry(blob, &off, "configs/big", sizeof blob - 3 * 512, 'c');
    fake *f = fake_start(registry_handler, NULL, NULL);
    set_image(f, blob, sizeof blob, 1);
    f->blob_cut_at = sizeof blob / 2;
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    olm_error err;
    assert_int_equal(pull(host, "short", NULL, &err), -1);
    if (!strstr(err.msg, "fetching from 127.0.0.1:") || !strstr(err.msg, "bytes remaining") || strstr(err.msg, "runcated"))
        fail_msg("unexpected error: %s", err.msg);
    char dest[256];
    snprintf(dest, sizeof dest, "%s/short", tmpdir);
    assert_false(exists(dest));
    free((char *)f->manifest);
    fake_stop(f);
}

/* A registry that accepts the request and never answers. */
static int silent_handler(fake *f, conn *c, const char *method, const char *path, const char *authz)
{
    (void)c, (void)method, (void)path, (void)authz;
    for (int i = 0; i < 100 && !stopping(f); i++) /* at most 5 s: the client gives up after 1 */
        usleep(50 * 1000);
    return -1;
}

/* A timed-out request fails with the same message every time.  curl's own text counts the
 * milliseconds it waited ("Operation timed out after 1001 milliseconds with 0 bytes
 * received"), and that message becomes catalogd's Progressing message: a different one on
 * each retry is a status write each time, whose update event runs the reconcile again at once
 * instead of after the back-off. */
static void test_timeout_message_is_stable(void **state)
{
    (void)state;
    fake *f = fake_start(silent_handler, NULL, NULL);
    char host[32];
    snprintf(host, sizeof host, "127.0.0.1:%d", f->port);
    oci_pull_opts o = {.registry = {.timeout_seconds = 1}};
    olm_error err;
    assert_int_equal(pull(host, "silent", &o, &err), -1);
    if (!strstr(err.msg, "Operation timed out") || strstr(err.msg, "milliseconds") || strstr(err.msg, "bytes received"))
        fail_msg("unexpected error: %s", err.msg);
    fake_stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_too_many_layers),
        cmocka_unit_test(test_drip_trips_the_stall_guard),
        cmocka_unit_test(test_pull_deadline),
        cmocka_unit_test(test_no_credentials_to_a_plain_http_realm),
        cmocka_unit_test(test_insecure_registry_tls_then_http),
        cmocka_unit_test(test_credentials_scoped_to_a_repository_path),
        cmocka_unit_test(test_tampered_layer_unpacks_nothing),
        cmocka_unit_test(test_refused_entry_stops_a_big_layer),
        cmocka_unit_test(test_refused_entry_stops_the_download),
        cmocka_unit_test(test_short_download_is_the_fetch_error),
        cmocka_unit_test(test_timeout_message_is_stable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

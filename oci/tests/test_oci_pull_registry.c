/* oci_resolve, oci_pull, oci_pull_cached and oci_pull_catalog against a real
 * registry: Debian's docker-registry, started here on 127.0.0.1 and a free
 * port, and stopped by its PID.  Images are built and pushed with the push half
 * of this library.  Without docker-registry the tests are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci_pull_internal.h"

#define REGISTRY_BIN "/usr/bin/docker-registry"

static struct {
    pid_t pid;
    char dir[64];
    char host[32]; /* 127.0.0.1:port */
    int available;
} reg_state;

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

static int can_connect(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    if (s >= 0)
        close(s);
    return ok;
}

/* Starts docker-registry on `port`: 1 serving, 0 exited (the port was taken meanwhile: a
 * port from free_port() is free only until another test binds it), -1 on error. */
static int start_registry_on(int port)
{
    char cfg[128];
    snprintf(cfg, sizeof cfg, "%s/config.yml", reg_state.dir);
    FILE *f = fopen(cfg, "w");
    if (!f)
        return -1;
    fprintf(f, "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n"
               "    rootdirectory: %s/data\nhttp:\n  addr: 127.0.0.1:%d\n",
            reg_state.dir, port);
    if (fclose(f) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char log[128];
        snprintf(log, sizeof log, "%s/registry.log", reg_state.dir);
        /* the registry logs every request on stdout: keep the test output readable */
        if (!freopen(log, "w", stderr) || dup2(fileno(stderr), STDOUT_FILENO) < 0)
            _exit(126);
        execl(REGISTRY_BIN, "docker-registry", "serve", cfg, (char *)NULL);
        _exit(127);
    }
    reg_state.pid = pid;
    snprintf(reg_state.host, sizeof reg_state.host, "127.0.0.1:%d", port);
    struct timespec tenth = {0, 100 * 1000 * 1000};
    for (int i = 0; i < 150 && !can_connect(port); i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            reg_state.pid = 0;
            return 0;
        }
        nanosleep(&tenth, NULL);
    }
    /* Someone else's listener answers as well: the registry alive a moment later is ours. */
    nanosleep(&tenth, NULL);
    if (waitpid(pid, NULL, WNOHANG) == pid) {
        reg_state.pid = 0;
        return 0;
    }
    return can_connect(port) ? 1 : -1;
}

static int start_registry(void **state)
{
    (void)state;
    if (access(REGISTRY_BIN, X_OK) != 0)
        return 0; /* tests skip */
    snprintf(reg_state.dir, sizeof reg_state.dir, "/tmp/oci-pull-reg-XXXXXX");
    if (!mkdtemp(reg_state.dir))
        return -1;
    int rc = 0;
    for (int attempt = 0; attempt < 5 && rc == 0; attempt++) {
        int port = free_port();
        if (port < 0)
            return -1;
        rc = start_registry_on(port);
    }
    reg_state.available = rc == 1;
    return reg_state.available ? 0 : -1;
}

static int stop_registry(void **state)
{
    (void)state;
    if (reg_state.pid > 0) {
        kill(reg_state.pid, SIGTERM); /* our own child, by PID */
        waitpid(reg_state.pid, NULL, 0);
    }
    if (reg_state.dir[0])
        oci_remove_path(reg_state.dir);
    return 0;
}

/* ---------------------------------------------------------------- helpers */

static void write_file(const char *dir, const char *rel, const char *content)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "%s", p);
    for (char *q = cmd + strlen(dir) + 1; *q; q++) /* mkdir -p below dir */
        if (*q == '/') {
            *q = '\0';
            mkdir(cmd, 0755);
            *q = '/';
        }
    mkdir(cmd, 0755);
    *slash = '/';
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(fputs(content, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Builds an image from `dir` (under `prefix`) with one optional label and pushes it; tells its
 * manifest's digest and, when config_digest is not NULL, its config's. */
static void push_dir_config(const char *dir, const char *prefix, const char *label_key, const char *label_value,
                            const char *ref_s, char digest[OCI_DIGEST_BUFSZ], char config_digest[OCI_DIGEST_BUFSZ])
{
    olm_error err;
    oci_label label = {label_key, label_value};
    oci_image img;
    if (oci_image_build(dir, prefix, &label, label_key ? 1 : 0, NULL, "test", &img, &err) != 0)
        fail_msg("%s", err.msg);
    oci_ref ref;
    assert_int_equal(oci_ref_parse(ref_s, &ref, &err), 0);
    oci_registry *reg = oci_registry_new(ref.registry, NULL, &err);
    assert_non_null(reg);
    if (oci_image_push(reg, &ref, &img, &err) != 0)
        fail_msg("%s", err.msg);
    snprintf(digest, OCI_DIGEST_BUFSZ, "%s", img.manifest_digest);
    if (config_digest)
        snprintf(config_digest, OCI_DIGEST_BUFSZ, "%s", img.config.digest);
    oci_registry_free(reg);
    oci_ref_free(&ref);
    oci_image_free(&img);
}

static void push_dir(const char *dir, const char *prefix, const char *label_key,
                     const char *label_value, const char *ref_s, char digest[OCI_DIGEST_BUFSZ])
{
    push_dir_config(dir, prefix, label_key, label_value, ref_s, digest, NULL);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int count_entries(const char *dir)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

/* ---------------------------------------------------------------- tests */

/* A pull's connection stays for the next pull from the same registry (oci_handle_pool.c):
 * the second pull opens none; with the idle handles closed, a pull opens one again. */
static void test_pulls_keep_their_connection(void **state)
{
    (void)state;
    if (!reg_state.available)
        skip();
    char src[] = "/tmp/oci-pull-src-XXXXXX";
    assert_non_null(mkdtemp(src));
    write_file(src, "k.txt", "kept\n");
    char ref[128], digest[OCI_DIGEST_BUFSZ];
    snprintf(ref, sizeof ref, "%s/unit/kept:v1", reg_state.host);
    push_dir(src, NULL, "org.example.k", "v", ref, digest);

    olm_error err;
    oci_pull_result res;
    char dest[PATH_MAX];
    long opened[4];
    for (int i = 0; i < 3; i++) {
        if (i == 2)
            oci_handle_pool_drain();
        opened[i] = oci_connections_opened();
        snprintf(dest, sizeof dest, "%s-out%d", src, i);
        if (oci_pull(ref, dest, NULL, &res, &err) != 0)
            fail_msg("%s", err.msg);
        assert_string_equal(res.labels_json, "{\"org.example.k\":\"v\"}");
        oci_pull_result_free(&res);
        oci_remove_path(dest);
    }
    opened[3] = oci_connections_opened();
    assert_true(opened[1] - opened[0] <= 1); /* the push before may have left one to reuse */
    assert_int_equal(opened[2] - opened[1], 0);
    assert_int_equal(opened[3] - opened[2], 1);
    oci_remove_path(src);
}

static void test_resolve_and_pull(void **state)
{
    (void)state;
    if (!reg_state.available)
        skip();
    char src[] = "/tmp/oci-pull-src-XXXXXX";
    assert_non_null(mkdtemp(src));
    write_file(src, "a/b.txt", "bee\n");
    char ref[128], digest[OCI_DIGEST_BUFSZ], want[256];
    snprintf(ref, sizeof ref, "%s/unit/plain:v1", reg_state.host);
    push_dir(src, NULL, "org.example.k", "v", ref, digest);

    olm_error err;
    char *resolved = oci_resolve(ref, NULL, &err);
    assert_non_null(resolved);
    snprintf(want, sizeof want, "%s/unit/plain@%s", reg_state.host, digest);
    assert_string_equal(resolved, want);
    free(resolved);

    char dest[PATH_MAX];
    snprintf(dest, sizeof dest, "%s-out", src);
    oci_pull_result res;
    if (oci_pull(ref, dest, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(res.digest_ref, want);
    assert_string_equal(res.labels_json, "{\"org.example.k\":\"v\"}");
    assert_null(res.fbc_root);
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/a/b.txt", dest);
    assert_string_equal(read_file(p), "bee\n");
    oci_pull_result_free(&res);

    /* a missing tag: the registry's answer, and nothing created */
    char missing[128], dest2[PATH_MAX + 8];
    snprintf(missing, sizeof missing, "%s/unit/plain:nope", reg_state.host);
    snprintf(dest2, sizeof dest2, "%s-2", dest);
    assert_int_equal(oci_pull(missing, dest2, NULL, &res, &err), -1);
    assert_non_null(strstr(err.msg, "404"));
    assert_int_equal(access(dest2, F_OK), -1);
    oci_remove_path(src);
    oci_remove_path(dest);
}

/* Lines of the registry's access log that hold `needle`. */
static int log_lines(const char *needle)
{
    char path[128], line[4096];
    snprintf(path, sizeof path, "%s/registry.log", reg_state.dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* log_lines once it has reached at least `want` (the registry logs a request after
 * answering it), or after 5 s. */
static int log_lines_at_least(const char *needle, int want)
{
    int n = log_lines(needle);
    for (int i = 0; i < 50 && n < want; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        n = log_lines(needle);
    }
    return n;
}

/* With nothing cached for the owner, the pull fetches the manifest by its tag (and
 * computes the digest from it) instead of a HEAD then a GET by digest; once an image is
 * cached, a poll is one HEAD, and nothing more when the digest is the cached one. */
static void test_cold_pull_needs_no_head(void **state)
{
    (void)state;
    if (!reg_state.available)
        skip();
    char src[] = "/tmp/oci-pull-src-XXXXXX";
    assert_non_null(mkdtemp(src));
    char base[] = "/tmp/oci-pull-cache-XXXXXX";
    assert_non_null(mkdtemp(base));
    write_file(src, "pkg/catalog.json", "{\"schema\":\"olm.package\",\"name\":\"cold\"}\n");
    char ref[128], digest[OCI_DIGEST_BUFSZ];
    snprintf(ref, sizeof ref, "%s/unit/cold:v1", reg_state.host);
    push_dir(src, "configs", OCI_LABEL_CATALOG_CONFIGS, "/configs", ref, digest);
    const char *head = "\"HEAD /v2/unit/cold/manifests/v1 ", *get_tag = "\"GET /v2/unit/cold/manifests/v1 ";
    char get_digest[160];
    snprintf(get_digest, sizeof get_digest, "\"GET /v2/unit/cold/manifests/%s ", digest);
    int heads0 = log_lines(head), tags0 = log_lines(get_tag), digests0 = log_lines(get_digest);

    olm_error err;
    oci_pull_result res;
    if (oci_pull_catalog(base, "cold-owner", ref, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.cache_hit, 0);
    assert_non_null(strstr(res.digest_ref, digest));
    oci_pull_result_free(&res);
    assert_int_equal(log_lines_at_least(get_tag, tags0 + 1), tags0 + 1);

    if (oci_pull_catalog(base, "cold-owner", ref, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.cache_hit, 1);
    oci_pull_result_free(&res);
    /* the poll's HEAD is logged after the first pull's requests: then all of them are in */
    assert_int_equal(log_lines_at_least(head, heads0 + 1), heads0 + 1);
    assert_int_equal(log_lines(get_tag), tags0 + 1);
    assert_int_equal(log_lines(get_digest), digests0);
    oci_remove_path(src);
    oci_remove_path(base);
}

/* A bundle pull (skip_config) unpacks the layers without fetching the image config: one
 * registry request fewer per install.  The same pull without it does fetch the config. */
static void test_bundle_pull_skips_config(void **state)
{
    (void)state;
    if (!reg_state.available)
        skip();
    char src[] = "/tmp/oci-pull-src-XXXXXX";
    assert_non_null(mkdtemp(src));
    char base[] = "/tmp/oci-pull-cache-XXXXXX";
    assert_non_null(mkdtemp(base));
    write_file(src, "metadata/annotations.yaml", "annotations: {}\n");
    char ref[128], digest[OCI_DIGEST_BUFSZ], config[OCI_DIGEST_BUFSZ], config_get[160];
    snprintf(ref, sizeof ref, "%s/unit/bundle:v1", reg_state.host);
    push_dir_config(src, NULL, "org.example.k", "v", ref, digest, config);
    snprintf(config_get, sizeof config_get, "\"GET /v2/unit/bundle/blobs/%s ", config);
    int config_gets0 = log_lines(config_get);
    const char *manifest_get = "\"GET /v2/unit/bundle/manifests/v1 ";
    int manifest_gets0 = log_lines(manifest_get);

    olm_error err;
    oci_pull_result res;
    oci_pull_opts opts = {.skip_config = 1};
    if (oci_pull_cached(base, "bundle-owner", ref, &opts, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.cache_hit, 0);
    assert_string_equal(res.labels_json, "{}");
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/metadata/annotations.yaml", res.dir);
    assert_string_equal(read_file(p), "annotations: {}\n");
    oci_pull_result_free(&res);
    /* the manifest GET is logged before the layer's: once it is in, so is every request */
    assert_int_equal(log_lines_at_least(manifest_get, manifest_gets0 + 1), manifest_gets0 + 1);
    struct timespec settle = {0, 200 * 1000 * 1000};
    nanosleep(&settle, NULL);
    assert_int_equal(log_lines(config_get), config_gets0);

    /* the default pull does fetch it (and tells its labels) */
    char dest[PATH_MAX];
    snprintf(dest, sizeof dest, "%s-out", src);
    if (oci_pull(ref, dest, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(res.labels_json, "{\"org.example.k\":\"v\"}");
    oci_pull_result_free(&res);
    assert_int_equal(log_lines_at_least(config_get, config_gets0 + 1), config_gets0 + 1);
    oci_remove_path(src);
    oci_remove_path(base);
    oci_remove_path(dest);
}

static void test_cache_and_catalog(void **state)
{
    (void)state;
    if (!reg_state.available)
        skip();
    char src[] = "/tmp/oci-pull-src-XXXXXX";
    assert_non_null(mkdtemp(src));
    char base[] = "/tmp/oci-pull-cache-XXXXXX";
    assert_non_null(mkdtemp(base));
    write_file(src, "pkg/catalog.json", "{\"schema\":\"olm.package\",\"name\":\"one\"}\n");
    char ref[128], d1[OCI_DIGEST_BUFSZ], d2[OCI_DIGEST_BUFSZ], path[PATH_MAX];
    snprintf(ref, sizeof ref, "%s/unit/catalog:latest", reg_state.host);
    push_dir(src, "configs", OCI_LABEL_CATALOG_CONFIGS, "/configs", ref, d1);

    olm_error err;
    oci_pull_result res;
    if (oci_pull_catalog(base, "my-catalog", ref, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.cache_hit, 0);
    snprintf(path, sizeof path, "%s/my-catalog/%s", base, d1);
    assert_string_equal(res.dir, path);
    snprintf(path, sizeof path, "%s/my-catalog/%s/configs", base, d1);
    assert_string_equal(res.fbc_root, path);
    snprintf(path, sizeof path, "%s/pkg/catalog.json", res.fbc_root);
    assert_non_null(strstr(read_file(path), "\"one\""));
    oci_pull_result_free(&res);

    /* the same digest again: a hit, nothing downloaded */
    if (oci_pull_catalog(base, "my-catalog", ref, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.cache_hit, 1);
    assert_non_null(strstr(res.fbc_root, d1));
    oci_pull_result_free(&res);

    /* the tag moves: a new digest is pulled and the old one removed */
    write_file(src, "pkg/catalog.json", "{\"schema\":\"olm.package\",\"name\":\"two\"}\n");
    push_dir(src, "configs", OCI_LABEL_CATALOG_CONFIGS, "/configs", ref, d2);
    assert_string_not_equal(d1, d2);
    if (oci_pull_catalog(base, "my-catalog", ref, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(res.cache_hit, 0);
    assert_non_null(strstr(res.dir, d2));
    snprintf(path, sizeof path, "%s/pkg/catalog.json", res.fbc_root);
    assert_non_null(strstr(read_file(path), "\"two\""));
    oci_pull_result_free(&res);
    snprintf(path, sizeof path, "%s/my-catalog", base);
    assert_int_equal(count_entries(path), 2); /* <d2>/ and <d2>.json */
    snprintf(path, sizeof path, "%s/my-catalog/%s", base, d1);
    assert_int_equal(access(path, F_OK), -1);

    /* an image without the label: the upstream message, cache untouched */
    char plain[128], d3[OCI_DIGEST_BUFSZ];
    snprintf(plain, sizeof plain, "%s/unit/not-catalog:v1", reg_state.host);
    push_dir(src, NULL, NULL, NULL, plain, d3);
    assert_int_equal(oci_pull_catalog(base, "my-catalog", plain, NULL, &res, &err), -1);
    assert_string_equal(err.msg, "catalog image is missing the required label "
                                 "operators.operatorframework.io.index.configs.v1");
    snprintf(path, sizeof path, "%s/my-catalog", base);
    assert_int_equal(count_entries(path), 2);

    /* a bundle-style pull of the same image through the cache works */
    if (oci_pull_cached(base, "bundle-x", plain, NULL, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_null(res.fbc_root);
    snprintf(path, sizeof path, "%s/pkg/catalog.json", res.dir);
    assert_non_null(read_file(path));
    oci_pull_result_free(&res);

    /* a bad owner never touches the file system */
    assert_int_equal(oci_pull_cached(base, "../x", plain, NULL, &res, &err), -1);
    assert_non_null(strstr(err.msg, "one path component"));
    oci_remove_path(src);
    oci_remove_path(base);
}

/* registries.conf: the reference names a registry nothing serves; its mirrors are tried in order
 * (a dead one, then the fake registry), the result still names the reference as asked; a
 * blocked registry fails before any request; the cache path does the same. */
static void test_pull_through_mirrors(void **state)
{
    (void)state;
    if (!reg_state.available)
        skip();
    char src[] = "/tmp/oci-pull-mirror-XXXXXX";
    assert_non_null(mkdtemp(src));
    write_file(src, "m.txt", "mirrored\n");
    char pushed[128], digest[OCI_DIGEST_BUFSZ];
    snprintf(pushed, sizeof pushed, "%s/mirror-of-a/app:v1", reg_state.host);
    push_dir(src, NULL, NULL, NULL, pushed, digest);

    int dead_a = free_port(), dead_m = free_port();
    char conf_text[1024];
    snprintf(conf_text, sizeof conf_text,
             "[[registry]]\nprefix = \"127.0.0.1:%d/a\"\nlocation = \"127.0.0.1:%d/a\"\n"
             "[[registry.mirror]]\nlocation = \"127.0.0.1:%d/dead\"\n"
             "[[registry.mirror]]\nlocation = \"%s/mirror-of-a\"\n"
             "[[registry]]\nlocation = \"%s/blocked\"\nblocked = true\n",
             dead_a, dead_a, dead_m, reg_state.host, reg_state.host);
    olm_error err;
    oci_registries_conf *conf = oci_registries_conf_new(&err);
    assert_non_null(conf);
    if (oci_registries_conf_add_text(conf, conf_text, strlen(conf_text), "unit.conf", true, &err) != 0)
        fail_msg("%s", err.msg);
    oci_pull_opts opts = {.registry = {.registries = conf}};

    char ref[128], want[256], dest[PATH_MAX];
    snprintf(ref, sizeof ref, "127.0.0.1:%d/a/app:v1", dead_a);
    snprintf(want, sizeof want, "127.0.0.1:%d/a/app@%s", dead_a, digest);
    snprintf(dest, sizeof dest, "%s-out", src);
    oci_pull_result res;
    if (oci_pull(ref, dest, &opts, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(res.digest_ref, want);
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/m.txt", dest);
    assert_string_equal(read_file(p), "mirrored\n");
    oci_pull_result_free(&res);

    char cache[PATH_MAX + 8];
    snprintf(cache, sizeof cache, "%s-cache", src);
    if (oci_pull_cached(cache, "owner", ref, &opts, &res, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(res.digest_ref, want);
    assert_int_equal(res.cache_hit, 0);
    oci_pull_result_free(&res);

    /* every source down: each one's error, in order */
    snprintf(ref, sizeof ref, "127.0.0.1:%d/a/missing:v1", dead_a);
    assert_int_equal(oci_pull_cached(cache, "owner", ref, &opts, &res, &err), -1);
    char *m1 = strstr(err.msg, "mirror 127.0.0.1:"), *m2 = strstr(err.msg, "/mirror-of-a/missing:v1"),
         *pr = strstr(err.msg, "primary 127.0.0.1:");
    if (!m1 || !m2 || !pr || !(m1 < m2 && m2 < pr))
        fail_msg("%s", err.msg);

    /* blocked */
    snprintf(ref, sizeof ref, "%s/blocked/app:v1", reg_state.host);
    assert_int_equal(oci_pull_cached(cache, "owner", ref, &opts, &res, &err), -1);
    assert_non_null(strstr(err.msg, "is blocked (blocked = true in unit.conf)"));

    oci_registries_conf_free(conf);
    oci_remove_path(src);
    oci_remove_path(dest);
    oci_remove_path(cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_and_pull),
        cmocka_unit_test(test_cache_and_catalog),
        cmocka_unit_test(test_cold_pull_needs_no_head),
        cmocka_unit_test(test_bundle_pull_skips_config),
        cmocka_unit_test(test_pull_through_mirrors),
        cmocka_unit_test(test_pulls_keep_their_connection),
    };
    return cmocka_run_group_tests(tests, start_registry, stop_registry);
}

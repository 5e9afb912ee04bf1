/* catalogd-serve: load FBC directories into the catalog store (optional) and serve every
 * stored catalog over HTTP(S) until SIGTERM/SIGINT.  The seed of the catalogd daemon: the
 * ClusterCatalog reconciler will replace --load with image unpacks on the threadpool.
 *
 *   catalogd-serve --cache-dir DIR --addr HOST:PORT [--tls-cert C --tls-key K]
 *                  [--load NAME=FBC_DIR]... [--no-access-log]
 *
 * Loading happens before the loop starts, so blocking I/O there is fine.  Once listening it
 * prints "serving on <url>" on stdout (scripts wait for that line). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog_server.h"
#include "catalog_store.h"
#include "fbc.h"
#include "olm_parse.h"

typedef struct load_result {
    char name[256];
    double seconds;
    bool ok;
} load_result;

typedef struct app {
    uv_loop_t *loop;
    catalog_server *srv;
    uv_signal_t sigterm, sigint;
    int exit_code;
} app;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
    fprintf(stderr, "usage: catalogd-serve --cache-dir DIR --addr HOST:PORT [--tls-cert C --tls-key K]\n"
                    "                      [--load NAME=FBC_DIR]... [--no-access-log]\n");
}

static int load_one(const char *cache, const char *spec, load_result *res)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof res->name) {
        fprintf(stderr, "catalogd-serve: --load wants NAME=FBC_DIR, got %s\n", spec);
        return -1;
    }
    memcpy(res->name, spec, (size_t)(eq - spec));
    res->name[eq - spec] = '\0';
    double t0 = now();
    olm_error err;
    fbc_catalog *cat = fbc_load_dir(eq + 1, &err);
    int rc = cat ? store_write(cache, res->name, cat, NULL, &err) : -1;
    if (rc == 0 && store_sync(cache, res->name, &err) < 0)
        rc = -1;
    if (rc == 0 && store_add_gzip(cache, res->name, &err) < 0)
        rc = -1;
    fbc_catalog_free(cat);
    res->seconds = now() - t0;
    res->ok = rc == 0;
    if (rc < 0)
        fprintf(stderr, "catalogd-serve: load %s from %s: %s\n", res->name, eq + 1, err.msg);
    else
        fprintf(stderr, "catalogd-serve: stored %s from %s in %.3fs\n", res->name, eq + 1, res->seconds);
    return rc;
}

/* Registers every catalog in <cache>/catalogs (temp dirs start with '.'). */
static int register_stored(const char *cache, catalog_server *srv)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/catalogs", cache);
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (!store_is_durable(cache, e->d_name)) {
            fprintf(stderr, "catalogd-serve: skipping %s: not durable (a run stopped while storing it)\n",
                    e->d_name);
            continue;
        }
        olm_error err;
        store_view *v = store_open(cache, e->d_name, &err);
        if (!v) {
            fprintf(stderr, "catalogd-serve: skipping %s: %s\n", e->d_name, err.msg);
            continue;
        }
        if (catalog_server_set_catalog(srv, e->d_name, v) < 0)
            rc = -1;
        store_view_release(v);
    }
    closedir(d);
    return rc;
}

static void on_stopped(void *arg, bool clean)
{
    app *a = arg;
    if (!clean)
        fprintf(stderr, "catalogd-serve: connections still open at shutdown; exiting anyway\n");
    a->srv = NULL;
    uv_close((uv_handle_t *)&a->sigterm, NULL);
    uv_close((uv_handle_t *)&a->sigint, NULL);
    if (!clean)
        uv_stop(a->loop);
}

static void on_signal(uv_signal_t *h, int signum)
{
    app *a = h->data;
    fprintf(stderr, "catalogd-serve: signal %d, shutting down\n", signum);
    uv_signal_stop(&a->sigterm);
    uv_signal_stop(&a->sigint);
    if (a->srv)
        catalog_server_stop(a->srv, 5000, on_stopped, a);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN); /* a client hanging up is EPIPE on its connection, as in catalogd */
    const char *cache = NULL, *addr = NULL, *cert = NULL, *key = NULL;
    const char **loads = calloc((size_t)argc, sizeof *loads);
    size_t nloads = 0;
    bool access_log = true;
    if (!loads)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--cache-dir") == 0 && v)
            cache = v;
        else if (strcmp(a, "--addr") == 0 && v)
            addr = v;
        else if (strcmp(a, "--tls-cert") == 0 && v)
            cert = v;
        else if (strcmp(a, "--tls-key") == 0 && v)
            key = v;
        else if (strcmp(a, "--load") == 0 && v)
            loads[nloads++] = v;
        else if (strcmp(a, "--no-access-log") == 0)
            access_log = false, takes = 0;
        else {
            usage();
            free(loads);
            return 2;
        }
        i += takes;
    }
    char host[256];
    int port;
    if (!cache || !addr || olm_parse_host_port(addr, "0.0.0.0", host, sizeof host, &port) < 0) {
        usage();
        free(loads);
        return 2;
    }

    load_result *results = calloc(nloads ? nloads : 1, sizeof *results);
    if (!results)
        return 1;
    int failed = 0;
    for (size_t i = 0; i < nloads; i++)
        failed |= load_one(cache, loads[i], &results[i]) < 0;
    free(loads);

    app a = {.loop = uv_default_loop()};
    catalog_server_opts o = {.host = host, .port = port, .tls_cert = cert, .tls_key = key,
                             .access_log = access_log ? stderr : NULL};
    olm_error err;
    a.srv = catalog_server_start(a.loop, &o, &err);
    if (!a.srv) {
        fprintf(stderr, "catalogd-serve: %s\n", err.msg);
        free(results);
        uv_run(a.loop, UV_RUN_DEFAULT); /* lets the failed listener close */
        uv_loop_close(a.loop);
        return 1;
    }
    for (size_t i = 0; i < nloads; i++)
        catalog_metrics_observe_unpack(catalog_server_metrics(a.srv), results[i].name, results[i].seconds,
                                       results[i].ok);
    free(results);
    if (register_stored(cache, a.srv) < 0)
        fprintf(stderr, "catalogd-serve: out of memory registering catalogs\n");

    uv_signal_init(a.loop, &a.sigterm);
    uv_signal_init(a.loop, &a.sigint);
    a.sigterm.data = a.sigint.data = &a;
    uv_signal_start(&a.sigterm, on_signal, SIGTERM);
    uv_signal_start(&a.sigint, on_signal, SIGINT);
    printf("serving on %s://%s:%d (%zu catalogs)%s\n", cert ? "https" : "http", host,
           catalog_server_port(a.srv), catalog_server_catalog_count(a.srv), failed ? " with load errors" : "");
    fflush(stdout);

    uv_run(a.loop, UV_RUN_DEFAULT);
    if (a.srv == NULL && uv_loop_close(a.loop) == 0)
        return 0;
    return 0; /* stopped with connections open: the OS reclaims the rest */
}

/* pull_bench: many small image pulls from one registry, the way operator-controller pulls bundles
 * (a new oci_registry per pull, several threads), to show what keeping connections between
 * pulls (oci/oci_handle_pool.c) saves.  Driven by bench/pull_bench.sh, which starts the
 * registry (over TLS) and reads its CPU time.
 *
 *   pull_bench push REGISTRY N CA_FILE          pushes REGISTRY/pullbench/img-<i>:v1, i < N
 *   pull_bench pull REGISTRY N CA_FILE THREADS [fresh]
 *        pulls them all (manifest and layer: skip_config, as bundles are pulled) from THREADS
 *        threads; `fresh` closes the idle connections after every pull, as every pull did
 *        before the pool.  Prints wall seconds, this process's CPU seconds and the
 *        connections opened.
 * The registry is named insecure (oci_registry_opts.insecure_hosts): a loopback registry not
 * named so is spoken to over plain HTTP, and this one speaks TLS (verified or not, the
 * registry's side of each handshake is the same). */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci_pull.h"
#include "olm_tls.h"

struct job {
    const char *registry;
    int n, threads;
    bool fresh;
    olm_ca_set *cas;
    atomic_int next;
    atomic_int failed;
    char tmp[64];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Pushes image i of N: a layer of its own (one manifest file naming it). */
static int push_one(const char *dir, const char *registry, int i, olm_ca_set *cas)
{
    char path[128], ref_s[256];
    snprintf(path, sizeof path, "%s/manifests/image-%d.yaml", dir, i);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: image-%d\n", i);
    fclose(f);
    olm_error err;
    oci_image img;
    int rc = oci_image_build(dir, NULL, NULL, 0, NULL, "pull_bench", &img, &err);
    unlink(path);
    if (rc != 0) {
        fprintf(stderr, "build: %s\n", err.msg);
        return -1;
    }
    snprintf(ref_s, sizeof ref_s, "%s/pullbench/img-%d:v1", registry, i);
    oci_ref ref;
    if (oci_ref_parse(ref_s, &ref, &err) == 0) {
        oci_registry_opts ro = {.extra_cas = cas, .insecure_hosts = registry};
        oci_registry *reg = oci_registry_new(ref.registry, &ro, &err);
        rc = reg && oci_image_push(reg, &ref, &img, &err) == 0 ? 0 : -1;
        oci_registry_free(reg);
        oci_ref_free(&ref);
    } else {
        rc = -1;
    }
    oci_image_free(&img);
    if (rc != 0)
        fprintf(stderr, "push %s: %s\n", ref_s, err.msg);
    return rc;
}

static int push(const char *registry, int n, olm_ca_set *cas)
{
    char dir[] = "/tmp/pull-bench-src-XXXXXX", sub[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(sub, sizeof sub, "%s/manifests", dir);
    int rc = mkdir(sub, 0755);
    for (int i = 0; rc == 0 && i < n; i++)
        rc = push_one(dir, registry, i, cas);
    olm_error err;
    oci_remove_tree_at(AT_FDCWD, dir, &err);
    return rc == 0 ? 0 : 1;
}

static void *puller(void *arg)
{
    struct job *j = arg;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->n;) {
        char ref[256], dest[128];
        snprintf(ref, sizeof ref, "%s/pullbench/img-%d:v1", j->registry, i);
        snprintf(dest, sizeof dest, "%s/%d", j->tmp, i);
        oci_pull_opts opts = {.registry = {.extra_cas = j->cas, .insecure_hosts = j->registry}, .skip_config = 1};
        oci_pull_result res;
        olm_error err;
        if (oci_pull(ref, dest, &opts, &res, &err) != 0) {
            if (atomic_fetch_add(&j->failed, 1) == 0)
                fprintf(stderr, "pull %s: %s\n", ref, err.msg);
            continue;
        }
        oci_pull_result_free(&res);
        oci_remove_tree_at(AT_FDCWD, dest, &err);
        if (j->fresh)
            oci_handle_pool_drain();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "push") != 0 && strcmp(argv[1], "pull") != 0) ||
        (strcmp(argv[1], "pull") == 0 && argc < 6)) {
        fprintf(stderr, "usage: pull_bench push REGISTRY N CA_FILE | pull REGISTRY N CA_FILE THREADS [fresh]\n");
        return 2;
    }
    olm_error err;
    olm_ca_set *cas = olm_ca_set_new(&err);
    if (!cas || olm_ca_set_add_file(cas, argv[4], &err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[4], err.msg);
        return 1;
    }
    int n = atoi(argv[3]);
    if (strcmp(argv[1], "push") == 0) {
        int rc = push(argv[2], n, cas);
        oci_handle_pool_drain();
        olm_ca_set_free(cas);
        return rc;
    }
    struct job j = {.registry = argv[2], .n = n, .threads = atoi(argv[5]), .cas = cas,
                    .fresh = argc > 6 && strcmp(argv[6], "fresh") == 0};
    snprintf(j.tmp, sizeof j.tmp, "/tmp/pull-bench-XXXXXX");
    if (j.threads < 1 || j.threads > 64 || !mkdtemp(j.tmp))
        return 1;
    pthread_t t[64];
    double t0 = now_s(), c0 = cpu_s();
    long k0 = oci_connections_opened();
    for (int i = 0; i < j.threads; i++)
        pthread_create(&t[i], NULL, puller, &j);
    for (int i = 0; i < j.threads; i++)
        pthread_join(t[i], NULL);
    printf("%d pulls, %d threads, %s: %.2f s, %.2f CPU-s, %ld connections opened, %d failed\n", n, j.threads,
           j.fresh ? "a new connection per pull" : "connections kept", now_s() - t0, cpu_s() - c0,
           oci_connections_opened() - k0, atomic_load(&j.failed));
    rmdir(j.tmp);
    oci_handle_pool_drain();
    olm_ca_set_free(cas);
    return atomic_load(&j.failed) ? 1 : 0;
}

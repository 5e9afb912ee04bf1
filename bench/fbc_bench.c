/* fbc_bench: load + validate + render one catalog directory and print throughput
 * (MB of input files per second) for each phase and the process's peak RSS.
 * One catalog per process, so the peak RSS belongs to that catalog alone.
 *
 * FBC_BENCH_MALLOC=daemon runs it with catalogd's malloc settings (olm_malloc_tune.h: fixed
 * mmap/trim thresholds): catalogd loads catalogs that way, and the costs differ (every freed
 * block over 128 KiB is an munmap, every new one page faults again).  It also starts one idle
 * thread: catalogd always has several, and glibc's malloc skips its locks only in a process
 * with a single thread, so a one-thread load would otherwise not pay what catalogd's pays.
 * GLIBC_TUNABLES=glibc.malloc.tcache_count=0 on top gives operator-controller's settings
 * (the per-thread cache off), which catalogd had until it kept the cache for its loads. */
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "fbc.h"
#include "olm_malloc_tune.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static size_t dir_bytes(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
    size_t total = 0;
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        total += dir_bytes(child);
    }
    if (d)
        closedir(d);
    return total;
}

int main(int argc, char **argv)
{
    const char *malloc_mode = getenv("FBC_BENCH_MALLOC");
    bool daemon_malloc = malloc_mode && strcmp(malloc_mode, "daemon") == 0;
    if (malloc_mode && !daemon_malloc && strcmp(malloc_mode, "default") != 0) {
        fprintf(stderr, "fbc_bench: FBC_BENCH_MALLOC must be daemon or default, not %s\n", malloc_mode);
        return 2;
    }
    if (daemon_malloc) {
        olm_malloc_fixed_thresholds();
        pthread_t t;
        if (pthread_create(&t, NULL, idle, NULL) != 0) {
            fprintf(stderr, "fbc_bench: cannot start the idle thread\n");
            return 1;
        }
    }
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: [FBC_BENCH_MALLOC=daemon] fbc_bench CATALOG_DIR [THREADS]   (THREADS: load threads, default 1)\n");
        return 2;
    }
    unsigned threads = argc == 3 ? (unsigned)strtoul(argv[2], NULL, 10) : 1;
    double mb = dir_bytes(argv[1]) / 1e6;
    olm_error err;
    double t0 = now();
    fbc_catalog *c = fbc_load_dir_parallel(argv[1], threads, &err);
    if (!c) {
        fprintf(stderr, "fbc_bench: %s\n", err.msg);
        return 1;
    }
    double t1 = now();
    fbc_problems problems = {0};
    int nproblems = fbc_validate(c, &problems);
    double t2 = now();
    /* Render: write every normalised line, as catalogd writes catalog.jsonl. */
    FILE *devnull = fopen("/dev/null", "w");
    size_t out_bytes = 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        fwrite(c->metas[i].line, 1, c->metas[i].line_len, devnull);
        out_bytes += c->metas[i].line_len;
    }
    fclose(devnull);
    double t3 = now();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("catalog %s (%u load thread%s, %s malloc)\n", argv[1], threads, threads == 1 ? "" : "s",
           daemon_malloc ? "daemon" : "default");
    printf("  input %.1f MB, %zu blobs (%zu packages, %zu channels, %zu bundles), rendered %.1f MB, %d problems\n", mb,
           c->nmetas, c->npackages, c->nchannels, c->nbundles, out_bytes / 1e6, nproblems);
    printf("  load     %7.3f s  %7.1f MB/s\n", t1 - t0, mb / (t1 - t0));
    printf("  validate %7.3f s\n", t2 - t1);
    printf("  render   %7.3f s\n", t3 - t2);
    printf("  total    %7.3f s  %7.1f MB/s   peak RSS %.1f MB\n", t3 - t0, mb / (t3 - t0), ru.ru_maxrss / 1024.0);
    /* Wall time suffers when other processes share the cores; CPU time much less. */
    printf("  cpu      %7.3f s user + %.3f s sys\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
           ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    /* Each is a fresh page: about 1.3-1.8 us apiece on the VMs this runs on, a tenth of a load. */
    printf("  faults   %7ld minor (pages first touched)\n", ru.ru_minflt);
    fbc_problems_free(&problems);
    fbc_catalog_free(c);
    return nproblems == 0 ? 0 : 1;
}

/* olm_process_metrics: see the header.  The fields are those procfs(5) documents for
 * /proc/self/stat; the arithmetic is client_golang's procfs collector's. */
#include "olm_process_metrics.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "olm_metrics.h"
#include "olm_version.h"

typedef struct proc_stat {
    unsigned long utime, stime;     /* clock ticks */
    unsigned long long starttime;   /* clock ticks after boot */
    unsigned long vsize;            /* bytes */
    long rss;                       /* pages */
} proc_stat;

/* Fields 14, 15, 22, 23, 24 of /proc/self/stat, counted after the ")" that ends the command
 * name (which may itself hold spaces and parentheses). */
static int read_stat(proc_stat *ps)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    /* after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime cutime cstime priority nice threads itrealvalue starttime(22) vsize rss */
    int got = sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d %*d %llu %lu %ld",
                     &ps->utime, &ps->stime, &ps->starttime, &ps->vsize, &ps->rss);
    return got == 5 ? 0 : -1;
}

/* Boot time, seconds since the epoch ("btime" of /proc/stat); 0 when unknown. */
static unsigned long long boot_time(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long bt = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "btime %llu", &bt) == 1)
            break;
    fclose(f);
    return bt;
}

static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

static int one(strbuf *out, const char *name, const char *help, const char *type, double v)
{
    return olm_metrics_header(out, name, help, type) | olm_metrics_sample(out, name, NULL, NULL, v);
}

int olm_process_metrics_render(strbuf *out)
{
    int rc = 0;
    long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    proc_stat ps;
    if (read_stat(&ps) == 0 && tick > 0 && page > 0) {
        rc |= one(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter",
                  (double)(ps.utime + ps.stime) / (double)tick);
        rc |= one(out, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
                  (double)ps.rss * (double)page);
        rc |= one(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", (double)ps.vsize);
        unsigned long long bt = boot_time();
        if (bt)
            rc |= one(out, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                      "gauge", (double)bt + (double)ps.starttime / (double)tick);
    }
    long fds = open_fds();
    if (fds >= 0)
        rc |= one(out, "process_open_fds", "Number of open file descriptors.", "gauge", (double)fds);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        rc |= one(out, "process_max_fds", "Maximum number of open file descriptors.", "gauge", (double)rl.rlim_cur);
    return rc ? -1 : 0;
}

int olm_build_info_render(strbuf *out, const char *prefix)
{
    int rc = strbuf_printf(out, "# HELP %s_build_info The version this binary was built from.\n"
                                "# TYPE %s_build_info gauge\n%s_build_info{version=\"",
                           prefix, prefix, prefix);
    rc |= olm_metrics_label_value(out, OLMV1_VERSION);
    rc |= strbuf_puts(out, "\"} 1\n");
    return rc ? -1 : 0;
}

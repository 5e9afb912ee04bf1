/* cluster_common: options, client, error reports and text helpers of the cluster
 * commands (cluster.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_output.h"
#include "cluster.h"
#include "kube_object.h"
#include "olm_array.h"

int cluster_opts_take(cluster_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case CLUSTER_OPT_KUBECONFIG: o->kubeconfig = arg; return 1;
    case CLUSTER_OPT_CONTEXT: o->context = arg; return 1;
    case CLUSTER_OPT_CATALOGD_URL: o->catalogd_url = arg; return 1;
    default: return 0;
    }
}

int cluster_connect(const cluster_opts *o, kube_client **out, olm_error *err)
{
    kube_config cfg;
    *out = NULL;
    if (kube_config_load_context(o->kubeconfig, o->context, &cfg, err) < 0)
        return CLI_EXIT_UNREACHABLE;
    kube_client_options co = {.user_agent = "olmv1"};
    kube_client *c = kube_client_new(&cfg, &co, err);
    if (!c) {
        kube_config_free(&cfg);
        return CLI_EXIT_UNREACHABLE;
    }
    *out = c;
    return 0;
}

int cluster_exit_from_kube(int kube_rc)
{
    switch (kube_rc) {
    case KUBE_OK: return CLI_EXIT_OK;
    case KUBE_NOT_FOUND: return CLI_EXIT_NOT_FOUND;
    case KUBE_FORBIDDEN:
    case KUBE_UNAUTHORIZED: return CLI_EXIT_FORBIDDEN;
    case KUBE_INVALID: return CLI_EXIT_INVALID;
    case KUBE_CONFLICT:
    case KUBE_ALREADY_EXISTS: return CLI_EXIT_CONFLICT;
    default: return CLI_EXIT_UNREACHABLE; /* transport errors, 5xx, 429 */
    }
}

int cluster_error(olm_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    olm_error_setv(err, fmt, ap);
    va_end(ap);
    return code;
}

int cluster_wrap(olm_error *err, int code, const char *fmt, ...)
{
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    olm_error_wrap(err, "%s", prefix);
    return code;
}

int cluster_report(const char *cmd, int code, const olm_error *err)
{
    fprintf(stderr, "olmv1 %s: ", cmd);
    for (const char *p = err->msg; *p; p++) {
        if (*p == '\n') {
            if (p[1])
                fputs("; ", stderr);
        } else {
            fputc(*p, stderr);
        }
    }
    fputc('\n', stderr);
    return code;
}

int cluster_run(const char *cmd, const cluster_opts *conn, cluster_run_fn run, const void *args)
{
    olm_error err = {""};
    kube_client *c = NULL;
    int rc = cluster_connect(conn, &c, &err);
    if (rc == 0)
        rc = run(args, c, &err);
    kube_client_free(c);
    return rc ? cluster_report(cmd, rc, &err) : 0;
}

/* ------------------------------------------------------------ command lines */

int cluster_check_output(const char *cmd, const char *output, const char *const *formats)
{
    size_t n = 0;
    for (; formats[n]; n++)
        if (strcmp(output, formats[n]) == 0)
            return 0;
    fprintf(stderr, "olmv1 %s: -o must be ", cmd);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", formats[i]);
    fprintf(stderr, ", got \"%s\"\n", output);
    return CLI_EXIT_USAGE;
}

int cluster_take_name(int argc, char **argv, const char *cmd, const char *hint, const char **name)
{
    if (optind >= argc) {
        fprintf(stderr, "olmv1 %s: say which: olmv1 %s NAME%s\n", cmd, cmd, hint);
        return CLI_EXIT_USAGE;
    }
    *name = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "olmv1 %s: unexpected argument \"%s\"\n", cmd, argv[optind]);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

/* A --timeout value: "90", "90s", "5m", "1h" (up to a week) in seconds; -1 when bad. */
static long parse_timeout(const char *s)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > 7 * 24 * 3600)
        return -1;
    if (*end == '\0' || strcmp(end, "s") == 0)
        return v;
    if (strcmp(end, "m") == 0 && v <= 7 * 24 * 60)
        return v * 60;
    if (strcmp(end, "h") == 0 && v <= 7 * 24)
        return v * 3600;
    return -1;
}

int cluster_take_timeout(const char *cmd, const char *arg, long *out)
{
    if ((*out = parse_timeout(arg)) >= 0)
        return 0;
    fprintf(stderr, "olmv1 %s: --timeout wants a duration like 90s, 5m or 1h, got \"%s\"\n", cmd, arg);
    return CLI_EXIT_USAGE;
}

/* ------------------------------------------------------------ names */

static bool label_chars(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return false;
    return true;
}

bool cluster_dns1123_label(const char *s)
{
    return s && label_chars(s, strlen(s));
}

bool cluster_dns1123_subdomain(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 253)
        return false;
    for (const char *p = s;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (!label_chars(p, len))
            return false;
        if (!dot)
            return true;
        p = dot + 1;
    }
}

/* ------------------------------------------------------------ durations */

void cluster_human_duration(long long s, char *buf, size_t size)
{
    if (s < -1) {
        snprintf(buf, size, "<invalid>");
        return;
    }
    if (s < 0)
        s = 0;
    long long m = s / 60, h = s / 3600, d = h / 24;
    if (s < 120)
        snprintf(buf, size, "%llds", s);
    else if (m < 10)
        s % 60 ? snprintf(buf, size, "%lldm%llds", m, s % 60) : snprintf(buf, size, "%lldm", m);
    else if (m < 180)
        snprintf(buf, size, "%lldm", m);
    else if (h < 8)
        m % 60 ? snprintf(buf, size, "%lldh%lldm", h, m % 60) : snprintf(buf, size, "%lldh", h);
    else if (h < 48)
        snprintf(buf, size, "%lldh", h);
    else if (h < 24 * 8)
        h % 24 ? snprintf(buf, size, "%lldd%lldh", d, h % 24) : snprintf(buf, size, "%lldd", d);
    else if (h < 24 * 365 * 2)
        snprintf(buf, size, "%lldd", d);
    else if (h < 24 * 365 * 8)
        d % 365 ? snprintf(buf, size, "%lldy%lldd", d / 365, d % 365) : snprintf(buf, size, "%lldy", d / 365);
    else
        snprintf(buf, size, "%lldy", d / 365);
}

void cluster_age(const char *timestamp, time_t now, char *buf, size_t size)
{
    time_t t;
    if (!timestamp || !*timestamp || kube_parse_time(timestamp, &t) < 0) {
        snprintf(buf, size, "<unknown>");
        return;
    }
    cluster_human_duration((long long)(now - t), buf, size);
}

/* ------------------------------------------------------------ tables */

int cluster_table_init(cluster_table *t, size_t ncols, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    return cluster_table_add(t, header);
}

int cluster_table_add(cluster_table *t, const char *const *row)
{
    if (OLM_ARRAY_RESERVE(t->cells, t->cap, (t->nrows + 1) * t->ncols) < 0)
        return -1;
    char **dst = t->cells + t->nrows * t->ncols;
    for (size_t i = 0; i < t->ncols; i++) {
        dst[i] = strdup(row[i] ? row[i] : "");
        if (!dst[i]) {
            while (i > 0)
                free(dst[--i]);
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

int cluster_table_print(const cluster_table *t, FILE *out)
{
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    if (!w)
        return -1;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t n = strlen(t->cells[r * t->ncols + c]);
            if (n > w[c])
                w[c] = n;
        }
    int rc = 0;
    for (size_t r = 0; r < t->nrows && rc == 0; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            if (c + 1 < t->ncols)
                fprintf(out, "%-*s   ", (int)w[c], cell);
            else
                fputs(cell, out);
        }
        if (fputc('\n', out) == EOF)
            rc = -1;
    }
    free(w);
    return rc;
}

void cluster_table_free(cluster_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ objects */

const char *cluster_str(const json_t *obj, const char *path)
{
    const char *s = kube_object_string(obj, path);
    return s ? s : "";
}

const json_t *cluster_condition(const json_t *obj, const char *type)
{
    return kube_object_condition(obj, type);
}

int cluster_print_object(const json_t *obj, const char *format)
{
    int rc = strcmp(format, "json") == 0 ? cli_write_json(obj, stdout) : cli_write_yaml(obj, stdout);
    if (rc == 0 && fflush(stdout) != 0)
        rc = -1;
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

int cluster_print_objects(const json_t *objects, const char *format)
{
    int rc;
    if (strcmp(format, "json") == 0) {
        json_t *list = json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items", objects);
        rc = list ? cli_write_json(list, stdout) : -1;
        json_decref(list);
    } else {
        rc = cli_write_yaml_docs(objects, stdout);
    }
    return rc == 0 && fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

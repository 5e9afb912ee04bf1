/* olm_daemon: see olm_daemon.h. */
#include "daemon_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_leader.h"
#include "olm_log.h"
#include "olm_parse.h"
#include "olm_read_file.h"
#include "olm_version.h"

bool olm_listen_off(const char *addr)
{
    return !addr || !*addr || strcmp(addr, "0") == 0;
}

static int check_listen(const char *flag, const char *addr, char *msg, size_t msgsz)
{
    char host[256];
    int port;
    if (olm_listen_off(addr) || olm_parse_listen_addr(addr, host, sizeof host, &port) == 0)
        return 0;
    snprintf(msg, msgsz, "%s: want :PORT, IP:PORT or [IPv6]:PORT (\"0\": off), got \"%s\"", flag, addr);
    return -1;
}

const char *olm_listen_default(const char *upstream, const char *local)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    return host && *host ? upstream : local;
}

void olm_flag_empty_is_unset(const char **value)
{
    if (*value && !**value)
        *value = NULL;
}

/* "10s", or "1500ms" when not whole seconds: a duration as the flags spell it. */
static const char *fmt_duration(uint64_t ms, char *buf, size_t len)
{
    if (ms % 1000 == 0)
        snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
    else
        snprintf(buf, len, "%llums", (unsigned long long)ms);
    return buf;
}

/* The defaults where a flag was not given, then the order client-go's leaderelection
 * requires (it also asks renew deadline > 1.2 x retry period for its jitter; there is no
 * jitter here): a renew deadline shorter than the lease, or a successor could take over
 * while the leader still leads; a retry period shorter than the renew deadline, or a
 * leader could not renew once before it gives up. */
static int check_lease_timings(olm_daemon_flags *f, char *msg, size_t msgsz)
{
    if (!f->lease_duration_ms)
        f->lease_duration_ms = KUBE_LEADER_DEFAULT_LEASE_DURATION_MS;
    if (!f->renew_deadline_ms)
        f->renew_deadline_ms = KUBE_LEADER_DEFAULT_RENEW_DEADLINE_MS;
    if (!f->retry_period_ms)
        f->retry_period_ms = KUBE_LEADER_DEFAULT_RETRY_PERIOD_MS;
    char a[32], b[32];
    if (f->renew_deadline_ms >= f->lease_duration_ms) {
        snprintf(msg, msgsz, "--leader-elect-renew-deadline (%s) must be shorter than --leader-elect-lease-duration (%s)",
                 fmt_duration(f->renew_deadline_ms, a, sizeof a), fmt_duration(f->lease_duration_ms, b, sizeof b));
        return -1;
    }
    if (f->retry_period_ms >= f->renew_deadline_ms) {
        snprintf(msg, msgsz, "--leader-elect-retry-period (%s) must be shorter than --leader-elect-renew-deadline (%s)",
                 fmt_duration(f->retry_period_ms, a, sizeof a), fmt_duration(f->renew_deadline_ms, b, sizeof b));
        return -1;
    }
    return 0;
}

int olm_daemon_flags_check(olm_daemon_flags *f, const olm_feature_gate *gates, size_t ngates, char *msg,
                           size_t msgsz)
{
    const char **paths[] = {&f->tls_cert,           &f->tls_key,           &f->system_namespace,
                            &f->pull_cas_dir,       &f->global_pull_secret, &f->tls_profile, &f->registries_conf,
                            &f->tls_custom_version, &f->tls_custom_ciphers, &f->tls_custom_curves};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        olm_flag_empty_is_unset(paths[i]);
    if (check_listen("--health-probe-bind-address", f->health_addr, msg, msgsz) != 0 ||
        check_listen("--metrics-bind-address", f->metrics_addr, msg, msgsz) != 0 ||
        check_listen("--pprof-bind-address", f->pprof_addr, msg, msgsz) != 0)
        return -1;
    if ((f->tls_cert == NULL) != (f->tls_key == NULL)) {
        snprintf(msg, msgsz, "--tls-cert and --tls-key go together (both paths, or neither)");
        return -1;
    }
    f->level = f->verbosity > 0 ? OLM_LOG_DEBUG : OLM_LOG_INFO;
    if (f->log_level && olm_log_parse_level(f->log_level, &f->level) != 0) {
        snprintf(msg, msgsz, "--log-level: want error, warn, info or debug, got \"%s\"", f->log_level);
        return -1;
    }
    if (olm_log_parse_format(f->log_format ? f->log_format : "text", &f->format) != 0) {
        snprintf(msg, msgsz, "--log-format: want text or json, got \"%s\"", f->log_format);
        return -1;
    }
    if (olm_tls_profile_from_flags(f->tls_profile, f->tls_custom_version, f->tls_custom_ciphers,
                                   f->tls_custom_curves, &f->tls, msg, msgsz) != 0)
        return -1;
    if (f->system_namespace && !olm_is_dns1123_label(f->system_namespace, strlen(f->system_namespace))) {
        snprintf(msg, msgsz, "--system-namespace: \"%s\" is not a namespace name (lower-case DNS-1123 label)",
                 f->system_namespace);
        return -1;
    }
    char ns[64], name[254];
    if (f->global_pull_secret &&
        olm_parse_ns_name(f->global_pull_secret, ns, sizeof ns, name, sizeof name) != 0) {
        snprintf(msg, msgsz, "--global-pull-secret: want NAMESPACE/NAME, got \"%s\"", f->global_pull_secret);
        return -1;
    }
    if (check_lease_timings(f, msg, msgsz) != 0)
        return -1;
    return olm_feature_gates_parse(gates, ngates, f->feature_gates, msg, msgsz);
}

void olm_daemon_apply_logging(const olm_daemon_flags *f)
{
    olm_log_set_level(f->level);
    olm_log_set_format(f->format);
    if (!olm_listen_off(f->pprof_addr))
        olm_log(OLM_LOG_WARN, NULL, NULL,
                "--pprof-bind-address %s: Go's pprof has no counterpart in this C daemon; nothing listens there "
                "(profile with perf instead)",
                f->pprof_addr);
}

void olm_daemon_print_version(const char *prog)
{
    printf("%s %s\n", prog, OLMV1_VERSION);
}

int olm_daemon_version_command(const char *prog, int argc, char **argv, char *msg, size_t msgsz)
{
    if (argc < 2 || strcmp(argv[1], "version") != 0)
        return -1;
    if (argc > 2) {
        snprintf(msg, msgsz, "version takes no arguments, got \"%s\"", argv[2]);
        return 2;
    }
    olm_daemon_print_version(prog);
    return 0;
}

const char *olm_daemon_system_namespace(const char *file, char *buf, size_t bufsz)
{
    char *s = olm_read_file(file, 4096, NULL, NULL);
    if (!s)
        return OLM_DEFAULT_SYSTEM_NAMESPACE;
    size_t n = strcspn(s, " \t\r\n"); /* the file has no newline, but tolerate one */
    const char *ns = OLM_DEFAULT_SYSTEM_NAMESPACE;
    if (olm_is_dns1123_label(s, n) && n < bufsz) {
        memcpy(buf, s, n);
        buf[n] = '\0';
        ns = buf;
    }
    free(s);
    return ns;
}

int olm_daemon_load_cas(const char *flag, const char *path, bool is_dir, olm_ca_set **set, char *msg, size_t msgsz)
{
    olm_error err;
    if (!*set && !(*set = olm_ca_set_new(&err))) {
        snprintf(msg, msgsz, "%s: %s", flag, err.msg);
        return -1;
    }
    int rc = is_dir ? olm_ca_set_add_dir(*set, path, &err) : olm_ca_set_add_file(*set, path, &err);
    if (rc != 0)
        snprintf(msg, msgsz, "%s: %s", flag, err.msg);
    return rc;
}

int olm_daemon_preflight(const olm_daemon_flags *f, olm_ca_set **pull_cas, char *msg, size_t msgsz)
{
    *pull_cas = NULL;
    olm_error err;
    if (f->tls_cert && olm_tls_check_pair("--tls-cert", f->tls_cert, "--tls-key", f->tls_key, &err) != 0) {
        snprintf(msg, msgsz, "%s", err.msg);
        return -1;
    }
    if (f->pull_cas_dir && olm_daemon_load_cas("--pull-cas-dir", f->pull_cas_dir, true, pull_cas, msg, msgsz) != 0) {
        olm_ca_set_free(*pull_cas);
        *pull_cas = NULL;
        return -1;
    }
    return 0;
}

void olm_daemon_registries_notice(const char *path, const char *problem, size_t entries, void *data)
{
    (void)data;
    if (problem)
        olm_log(OLM_LOG_ERROR, "registriesConf", path, "%s; pulls go on with the configuration read before", problem);
    else
        olm_log(OLM_LOG_INFO, "registriesConf", path, "changed on disk, read again: %zu [[registry]] entries", entries);
}

int olm_daemon_command_line(const char *prog, int argc, char **argv, olm_daemon_parse_fn parse, void *flags,
                            const olm_daemon_flags *common)
{
    char msg[OLM_ERROR_MAX + 256];
    int rc = olm_daemon_version_command(prog, argc, argv, msg, sizeof msg);
    if (rc < 0) {
        rc = parse(argc, argv, flags, msg, sizeof msg);
        if (rc == 0 && common->version)
            olm_daemon_print_version(prog);
        if (rc == 0 && !common->version && !common->check_flags)
            rc = -1; /* a daemon to start */
        else
            rc = rc < 0 ? 2 : 0;
    }
    if (rc == 2)
        fprintf(stderr, "%s: %s\n", prog, msg);
    if (rc < 0)
        olm_daemon_apply_logging(common);
    return rc;
}

/* olm_daemon: the flags catalogd and operator-controller share (upstream's spellings), their
 * checks, and the start-up steps around them that are the same in both mains.
 *
 * Each daemon still lists every flag in its own olm_flags table (one row per flag); the rows
 * of these shared flags point into an olm_daemon_flags embedded in the daemon's struct. */
#ifndef OLMV1_OLM_DAEMON_H
#define OLMV1_OLM_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "olm_feature_gates.h"
#include "olm_log.h"
#include "olm_tls.h"
#include "olm_tls_profile.h"

typedef struct olm_daemon_flags {
    const char *health_addr;        /* --health-probe-bind-address (alias --health-addr); off: see below */
    const char *metrics_addr;       /* --metrics-bind-address; "0" (the default) is off */
    const char *pprof_addr;         /* --pprof-bind-address (upstream's manifests pass it): accepted and
                                     * checked; there is no Go pprof here, and the daemon says so */
    const char *tls_cert, *tls_key; /* both or neither */
    const char *tls_profile;        /* --tls-profile old|intermediate|modern|custom, or NULL */
    const char *tls_custom_version, *tls_custom_ciphers, *tls_custom_curves; /* with custom */
    olm_tls_profile tls;            /* what those four say (olm_daemon_flags_check fills it) */
    const char *system_namespace;   /* NULL: olm_daemon_system_namespace() */
    const char *pull_cas_dir;       /* extra CAs for registries, or NULL */
    const char *global_pull_secret; /* "NS/NAME" of the watched pull secret, or NULL */
    const char *registries_conf;    /* --registries-conf PATH (NULL: /etc/containers/registries.conf) */
    char feature_gates[2048];       /* every --feature-gates joined by ','; olm_daemon_flags_check applies it */
    const char *log_level;          /* --log-level error|warn|info|debug, or NULL */
    unsigned verbosity;             /* -v N (klog): 1 and above is debug, unless --log-level says */
    const char *log_format;         /* --log-format text|json (default text) */
    olm_log_level level;            /* what those say (olm_daemon_flags_check fills them) */
    olm_log_format format;
    /* With --leader-elect: the Lease timings (ours; upstream has no such flags).  0 until
     * olm_daemon_flags_check fills in kube_leader.h's defaults (10s, 7s, 2s; it says why). */
    uint64_t lease_duration_ms;     /* --leader-elect-lease-duration */
    uint64_t renew_deadline_ms;     /* --leader-elect-renew-deadline */
    uint64_t retry_period_ms;       /* --leader-elect-retry-period */
    bool version;                   /* --version: print "<prog> <version>" and exit 0 */
    bool check_flags;               /* --check-flags: parse and validate only, exit 0 */
} olm_daemon_flags;

/* A listen address that means "no listener": NULL, "" or "0" (controller-runtime's spelling). */
bool olm_listen_off(const char *addr);

/* The default of a listen address the command line did not give: `upstream` (":8081", every
 * interface, as upstream's defaults) in a Pod (KUBERNETES_SERVICE_HOST is set), where probes
 * and Services reach the Pod's address and upstream's install manifests rely on those
 * defaults; `local` (loopback) anywhere else, a workstation or a test. */
const char *olm_listen_default(const char *upstream, const char *local);

/* Upstream's flags take "" for "not given" (--system-namespace="" is the pod's namespace,
 * --tls-cert="" no TLS): sets *value to NULL when it is "". */
void olm_flag_empty_is_unset(const char **value);

/* The value checks of the shared flags, with no I/O (what --check-flags validates): listen
 * addresses, --tls-cert with --tls-key, the TLS profile flags (into f->tls), the log flags
 * (into f->level and f->format), --system-namespace
 * a DNS-1123 label,
 * --global-pull-secret NS/NAME, --feature-gates against `gates` (which it sets), the Lease
 * timings (defaults filled in; retry period < renew deadline < lease duration, as
 * client-go requires).  Paths and names given as "" become NULL first.  0, or -1 with a
 * one-line msg naming the flag. */
int olm_daemon_flags_check(olm_daemon_flags *f, const olm_feature_gate *gates, size_t ngates, char *msg,
                           size_t msgsz);

/* The rows of the log flags, the same in both daemons' tables. */
#define OLM_DAEMON_LOG_FLAGS(c)                                                                                  \
    OLM_FLAG_STRING("--pprof-bind-address", &(c)->pprof_addr, "0"),                                              \
        OLM_FLAG_STRING("--log-level", &(c)->log_level, NULL),                                                   \
        OLM_FLAG_UINT("-v", &(c)->verbosity, "0", 0, 10, "-v: want a verbosity 0..10, not %s"),                   \
        OLM_FLAG_STRING("--log-format", &(c)->log_format, "text")

/* The rows of the TLS flags (serving certificate and profile), the same in both daemons' tables. */
#define OLM_DAEMON_TLS_FLAGS(c)                                                                                   \
    OLM_FLAG_STRING("--tls-cert", &(c)->tls_cert, NULL), OLM_FLAG_STRING("--tls-key", &(c)->tls_key, NULL),       \
        OLM_FLAG_STRING("--tls-profile", &(c)->tls_profile, NULL),                                                \
        OLM_FLAG_STRING("--tls-custom-version", &(c)->tls_custom_version, NULL),                                  \
        OLM_FLAG_STRING("--tls-custom-ciphers", &(c)->tls_custom_ciphers, NULL),                                  \
        OLM_FLAG_STRING("--tls-custom-curves", &(c)->tls_custom_curves, NULL)

/* The rows of the health and metrics listeners' flags (--health-addr: upstream's old name). */
#define OLM_DAEMON_LISTENER_FLAGS(c)                                                                              \
    OLM_FLAG_STRING("--health-probe-bind-address", &(c)->health_addr, NULL),                                      \
        OLM_FLAG_STRING("--health-addr", &(c)->health_addr, NULL),                                                \
        OLM_FLAG_STRING("--metrics-bind-address", &(c)->metrics_addr, "0")

/* The rows of the Lease timing flags, the same in both daemons' tables (no default here: 0
 * is kube_leader.h's, filled in by olm_daemon_flags_check).  The lease is at least 1s: the
 * Lease records it in whole seconds. */
#define OLM_DAEMON_LEADER_FLAGS(c)                                                                                \
    OLM_FLAG_DURATION("--leader-elect-lease-duration", &(c)->lease_duration_ms, NULL, 1000,                      \
                      "--leader-elect-lease-duration: want a duration of at least 1s (e.g. 10s), not %s"),       \
        OLM_FLAG_DURATION("--leader-elect-renew-deadline", &(c)->renew_deadline_ms, NULL, 1,                     \
                          "--leader-elect-renew-deadline: want a duration (e.g. 7s), not %s"),                   \
        OLM_FLAG_DURATION("--leader-elect-retry-period", &(c)->retry_period_ms, NULL, 1,                         \
                          "--leader-elect-retry-period: want a duration (e.g. 2s), not %s")

/* Their lines of --help (both daemons). */
#define OLM_DAEMON_LEADER_USAGE                                                                                   \
    "  --leader-elect-lease-duration DUR\n"                                                                       \
    "                                 how long a Lease nobody renews stays taken (default 10s)\n"                 \
    "  --leader-elect-renew-deadline DUR\n"                                                                       \
    "                                 a leader that could not renew for this long stops (default\n"               \
    "                                 7s); shorter than the lease duration\n"                                     \
    "  --leader-elect-retry-period DUR\n"                                                                         \
    "                                 how often to renew, or to try to take the Lease (default 2s).\n"            \
    "                                 A leader that dies is replaced within lease duration + retry\n"             \
    "                                 period (12s by default); OpenShift's upstream values,\n"                    \
    "                                 137s/107s/26s, ride out longer API server outages\n"

/* The rows of the registry flags, the same in both daemons' tables. */
#define OLM_DAEMON_REGISTRY_FLAGS(c)                                                                              \
    OLM_FLAG_STRING("--pull-cas-dir", &(c)->pull_cas_dir, NULL),                                                  \
        OLM_FLAG_STRING("--global-pull-secret", &(c)->global_pull_secret, NULL),                                  \
        OLM_FLAG_STRING("--registries-conf", &(c)->registries_conf, NULL)

/* Their lines of --help (both daemons). */
#define OLM_DAEMON_REGISTRY_USAGE                                                                                 \
    "  --pull-cas-dir DIR             *.crt/*.pem files trusted for registries, in addition to\n"                  \
    "                                 the system store\n"                                                          \
    "  --global-pull-secret NS/NAME   a kubernetes.io/dockerconfigjson (or dockercfg) Secret with\n"               \
    "                                 registry credentials, watched: a change applies to the next\n"               \
    "                                 pull; missing: pulls are anonymous (before --authfile's)\n"                  \
    "  --registries-conf PATH         containers-registries.conf v2 (mirrors, blocked, insecure)\n"                \
    "                                 and its drop-ins PATH.d/*.conf (default\n"                                   \
    "                                 /etc/containers/registries.conf, when it exists)\n"

/* The usage lines of the TLS profile and log level flags, the same in both daemons. */
#define OLM_DAEMON_TLS_LOG_USAGE \
    "  --tls-profile NAME             old, intermediate (default), modern or custom: TLS versions\n" \
    "                                 and ciphers as OpenShift's TLS security profiles\n" \
    "  --tls-custom-version V         with custom: the minimum, TLSv1.0..TLSv1.3 (default TLSv1.2)\n" \
    "  --tls-custom-ciphers LIST      with custom: IANA or OpenSSL cipher names, comma-separated\n" \
    "  --tls-custom-curves LIST       with custom: X25519, secp256r1, secp384r1, ... comma-separated\n" \
    "  --log-level LEVEL              error, warn, info (default) or debug (each reconcile step\n" \
    "                                 with its duration)\n" \
    "  -v N                           klog's verbosity: 1 or more is debug (--log-level wins)\n"

/* Sets the process's log level and format from checked flags (main, before any thread). */
void olm_daemon_apply_logging(const olm_daemon_flags *f);

/* "<prog> version" (nothing after it): prints "<prog> <version>" and returns 0; returns 2
 * with msg set when more words follow; -1 when argv is not the version command. */
int olm_daemon_version_command(const char *prog, int argc, char **argv, char *msg, size_t msgsz);
void olm_daemon_print_version(const char *prog);

/* A daemon's command line, read the same way by both: the `version` command, then its flags
 * (parse: the daemon's own table into `flags`; `common` points at their shared part), then
 * --version and --check-flags.  Returns -1 to go on (logging set up from the flags), else
 * the exit code: 0 for version/--version/--check-flags, 2 for a bad command line (one line
 * "<prog>: <why>" on stderr, like a Go flag error; --help has the usage). */
typedef int (*olm_daemon_parse_fn)(int argc, char **argv, void *flags, char *msg, size_t msgsz);
int olm_daemon_command_line(const char *prog, int argc, char **argv, olm_daemon_parse_fn parse, void *flags,
                            const olm_daemon_flags *common);

/* The default of --system-namespace: the pod's namespace, read from `file` (normally
 * OLM_POD_NAMESPACE_FILE, which Kubernetes mounts with the ServiceAccount token), else
 * "olmv1-system" (also when the file holds no valid namespace).  Returns buf or a literal. */
#define OLM_POD_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
#define OLM_DEFAULT_SYSTEM_NAMESPACE "olmv1-system"
const char *olm_daemon_system_namespace(const char *file, char *buf, size_t bufsz);

/* The file checks of the shared flags, before anything starts: the TLS pair when given, and
 * --pull-cas-dir loaded into *pull_cas (NULL when the flag is absent; free it with
 * olm_ca_set_free).  0, or -1 with a one-line msg naming the flag and the file. */
int olm_daemon_preflight(const olm_daemon_flags *f, olm_ca_set **pull_cas, char *msg, size_t msgsz);

/* What a daemon logs when its registries.conf changed on disk (oci_registries_follow's
 * notice; called on the pulling thread): the entries now in effect, or why the change was
 * not taken and that the pulls keep the configuration read before.  `data` is unused. */
void olm_daemon_registries_notice(const char *path, const char *problem, size_t entries, void *data);

/* Loads a CA directory for `flag` into *set (created on first use), for the daemons' other
 * CA flags; 0, or -1 with msg "<flag>: <why>". */
int olm_daemon_load_cas(const char *flag, const char *dir, bool is_dir, olm_ca_set **set, char *msg, size_t msgsz);

#endif

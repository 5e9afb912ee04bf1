/* cluster: what the olmv1 commands that talk to a cluster share: exit codes, the
 * kubeconfig options, the client, one-line error reports, and small text helpers.
 *
 * Convention of this folder: a function that can fail returns 0 or one of the
 * CLI_EXIT_* codes below with `err` set to a one-line message, so a command can
 * return what its steps return. */
#ifndef OLMV1_CLI_CLUSTER_H
#define OLMV1_CLI_CLUSTER_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "kube_client.h"
#include "olm_error.h"

/* Exit codes, one per class of failure (olmv1 --help lists them). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAILED = 1,      /* anything else: I/O, out of memory, an unexpected answer */
    CLI_EXIT_USAGE = 2,       /* bad command line */
    CLI_EXIT_NOT_FOUND = 3,   /* no such extension, catalog, package, channel or object */
    CLI_EXIT_FORBIDDEN = 4,   /* the API server refused the credentials or RBAC forbids */
    CLI_EXIT_UNREACHABLE = 5, /* no usable kubeconfig, API server or catalogd unreachable or failing */
    CLI_EXIT_NO_CATALOGS = 6, /* no ClusterCatalog selected, or none of them is serving */
    CLI_EXIT_NO_MATCH = 7,    /* the catalogs hold nothing that satisfies the request (version, channel, edges) */
    CLI_EXIT_INVALID = 8,     /* invalid content: a template, catalog or bundle, or an object the server rejects */
    CLI_EXIT_CONFLICT = 9,    /* exists already, or belongs to something else */
    CLI_EXIT_TIMEOUT = 10,    /* waiting ran out (--timeout) before the extension got there */
    CLI_EXIT_BLOCKED = 11,    /* the controller gave up on the request (Progressing False Blocked) */
};

/* The text of `olmv1 --help` and every cluster command's --help. */
#define CLI_EXIT_CODES_HELP                                                                      \
    "Exit status: 0 ok; 1 other failure; 2 bad usage; 3 not found (extension, catalog,\n"          \
    "package, channel); 4 forbidden or unauthorized; 5 cluster or catalogd unreachable, or no\n"  \
    "usable kubeconfig; 6 no catalogs (none selected or none serving); 7 nothing matches\n"       \
    "(version range, channel, upgrade edges); 8 invalid content (template, catalog, bundle,\n"    \
    "object); 9 conflict (exists already, owned by something else); 10 timed out waiting\n"      \
    "(--timeout); 11 blocked (the controller gave up on it: Progressing Blocked).\n"

#define CLI_KUBECONFIG_HELP                                                                      \
    "  --kubeconfig FILE       kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n" \
    "  --context NAME          kubeconfig context (default: current-context)\n"

/* getopt_long values of the shared options; a command lists CLUSTER_LONG_OPTIONS in
 * its table and hands unknown values to cluster_opts_take(). */
enum { CLUSTER_OPT_KUBECONFIG = 0x1000, CLUSTER_OPT_CONTEXT, CLUSTER_OPT_CATALOGD_URL };
#define CLUSTER_LONG_OPTIONS                                              \
    {"kubeconfig", required_argument, NULL, CLUSTER_OPT_KUBECONFIG},      \
    {"context", required_argument, NULL, CLUSTER_OPT_CONTEXT},            \
    {"catalogd-url", required_argument, NULL, CLUSTER_OPT_CATALOGD_URL}

typedef struct cluster_opts {
    const char *kubeconfig;   /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *context;      /* NULL: current-context */
    const char *catalogd_url; /* NULL: $OLMV1_CATALOGD_URL, else the API server's service proxy */
} cluster_opts;

/* 1 when `opt` was one of the shared options (stored from optarg), else 0. */
int cluster_opts_take(cluster_opts *o, int opt, const char *arg);

/* A client for the cluster; *out is freed with kube_client_free. */
int cluster_connect(const cluster_opts *o, kube_client **out, olm_error *err);

/* Maps a negative kube_result to an exit code. */
int cluster_exit_from_kube(int kube_rc);

/* Sets err (printf-style) and returns `code`: `return cluster_error(err, CLI_EXIT_..., ...)`. */
int cluster_error(olm_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prefixes err's message with "<prefix>: " and returns `code`. */
int cluster_wrap(olm_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prints "olmv1 <cmd>: <message>" on one line (newlines in the message become "; ")
 * and returns `code`. */
int cluster_report(const char *cmd, int code, const olm_error *err);

/* A command's body, given its parsed arguments and a client: 0 or an exit code with err set. */
typedef int (*cluster_run_fn)(const void *args, kube_client *c, olm_error *err);

/* What every cluster command does once its arguments are parsed: connects with `conn`,
 * runs `run`, and reports a failure (cluster_report).  Returns the exit code. */
int cluster_run(const char *cmd, const cluster_opts *conn, cluster_run_fn run, const void *args);

/* ------------------------------------------------------------ command lines */

/* -o: `output` must be one of `formats` (NULL-terminated, in the order the message lists
 * them), else "olmv1 <cmd>: -o must be a, b or c, got "x"" on stderr and CLI_EXIT_USAGE. */
int cluster_check_output(const char *cmd, const char *output, const char *const *formats);

/* The one operand NAME after the options: "olmv1 <cmd>: say which: olmv1 <cmd> NAME<hint>"
 * when it is missing, "unexpected argument" when more follow; 0 or CLI_EXIT_USAGE. */
int cluster_take_name(int argc, char **argv, const char *cmd, const char *hint, const char **name);

/* --timeout DURATION ("90", "90s", "5m", "1h") into *out; 0, or CLI_EXIT_USAGE after
 * "olmv1 <cmd>: --timeout wants a duration like 90s, 5m or 1h, got "x"". */
int cluster_take_timeout(const char *cmd, const char *arg, long *out);

/* ------------------------------------------------------------ text helpers */

/* "is a DNS-1123 label / subdomain" (Kubernetes names). */
bool cluster_dns1123_label(const char *s);
bool cluster_dns1123_subdomain(const char *s);

/* kubectl's HumanDuration of `seconds` ("45s", "5m30s", "3h", "12d"), into buf. */
void cluster_human_duration(long long seconds, char *buf, size_t size);
/* The age of an RFC 3339 timestamp at `now`, or "<unknown>". */
void cluster_age(const char *timestamp, time_t now, char *buf, size_t size);

/* A table printed the way kubectl prints one: columns padded to the widest cell plus
 * three spaces, the last column unpadded. */
typedef struct cluster_table {
    size_t ncols;
    size_t nrows;  /* rows added, the header included */
    char **cells;  /* nrows * ncols, owned */
    size_t cap;    /* room in cells, counted in cells (not rows) */
} cluster_table;

/* Starts a table with a header of `ncols` columns. */
int cluster_table_init(cluster_table *t, size_t ncols, const char *const *header);
/* Adds a row of ncols strings (NULL prints as ""); copied.  -1 on out of memory. */
int cluster_table_add(cluster_table *t, const char *const *row);
int cluster_table_print(const cluster_table *t, FILE *out);
void cluster_table_free(cluster_table *t);

/* Borrowed string at a dotted path of a JSON object ("status.install.bundle.name"), or "". */
const char *cluster_str(const json_t *obj, const char *path);
/* The condition of `type` in obj.status.conditions, or NULL. */
const json_t *cluster_condition(const json_t *obj, const char *type);

/* Prints the array `objects` as YAML documents ("yaml") or one v1 List ("json"); 0, or
 * CLI_EXIT_FAILED when writing failed. */
int cluster_print_objects(const json_t *objects, const char *format);

/* Prints `obj` as -o yaml or -o json; 0, or CLI_EXIT_FAILED when writing failed. */
int cluster_print_object(const json_t *obj, const char *format);

#endif

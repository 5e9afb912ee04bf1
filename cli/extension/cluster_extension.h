/* cluster_extension: a ClusterExtension as the install, upgrade and explain commands
 * see it: its spec from flags or from the cluster, the object, its resolution from the
 * cluster's catalogs, and the installer RBAC --create-rbac derives for it. */
#ifndef OLMV1_CLI_CLUSTER_EXTENSION_H
#define OLMV1_CLI_CLUSTER_EXTENSION_H

#include <jansson.h>
#include <stdbool.h>

#include "cluster.h"
#include "cluster_catalogs.h"
#include "cluster_resolve.h"

#define EXTENSION_MAX_LIST 64

/* Every string is borrowed (from argv or from a ClusterExtension object). */
typedef struct extension_spec {
    const char *name;
    const char *package;
    const char *namespace_;
    const char *service_account;
    const char *version;          /* NULL or "": any */
    const char *channels[EXTENSION_MAX_LIST];
    size_t nchannels;
    const char *selector;         /* label selector text (flags), or NULL */
    const char *catalogs[EXTENSION_MAX_LIST]; /* --catalog names */
    size_t ncatalogs;
    const json_t *selector_json;  /* the object's spec.source.catalog.selector; wins over the two above */
    const char *watch_namespace;  /* NULL: none */
    const json_t *config_json;    /* the object's spec.config.inline; wins over watch_namespace */
    bool self_certified;          /* upgradeConstraintPolicy SelfCertified */
} extension_spec;

/* Adds a repeatable flag's value; -1 to go on, else an exit code (after a message). */
int extension_spec_add(const char **list, size_t *n, size_t max, const char *value, const char *flag);

/* Checks names (DNS-1123), the version range and the selector; 0 or CLI_EXIT_USAGE. */
int extension_spec_check(const extension_spec *s, olm_error *err);

/* The spec of an existing ClusterExtension (strings borrowed from `ce`). */
void extension_spec_from_object(const json_t *ce, extension_spec *s);

/* spec.config.inline: config_json, or {"watchNamespace": W}, or NULL.  New reference. */
json_t *extension_inline_config(const extension_spec *s);

/* The spec.source.catalog.selector object, or NULL for none; 0 or an exit code. */
int extension_selector(const extension_spec *s, json_t **out, olm_error *err);

/* The ClusterExtension object; NULL on out of memory (the spec is checked already). */
json_t *extension_object(const extension_spec *s);

/* Resolves as operator-controller would, from the installed bundle `installed` (may be
 * NULL); see cluster_resolve() for the exit codes. */
int extension_resolve(kube_client *c, const catalog_source *src, const extension_spec *s,
                      const resolve_installed *installed, cluster_resolution *out, strbuf *explain, olm_error *err);

/* The ServiceAccount and least RBAC (rbac_derive.h) for installing every bundle of
 * `images` (the union: an upgrade must still prune the old bundle's objects), rendered
 * for the spec's namespace and config.  Namespaces other than the install namespace that
 * get a Role must exist (CLI_EXIT_NOT_FOUND).  *out is a new array. */
int extension_rbac_objects(kube_client *c, const extension_spec *s, const char *const *images, size_t nimages,
                           const char *bundle, json_t **out, olm_error *err);

/* ------------------------------------------------------------ the commands' shared steps
 * (cluster_extension_steps.c) */

/* ClusterExtension `name` into *ce (a new reference); 0 or the exit code of the GET
 * (CLI_EXIT_NOT_FOUND when there is none). */
int extension_get(kube_client *c, const char *name, json_t **ce, olm_error *err);

/* What `ce` has installed (status.install.bundle) in *buf, strings borrowed from ce; NULL
 * when nothing is installed. */
const resolve_installed *extension_installed(const json_t *ce, resolve_installed *buf);

/* What install and upgrade move an extension to: the spec resolved from the cluster's
 * catalogs (from the installed bundle, when there is one), and the version it picks. */
typedef struct extension_target {
    catalog_source src;
    cluster_resolution res;
    char *version;     /* the resolved bundle's version, as text */
    const char *image; /* the resolved bundle's image, or "" */
} extension_target;

/* Opens the catalogs (catalogd at `catalogd_url`, or through the API server) and resolves
 * `s`; 0 or an exit code (extension_resolve's).  Free *t in any case. */
int extension_target_resolve(kube_client *c, const char *catalogd_url, const extension_spec *s,
                             const resolve_installed *installed, extension_target *t, olm_error *err);
void extension_target_free(extension_target *t);

/* Applies the --create-rbac objects `rbac` labelled for extension `name` (an object that
 * exists without the label is left alone: CLI_EXIT_CONFLICT), saying "<object> created" or
 * "configured" on stdout unless quiet.  0 or an exit code. */
int extension_apply_rbac(kube_client *c, const char *name, const json_t *rbac, bool quiet, olm_error *err);

/* The options of the commands that change an extension (install, upgrade): --dry-run,
 * -o yaml|json, --wait (the default), --no-wait and --timeout.  A command calls
 * extension_write_opts_init, lists EXTENSION_WRITE_LONG_OPTIONS and CLUSTER_LONG_OPTIONS in
 * its table, "o:" in its short options, and hands what it does not know to
 * extension_write_opts_take. */
enum { EXTENSION_OPT_DRY_RUN = 0x1100, EXTENSION_OPT_WAIT, EXTENSION_OPT_NO_WAIT, EXTENSION_OPT_TIMEOUT };
#define EXTENSION_WRITE_LONG_OPTIONS                                \
    {"dry-run", no_argument, NULL, EXTENSION_OPT_DRY_RUN},         \
    {"output", required_argument, NULL, 'o'},                      \
    {"wait", no_argument, NULL, EXTENSION_OPT_WAIT},               \
    {"no-wait", no_argument, NULL, EXTENSION_OPT_NO_WAIT},         \
    {"timeout", required_argument, NULL, EXTENSION_OPT_TIMEOUT}

/* The --help lines of those options (but -o), for install and upgrade. */
#define EXTENSION_WAIT_HELP                                                                          \
    "  --wait                  wait until the extension has the requested bundle installed, or\n"  \
    "                          the controller gives up on it (the default)\n"                      \
    "  --no-wait               only request it: exit once the ClusterExtension is written\n"       \
    "  --timeout DURATION      how long to wait (default 5m)\n"

/* Why: a script (or a user) reads exit 0 as "done", so the commands wait by default. */
typedef struct extension_write_opts {
    bool dry_run, wait;
    int wait_flag;      /* 0 none given, else the option given (EXTENSION_OPT_WAIT or _NO_WAIT) */
    const char *output; /* NULL: the "created" lines; with --dry-run "yaml" */
    long timeout;       /* seconds the wait waits: EXTENSION_DEFAULT_TIMEOUT unless --timeout */
} extension_write_opts;
#define EXTENSION_DEFAULT_TIMEOUT 300

/* Waiting on, EXTENSION_DEFAULT_TIMEOUT. */
void extension_write_opts_init(extension_write_opts *w);
/* 1 when `opt` was one of these options or of the shared connection options (stored in w
 * or conn), 0 when it was neither, CLI_EXIT_USAGE (said on stderr) for a bad --timeout. */
int extension_write_opts_take(extension_write_opts *w, cluster_opts *conn, const char *cmd, int opt, const char *arg);
/* After the options: -o is yaml or json, --wait and --no-wait are not both given, --dry-run
 * goes without --wait (and does not wait), and --dry-run prints yaml unless -o says.  0 or
 * CLI_EXIT_USAGE (said on stderr). */
int extension_write_opts_check(extension_write_opts *w, const char *cmd);

/* What install and upgrade do once the ClusterExtension `name` is written: with w->wait,
 * cluster_wait_installed (towards `want_version`, what the CLI resolved); without, says on
 * stderr that it was only requested.  0 or the wait's exit code. */
int extension_settle(kube_client *c, const char *name, const char *want_version, const extension_write_opts *w,
                     olm_error *err);

#endif

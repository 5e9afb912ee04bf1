/* upgradeable_reconcile: the OpenShift upgrade-blocking check against a live cluster
 * (shared/spec/openshift-upgradeable.md; olmv1-behaviour.md "decided").
 *
 * One pass: when config.openshift.io/v1 is served, read the cluster version from
 * ClusterVersion "version" (status.desired.version, or the override), the install
 * record Secrets of the system namespace and the ClusterExtensions, run
 * upgradeable_check (upgradeable.h), and write Upgradeable and
 * OLMIncompatibleOperatorControllerDegraded on ClusterOperator "olm" (created when
 * absent) through the status subresource.  Other conditions on that object are left
 * alone; a condition whose status did not change keeps its lastTransitionTime.
 *
 * Input problems never fail the pass: they fail closed as conditions (the check's own
 * texts, plus ErrorCheckingOperatorCompatibility when the cluster version cannot be
 * read and FailureGettingExtensionMetadata when the extensions cannot be listed).
 * Only a failure to write the ClusterOperator itself (or out of memory) returns -1.
 *
 * Threading: upgradeable_reconcile_once and upgradeable_inputs_read block on REST
 * calls: run them on a worker thread (the reconciler below uses the libuv threadpool),
 * never on an event loop.  The pure functions are thread-safe. */
#ifndef OLM_UPGRADEABLE_RECONCILER_H
#define OLM_UPGRADEABLE_RECONCILER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <uv.h>

#include "kube_client.h"
#include "olm_error.h"
#include "upgradeable.h"

#define UPGRADEABLE_DEFAULT_SYSTEM_NAMESPACE "olmv1-system"
#define UPGRADEABLE_OPENSHIFT_API "config.openshift.io/v1"

/* Returned by upgradeable_reconcile_once / upgradeable_reconciler_start when the
 * cluster is not OpenShift (config.openshift.io/v1 not served): nothing was done. */
#define UPGRADEABLE_NOT_OPENSHIFT 1

typedef struct upgradeable_reconcile_opts {
    const char *system_namespace;         /* install records live here; NULL: "olmv1-system" */
    const char *cluster_version_override; /* NULL or "": ClusterVersion "version" status.desired.version */
    bool skip_cluster_version;            /* upgradeable_inputs_read only: do not read it (CLI --to) */
    /* --feature-gates=BoxcutterRuntime=true: an extension's install is its installed
     * ClusterObjectSet revision (the newest Active one with Succeeded True), whose olm.properties
     * annotation holds the bundle's properties; it is read too, and wins over an install record
     * (one left from before the gate was switched on is older).  An extension with neither is not
     * installed.  A ClusterObjectSet API that is not served counts as no revisions. */
    bool revisions;
} upgradeable_reconcile_opts;

/* ------------------------------------------------------------ reading the cluster */

/* What the check needs, read from the cluster.  Everything is owned by the struct. */
typedef struct upgradeable_inputs {
    upgradeable_extension *exts; /* installed extensions, in ClusterExtension list order */
    size_t n;
    char *cluster_version;       /* the override or status.desired.version; NULL when unreadable */
    char *version_error;         /* why cluster_version is NULL, else NULL */
    char *list_error;            /* the ClusterExtensions could not be listed (exts then empty), else NULL */
    char **strings;              /* backing storage of exts[].name/bundle/properties */
    size_t nstrings, strings_cap;
} upgradeable_inputs;

/* Fills *out (free with upgradeable_inputs_free).  API errors end up in
 * version_error / list_error / exts[].lookup_failed; returns -1 only when out of
 * memory.  A ClusterExtension without an install record is not installed yet and is
 * left out, as is a record whose ClusterExtension does not exist. */
int upgradeable_inputs_read(kube_client *c, const upgradeable_reconcile_opts *opts, upgradeable_inputs *out,
                            olm_error *err);
void upgradeable_inputs_free(upgradeable_inputs *in);

/* Pure: the rows of `out` (zeroed by the caller) from the listed ClusterExtensions and
 * install record Secrets, as upgradeable_inputs_read makes them.  `secrets` NULL means
 * they could not be listed: every extension is then a failed lookup.  Each Secret is
 * decoded once; a Secret counts for the extension its record names, one that cannot be
 * read for the extension of its owner label (as a failed lookup), and the first in list
 * order wins.  0, or -1 when out of memory (free *out either way). */
int upgradeable_inputs_match(const json_t *ces, const json_t *secrets, upgradeable_inputs *out);
/* The same with the ClusterObjectSets too (`revisions`: their upgradeable_slim_revision copies;
 * an empty array or none when opts.revisions is off; NULL: they could not be listed, and every
 * extension without an installed revision is then a failed lookup).  An extension's installed
 * revision wins over its install record. */
int upgradeable_inputs_match_revisions(const json_t *ces, const json_t *secrets, const json_t *revisions,
                                       upgradeable_inputs *out);
/* What the check keeps of a ClusterObjectSet: {"e": owner-name label, "b": bundle-name
 * annotation, "p": olm.properties annotation (absent when none), "n": spec.revision, "i": Active
 * and Succeeded True}.  NULL when out of memory. */
json_t *upgradeable_slim_revision(const json_t *cos);

/* The installed bundle of one install record Secret (data["record.json"], base64,
 * with "extension", "bundle":{"name"} and "properties" as verbatim text).  Sets the
 * three outputs (malloc'd; *properties NULL when the record has none) and returns 0,
 * or -1 with err when the Secret is not a readable record.  Pure. */
int upgradeable_record_from_secret(const json_t *secret, char **extension, char **bundle, char **properties,
                                   olm_error *err);

/* Runs the check on `in`: upgradeable_check (or upgradeable_check_target when
 * `target` is not NULL), with the failures of reading the cluster turned into
 * fail-closed conditions.  Returns 0 and fills *out, -1 when out of memory. */
int upgradeable_inputs_check(const upgradeable_inputs *in, const char *target, upgradeable_result *out,
                             olm_error *err);

/* ------------------------------------------------------------ writing conditions */

/* Pure: merges `want` into a status.conditions array (`existing` borrowed; NULL or
 * not an array counts as empty).  Conditions are matched by type; one whose status is
 * unchanged keeps its lastTransitionTime, otherwise it gets `now` (RFC 3339); reason
 * and message are replaced ("" is written as ""); conditions of other types stay as
 * they were, in their order; new types are appended.  *changed (may be NULL) tells
 * whether the result differs from `existing`.  Returns a new array, NULL when out of
 * memory. */
json_t *upgradeable_conditions_merge(const json_t *existing, const upgradeable_condition *want, size_t n,
                                     const char *now, bool *changed);

/* Writes `conds` on ClusterOperator "olm", creating it when absent; retries on
 * conflicts.  Skips the write when nothing would change. */
int upgradeable_write_cluster_operator(kube_client *c, const upgradeable_condition *conds, size_t n,
                                       olm_error *err);

/* One full pass (see the top).  0 when the conditions were written (or already
 * current), UPGRADEABLE_NOT_OPENSHIFT when the API is absent, -1 with err otherwise. */
int upgradeable_reconcile_once(kube_client *admin, const upgradeable_reconcile_opts *opts, olm_error *err);

/* ------------------------------------------------------------ event-driven reconciler */

typedef struct upgradeable_reconciler upgradeable_reconciler;

/* Loop thread, before or while the loop runs.  Checks (blocking discovery call) whether
 * config.openshift.io/v1 is served: if not, returns UPGRADEABLE_NOT_OPENSHIFT with *out
 * NULL and nothing started (the API is not looked for again).  When the API server cannot
 * answer, returns 0 with *out set all the same: the question is asked again on the
 * threadpool with back-off (5 s doubling to 5 min, WARN lines) until answered, and the
 * watches below start then.  Otherwise
 * starts watches (triggers only: they keep no objects) on ClusterExtensions, the
 * install record Secrets of the system namespace and ClusterVersion "version"; any
 * event of theirs queues the single key
 * "olm" on a kube_workqueue whose reconcile (threadpool) runs
 * upgradeable_reconcile_once; errors retry with back-off, success re-runs every 10
 * minutes.  `client` is borrowed and must outlive the reconciler; `opts` strings are
 * copied.  Returns 0 with *out set, or -1 with err. */
int upgradeable_reconciler_start(uv_loop_t *loop, kube_client *client, const upgradeable_reconcile_opts *opts,
                                 upgradeable_reconciler **out, olm_error *err);

/* Loop thread.  Stops the queue (waiting for a running pass), the watches and their
 * HTTP multi handle, frees the reconciler, then calls done_cb (may be NULL). */
void upgradeable_reconciler_stop(upgradeable_reconciler *r, void (*done_cb)(void *data), void *data);

/* Passes finished so far (successful or not); any thread.  For tests and logs. */
unsigned upgradeable_reconciler_passes(const upgradeable_reconciler *r);

#endif

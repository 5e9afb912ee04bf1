/* clusterextension: the ClusterExtension reconciler (resolve -> pull -> render ->
 * preflight -> apply -> status), its status conditions and the ServiceAccount token cache. */
#ifndef OLM_CLUSTEREXTENSION_H
#define OLM_CLUSTEREXTENSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "catalog.h"
#include "drift.h"
#include "render.h"
#include "resolve.h"
#include "kube_client.h"
#include "kube_informer.h"
#include "kube_workqueue.h"
#include "oci_pull.h"
#include "olm_error.h"

/* clusterextension_token_cache: ServiceAccount tokens (TokenRequest) kept between
 * reconciles.
 *
 * Bundle content is applied, read back and deleted as each ClusterExtension's
 * spec.serviceAccount, with a short-lived token from TokenRequest.  Minting one for
 * every reconcile costs an apiserver write each time (and, with drift watches, would
 * force every watch to be re-created), so tokens are cached per (namespace,
 * ServiceAccount) and reused while more than a third of their lifetime remains (the
 * kubelet refreshes projected tokens at 80 %; a third leaves room for a reconcile that
 * started just before the threshold, and for watches opened with the token).
 *
 * The lifetime is measured from the moment of the mint to status.expirationTimestamp
 * (or the requested seconds when the server sent none), so a server that shortens
 * tokens (--service-account-max-token-expiration) is honoured.
 *
 * A token the apiserver rejects (401: the ServiceAccount was deleted and re-created,
 * or the signing key rotated) is dropped with clusterextension_token_cache_invalidate and the caller
 * retries once with a fresh one.  Entries of deleted extensions are dropped with
 * clusterextension_token_cache_forget.
 *
 * Threading: every function may be called from any thread; one mutex guards the
 * table.  Minting runs outside the lock, so two reconciles that miss at once for the
 * same ServiceAccount may both mint; both tokens are valid and the later one is kept.
 *
 * Secrets: tokens are never logged; every copy this module frees is zeroed first
 * (explicit_bzero), and callers free theirs with clusterextension_token_free. */

/* Mints a token for ns/sa valid for `seconds`: *token malloc'd (the cache owns it
 * afterwards), *expires the server's expirationTimestamp or 0 when unknown.  Returns
 * 0 or a negative kube_result with err set (KUBE_NOT_FOUND: no such ServiceAccount). */
typedef int (*clusterextension_token_mint_fn)(void *data, const char *ns, const char *sa, int64_t seconds, char **token,
                                time_t *expires, olm_error *err);

/* Wall-clock seconds; tests pass a fake one. */
typedef time_t (*clusterextension_token_clock_fn)(void *data);

typedef struct clusterextension_token_cache_options {
    int64_t lifetime_seconds; /* expirationSeconds to request; 0: 3600 (the apiserver's minimum is 600) */
    clusterextension_token_mint_fn mint;    /* required */
    void *mint_data;
    clusterextension_token_clock_fn now;    /* NULL: time(NULL) */
    void *clock_data;
} clusterextension_token_cache_options;

typedef struct clusterextension_token_cache clusterextension_token_cache;

/* A token handed out by the cache: a private copy. */
typedef struct clusterextension_token {
    char *value;       /* owned; free with clusterextension_token_free (zeroes it) */
    time_t expires;    /* when the apiserver stops accepting it */
    time_t refresh_at; /* from then on the cache mints a new one instead */
} clusterextension_token;

clusterextension_token_cache *clusterextension_token_cache_new(const clusterextension_token_cache_options *opts, olm_error *err);
/* Zeroes and frees every cached token. */
void clusterextension_token_cache_free(clusterextension_token_cache *c);

/* The cached token of ns/sa while it is fresh enough, else a newly minted one (which
 * replaces the entry).  0 with *out filled, or the mint's negative result with err set
 * (then *out is zeroed and nothing is cached). */
int clusterextension_token_cache_get(clusterextension_token_cache *c, const char *ns, const char *sa, clusterextension_token *out, olm_error *err);

/* Whether ns/sa has an entry (fresh, or due for a new mint): a token of it was handed out and
 * may be in use (the drift watches run with one), so the next reconcile keeps it current. */
bool clusterextension_token_cache_has(clusterextension_token_cache *c, const char *ns, const char *sa);

/* Drops the entry of ns/sa if it still holds `token` (a newer token minted meanwhile
 * by another reconcile stays).  `token` NULL drops whatever is there. */
void clusterextension_token_cache_invalidate(clusterextension_token_cache *c, const char *ns, const char *sa, const char *token);

/* Drops the entry of ns/sa (its extension is gone). */
void clusterextension_token_cache_forget(clusterextension_token_cache *c, const char *ns, const char *sa);

size_t clusterextension_token_cache_size(clusterextension_token_cache *c);
/* Tokens minted since creation. */
uint64_t clusterextension_token_cache_mints(clusterextension_token_cache *c);

void clusterextension_token_free(clusterextension_token *t);

/* The mint function for a real apiserver: kube_token_request through `data`, a
 * kube_client with the right to create serviceaccounts/token. */
int clusterextension_token_mint_kube(void *data, const char *ns, const char *sa, int64_t seconds, char **token, time_t *expires,
                       olm_error *err);
/* Where clusterextension_identity_mint_impersonation looks for a ServiceAccount. */
typedef struct clusterextension_identity_source {
    kube_client *admin; /* may get serviceaccounts (borrowed) */
    /* Optional (borrowed): an informer of every ServiceAccount (keys "namespace/name").  One it
     * holds needs no GET; one it lacks is read from the apiserver all the same (the watch may
     * not have delivered it yet).  Not trusted before its first LIST, nor after a lost event. */
    kube_informer *service_accounts;
} clusterextension_identity_source;

/* The mint function when operator-controller impersonates ServiceAccounts: no token, an
 * impersonation credential (kube_config.h) once the ServiceAccount is seen to exist (`data`: a
 * clusterextension_identity_source).  KUBE_NOT_FOUND when it does not, as a TokenRequest
 * says; the credential is "valid" for `seconds`, after which the cache checks again.  A
 * ServiceAccount deleted meanwhile is not noticed before then (a token would be refused at
 * once): what the apiserver authorizes is the name's RBAC either way. */
int clusterextension_identity_mint_impersonation(void *data, const char *ns, const char *sa, int64_t seconds,
                                                 char **credential, time_t *expires, olm_error *err);

/* Whether `admin` may list and watch serviceaccounts cluster-wide (SelfSubjectAccessReviews;
 * no answer counts as no): the informer of clusterextension_identity_source then saves a GET
 * per ServiceAccount. */
bool clusterextension_identity_may_watch_service_accounts(kube_client *admin);

/* What the informer of ServiceAccounts keeps of each (kube_informer_transform): nothing but
 * its existence, whatever the ServiceAccount holds. */
json_t *clusterextension_identity_service_account_form(const json_t *obj, void *data);

/* clusterextension_status: the status a ClusterExtension reconcile writes, computed
 * from what the steps found (olmv1-behaviour.md §1.1, §2.2, §2.3, §2.4).
 *
 * Pure: no I/O, no clock (the caller passes `now`), so every rule is unit-tested.
 *  - Installed: True/Succeeded "Installed bundle <image> successfully" when something is
 *    installed, False/Failed "No bundle installed" when not, Unknown/Failed with the
 *    error when the installed state could not be read;
 *  - Progressing: True/Succeeded "Desired state reached", True/Retrying (error), or
 *    False/Blocked | False/InvalidConfiguration (terminal errors), or
 *    False/ProgressDeadlineExceeded (still retrying, past spec.progressDeadlineMinutes);
 *  - Available (our default mode; upstream sets it only with its BoxcutterRuntime gate): the
 *    built-in probes (probe.h) over the installed objects, as the last successful apply,
 *    repair or maintain saw them: True/ProbesSucceeded "Objects are available and pass all
 *    probes." or False/ProbeFailure with each failing object's line, joined by "\n"; left as
 *    it is when this reconcile probed nothing, removed when nothing is installed;
 *  - the four deprecation conditions when given (else left as they are);
 *  - status.install.bundle {name, version} (removed when nothing is installed);
 *  - observedGeneration on every condition set; lastTransitionTime kept while the
 *    condition's status is unchanged; messages cleaned of ephemeral socket addresses
 *    and truncated at 32768 bytes.
 * Conditions keep their order; new types are appended (apimeta.SetStatusCondition). */

#define CE_MESSAGE_MAX 32768
#define CE_TRUNCATED_SUFFIX "\n\n... [message truncated]"

typedef enum clusterextension_progress {
    CE_PROGRESS_SUCCEEDED = 0,  /* True/Succeeded "Desired state reached" */
    CE_PROGRESS_RETRYING,       /* True/Retrying: a retryable error */
    CE_PROGRESS_BLOCKED,        /* False/Blocked: terminal */
    CE_PROGRESS_INVALID_CONFIG, /* False/InvalidConfiguration: terminal config error */
    CE_PROGRESS_DEADLINE_EXCEEDED, /* False/ProgressDeadlineExceeded: retrying for too long */
} clusterextension_progress;

/* The message of ProgressDeadlineExceeded, upstream's words (its revisions roll out). */
#define CE_DEADLINE_MESSAGE "Revision has not rolled out for %lld minute(s). Last status: %s"

typedef struct clusterextension_installed_bundle {
    const char *name, *version, *image;
} clusterextension_installed_bundle;

/* Upstream's reasons and message (api/v1 clusterobjectset_types.go, clusterobjectset_controller.go). */
#define CE_AVAILABLE_REASON "ProbesSucceeded"
#define CE_UNAVAILABLE_REASON "ProbeFailure"
#define CE_AVAILABLE_MESSAGE "Objects are available and pass all probes."

typedef struct clusterextension_availability {
    bool available;
    const char *failures; /* when not available: the failing objects' lines, joined by "\n" */
} clusterextension_availability;

typedef struct clusterextension_status_input {
    int64_t generation;       /* metadata.generation */
    const char *now;          /* RFC 3339, used for lastTransitionTime of changed conditions */
    /* What is installed after this reconcile; NULL when nothing is. */
    const clusterextension_installed_bundle *installed;
    /* Non-NULL when the installed state could not be read: Installed=Unknown/Failed with
     * this message, status.install removed. */
    const char *installed_error;
    clusterextension_progress progress;
    const char *progress_message; /* the error text for non-Succeeded progress */
    /* The four conditions (resolve.h order), or NULL to leave them unchanged. */
    const deprecation_condition *deprecation;
    /* What the probes said of the installed objects, or NULL when they were not probed (the
     * condition is then left as it is, unless nothing is installed: then it goes). */
    const clusterextension_availability *available;
    bool no_available; /* the condition is turned off: removed */
} clusterextension_status_input;

/* Builds the new status object from `old_status` (borrowed, may be NULL) and `in`.
 * Fields other than conditions and install are carried over.  New reference, or NULL
 * with err on out of memory. */
json_t *clusterextension_status_compute(const json_t *old_status, const clusterextension_status_input *in, olm_error *err);

/* Sets one condition in `conditions` (a JSON array, modified) with apimeta semantics.
 * The message is cleaned and truncated here.  -1 on out of memory. */
int clusterextension_condition_set(json_t *conditions, const char *type, const char *status, const char *reason,
                     const char *message, int64_t generation, const char *now);

/* The message as written: "(read|write) (tcp|udp) <addr>-><addr>(: )?" removed
 * (upstream's regex), then cut to CE_MESSAGE_MAX bytes with CE_TRUNCATED_SUFFIX.
 * Caller frees; NULL on out of memory. */
char *clusterextension_message_clean(const char *message);

/* clusterextension_reconcile: the ClusterExtension reconciler (olmv1-behaviour.md §2.2
 * as adapted by the "decided" section).
 *
 * One reconcile of ClusterExtension <name>, run on a threadpool thread by the work queue:
 *   1. The object from the informer's cache when it is the newest version this process
 *      wrote or read, else a GET (clusterextension_cached.c: a status written from an older
 *      copy would be refused).  Gone → done.
 *   2. Finalizer CE_FINALIZER: added on first sight; on deletion the install record's
 *      objects are uninstalled (applier_uninstall), the bundle cache is removed, and the
 *      finalizer released.
 *   3. Installed state from the install record (applier_read_record).
 *   4. Resolve: the ClusterCatalog informer's objects → catalog_client_collect →
 *      resolve_bundle; resolution errors handled as §2.2 step 4 (incl. the fallback to
 *      the installed bundle when no catalog matches any more).
 *   5. Pull the bundle image (oci_pull_cached under <cache>/bundles/<name>/<digest>);
 *      a failed pull of the installed bundle keeps it (maintain mode).
 *   6. Load, validate spec.config.inline (terminal InvalidConfiguration), render.
 *   7. A token of spec.serviceAccount.name in spec.namespace: the apply identity
 *      (clusterextension.h: reused between reconciles; a 401 drops it and
 *      the apply is retried once with a fresh one).
 *   8. CRD upgrade-safety preflight unless enforcement is None.
 *   9. applier_apply (or applier_repair when the installed bundle and its object set
 *      are unchanged: the periodic drift repair); each live object they hold is probed
 *      (clusterextension_available.c, probe.h) for Available.  A repair reads no object
 *      that the drift watcher's shared watch holds with the content hash the install record
 *      kept and passing its probes (clusterextension_known_unchanged): a restart with 1,000
 *      extensions reads the objects of the few reconciled before the watches listed, not
 *      5,000.  The record learns the hashes it lacks (older or adopted records) from what a
 *      repair read.
 *  10. Status (clusterextension.h), written only when it changed; a 409 retries.
 *  11. On success, the install record's kinds, the token and what the probes saw of each
 *      object go to the drift watcher (drift.h), which watches the installed objects and
 *      enqueues the extension when one is deleted or changed, or when a status write changes
 *      what its probes say (Available); deletion stops them.
 * Errors retry with the work queue's back-off; terminal errors (Blocked,
 * InvalidConfiguration) do not.  Success requeues after repair_interval_ms when set.
 * spec.progressDeadlineMinutes (experimental upstream, where its Boxcutter runtime times a
 * revision's rollout): once the current generation has failed with retryable errors for that
 * long, Progressing turns False/ProgressDeadlineExceeded, "Revision has not rolled out for N
 * minute(s). Last status: <the error>"; retries go on, and the next success is
 * True/Succeeded again.  The clock starts at the first failure of a generation this process
 * sees (a restart starts it again), and a retry is due no later than the deadline, so the
 * condition flips on time whatever the back-off.
 *
 * Threading: clusterextension_reconcile may run for different keys on several threads at once; the
 * work queue never runs one key twice at a time.  The reconciler's counters are
 * atomic; everything else it holds is read-only after clusterextension_reconciler_new. */

#define CE_FINALIZER "olm.operatorframework.io/cleanup"
#define CE_API_VERSION "olm.operatorframework.io/v1"
#define CE_KIND "ClusterExtension"

/* --webhook-cert-provider: who issues the serving certificates of a bundle's webhooks. */
typedef enum clusterextension_cert_mode {
    CE_CERT_AUTO = 0,    /* OpenShift's service-ca when config.openshift.io/v1 is served, else
                          * cert-manager when cert-manager.io/v1 is, else none */
    CE_CERT_MANAGER,     /* cert-manager: an Issuer and a Certificate per webhook deployment */
    CE_CERT_SERVICE_CA,  /* OpenShift's service-ca: annotations only */
} clusterextension_cert_mode;

/* --service-account-identity: how requests act as a ClusterExtension's ServiceAccount. */
typedef enum clusterextension_identity_mode {
    CE_IDENTITY_AUTO = 0,      /* impersonation when operator-controller may impersonate ServiceAccounts
                                * and read them (config/rbac grants both), else tokens */
    CE_IDENTITY_IMPERSONATION, /* Impersonate-User with operator-controller's own credentials, once the
                                * ServiceAccount is seen to exist */
    CE_IDENTITY_TOKEN,         /* a TokenRequest per ServiceAccount, cached (upstream's way) */
} clusterextension_identity_mode;
/* Whether to act as ServiceAccounts by impersonation under `mode`: for auto, whether the
 * apiserver lets `admin` impersonate and get serviceaccounts (SelfSubjectAccessReviews; a
 * failure to ask means tokens).  Logs which, and why. */
bool clusterextension_identity_impersonates(kube_client *admin, clusterextension_identity_mode mode);

/* What a bundle with webhooks gets (Progressing True/Retrying) when no provider exists. */
#define CE_NO_CERT_PROVIDER_MESSAGE                                                                              \
    "the bundle has webhooks, and this cluster has no certificate provider for them: it serves neither "         \
    "config.openshift.io/v1 (OpenShift service-ca) nor cert-manager.io/v1 (cert-manager); install cert-manager, " \
    "or choose a provider with operator-controller --webhook-cert-provider"

/* The provider for `mode`, given which APIs the cluster serves; -1 when auto finds none. */
int clusterextension_cert_choose(clusterextension_cert_mode mode, bool openshift, bool cert_manager,
                                 render_cert_provider *out);

typedef struct clusterextension_reconciler_config {
    kube_client *admin;             /* the controller's identity (borrowed) */
    kube_informer *catalogs;        /* ClusterCatalog cache (borrowed) */
    /* Optional (borrowed): the ClusterExtension informer.  Reconciles then take their
     * extension from its cache instead of a GET when the cached copy is the newest this
     * process knows of (clusterextension_cached.c). */
    kube_informer *extensions;
    catalog_client *catalog_client; /* borrowed */
    const char *system_namespace;   /* install records live here */
    const char *cache_dir;          /* bundles unpack under <cache_dir>/bundles */
    oci_pull_opts pull;             /* registry options for bundle images (strings borrowed) */
    uint64_t repair_interval_ms;    /* requeue after success for drift repair; 0: never */
    int64_t token_seconds;          /* ServiceAccount token lifetime; 0: 3600 */
    uint64_t deadline_minute_ms;    /* a minute of spec.progressDeadlineMinutes; 0: 60000 (tests shorten it) */
    clusterextension_cert_mode cert_mode; /* webhooks' certificates (default auto) */
    /* Upstream's gates SingleOwnNamespaceInstallSupport and DeploymentConfig turned off: that
     * key of spec.config.inline is then an unknown field (zero: both on, our default). */
    bool no_watch_namespace, no_deployment_config;
    /* --ignore-service-account: spec.serviceAccount means nothing, as in upstream OLM v1 (every
     * bundle is applied with the controller's own identity).  Default false: a named
     * ServiceAccount is the identity bundle content is applied with. */
    bool ignore_service_account;
    /* --available-condition=false: no Available condition (it is removed where it was written),
     * no probes, and the drift watches do not look at status.  Zero: on, our default. */
    bool no_available_condition;
    /* --feature-gates=BoxcutterRuntime=true: every install and upgrade is a ClusterObjectSet
     * revision "<name>-<n>" (revision.h) rolled out by the ClusterObjectSet controller; nothing
     * is applied here, and the status follows the revisions (upstream's boxcutter mode). */
    bool boxcutter;
    clusterextension_token_cache *tokens;         /* borrowed; NULL: the reconciler keeps its own */
    drift_watcher *drift;        /* borrowed; NULL: no watch-based drift repair */
    /* The CRD upgrade-safety check (crdsafety_check); NULL skips the
     * preflight.  A pointer so the reconciler can be tested and built without it. */
    int (*crd_check)(const json_t *existing, const json_t *desired, olm_error *err);
} clusterextension_reconciler_config;

typedef struct clusterextension_reconciler clusterextension_reconciler;

/* Strings of `cfg` are copied; the pointers it holds are borrowed and must outlive the
 * reconciler. */
clusterextension_reconciler *clusterextension_reconciler_new(const clusterextension_reconciler_config *cfg, olm_error *err);
void clusterextension_reconciler_free(clusterextension_reconciler *r);

/* The work queue's reconcile function; `data` is the clusterextension_reconciler. */
kube_wq_result clusterextension_reconcile(const char *key, void *data);

/* Upper bounds, in seconds, of the reconcile duration histogram's buckets: from a no-op
 * reconcile (tens of ms) to a first install that pulls a bundle and waits for CRDs. */
#define CE_DURATION_NBOUNDS 11
extern const double clusterextension_duration_bounds[CE_DURATION_NBOUNDS];

/* Counters since start (any thread). */
typedef struct clusterextension_reconcile_stats {
    uint64_t total, errors, terminal;
    uint64_t duration_buckets[CE_DURATION_NBOUNDS]; /* reconciles per bucket, not cumulative */
    uint64_t micros_total; /* summed wall time of reconciles */
    uint64_t micros_max;
    uint64_t repaired_objects;
} clusterextension_reconcile_stats;
void clusterextension_reconciler_stats(clusterextension_reconciler *r, clusterextension_reconcile_stats *out);

/* The catalog the installed bundle of `extension` was resolved from by this process ("" when
 * unknown: not resolved since start, or nothing installed).  Any thread. */
void clusterextension_reconciler_catalog_of(clusterextension_reconciler *r, const char *extension, char *buf,
                                            size_t bufsz);

#endif

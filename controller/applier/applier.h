/* applier: puts a rendered bundle on the cluster as the ClusterExtension's
 * ServiceAccount, and takes it off again (ARCHITECTURE.md decisions 1 and 2).
 *
 *  - every object gets the owner labels (install_record.h) and is applied with
 *    server-side apply (field manager "olm.operatorframework.io", force) using the
 *    `as_sa` client, which authenticates with a TokenRequest token of
 *    spec.serviceAccount: the ServiceAccount's RBAC bounds what can be installed;
 *  - an object that already exists WITHOUT our owner labels (or owned by another
 *    extension) is a conflict: `<Kind> '<name>' already exists in namespace '<ns>' and
 *    cannot be managed by operator-controller` (cluster-scoped: "... already exists and
 *    cannot be managed ...");
 *  - CRDs are applied first and waited for (Established) before custom resources;
 *  - objects of the previous record that are no longer rendered are deleted (prune);
 *  - the install record Secret is written last with the `admin` client (the
 *    controller's own identity), so a failed apply never records a half install as
 *    installed: the previous bundle stays the installed one (or, on a first install,
 *    the record is a pending one), and the record only gains the objects the failed
 *    attempt may have created, so that the uninstall and the next prune remove them;
 *  - nothing already installed is deleted when an apply fails.
 * All functions block: run them on the threadpool. */
#ifndef OLM_APPLIER_H
#define OLM_APPLIER_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "install_record.h"
#include "kube_client.h"
#include "olm_error.h"

typedef struct applier_bundle {
    const char *name, *version, *image, *package;
    const char *properties; /* olm.properties JSON array text, verbatim */
} applier_bundle;

typedef struct applier_ctx {
    kube_client *admin;            /* the controller's identity: install records, reads */
    kube_client *as_sa;            /* the ClusterExtension's ServiceAccount: bundle content */
    const char *system_namespace;  /* where install records live */
    const char *extension;         /* ClusterExtension name */
    const char *owner_uid;         /* its metadata.uid: the Helm release Secret's ownerReference (NULL: none) */
    const char *release_namespace; /* its spec.namespace: the Helm release's namespace */
    int crd_wait_seconds;          /* how long to wait for CRDs to be Established; 0: 30 */
    /* Optional: called with each live object that applier_apply and applier_repair hold after
     * writing or checking it (the server-side apply's answer, the GET of an object that needed
     * no repair, every read of the wait for CRDs to be Established), borrowed for the call, the
     * last one of an object the newest.  What the ClusterExtension's probes judge, so that its
     * Available condition costs no request of its own. */
    void (*observe)(void *data, const json_t *live);
    void *observe_data;
    /* Optional: applier_repair's shortcut.  True when the live object `ref` is known, without
     * a request, to have `content_hash` (kube_object_content_hash; the record's, as the apply
     * that wrote the record left the object) -- and so to hold everything we apply -- and to
     * pass its probes; the callback then counts it as observed.  Then nothing of it is read
     * or written.  False (or no callback): it is read (and repaired) as usual.  The drift
     * watches' caches answer it, so a restart reads no installed object once they synced. */
    bool (*unchanged)(void *data, const install_object_ref *ref, uint64_t content_hash);
    void *unchanged_data;
    /* Optional (NULL: unused), owned by the caller: set true by a read of the Helm releases
     * (applier_read_record with no record of ours) that found none at all, so that the first
     * mirror write creates version 1 without listing them again; false once written.  One
     * LIST of the system namespace's Secrets less per first install (a LIST waits for the
     * apiserver's cache to be fresh: 41 ms on average at 1,000 extensions). */
    bool *no_helm_release;
    /* The ClusterExtension shows no sign that anyone ever installed it: no status.install and
     * none of upstream's finalizers (upstream adds them before it installs anything, and
     * writes status.install after).  Then no record of ours means a first install, and
     * applier_read_record looks for no Helm release to adopt (one LIST of the system
     * namespace's Secrets less per first install); it sets *no_helm_release as a LIST that
     * found none would.  Should a release of this extension exist all the same (our own
     * mirror, written just before a record create that failed), the mirror write's create
     * answers AlreadyExists and lists them then. */
    bool never_installed;
    /* Optional (NULL: unused), the caller's, shared by its reconciles (any thread): true once
     * the system namespace was seen to exist.  applier_apply reads the namespace before an
     * install only while it is false (one GET per install less); a record write answered
     * NotFound reads it again, and sets it false when the namespace is gone. */
    atomic_bool *system_namespace_seen;
    /* Optional: makes as_sa when it is NULL and the first request as the ServiceAccount is
     * due (applier_apply's, or a read or apply of applier_repair).  0 with ctx->as_sa set, or
     * -1 with err.  So a repair that finds every object as the apply left it
     * (applier_ctx.unchanged) asks for no token: a restart mints none. */
    int (*identity)(void *data, olm_error *err);
    void *identity_data;
    /* Optional, borrowed: the record Secret as the caller already read it (a LIST of them
     * all, or the memo of record_seen), which applier_read_record then uses instead of
     * reading it. */
    const json_t *record_secret;
    /* Optional: told the record Secret each time this context learns what the apiserver holds
     * (a read, a create or an update answered, a write that found it as wanted), and NULL when
     * it found none, deleted it, or a write ended without knowing what is there.  What it is
     * told may come back as record_secret in a later reconcile of the same extension
     * (clusterextension_record_memo.c).  Borrowed for the call only. */
    void (*record_seen)(void *data, const char *extension, const json_t *secret);
    void *record_seen_data;
} applier_ctx;

/* Applies `objects` (a JSON array of rendered objects, borrowed), prunes what `prev`
 * (NULL on first install) had that is no longer rendered, writes the new record into
 * *out.  On failure err says which object failed and why (the apiserver's message,
 * e.g. the forbidden verb/resource), and the record keeps the previous bundle (or is a
 * pending one), listing also what the failed attempt may have created.  One exception:
 * when only pruning failed, the new record was written and *out holds it (-1 is still
 * returned, with the pruning error); otherwise *out stays zeroed on failure. */
int applier_apply(const applier_ctx *ctx, const applier_bundle *bundle, json_t *objects,
                  const install_record *prev, install_record *out, olm_error *err);

/* Reads the extension's install record; 1 when found, 0 when there is none, -1 on error.
 * With no record of ours, a deployed Helm release that upstream OLM v1 wrote is adopted:
 * its bundle and objects become our record (written then; nothing else is touched). */
int applier_read_record(const applier_ctx *ctx, install_record *out, olm_error *err);

/* When our record names another bundle than the ClusterExtension's status does
 * (`status_bundle`: status.install.bundle.name, "" when none), upstream OLM v1 ran meanwhile
 * and installed that one: its deployed Helm release, when it names that bundle, replaces our
 * record (adopted as applier_read_record does).  1 replaced, 0 kept, -1 on error. */
int applier_refresh_record(const applier_ctx *ctx, const char *status_bundle, install_record *rec, olm_error *err);

/* Sets the record's bundle properties (olm.properties text) and writes it when they changed:
 * a record adopted from upstream's Helm release has none, and the OpenShift upgrade check
 * reads them.  0, or -1 with err (rec unchanged). */
int applier_record_set_properties(const applier_ctx *ctx, install_record *rec, const char *properties,
                                  olm_error *err);

/* Writes `rec` as the extension's install record (created, or replacing the one there) and,
 * unless it is pending, its Helm release mirror of `objects` (the installed objects, borrowed)
 * over the deployed one: for an install taken over from elsewhere (the ClusterObjectSet
 * revisions of the BoxcutterRuntime gate).  0, or -1 with err. */
int applier_record_write(const applier_ctx *ctx, const install_record *rec, const json_t *objects, olm_error *err);

/* Keeps in the record the content hashes a repair saw (`hashes`: one per record object, in its
 * order, 0 unknown), so that the next restart finds them in the drift watches' caches
 * (applier_ctx.unchanged): those the record does not know yet (written before it kept them, or
 * adopted from a Helm release), and with `repaired` (the repair re-applied something) every one
 * that changed.  A hash that merely moved (someone else's label) is not written for: that
 * object is read again by the next repair instead.  Writes only when something changed.  0,
 * or -1 with err (rec unchanged). */
int applier_record_set_hashes(const applier_ctx *ctx, install_record *rec, const uint64_t *hashes, bool repaired,
                              olm_error *err);

/* Deletes every object of `rec` (as_sa, falling back to admin for objects the SA may no
 * longer delete) and then the record itself.  Objects already gone are fine. */
int applier_uninstall(const applier_ctx *ctx, const install_record *rec, olm_error *err);

/* Drift repair: re-applies objects of `rec` that are missing or whose applied fields
 * changed.  `objects` are the rendered objects of the installed bundle.  Returns the
 * number of objects repaired, or -1. */
int applier_repair(const applier_ctx *ctx, const install_record *rec, json_t *objects, olm_error *err);

/* GET of bundle content as the ServiceAccount (ctx->as_sa), which manages it, so the
 * controller's own identity needs no read access to arbitrary kinds; when the
 * ServiceAccount may not read (401/403) or there is no SA client, as ctx->admin.  When
 * both are refused, err is the ServiceAccount's refusal.  KUBE_OK with *out,
 * KUBE_NOT_FOUND also when the kind is not served at all (its CRD is gone, so the object
 * is too), other codes with err set. */
int applier_get(const applier_ctx *ctx, const char *av, const char *kind, const char *ns, const char *name,
                json_t **out, olm_error *err);

#endif

/* applier_internal: what the applier_*.c files share.  Not a public API.
 *
 *   applier_objects.c    the labelled, ordered working set; identity and ownership rules
 *   applier_apply.c      applier_apply: conflict check, ordered SSA, CRD wait, record
 *   applier_prune.c      deleting what the previous record had and the new set has not
 *   applier_record.c     reading and writing the install record Secret
 *   applier_uninstall.c  applier_uninstall
 *   applier_repair.c     applier_repair */
#ifndef OLM_APPLIER_INTERNAL_H
#define OLM_APPLIER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "applier.h"

#define APPLIER_FIELD_MANAGER "olm.operatorframework.io"
#define APPLIER_OWNER_KIND "ClusterExtension"
#define APPLIER_CRD_WAIT_DEFAULT 30

/* Apply phases, in the order objects are applied (uninstall deletes in reverse):
 * namespaces first so that namespaced content has somewhere to go; CRDs next (and
 * waited for) so custom resources of the bundle resolve; identities and RBAC before
 * the workloads that use them; webhook configurations last so that a webhook whose
 * Deployment is not up yet cannot block the rest of the install. */
enum applier_phase {
    PHASE_NAMESPACE,
    PHASE_CRD,
    PHASE_SERVICEACCOUNT,
    PHASE_ROLE,
    PHASE_BINDING,
    PHASE_CONFIG,
    PHASE_SERVICE,
    PHASE_OTHER,
    PHASE_WEBHOOK,
};

typedef struct applier_obj {
    json_t *obj;                        /* owned: a copy with the owner labels merged in */
    const char *api_version, *kind, *name; /* borrowed from obj */
    const char *ns;                     /* borrowed from obj; "" when absent */
    int phase;
    size_t index;                       /* position in the rendered array (stable order) */
} applier_obj;

typedef struct applier_set {
    applier_obj *v; /* owned */
    size_t n;
} applier_set;

/* Copies every object of `objects`, merges the owner labels, drops server-populated
 * fields (status, resourceVersion, uid, managedFields, ...), checks apiVersion, kind
 * and metadata.name, and sorts by (phase, index).  Free with applier_set_free. */
int applier_set_build(const char *extension, const json_t *objects, applier_set *out, olm_error *err);
void applier_set_free(applier_set *s);
int applier_phase_of(const char *api_version, const char *kind);

/* The group part of an apiVersion ("" for the core group), length in *len. */
const char *applier_group(const char *api_version, size_t *len);
/* Same object: same group (not version), kind, namespace and name. */
bool applier_same_object(const char *av1, const char *kind1, const char *ns1, const char *name1, const char *av2,
                         const char *kind2, const char *ns2, const char *name2);

/* "<Kind> '<name>' in namespace '<ns>'" or "<Kind> '<name>'" into buf. */
const char *applier_describe(char *buf, size_t len, const char *kind, const char *ns, const char *name);
/* Sets the §2.3 conflict message; returns -1. */
int applier_conflict(olm_error *err, const char *kind, const char *ns, const char *name);

typedef enum applier_owner {
    OWNER_OURS,       /* owner labels name this extension */
    OWNER_UNLABELLED, /* no owner-name label */
    OWNER_OTHER,      /* owner labels name something else */
} applier_owner;
applier_owner applier_owner_of(const json_t *existing, const char *extension);

/* The apiserver refused the identity (403), or no longer accepts its credentials (401). */
static inline bool applier_denied(int rc)
{
    return rc == KUBE_FORBIDDEN || rc == KUBE_UNAUTHORIZED;
}

/* Fills a record reference for `o` (strings copied), with the namespace cleared for
 * cluster-scoped kinds (discovery through admin). */
int applier_ref_of(kube_client *admin, const applier_obj *o, install_object_ref *ref, olm_error *err);
void applier_ref_free(install_object_ref *ref);
/* Deep copy of src into dst; -1 (dst zeroed) when out of memory. */
int applier_ref_copy(const install_object_ref *src, install_object_ref *dst);
bool applier_record_has(const install_object_ref *refs, size_t n, const install_object_ref *ref);

/* applier_get answered from the apiserver's watch cache (kube_get_resource_cached): for the
 * conflict check, which cannot be atomic with the apply that follows it anyway, so a read a few
 * milliseconds behind etcd changes nothing it guarantees. */
int applier_get_cached(const applier_ctx *ctx, const char *av, const char *kind, const char *ns, const char *name,
                       json_t **out, olm_error *err);

/* Server-side apply of o->obj as the ServiceAccount; *out (may be NULL) gets the result.
 * The error names the object and keeps the apiserver's message. */
int applier_apply_one(const applier_ctx *ctx, const applier_obj *o, json_t **out, olm_error *err);

/* Waits (applier_get reads) until every CRD of `set` is Established, at most
 * ctx->crd_wait_seconds (0: APPLIER_CRD_WAIT_DEFAULT). */
int applier_wait_crds(const applier_ctx *ctx, const applier_set *set, olm_error *err);

/* Deletes the objects of `prev` that are not in `keep` (reverse record order), as the
 * ServiceAccount.  Objects now owned by someone else are left alone.  Objects that
 * could not be deleted are appended to *left (copies; caller frees with
 * applier_refs_free); returns -1 with err naming the first failure when any failed. */
int applier_prune(const applier_ctx *ctx, const install_record *prev, const install_object_ref *keep, size_t nkeep,
                  install_object_ref **left, size_t *nleft, olm_error *err);
void applier_refs_free(install_object_ref *refs, size_t n);

/* The ServiceAccount's client, made now through ctx->identity when there is none yet: 0
 * with ctx->as_sa set, or -1 with err. */
int applier_identity(const applier_ctx *ctx, olm_error *err);

/* -1 with a clear message when ctx->system_namespace does not exist (sets, when the caller
 * keeps it, ctx->system_namespace_seen either way). */
int applier_check_system_namespace(const applier_ctx *ctx, olm_error *err);
/* Creates or updates the record Secret through admin (skips the write when unchanged).
 * likely_new: the caller found no record a moment ago, so the create is tried before any
 * read (an AlreadyExists falls back to read-then-update: the outcome is the same, one
 * request fewer for a first install).  The system namespace is only looked at when the
 * write fails with NotFound, to say what is missing. */
int applier_write_record(const applier_ctx *ctx, const install_record *rec, bool likely_new, olm_error *err);
/* The same, where rec changed since the last write: first the Helm release that upstream
 * reads (applier_helm.c; `objects` as applied, NULL: the record's references), so that a
 * failure leaves our record as it was and the retry writes both; mirror false skips it. */
int applier_write_record_mirrored(const applier_ctx *ctx, const install_record *rec, const json_t *objects,
                                  bool mirror, bool likely_new, olm_error *err);

/* applier_helm.c: upstream's install record, a Helm release in chunked Secrets. */
/* applier_record.c: tells ctx->record_seen (when set) what the apiserver holds of the record
 * Secret now: `secret`, or NULL when none or not known. */
void applier_record_seen(const applier_ctx *ctx, const json_t *secret);
int applier_write_helm_release(const applier_ctx *ctx, const install_record *rec, const json_t *objects,
                               olm_error *err);
/* The deployed release as a record: 1, 0 when there is none, -1 on error. */
int applier_read_helm_release(const applier_ctx *ctx, install_record *out, olm_error *err);
int applier_delete_helm_releases(const applier_ctx *ctx, olm_error *err);

#endif

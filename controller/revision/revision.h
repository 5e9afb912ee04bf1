/* revision: a ClusterExtension's install as a ClusterObjectSet revision (upstream's
 * BoxcutterRuntime, operator-controller df2c201 internal/operator-controller/applier:
 * boxcutter.go, phase.go, secretpacker.go), and the revisions read back.
 *
 * Pure: JSON in, JSON out, no I/O, so every rule is unit-tested.  The reconcile
 * (controller/clusterextension/clusterextension_revision*.c) sends what this builds. */
#ifndef OLM_REVISION_H
#define OLM_REVISION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "olm_error.h"

#define REVISION_API_VERSION "olm.operatorframework.io/v1"
#define REVISION_KIND "ClusterObjectSet"
#define REVISION_RESOURCE "clusterobjectsets"

/* Upstream's labels and annotations (internal/operator-controller/labels). */
#define REVISION_LABEL_OWNER_KIND "olm.operatorframework.io/owner-kind"
#define REVISION_LABEL_OWNER_NAME "olm.operatorframework.io/owner-name"
#define REVISION_LABEL_REVISION_NAME "olm.operatorframework.io/revision-name"
#define REVISION_LABEL_MIGRATED "olm.operatorframework.io/migrated-from-helm"
#define REVISION_ANN_PACKAGE "olm.operatorframework.io/package-name"
#define REVISION_ANN_BUNDLE_NAME "olm.operatorframework.io/bundle-name"
#define REVISION_ANN_BUNDLE_VERSION "olm.operatorframework.io/bundle-version"
#define REVISION_ANN_BUNDLE_REFERENCE "olm.operatorframework.io/bundle-reference"
#define REVISION_ANN_PROPERTIES "olm.properties"
#define REVISION_SECRET_TYPE "olm.operatorframework.io/object-data"
/* This project's: the ServiceAccount the ClusterObjectSet controller applies the revision's
 * objects with (controller/objectset; without them, its own identity, as upstream). */
#define REVISION_ANN_SA_NAME "olm.operatorframework.io/service-account-name"
#define REVISION_ANN_SA_NAMESPACE "olm.operatorframework.io/service-account-namespace"

/* secretpacker.go: a Secret holds up to this many bytes of data; an object larger than the
 * gzip threshold is stored gzip-compressed, and one still larger after that is refused. */
#define REVISION_MAX_SECRET_DATA (900u * 1024u)
#define REVISION_GZIP_THRESHOLD (900u * 1024u)
/* boxcutter.go ClusterObjectSetRetentionLimit: archived revisions beyond the newest five go. */
#define REVISION_RETENTION_LIMIT 5

/* phase.go: the phase of an object by group and kind ("deploy" for any kind not listed),
 * and the phases in rollout order. */
const char *revision_phase_of(const char *group, const char *kind);
extern const char *const revision_phase_order[];
extern const size_t revision_phase_count;

/* The bundle a revision installs (strings borrowed). */
typedef struct revision_bundle {
    const char *name, *version, *image, *package;
    const char *properties; /* the bundle's olm.properties annotation, or NULL when it has none */
} revision_bundle;

typedef struct revision_input {
    const char *extension;      /* ClusterExtension metadata.name */
    const char *extension_uid;  /* its metadata.uid (the owner reference) */
    int64_t number;             /* spec.revision; the name is "<extension>-<number>" */
    const char *system_namespace; /* where the object Secrets go */
    int64_t progress_deadline_minutes; /* the extension's spec.progressDeadlineMinutes; <= 0: none */
    /* Revision 1 made from an install that exists already (upstream's Helm migration):
     * collisionProtection None (the objects are ours to adopt) and the migrated-from-helm
     * label.  Otherwise collisionProtection Prevent. */
    bool migrated;
    /* The extension's spec.serviceAccount.name and spec.namespace, or NULL/"": the revision's
     * objects are then applied with the ClusterObjectSet controller's own identity. */
    const char *service_account, *service_account_namespace;
} revision_input;

typedef struct revision_built {
    char *name;       /* "<extension>-<number>" */
    json_t *cos;      /* the ClusterObjectSet; its phases reference the Secrets */
    json_t *secrets;  /* array of the immutable Secrets holding the objects, in creation order */
} revision_built;

/* Builds revision `in->number` of the rendered `objects` (a JSON array, borrowed) as upstream's
 * GenerateRevision + createExternalizedRevision do: each object keeps only metadata name,
 * namespace, labels and annotations (status and kubectl's last-applied annotation go), gets the
 * owner labels and the bundle-version and package-name annotations, and is sorted into its
 * phase; the objects are then packed into content-addressed Secrets.  0, or -1 with err (an
 * object too large even compressed; out of memory).  Free `out` with revision_built_free. */
int revision_build(const revision_input *in, const revision_bundle *b, const json_t *objects, revision_built *out,
                   olm_error *err);
void revision_built_free(revision_built *b);

/* secretpacker.go's Pack over `phases` (a COS spec.phases array whose objects are inline):
 * replaces each {"object": ...} with {"ref": {name, namespace, key}} in place and appends the
 * Secrets to `secrets`.  0, or -1 with err. */
int revision_pack(json_t *phases, const char *revision_name, const char *owner_name, const char *system_namespace,
                  json_t *secrets, olm_error *err);

/* An object as upstream stores it in a Secret: encoding/json's bytes (keys sorted, compact,
 * <, >, & and U+2028/9 escaped).  malloc'd, *len set; NULL on out of memory. */
char *revision_object_bytes(const json_t *object, size_t *len);

/* ------------------------------------------------------------ revisions read back */

typedef struct revision_info {
    const char *name;        /* borrowed from the listed object */
    int64_t number;          /* spec.revision */
    bool archived;           /* spec.lifecycleState Archived */
    bool succeeded;          /* status condition Succeeded True */
    const char *bundle_name, *bundle_version, *image, *package; /* annotations ("" when absent) */
    const json_t *object;    /* the whole object (borrowed) */
} revision_info;

/* The revisions in `items` (a list's items, borrowed: keep it alive) sorted by spec.revision,
 * oldest first.  *out malloc'd (NULL when there are none).  -1 on out of memory. */
int revision_infos(const json_t *items, revision_info **out, size_t *n);

/* Upstream's RevisionStates (BoxcutterRevisionStatesGetter): over the Active revisions, oldest
 * first, the last one that succeeded is installed; the others roll out.  `rolling` gets
 * indexes into infos (caller-provided, n entries); *installed -1 when none. */
void revision_states(const revision_info *infos, size_t n, ssize_t *installed, size_t *rolling, size_t *nrolling);

/* A condition of a revision's status by type (borrowed), or NULL. */
const json_t *revision_condition(const json_t *cos, const char *type);

/* Whether `desired` (built with the latest revision's own name) is what `current` holds in
 * its immutable fields (phases, collisionProtection) and `current` is Active: upstream's
 * "the SSA patch is not Invalid", i.e. no new revision is needed. */
bool revision_unchanged(const json_t *current, const json_t *desired);

/* ------------------------------------------------------------ revisions compared by meaning
 * (revision_compare.c, revision_typed.c) */

/* What upstream's typed objects hold beyond the rendered JSON: "strategy":{} on a Deployment and
 * "resources":{} on each of its containers when absent (Go writes empty non-pointer structs).
 * In place; revision_build applies it to every object, so that upstream, whose check is by
 * bytes, finds our revisions to be its own.  0, or -1 on out of memory. */
int revision_typed_fields(json_t *obj);

/* `phases` (a spec.phases array) with each {"ref": ...} replaced by {"object": ...} read from
 * `secrets` (an array of Secret objects, data base64, gzip'd or not), as upstream's
 * resolveObjectRef reads them.  A new array, or NULL with err (a Secret or key missing,
 * undecodable data, out of memory). */
json_t *revision_phases_inline(const json_t *phases, const json_t *secrets, olm_error *err);

/* 1 when two objects are the same apart from what two writers of one bundle may legitimately
 * differ in: key order, nulls, empty objects and empty arrays (Go's zero values), numbers written
 * as 1 or 1.0.  0 when not, -1 on out of memory. */
int revision_objects_equivalent(const json_t *a, const json_t *b);

/* Phases (both inline, as revision_phases_inline gives them) with the same names, order,
 * collisionProtection and equivalent objects in the same order: 1, else 0 (-1: out of memory). */
int revision_phases_equivalent(const json_t *a, const json_t *b);

/* The semantic form of revision_unchanged: `current` (a listed revision, with its phases inline
 * in `current_phases`) is Active, has `desired`'s collisionProtection and equivalent phases
 * (`desired_phases`, inline).  1, 0, or -1 on out of memory. */
int revision_equivalent(const json_t *current, const json_t *current_phases, const json_t *desired,
                        const json_t *desired_phases);

/* The gzip'd bytes of an object-data Secret's key, decompressed with upstream's 10 MiB limit
 * (`what` names them in errors): malloc'd with *out_len, or NULL with err. */
char *revision_gunzip(const unsigned char *in, size_t n, size_t *out_len, const char *what, olm_error *err);

#endif

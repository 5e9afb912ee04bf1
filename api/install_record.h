/* install_record: what operator-controller installed for one ClusterExtension.
 *
 * Stored as a Secret in the system namespace (ARCHITECTURE.md decision 2):
 *   name   "olmv1-install-<extension name>" (names longer than 253 are hashed: see
 *          install_record_secret_name)
 *   type   "olm.operatorframework.io/install-record"
 *   labels olm.operatorframework.io/owner-kind=ClusterExtension,
 *          olm.operatorframework.io/owner-name=<extension>,
 *          olm.operatorframework.io/install-record="true"
 *   data   "record.json": the JSON below (base64 in the Secret, as Secrets are).
 *
 * record.json:
 *   {"extension":"<name>",
 *    "bundle":{"name":..,"version":..,"image":..,"package":..},
 *    "properties":"<the bundle's olm.properties JSON array, as TEXT, verbatim>",
 *    "objects":[{"apiVersion":..,"kind":..,"namespace":..,"name":..,
 *                "contentHash":"<16 hex digits>"}, ...],   (contentHash optional)
 *    "installedAt":"<RFC 3339>",
 *    "pending":true}           (only in a pending record, see below)
 * `contentHash` (install_object_ref.content_hash) is left out when unknown; a reader that does
 * not know it ignores it.
 * `properties` is kept as text because olm.maxOpenShiftVersion values must keep their
 * exact number text (4.10 is not 4.1), which a JSON DOM would lose.
 *
 * A pending record says that nothing is installed yet, but that a first install which
 * failed part-way may have left the objects it lists on the cluster: the uninstaller
 * deletes them and the next apply prunes them, while the reconciler reports no bundle
 * (bundle names the one that was being installed; properties "[]", installedAt "").
 *
 * The OpenShift upgradeable check, the resolver (installed bundle) and the pruner all
 * read this record; only the applier writes it. */
#ifndef OLM_INSTALL_RECORD_H
#define OLM_INSTALL_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "olm_error.h"

#define INSTALL_RECORD_TYPE "olm.operatorframework.io/install-record"
#define INSTALL_RECORD_LABEL "olm.operatorframework.io/install-record"
#define OWNER_KIND_LABEL "olm.operatorframework.io/owner-kind"
#define OWNER_NAME_LABEL "olm.operatorframework.io/owner-name"

typedef struct install_object_ref {
    char *api_version, *kind, *namespace_, *name; /* owned; namespace_ "" when cluster-scoped */
    /* kube_object_content_hash of the object as the apply that wrote this record left it; 0:
     * unknown (records written before it was kept, or adopted from Helm).  Lets a restart see
     * from the drift watches' caches, without a GET, that an object is still as applied. */
    uint64_t content_hash;
} install_object_ref;

typedef struct install_record {
    char *extension;      /* owned */
    char *bundle_name, *bundle_version, *bundle_image, *package; /* owned */
    char *properties;     /* owned: JSON array text, verbatim; "[]" when none */
    install_object_ref *objects; /* owned array */
    size_t nobjects;
    char *installed_at;   /* owned, RFC 3339 */
    bool pending;         /* nothing installed: the objects of a failed first install */
} install_record;

/* "olmv1-install-<ext>", or a hashed form when too long.  Caller frees. */
char *install_record_secret_name(const char *extension);

/* record <-> record.json text.  Caller frees the returned text / the record. */
char *install_record_to_json(const install_record *r);
int install_record_from_json(const char *text, size_t len, install_record *out, olm_error *err);
/* Reads the record from a Secret object (data["record.json"], base64). */
int install_record_from_secret(const json_t *secret, install_record *out, olm_error *err);
/* Builds the Secret object for `r` in `system_namespace`.  New reference. */
json_t *install_record_to_secret(const install_record *r, const char *system_namespace);
void install_record_free(install_record *r);

#endif

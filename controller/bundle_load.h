/* bundle_load: reads a registry+v1 bundle directory (spec §5.1).
 *
 *   metadata/annotations.yaml   required; only the package annotation is read
 *   metadata/properties.yaml    optional; appended to the CSV's olm.properties
 *   manifests/                  flat; every file is a YAML or JSON stream of objects
 *
 * The result is plain JSON (jansson), the shape every later step reads. */
#ifndef OLM_BUNDLE_LOAD_H
#define OLM_BUNDLE_LOAD_H

#include <jansson.h>

#include "olm_error.h"

typedef struct bundle {
    char *package_name; /* owned; "" when annotations.yaml does not name one */
    json_t *csv;        /* owned reference: the ClusterServiceVersion (the last one wins) */
    json_t *crds;       /* owned array of CustomResourceDefinition objects, file order */
    json_t *others;     /* owned array of every other object, file order */
} bundle;

/* Loads `dir` into `out` (which the caller zero-initialises).  On failure `out` is
 * left empty and `err` says which file and why.  Free with bundle_free. */
int bundle_load_dir(const char *dir, bundle *out, olm_error *err);
void bundle_free(bundle *b);

/* Supported install modes of a CSV (spec.installModes[] with supported: true). */
enum {
    INSTALL_MODE_ALL = 1,    /* AllNamespaces */
    INSTALL_MODE_MULTI = 2,  /* MultiNamespace */
    INSTALL_MODE_OWN = 4,    /* OwnNamespace */
    INSTALL_MODE_SINGLE = 8, /* SingleNamespace */
};
unsigned bundle_install_modes(const json_t *csv);
/* Writes Go's %v of the sorted mode names, e.g. "[AllNamespaces OwnNamespace]". */
void bundle_install_modes_format(unsigned modes, char *buf, size_t size);

/* Member lookup by a dotted path ("spec.install.spec"); NULL when any step is
 * missing or not an object.  Borrowed. */
json_t *bundle_json_path(const json_t *root, const char *path);
/* The string at `path`, or "" (never NULL). */
const char *bundle_json_str(const json_t *root, const char *path);

#endif

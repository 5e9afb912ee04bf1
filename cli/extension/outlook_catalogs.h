/* outlook_catalogs: every ClusterCatalog listed and read once for the outlook
 * (extension_outlook.h) of many extensions, as `get extensions -o wide` shows it: each
 * extension's selector picks its catalogs from the same content, as operator-controller
 * would pick them. */
#ifndef OLMV1_CLI_OUTLOOK_CATALOGS_H
#define OLMV1_CLI_OUTLOOK_CATALOGS_H

#include <jansson.h>

#include "cluster_catalogs.h"
#include "extension_outlook.h"

typedef struct outlook_catalogs {
    catalog_source src;
    cluster_catalog_set set;
    resolve_catalog *view; /* set.n entries */
    char *error;           /* why the catalogs could not be listed, or NULL */
} outlook_catalogs;

/* Lists the ClusterCatalogs and reads the content of those that some extension of the
 * array `extensions` selects.  When they cannot be listed, out->error says why (the
 * outlook is then unknown) and 0 is returned all the same: only a bad catalogd URL or
 * out of memory fail (an exit code). */
int outlook_catalogs_read(kube_client *c, const char *catalogd_url, const json_t *extensions, outlook_catalogs *out,
                          olm_error *err);
void outlook_catalogs_free(outlook_catalogs *oc);

/* The outlook of ClusterExtension `ce`.  *known is false (and *out empty) when its
 * catalogs could not be listed or one it selects could not be read.  0, or
 * CLI_EXIT_FAILED on out of memory. */
int outlook_for_extension(const outlook_catalogs *oc, const json_t *ce, extension_outlook *out, bool *known,
                          olm_error *err);

#endif

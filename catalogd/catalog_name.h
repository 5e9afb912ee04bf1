/* catalog_name: the Kubernetes DNS-1123 subdomain rule for ClusterCatalog names.
 *
 * catalogd validates the {catalog} path segment with it before touching the store (so a
 * name can never walk out of <root>/catalogs), and the store checks it again on write. */
#ifndef OLM_CATALOG_NAME_H
#define OLM_CATALOG_NAME_H

#include <stddef.h>

/* Returns 0 when `name` (len bytes, may hold NULs) is a DNS-1123 subdomain.  Otherwise
 * returns -1 and writes the apimachinery messages joined by "; " into msg (NUL-terminated,
 * truncated to msgsz). */
int catalog_name_check(const char *name, size_t len, char *msg, size_t msgsz);

#endif

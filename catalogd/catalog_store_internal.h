/* Between the two halves of the catalog store (catalog_store_write.c, catalog_store_view.c). */
#ifndef OLM_CATALOG_STORE_INTERNAL_H
#define OLM_CATALOG_STORE_INTERNAL_H

#include "catalog_store.h"
#include "catalog_store_index.h"

/* A view of `cat` before it is on disk: its jsonl buffer as the data, `idx` (built from `cat`
 * by store_index_build) as the index, moved into the view (idx is left empty, also on
 * failure, when it is freed), `source` (may be NULL) as the digest ref it came from.  `cat`
 * must outlive the view unless the view adopts it.
 * NULL with err set. */
store_view *store_view_of_memory(const char *name, const fbc_catalog *cat, store_index *idx, time_t mtime,
                                 const char *source, olm_error *err);

/* The memory view `v` frees `cat` (the one it shows) when its last reference goes. */
void store_view_adopt_catalog(store_view *v, fbc_catalog *cat);

#endif

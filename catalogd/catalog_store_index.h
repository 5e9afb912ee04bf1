/* The catalog store's index (index.json's three maps, key -> ranges of catalog.jsonl) as the
 * view holds it, and its making from a loaded catalog.  Internal to the catalog store. */
#ifndef OLM_CATALOG_STORE_INDEX_H
#define OLM_CATALOG_STORE_INDEX_H

#include <stddef.h>

#include "catalog_store.h"
#include "strbuf.h"

typedef struct index_entry {
    char *key;          /* owned, or borrowed from the catalog when the map has a `block` */
    store_range *r;     /* sorted by off: owned, or a slice of the map's `block` */
    size_t n;
} index_entry;

typedef struct index_map {
    index_entry *e;     /* owned, sorted by key (strcmp) */
    size_t n;
    /* Set by store_index_build: every entry's ranges are slices of this one owned array
     * and its keys are the catalog's own strings (the catalog outlives the view).  NULL for
     * a map parsed from index.json, whose entries own their keys and ranges. */
    store_range *block;
} index_map;

typedef struct store_index {
    index_map maps[3];  /* by store_key */
    store_range *all;   /* owned: every range of by_schema, sorted by off */
    size_t nall;
} store_index;

int index_entry_cmp(const void *a, const void *b); /* by key, for qsort and bsearch */

/* Fills `idx` straight from cat->metas (offset order): one entry per distinct non-empty
 * schema / package / name (§4.3: empty keys are not indexed), its ranges in offset order.
 * The keys are borrowed from `cat`.  0, or -1 when memory runs out (idx then empty). */
int store_index_build(const fbc_catalog *cat, store_index *idx);

/* Appends index.json's text for `idx` to `out`: {"by_schema":{..},"by_package":{..},
 * "by_name":{..}}\n, compact, keys sorted, each key -> [[off,len],...], keys escaped as
 * jansson's json_dumps does without flags -- byte for byte what catalogd wrote when it built
 * the file with jansson.  0, or -1 when memory runs out. */
int store_index_write_json(const store_index *idx, strbuf *out);

void index_map_free(index_map *m);
void store_index_free(store_index *idx); /* leaves idx empty */

#endif

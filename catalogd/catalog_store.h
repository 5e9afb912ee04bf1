/* catalog_store: catalogd's on-disk catalog store and its in-memory views.
 *
 * Layout (shared/spec/olmv1-behaviour.md §4.3):
 *   <root>/catalogs/<name>/catalog.jsonl   every normalised meta blob, one per line
 *   <root>/catalogs/<name>/catalog.jsonl.gz the same bytes gzipped once, just after the write
 *                                          (store_add_gzip), so that the server never
 *                                          compresses a catalog
 *   <root>/catalogs/<name>/source          the digest ref the content came from (optional)
 *   <root>/catalogs/<name>/index.json      {"by_schema":{..},"by_package":{..},"by_name":{..}}
 *                                          each key -> [[offset,len],...] into catalog.jsonl
 *
 * A write builds the new store in <root>/catalogs/.<name>-XXXXXX and swaps it in with one
 * atomic rename (renameat2 RENAME_EXCHANGE when the old store exists), so a reader opening
 * the store sees either the old or the new content, never a mix or a gap.
 *
 * Durability comes after, in store_sync: a new catalog is served (and its status says so)
 * without waiting for ~20 MB to reach the disk.  Until then the store holds the marker file
 * `not-durable`, written and fsynced before anything else, so after a power cut a store
 * that may be torn is known as such (store_is_durable) and is pulled again rather than
 * served.  Stores written before the marker existed were fsynced whole and have none.
 *
 * A store_view is an immutable snapshot: the mmap of catalog.jsonl plus the parsed index and
 * the file's mtime (or, for a catalog not written yet, its buffer in memory: store_draft_view).  It stays valid (the mapping keeps the unlinked file alive) after a newer
 * version is swapped in, until its last reference is released.
 *
 * Threads: store_write/store_delete/store_gc/store_open do blocking file I/O and are meant for
 * the libuv threadpool (or startup).  Writes for one catalog name, and store_gc, must be
 * serialised by the caller (gc removes in-progress temp dirs).  A view may be shared between
 * threads: its reference count is atomic and its content never changes. */
#ifndef OLM_CATALOG_STORE_H
#define OLM_CATALOG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fbc.h"
#include "olm_error.h"

typedef struct store_range {
    uint64_t off;
    uint64_t len;
} store_range;

typedef struct store_view store_view;

typedef enum store_key {
    STORE_BY_SCHEMA = 0,
    STORE_BY_PACKAGE = 1,
    STORE_BY_NAME = 2,
} store_key;

#define STORE_SOURCE_FILE "source"
#define STORE_NOT_DURABLE_FILE "not-durable"

/* Writes catalog `name` (a DNS-1123 subdomain; checked) from `cat` (metas in load order)
 * and swaps it in atomically, with `source` (may be NULL: none) as the ref it came from.
 * Orphaned temp dirs of this catalog are removed first.  On failure nothing already
 * stored changes.  The new store is not durable yet (store_sync) and has no gzip form
 * (store_add_gzip). */
int store_write(const char *root, const char *name, const fbc_catalog *cat, const char *source, olm_error *err);

/* store_write in two halves, for a catalog served before it is written (catalogd: Serving
 * is reported before ~20 MB reach the page cache, which alone can take 50 ms):
 *   store_draft_new   checks the name, makes the temp dir with the not-durable marker, writes
 *                     index.json and `source`, and reserves catalog.jsonl's room (fallocate),
 *                     so that a full disk fails here, while the old store is still current;
 *   store_draft_view  a view of the catalog from memory, to serve at once;
 *   store_draft_commit writes catalog.jsonl into its room and swaps the store in (not durable
 *                     yet: store_sync);
 *   store_draft_free  drops the draft, and the temp dir if it was not committed.
 * With `adopt` the draft's view takes `cat` and frees it when its last reference goes (the
 * server may hold it after the draft is freed); otherwise `cat` must outlive the draft and its
 * views.  Nothing is adopted when store_draft_new fails (NULL, err set).  store_gc removes
 * temp dirs, so the caller serialises it with the whole life of a draft. */
typedef struct store_draft store_draft;
store_draft *store_draft_new(const char *root, const char *name, fbc_catalog *cat, bool adopt, const char *source,
                             olm_error *err);
store_view *store_draft_view(store_draft *d); /* a new reference */
int store_draft_commit(store_draft *d, olm_error *err);
void store_draft_free(store_draft *d); /* NULL is a no-op */

/* Makes the current store of `name` durable: fsyncs its files, its directory and the
 * rename, then removes the not-durable marker.  0 also when it is durable already; -1 with
 * err set (the marker stays).  Serialised with store_write for the same name. */
int store_sync(const char *root, const char *name, olm_error *err);

/* False when the store of `name` still has the not-durable marker: written by a process
 * that stopped before store_sync, its content may not all have reached the disk.  True
 * otherwise, a missing store included. */
bool store_is_durable(const char *root, const char *name);

/* Adds catalog.jsonl.gz to the current store of `name` unless a matching one is there: the
 * slow half of a write (zlib level 6 of the whole jsonl), kept apart so a new catalog is
 * served (plain) before it is compressed.  1 written, 0 already there, -1 with err set.
 * Serialised with store_write for the same name by the caller. */
int store_add_gzip(const char *root, const char *name, olm_error *err);

/* The source digest ref the current store of `name` was written with (malloc'd), or NULL
 * when there is none (no store, or written without one). */
char *store_read_source(const char *root, const char *name);

/* Opens the current store of `name`.  Returns a view holding one reference (release with
 * store_view_release), or NULL with err set; errno is ENOENT when the catalog is not stored. */
store_view *store_open(const char *root, const char *name, olm_error *err);

store_view *store_view_retain(store_view *v);
void store_view_release(store_view *v); /* NULL is a no-op */

const char *store_view_name(const store_view *v);
const char *store_view_data(const store_view *v); /* the jsonl bytes; NULL when empty */
size_t store_view_size(const store_view *v);
time_t store_view_mtime(const store_view *v);     /* mtime of catalog.jsonl, seconds */
/* The digest ref the content came from (the store's `source`), or NULL when unknown. */
const char *store_view_source(const store_view *v);
/* The gzip form of the jsonl (a complete gzip member), or NULL when the store has none
 * (written by an older catalogd: the next write adds it) or it does not match the jsonl. */
const char *store_view_gzip(const store_view *v, size_t *len);

/* Drops from the process's page tables the whole pages of [p, p+len) that lie in the view's
 * mappings (catalog.jsonl or its gzip form) when the slice is large (>= 256 KiB); other slices,
 * and a memory view's buffer, are left alone.  The mappings are read-only views of files, so the bytes stay readable (from
 * the page cache) for anyone else serving them. */
void store_view_drop_pages(const store_view *v, const char *p, size_t len);

/* The ranges indexed under `key` in map `which`, sorted by offset; NULL/0 when absent.
 * Borrowed from the view. */
const store_range *store_view_lookup(const store_view *v, store_key which, const char *key, size_t *n);

/* /api/v1/metas selection: (schema, or every indexed schema when NULL/"") ∩ package ∩ name,
 * in file-offset order, with adjacent ranges merged.  NULL or "" means "not filtered".
 * On success *out is malloc'd (caller frees; may be NULL when *n == 0) and *total is the
 * byte count.  Returns -1 only when memory runs out. */
int store_view_select(const store_view *v, const char *schema, const char *package, const char *name,
                      store_range **out, size_t *n, uint64_t *total);

/* Removes the store of `name` (and its temp dirs).  A missing store is not an error. */
int store_delete(const char *root, const char *name, olm_error *err);

/* §4.5: in <root>/catalogs and <root>/unpack, removes every entry that is not a directory
 * named after one of keep[0..nkeep) (stray files and temp dirs included). */
int store_gc(const char *root, const char *const *keep, size_t nkeep, olm_error *err);

/* Internal to the store (also used by tests): recursive remove of a path; 0 if absent. */
int store_remove_tree(const char *path);

#endif

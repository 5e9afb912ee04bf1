/* fbc: the File-Based Catalog model, loader, normaliser and validator.
 *
 * A catalog is a list of "metas" (blobs): JSON objects with a `schema` and usually a
 * `package` and `name`.  The loader reads a directory tree (recursive, lexical order,
 * `.indexignore` honoured with gitignore semantics) or a buffer of concatenated
 * JSON / multi-document YAML, keeps every blob (unknown schemas too) and builds typed
 * views of the four OLM schemas over them.  Behaviour: shared/spec/olmv1-behaviour.md
 * §4.3 (normalisation) and the FBC invariants listed in fbc_validate().
 *
 * Memory: each blob is decoded, normalised and mined for the fields of the typed views,
 * then its DOM is freed, so a load holds at most one blob's DOM at a time (one per thread
 * for fbc_load_dir_parallel).  What stays
 * is the normalised text of every blob, back to back in one buffer (`jsonl`, exactly
 * what catalogd stores and `olmv1 catalog render` prints), plus copies of the strings
 * the typed views need.
 *
 * Ownership: an fbc_catalog owns everything reachable from it.  Every `const char *`
 * in the metas and typed views points into the catalog's own storage and lives as
 * long as the catalog.  Free with fbc_catalog_free(). */
#ifndef OLM_FBC_H
#define OLM_FBC_H

#include <stdbool.h>
#include <stddef.h>

#include "olm_error.h"

typedef struct fbc_meta {
    const char *schema;  /* "" when absent (such a blob is invalid) */
    const char *package; /* "" when absent */
    const char *name;    /* "" when absent */
    /* Normalised compact JSON ending in "\n" (§4.3), inside the catalog's `jsonl`
     * buffer at `offset`: NOT NUL-terminated, always use line_len.  Callers that need
     * a field the typed views lack parse this text. */
    const char *line;
    size_t line_len;
    size_t offset;       /* of `line` within fbc_catalog.jsonl */
    const char *file;    /* source file relative to the loaded root, or the buffer name */
    int lineno;          /* 1-based line where the blob starts in `file` */
} fbc_meta;

typedef struct fbc_property {
    const char *type;
    /* The value's normalised JSON text, a slice of the bundle's line (NOT
     * NUL-terminated); NULL when the property has no value key. */
    const char *value;
    size_t value_len;
} fbc_property;

typedef struct fbc_package {
    const fbc_meta *meta;
    const char *name;
    const char *default_channel; /* NULL when absent */
} fbc_package;

typedef struct fbc_channel_entry {
    const char *name;
    const char *replaces;   /* NULL when absent */
    const char **skips;     /* owned array of borrowed strings */
    size_t nskips;
    const char *skip_range; /* NULL when absent */
} fbc_channel_entry;

typedef struct fbc_channel {
    const fbc_meta *meta;
    const char *name;
    const char *package;
    fbc_channel_entry *entries; /* owned array */
    size_t nentries;
} fbc_channel;

typedef struct fbc_bundle {
    const fbc_meta *meta;
    const char *name;
    const char *package;
    const char *image;          /* NULL when absent */
    fbc_property *properties;   /* owned array, in file order */
    size_t nproperties;
    /* From the (first) olm.package property; NULL when there is none. */
    const char *version;
    const char *release;        /* explicit `release` key of olm.package, NULL if absent */
    const char *package_name;   /* its packageName; NULL when absent or not a string */
} fbc_bundle;

typedef struct fbc_deprecation_entry {
    const char *schema;  /* reference.schema: olm.package, olm.channel or olm.bundle */
    const char *name;    /* reference.name ("" for olm.package) */
    const char *message;
} fbc_deprecation_entry;

typedef struct fbc_deprecation {
    const fbc_meta *meta;
    const char *package;
    fbc_deprecation_entry *entries; /* owned array */
    size_t nentries;
} fbc_deprecation;

typedef struct fbc_catalog {
    fbc_meta *metas;  size_t nmetas;   /* load order: files in lexical walk order, blobs in file order */
    const char *jsonl; size_t jsonl_len; /* every meta's line in load order, back to back
                                          * (NULL when there are none); not NUL-terminated */
    fbc_package *packages;         size_t npackages;
    fbc_channel *channels;         size_t nchannels;
    fbc_bundle *bundles;           size_t nbundles;
    fbc_deprecation *deprecations; size_t ndeprecations;
    /* private */
    void *priv;
} fbc_catalog;

/* Loads every non-ignored file under `dir`.  Fails (NULL) on the first file that is
 * not a valid JSON/YAML stream of objects, with "<file>:<line>: <reason>" in err
 * (<file> is `dir`/<relative path>, so the user can open it).
 * Schema-level problems are not load errors: see fbc_validate(). */
fbc_catalog *fbc_load_dir(const char *dir, olm_error *err);

/* fbc_load_dir on up to `threads` threads (this one included; 1 = fbc_load_dir): files
 * are decoded side by side, biggest first, and put together in walk order, so the
 * catalog, and the error when there is one, are exactly fbc_load_dir's. */
fbc_catalog *fbc_load_dir_parallel(const char *dir, unsigned threads, olm_error *err);

/* Decoding a catalog's files while they are still arriving (catalogd: while the image's
 * layer is being unpacked), so that the load after it has less left to do.  One thread
 * decodes the files offered, in the order offered, each into a part of its own, kept by
 * its path relative to the catalog root; fbc_load_dir_prefetched then takes the part of
 * every file of its walk that has one and loads the others as fbc_load_dir_parallel does.
 * The catalog, and the error when there is one, are exactly fbc_load_dir's: a file is
 * decoded from the same bytes either way, a file whose early decode failed is loaded again
 * in its turn (so its error names the file where the load finds it), and parts of files
 * the walk does not list (ignored, never there) are dropped.  The offerer guarantees that
 * a file offered is complete and will not change; when that no longer holds (a later
 * layer replaced something), it offers rel NULL and every part is dropped. */
typedef struct fbc_prefetch fbc_prefetch;
/* A prefetch whose decoding thread starts with the first offer (a reconcile that finds its
 * image already stored offers nothing and starts none).  NULL when out of memory: load
 * without (every function below takes NULL and then does nothing). */
fbc_prefetch *fbc_prefetch_new(void);
/* Queues the file at `path` (read there, now or a little later; a path gone by then is
 * left to the load), known to the load as `rel`.  rel NULL: forget everything offered, and every later offer.  Thread-safe. */
void fbc_prefetch_offer(fbc_prefetch *p, const char *path, const char *rel);
/* No more offers: the thread stops after the file in hand (the load waits for that one
 * when it needs it); files still queued are left to the load. */
void fbc_prefetch_stop(fbc_prefetch *p);
/* fbc_load_dir_parallel of `dir`, using the parts p decoded (p stopped first; NULL: none). */
fbc_catalog *fbc_load_dir_prefetched(const char *dir, unsigned threads, fbc_prefetch *p, olm_error *err);
void fbc_prefetch_free(fbc_prefetch *p);

/* Loads a buffer (JSON lines, concatenated JSON, or YAML documents).  `source_name`
 * names the buffer in messages and in fbc_meta.file. */
fbc_catalog *fbc_load_buffer(const char *data, size_t len, const char *source_name, olm_error *err);

void fbc_catalog_free(fbc_catalog *c);

/* Problems found by the validator: each is one line "<file>:<line>: <rule>: <detail>",
 * <file> relative to the loaded root, <line> where the offending blob starts.  The
 * rule names are listed at the top of fbc_validate.c; problems come in catalog order
 * (wrong-typed fields, rule "invalid-field", first). */
typedef struct fbc_problems {
    char **items; /* owned */
    size_t n;
} fbc_problems;

/* Checks the invariants: every blob has a schema; one olm.package per package name;
 * defaultChannel exists; no duplicate channels or bundles in a package; every channel
 * entry names a bundle of the package and every bundle is in >= 1 channel; one head per
 * channel (an entry that nothing replaces/skips); every bundle has exactly one
 * olm.package property whose packageName matches and whose version is strict semver;
 * olm.deprecations at most one per package, references existing objects.
 * Returns the number of problems (0 = valid) or -1 on out of memory. */
int fbc_validate(const fbc_catalog *c, fbc_problems *out);
void fbc_problems_free(fbc_problems *p);

/* Lookups over the typed views.  NULL / 0 when absent. */
const fbc_package *fbc_find_package(const fbc_catalog *c, const char *name);
const fbc_bundle *fbc_find_bundle(const fbc_catalog *c, const char *package, const char *name);
const fbc_deprecation *fbc_find_deprecation(const fbc_catalog *c, const char *package);
/* Added: the (first) channel `name` of `package`. */
const fbc_channel *fbc_find_channel(const fbc_catalog *c, const char *package, const char *name);

#endif

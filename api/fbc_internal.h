/* fbc_internal: the pieces of the FBC library that talk to each other but are not
 * part of the public contract in fbc.h.  One section per source file. */
#ifndef OLM_FBC_INTERNAL_H
#define OLM_FBC_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fbc.h"
#include "fbc_stream.h"
#include "gocompat.h"
#include "olm_error.h"
#include "strbuf.h"

/* ---- fbc_walk.c: directory walk with .indexignore ---- */

typedef struct fbc_file_list {
    char **paths; /* owned; relative to the root, '/'-separated, walk order */
    off_t *sizes; /* per path, its lstat size when walked: a hint for scheduling
                     (fbc_load_dir.c), never for reading */
    size_t n, cap;
} fbc_file_list;

/* Lists every regular (non-directory) file under `root` in the order Go's
 * fs.WalkDir visits them (each directory's entries sorted bytewise, depth first),
 * leaving out `.indexignore` files and the files they ignore. */
int fbc_walk_dir(const char *root, fbc_file_list *out, olm_error *err);
void fbc_file_list_free(fbc_file_list *l);

/* gitignore-style matcher, exposed for tests. */
typedef struct fbc_ignore fbc_ignore;
fbc_ignore *fbc_ignore_new(void);
/* Adds the patterns of one .indexignore whose directory is `domain` ("" = root). */
int fbc_ignore_add(fbc_ignore *ig, const char *domain, const char *text, size_t len);
/* 1 when the file `path` (relative to the root) is ignored, 0 if not, -1 on out of memory. */
int fbc_ignore_match(const fbc_ignore *ig, const char *path);
void fbc_ignore_free(fbc_ignore *ig);


/* ---- fbc_input.c: a catalog file's bytes, given back as the load moves on ---- */

typedef struct fbc_input {
    const char *data; /* not NUL-terminated when mapped */
    size_t len;
    bool mapped;
    size_t released;  /* [0, released) was given back (mapped files only) */
    size_t scan_pos;  /* start of line scan_line */
    int scan_line;
} fbc_input;

/* Reads or maps `path`; errors as fbc_read_file's.  Close with fbc_input_close. */
int fbc_input_open(fbc_input *in, const char *path, olm_error *err);
/* Says the decoders are done with every line before `lineno` (1-based). */
void fbc_input_consumed_before_line(fbc_input *in, int lineno);
void fbc_input_close(fbc_input *in);

/* ---- fbc_decode_*.c: byte streams to JSON objects ---- */


/* `consumed`: `fn` keeps no jansson value of a blob once it returns (not even the blob,
 * which it must drop), so each blob's DOM may come from an arena (fbc_dom_arena.c).
 * The public fbc_decode_stream passes false: its callers keep their objects. */
/* Concatenated JSON values / JSON lines.  Errors: "<name>:<line>: <reason>". */
int fbc_decode_json(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                    bool consumed, olm_error *err);
/* Multi-document YAML with the sigs.k8s.io/yaml scalar rules. */
int fbc_decode_yaml(const char *data, size_t len, const char *name, fbc_blob_fn fn, void *ud,
                    bool consumed, olm_error *err);
/* fbc_decode_stream for a callback that consumes each blob (the loader's add_blob). */
int fbc_decode_stream_consumed(const char *data, size_t len, const char *name, fbc_blob_fn fn,
                               void *ud, olm_error *err);
/* fbc_json_fast.c: decodes the JSON object at data[0] == '{' like json_loadb with
 * JSON_DISABLE_EOF_CHECK | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL would, setting
 * *used to the bytes consumed.  NULL when it cannot (bad or unusual input, out of
 * memory): decode those bytes with jansson then, for its result or its error.
 * `scratch` is working space the caller keeps from one object to the next (and frees),
 * so unescaping does not allocate afresh for every blob. */
json_t *fbc_json_fast_object(const char *data, size_t len, strbuf *scratch, size_t *used);

/* ---- fbc_normalise.c ---- */

/* Where the encoder wrote a property's value: its line keeps the value as a
 * slice instead of a DOM (see gocompat_json_marks). */
typedef gocompat_json_mark fbc_span_mark;
typedef gocompat_json_marks fbc_span_marks;

/* Appends `v` encoded as catalogd writes a blob (Go's encoding/json on a
 * map[string]interface{}: sorted keys, compact, no HTML escaping, float64
 * numbers), without the trailing newline.  -1 on out of memory.  `marks` may
 * be NULL. */
int fbc_encode_json(const json_t *v, strbuf *out, fbc_span_marks *marks);

/* Extracts schema/package/name case-insensitively (values borrowed from obj; "" when
 * absent).  Fails on two keys that fold to the same one of those names, or on a
 * non-string value for them. */
int fbc_meta_keys(const json_t *obj, const char **schema, const char **package, const char **name,
                  olm_error *err);

/* ---- fbc_load.c / fbc_load_dir.c: the loader's steps ---- */

/* An empty catalog to load into (its model not finished). */
fbc_catalog *fbc_catalog_new(void);
/* Appends the blobs of the file `rel` under `dir` to `c`, as fbc_load_dir does for each
 * file; messages name "<dir>/<rel>:<line>".  -1 with err set. */
int fbc_load_file_into(fbc_catalog *c, const char *dir, const char *rel, olm_error *err);
/* The same for the file at `path` (messages name `path`), its blobs recorded as of `rel`. */
int fbc_load_path_into(fbc_catalog *c, const char *path, const char *rel, olm_error *err);
/* fbc_prefetch.c, after fbc_prefetch_stop: the part decoded early for the walk's file `rel`
 * (the caller owns it), or NULL when there is none (never offered, not reached, failed, or
 * the offers cannot be trusted) or when it is still being decoded (*pending set: then
 * fbc_prefetch_wait gives it, or NULL, once done). */
fbc_catalog *fbc_prefetch_take(fbc_prefetch *p, const char *rel, bool *pending);
fbc_catalog *fbc_prefetch_wait(fbc_prefetch *p, const char *rel);
/* Finishes the model of a loaded `c` (see fbc_model_finish); on failure frees it and
 * returns NULL with err set. */
fbc_catalog *fbc_load_finish(fbc_catalog *c, olm_error *err);
/* Moves everything `src` holds (not finished) to the end of `dst` (not finished), as if
 * src's files had been loaded into dst after its own; src is left empty.  -1 on out of
 * memory (both stay valid to free). */
/* Joins parts[1..n) into parts[0] (all loaded, unfinished), in that order, as if their files
 * had been loaded into parts[0] after its own (fbc_model_join.c).  The texts go into one
 * buffer of their exact total size: a part's pages move there when its text is a mapping
 * of its own (fbc_part_new), else it is copied, by up to `threads` threads.  parts[1..n)
 * are left empty, to free.  -1 on out of memory, with nothing moved. */
int fbc_model_concat(fbc_catalog **parts, size_t n, unsigned threads);
/* An empty catalog for one file of a parallel load: its text goes into a mapping of its
 * own (fbc_text_map), so that fbc_model_concat can move it rather than copy it. */
fbc_catalog *fbc_part_new(void);

/* ---- fbc_text.c: a catalog's text in a private mapping (see there) ---- */

/* Makes the empty `sb` a fixed strbuf over a fresh mapping big enough for the text of a file
 * of input_len bytes (fbc_text_map) or for `bytes` bytes (fbc_text_map_bytes); address space
 * only, backed as it is written.  -1 when no such mapping can be had, or is not worth it (a
 * small file) or allowed (too many at once): sb stays as it was. */
int fbc_text_map(strbuf *sb, size_t input_len);
int fbc_text_map_bytes(strbuf *sb, size_t bytes);
/* Frees sb's memory, whether mapped or malloc'd. */
void fbc_text_free(strbuf *sb);
/* Empties sb without freeing: its mapping is gone already (its pages were moved). */
void fbc_text_forget(strbuf *sb);
/* How many text mappings the process holds (for tests). */
int fbc_text_mappings(void);
size_t fbc_text_page(void);
/* n rounded up to whole pages. */
size_t fbc_text_round(size_t n);
/* Gives back the spare room of a loaded, unfinished catalog's growing arrays: a parallel
 * load keeps one such catalog per file until they are appended. */
void fbc_model_trim(fbc_catalog *c);

/* ---- fbc_dom_arena.c: a document's jansson values from a bump arena ---- */

typedef struct fbc_dom_arena {
    struct fbc_dom_chunk *head;  /* newest chunk first */
    struct fbc_dom_arena *outer; /* the scope this one was begun in, or NULL */
} fbc_dom_arena;

/* From begin to end, this thread's jansson allocations come from `a` and jansson's frees
 * of them do nothing; reset makes everything allocated since begin (or the last reset)
 * dead and its memory reusable.  Nothing allocated in a scope may be used or freed after
 * the next reset or the end.  Scopes nest: inside one, values of the outer scopes may
 * still be freed (that does nothing) but new ones come from the inner arena; end them
 * in reverse order. */
void fbc_dom_arena_begin(fbc_dom_arena *a);
void fbc_dom_arena_reset(fbc_dom_arena *a);
void fbc_dom_arena_end(fbc_dom_arena *a);
/* Chunks held (tests: what a reset keeps). */
size_t fbc_dom_arena_chunks(const fbc_dom_arena *a);
/* Between keep_begin and keep_end (they nest; the outermost end counts), the chunks this
 * thread's scopes are done with are kept for its next scope instead of freed (a few, the
 * biggest); keep_end frees them.  For a load's threads: file after file, the same chunks
 * and their already faulted-in pages.  Only this thread's scopes are concerned. */
void fbc_dom_arena_keep_begin(void);
void fbc_dom_arena_keep_end(void);
/* Chunks this thread keeps now (tests). */
size_t fbc_dom_arena_kept_chunks(void);

/* ---- fbc_index.c: string -> index hash ---- */

typedef struct fbc_index {
    char **keys;   /* owned length-prefixed flat keys (see fbc_index.c); NULL = empty */
    size_t *vals;
    size_t cap, n; /* cap is a power of two */
} fbc_index;

/* Inserts key -> val unless the key exists; returns 1 inserted, 0 existed (*existing
 * set), -1 out of memory.  The key is `a` or, when `b` is non-NULL, "a\0b". */
int fbc_index_put(fbc_index *ix, const char *a, const char *b, size_t val, size_t *existing);
bool fbc_index_get(const fbc_index *ix, const char *a, const char *b, size_t *val);
void fbc_index_free(fbc_index *ix);

/* ---- fbc_arena.c: stable string copies ---- */

typedef struct fbc_arena {
    struct fbc_arena_block *head; /* owned list; the head has the free space */
} fbc_arena;

/* Copies the NUL-terminated `s`; NULL on out of memory.  The copy lives until
 * fbc_arena_free. */
const char *fbc_arena_strdup(fbc_arena *a, const char *s);
/* Moves every string of `src` into `dst` (pointers to them stay valid); src is left empty. */
void fbc_arena_take(fbc_arena *dst, fbc_arena *src);
void fbc_arena_free(fbc_arena *a);

/* ---- fbc_model.c ---- */

typedef struct fbc_priv {
    char **files; size_t nfiles, files_cap; /* owned names that fbc_meta.file points at */
    strbuf jsonl;         /* every normalised line; fbc_catalog.jsonl once loaded.  Fixed
                           * when it is a mapping (fbc_text.c): free it with fbc_text_free */
    bool map_text;        /* fbc_part_new: map jsonl before the first line goes in */
    fbc_arena strings;    /* metas' and views' strings */
    size_t metas_cap, packages_cap, channels_cap, bundles_cap, deprecations_cap;
    /* (start, len) in jsonl of every marked property value, bundles and properties
     * in order (start SIZE_MAX: the encoder never met it), turned into
     * fbc_property.value pointers once jsonl stops moving, then freed. */
    size_t *value_offs; size_t nvalue_offs, value_offs_cap;
    fbc_index pkg_ix;     /* package name -> first olm.package index */
    fbc_index chan_ix;    /* package, channel -> first channel index */
    fbc_index bundle_ix;  /* package, bundle -> first bundle index */
    fbc_index depr_ix;    /* package -> first deprecation index */
    /* Shape problems found while building views (wrong JSON types), in the
     * validator's "<file>:<line>: <rule>: <detail>" form; owned. */
    char **shape; size_t nshape, shape_cap;
} fbc_priv;

/* Adds the typed view of c->metas[meta_index] (decoded as `obj`, which is only read
 * here): copies what the view needs, and lists in `marks` (reset first) the property
 * values whose normalised text the view keeps.  -1 only on out of memory. */
int fbc_model_add(fbc_catalog *c, size_t meta_index, const json_t *obj, fbc_span_marks *marks);
/* After the meta's line was encoded with `marks`: remembers where the values went. */
int fbc_model_note_spans(fbc_catalog *c, const fbc_span_marks *marks);
/* Once every meta is in: points metas and views at their final storage and builds the
 * indexes.  -1 only on out of memory. */
int fbc_model_finish(fbc_catalog *c, olm_error *err);
void fbc_model_free(fbc_catalog *c);

/* Case-insensitive member lookup the way Go's json struct decoding matches field
 * names: an exact match wins, else the first key equal under ASCII case folding. */
json_t *fbc_obj_get(const json_t *obj, const char *key);

#endif

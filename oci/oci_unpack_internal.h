/* Private to the unpacker (oci_unpack.c, oci_unpack_path.c, oci_fsutil.c) and its
 * tests: entry path rules and fd-relative tree helpers.  Low level: it includes
 * nothing of oci/ but the public unpack limits. */
#ifndef OLM_OCI_UNPACK_INTERNAL_H
#define OLM_OCI_UNPACK_INTERNAL_H

#include <stddef.h>

#include "oci_unpack.h"
#include "olm_error.h"

#define OCI_UNPACK_MAX_NAME 255  /* NAME_MAX */
#define OCI_UNPACK_MAX_DEPTH 256 /* bounds recursion and fds held while removing trees */
/* normalised paths are never longer than their raw form, which is capped at
 * max_path; the buffer must hold the biggest max_path a caller may set */
#define OCI_UNPACK_PATH_BUFSZ 16384

extern const char OCI_WHY_PATH_TOO_LONG[];

/* Normalises an entry path into `out` ("./a//b/" → "a/b"; "." → "").  Returns
 * NULL when it is acceptable, else the broken rule (a static string): absolute,
 * escaping or any ".." component, too long, too deep. */
const char *oci_path_normalize(const char *raw, size_t max_path, char *out, size_t out_size);
/* NULL if a symlink at `entry_path` (normalised) may point at `target`: relative,
 * and only leading ".." components, never climbing above the root. */
const char *oci_symlink_target_check(const char *entry_path, const char *target, size_t max_path);

/* Normalised prefix ("" for none); -1 with *why set when it is not a clean path. */
int oci_prefix_normalize(const char *prefix, char *out, size_t out_size, const char **why);

typedef enum {
    OCI_PREFIX_OUTSIDE,  /* not extracted */
    OCI_PREFIX_INSIDE,   /* extracted at *mapped ("" = the root itself) */
    OCI_PREFIX_ANCESTOR, /* a parent of the prefix: *mapped is where it is in the tree */
} oci_prefix_match;
/* Where a normalised path lands.  *mapped points into `path` or at "". */
oci_prefix_match oci_prefix_map(const char *prefix, int strip, const char *path,
                                const char **mapped);

/* A set of strings (the paths one layer created), open addressing. */
typedef struct oci_pathset {
    char **slots;
    size_t cap; /* power of two */
    size_t len;
} oci_pathset;
int oci_pathset_has(const oci_pathset *set, const char *path);
int oci_pathset_add(oci_pathset *set, const char *path);
/* Adds "a/b/c", "a/b" and "a". */
int oci_pathset_add_with_parents(oci_pathset *set, const char *path);
void oci_pathset_clear(oci_pathset *set);

/* A printable, bounded copy of an entry name for error messages. */
void oci_path_display(const char *raw, char *out, size_t out_size);

/* Empties the directory open as `dfd` (not closed), never following symlinks. */
int oci_empty_dir_at(int dfd, const char *name, olm_error *err);

#endif

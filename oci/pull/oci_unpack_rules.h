/* Private to the unpacker (oci_unpack.c, oci_unpack_path.c, oci_fsutil.c) and its
 * tests: entry path rules and fd-relative tree helpers.  Low level: it includes
 * nothing of oci/ but the public unpack limits. */
#ifndef OLM_OCI_UNPACK_RULES_H
#define OLM_OCI_UNPACK_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "oci_unpack_limits.h"
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

/* The paths one layer created, with all their parents, as a tree of path components: a
 * node is (parent node, component), found through an open-addressing table, and the
 * component bytes live in one arena.  Memory is linear in the number of distinct
 * components (at most the entries plus the directories they imply, which the unpacker
 * counts against max_files), where a set of whole paths kept every parent prefix again:
 * quadratic in the depth (3,000 entries of 4 KiB paths took 111 MB). */
typedef struct oci_pathnode {
    uint32_t parent;   /* node index + 1 of the parent; 0 for a top-level component */
    uint32_t name_off; /* into names */
    uint32_t name_len;
} oci_pathnode;
typedef struct oci_pathset {
    oci_pathnode *nodes;
    size_t len, cap;
    uint32_t *slots; /* node index + 1, 0 = empty */
    size_t nslots;   /* power of two */
    char *names;
    size_t names_len, names_cap;
} oci_pathset;
/* 1 when `path` (normalised, "a/b/c") or a path below it was added. */
int oci_pathset_has(const oci_pathset *set, const char *path);
/* Adds "a/b/c", and so "a/b" and "a".  -1 when out of memory. */
int oci_pathset_add_with_parents(oci_pathset *set, const char *path);
/* Bytes held by the set (for tests and limits). */
size_t oci_pathset_bytes(const oci_pathset *set);
void oci_pathset_clear(oci_pathset *set);

/* A printable, bounded copy of an entry name for error messages. */
void oci_path_display(const char *raw, char *out, size_t out_size);

/* Empties the directory open as `dfd` (not closed), never following symlinks. */
int oci_empty_dir_at(int dfd, const char *name, olm_error *err);

#endif

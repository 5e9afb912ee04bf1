/* Entry paths of untrusted layers: lexical checks, the prefix filter, a set of
 * the paths a layer touched (for whiteouts), and printable names for errors.
 * Nothing here touches the file system. */
#include "olm_array.h"
#include "oci_unpack_rules.h"
#include "olm_hash.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- normalising */

const char OCI_WHY_PATH_TOO_LONG[] = "path longer than the limit";

const char *oci_path_normalize(const char *raw, size_t max_path, char *out, size_t out_size)
{
    if (!raw || !*raw)
        return "empty path";
    if (raw[0] == '/')
        return "absolute path (entries must be relative to the image root)";
    size_t rawlen = strlen(raw);
    if (rawlen > max_path)
        return OCI_WHY_PATH_TOO_LONG;
    size_t n = 0;
    int depth = 0, dotdot = 0;
    for (const char *p = raw; *p;) {
        const char *start = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - start);
        while (*p == '/')
            p++;
        if (len == 0 || (len == 1 && start[0] == '.'))
            continue;
        if (len == 2 && start[0] == '.' && start[1] == '.') {
            if (--depth < 0)
                return "path escapes the unpack root";
            dotdot = 1;
            continue;
        }
        if (len > OCI_UNPACK_MAX_NAME)
            return "path component longer than 255 bytes";
        if (++depth > OCI_UNPACK_MAX_DEPTH)
            return "path deeper than 256 directories";
        if (n + len + 2 > out_size)
            return OCI_WHY_PATH_TOO_LONG;
        if (n)
            out[n++] = '/';
        memcpy(out + n, start, len);
        n += len;
    }
    /* a ".." that stays inside is still refused: the components before it might
     * be symlinks, so its meaning depends on the tree; a layer never needs it */
    if (dotdot)
        return "path has a \"..\" component";
    out[n] = '\0';
    return NULL;
}

const char *oci_symlink_target_check(const char *entry_path, const char *target, size_t max_path)
{
    if (!target || !*target)
        return "symlink with an empty target";
    if (target[0] == '/')
        return "symlink target is absolute";
    if (strlen(target) > max_path)
        return "symlink target too long";
    /* the link lives in the entry's parent: its depth is how far ".." may climb */
    int depth = 0;
    for (const char *p = entry_path; *p; p++)
        if (*p == '/')
            depth++;
    int down = 0;
    for (const char *p = target; *p;) {
        const char *start = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - start);
        while (*p == '/')
            p++;
        if (len == 0 || (len == 1 && start[0] == '.'))
            continue;
        if (len == 2 && start[0] == '.' && start[1] == '.') {
            /* "x/.." climbs out of whatever x is, which may be another symlink:
             * only leading ".." components can be checked without the tree */
            if (down)
                return "symlink target has \"..\" after a path component";
            if (--depth < 0)
                return "symlink target escapes the unpack root";
            continue;
        }
        down = 1;
    }
    return NULL;
}

/* ---------------------------------------------------------------- prefix filter */

int oci_prefix_normalize(const char *prefix, char *out, size_t out_size, const char **why)
{
    *why = NULL;
    out[0] = '\0';
    if (!prefix)
        return 0;
    while (*prefix == '/')
        prefix++; /* the configs label is usually "/configs" */
    if (!*prefix)
        return 0;
    *why = oci_path_normalize(prefix, OCI_UNPACK_DEFAULT_MAX_PATH, out, out_size);
    return *why ? -1 : 0;
}

oci_prefix_match oci_prefix_map(const char *prefix, int strip, const char *path,
                                const char **mapped)
{
    size_t plen = strlen(prefix);
    *mapped = path;
    if (plen == 0)
        return OCI_PREFIX_INSIDE;
    size_t len = strlen(path);
    if (len == plen && memcmp(path, prefix, plen) == 0) {
        *mapped = strip ? "" : path;
        return OCI_PREFIX_INSIDE;
    }
    if (len > plen && memcmp(path, prefix, plen) == 0 && path[plen] == '/') {
        *mapped = strip ? path + plen + 1 : path;
        return OCI_PREFIX_INSIDE;
    }
    /* "" (the root) or "a" for prefix "a/b": the entry is an ancestor */
    if (len == 0 || (len < plen && memcmp(path, prefix, len) == 0 && prefix[len] == '/')) {
        *mapped = strip ? "" : path;
        return OCI_PREFIX_ANCESTOR;
    }
    return OCI_PREFIX_OUTSIDE;
}

/* ---------------------------------------------------------------- path set */

static uint64_t node_hash(uint32_t parent, const char *name, size_t len)
{
    unsigned char le[4] = {parent & 0xff, (parent >> 8) & 0xff, (parent >> 16) & 0xff, parent >> 24};
    return olm_fnv1a(olm_fnv1a(OLM_FNV1A_OFFSET, le, sizeof le), name, len); /* the parent index, then the name */
}

/* The node (index + 1) for component name[0..len) under `parent`, or 0; *slot is where it
 * is or would go. */
static uint32_t find_node(const oci_pathset *set, uint32_t parent, const char *name, size_t len, size_t *slot)
{
    size_t mask = set->nslots - 1;
    for (size_t i = (size_t)node_hash(parent, name, len) & mask;; i = (i + 1) & mask) {
        uint32_t id = set->slots[i];
        if (!id) {
            *slot = i;
            return 0;
        }
        const oci_pathnode *n = &set->nodes[id - 1];
        if (n->parent == parent && n->name_len == len && memcmp(set->names + n->name_off, name, len) == 0) {
            *slot = i;
            return id;
        }
    }
}

static int grow_slots(oci_pathset *set)
{
    size_t n = set->nslots ? set->nslots * 2 : 256;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    free(set->slots);
    set->slots = slots;
    set->nslots = n;
    for (size_t k = 0; k < set->len; k++) {
        const oci_pathnode *nd = &set->nodes[k];
        size_t slot;
        find_node(set, nd->parent, set->names + nd->name_off, nd->name_len, &slot);
        set->slots[slot] = (uint32_t)(k + 1);
    }
    return 0;
}

static uint32_t add_node(oci_pathset *set, uint32_t parent, const char *name, size_t len)
{
    size_t slot;
    uint32_t id = set->nslots ? find_node(set, parent, name, len, &slot) : 0;
    if (id)
        return id;
    if (set->len >= UINT32_MAX - 1 || set->names_len + len >= UINT32_MAX)
        return 0;
    if ((set->len + 1) * 2 > set->nslots) {
        if (grow_slots(set) != 0)
            return 0;
        find_node(set, parent, name, len, &slot);
    }
    if (OLM_ARRAY_RESERVE(set->nodes, set->cap, set->len + 1) < 0)
        return 0;
    if (set->names_len + len > set->names_cap) {
        size_t cap = set->names_cap ? set->names_cap : 1024;
        while (cap < set->names_len + len)
            cap *= 2;
        char *names = realloc(set->names, cap);
        if (!names)
            return 0;
        set->names = names;
        set->names_cap = cap;
    }
    memcpy(set->names + set->names_len, name, len);
    set->nodes[set->len] = (oci_pathnode){parent, (uint32_t)set->names_len, (uint32_t)len};
    set->names_len += len;
    set->slots[slot] = (uint32_t)++set->len;
    return (uint32_t)set->len;
}

int oci_pathset_has(const oci_pathset *set, const char *path)
{
    if (!set->nslots || !*path)
        return 0;
    uint32_t id = 0;
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, "/");
        size_t slot;
        if (!(id = find_node(set, id, p, len, &slot)))
            return 0;
        p += len;
        p += *p == '/';
    }
    return 1;
}

int oci_pathset_add_with_parents(oci_pathset *set, const char *path)
{
    uint32_t id = 0;
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, "/");
        if (len && !(id = add_node(set, id, p, len)))
            return -1;
        p += len;
        p += *p == '/';
    }
    return 0;
}

size_t oci_pathset_bytes(const oci_pathset *set)
{
    return set->cap * sizeof *set->nodes + set->nslots * sizeof *set->slots + set->names_cap;
}

void oci_pathset_clear(oci_pathset *set)
{
    free(set->nodes);
    free(set->slots);
    free(set->names);
    memset(set, 0, sizeof *set);
}

/* ---------------------------------------------------------------- display */

void oci_path_display(const char *raw, char *out, size_t out_size)
{
    size_t n = 0;
    if (!raw)
        raw = "";
    for (size_t i = 0; raw[i] && n + 4 < out_size; i++) {
        if (i == 120) { /* a 5000-byte path helps nobody */
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
        unsigned char c = (unsigned char)raw[i];
        out[n++] = (c >= 0x20 && c != 0x7f && c != '"') ? (char)c : '?';
    }
    out[n] = '\0';
}

/* Entry paths of untrusted layers: lexical checks, the prefix filter, a set of
 * the paths a layer touched (for whiteouts), and printable names for errors.
 * Nothing here touches the file system. */
#include "oci_unpack_internal.h"

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

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int oci_pathset_has(const oci_pathset *set, const char *path)
{
    if (!set->cap)
        return 0;
    for (size_t i = (size_t)hash(path) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
        if (!set->slots[i])
            return 0;
        if (strcmp(set->slots[i], path) == 0)
            return 1;
    }
}

static int insert(char **slots, size_t cap, char *s)
{
    for (size_t i = (size_t)hash(s) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (!slots[i]) {
            slots[i] = s;
            return 1;
        }
        if (strcmp(slots[i], s) == 0)
            return 0;
    }
}

int oci_pathset_add(oci_pathset *set, const char *path)
{
    if (oci_pathset_has(set, path))
        return 0;
    if ((set->len + 1) * 2 > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 256;
        char **slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < set->cap; i++)
            if (set->slots[i])
                insert(slots, cap, set->slots[i]);
        free(set->slots);
        set->slots = slots;
        set->cap = cap;
    }
    char *s = strdup(path);
    if (!s)
        return -1;
    insert(set->slots, set->cap, s);
    set->len++;
    return 0;
}

int oci_pathset_add_with_parents(oci_pathset *set, const char *path)
{
    char buf[OCI_UNPACK_PATH_BUFSZ];
    size_t n = strlen(path);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, path, n + 1);
    if (oci_pathset_add(set, buf) != 0)
        return -1;
    for (char *p = buf + n; p > buf; p--) {
        if (*p == '/') {
            *p = '\0';
            if (oci_pathset_add(set, buf) != 0)
                return -1;
        }
    }
    return 0;
}

void oci_pathset_clear(oci_pathset *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slots[i]);
    free(set->slots);
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

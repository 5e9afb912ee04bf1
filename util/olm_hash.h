/* olm_hash: FNV-1a 64, the one non-cryptographic hash of the tree: hash tables (work queue
 * keys, the FBC index, unpack path sets), content fingerprints (drift) and the names Helm's
 * chunked release driver gives its Secrets (which must be FNV-1a 64 exactly).
 *
 * Continue a hash over more bytes by passing the previous result as `h`. */
#ifndef OLM_HASH_H
#define OLM_HASH_H

#include <stddef.h>
#include <stdint.h>

#define OLM_FNV1A_OFFSET 14695981039346656037ULL

static inline uint64_t olm_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* The same over a NUL-terminated string (the NUL not included). */
static inline uint64_t olm_fnv1a_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

#endif

/* fbc_index: an open-addressing hash (linear probing, load <= 1/2) from a one- or
 * two-part string key to an array index, so the resolver's lookups in loops are
 * O(1).  A two-part key is stored flat as "a\0b" with its length, so ("ab", "c")
 * and ("a", "bc") stay distinct. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fbc_internal.h"
#include "olm_hash.h"

static uint64_t hash_key(const char *k, size_t n)
{
    return olm_fnv1a(OLM_FNV1A_OFFSET, k, n);
}

/* Builds the flat key in `stack` or on the heap (caller frees if != stack). */
static char *make_key(const char *a, const char *b, char *stack, size_t stack_size, size_t *len)
{
    size_t la = strlen(a), lb = b ? strlen(b) + 1 : 0, n = la + lb;
    char *k = n + 1 <= stack_size ? stack : malloc(n + 1);
    if (!k)
        return NULL;
    memcpy(k, a, la);
    if (b) {
        k[la] = '\0';
        memcpy(k + la + 1, b, lb - 1);
    }
    k[n] = '\0';
    *len = n;
    return k;
}

/* What fbc_index.keys[i] really points at. */
typedef struct stored_key {
    size_t len;
    char data[];
} stored_key;

static bool slot_equals(const char *slot, const char *k, size_t n)
{
    const stored_key *s = (const stored_key *)(const void *)slot;
    return s->len == n && memcmp(s->data, k, n) == 0;
}

static int grow(fbc_index *ix)
{
    size_t cap = ix->cap ? ix->cap * 2 : 8; /* a power of two */
    char **keys = calloc(cap, sizeof *keys);
    size_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->keys[i])
            continue;
        const stored_key *s = (const stored_key *)(const void *)ix->keys[i];
        size_t j = hash_key(s->data, s->len) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = ix->keys[i];
        vals[j] = ix->vals[i];
    }
    free(ix->keys);
    free(ix->vals);
    ix->keys = keys;
    ix->vals = vals;
    ix->cap = cap;
    return 0;
}

int fbc_index_put(fbc_index *ix, const char *a, const char *b, size_t val, size_t *existing)
{
    if ((ix->n + 1) * 2 > ix->cap && grow(ix) < 0)
        return -1;
    char stack[256];
    size_t n;
    char *k = make_key(a, b, stack, sizeof stack, &n);
    if (!k)
        return -1;
    size_t j = hash_key(k, n) & (ix->cap - 1);
    int rc = 1;
    while (ix->keys[j]) {
        if (slot_equals(ix->keys[j], k, n)) {
            if (existing)
                *existing = ix->vals[j];
            rc = 0;
            goto out;
        }
        j = (j + 1) & (ix->cap - 1);
    }
    stored_key *s = malloc(sizeof *s + n + 1);
    if (!s) {
        rc = -1;
        goto out;
    }
    s->len = n;
    memcpy(s->data, k, n + 1);
    ix->keys[j] = (char *)s;
    ix->vals[j] = val;
    ix->n++;
out:
    if (k != stack)
        free(k);
    return rc;
}

bool fbc_index_get(const fbc_index *ix, const char *a, const char *b, size_t *val)
{
    if (!ix->cap || !a)
        return false;
    char stack[256];
    size_t n;
    char *k = make_key(a, b, stack, sizeof stack, &n);
    if (!k)
        return false;
    bool found = false;
    size_t j = hash_key(k, n) & (ix->cap - 1);
    while (ix->keys[j]) {
        if (slot_equals(ix->keys[j], k, n)) {
            *val = ix->vals[j];
            found = true;
            break;
        }
        j = (j + 1) & (ix->cap - 1);
    }
    if (k != stack)
        free(k);
    return found;
}

void fbc_index_free(fbc_index *ix)
{
    for (size_t i = 0; i < ix->cap; i++)
        free(ix->keys[i]);
    free(ix->keys);
    free(ix->vals);
    memset(ix, 0, sizeof *ix);
}

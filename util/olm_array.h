/* olm_array: growing a plain C array (pointer + count + capacity) without writing the
 * doubling, the overflow check and the realloc dance again at every call site.
 *
 *     thing *items = NULL; size_t n = 0, cap = 0;
 *     if (OLM_ARRAY_RESERVE(items, cap, n + 1) < 0) return -1;   // room for items[n]
 *     if (OLM_ARRAY_PUSH_SLOT(items, n, cap) < 0) return -1;     // items[n - 1] is new, zeroed
 *
 * On failure the array is unchanged (still valid, still owned by the caller). */
#ifndef OLM_ARRAY_H
#define OLM_ARRAY_H

#include <stddef.h>
#include <string.h>

/* `items` grown to hold at least `need` elements of `elem_size` bytes (capacity doubled from
 * 8 until it fits; *cap updated), or `items` itself, *cap unchanged, when memory runs out or
 * the size overflows.  The caller assigns the result back (no void ** aliasing). */
void *olm_array_grow(void *items, size_t *cap, size_t need, size_t elem_size);

/* 0 when items has room for `need` elements, else -1 (out of memory). */
#define OLM_ARRAY_RESERVE(items, cap, need)                                                                   \
    ((need) <= (cap) ? 0 : ((items) = olm_array_grow((items), &(cap), (need), sizeof *(items)), (need) <= (cap) ? 0 : -1))

/* Room for one more element at items[n], zeroed, then n++.  0 or -1. */
#define OLM_ARRAY_PUSH_SLOT(items, n, cap)                                                                    \
    (OLM_ARRAY_RESERVE(items, cap, (n) + 1) < 0 ? -1 : (memset(&(items)[(n)], 0, sizeof *(items)), (n)++, 0))

#endif

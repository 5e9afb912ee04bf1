/* olm_array: growing a plain C array (pointer + count + capacity) without writing the
 * doubling, the overflow check and the realloc dance again at every call site.
 *
 *     thing *items = NULL; size_t n = 0, cap = 0;
 *     if (OLM_ARRAY_PUSH_SLOT(items, n, cap) < 0) return -1;   // items[n++] is yours
 *
 * On failure the array is unchanged (still valid, still owned by the caller). */
#ifndef OLM_ARRAY_H
#define OLM_ARRAY_H

#include <stddef.h>
#include <string.h>

/* Makes room for at least `need` elements of `elem_size` bytes in *items (capacity in *cap,
 * grown by doubling from 8).  Returns 0, or -1 when out of memory or the size overflows. */
int olm_array_reserve(void **items, size_t *cap, size_t need, size_t elem_size);

/* Room for one more element at items[n], then n++ (the new slot is zeroed).  0 or -1. */
#define OLM_ARRAY_PUSH_SLOT(items, n, cap)                                                                    \
    (olm_array_reserve((void **)&(items), &(cap), (n) + 1, sizeof *(items)) < 0                                \
         ? -1                                                                                                  \
         : (memset(&(items)[(n)], 0, sizeof *(items)), (n)++, 0))

#endif

/* olm_array: see olm_array.h. */
#include <stdint.h>
#include <stdlib.h>

#include "olm_array.h"

void *olm_array_grow(void *items, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return items;
    size_t grown = *cap ? *cap : 8;
    while (grown < need) {
        if (grown > SIZE_MAX / 2)
            return items;
        grown *= 2;
    }
    if (elem_size && grown > SIZE_MAX / elem_size)
        return items;
    void *p = realloc(items, grown * elem_size);
    if (!p)
        return items;
    *cap = grown;
    return p;
}

/* olm_array: see olm_array.h. */
#include <stdint.h>
#include <stdlib.h>

#include "olm_array.h"

int olm_array_reserve(void **items, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return 0;
    size_t grown = *cap ? *cap : 8;
    while (grown < need) {
        if (grown > SIZE_MAX / 2)
            return -1;
        grown *= 2;
    }
    if (elem_size && grown > SIZE_MAX / elem_size)
        return -1;
    void *p = realloc(*items, grown * elem_size);
    if (!p)
        return -1;
    *items = p;
    *cap = grown;
    return 0;
}

/* gocompat_yaml_bigs: the list of uint64 values a jansson integer cannot hold, filled by
 * the decoder (gocompat_yaml.c) and read by the text writer (gocompat_yaml_text.c).  In a
 * file of its own so that those two call each other in one direction only. */
#include <stdlib.h>

#include "olm_array.h"
#include "gocompat_internal.h"

int gocompat_yaml_bigs_add(gocompat_yaml_bigs *b, const json_t *node, uint64_t u)
{
    if (OLM_ARRAY_RESERVE(b->items, b->cap, b->n + 1) < 0)
        return -1;
    b->items[b->n++] = (gocompat_yaml_big){node, u};
    return 0;
}

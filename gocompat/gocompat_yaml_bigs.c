/* gocompat_yaml_bigs: the list of uint64 values a jansson integer cannot hold, filled by
 * the decoder (gocompat_yaml.c) and read by the text writer (gocompat_yaml_text.c).  In a
 * file of its own so that those two call each other in one direction only. */
#include <stdlib.h>

#include "gocompat_internal.h"

int gocompat_yaml_bigs_add(gocompat_yaml_bigs *b, const json_t *node, uint64_t u)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        gocompat_yaml_big *items = realloc(b->items, cap * sizeof *items);
        if (!items)
            return -1;
        b->items = items;
        b->cap = cap;
    }
    b->items[b->n++] = (gocompat_yaml_big){node, u};
    return 0;
}

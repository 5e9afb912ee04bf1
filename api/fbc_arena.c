/* fbc_arena: the catalog's copies of the strings its typed views point at.
 *
 * The views outlive the DOM they were read from, so each string is copied once into
 * big blocks that never move (no per-string malloc header, no realloc invalidating
 * pointers) and are all freed together with the catalog.  The first block is small and
 * each next one twice the last, up to ARENA_BLOCK_SIZE: operator-controller keeps one
 * catalog per package it resolved (a few hundred bytes of strings each), and a thousand of
 * those in 64 KiB blocks were 64 MB. */
#include <stdlib.h>
#include <string.h>

#include "fbc_internal.h"

#define ARENA_BLOCK_SIZE (64 * 1024)
#define ARENA_FIRST_BLOCK_SIZE 1024

struct fbc_arena_block {
    struct fbc_arena_block *next;
    size_t used, size;
    char data[];
};

static struct fbc_arena_block *block_new(size_t size)
{
    struct fbc_arena_block *b = malloc(sizeof *b + size);
    if (b) {
        b->next = NULL;
        b->used = 0;
        b->size = size;
    }
    return b;
}

const char *fbc_arena_strdup(fbc_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    struct fbc_arena_block *b = a->head;
    if (!b || b->size - b->used < n) {
        /* A string bigger than a quarter block gets a block of its own behind the
         * current one, so the current block's free space is not thrown away. */
        /* Blocks double from 1 KiB up to ARENA_BLOCK_SIZE: a parallel load gives every
         * file an arena of its own (fbc_arena_take joins them), and the catalog client
         * caches one small catalog per installed package; neither must pin a mostly empty
         * 64 KiB block each. */
        size_t next = !b ? ARENA_FIRST_BLOCK_SIZE : b->size >= ARENA_BLOCK_SIZE / 2 ? ARENA_BLOCK_SIZE : 2 * b->size;
        bool own = n > next / 4;
        struct fbc_arena_block *nb = block_new(own ? n : next);
        if (!nb)
            return NULL;
        if (own && b) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            a->head = nb;
        }
        b = nb;
    }
    char *out = b->data + b->used;
    memcpy(out, s, n);
    b->used += n;
    return out;
}

void fbc_arena_take(fbc_arena *dst, fbc_arena *src)
{
    struct fbc_arena_block *first = src->head;
    if (!first)
        return;
    src->head = NULL;
    if (!dst->head) {
        dst->head = first;
        return;
    }
    /* Behind dst's head, which keeps the free space new strings go to. */
    struct fbc_arena_block *last = first;
    while (last->next)
        last = last->next;
    last->next = dst->head->next;
    dst->head->next = first;
}

void fbc_arena_free(fbc_arena *a)
{
    struct fbc_arena_block *b = a->head;
    while (b) {
        struct fbc_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

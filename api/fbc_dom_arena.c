/* fbc_dom_arena: a YAML document's jansson DOM allocated from a bump arena.
 *
 * A catalog load builds one DOM per blob (a bundle with its CSV: thousands of objects,
 * strings and hashtable buckets), reads it once and frees it whole (fbc_load.c, add_blob).
 * With malloc that is one malloc and one free per value: 10-15% of the decode's CPU
 * (fbc_bench, certified-operators: 0.214 -> 0.180 s user on one thread), and a heap
 * whose small blocks interleave with what the load keeps.  Here, between begin and end,
 * the calling thread's jansson allocations come from big chunks instead; jansson's frees
 * of them do nothing, and reset makes the whole document's memory reusable at once.
 *
 * jansson's allocator is process-wide (json_set_alloc_funcs), so the hooks are installed
 * once and decide per call: a thread inside a scope allocates from its arena, every other
 * allocation is plain malloc/free, and a free of memory that is not from this thread's
 * arena goes to free() (values made before the scope, or by other threads).
 *
 * The rule for callers: nothing allocated inside a scope may be used or freed after the
 * next reset or the end.  The FBC load keeps no jansson value past its blob (the views
 * copy their strings into the catalog's own arena, fbc_model.c), and gocompat_yaml drops
 * a document's anchors before handing it over, so fbc_decode_yaml resets after each
 * document.  An escaped value freed later would reach free() with a pointer malloc never
 * gave: AddressSanitizer reports exactly that. */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "fbc_internal.h"

#define FIRST_CHUNK (64 * 1024)
#define MAX_CHUNK (4 * 1024 * 1024)
#define ALIGN 16 /* malloc's alignment on x86-64 and aarch64: jansson stores doubles and int64s */

struct fbc_dom_chunk {
    struct fbc_dom_chunk *next; /* older chunks */
    size_t used, size;
    _Alignas(ALIGN) char data[];
};

static _Thread_local fbc_dom_arena *current;

static int owns(const fbc_dom_arena *a, const void *p)
{
    for (const struct fbc_dom_chunk *c = a->head; c; c = c->next)
        if ((uintptr_t)p >= (uintptr_t)c->data && (uintptr_t)p < (uintptr_t)c->data + c->size)
            return 1;
    return 0;
}

static void *arena_alloc(fbc_dom_arena *a, size_t n)
{
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    struct fbc_dom_chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        /* Each chunk twice the last, up to MAX_CHUNK, so a big document needs few chunks
         * (owns() walks them); a value bigger than that gets a chunk of its own. */
        size_t size = c ? c->size * 2 : FIRST_CHUNK;
        if (size > MAX_CHUNK)
            size = MAX_CHUNK;
        if (size < n)
            size = n;
        struct fbc_dom_chunk *nc = malloc(sizeof *nc + size);
        if (!nc)
            return NULL;
        nc->next = c;
        nc->used = 0;
        nc->size = size;
        a->head = c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

static void *dom_malloc(size_t n)
{
    fbc_dom_arena *a = current;
    return a ? arena_alloc(a, n) : malloc(n);
}

static void dom_free(void *p)
{
    if (!p)
        return;
    for (const fbc_dom_arena *a = current; a; a = a->outer)
        if (owns(a, p))
            return; /* dropped with its arena */
    free(p);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void install_hooks(void)
{
    /* Any jansson value made before this point came from malloc and still goes to free():
     * dom_free sends everything that is not from this thread's arena there. */
    json_set_alloc_funcs(dom_malloc, dom_free);
}

void fbc_dom_arena_begin(fbc_dom_arena *a)
{
    pthread_once(&hooks_once, install_hooks);
    a->head = NULL;
    a->outer = current; /* a scope inside another: the outer one's values stay its own */
    current = a;
}

void fbc_dom_arena_reset(fbc_dom_arena *a)
{
    /* Keep the newest (biggest) chunk for the next document; give the rest back. */
    struct fbc_dom_chunk *keep = a->head;
    if (!keep)
        return;
    for (struct fbc_dom_chunk *c = keep->next, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    keep->next = NULL;
    keep->used = 0;
}

void fbc_dom_arena_end(fbc_dom_arena *a)
{
    current = a->outer;
    for (struct fbc_dom_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
}

size_t fbc_dom_arena_chunks(const fbc_dom_arena *a)
{
    size_t n = 0;
    for (const struct fbc_dom_chunk *c = a->head; c; c = c->next)
        n++;
    return n;
}

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
 * gave: AddressSanitizer reports exactly that.  In the ASan build a chunk's bytes are
 * also poisoned until handed out and again on reset, so an escaped value *used* after
 * its reset is reported too (as long as its bytes were not handed out again).
 *
 * Chunks kept for the thread's next scope (fbc_dom_arena_keep_begin/end): a load decodes
 * file after file on each of its threads, every file in a scope of its own.  Chunks are
 * bigger than malloc's fixed mmap threshold in the daemons (olm_malloc_tune.h), so each
 * was an mmap whose pages faulted in again for every file, and an munmap at its end
 * (certified-operators, 55 files: ~2000 of the load's ~12000 page faults).  Between keep
 * begin and end, a scope's chunks go to this thread's keep instead of free() (at most
 * KEEP_CHUNKS of them, the biggest), the next scope starts in the biggest kept one, and
 * keep end frees them: what a load leaves behind is what it left before.  A kept chunk
 * keeps only its first KEEP_RESIDENT bytes in memory (MADV_DONTNEED on the rest): most
 * documents fit, and the biggest one met must not stay in the load's peak until its end. */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fbc_internal.h"

#define FIRST_CHUNK (64 * 1024)
#define MAX_CHUNK (4 * 1024 * 1024)
#define ALIGN 16 /* malloc's alignment on x86-64 and aarch64: jansson stores doubles and int64s */
#define KEEP_CHUNKS 2 /* per thread: a document of more than MAX_CHUNK spans two */
#define KEEP_RESIDENT (1024 * 1024) /* of a kept chunk's bytes, this many stay in memory */

#if defined(__SANITIZE_ADDRESS__)
#define DOM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DOM_ASAN 1
#endif
#endif
#ifdef DOM_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

struct fbc_dom_chunk {
    struct fbc_dom_chunk *next; /* older chunks */
    size_t used, size;
    size_t touched; /* data[0, touched) may be in memory: the most used since it was trimmed */
    _Alignas(ALIGN) char data[];
};

static _Thread_local fbc_dom_arena *current;

/* This thread's chunks between its scopes (see the top): unused, biggest first. */
static _Thread_local struct {
    unsigned depth; /* keep_begin calls not yet ended */
    struct fbc_dom_chunk *chunks[KEEP_CHUNKS];
    size_t n;
} keep;

static void chunk_free(struct fbc_dom_chunk *c)
{
    UNPOISON(c->data, c->size); /* malloc's own bookkeeping decides from here on */
    free(c);
}

/* Gives the pages of c->data beyond KEEP_RESIDENT back to the kernel (they read as zeros
 * when touched again, which nothing relies on: handed-out bytes are always written first). */
static void chunk_trim(struct fbc_dom_chunk *c)
{
    if (c->used > c->touched)
        c->touched = c->used;
    if (c->touched <= KEEP_RESIDENT)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)c->data + KEEP_RESIDENT + page - 1) & ~(page - 1);
    uintptr_t to = ((uintptr_t)c->data + c->touched) & ~(page - 1); /* whole pages, all in the chunk */
    if (to > from && madvise((void *)from, to - from, MADV_DONTNEED) != 0)
        return; /* best effort: the pages stay until keep end frees the chunk */
    c->touched = KEEP_RESIDENT;
}

/* A chunk no scope uses any more: kept for this thread's next scope, or freed. */
static void chunk_release(struct fbc_dom_chunk *c)
{
    if (keep.depth == 0 || c->size > MAX_CHUNK) {
        chunk_free(c); /* a single huge value's chunk: not worth holding */
        return;
    }
    chunk_trim(c);
    c->next = NULL;
    c->used = 0;
    POISON(c->data, c->size);
    if (keep.n == KEEP_CHUNKS) {
        struct fbc_dom_chunk *smallest = keep.chunks[KEEP_CHUNKS - 1];
        if (smallest->size >= c->size) {
            chunk_free(c);
            return;
        }
        chunk_free(smallest);
        keep.n--;
    }
    size_t i = keep.n++;
    for (; i > 0 && keep.chunks[i - 1]->size < c->size; i--)
        keep.chunks[i] = keep.chunks[i - 1];
    keep.chunks[i] = c;
}

/* A chunk of at least `size` bytes for the arena: the biggest kept one, else a new one. */
static struct fbc_dom_chunk *chunk_get(size_t size)
{
    if (keep.n > 0 && keep.chunks[0]->size >= size) {
        struct fbc_dom_chunk *c = keep.chunks[0];
        for (size_t i = 1; i < keep.n; i++)
            keep.chunks[i - 1] = keep.chunks[i];
        keep.n--;
        return c;
    }
    struct fbc_dom_chunk *c = malloc(sizeof *c + size);
    if (!c)
        return NULL;
    c->next = NULL;
    c->used = 0;
    c->size = size;
    c->touched = 0;
    POISON(c->data, size);
    return c;
}

static int owns(const fbc_dom_arena *a, const void *p)
{
    for (const struct fbc_dom_chunk *c = a->head; c; c = c->next)
        if ((uintptr_t)p >= (uintptr_t)c->data && (uintptr_t)p < (uintptr_t)c->data + c->size)
            return 1;
    return 0;
}

static void *arena_alloc(fbc_dom_arena *a, size_t want)
{
    size_t n = (want + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (n < want)
        return NULL; /* overflowed: no such allocation */
    struct fbc_dom_chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        /* Each chunk twice the last, up to MAX_CHUNK, so a big document needs few chunks
         * (owns() walks them); a value bigger than that gets a chunk of its own. */
        size_t size = c ? c->size * 2 : FIRST_CHUNK;
        if (size > MAX_CHUNK)
            size = MAX_CHUNK;
        if (size < n)
            size = n;
        struct fbc_dom_chunk *nc = chunk_get(size);
        if (!nc)
            return NULL;
        nc->next = c;
        a->head = c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    UNPOISON(p, want);
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
    /* Keep the newest (biggest) chunk for the next document; the rest go back
     * (to this thread's keep, or free()). */
    struct fbc_dom_chunk *newest = a->head;
    if (!newest)
        return;
    for (struct fbc_dom_chunk *c = newest->next, *next; c; c = next) {
        next = c->next;
        chunk_release(c);
    }
    newest->next = NULL;
    if (newest->used > newest->touched)
        newest->touched = newest->used; /* its pages stay for this scope's next document */
    newest->used = 0;
    POISON(newest->data, newest->size);
}

void fbc_dom_arena_end(fbc_dom_arena *a)
{
    current = a->outer;
    for (struct fbc_dom_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        chunk_release(c);
    }
    a->head = NULL;
}

void fbc_dom_arena_keep_begin(void)
{
    keep.depth++;
}

void fbc_dom_arena_keep_end(void)
{
    if (keep.depth == 0 || --keep.depth > 0)
        return; /* an outer keep still runs: it frees them */
    for (size_t i = 0; i < keep.n; i++)
        chunk_free(keep.chunks[i]);
    keep.n = 0;
}

size_t fbc_dom_arena_kept_chunks(void)
{
    return keep.n;
}

size_t fbc_dom_arena_chunks(const fbc_dom_arena *a)
{
    size_t n = 0;
    for (const struct fbc_dom_chunk *c = a->head; c; c = c->next)
        n++;
    return n;
}

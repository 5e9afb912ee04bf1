/* fbc_model_join: one catalog out of catalogs loaded file by file (fbc_load_dir.c's parallel
 * load), as if their files had been loaded into one after the other.
 *
 * The text is what costs: a catalog's normalised lines (18 MB for certified-operators) must
 * end up in one buffer, and on the virtual machines this runs on, a fresh page costs
 * 1.3-1.8 us to fault in against 0.05 us for copying its bytes: copying the parts into a
 * new buffer was 8.5 ms of the load's serial tail.  So the parts' texts are mappings of
 * their own (fbc_text.c) whose pages move into the joined one with mremap: each part is
 * first shifted in place by less than a page (the bytes that go into the page where the
 * part before it ends are put aside), on all the load's threads, then, in order, its
 * put-aside head is copied and its pages moved.  A part without a mapping of its own is
 * copied.  The rest (metas, views, strings) moves by pointer. */
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fbc_internal.h"

/* Below this much text a second thread costs more than it saves. */
#define CONCAT_PARALLEL_MIN_BYTES (1u << 20)
#define CONCAT_MAX_THREADS 16

/* Grows *arr to hold `need` elements of `elem` bytes (*cap updated).  -1 out of memory. */
static int reserve(void **arr, size_t need, size_t *cap, size_t elem)
{
    if (need <= *cap)
        return 0;
    void *na = realloc(*arr, need * elem);
    if (!na)
        return -1;
    *arr = na;
    *cap = need;
    return 0;
}

/* Moves src's n elements behind dst's n_dst (dst has room: reserve_counts), then frees
 * src's array: the elements' own allocations now belong to dst. */
static void move_array(void *dst, size_t n_dst, void **src, size_t n, size_t elem)
{
    if (n)
        memcpy((char *)dst + n_dst * elem, *src, n * elem);
    free(*src);
    *src = NULL;
}

#define MOVE(dst_arr, dst_n, src_arr, src_n, src_cap)                                                   \
    do {                                                                                                \
        move_array((dst_arr), (dst_n), (void **)&(src_arr), (src_n), sizeof *(dst_arr));                \
        (dst_n) += (src_n);                                                                             \
        (src_n) = 0;                                                                                    \
        (src_cap) = 0;                                                                                  \
    } while (0)

/* Moves everything of src but its text behind dst's, src's text having been placed at
 * `base` in dst's; dst has room for all of it (reserve_counts), so nothing can fail. */
static void move_all_but_text(fbc_catalog *dst, fbc_catalog *src, size_t base)
{
    fbc_priv *d = dst->priv, *s = src->priv;
    for (size_t i = 0; i < src->nmetas; i++)
        src->metas[i].offset += base;
    /* Value spans are (start, len) pairs into the jsonl; start SIZE_MAX = never met. */
    for (size_t i = 0; i + 1 < s->nvalue_offs; i += 2) {
        size_t start = s->value_offs[i];
        d->value_offs[d->nvalue_offs++] = start == SIZE_MAX ? SIZE_MAX : start + base;
        d->value_offs[d->nvalue_offs++] = s->value_offs[i + 1];
    }
    free(s->value_offs);
    s->value_offs = NULL;
    s->nvalue_offs = s->value_offs_cap = 0;
    /* The metas' and views' strings live in src's arena and in the views' own arrays. */
    fbc_arena_take(&d->strings, &s->strings);
    MOVE(dst->metas, dst->nmetas, src->metas, src->nmetas, s->metas_cap);
    MOVE(d->files, d->nfiles, s->files, s->nfiles, s->files_cap);
    MOVE(d->shape, d->nshape, s->shape, s->nshape, s->shape_cap);
    MOVE(dst->packages, dst->npackages, src->packages, src->npackages, s->packages_cap);
    MOVE(dst->channels, dst->nchannels, src->channels, src->nchannels, s->channels_cap);
    MOVE(dst->bundles, dst->nbundles, src->bundles, src->nbundles, s->bundles_cap);
    MOVE(dst->deprecations, dst->ndeprecations, src->deprecations, src->ndeprecations, s->deprecations_cap);
}
#undef MOVE

/* One thread's share of the first step: parts [from, to).  Into a malloc'd text (no
 * mapping could be had), each part is copied to its place and its own text freed.  Into a
 * mapped one, each part whose text is a mapping of its own and reaches past the page its
 * place starts in is made ready to move: its first `head` bytes (those that go into that
 * page, behind the part before it) are put aside, the rest shifted to the start of its
 * mapping; the others are copied in order by the second step. */
typedef struct copy_share {
    fbc_catalog **parts;
    const size_t *base;
    char *text;
    bool mapped;
    char *heads;              /* mapped: the parts' heads, at head_off */
    const size_t *head_off;
    size_t from, to;
    pthread_t tid;
    bool started;
} copy_share;

static strbuf *text_of(fbc_catalog *c)
{
    return &((fbc_priv *)c->priv)->jsonl;
}

/* Bytes of part i that go into the page its place starts in, behind the part before. */
static size_t head_len(const size_t *base, size_t i)
{
    size_t page = fbc_text_page();
    return (page - base[i] % page) % page;
}

static bool movable(const strbuf *t, size_t head)
{
    return t->fixed && t->len > head;
}

static void *first_step(void *arg)
{
    copy_share *c = arg;
    for (size_t i = c->from; i < c->to; i++) {
        strbuf *t = text_of(c->parts[i]);
        if (!c->mapped) {
            if (t->len)
                memcpy(c->text + c->base[i], t->data, t->len);
            fbc_text_free(t);
            continue;
        }
        size_t head = head_len(c->base, i);
        if (!movable(t, head))
            continue;
        memcpy(c->heads + c->head_off[i], t->data, head);
        memmove(t->data, t->data + head, t->len - head);
    }
    return NULL;
}

/* The second step, in order, into a mapped text: each part's head, then its pages. */
static void second_step(fbc_catalog **parts, size_t n, const size_t *base, char *text, const char *heads,
                        const size_t *head_off)
{
    for (size_t i = 0; i < n; i++) {
        strbuf *t = text_of(parts[i]);
        size_t head = head_len(base, i);
        if (!movable(t, head)) {
            if (t->len)
                memcpy(text + base[i], t->data, t->len);
            fbc_text_free(t);
            continue;
        }
        memcpy(text + base[i], heads + head_off[i], head);
        size_t rest = t->len - head, size = fbc_text_round(rest);
        char *to = text + base[i] + head; /* page aligned */
        if (mremap(t->data, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to) == MAP_FAILED) {
            memcpy(to, t->data, rest); /* the pages stay where they are: copy them */
            fbc_text_free(t);
            continue;
        }
        if (t->cap > size)
            munmap(t->data + size, t->cap - size);
        fbc_text_forget(t);
    }
}

/* Splits parts [0, n) into `threads` runs of about the same number of bytes. */
static unsigned split(copy_share *shares, unsigned threads, size_t n, const size_t *base, size_t total)
{
    unsigned k = 0;
    size_t from = 0;
    for (unsigned t = 0; t < threads && from < n; t++) {
        size_t to = from + 1;
        size_t goal = total / threads * (t + 1);
        while (to < n && (t + 1 == threads || base[to] < goal))
            to++;
        shares[k].from = from;
        shares[k].to = to;
        k++;
        from = to;
    }
    return k;
}

/* How many of each element a set of catalogs holds, to make room for them at once. */
typedef struct fbc_counts {
    size_t value_offs, metas, files, shape, packages, channels, bundles, deprecations;
} fbc_counts;

static void add_counts(fbc_counts *n, const fbc_catalog *c)
{
    const fbc_priv *p = c->priv;
    n->value_offs += p->nvalue_offs;
    n->metas += c->nmetas;
    n->files += p->nfiles;
    n->shape += p->nshape;
    n->packages += c->npackages;
    n->channels += c->nchannels;
    n->bundles += c->nbundles;
    n->deprecations += c->ndeprecations;
}

/* Room in dst for all of n, so that moving the elements in cannot fail half way. */
static int reserve_counts(fbc_catalog *dst, const fbc_counts *n)
{
    fbc_priv *d = dst->priv;
#define RESERVE(arr, need, cap) reserve((void **)&(arr), (need), &(cap), sizeof *(arr))
    return RESERVE(d->value_offs, n->value_offs, d->value_offs_cap) < 0 ||
                   RESERVE(dst->metas, n->metas, d->metas_cap) < 0 || RESERVE(d->files, n->files, d->files_cap) < 0 ||
                   RESERVE(d->shape, n->shape, d->shape_cap) < 0 ||
                   RESERVE(dst->packages, n->packages, d->packages_cap) < 0 ||
                   RESERVE(dst->channels, n->channels, d->channels_cap) < 0 ||
                   RESERVE(dst->bundles, n->bundles, d->bundles_cap) < 0 ||
                   RESERVE(dst->deprecations, n->deprecations, d->deprecations_cap) < 0
               ? -1
               : 0;
#undef RESERVE
}

int fbc_model_concat(fbc_catalog **parts, size_t n, unsigned threads)
{
    if (n < 2)
        return 0;
    fbc_catalog *dst = parts[0];
    fbc_priv *d = dst->priv;
    size_t *base = malloc(n * sizeof *base);
    if (!base)
        return -1;
    size_t total = 0;
    fbc_counts all = {0};
    for (size_t i = 0; i < n; i++) {
        base[i] = total;
        total += ((const fbc_priv *)parts[i]->priv)->jsonl.len;
        add_counts(&all, parts[i]);
    }
    /* Everything that can fail comes before anything moves. */
    strbuf text = STRBUF_INIT;
    bool mapped = fbc_text_map_bytes(&text, total + 1) == 0;
    if (!mapped)
        text = (strbuf){.data = malloc(total + 1), .cap = total + 1};
    size_t *head_off = mapped ? malloc(n * sizeof *head_off) : NULL;
    char *heads = NULL;
    if (head_off) {
        size_t heads_len = 0;
        for (size_t i = 0; i < n; i++) {
            head_off[i] = heads_len;
            heads_len += head_len(base, i);
        }
        heads = malloc(heads_len ? heads_len : 1);
    }
    if (!text.data || (mapped && !heads) || reserve_counts(dst, &all) < 0) {
        fbc_text_free(&text);
        free(head_off);
        free(heads);
        free(base);
        return -1;
    }
    if (threads > CONCAT_MAX_THREADS)
        threads = CONCAT_MAX_THREADS;
    if (threads < 1 || total < CONCAT_PARALLEL_MIN_BYTES)
        threads = 1;
    copy_share shares[CONCAT_MAX_THREADS];
    unsigned k = split(shares, threads, n, base, total);
    for (unsigned t = 0; t < k; t++) {
        shares[t].parts = parts;
        shares[t].base = base;
        shares[t].text = text.data;
        shares[t].mapped = mapped;
        shares[t].heads = heads;
        shares[t].head_off = head_off;
        shares[t].started = t > 0 && pthread_create(&shares[t].tid, NULL, first_step, &shares[t]) == 0;
    }
    first_step(&shares[0]);
    for (unsigned t = 1; t < k; t++) {
        if (shares[t].started)
            pthread_join(shares[t].tid, NULL);
        else
            first_step(&shares[t]); /* no thread: this one does that share too */
    }
    if (mapped)
        second_step(parts, n, base, text.data, heads, head_off);
    free(heads);
    free(head_off);
    text.data[total] = '\0';
    text.len = total;
    d->jsonl = text; /* part 0's own was moved or copied and freed with the others' */
    for (size_t i = 1; i < n; i++)
        move_all_but_text(dst, parts[i], base[i]);
    free(base);
    return 0;
}

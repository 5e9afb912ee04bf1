/* fbc_model_join: one catalog out of catalogs loaded file by file (fbc_load_dir.c's parallel
 * load), as if their files had been loaded into one after the other.
 *
 * The text is what costs: a catalog's normalised lines (18 MB for certified-operators) are
 * copied once more into the joined buffer, and on a virtual machine most of that copy is
 * page faults on the new buffer (about 1.3-1.8 us per 4 KiB page here, against 0.05 us for
 * the bytes themselves).  fbc_model_concat therefore sizes the buffer exactly once and
 * splits the copy between threads, each freeing the texts it has copied; the rest (metas,
 * views, strings) moves by pointer. */
#include <pthread.h>
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

/* Appends n elements of `elem` bytes from *src to *dst (n_dst of them, capacity *cap),
 * then frees *src: the elements' own allocations now belong to dst. */
static int append_array(void **dst, size_t n_dst, size_t *cap, void **src, size_t n, size_t elem)
{
    if (n == 0)
        return 0;
    if (reserve(dst, n_dst + n, cap, elem) < 0)
        return -1;
    memcpy((char *)*dst + n_dst * elem, *src, n * elem);
    free(*src);
    *src = NULL;
    return 0;
}

/* Moves src's n elements behind dst's (updating both counts) so that, whatever fails,
 * each element belongs to exactly one of them. */
#define APPEND(dst_arr, dst_n, dst_cap, src_arr, src_n, src_cap)                                        \
    do {                                                                                                \
        if (append_array((void **)&(dst_arr), (dst_n), &(dst_cap), (void **)&(src_arr), (src_n),         \
                         sizeof *(dst_arr)) < 0)                                                        \
            return -1;                                                                                  \
        (dst_n) += (src_n);                                                                             \
        (src_n) = 0;                                                                                    \
        (src_cap) = 0;                                                                                  \
    } while (0)

/* Moves everything of src but its text behind dst's, src's text having been placed at
 * `base` in dst's.  The value spans must have room in dst already (they are rebased as
 * they move, so they must not fail half way). */
static int move_all_but_text(fbc_catalog *dst, fbc_catalog *src, size_t base)
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
    APPEND(dst->metas, dst->nmetas, d->metas_cap, src->metas, src->nmetas, s->metas_cap);
    APPEND(d->files, d->nfiles, d->files_cap, s->files, s->nfiles, s->files_cap);
    APPEND(d->shape, d->nshape, d->shape_cap, s->shape, s->nshape, s->shape_cap);
    APPEND(dst->packages, dst->npackages, d->packages_cap, src->packages, src->npackages, s->packages_cap);
    APPEND(dst->channels, dst->nchannels, d->channels_cap, src->channels, src->nchannels, s->channels_cap);
    APPEND(dst->bundles, dst->nbundles, d->bundles_cap, src->bundles, src->nbundles, s->bundles_cap);
    APPEND(dst->deprecations, dst->ndeprecations, d->deprecations_cap, src->deprecations, src->ndeprecations,
           s->deprecations_cap);
    return 0;
}
#undef APPEND

int fbc_model_append(fbc_catalog *dst, fbc_catalog *src)
{
    fbc_priv *d = dst->priv, *s = src->priv;
    size_t base = d->jsonl.len;
    /* Room for the text and the value spans first. */
    if (strbuf_reserve(&d->jsonl, s->jsonl.len) < 0 ||
        reserve((void **)&d->value_offs, d->nvalue_offs + s->nvalue_offs, &d->value_offs_cap,
                sizeof *d->value_offs) < 0)
        return -1;
    strbuf_append(&d->jsonl, s->jsonl.data, s->jsonl.len); /* cannot fail: room reserved */
    strbuf_free(&s->jsonl);
    return move_all_but_text(dst, src, base);
}

/* One thread's share of the copy: parts [from, to) into `text`, each part's own text freed
 * once copied (so the joined buffer grows as the parts' shrink, as with appends). */
typedef struct copy_share {
    fbc_catalog **parts;
    const size_t *base;
    char *text;
    size_t from, to;
    pthread_t tid;
    bool started;
} copy_share;

static void *copy_texts(void *arg)
{
    copy_share *c = arg;
    for (size_t i = c->from; i < c->to; i++) {
        strbuf *t = &((fbc_priv *)c->parts[i]->priv)->jsonl;
        if (t->len)
            memcpy(c->text + c->base[i], t->data, t->len);
        strbuf_free(t);
    }
    return NULL;
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
    char *text = malloc(total + 1);
    if (!text || reserve_counts(dst, &all) < 0) {
        free(text);
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
        shares[t].text = text;
        shares[t].started = t > 0 && pthread_create(&shares[t].tid, NULL, copy_texts, &shares[t]) == 0;
    }
    copy_texts(&shares[0]);
    for (unsigned t = 1; t < k; t++) {
        if (shares[t].started)
            pthread_join(shares[t].tid, NULL);
        else
            copy_texts(&shares[t]); /* no thread: this one copies that share too */
    }
    text[total] = '\0';
    d->jsonl = (strbuf){.data = text, .len = total, .cap = total + 1};
    for (size_t i = 1; i < n; i++)
        (void)move_all_but_text(dst, parts[i], base[i]); /* cannot fail: room reserved */
    free(base);
    return 0;
}

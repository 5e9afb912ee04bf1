/* fbc_prefetch: decode a catalog's files while they are still arriving (see fbc.h).
 *
 * catalogd pulls a catalog image and then loads it; the pull's unpack keeps one core busy
 * with gunzip + untar while the other idles, and the load then decodes every file on both.
 * Here the unpack offers each file as soon as it is complete, and a thread decodes it on
 * the idle core into a part of its own (as fbc_load_dir.c's workers do), so the load
 * finds part of its work done.  What a part holds does not depend on where or when it was
 * decoded: the same bytes give the same blobs, recorded under the same relative path.
 * Only error messages name the file where it was read (here: the pull's temp tree, renamed
 * away when the pull ends), so a failed early decode keeps nothing and the load decodes
 * that file again, giving the error it always gave. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "fbc_internal.h"

typedef struct pf_item {
    char *path, *rel;   /* owned */
    fbc_catalog *part;  /* decoded, NULL until then (or failed, or taken) */
} pf_item;

struct fbc_prefetch {
    pthread_mutex_t mu; /* guards everything below, with cv */
    pthread_cond_t cv;
    pf_item *items;
    size_t n, cap;
    size_t next;     /* first item not yet taken by the thread */
    size_t in_hand;  /* the item the thread decodes, or SIZE_MAX */
    bool stopping;   /* fbc_prefetch_stop: the thread ends after its file */
    bool untrusted;  /* an offer of rel NULL: no part may be used */
    size_t *by_rel;  /* item indexes sorted by rel (after stop; items no longer move) */
    pthread_t tid;
    bool started;    /* tid runs: from the first offer on */
};

static void *decode_thread(void *arg)
{
    fbc_prefetch *p = arg;
    /* File after file, like a load's thread: its DOM arena chunks are kept
     * between files (also while waiting for the next offer: the pull is not over) and
     * given back when the thread ends, once fbc_prefetch_stop has told it to. */
    fbc_dom_arena_keep_begin();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->next == p->n && !p->stopping && !p->untrusted)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stopping || p->untrusted)
            break;
        size_t i = p->next++;
        const char *path = p->items[i].path, *rel = p->items[i].rel; /* heap strings: stable */
        p->in_hand = i;
        pthread_mutex_unlock(&p->mu);
        fbc_catalog *c = fbc_part_new();
        olm_error err;
        if (c && fbc_load_path_into(c, path, rel, &err) == 0) {
            fbc_model_trim(c);
        } else { /* the load decodes it again and says why */
            fbc_catalog_free(c);
            c = NULL;
        }
        pthread_mutex_lock(&p->mu);
        p->items[i].part = c; /* by index: items may have moved meanwhile */
        p->in_hand = SIZE_MAX;
        pthread_cond_broadcast(&p->cv); /* fbc_prefetch_wait */
    }
    pthread_mutex_unlock(&p->mu);
    fbc_dom_arena_keep_end();
    return NULL;
}

fbc_prefetch *fbc_prefetch_new(void)
{
    fbc_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->in_hand = SIZE_MAX;
    return p;
}

void fbc_prefetch_offer(fbc_prefetch *p, const char *path, const char *rel)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->stopping || p->untrusted) {
        /* nothing more to decode */
    } else if (!rel || !path) {
        p->untrusted = true;
    } else if (!p->started && pthread_create(&p->tid, NULL, decode_thread, p) != 0) {
        p->untrusted = true; /* no thread: the load decodes everything, as without a prefetch */
    } else {
        p->started = true; /* the thread waits for mu, which this offer holds */
        if (OLM_ARRAY_RESERVE(p->items, p->cap, p->n + 1) < 0) {
            p->untrusted = true; /* a file left out would be loaded anyway; this is simpler */
            goto out;
        }
        pf_item it = {.path = strdup(path), .rel = strdup(rel)};
        if (!it.path || !it.rel) {
            free(it.path);
            free(it.rel);
            goto out; /* not offered: the load decodes it */
        }
        p->items[p->n++] = it;
    }
out:
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static int by_rel(const void *a, const void *b, void *items)
{
    const pf_item *it = items;
    return strcmp(it[*(const size_t *)a].rel, it[*(const size_t *)b].rel);
}

void fbc_prefetch_stop(fbc_prefetch *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (!p->stopping) {
        p->stopping = true;
        pthread_cond_broadcast(&p->cv);
        /* Not waiting for the file in hand: fbc_prefetch_wait does, for the load, when it
         * comes to it.  Items no longer move (no more offers), so index them by rel. */
        p->by_rel = p->n ? malloc(p->n * sizeof *p->by_rel) : NULL;
        if (p->n && !p->by_rel) {
            p->untrusted = true; /* out of memory: the load does it all */
        } else {
            for (size_t i = 0; i < p->n; i++)
                p->by_rel[i] = i;
            if (p->n > 1) /* qsort_r(NULL, 0, ...) is undefined: nothing was offered */
                qsort_r(p->by_rel, p->n, sizeof *p->by_rel, by_rel, p->items);
            /* The same path told twice means it was written twice: the unpacker says so
             * with a NULL offer first, but a part must never stand for other bytes than
             * the load's. */
            for (size_t i = 1; i < p->n; i++)
                if (strcmp(p->items[p->by_rel[i - 1]].rel, p->items[p->by_rel[i]].rel) == 0)
                    p->untrusted = true;
        }
    }
    pthread_mutex_unlock(&p->mu);
}

/* The item offered as `rel`, or SIZE_MAX; p->mu held, after stop. */
static size_t find(const fbc_prefetch *p, const char *rel)
{
    size_t lo = 0, hi = p->by_rel ? p->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->items[p->by_rel[mid]].rel, rel);
        if (c == 0)
            return p->by_rel[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

fbc_catalog *fbc_prefetch_take(fbc_prefetch *p, const char *rel, bool *pending)
{
    *pending = false;
    if (!p)
        return NULL;
    pthread_mutex_lock(&p->mu);
    fbc_catalog *c = NULL;
    size_t i = p->stopping && !p->untrusted ? find(p, rel) : SIZE_MAX;
    if (i != SIZE_MAX && i == p->in_hand) {
        *pending = true;
    } else if (i != SIZE_MAX) {
        c = p->items[i].part;
        p->items[i].part = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    return c;
}

fbc_catalog *fbc_prefetch_wait(fbc_prefetch *p, const char *rel)
{
    pthread_mutex_lock(&p->mu);
    size_t i = find(p, rel);
    while (i != SIZE_MAX && p->in_hand == i)
        pthread_cond_wait(&p->cv, &p->mu);
    fbc_catalog *c = NULL;
    if (i != SIZE_MAX && !p->untrusted) {
        c = p->items[i].part;
        p->items[i].part = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    return c;
}

void fbc_prefetch_free(fbc_prefetch *p)
{
    if (!p)
        return;
    fbc_prefetch_stop(p);
    if (p->started)
        pthread_join(p->tid, NULL);
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].path);
        free(p->items[i].rel);
        fbc_catalog_free(p->items[i].part);
    }
    free(p->items);
    free(p->by_rel);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

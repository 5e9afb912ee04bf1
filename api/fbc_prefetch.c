/* fbc_prefetch: decode a catalog's files while they are still arriving (see fbc.h).
 *
 * catalogd pulls a catalog image and then loads it; the pull's unpack keeps one core busy
 * with gunzip + untar while the other idles, and the load then decodes every file on both.
 * Here the unpack offers each file as soon as it is complete, and a thread decodes it on
 * the idle core into a part of its own (as fbc_load_parallel.c's workers do), so the load
 * finds part of its work done.  What a part holds does not depend on where or when it was
 * decoded: the same bytes give the same blobs, recorded under the same relative path.
 * Only error messages name the file where it was read (here: the pull's temp tree, renamed
 * away when the pull ends), so a failed early decode keeps nothing and the load decodes
 * that file again, giving the error it always gave. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
    bool stopping;   /* fbc_prefetch_stop: the thread ends after its file */
    bool untrusted;  /* an offer of rel NULL: no part may be used */
    bool sorted;     /* items sorted by rel for fbc_prefetch_take (after stop) */
    bool joined;
    pthread_t tid;
};

static void *decode_thread(void *arg)
{
    fbc_prefetch *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->next == p->n && !p->stopping && !p->untrusted)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stopping || p->untrusted)
            break;
        size_t i = p->next++;
        const char *path = p->items[i].path, *rel = p->items[i].rel; /* heap strings: stable */
        pthread_mutex_unlock(&p->mu);
        fbc_catalog *c = fbc_catalog_new();
        olm_error err;
        if (c && fbc_load_path_into(c, path, rel, &err) == 0) {
            fbc_model_trim(c);
        } else { /* the load decodes it again and says why */
            fbc_catalog_free(c);
            c = NULL;
        }
        pthread_mutex_lock(&p->mu);
        p->items[i].part = c; /* by index: items may have moved meanwhile */
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

fbc_prefetch *fbc_prefetch_start(void)
{
    fbc_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->tid, NULL, decode_thread, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
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
    } else {
        if (p->n == p->cap) {
            size_t cap = p->cap ? p->cap * 2 : 64;
            pf_item *ni = realloc(p->items, cap * sizeof *ni);
            if (!ni) {
                p->untrusted = true; /* a file left out would be loaded anyway; this is simpler */
                goto out;
            }
            p->items = ni;
            p->cap = cap;
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

static int by_rel(const void *a, const void *b)
{
    return strcmp(((const pf_item *)a)->rel, ((const pf_item *)b)->rel);
}

void fbc_prefetch_stop(fbc_prefetch *p)
{
    if (!p || p->joined)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->tid, NULL);
    p->joined = true;
    qsort(p->items, p->n, sizeof *p->items, by_rel);
    /* The same path told twice means it was written twice: the unpacker says so with a
     * NULL offer first, but a part must never stand for other bytes than the load's. */
    for (size_t i = 1; i < p->n; i++)
        if (strcmp(p->items[i - 1].rel, p->items[i].rel) == 0)
            p->untrusted = true;
    p->sorted = true;
}

fbc_catalog *fbc_prefetch_take(fbc_prefetch *p, const char *rel)
{
    if (!p || !p->sorted || p->untrusted)
        return NULL;
    pf_item key = {.rel = (char *)rel};
    pf_item *it = bsearch(&key, p->items, p->n, sizeof *p->items, by_rel);
    if (!it)
        return NULL;
    fbc_catalog *c = it->part;
    it->part = NULL;
    return c;
}

void fbc_prefetch_free(fbc_prefetch *p)
{
    if (!p)
        return;
    fbc_prefetch_stop(p);
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].path);
        free(p->items[i].rel);
        fbc_catalog_free(p->items[i].part);
    }
    free(p->items);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

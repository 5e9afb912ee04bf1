/* fbc_load_dir: a catalog directory's files, loaded file after file (fbc_load_dir) or on
 * several threads with the same result (fbc_load_dir_parallel, fbc_load_dir_prefetched).
 *
 * Decoding the YAML/JSON of a catalog is nearly all of a load, and a catalog is many
 * files (certified-operators: 55 files, 20 MB), so each file is loaded into a catalog
 * of its own by whichever thread is free, the biggest files first (so that no thread
 * is left with a big file at the end while the others idle).  The per-file catalogs
 * are joined in walk order once all are loaded (fbc_model_concat: a part's text pages
 * move into the catalog's, or a small text is copied; the views and strings move by
 * pointer), which gives the very metas, lines, views and shape problems a serial load
 * gives.  Errors too: every file before the first failing one
 * (in walk order) is still loaded, so the error reported is the one fbc_load_dir
 * reports; files after it are skipped.
 *
 * Memory: each thread holds one blob's DOM at a time, as a serial load does; the
 * per-file texts add up to the final one, whose pages they become (a copied small text is
 * freed once copied).  While a thread takes file after
 * file it keeps its DOM arena chunks (fbc_dom_arena_keep_begin), and gives them back
 * once no file is left for it.
 *
 * fbc_load_dir_prefetched: files decoded early (fbc_prefetch.c) start out done, with their
 * part; only the others are loaded here. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "fbc_internal.h"

#define MAX_THREADS 16

typedef struct job {
    const char *dir;
    const fbc_file_list *files;
    size_t *order;            /* file indexes to load, biggest file first */
    size_t norder;
    fbc_catalog **parts;      /* per file, in walk order; NULL = not loaded */
    olm_error *errs;          /* per file */
    atomic_size_t next;       /* next position in `order` to take */
    atomic_size_t first_fail; /* lowest walk index that failed; files.n = none */
    pthread_mutex_t mu;       /* guards done, with cv */
    pthread_cond_t cv;
    bool *done;               /* per file: its worker is finished with it */
    fbc_prefetch *pre;        /* early decoder, or NULL */
    bool *pending;            /* per file: pre is decoding it (fbc_prefetch_wait) */
} job;

typedef struct sized {
    size_t index;
    off_t size;
} sized;

static int bigger_first(const void *a, const void *b)
{
    const sized *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index; /* stable: walk order */
}

static void note_failure(job *j, size_t index)
{
    size_t cur = atomic_load(&j->first_fail);
    while (index < cur && !atomic_compare_exchange_weak(&j->first_fail, &cur, index))
        ;
}

/* Loads file i into j->parts[i] (NULL on failure, with j->errs[i] set). */
static void load_one(job *j, size_t i)
{
    if (i > atomic_load(&j->first_fail))
        return; /* an earlier file failed: the load's error is settled before this one */
    fbc_catalog *c = fbc_part_new();
    if (!c) {
        olm_error_set(&j->errs[i], "loading %s: out of memory", j->dir);
        note_failure(j, i);
        return;
    }
    if (fbc_load_file_into(c, j->dir, j->files->paths[i], &j->errs[i]) < 0) {
        fbc_catalog_free(c);
        note_failure(j, i);
        return;
    }
    fbc_model_trim(c);
    j->parts[i] = c;
}

static void *work(void *arg)
{
    job *j = arg;
    for (;;) {
        size_t pos = atomic_fetch_add(&j->next, 1);
        if (pos >= j->norder)
            break;
        size_t i = j->order[pos];
        load_one(j, i);
        pthread_mutex_lock(&j->mu);
        j->done[i] = true;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
    }
    return NULL;
}

/* work() with the thread's DOM arena chunks kept from file to file. */
static void *worker(void *arg)
{
    fbc_dom_arena_keep_begin();
    work(arg);
    fbc_dom_arena_keep_end();
    return NULL;
}

static void wait_done(job *j, size_t i)
{
    pthread_mutex_lock(&j->mu);
    while (!j->done[i])
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

/* Loads every file on `threads` threads (this one included), then joins the parts in walk
 * order into *out (fbc_model_concat, which shares its work between as many threads).  0; 1 when a file failed (its error is the first failure's, after the join);
 * -1 out of memory joining. */
static int run(job *j, unsigned threads, fbc_catalog **out)
{
    pthread_t tids[MAX_THREADS];
    unsigned started = 0;
    for (unsigned t = 1; t < threads; t++) {
        if (pthread_create(&tids[started], NULL, worker, j) != 0)
            break; /* fewer threads just take longer */
        started++;
    }
    (void)worker(j); /* its chunks are given back before joining: they would only add to the peak */
    int rc = 0;
    for (size_t i = 0; i < j->files->n && rc == 0; i++) {
        if (j->pending[i]) {
            /* still being decoded early when the load began: its part, else load it here */
            if (!(j->parts[i] = fbc_prefetch_wait(j->pre, j->files->paths[i])))
                load_one(j, i);
        } else {
            wait_done(j, i);
        }
        if (!j->parts[i])
            rc = 1; /* every file before it loaded: it is the first failure */
    }
    for (unsigned t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    if (rc == 0) {
        if (fbc_model_concat(j->parts, j->files->n, threads) < 0)
            return -1;
        *out = j->parts[0];
        j->parts[0] = NULL; /* the others are empty now, freed by the caller */
    }
    return rc;
}

/* `pre`: parts decoded early (fbc_prefetch.c), or NULL. */
static fbc_catalog *load_dir(const char *dir, unsigned threads, fbc_prefetch *pre, olm_error *err)
{
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads < 1)
        threads = 1;
    fbc_file_list files = {0};
    if (fbc_walk_dir(dir, &files, err) < 0)
        return NULL;
    if (files.n == 0 || (!pre && (threads <= 1 || files.n < 2))) { /* file after file, stopping at the first error */
        fbc_catalog *c = fbc_catalog_new();
        int rc = c ? 0 : olm_error_set(err, "loading %s: out of memory", dir);
        fbc_dom_arena_keep_begin();
        for (size_t i = 0; i < files.n && rc == 0; i++)
            rc = fbc_load_file_into(c, dir, files.paths[i], err);
        fbc_dom_arena_keep_end();
        fbc_file_list_free(&files);
        if (rc != 0) {
            fbc_catalog_free(c);
            return NULL;
        }
        return fbc_load_finish(c, err);
    }
    job j = {.dir = dir, .files = &files, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    atomic_init(&j.next, 0);
    atomic_init(&j.first_fail, files.n);
    sized *by_size = calloc(files.n, sizeof *by_size);
    j.order = calloc(files.n, sizeof *j.order);
    j.parts = calloc(files.n, sizeof *j.parts);
    j.errs = calloc(files.n, sizeof *j.errs);
    j.done = calloc(files.n, sizeof *j.done);
    j.pending = calloc(files.n, sizeof *j.pending);
    j.pre = pre;
    fbc_catalog *out = NULL, *merged = NULL;
    if (!by_size || !j.order || !j.parts || !j.errs || !j.done || !j.pending) {
        olm_error_set(err, "loading %s: out of memory", dir);
        goto done;
    }
    size_t left = 0; /* files without an early part, to load here */
    for (size_t i = 0; i < files.n; i++) {
        if ((j.parts[i] = fbc_prefetch_take(pre, files.paths[i], &j.pending[i]))) {
            j.done[i] = true; /* decoded from these very bytes already */
            continue;
        }
        if (j.pending[i])
            continue; /* run() waits for it */
        by_size[left].index = i;
        by_size[left].size = files.sizes[i]; /* the walk's lstat: a symlink sorts by its own size */
        left++;
    }
    qsort(by_size, left, sizeof *by_size, bigger_first);
    for (size_t i = 0; i < left; i++)
        j.order[i] = by_size[i].index;
    j.norder = left;

    int rc = run(&j, threads, &merged);
    if (rc != 0) {
        if (rc > 0)
            *err = j.errs[atomic_load(&j.first_fail)];
        else
            olm_error_set(err, "loading %s: out of memory", dir);
        fbc_catalog_free(merged);
        goto done;
    }
    out = fbc_load_finish(merged, err);
done:
    for (size_t i = 0; j.parts && i < files.n; i++)
        fbc_catalog_free(j.parts[i]);
    free(j.parts);
    free(j.errs);
    free(j.done);
    free(j.pending);
    free(j.order);
    free(by_size);
    fbc_file_list_free(&files);
    return out;
}

fbc_catalog *fbc_load_dir_parallel(const char *dir, unsigned threads, olm_error *err)
{
    return load_dir(dir, threads, NULL, err);
}

fbc_catalog *fbc_load_dir_prefetched(const char *dir, unsigned threads, fbc_prefetch *p, olm_error *err)
{
    fbc_prefetch_stop(p);
    return load_dir(dir, threads, p, err);
}

fbc_catalog *fbc_load_dir(const char *dir, olm_error *err)
{
    return load_dir(dir, 1, NULL, err); /* one thread: file after file */
}

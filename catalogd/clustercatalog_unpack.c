/* The unpack step of the ClusterCatalog reconciler: pull → load → validate → store → publish.
 * Threadpool only (everything here blocks on the network or the disk). */
#include "clustercatalog_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalogd_log.h"
#include "olm_time.h"
#include "fbc.h"
#include "strbuf.h"

/* Threads decoding a catalog's files side by side (the reconcile's own included): the
 * decode is most of a load, and catalogd is sized for two cores.  One on a one-CPU
 * machine, where a second thread only adds its memory. */
#define CC_LOAD_THREADS 2

static unsigned load_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < CC_LOAD_THREADS ? (unsigned)n : CC_LOAD_THREADS;
}

/* A condition message names at most this many validation problems; the rest are counted. */
#define CC_MAX_PROBLEMS_SHOWN 10

static double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool clustercatalog_content_exists(const clustercatalog_reconciler *r, const char *name)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/catalogs/%s/catalog.jsonl", r->cfg.cache_dir, name);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    snprintf(p, sizeof p, "%s/catalogs/%s/index.json", r->cfg.cache_dir, name);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static void publish_unpack(clustercatalog_reconciler *r, const char *name, bool ok, double seconds, int model_problems)
{
    clustercatalog_publish_event ev = {.kind = CC_PUBLISH_UNPACK, .name = name, .ok = ok, .seconds = seconds,
                                       .model_problems = model_problems};
    if (r->cfg.publish)
        r->cfg.publish(&ev, r->cfg.publish_data);
}

static void publish(clustercatalog_reconciler *r, clustercatalog_publish_kind kind, const char *name, store_view *view, bool ok,
                    double seconds)
{
    clustercatalog_publish_event ev = {.kind = kind, .name = name, .view = view, .ok = ok, .seconds = seconds,
                                       .model_problems = -1};
    if (r->cfg.publish)
        r->cfg.publish(&ev, r->cfg.publish_data);
    else
        store_view_release(view);
}

int clustercatalog_remove_content(clustercatalog_reconciler *r, const char *name, olm_error *err)
{
    /* Stop serving first: the view keeps the unlinked file alive for requests in flight. */
    publish(r, CC_PUBLISH_REMOVE, name, NULL, false, 0);
    uv_rwlock_rdlock(&r->store_lock);
    int rc = store_delete(r->cfg.cache_dir, name, err);
    char unpack[4096];
    snprintf(unpack, sizeof unpack, "%s/unpack", r->cfg.cache_dir);
    int fd = open(unpack, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        olm_error e2;
        if (oci_remove_tree_at(fd, name, &e2) != 0 && rc == 0) {
            *err = e2;
            rc = -1;
        }
        close(fd);
    } else if (errno != ENOENT && rc == 0) {
        rc = olm_error_set(err, "opening %s: %s", unpack, strerror(errno));
    }
    uv_rwlock_rdunlock(&r->store_lock);
    return rc;
}

/* "<n> model problem(s) (served anyway): <p1>; <p2>; ... ; and N more" into msg. */
static void problems_message(const fbc_problems *p, char *msg, size_t msgsz)
{
    strbuf sb = STRBUF_INIT;
    strbuf_printf(&sb, "%zu model problem%s (served anyway, as upstream's catalogd does; "
                       "`olmv1 catalog validate` checks them): ",
                  p->n, p->n == 1 ? "" : "s");
    for (size_t i = 0; i < p->n && i < CC_MAX_PROBLEMS_SHOWN; i++)
        strbuf_printf(&sb, "%s%s", i ? "; " : "", p->items[i]);
    if (p->n > CC_MAX_PROBLEMS_SHOWN)
        strbuf_printf(&sb, "; and %zu more", p->n - CC_MAX_PROBLEMS_SHOWN);
    snprintf(msg, msgsz, "%s", strbuf_str(&sb)[0] ? strbuf_str(&sb) : "model problems (out of memory)");
    strbuf_free(&sb);
}

/* Load and validate the FBC at `root`, using what `pre` decoded during the pull (NULL:
 * nothing), and serve it from memory: *draft is the store to commit once Serving is written
 * (clustercatalog_settle_store), and the store lock is held (shared) until then, so that GC
 * cannot take its temp dir.  -1 with msg set (no draft, no lock); 1 when the gate stopped
 * it (msg set): no unpack failed, the catalog was not to be stored yet.  *model_problems:
 * how many of opm's invariants the catalog breaks (-1: not known), logged, never fatal. */
static int store_fbc(clustercatalog_reconciler *r, const char *name, const char *root, fbc_prefetch *pre,
                     const char *source, const clustercatalog_store_gate *gate, store_draft **draft,
                     int *model_problems, char *msg, size_t msgsz)
{
    olm_error err;
    double t0 = olm_time_mono_ms();
    fbc_catalog *cat = fbc_load_dir_prefetched(root, load_threads(), pre, &err);
    catalogd_log(CATALOGD_LOG_DEBUG, name, "load took %.1f ms%s", olm_time_mono_ms() - t0, cat ? "" : ": failed");
    if (!cat) {
        snprintf(msg, msgsz, "error storing fbc: %s", err.msg);
        return -1;
    }
    fbc_problems probs = {0};
    t0 = olm_time_mono_ms();
    int np = fbc_validate(cat, &probs);
    catalogd_log(CATALOGD_LOG_DEBUG, name, "validate took %.1f ms: %d problems", olm_time_mono_ms() - t0, np);
    /* opm's authoring invariants (a defaultChannel, one head per channel, no dangling
     * replaces, ...) are not upstream catalogd's business: it stores whatever decodes, and
     * the resolver copes.  So they are reported, for the catalog's author, and never stop
     * Serving (spec: "catalogd serves what upstream's catalogd serves"). */
    if (np > 0) {
        char detail[OLM_ERROR_MAX];
        problems_message(&probs, detail, sizeof detail);
        catalogd_log(CATALOGD_LOG_WARN, name, "%s", detail);
    } else if (np < 0) {
        catalogd_log(CATALOGD_LOG_WARN, name, "out of memory checking the catalog's model; serving it unchecked");
    }
    *model_problems = np;
    int rc = -1;
    if (gate && gate->fn && gate->fn(gate->ctx, msg, msgsz) != 0) {
        rc = 1; /* msg says why */
    } else {
        t0 = olm_time_mono_ms();
        uv_rwlock_rdlock(&r->store_lock);
        *draft = store_draft_new(r->cfg.cache_dir, name, cat, true, source, &err);
        catalogd_log(CATALOGD_LOG_DEBUG, name, "store took %.1f ms%s", olm_time_mono_ms() - t0,
                     *draft ? " (served from memory; written after the status)" : ": failed");
        if (!*draft) {
            uv_rwlock_rdunlock(&r->store_lock);
            snprintf(msg, msgsz, "error storing fbc: %s", err.msg);
        } else {
            cat = NULL; /* the draft's view has it */
            rc = 0;
            publish(r, CC_PUBLISH_SERVE, name, store_draft_view(*draft), true, 0); /* the metrics event follows from the caller */
        }
    }
    fbc_problems_free(&probs);
    fbc_catalog_free(cat);
    return rc;
}

/* Whether the store of `name` opens (store_open checks its files and index). */
static bool store_opens(clustercatalog_reconciler *r, const char *name)
{
    olm_error err;
    uv_rwlock_rdlock(&r->store_lock);
    store_view *v = store_open(r->cfg.cache_dir, name, &err);
    uv_rwlock_rdunlock(&r->store_lock);
    store_view_release(v);
    return v != NULL;
}

/* The pull's unpack hands each finished catalog file to the early decoder. */
static void offer_file(void *ctx, const char *path, const char *rel)
{
    fbc_prefetch_offer(ctx, path, rel);
}

int clustercatalog_unpack(clustercatalog_reconciler *r, const char *name, const char *ref, const char *stored_ref,
                          const clustercatalog_store_gate *gate, char **digest_ref, time_t *last_unpacked,
                          store_draft **draft, char *msg, size_t msgsz, bool *terminal)
{
    *digest_ref = NULL;
    *draft = NULL;
    *terminal = false;
    char base[4096];
    snprintf(base, sizeof base, "%s/unpack", r->cfg.cache_dir);
    double t0 = mono_seconds();
    oci_pull_result res;
    olm_error err;
    /* Files are decoded on the second core while the pull unpacks the rest (fbc.h,
     * fbc_prefetch): the load then has that much less to do.  Not on one core, where the
     * decoding would only take turns with the unpack. */
    fbc_prefetch *pre = load_threads() > 1 ? fbc_prefetch_new() : NULL;
    oci_pull_opts opts = r->cfg.pull;
    if (pre) {
        opts.on_file = offer_file;
        opts.on_file_ctx = pre;
    }
    int prc = oci_pull_catalog(base, name, ref, &opts, &res, &err);
    fbc_prefetch_stop(pre);
    catalogd_log(CATALOGD_LOG_DEBUG, name, "pull took %.1f ms: %s%s", (mono_seconds() - t0) * 1e3, ref,
                 prc != 0 ? " failed" : res.cache_hit ? " (image cache hit)" : "");
    if (prc != 0) {
        snprintf(msg, msgsz, "source catalog content: %s", err.msg);
        /* §4.2: a missing configs label is terminal only for a digest ref (a tag may be
         * re-pointed at a fixed image). */
        *terminal = strstr(err.msg, "missing the required label") != NULL && strchr(ref, '@') != NULL;
        publish(r, CC_PUBLISH_UNPACK, name, NULL, false, mono_seconds() - t0);
        fbc_prefetch_free(pre);
        return -1;
    }
    struct stat st;
    if (stat(res.dir, &st) != 0) {
        snprintf(msg, msgsz, "source catalog content: %s: %s", res.dir, strerror(errno));
        oci_pull_result_free(&res);
        fbc_prefetch_free(pre);
        return -1;
    }
    /* Unpack only when the digest moved or the store is gone: re-storing identical content on
     * every poll (upstream) costs a full load and rewrite for nothing.  Without a record (a
     * restart, or a failure dropped it) the store's own source ref tells what it holds. */
    char *persisted = stored_ref ? NULL : store_read_source(r->cfg.cache_dir, name);
    if (persisted && !store_is_durable(r->cfg.cache_dir, name)) {
        /* Written by a process that stopped before store_sync: start-up did not serve it. */
        catalogd_log(CATALOGD_LOG_INFO, name, "the stored catalog was not yet durable when the last run stopped: "
                                              "storing it again");
        free(persisted);
        persisted = NULL;
    } else if (persisted && !store_opens(r, name)) {
        /* Damaged (say, its index): start-up could not serve it, and skipping the store
         * now would leave Serving True over a catalog that answers 404. */
        catalogd_log(CATALOGD_LOG_WARN, name, "the stored catalog does not open: storing it again");
        free(persisted);
        persisted = NULL;
    }
    if (persisted)
        stored_ref = persisted;
    if (!stored_ref || strcmp(stored_ref, res.digest_ref) != 0 || !clustercatalog_content_exists(r, name)) {
        catalogd_log(CATALOGD_LOG_INFO, name, "unpacking %s (%s)", res.digest_ref,
                     res.cache_hit ? "image cache hit" : "downloaded");
        int model_problems = -1;
        int src = store_fbc(r, name, res.fbc_root, pre, res.digest_ref, gate, draft, &model_problems, msg, msgsz);
        fbc_prefetch_free(pre);
        pre = NULL;
        if (src != 0) {
            /* A big catalog's DOM is hundreds of MiB of small blocks: hand the freed heap
             * back (after a success, the memory view does when it goes). */
            malloc_trim(0);
            if (src < 0) /* not when the gate stopped it: the unpack itself went well */
                publish(r, CC_PUBLISH_UNPACK, name, NULL, false, mono_seconds() - t0);
            oci_pull_result_free(&res);
            free(persisted);
            return -1;
        }
        publish_unpack(r, name, true, mono_seconds() - t0, model_problems);
    }
    free(persisted);
    fbc_prefetch_free(pre); /* nothing to load: the store holds this digest */
    *last_unpacked = st.st_mtime;
    *digest_ref = res.digest_ref;
    res.digest_ref = NULL;
    oci_pull_result_free(&res);
    return 0;
}

/* fsyncs a new store (store_sync).  A failure leaves it served, and marked not durable: a
 * restart stores it again rather than trust it. */
static void make_durable(clustercatalog_reconciler *r, const char *name)
{
    olm_error err;
    double t0 = olm_time_mono_ms();
    uv_rwlock_rdlock(&r->store_lock);
    int rc = store_sync(r->cfg.cache_dir, name, &err);
    uv_rwlock_rdunlock(&r->store_lock);
    if (rc < 0)
        catalogd_log(CATALOGD_LOG_WARN, name, "the store is served but not durable (a restart pulls it again): %s",
                     err.msg);
    else
        catalogd_log(CATALOGD_LOG_DEBUG, name, "sync took %.1f ms", olm_time_mono_ms() - t0);
}

/* Adds the gzip form of the store, published when written. */
static void ensure_gzip(clustercatalog_reconciler *r, const char *name)
{
    olm_error err;
    double t0 = olm_time_mono_ms();
    uv_rwlock_rdlock(&r->store_lock);
    int rc = store_add_gzip(r->cfg.cache_dir, name, &err);
    store_view *v = rc == 1 ? store_open(r->cfg.cache_dir, name, &err) : NULL;
    if (v) /* under the lock, so that no GC can have removed the store this view shows */
        publish(r, CC_PUBLISH_GZIP, name, v, true, 0);
    uv_rwlock_rdunlock(&r->store_lock);
    if (rc < 0 || (rc == 1 && !v)) {
        /* Served plain meanwhile; the next successful reconcile tries again. */
        catalogd_log(CATALOGD_LOG_WARN, name, "storing the gzip form: %s", err.msg);
        return;
    }
    if (v)
        catalogd_log(CATALOGD_LOG_DEBUG, name, "gzip took %.1f ms", olm_time_mono_ms() - t0);
}

/* Writes the draft's store and serves it from there.  Called with the shared store lock
 * that store_fbc took, which it releases. */
static int commit_draft(clustercatalog_reconciler *r, const char *name, store_draft *draft)
{
    olm_error err;
    double t0 = olm_time_mono_ms();
    int rc = store_draft_commit(draft, &err);
    store_view *v = rc == 0 ? store_open(r->cfg.cache_dir, name, &err) : NULL;
    store_draft_free(draft);
    if (v) /* under the lock, so that no GC can have removed the store this view shows */
        publish(r, CC_PUBLISH_STORED, name, store_view_retain(v), true, 0);
    uv_rwlock_rdunlock(&r->store_lock);
    if (!v) {
        /* Served from memory, and the status says so; the retry pulls (an image cache hit)
         * and stores it again. */
        clustercatalog_record_drop(r, name);
        catalogd_log(CATALOGD_LOG_ERROR, name, "writing the store: %s; served from memory until a retry stores it",
                     err.msg);
        return -1;
    }
    catalogd_log(CATALOGD_LOG_DEBUG, name, "write took %.1f ms", olm_time_mono_ms() - t0);
    store_view_release(v);
    return 0;
}

void clustercatalog_drop_draft(clustercatalog_reconciler *r, store_draft *draft)
{
    if (!draft)
        return;
    store_draft_free(draft);
    uv_rwlock_rdunlock(&r->store_lock);
}

int clustercatalog_settle_store(clustercatalog_reconciler *r, const char *name, store_draft *draft)
{
    if (draft && commit_draft(r, name, draft) < 0)
        return -1;
    make_durable(r, name);
    ensure_gzip(r, name);
    /* zlib's state, and a load's leftovers: hand the heap back so the RSS of a
     * long-running catalogd reflects what it serves, not its peak. */
    malloc_trim(0);
    return 0;
}

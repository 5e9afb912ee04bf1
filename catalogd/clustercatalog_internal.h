/* Internal to the ClusterCatalog reconciler: the reconciler struct, the in-memory records
 * (clustercatalog_records.c) and the unpack step (clustercatalog_unpack.c). */
#ifndef OLM_CLUSTERCATALOG_INTERNAL_H
#define OLM_CLUSTERCATALOG_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "clustercatalog_reconcile.h"

/* The upstream "stored catalog" record: what was last unpacked and served for a name. */
typedef struct clustercatalog_record {
    char *ref;              /* canonical digest ref (owned) */
    time_t last_unpacked;   /* mtime of the unpack dir, seconds */
    uint64_t last_poll_ms;  /* wall clock of the last successful poll */
    int64_t generation;     /* metadata.generation that produced it */
} clustercatalog_record;

typedef struct clustercatalog_record_entry {
    char *name;
    clustercatalog_record rec;
} clustercatalog_record_entry;

struct clustercatalog_reconciler {
    clustercatalog_reconciler_config cfg;
    uv_mutex_t records_lock; /* guards records/nrecords/cap */
    clustercatalog_record_entry *records;
    size_t nrecords, cap;
    uv_rwlock_t store_lock;  /* store writes/deletes: shared; gc: exclusive */
    atomic_bool leading;     /* reconciles write status (else they follow: clustercatalog_follow.c) */
};

/* A follower's reconcile (clustercatalog_follow.c): serve the digest the leader resolved. */
kube_wq_result clustercatalog_follow(const char *key, clustercatalog_reconciler *r);

/* Wall clock in ms (records' last poll; clustercatalog_records.c). */
uint64_t clustercatalog_wall_ms(void);

/* Records (any thread; each takes records_lock). */
/* Copies the record of `name` into *out (out->ref malloc'd, caller frees); false if none. */
bool clustercatalog_record_get(clustercatalog_reconciler *r, const char *name, clustercatalog_record *out);
/* Replaces the record of `name` (rec->ref copied).  -1 when out of memory. */
int clustercatalog_record_set(clustercatalog_reconciler *r, const char *name, const clustercatalog_record *rec);
void clustercatalog_record_drop(clustercatalog_reconciler *r, const char *name);
void clustercatalog_records_free(clustercatalog_reconciler *r);

/* The unpack step (§4.1 steps 5-6), threadpool.  Pulls `ref` into the image cache, and
 * when the digest differs from `stored_ref` (may be NULL) or the store is missing, loads and
 * validates the catalog, prepares its store and serves it from memory.  On success
 * *digest_ref (malloc'd) and *last_unpacked are set, and *draft is the store to write
 * (NULL when nothing new was loaded), which the caller hands to clustercatalog_settle_store
 * after the status write, on every path: the shared store lock is held until then.  `gate`
 * (may be NULL) is passed before the store is touched.  On failure returns -1 with `msg` holding the
 * condition message ("source catalog content: ..." or "error storing fbc: ...") and
 * *terminal set when retrying cannot help. */
typedef struct clustercatalog_store_gate {
    /* Called before anything is stored (NULL: nothing to wait for); nonzero stops the
     * store, with the reason in msg. */
    int (*fn)(void *ctx, char *msg, size_t msgsz);
    void *ctx;
} clustercatalog_store_gate;

int clustercatalog_unpack(clustercatalog_reconciler *r, const char *name, const char *ref, const char *stored_ref,
                          const clustercatalog_store_gate *gate, char **digest_ref, time_t *last_unpacked,
                          store_draft **draft, char *msg, size_t msgsz, bool *terminal);

/* What a new catalog needs once Serving is written, so that Serving waits for none of it
 * (threadpool): `draft` (from clustercatalog_unpack; NULL when nothing new was loaded) is
 * written and served from the store instead of memory, and the shared store lock that came
 * with it released; then the store is fsynced (store_sync), its gzip form added and served,
 * and the heap trimmed.  -1 when the draft could not be written: it stays served from memory,
 * its record is dropped, and the caller retries (a pull, an image cache hit, stores it
 * again).  Other failures are logged: a store not yet durable stays served (a restart stores
 * it again), and without its gzip form it is served plain until a later reconcile. */
int clustercatalog_settle_store(clustercatalog_reconciler *r, const char *name, store_draft *draft);

/* Drops a draft that is not to be written (NULL: nothing), releasing the store lock. */
void clustercatalog_drop_draft(clustercatalog_reconciler *r, store_draft *draft);

/* True when the store of `name` has its catalog.jsonl and index.json. */
bool clustercatalog_content_exists(const clustercatalog_reconciler *r, const char *name);

/* Deletes the store and the image cache of `name` and publishes its removal. */
int clustercatalog_remove_content(clustercatalog_reconciler *r, const char *name, olm_error *err);

#endif

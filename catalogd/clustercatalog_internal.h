/* Internal to the ClusterCatalog reconciler: the reconciler struct, the in-memory records
 * (clustercatalog_records.c) and the unpack step (clustercatalog_unpack.c). */
#ifndef OLM_CLUSTERCATALOG_INTERNAL_H
#define OLM_CLUSTERCATALOG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "clustercatalog_reconcile.h"

/* The upstream "stored catalog" record: what was last unpacked and served for a name. */
typedef struct cc_record {
    char *ref;              /* canonical digest ref (owned) */
    time_t last_unpacked;   /* mtime of the unpack dir, seconds */
    uint64_t last_poll_ms;  /* wall clock of the last successful poll */
    int64_t generation;     /* metadata.generation that produced it */
} cc_record;

typedef struct cc_record_entry {
    char *name;
    cc_record rec;
} cc_record_entry;

struct cc_reconciler {
    cc_reconciler_config cfg;
    uv_mutex_t records_lock; /* guards records/nrecords/cap */
    cc_record_entry *records;
    size_t nrecords, cap;
    uv_rwlock_t store_lock;  /* store writes/deletes: shared; gc: exclusive */
};

/* Records (any thread; each takes records_lock). */
/* Copies the record of `name` into *out (out->ref malloc'd, caller frees); false if none. */
bool cc_record_get(cc_reconciler *r, const char *name, cc_record *out);
/* Replaces the record of `name` (rec->ref copied).  -1 when out of memory. */
int cc_record_set(cc_reconciler *r, const char *name, const cc_record *rec);
void cc_record_drop(cc_reconciler *r, const char *name);
void cc_records_free(cc_reconciler *r);

/* The unpack step (§4.1 steps 5-6), threadpool.  Pulls `ref` into the image cache, and
 * when the digest differs from `stored_ref` (may be NULL) or the store is missing, loads,
 * validates and writes the store and publishes the new view.  On success *digest_ref
 * (malloc'd) and *last_unpacked are set.  On failure returns -1 with `msg` holding the
 * condition message ("source catalog content: ..." or "error storing fbc: ...") and
 * *terminal set when retrying cannot help. */
int cc_unpack(cc_reconciler *r, const char *name, const char *ref, const char *stored_ref, char **digest_ref,
              time_t *last_unpacked, char *msg, size_t msgsz, bool *terminal);

/* True when the store of `name` has its catalog.jsonl and index.json. */
bool cc_content_exists(const cc_reconciler *r, const char *name);

/* Deletes the store and the image cache of `name` and publishes its removal. */
int cc_remove_content(cc_reconciler *r, const char *name, olm_error *err);

#endif

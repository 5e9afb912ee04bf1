/* The reconciler's in-memory records, one per catalog name, behind records_lock.  A linear
 * array: a cluster has a handful of catalogs, and every operation is a short scan. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clustercatalog_internal.h"
#include "olm_array.h"

static clustercatalog_record_entry *find(clustercatalog_reconciler *r, const char *name)
{
    for (size_t i = 0; i < r->nrecords; i++)
        if (strcmp(r->records[i].name, name) == 0)
            return &r->records[i];
    return NULL;
}

bool clustercatalog_record_get(clustercatalog_reconciler *r, const char *name, clustercatalog_record *out)
{
    memset(out, 0, sizeof *out);
    uv_mutex_lock(&r->records_lock);
    clustercatalog_record_entry *e = find(r, name);
    bool found = false;
    if (e) {
        *out = e->rec;
        out->ref = strdup(e->rec.ref);
        found = out->ref != NULL; /* out of memory reads as "no record": forces an unpack */
    }
    uv_mutex_unlock(&r->records_lock);
    return found;
}

int clustercatalog_record_set(clustercatalog_reconciler *r, const char *name, const clustercatalog_record *rec)
{
    char *ref = strdup(rec->ref);
    if (!ref)
        return -1;
    int rc = 0;
    uv_mutex_lock(&r->records_lock);
    clustercatalog_record_entry *e = find(r, name);
    if (!e) {
        if (OLM_ARRAY_RESERVE(r->records, r->cap, r->nrecords + 1) < 0) {
            rc = -1;
            goto out;
        }
        char *nm = strdup(name);
        if (!nm) {
            rc = -1;
            goto out;
        }
        e = &r->records[r->nrecords++];
        e->name = nm;
        e->rec.ref = NULL;
    }
    free(e->rec.ref);
    e->rec = *rec;
    e->rec.ref = ref;
    ref = NULL;
out:
    uv_mutex_unlock(&r->records_lock);
    free(ref);
    return rc;
}

void clustercatalog_record_drop(clustercatalog_reconciler *r, const char *name)
{
    uv_mutex_lock(&r->records_lock);
    clustercatalog_record_entry *e = find(r, name);
    if (e) {
        free(e->name);
        free(e->rec.ref);
        *e = r->records[--r->nrecords];
    }
    uv_mutex_unlock(&r->records_lock);
}

void clustercatalog_records_free(clustercatalog_reconciler *r)
{
    for (size_t i = 0; i < r->nrecords; i++) {
        free(r->records[i].name);
        free(r->records[i].rec.ref);
    }
    free(r->records);
    r->records = NULL;
    r->nrecords = r->cap = 0;
}

uint64_t clustercatalog_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

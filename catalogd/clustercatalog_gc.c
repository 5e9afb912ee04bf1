/* §4.5 garbage collection: stores and image caches whose ClusterCatalog is gone.
 * Threadpool (blocking directory walks); exclusive against every store write. */
#include "clustercatalog_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogd_log.h"

static bool kept(const char *const *keep, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(keep[i], name) == 0)
            return true;
    return false;
}

int clustercatalog_reconciler_gc(clustercatalog_reconciler *r, olm_error *err)
{
    /* The list is taken under the exclusive lock, not before it: waiting for the lock can
     * take as long as the store writes in flight, and a catalog created meanwhile is
     * stored under the shared lock; a list from before would collect its fresh store.
     * A reconcile reads the informer before it stores, so every store on disk now belongs
     * to a catalog this list holds, or to one since deleted. */
    uv_rwlock_wrlock(&r->store_lock);
    json_t *items = kube_informer_list(r->cfg.informer);
    if (!items) {
        uv_rwlock_wrunlock(&r->store_lock);
        return olm_error_set(err, "out of memory listing catalogs");
    }
    size_t n = json_array_size(items);
    const char **keep = calloc(n ? n : 1, sizeof *keep);
    if (!keep) {
        uv_rwlock_wrunlock(&r->store_lock);
        json_decref(items);
        return olm_error_set(err, "out of memory");
    }
    size_t nkeep = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm =
            json_string_value(json_object_get(json_object_get(json_array_get(items, i), "metadata"), "name"));
        if (nm)
            keep[nkeep++] = nm; /* borrowed from `items` */
    }
    /* Catalogs about to be collected are withdrawn from the server first. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/catalogs", r->cfg.cache_dir);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || kept(keep, nkeep, e->d_name))
                continue;
            catalogd_log(CATALOGD_LOG_INFO, e->d_name, "garbage-collecting the store of a deleted catalog");
            clustercatalog_publish_event ev = {.kind = CC_PUBLISH_REMOVE, .name = e->d_name};
            if (r->cfg.publish)
                r->cfg.publish(&ev, r->cfg.publish_data);
            clustercatalog_record_drop(r, e->d_name);
        }
        closedir(d);
    }
    int rc = store_gc(r->cfg.cache_dir, keep, nkeep, err);
    uv_rwlock_wrunlock(&r->store_lock);
    free(keep);
    json_decref(items);
    return rc;
}

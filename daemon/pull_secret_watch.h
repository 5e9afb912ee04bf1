/* pull_secret_watch: both daemons' watch on --global-pull-secret NS/NAME.
 *
 * A list/watch with a field selector on the Secret's name (so the Role needs get/list/watch
 * on that one Secret only) feeds its credentials into an oci_auth_store every pull reads:
 * created or rotated, they apply to the next pull; deleted, pulls are anonymous; malformed,
 * the previous ones stay.  A relist of the unchanged Secret (same resourceVersion) changes
 * nothing.  Each event is one log line under `log_key` (olm_log). */
#ifndef OLM_PULL_SECRET_WATCH_H
#define OLM_PULL_SECRET_WATCH_H

#include "kube_informer.h"
#include "oci_auth_store.h"
#include "olm_error.h"

typedef struct pull_secret_watch pull_secret_watch;

typedef struct pull_secret_watch_options {
    const char *ref;              /* "NAMESPACE/NAME" */
    oci_auth_store *store;        /* borrowed: must outlive the watch */
    const char *log_key;          /* olm_log key of the daemon's lines ("catalog", ...) */
    void (*on_loaded)(void *data); /* new credentials are in the store (re-queue work) */
    void *data;
} pull_secret_watch_options;

/* Starts the watch on the loop of `uc`; NULL with *err on a bad ref or a failed start. */
pull_secret_watch *pull_secret_watch_start(kube_uvcurl *uc, const kube_config *cfg, const pull_secret_watch_options *o,
                                           olm_error *err);

/* Stops the watch; `closed(data)` runs once it is freed. */
void pull_secret_watch_stop(pull_secret_watch *w, void (*closed)(void *data), void *data);

#endif

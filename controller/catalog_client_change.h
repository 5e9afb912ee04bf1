/* catalog_client_change: does a ClusterCatalog update change what a resolution sees? */
#ifndef OLMV1_CATALOG_CLIENT_CHANGE_H
#define OLMV1_CATALOG_CLIENT_CHANGE_H

#include <stdbool.h>

#include <jansson.h>

/* True when `old_obj` and `new_obj` (two versions of one ClusterCatalog) differ in anything
 * catalog_client_collect or the resolver reads: the labels (selectors), spec.priority (ties),
 * spec.availabilityMode, the Serving condition's status, status.urls.base (where content is
 * fetched) or status.resolvedSource.image.ref (the content itself).  Bookkeeping writes such
 * as lastUnpacked or a condition's message return false, so catalogd's status updates do not
 * requeue every ClusterExtension.  Upstream requeues only on a resolvedSource change; with
 * that alone, raising a catalog's priority to break a tie or relabelling it for a selector
 * waits for the next unrelated event. */
bool catalog_resolution_inputs_changed(const json_t *old_obj, const json_t *new_obj);

#endif

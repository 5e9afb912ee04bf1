/* objectset_watch: watches of the objects ClusterObjectSets applied (objectset_watch.c, with
 * objectset_watch_reports.c and objectset_watch_offers.c). */
#ifndef OLM_OBJECTSET_WATCH_H
#define OLM_OBJECTSET_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <uv.h>

#include "kube_config.h"
#include "kube_uvcurl.h"
#include "kube_watch.h"
#include "olm_error.h"

typedef struct objectset_watches objectset_watches;

/* Loop thread.  enqueue(name, data) runs on the loop for each change of an object a
 * ClusterObjectSet controls.  uc and cfg borrowed for the watches' life. */
objectset_watches *objectset_watches_new(uv_loop_t *loop, kube_uvcurl *uc, const kube_config *cfg,
                                         void (*enqueue)(const char *name, void *data), void *data, olm_error *err);
/* Any thread: make sure the cluster-wide collection `path` is watched.  True when it was
 * asked for before and the apiserver has not refused its watch (changes of its objects will
 * queue their sets); false for a new path (its watch is starting) or a refused one.  ws may
 * be NULL (false). */
bool objectset_watches_want(objectset_watches *ws, const char *path);
/* The same, offering the credential (kube_config_with_credential's: a token or an
 * impersonation) of ServiceAccount `as` ("ns/name"), with which the pass of ClusterObjectSet
 * `set` acts: when operator-controller's own watch of `path` was refused, the type is watched
 * with it (unless `as` was refused too), and true is returned once that watch has listed; when
 * the apiserver later rejects the credential (401: an expired token), `set` is queued so that
 * its pass offers a fresh one.  as and credential NULL: as objectset_watches_want.  Copied. */
bool objectset_watches_want_as(objectset_watches *ws, const char *path, const char *set, const char *as,
                               const char *credential);
/* Any thread: whether the cluster-wide collection `path` is refused to ServiceAccount `as`
 * ("ns/name") as it is to operator-controller (both answered 403, `as` lately), and no other
 * ServiceAccount's watch of it has listed.  Then a revision acting as `as` asks for the
 * namespaced collections its objects are in instead (objectset_watches_want_in): a
 * ServiceAccount bound by RoleBindings may watch its own namespaces. */
bool objectset_watches_refused_for(objectset_watches *ws, const char *path, const char *as);
/* Any thread: whether `path` was asked for and is watched (its watch, operator-controller's own
 * or a ServiceAccount's, has not been refused or has listed).  Asks for nothing. */
bool objectset_watches_listed(objectset_watches *ws, const char *path);
/* Any thread: objectset_watches_want_as for `ns_path`, a namespace's collection of a type
 * refused cluster-wide, watched only with ServiceAccount `as`'s credential (operator-controller
 * itself is not tried there: it may not watch the type at all).  False without a credential. */
bool objectset_watches_want_in(objectset_watches *ws, const char *ns_path, const char *set, const char *as,
                               const char *credential);
/* Any thread: what a revision's pass asks for one of its objects: objectset_watches_want_as of
 * the type's cluster-wide `path`; when that is refused to ServiceAccount `as` too, the object's
 * namespace's collection `ns_path` (NULL: a cluster-scoped object) with objectset_watches_want_in,
 * or, while `as` is asked again cluster-wide, whether that one has listed.  True: the object is
 * covered by a watch that has listed (or operator-controller's own). */
bool objectset_watches_want_object(objectset_watches *ws, const char *path, const char *ns_path, const char *set,
                                   const char *as, const char *credential);
/* Any thread: `written` (an object as a write of ours returned it) is ours; the watch event
 * that reports exactly that version (same uid and resourceVersion) queues nothing: the pass
 * that wrote it probed what it returned.  One entry per object (the newest write), consumed by
 * its event.  ws may be NULL. */
void objectset_watches_note_write(objectset_watches *ws, const json_t *written);
/* Loop thread: what one event of a watch does (exposed for the tests): the set named by the
 * object's controller ownerReference is queued, unless the event is the echo of our own
 * write (objectset_watches_note_write). */
void objectset_watches_handle_event(objectset_watches *ws, kube_watch_event_type type, const json_t *obj);
/* Verdicts (any thread): a pass that found an object of a set in order -- controlled by the
 * set, everything it would apply already there, its probe passing -- records that for the
 * version it saw (key: objectset_object.c's, "<set uid>\n..." for the set, its generation and
 * the object).  objectset_watches_unchanged: true while the watch has reported no other
 * version of that object since (and has reported that one: a type not watched, or a watch
 * refused, never answers true), so the next pass need not GET it -- as upstream reads its
 * objects from the tracking cache.  A change of the object is an event that queues the set,
 * whose pass then reads it.  _verdict_drop forgets one; _forget_set (loop thread) every key of a
 * set (uid), and the set (name) as one asking for its types (objectset_watches_want_as): a
 * namespace's watch (objectset_watches_want_in) that no set asks for any more is stopped. */
void objectset_watches_verdict(objectset_watches *ws, const char *key, const json_t *obj);
void objectset_watches_verdict_drop(objectset_watches *ws, const char *key);
bool objectset_watches_unchanged(objectset_watches *ws, const char *key);
void objectset_watches_forget_set(objectset_watches *ws, const char *cos_uid, const char *name);
/* Loop thread: watches running (not refused). */
size_t objectset_watches_active(const objectset_watches *ws);
/* Loop thread: stops every watch; closed(data) once all are closed. */
void objectset_watches_stop(objectset_watches *ws, void (*closed)(void *data), void *data);
/* After the stop has closed: frees. */
void objectset_watches_free(objectset_watches *ws);

#endif

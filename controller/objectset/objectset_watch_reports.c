/* objectset_watch_reports: what the applied objects' watches reported, and what it spares.
 * An event queues the ClusterObjectSet named by the object's controller ownerReference, unless
 * it is the echo of our own write (the pass that wrote it probed what it returned).  The
 * version each watch last reported of each object lets a pass skip the GET of an object it
 * found in order at that version (objectset_watches_unchanged: a verdict), as upstream reads
 * its objects from the tracking cache; a watch that ends takes what it reported with it. */
#include <string.h>

#include "kube_object.h"
#include "objectset_watch_internal.h"

void objectset_watches_note_write(objectset_watches *ws, const json_t *written)
{
    const char *uid = kube_object_string(written, "metadata.uid");
    const char *rv = kube_object_string(written, "metadata.resourceVersion");
    if (!ws || !uid || !rv)
        return;
    pthread_mutex_lock(&ws->mu);
    if (ws->written)
        json_object_set_new(ws->written, uid, json_string(rv));
    pthread_mutex_unlock(&ws->mu);
}

/* Whether obj is the version our own write made (objectset_watches_note_write); consumed. */
static bool own_write(struct objectset_watches *ws, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    const char *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!uid || !rv)
        return false;
    pthread_mutex_lock(&ws->mu);
    const char *mine = json_string_value(json_object_get(ws->written, uid));
    bool echo = mine && strcmp(mine, rv) == 0;
    if (echo)
        json_object_del(ws->written, uid);
    pthread_mutex_unlock(&ws->mu);
    return echo;
}

static void forget_write(struct objectset_watches *ws, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    pthread_mutex_lock(&ws->mu);
    if (uid)
        json_object_del(ws->written, uid);
    pthread_mutex_unlock(&ws->mu);
}

/* What the watches last reported of each object, and which watch (path; "" for the tests'
 * events): objectset_watches_unchanged reads it, a watch that ends takes its entries away. */
static void track(struct objectset_watches *ws, const char *path, kube_watch_event_type type, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    const char *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!uid)
        return;
    pthread_mutex_lock(&ws->mu);
    if (type == KUBE_WATCH_DELETED || !rv)
        json_object_del(ws->latest, uid);
    else
        json_object_set_new(ws->latest, uid, json_pack("[s,s]", rv, path));
    pthread_mutex_unlock(&ws->mu);
}

/* What it reported may be out of date by the time another watch lists (a deletion meanwhile is
 * no event of the next watch). */
void objectset_watch_untrack_path(objectset_watches *ws, const char *path)
{
    const char *uid;
    json_t *v, *tmp;
    json_object_foreach_safe(ws->latest, tmp, uid, v) {
        const char *p = json_string_value(json_array_get(v, 1));
        if (p && strcmp(p, path) == 0)
            json_object_del(ws->latest, uid);
    }
}

void objectset_watch_event(objectset_watches *ws, const char *path, kube_watch_event_type type, const json_t *obj)
{
    track(ws, path, type, obj);
    if (type == KUBE_WATCH_DELETED)
        forget_write(ws, obj);
    else if (own_write(ws, obj))
        return;
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r) {
        const char *kind = json_string_value(json_object_get(r, "kind"));
        const char *name = json_string_value(json_object_get(r, "name"));
        if (json_is_true(json_object_get(r, "controller")) && kind && name && strcmp(kind, "ClusterObjectSet") == 0)
            ws->enqueue(name, ws->data);
    }
}

void objectset_watches_handle_event(objectset_watches *ws, kube_watch_event_type type, const json_t *obj)
{
    objectset_watch_event(ws, "", type, obj);
}

void objectset_watches_verdict(objectset_watches *ws, const char *key, const json_t *obj)
{
    const char *uid = kube_object_string(obj, "metadata.uid");
    const char *rv = kube_object_string(obj, "metadata.resourceVersion");
    if (!ws || !key)
        return;
    pthread_mutex_lock(&ws->mu);
    if (uid && rv)
        json_object_set_new(ws->verdicts, key, json_pack("[s,s]", uid, rv));
    else
        json_object_del(ws->verdicts, key);
    pthread_mutex_unlock(&ws->mu);
}

void objectset_watches_verdict_drop(objectset_watches *ws, const char *key)
{
    if (!ws || !key)
        return;
    pthread_mutex_lock(&ws->mu);
    json_object_del(ws->verdicts, key);
    pthread_mutex_unlock(&ws->mu);
}

bool objectset_watches_unchanged(objectset_watches *ws, const char *key)
{
    if (!ws || !key)
        return false;
    pthread_mutex_lock(&ws->mu);
    const json_t *v = json_object_get(ws->verdicts, key);
    const char *uid = json_string_value(json_array_get(v, 0)), *rv = json_string_value(json_array_get(v, 1));
    const char *seen = uid ? json_string_value(json_array_get(json_object_get(ws->latest, uid), 0)) : NULL;
    bool same = seen && rv && strcmp(seen, rv) == 0;
    pthread_mutex_unlock(&ws->mu);
    return same;
}

void objectset_watch_forget_verdicts(objectset_watches *ws, const char *cos_uid)
{
    size_t n = strlen(cos_uid);
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(ws->verdicts, tmp, k, v) {
        if (strncmp(k, cos_uid, n) == 0 && k[n] == '\n')
            json_object_del(ws->verdicts, k);
    }
}

/* fake_apiserver: an in-memory Kubernetes apiserver for unit tests, a handler of the shared
 * fake_http_server.  Reconcilers and the applier are driven against it with real kube_clients.
 *
 * What it keeps: JSON objects by item path ("/api/v1/namespaces/ns/configmaps/cm",
 * "/apis/olm.operatorframework.io/v1/clusterextensions/x"), each with a resourceVersion
 * from one counter, as the apiserver's.  What it answers, as far as the code under test needs:
 *   GET     an item (or any stored path, e.g. a discovery document); a collection as a List,
 *           namespaced or across namespaces, filtered by labelSelector (k=v, k!=v, k, !k);
 *           .../status: the item
 *   POST    a collection: create (409 AlreadyExists; metadata.namespace, uid filled);
 *           serviceaccounts/<sa>/token: a TokenRequest for an existing ServiceAccount
 *   PUT     an item: full update (404 when absent, 409 Conflict when metadata.resourceVersion is
 *           stale; status kept for kinds with a status subresource); .../status: status only
 *   PATCH   application/merge-patch+json (RFC 7386; a resourceVersion in the patch is a
 *           precondition: 409) on an item or .../status; application/apply-patch+yaml (server-side
 *           apply, JSON body): creates, or the body becomes the object (no field ownership: the
 *           stored status stays).  Other patch types: 415.
 *   DELETE  an item: gone, or, while it has finalizers, metadata.deletionTimestamp set; an update
 *           that empties the finalizers of an object being deleted removes it.
 * A spec change bumps metadata.generation.  A CustomResourceDefinition is Established as soon
 * as it is stored (the applier waits for that).  No watch: reconcilers take their informers
 * from the tests (kube_informer_apply).
 *
 * Failure injection (fake_apiserver_fail) and a request log (fake_apiserver_count, _write_at)
 * let a test break one call and assert which calls were made.
 *
 * Threading: the server thread answers one request at a time under the fake's mutex; the
 * functions below take it too.  A borrowed object (fake_apiserver_object) may be edited by a
 * test only while no request is in flight (between the calls of the code under test). */
#ifndef OLM_TESTSUPPORT_FAKE_APISERVER_H
#define OLM_TESTSUPPORT_FAKE_APISERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct fake_apiserver fake_apiserver;

/* Listens on 127.0.0.1; NULL on failure. */
fake_apiserver *fake_apiserver_start(void);
void fake_apiserver_stop(fake_apiserver *fs);
/* "http://127.0.0.1:<port>" */
const char *fake_apiserver_url(const fake_apiserver *fs);

/* ------------------------------------------------------------ objects */

/* Stores `obj` (stolen) at `path` as a write would: a new resourceVersion, a uid when it has
 * none.  The test's way to seed the cluster. */
void fake_apiserver_put(fake_apiserver *fs, const char *path, json_t *obj);
/* The same from JSON text (a bad text aborts the test). */
void fake_apiserver_put_json(fake_apiserver *fs, const char *path, const char *json);
/* The stored object (borrowed), or NULL. */
json_t *fake_apiserver_object(fake_apiserver *fs, const char *path);
/* Drops the object at `path` (no finalizers asked); false when there was none. */
bool fake_apiserver_remove(fake_apiserver *fs, const char *path);
/* Drops every object whose path starts with `prefix`. */
void fake_apiserver_remove_under(fake_apiserver *fs, const char *prefix);

/* ------------------------------------------------------------ failure injection */

/* The next `times` requests (-1: all) matching `method` (NULL: any), whose "path?query"
 * contains `target` (NULL: any) and sent with bearer token `token` (NULL: any) are answered
 * with a Status of `code` and `message` (NULL: "injected failure") instead.  Rules are tried
 * in the order they were added. */
void fake_apiserver_fail(fake_apiserver *fs, const char *method, const char *target, const char *token, int code,
                         const char *message, int times);
void fake_apiserver_fail_clear(fake_apiserver *fs);

/* ------------------------------------------------------------ request log */

/* Requests since the last fake_apiserver_log_clear matching `method`, `target` (a substring of
 * "path?query") and `token`, each NULL for any. */
size_t fake_apiserver_count(fake_apiserver *fs, const char *method, const char *target, const char *token);
/* Requests other than GET since the last clear, in order: "METHOD path?query". */
size_t fake_apiserver_nwrites(fake_apiserver *fs);
const char *fake_apiserver_write_at(fake_apiserver *fs, size_t i);
/* The body the i-th of those sent (NULL: none); valid until the next clear. */
const char *fake_apiserver_write_body_at(fake_apiserver *fs, size_t i);
void fake_apiserver_log_clear(fake_apiserver *fs);

#endif

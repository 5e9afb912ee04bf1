/* olm_http_gate: an asynchronous check in front of every request of a listener, so that the
 * HTTP servers (catalogd's h2o server, operator-controller's responder) can be guarded by
 * the metrics filter (kube_authz: TokenReview + SubjectAccessReview) without depending on
 * the Kubernetes client.  The server owns no gate; whoever sets it keeps it alive until the
 * server has stopped.
 *
 * Loop thread only: check, cancel and done all run on the server's loop. */
#ifndef OLMV1_OLM_HTTP_GATE_H
#define OLMV1_OLM_HTTP_GATE_H

#include <stddef.h>

/* The decision for one request: status 200 lets it through; any other is the response's
 * status with `msg` its body text; `detail`, when not NULL, is a line for the log (why the
 * check itself failed).  Both borrowed for the call. */
typedef void (*olm_http_gate_done)(int status, const char *msg, const char *detail, void *req_data);

typedef struct olm_http_gate {
    /* `authorization`: the request's Authorization header or NULL; `verb`: its method in
     * lower case; `path`: without the query.  Returns the status when decided at once (msg
     * filled), or 0: done(req_data) runs later, once, unless cancel(*handle) runs first. */
    int (*check)(void *gate, const char *authorization, const char *verb, const char *path, olm_http_gate_done done,
                 void *req_data, void **handle, char *msg, size_t msgsz);
    void (*cancel)(void *handle);
    void *gate;
} olm_http_gate;

#endif

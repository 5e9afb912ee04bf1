/* kube_client: synchronous REST calls to the Kubernetes API server, in layers that
 * call downwards only:
 *
 *   kube_verbs.h      typed GET/LIST/POST/PUT/PATCH/apply/DELETE, TokenRequest
 *   kube_discovery.h  apiVersion + kind -> resource (built-in table, then discovery)
 *   kube_path.h       resource paths and query strings (no I/O)
 *   kube_transport.h  the client object: HTTP requests, TLS, credentials, Status errors
 *
 * Include this header for all of them.  Threading: a client may be used from several
 * threads at once; calls block, so run them on a worker thread, never on an event
 * loop (kube_transport.h has the details). */
#ifndef OLM_KUBE_CLIENT_H
#define OLM_KUBE_CLIENT_H

#include "kube_discovery.h"
#include "kube_path.h"
#include "kube_transport.h"
#include "kube_verbs.h"

#endif

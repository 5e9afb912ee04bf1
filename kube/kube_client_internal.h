/* Private to the REST half of kube/: the client struct.  kube_transport.c owns it
 * (creates, frees, sends requests with it); kube_discovery.c keeps its cache in the
 * disc fields, which live here so that the cache dies with the client.  Nothing in
 * kube_transport.c calls into discovery. */
#ifndef OLM_KUBE_CLIENT_INTERNAL_H
#define OLM_KUBE_CLIENT_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "kube_transport.h"

#define KUBE_CLIENT_POOL 8 /* idle easy handles kept for connection reuse */

/* Where a client's requests go out: DNS cache and TLS sessions shared through a CURLSH
 * with mutexes, and idle easy handles, each keeping its live keep-alive connection for
 * the next call (the connection cache itself is not shared: libcurl does not support one
 * connection used from concurrent threads, so a handle -- and with it its connections --
 * is used by one thread at a time).  Reference-counted: a client created with
 * kube_client_new() has its own; every client from kube_client_new_for_token() on one
 * base uses the base's token pool, so per-ServiceAccount clients made for one reconcile
 * each resume TLS and reuse connections instead of a full handshake per client. */
typedef struct kube_conn_pool {
    atomic_int refs;
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t lock;
    CURL *idle[KUBE_CLIENT_POOL];
    int nidle;
    /* Token pools only: the TLS settings every client on the pool uses (server, its own
     * copy of the CA file, no client certificate, no token).  The same CA path matters:
     * libcurl reuses a connection or a TLS session only for an identical TLS config. */
    kube_config tls;
} kube_conn_pool;

struct kube_client {
    kube_config cfg;           /* owned; immutable after kube_client_new */
    long connect_timeout_ms;
    long timeout_ms;
    char *user_agent;
    kube_conn_pool *conns;     /* one reference */
    /* Made on the first kube_client_new_for_token() with this client as base. */
    pthread_mutex_t token_lock;
    kube_conn_pool *token_conns;
    /* Discovery cache (kube_discovery.c): apiVersion -> resources array of its
     * APIResourceList, or JSON null when the server does not serve that group/version. */
    pthread_mutex_t disc_lock;
    json_t *disc;
    /* Responses with HTTP 401 so far (kube_client_unauthorized_count). */
    atomic_uint unauthorized;
};

#endif

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

struct kube_client {
    kube_config cfg;           /* owned; immutable after kube_client_new */
    long connect_timeout_ms;
    long timeout_ms;
    char *user_agent;
    /* DNS and TLS sessions shared by all easy handles (the connection cache is
     * not shared: libcurl does not support one connection used from concurrent
     * threads).  Idle easy handles are pooled so each keeps its live connection
     * for the next call; a handle is used by one thread at a time. */
    CURLSH *share;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_lock;
    CURL *pool[KUBE_CLIENT_POOL];
    int npool;
    /* Discovery cache (kube_discovery.c): apiVersion -> resources array of its
     * APIResourceList, or JSON null when the server does not serve that group/version. */
    pthread_mutex_t disc_lock;
    json_t *disc;
    /* Responses with HTTP 401 so far (kube_client_unauthorized_count). */
    atomic_uint unauthorized;
};

#endif

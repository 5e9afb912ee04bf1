/* olm_tls_server: a server's TLS context that follows its certificate and key files.
 *
 * cert-manager and service-ca rotate the Secret behind --tls-cert/--tls-key; the kubelet then
 * swaps the mounted files (a new "..data" symlink target).  Each new connection asks
 * olm_tls_server_ctx() for the context to use; at most once per check interval that stats both
 * files (device, inode, size, mtime, ctime: a swapped symlink changes the inode) and, when
 * either changed, loads the pair into a fresh context.  A pair that does not load or match
 * keeps the old context and logs one line (once per change of the files); a later good pair is
 * taken.  Connections already open keep the context they started with (OpenSSL counts
 * references), so nothing in flight is disturbed.
 *
 * Thread affinity: one thread (the server's loop). */
#ifndef OLMV1_OLM_TLS_SERVER_H
#define OLMV1_OLM_TLS_SERVER_H

#include <stdint.h>

#include "olm_error.h"
#include "olm_tls_profile.h"

typedef struct olm_tls_server olm_tls_server;

typedef struct olm_tls_server_opts {
    const char *cert, *key;          /* PEM files (copied) */
    const olm_tls_profile *profile;  /* copied; NULL: intermediate */
    uint64_t check_interval_ms;      /* 0: 1000; tests pass 1 */
    /* Called on every new context before it is used (e.g. h2o's ALPN registration). */
    void (*configure)(void *ssl_ctx, void *arg);
    void *configure_arg;
    const char *log_key;             /* the daemon's log key ("catalog", "clusterExtension"); NULL: "-" */
    const char *log_name;            /* names the server in the log line, e.g. "--metrics-bind-address" */
} olm_tls_server_opts;

/* Loads the pair now.  NULL with err ("TLS: <file>: <why>") when it cannot. */
olm_tls_server *olm_tls_server_new(const olm_tls_server_opts *opts, olm_error *err);
void olm_tls_server_free(olm_tls_server *t);

/* The SSL_CTX * for a new connection (borrowed: valid until the next call; SSL_new takes its
 * own reference), reloaded first when the files changed. */
void *olm_tls_server_ctx(olm_tls_server *t);

/* Contexts loaded after the first (reloads that took effect), for tests and logs. */
unsigned olm_tls_server_reloads(const olm_tls_server *t);

#endif

/* http_client: the one place where a libcurl handle is set up for a request that leaves the
 * process: API server (kube/), registries (oci/), catalogd (domain/catalog/).
 *
 * Every request gets, from here and only here:
 *  - the proxy upstream's Go would use for its URL (olm_proxy.h: HTTPS_PROXY, HTTP_PROXY,
 *    NO_PROXY, never for loopback);
 *  - http and https only, for the request and any redirect; no signals (threads);
 *  - TLS 1.2 at least, and the daemon's --tls-profile (versions, ciphers, curves) when it
 *    has one; the system's CAs plus extra ones (--catalogd-cas-dir, --pull-cas-dir,
 *    certs.d), or a CA bundle instead (a kubeconfig's certificate-authority); a client
 *    certificate; verification off only when asked (insecure-skip-tls-verify, an insecure
 *    registry);
 *  - a connect timeout, a total timeout and a stall limit as the caller sets them.
 *
 * What a client adds on top is its own: headers, credentials, body handling, retries. */
#ifndef OLMV1_HTTP_CLIENT_H
#define OLMV1_HTTP_CLIENT_H

#include <curl/curl.h>
#include <stdbool.h>

#include "olm_error.h"
#include "olm_tls.h"
#include "olm_tls_profile.h"

typedef struct http_client_tls {
    const char *ca_file;             /* PEM bundle used instead of the system store, or NULL */
    const char *ca_dir;              /* OpenSSL hashed directory searched besides, or NULL */
    const olm_ca_set *extra_cas;     /* trusted besides the system store, or NULL */
    const olm_tls_profile *profile;  /* NULL: OpenSSL's defaults (still TLS 1.2 at least) */
    const char *client_cert_file;    /* PEM, or NULL */
    const char *client_key_file;     /* PEM, or NULL */
    bool skip_verify;                /* no peer or host name check (https only) */
} http_client_tls;

typedef struct http_client_opts {
    http_client_tls tls;
    long connect_timeout_ms; /* 0: 30 s */
    long timeout_ms;         /* whole transfer; 0: none */
    long low_speed_limit;    /* bytes/s under which ... */
    long low_speed_time;     /* ... for this many seconds the transfer fails; 0: no stall limit */
} http_client_opts;

/* Sets the shared options above on `h` for a request to `url`.  The TLS callback reads
 * o->tls.extra_cas and o->tls.profile when the handshake happens: `o` must outlive every
 * transfer `h` makes.  0, or -1 with err naming the option libcurl refused. */
int http_client_setup(CURL *h, const char *url, const http_client_opts *o, olm_error *err);

/* Frees a request's header list, each header wiped first: one may carry a credential (a bearer
 * token, an Authorization of a pull secret), and libcurl's curl_slist_free_all leaves it in
 * freed heap.  http_headers_wipe wipes without freeing (NULL: nothing). */
void http_headers_wipe(struct curl_slist *headers);
void http_headers_free(struct curl_slist *headers);

/* The minimum TLS version every client asks for. */
#define HTTP_CLIENT_MIN_TLS CURL_SSLVERSION_TLSv1_2

#endif

/* Private to the oci library: registry accessors the push and fetch code needs, and
 * the verifying response sink of every pull download. */
#ifndef OLM_OCI_INTERNAL_H
#define OLM_OCI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>

#include "oci_digest.h"
#include "olm_error.h"

/* Declared here without oci_registry.h, so that this private header sits below the
 * registry code that implements these accessors. */
typedef struct oci_registry oci_registry;

/* Effective chunk size for uploads (opts.chunk_size or the default). */
uint64_t oci_registry_chunk_size(const oci_registry *reg);
/* The registry as named in references ("127.0.0.1:5000").  Borrowed. */
const char *oci_registry_host(const oci_registry *reg);
/* Reports a human progress line through opts.progress, if set (printf-style). */
void oci_registry_progress(const oci_registry *reg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The insecure registries that answered over plain HTTP, for this process
 * (oci_scheme_memo.c): oci_registry_new starts there; set(host, false) forgets. */
bool oci_scheme_memo_plain_http(const char *host);
void oci_scheme_memo_set(const char *host, bool plain_http);

/* The idle handles of oci_handle_pool.c: take one last used for `base_url` (else a new one,
 * NULL when out of memory), give it back when done (it is closed when no slot is free for it
 * or `base_url` cannot be kept); count the connections a finished exchange opened. */
CURL *oci_handle_take(const char *base_url);
void oci_handle_give(CURL *curl, const char *base_url);
void oci_handle_count_connects(CURL *curl);

/* A response sink (oci_request.sink) that hashes what it is given and keeps it
 * in `file` (when set) or in memory (buf, NUL-terminated, owned by the sink
 * until taken).  More than `limit` bytes abort the transfer.  Used for every
 * pulled manifest and blob, so nothing is used before its digest is checked. */
typedef struct oci_verify_sink {
    oci_sha256 *hash; /* owned */
    uint64_t limit;
    uint64_t received;
    FILE *file; /* borrowed; NULL = memory */
    char *buf;
    size_t cap;
    int over_limit;
    int write_failed;
} oci_verify_sink;

int oci_verify_sink_init(oci_verify_sink *s, FILE *file, uint64_t limit, olm_error *err);
size_t oci_verify_sink_write(const void *data, size_t len, void *ctx);
/* Finishes the hash into digest_out; then, if expected_digest is not NULL,
 * checks it (and expected_size when not UINT64_MAX).  `what` names the
 * content in errors ("blob sha256:..", "manifest v1"). */
int oci_verify_sink_finish(oci_verify_sink *s, const char *what, const char *expected_digest,
                           uint64_t expected_size, char digest_out[OCI_DIGEST_BUFSZ],
                           olm_error *err);
void oci_verify_sink_free(oci_verify_sink *s);

struct dirent;
/* The drop-ins of a registries.conf: the `*.conf` entries of `dir` (PATH.d) that are not
 * hidden, sorted by name, as containers/image reads them (scandir's result: n entries, each
 * and the array freed by the caller; -1 with errno, ENOENT for no directory).  Both
 * oci_registries_conf_load and oci_registries_follow's change signature list them so. */
int oci_registries_dropins(const char *dir, struct dirent ***names);

#endif

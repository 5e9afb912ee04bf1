/* clusterextension_token_cache: ServiceAccount tokens (TokenRequest) kept between
 * reconciles.
 *
 * Bundle content is applied, read back and deleted as each ClusterExtension's
 * spec.serviceAccount, with a short-lived token from TokenRequest.  Minting one for
 * every reconcile costs an apiserver write each time (and, with drift watches, would
 * force every watch to be re-created), so tokens are cached per (namespace,
 * ServiceAccount) and reused while more than a third of their lifetime remains (the
 * kubelet refreshes projected tokens at 80 %; a third leaves room for a reconcile that
 * started just before the threshold, and for watches opened with the token).
 *
 * The lifetime is measured from the moment of the mint to status.expirationTimestamp
 * (or the requested seconds when the server sent none), so a server that shortens
 * tokens (--service-account-max-token-expiration) is honoured.
 *
 * A token the apiserver rejects (401: the ServiceAccount was deleted and re-created,
 * or the signing key rotated) is dropped with ce_token_cache_invalidate and the caller
 * retries once with a fresh one.  Entries of deleted extensions are dropped with
 * ce_token_cache_forget.
 *
 * Threading: every function may be called from any thread; one mutex guards the
 * table.  Minting runs outside the lock, so two reconciles that miss at once for the
 * same ServiceAccount may both mint; both tokens are valid and the later one is kept.
 *
 * Secrets: tokens are never logged; every copy this module frees is zeroed first
 * (explicit_bzero), and callers free theirs with ce_token_free. */
#ifndef OLM_CLUSTEREXTENSION_TOKEN_CACHE_H
#define OLM_CLUSTEREXTENSION_TOKEN_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube_client.h"
#include "olm_error.h"

/* Mints a token for ns/sa valid for `seconds`: *token malloc'd (the cache owns it
 * afterwards), *expires the server's expirationTimestamp or 0 when unknown.  Returns
 * 0 or a negative kube_result with err set (KUBE_NOT_FOUND: no such ServiceAccount). */
typedef int (*ce_token_mint_fn)(void *data, const char *ns, const char *sa, int64_t seconds, char **token,
                                time_t *expires, olm_error *err);

/* Wall-clock seconds; tests pass a fake one. */
typedef time_t (*ce_token_clock_fn)(void *data);

typedef struct ce_token_cache_options {
    int64_t lifetime_seconds; /* expirationSeconds to request; 0: 3600 (the apiserver's minimum is 600) */
    ce_token_mint_fn mint;    /* required */
    void *mint_data;
    ce_token_clock_fn now;    /* NULL: time(NULL) */
    void *clock_data;
} ce_token_cache_options;

typedef struct ce_token_cache ce_token_cache;

/* A token handed out by the cache: a private copy. */
typedef struct ce_token {
    char *value;       /* owned; free with ce_token_free (zeroes it) */
    time_t expires;    /* when the apiserver stops accepting it */
    time_t refresh_at; /* from then on the cache mints a new one instead */
} ce_token;

ce_token_cache *ce_token_cache_new(const ce_token_cache_options *opts, olm_error *err);
/* Zeroes and frees every cached token. */
void ce_token_cache_free(ce_token_cache *c);

/* The cached token of ns/sa while it is fresh enough, else a newly minted one (which
 * replaces the entry).  0 with *out filled, or the mint's negative result with err set
 * (then *out is zeroed and nothing is cached). */
int ce_token_cache_get(ce_token_cache *c, const char *ns, const char *sa, ce_token *out, olm_error *err);

/* Drops the entry of ns/sa if it still holds `token` (a newer token minted meanwhile
 * by another reconcile stays).  `token` NULL drops whatever is there. */
void ce_token_cache_invalidate(ce_token_cache *c, const char *ns, const char *sa, const char *token);

/* Drops the entry of ns/sa (its extension is gone). */
void ce_token_cache_forget(ce_token_cache *c, const char *ns, const char *sa);

size_t ce_token_cache_size(ce_token_cache *c);
/* Tokens minted since creation. */
uint64_t ce_token_cache_mints(ce_token_cache *c);

void ce_token_free(ce_token *t);

/* The mint function for a real apiserver: kube_token_request through `data`, a
 * kube_client with the right to create serviceaccounts/token. */
int ce_token_mint_kube(void *data, const char *ns, const char *sa, int64_t seconds, char **token, time_t *expires,
                       olm_error *err);

#endif

/* clusterextension_token_cache: see clusterextension.h. */
#include "clusterextension.h"
#include "olm_hash.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LIFETIME 3600

/* One cached token, in a hash table of ns/sa: there are as many entries as distinct
 * ServiceAccounts of installed extensions (1,000 in the scale benches), and a hit, the common
 * case, is looked up several times per reconcile (a list walk was 3% of the controller's CPU
 * during a 1,000-install batch). */
typedef struct token_entry {
    char *ns, *sa, *token;
    time_t expires, refresh_at;
    struct token_entry *next; /* in its bucket */
} token_entry;

#define MIN_BUCKETS 64

struct clusterextension_token_cache {
    clusterextension_token_cache_options o;
    pthread_mutex_t lock;
    token_entry **buckets; /* nbuckets, a power of two; NULL until the first entry */
    size_t nbuckets, n;
    uint64_t mints;
};

static size_t bucket_of(const clusterextension_token_cache *c, const char *ns, const char *sa)
{
    uint64_t h = olm_fnv1a_str(OLM_FNV1A_OFFSET, ns);
    h = olm_fnv1a(h, "/", 1);
    return (size_t)olm_fnv1a_str(h, sa) & (c->nbuckets - 1);
}

/* Caller holds the lock.  Makes room for one more entry (twice the buckets past two entries
 * a bucket); false when out of memory (the table is then unchanged). */
static bool reserve(clusterextension_token_cache *c)
{
    if (c->buckets && c->n < 2 * c->nbuckets)
        return true;
    size_t want = c->buckets ? 2 * c->nbuckets : MIN_BUCKETS;
    token_entry **grown = calloc(want, sizeof *grown);
    if (!grown)
        return c->buckets != NULL; /* a longer chain will do */
    token_entry **old = c->buckets;
    size_t nold = c->nbuckets;
    c->buckets = grown;
    c->nbuckets = want;
    for (size_t i = 0; i < nold; i++)
        for (token_entry *e = old[i], *next; e; e = next) {
            next = e->next;
            token_entry **b = &c->buckets[bucket_of(c, e->ns, e->sa)];
            e->next = *b;
            *b = e;
        }
    free(old);
    return true;
}

static void wipe(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void entry_free(token_entry *e)
{
    free(e->ns);
    free(e->sa);
    wipe(e->token);
    free(e);
}

static time_t now_of(clusterextension_token_cache *c)
{
    return c->o.now ? c->o.now(c->o.clock_data) : time(NULL);
}

clusterextension_token_cache *clusterextension_token_cache_new(const clusterextension_token_cache_options *opts, olm_error *err)
{
    if (!opts || !opts->mint) {
        olm_error_set(err, "token cache: a mint function is required");
        return NULL;
    }
    clusterextension_token_cache *c = calloc(1, sizeof *c);
    if (!c) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    c->o = *opts;
    if (c->o.lifetime_seconds <= 0)
        c->o.lifetime_seconds = DEFAULT_LIFETIME;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        olm_error_set(err, "pthread_mutex_init failed");
        return NULL;
    }
    return c;
}

void clusterextension_token_cache_free(clusterextension_token_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nbuckets; i++)
        for (token_entry *e = c->buckets[i], *next; e; e = next) {
            next = e->next;
            entry_free(e);
        }
    free(c->buckets);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void clusterextension_token_free(clusterextension_token *t)
{
    if (!t)
        return;
    wipe(t->value);
    memset(t, 0, sizeof *t);
}

/* Caller holds the lock.  The link pointing at the entry of ns/sa, or at the NULL
 * that ends its bucket; NULL when the table has no bucket yet. */
static token_entry **find(clusterextension_token_cache *c, const char *ns, const char *sa)
{
    if (!c->buckets)
        return NULL;
    token_entry **pp = &c->buckets[bucket_of(c, ns, sa)];
    while (*pp && (strcmp((*pp)->ns, ns) != 0 || strcmp((*pp)->sa, sa) != 0))
        pp = &(*pp)->next;
    return pp;
}

/* Caller holds the lock. */
static void unlink_entry(clusterextension_token_cache *c, token_entry **pp)
{
    token_entry *e = *pp;
    *pp = e->next;
    c->n--;
    entry_free(e);
}

static int copy_out(const token_entry *e, clusterextension_token *out, olm_error *err)
{
    out->value = strdup(e->token);
    if (!out->value)
        return olm_error_set(err, "out of memory");
    out->expires = e->expires;
    out->refresh_at = e->refresh_at;
    return 0;
}

bool clusterextension_token_cache_has(clusterextension_token_cache *c, const char *ns, const char *sa)
{
    pthread_mutex_lock(&c->lock);
    bool has = *find(c, ns, sa) != NULL;
    pthread_mutex_unlock(&c->lock);
    return has;
}

int clusterextension_token_cache_get(clusterextension_token_cache *c, const char *ns, const char *sa, clusterextension_token *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    time_t now = now_of(c);
    pthread_mutex_lock(&c->lock);
    token_entry **link = find(c, ns, sa), *hit = link ? *link : NULL;
    int rc = 1;
    if (hit && now < hit->refresh_at)
        rc = copy_out(hit, out, err);
    pthread_mutex_unlock(&c->lock);
    if (rc <= 0)
        return rc;

    /* Miss or stale: mint without holding the lock (it is an HTTP round trip). */
    char *token = NULL;
    time_t expires = 0;
    rc = c->o.mint(c->o.mint_data, ns, sa, c->o.lifetime_seconds, &token, &expires, err);
    if (rc < 0) {
        wipe(token);
        return rc;
    }
    if (!token || !*token) {
        wipe(token);
        return olm_error_set(err, "TokenRequest for ServiceAccount %s/%s returned no token", ns, sa);
    }
    time_t minted = now_of(c);
    if (expires <= minted)
        expires = minted + (time_t)c->o.lifetime_seconds;
    token_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->ns = strdup(ns);
        e->sa = strdup(sa);
    }
    if (!e || !e->ns || !e->sa) {
        wipe(token);
        if (e)
            entry_free(e);
        return olm_error_set(err, "out of memory");
    }
    e->token = token;
    e->expires = expires;
    e->refresh_at = expires - (expires - minted) / 3;
    rc = copy_out(e, out, err);
    pthread_mutex_lock(&c->lock);
    c->mints++;
    token_entry **pp = find(c, ns, sa);
    if (pp && *pp)
        unlink_entry(c, pp);
    if (reserve(c)) {
        token_entry **b = &c->buckets[bucket_of(c, ns, sa)];
        e->next = *b;
        *b = e;
        c->n++;
    } else {
        entry_free(e); /* out of memory: the token is used once, not kept */
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void clusterextension_token_cache_invalidate(clusterextension_token_cache *c, const char *ns, const char *sa, const char *token)
{
    pthread_mutex_lock(&c->lock);
    token_entry **pp = find(c, ns, sa);
    if (pp && *pp && (!token || strcmp((*pp)->token, token) == 0))
        unlink_entry(c, pp);
    pthread_mutex_unlock(&c->lock);
}

void clusterextension_token_cache_forget(clusterextension_token_cache *c, const char *ns, const char *sa)
{
    clusterextension_token_cache_invalidate(c, ns, sa, NULL);
}

size_t clusterextension_token_cache_size(clusterextension_token_cache *c)
{
    pthread_mutex_lock(&c->lock);
    size_t n = c->n;
    pthread_mutex_unlock(&c->lock);
    return n;
}

uint64_t clusterextension_token_cache_mints(clusterextension_token_cache *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t n = c->mints;
    pthread_mutex_unlock(&c->lock);
    return n;
}

int clusterextension_token_mint_kube(void *data, const char *ns, const char *sa, int64_t seconds, char **token, time_t *expires,
                       olm_error *err)
{
    return kube_token_request(data, ns, sa, seconds, NULL, token, expires, err);
}

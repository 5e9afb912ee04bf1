/* oci_handle_pool: idle libcurl handles kept between pulls, with the keep-alive connections
 * their caches hold, for the next oci_registry of the same registry.
 *
 * Why: every pull makes a new oci_registry, and each used to make a new handle and so a new
 * connection (a new TLS handshake against a real registry).  A registry pays for each:
 * Debian's docker-registry (2.8) spent 6.9 CPU-s serving the manifest and layer of 1,000
 * bundles over a new connection per bundle and 4.0 CPU-s over kept ones (curl against the
 * shared bench's registry), and during a batch of 1,000 installs it shares the machine's
 * two cores with everything else.
 *
 * Not libcurl's shared connection cache (CURL_LOCK_DATA_CONNECT): libcurl does not support
 * sharing connections between concurrent threads, and pulls run on several.  A handle here
 * is used by one oci_registry at a time; perform() resets its options before each exchange
 * (curl_easy_reset keeps the connections), and credentials go in per-request headers, so a
 * pooled handle carries connections, never the previous pull's token.  libcurl only reuses
 * a connection whose host, port, scheme and TLS settings match, and checks that it is alive
 * first. */
#include "oci_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Pulls run on operator-controller's worker threads (8 by default) and catalogd's; more idle
 * handles than that would only hold connections nobody asks for. */
#define POOL_SLOTS 8

struct idle_handle {
    CURL *curl;     /* NULL: an empty slot */
    char *base_url; /* "http://127.0.0.1:5000": what its connections most likely reach */
    unsigned long long given_at; /* order of return: the oldest is evicted first */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct idle_handle pool[POOL_SLOTS];
static unsigned long long returns;
static atomic_long connections_opened;

CURL *oci_handle_take(const char *base_url)
{
    CURL *found = NULL;
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < POOL_SLOTS && !found; i++)
        if (pool[i].curl && strcmp(pool[i].base_url, base_url) == 0) {
            found = pool[i].curl;
            free(pool[i].base_url);
            pool[i] = (struct idle_handle){0};
        }
    pthread_mutex_unlock(&pool_lock);
    return found ? found : curl_easy_init();
}

void oci_handle_give(CURL *curl, const char *base_url)
{
    if (!curl)
        return;
    char *url = base_url ? strdup(base_url) : NULL;
    if (!url) {
        curl_easy_cleanup(curl);
        return;
    }
    struct idle_handle evicted = {0};
    pthread_mutex_lock(&pool_lock);
    int slot = 0;
    for (int i = 0; i < POOL_SLOTS; i++) {
        if (!pool[i].curl) {
            slot = i;
            break;
        }
        if (pool[i].given_at < pool[slot].given_at)
            slot = i;
    }
    evicted = pool[slot];
    pool[slot] = (struct idle_handle){.curl = curl, .base_url = url, .given_at = ++returns};
    pthread_mutex_unlock(&pool_lock);
    if (evicted.curl) /* outside the lock: closing its connections may take a moment */
        curl_easy_cleanup(evicted.curl);
    free(evicted.base_url);
}

void oci_handle_pool_drain(void)
{
    struct idle_handle all[POOL_SLOTS];
    pthread_mutex_lock(&pool_lock);
    memcpy(all, pool, sizeof all);
    memset(pool, 0, sizeof pool);
    pthread_mutex_unlock(&pool_lock);
    for (int i = 0; i < POOL_SLOTS; i++) {
        if (all[i].curl)
            curl_easy_cleanup(all[i].curl);
        free(all[i].base_url);
    }
}

void oci_handle_count_connects(CURL *curl)
{
    long n = 0;
    if (curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &n) == CURLE_OK && n > 0)
        atomic_fetch_add(&connections_opened, n);
}

long oci_connections_opened(void) { return atomic_load(&connections_opened); }

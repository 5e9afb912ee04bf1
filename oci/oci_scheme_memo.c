/* oci_scheme_memo: the insecure registries (named in --insecure-registries or
 * registries.conf) that answered over plain HTTP, remembered for this process.
 *
 * Why: such a registry is tried over TLS first, and each pull makes a new oci_registry, so
 * without a memory every pull from a plain-HTTP registry paid a failed TLS connection
 * before the plain one (6% of operator-controller's CPU in a batch of 1,000 installs).
 * Once one answered over plain HTTP, the next pulls start there; a transport failure over
 * plain HTTP forgets it (oci_registry.c then tries TLS at once), so a registry that moves
 * to TLS costs one failed connection, not a pull. */
#include "oci_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Hosts are few (the insecure registries an administrator names); the oldest entry makes
 * room when more are learned. */
#define MEMO_SLOTS 16
#define MEMO_HOST_MAX 256

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static char memo_hosts[MEMO_SLOTS][MEMO_HOST_MAX];
static size_t memo_next; /* the slot the next new host takes */

/* The slot holding `host` ("": an empty slot), or -1. */
static int find_locked(const char *host)
{
    for (int i = 0; i < MEMO_SLOTS; i++)
        if (strcmp(memo_hosts[i], host) == 0)
            return i;
    return -1;
}

bool oci_scheme_memo_plain_http(const char *host)
{
    if (!*host)
        return false;
    pthread_mutex_lock(&memo_lock);
    bool known = find_locked(host) >= 0;
    pthread_mutex_unlock(&memo_lock);
    return known;
}

void oci_scheme_memo_set(const char *host, bool plain_http)
{
    if (!*host || strlen(host) >= MEMO_HOST_MAX)
        return; /* not remembered: such a host only keeps probing TLS first */
    pthread_mutex_lock(&memo_lock);
    int i = find_locked(host);
    if (plain_http && i < 0) {
        int slot = find_locked(""); /* an empty slot, else the oldest entry */
        if (slot < 0) {
            slot = (int)memo_next;
            memo_next = (memo_next + 1) % MEMO_SLOTS;
        }
        snprintf(memo_hosts[slot], MEMO_HOST_MAX, "%s", host);
    } else if (!plain_http && i >= 0) {
        memo_hosts[i][0] = '\0';
    }
    pthread_mutex_unlock(&memo_lock);
}

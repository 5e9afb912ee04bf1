/* clusterextension_info: what this process remembers per extension between reconciles:
 *  - which catalog the installed bundle came from, for the olm_clusterextension_info metric
 *    (the status names the bundle but not its catalog; only a resolve knows it);
 *  - since when the current generation has been failing, for spec.progressDeadlineMinutes;
 *  - BoxcutterRuntime: the revision whose object Secrets are known to carry its ownerReference
 *    (set or seen by this process), so a reconcile does not list them again.
 * Reconciles (pool threads) write it, the metrics responder (loop thread) reads it, hence the
 * mutex. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "olm_array.h"
#include "clusterextension_internal.h"

typedef struct ce_info {
    char *extension, *catalog; /* catalog NULL: not known */
    int64_t failing_generation;
    time_t failing_since;      /* 0: not failing */
    char *owned_uid;           /* the revision (uid) whose Secrets are owned; NULL: none known */
} ce_info;

struct clusterextension_infos {
    pthread_mutex_t lock;
    ce_info *v;
    size_t n, cap;
};

clusterextension_infos *clusterextension_infos_new(void)
{
    clusterextension_infos *m = calloc(1, sizeof *m);
    if (m && pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void clusterextension_infos_free(clusterextension_infos *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].extension);
        free(m->v[i].catalog);
        free(m->v[i].owned_uid);
    }
    free(m->v);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static size_t find(const clusterextension_infos *m, const char *extension)
{
    size_t i = 0;
    while (i < m->n && strcmp(m->v[i].extension, extension) != 0)
        i++;
    return i;
}

/* The entry of `extension`, added when absent; m->n when out of memory.  Lock held. */
static size_t find_or_add(clusterextension_infos *m, const char *extension)
{
    size_t i = find(m, extension);
    if (i == m->n && OLM_ARRAY_RESERVE(m->v, m->cap, m->n + 1) < 0)
        return m->n;
    if (i == m->n) {
        m->v[i] = (ce_info){.extension = strdup(extension)};
        if (!m->v[i].extension)
            return m->n;
        m->n++;
    }
    return i;
}

void clusterextension_infos_set(clusterextension_infos *m, const char *extension, const char *catalog)
{
    char *c = strdup(catalog);
    if (!c)
        return; /* out of memory: the metric shows the previous catalog, or none */
    pthread_mutex_lock(&m->lock);
    size_t i = find_or_add(m, extension);
    if (i < m->n) {
        free(m->v[i].catalog);
        m->v[i].catalog = c;
        c = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    free(c);
}

time_t clusterextension_infos_failing_since(clusterextension_infos *m, const char *extension, int64_t generation,
                                            time_t now)
{
    pthread_mutex_lock(&m->lock);
    size_t i = find_or_add(m, extension);
    time_t since = now; /* out of memory: as if it had started failing now */
    if (i < m->n) {
        ce_info *e = &m->v[i];
        if (!e->failing_since || e->failing_generation != generation) {
            e->failing_since = now; /* a new spec restarts the clock */
            e->failing_generation = generation;
        }
        since = e->failing_since;
    }
    pthread_mutex_unlock(&m->lock);
    return since;
}

void clusterextension_infos_succeeded(clusterextension_infos *m, const char *extension)
{
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    if (i < m->n)
        m->v[i].failing_since = 0;
    pthread_mutex_unlock(&m->lock);
}

bool clusterextension_infos_secrets_owned(clusterextension_infos *m, const char *extension, const char *uid)
{
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    bool known = i < m->n && m->v[i].owned_uid && strcmp(m->v[i].owned_uid, uid) == 0;
    pthread_mutex_unlock(&m->lock);
    return known;
}

void clusterextension_infos_set_secrets_owned(clusterextension_infos *m, const char *extension, const char *uid)
{
    char *u = strdup(uid);
    if (!u)
        return; /* out of memory: the next reconcile looks again */
    pthread_mutex_lock(&m->lock);
    size_t i = find_or_add(m, extension);
    if (i < m->n) {
        free(m->v[i].owned_uid);
        m->v[i].owned_uid = u;
        u = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    free(u);
}

/* After a removal: a quarter full gives back half of the room, empty gives back all of it
 * (after all extensions are uninstalled nothing is held for them).  Lock held. */
static void shrink(clusterextension_infos *m)
{
    if (m->n == 0) {
        free(m->v);
        m->v = NULL;
        m->cap = 0;
    } else if (m->cap > 16 && m->n <= m->cap / 4) {
        ce_info *v = realloc(m->v, m->cap / 2 * sizeof *v);
        if (v) { /* out of memory: keep the bigger array */
            m->v = v;
            m->cap /= 2;
        }
    }
}

void clusterextension_infos_forget(clusterextension_infos *m, const char *extension)
{
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    if (i < m->n) {
        free(m->v[i].extension);
        free(m->v[i].catalog);
        free(m->v[i].owned_uid);
        m->v[i] = m->v[--m->n];
        shrink(m);
    }
    pthread_mutex_unlock(&m->lock);
}

size_t clusterextension_infos_capacity(clusterextension_infos *m)
{
    pthread_mutex_lock(&m->lock);
    size_t cap = m->cap;
    pthread_mutex_unlock(&m->lock);
    return cap;
}

void clusterextension_reconciler_catalog_of(clusterextension_reconciler *r, const char *extension, char *buf,
                                            size_t bufsz)
{
    clusterextension_infos *m = r->infos;
    buf[0] = '\0';
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    if (i < m->n && m->v[i].catalog)
        snprintf(buf, bufsz, "%s", m->v[i].catalog);
    pthread_mutex_unlock(&m->lock);
}

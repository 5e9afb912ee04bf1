/* clusterextension_info: which catalog each installed extension's bundle came from, for the
 * olm_clusterextension_info metric.  The ClusterExtension's status names the bundle but not
 * its catalog, and only a resolve knows it: reconciles (pool threads) record it, the metrics
 * responder (loop thread) reads it, hence the mutex. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"

typedef struct ce_info {
    char *extension, *catalog;
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

void clusterextension_infos_set(clusterextension_infos *m, const char *extension, const char *catalog)
{
    char *c = strdup(catalog);
    if (!c)
        return; /* out of memory: the metric shows the previous catalog, or none */
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    if (i == m->n && m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        ce_info *v = realloc(m->v, cap * sizeof *v);
        if (v) {
            m->v = v;
            m->cap = cap;
        }
    }
    if (i == m->n && m->n < m->cap && (m->v[i].extension = strdup(extension)) != NULL) {
        m->v[i].catalog = NULL;
        m->n++;
    }
    if (i < m->n) {
        free(m->v[i].catalog);
        m->v[i].catalog = c;
        c = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    free(c);
}

void clusterextension_infos_forget(clusterextension_infos *m, const char *extension)
{
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    if (i < m->n) {
        free(m->v[i].extension);
        free(m->v[i].catalog);
        m->v[i] = m->v[--m->n];
    }
    pthread_mutex_unlock(&m->lock);
}

void clusterextension_reconciler_catalog_of(clusterextension_reconciler *r, const char *extension, char *buf,
                                            size_t bufsz)
{
    clusterextension_infos *m = r->infos;
    buf[0] = '\0';
    pthread_mutex_lock(&m->lock);
    size_t i = find(m, extension);
    if (i < m->n)
        snprintf(buf, bufsz, "%s", m->v[i].catalog);
    pthread_mutex_unlock(&m->lock);
}

/* drift_mailbox: where other threads post watch specs for the loop thread (a mutex-guarded
 * list and a uv_async wake-up); only the latest post of each extension is kept. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "drift_internal.h"

drift_post *drift_posts_take(drift_watcher *d)
{
    pthread_mutex_lock(&d->lock);
    drift_post *p = d->posts;
    d->posts = NULL;
    pthread_mutex_unlock(&d->lock);
    return p;
}

void drift_posts_free(drift_post *p)
{
    while (p) {
        drift_post *next = p->next;
        drift_spec_free(&p->spec);
        free(p);
        p = next;
    }
}

int drift_watcher_post(drift_watcher *d, drift_spec *spec, olm_error *err)
{
    drift_post *p = calloc(1, sizeof *p);
    if (!p || !spec->extension) {
        free(p);
        drift_spec_free(spec);
        return olm_error_set(err, "drift watch: out of memory");
    }
    p->spec = *spec;
    memset(spec, 0, sizeof *spec);
    pthread_mutex_lock(&d->lock);
    /* Keep order between extensions, and only the latest request of each. */
    drift_post **pp = &d->posts;
    while (*pp) {
        if (strcmp((*pp)->spec.extension, p->spec.extension) == 0) {
            drift_post *old = *pp;
            *pp = old->next;
            old->next = NULL;
            drift_posts_free(old);
            continue;
        }
        pp = &(*pp)->next;
    }
    *pp = p;
    pthread_mutex_unlock(&d->lock);
    uv_async_send(&d->async);
    return 0;
}

int drift_watcher_forget(drift_watcher *d, const char *extension, olm_error *err)
{
    drift_spec s = {.extension = strdup(extension)};
    return drift_watcher_post(d, &s, err);
}

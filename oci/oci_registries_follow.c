/* oci_registries_follow: re-read registries.conf when it changes (oci_registries_follow.h). */
#include "oci_registries_follow.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oci_internal.h"
#include "strbuf.h"

struct oci_registries_follow {
    pthread_mutex_t lock;
    char *path;
    bool required;
    oci_registries_conf *conf; /* the last good one */
    char *seen;                /* the stat signature last read (good or not) */
    char *problem;             /* what was reported of the files as they are, while it lasts */
    oci_registries_notice notice;
    void *data;
};

static int stat_into(strbuf *sb, const char *name)
{
    struct stat st;
    if (stat(name, &st) != 0)
        return strbuf_printf(sb, "%s: -%d\n", name, errno);
    return strbuf_printf(sb, "%s: %llu %llu %lld %lld.%09ld %lld.%09ld\n", name, (unsigned long long)st.st_dev,
                          (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                          st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* What identifies the configuration's files as they are now; NULL when out of memory. */
static char *signature(const char *path)
{
    strbuf sb = STRBUF_INIT;
    char *dir = NULL;
    int rc = stat_into(&sb, path);
    if (rc == 0 && asprintf(&dir, "%s.d", path) < 0) {
        dir = NULL;
        rc = -1;
    }
    struct dirent **ents = NULL;
    int n = rc == 0 ? oci_registries_dropins(dir, &ents) : 0;
    for (int i = 0; i < n; i++) {
        char *f = NULL;
        if (rc == 0 && asprintf(&f, "%s/%s", dir, ents[i]->d_name) >= 0)
            rc = stat_into(&sb, f);
        else
            f = NULL, rc = -1; /* asprintf leaves f undefined on failure */
        free(f);
        free(ents[i]);
    }
    free(ents);
    free(dir);
    if (rc != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

oci_registries_follow *oci_registries_follow_new(const char *path, bool required, oci_registries_notice notice,
                                                 void *data, olm_error *err)
{
    oci_registries_follow *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path ? path : OCI_REGISTRIES_CONF_DEFAULT))) {
        free(f);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    f->required = required;
    f->notice = notice;
    f->data = data;
    /* The signature first: a change racing this read is then seen by the next pull. */
    f->seen = signature(f->path);
    if (!f->seen || !(f->conf = oci_registries_conf_load(f->path, required, err))) {
        if (!f->seen)
            olm_error_set(err, "out of memory");
        free(f->seen);
        free(f->path);
        free(f);
        return NULL;
    }
    pthread_mutex_init(&f->lock, NULL);
    return f;
}

void oci_registries_follow_free(oci_registries_follow *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->lock);
    oci_registries_conf_free(f->conf);
    free(f->seen);
    free(f->problem);
    free(f->path);
    free(f);
}

/* With the lock held. */
static void refresh(oci_registries_follow *f)
{
    char *now = signature(f->path);
    if (!now || strcmp(now, f->seen) == 0) {
        free(now); /* out of memory: try again on the next pull */
        return;
    }
    free(f->seen);
    f->seen = now;
    olm_error err;
    oci_registries_conf *c = oci_registries_conf_load(f->path, f->required, &err);
    if (!c) {
        /* The same problem again is not news: a file's stat can change more than once for
         * one edit (a write seen half done, an editor's temporary file, timestamps made
         * finer once they were read), and one malformed edit is one log line. */
        if (f->problem && strcmp(f->problem, err.msg) == 0)
            return;
        free(f->problem);
        f->problem = strdup(err.msg);
        if (f->notice)
            f->notice(f->path, err.msg, oci_registries_conf_count(f->conf), f->data);
        return;
    }
    free(f->problem);
    f->problem = NULL;
    oci_registries_conf_free(f->conf);
    f->conf = c;
    if (f->notice)
        f->notice(f->path, NULL, oci_registries_conf_count(c), f->data);
}

size_t oci_registries_follow_count(oci_registries_follow *f)
{
    pthread_mutex_lock(&f->lock);
    size_t n = oci_registries_conf_count(f->conf);
    pthread_mutex_unlock(&f->lock);
    return n;
}

int oci_registries_follow_sources(oci_registries_follow *f, const oci_ref *ref, oci_pull_sources *out,
                                  olm_error *err)
{
    pthread_mutex_lock(&f->lock);
    refresh(f);
    int rc = oci_registries_conf_sources(f->conf, ref, out, err);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

/* olm_tls_server: see the header. */
#include "olm_tls_server.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "olm_log.h"

/* What identifies a version of a file; all zero when it cannot be stat'ed. */
typedef struct file_sig {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} file_sig;

struct olm_tls_server {
    char *cert, *key;
    olm_tls_profile profile;
    uint64_t interval_ms, next_check_ms;
    void (*configure)(void *ssl_ctx, void *arg);
    void *configure_arg;
    char log_key[32], log_name[64];
    SSL_CTX *ctx;
    file_sig cert_sig, key_sig;  /* of the files as last seen (loaded, or refused) */
    unsigned reloads;
};

static file_sig sig_of(const char *path)
{
    file_sig s;
    memset(&s, 0, sizeof s);
    struct stat st;
    if (stat(path, &st) == 0) {
        s.dev = st.st_dev;
        s.ino = st.st_ino;
        s.size = st.st_size;
        s.mtime = st.st_mtim;
        s.ctime = st.st_ctim;
    }
    return s;
}

static bool sig_equal(const file_sig *a, const file_sig *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
           a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A context with the pair and the profile; NULL with err naming what is wrong. */
static SSL_CTX *load(const olm_tls_server *t, olm_error *err)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    const char *what = !ctx                                                                  ? "out of memory"
                       : SSL_CTX_use_certificate_chain_file(ctx, t->cert) != 1             ? t->cert
                       : SSL_CTX_use_PrivateKey_file(ctx, t->key, SSL_FILETYPE_PEM) != 1   ? t->key
                       : SSL_CTX_check_private_key(ctx) != 1 ? "the certificate and key do not match"
                                                              : NULL;
    if (what) {
        char why[256];
        ERR_error_string_n(ERR_get_error(), why, sizeof why);
        ERR_clear_error();
        olm_error_set(err, "TLS: %s: %s", what, why);
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (olm_tls_profile_apply(&t->profile, ctx, err) != 0) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    if (t->configure)
        t->configure(ctx, t->configure_arg);
    return ctx;
}

olm_tls_server *olm_tls_server_new(const olm_tls_server_opts *o, olm_error *err)
{
    olm_tls_server *t = calloc(1, sizeof *t);
    if (!t || !(t->cert = strdup(o->cert)) || !(t->key = strdup(o->key))) {
        olm_tls_server_free(t);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    if (o->profile)
        t->profile = *o->profile;
    else
        olm_tls_profile_default(&t->profile);
    t->interval_ms = o->check_interval_ms ? o->check_interval_ms : 1000;
    t->configure = o->configure;
    t->configure_arg = o->configure_arg;
    snprintf(t->log_key, sizeof t->log_key, "%s", o->log_key ? o->log_key : "-");
    snprintf(t->log_name, sizeof t->log_name, "%s", o->log_name ? o->log_name : "server");
    /* Signatures first: a file replaced while we load is seen as changed next time. */
    t->cert_sig = sig_of(t->cert);
    t->key_sig = sig_of(t->key);
    if (!(t->ctx = load(t, err))) {
        olm_tls_server_free(t);
        return NULL;
    }
    t->next_check_ms = now_ms() + t->interval_ms;
    return t;
}

void olm_tls_server_free(olm_tls_server *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    free(t->cert);
    free(t->key);
    free(t);
}

void *olm_tls_server_ctx(olm_tls_server *t)
{
    uint64_t now = now_ms();
    if (now < t->next_check_ms)
        return t->ctx;
    t->next_check_ms = now + t->interval_ms;
    file_sig c = sig_of(t->cert), k = sig_of(t->key);
    if (sig_equal(&c, &t->cert_sig) && sig_equal(&k, &t->key_sig))
        return t->ctx;
    /* Seen from now on, whether it loads or not: a bad pair is reported once, not per connection. */
    t->cert_sig = c;
    t->key_sig = k;
    olm_error err;
    SSL_CTX *fresh = load(t, &err);
    if (!fresh) {
        olm_log(OLM_LOG_ERROR, t->log_key, NULL, "%s: new TLS certificate not used, still serving the previous one: %s",
                t->log_name, err.msg);
        return t->ctx;
    }
    SSL_CTX_free(t->ctx); /* connections using it hold their own references */
    t->ctx = fresh;
    t->reloads++;
    olm_log(OLM_LOG_INFO, t->log_key, NULL, "%s: TLS certificate %s reloaded", t->log_name, t->cert);
    return t->ctx;
}

unsigned olm_tls_server_reloads(const olm_tls_server *t)
{
    return t->reloads;
}

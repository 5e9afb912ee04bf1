/* http_client: see http_client.h. */
#include <string.h>

#include "http_client.h"
#include "olm_proxy.h"

/* CURLOPT_SSL_CTX_FUNCTION: the extra CAs join the store curl has loaded the system's (or
 * the CA file's) into, and the TLS profile sets versions, ciphers and curves. */
static CURLcode configure_ssl_ctx(CURL *curl, void *ssl_ctx, void *data)
{
    (void)curl;
    const http_client_opts *o = data;
    if (o->tls.extra_cas && olm_ca_set_add_to_ssl_ctx(o->tls.extra_cas, ssl_ctx) != 0)
        return CURLE_SSL_CACERT_BADFILE;
    olm_error err;
    if (o->tls.profile && olm_tls_profile_apply(o->tls.profile, ssl_ctx, &err) != 0)
        return CURLE_SSL_CIPHER;
    return CURLE_OK;
}

#define SETOPT(opt, val)                                                                        \
    do {                                                                                        \
        CURLcode c_ = curl_easy_setopt(h, opt, val);                                            \
        if (c_ != CURLE_OK)                                                                     \
            return olm_error_set(err, "libcurl: setting " #opt ": %s", curl_easy_strerror(c_)); \
    } while (0)

static int setup_tls(CURL *h, const char *url, const http_client_opts *o, olm_error *err)
{
    const http_client_tls *t = &o->tls;
    SETOPT(CURLOPT_SSLVERSION, (long)HTTP_CLIENT_MIN_TLS);
    if (t->ca_file)
        SETOPT(CURLOPT_CAINFO, t->ca_file);
    if (t->ca_dir)
        SETOPT(CURLOPT_CAPATH, t->ca_dir);
    if (t->extra_cas || t->profile) {
        SETOPT(CURLOPT_SSL_CTX_FUNCTION, configure_ssl_ctx);
        SETOPT(CURLOPT_SSL_CTX_DATA, (void *)o);
    }
    if (t->client_cert_file) {
        SETOPT(CURLOPT_SSLCERT, t->client_cert_file);
        SETOPT(CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (t->client_key_file) {
        SETOPT(CURLOPT_SSLKEY, t->client_key_file);
        SETOPT(CURLOPT_SSLKEYTYPE, "PEM");
    }
    bool off = t->skip_verify && strncmp(url, "https://", 8) == 0;
    SETOPT(CURLOPT_SSL_VERIFYPEER, off ? 0L : 1L);
    SETOPT(CURLOPT_SSL_VERIFYHOST, off ? 0L : 2L);
    return 0;
}

int http_client_setup(CURL *h, const char *url, const http_client_opts *o, olm_error *err)
{
    char proxy[1024];
    olm_proxy_for_url(url, proxy, sizeof proxy);
    SETOPT(CURLOPT_PROXY, proxy); /* "" = no proxy: libcurl's own reading of the environment differs */
    SETOPT(CURLOPT_NOSIGNAL, 1L);
    SETOPT(CURLOPT_PROTOCOLS_STR, "http,https");
    SETOPT(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SETOPT(CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 30000L);
    if (o->timeout_ms > 0)
        SETOPT(CURLOPT_TIMEOUT_MS, o->timeout_ms);
    if (o->low_speed_time > 0) {
        SETOPT(CURLOPT_LOW_SPEED_LIMIT, o->low_speed_limit);
        SETOPT(CURLOPT_LOW_SPEED_TIME, o->low_speed_time);
    }
    return setup_tls(h, url, o, err);
}

void http_headers_wipe(struct curl_slist *headers)
{
    for (struct curl_slist *l = headers; l; l = l->next)
        if (l->data)
            explicit_bzero(l->data, strlen(l->data));
}

void http_headers_free(struct curl_slist *headers)
{
    http_headers_wipe(headers);
    curl_slist_free_all(headers);
}

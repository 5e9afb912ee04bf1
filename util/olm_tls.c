/* olm_tls: see olm_tls.h. */
#include "olm_tls.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "olm_read_file.h"

/* A CA bundle is a few hundred KiB at most; this only bounds a wrong path (a log file). */
#define MAX_PEM_FILE (16u * 1024 * 1024)

struct olm_ca_set {
    STACK_OF(X509) *certs;
};

olm_ca_set *olm_ca_set_new(olm_error *err)
{
    olm_ca_set *s = calloc(1, sizeof *s);
    if (s && !(s->certs = sk_X509_new_null())) {
        free(s);
        s = NULL;
    }
    if (!s)
        olm_error_set(err, "out of memory");
    return s;
}

void olm_ca_set_free(olm_ca_set *s)
{
    if (!s)
        return;
    sk_X509_pop_free(s->certs, X509_free);
    free(s);
}

size_t olm_ca_set_count(const olm_ca_set *s)
{
    return s ? (size_t)sk_X509_num(s->certs) : 0;
}

/* Every certificate of a PEM buffer onto `certs`; returns how many, -1 on out of memory.
 * Other PEM blocks (keys, CRLs) are passed over, as Go's AppendCertsFromPEM does. */
static int read_certs(const char *pem, size_t len, STACK_OF(X509) *certs)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio)
        return -1;
    STACK_OF(X509_INFO) *infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
    BIO_free(bio);
    ERR_clear_error(); /* the end of the buffer is reported as an error */
    if (!infos)
        return 0;
    int n = 0;
    for (int i = 0; i < sk_X509_INFO_num(infos) && n >= 0; i++) {
        X509_INFO *in = sk_X509_INFO_value(infos, i);
        if (!in->x509)
            continue;
        if (!sk_X509_push(certs, in->x509)) {
            n = -1;
            break;
        }
        in->x509 = NULL; /* now owned by `certs` */
        n++;
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    return n;
}

int olm_ca_set_add_file(olm_ca_set *s, const char *file, olm_error *err)
{
    size_t len;
    char *pem = olm_read_file(file, MAX_PEM_FILE, &len, err);
    if (!pem)
        return -1;
    int n = read_certs(pem, len, s->certs);
    free(pem);
    if (n < 0)
        return olm_error_set(err, "out of memory reading %s", file);
    if (n == 0)
        return olm_error_set(err, "%s holds no PEM certificate", file);
    return 0;
}

static int is_pem_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 4 && (strcmp(name + n - 4, ".crt") == 0 || strcmp(name + n - 4, ".pem") == 0);
}

int olm_ca_set_add_dir(olm_ca_set *s, const char *dir, olm_error *err)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort); /* sorted: the same file fails first every time */
    if (n < 0)
        return olm_error_set(err, "cannot read the directory %s: %s", dir, strerror(errno));
    int rc = 0, files = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        if (rc == 0 && is_pem_name(names[i]->d_name) &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) < sizeof path &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            files++;
            rc = olm_ca_set_add_file(s, path, err);
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && files == 0)
        rc = olm_error_set(err, "%s holds no *.crt or *.pem file", dir);
    return rc;
}

int olm_ca_set_add_to_ssl_ctx(const olm_ca_set *s, void *ssl_ctx)
{
    X509_STORE *store = SSL_CTX_get_cert_store(ssl_ctx);
    if (!store)
        return -1;
    for (int i = 0; i < sk_X509_num(s->certs); i++) {
        /* Takes its own reference; a certificate the store already has is not an error. */
        if (X509_STORE_add_cert(store, sk_X509_value(s->certs, i)) != 1) {
            ERR_clear_error();
            return -1;
        }
    }
    return 0;
}

/* Reads one PEM object of a file through `read` (a PEM_read_bio_* function). */
static void *read_pem(const char *flag, const char *path, void *(*read)(BIO *), const char *what, olm_error *err)
{
    size_t len;
    char *pem = olm_read_file(path, MAX_PEM_FILE, &len, err);
    if (!pem) {
        olm_error_wrap(err, "%s", flag);
        return NULL;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    void *obj = bio ? read(bio) : NULL;
    BIO_free(bio);
    free(pem);
    ERR_clear_error();
    if (!obj)
        olm_error_set(err, "%s %s: holds no PEM %s", flag, path, what);
    return obj;
}

static void *read_x509(BIO *b) { return PEM_read_bio_X509(b, NULL, NULL, NULL); }
static void *read_key(BIO *b) { return PEM_read_bio_PrivateKey(b, NULL, NULL, NULL); }

int olm_tls_check_pair(const char *cert_flag, const char *cert, const char *key_flag, const char *key,
                       olm_error *err)
{
    X509 *x = read_pem(cert_flag, cert, read_x509, "certificate", err);
    if (!x)
        return -1;
    EVP_PKEY *k = read_pem(key_flag, key, read_key, "private key", err);
    int rc = 0;
    if (!k)
        rc = -1;
    else if (X509_check_private_key(x, k) != 1)
        rc = olm_error_set(err, "%s %s and %s %s do not match", cert_flag, cert, key_flag, key);
    ERR_clear_error();
    EVP_PKEY_free(k);
    X509_free(x);
    return rc;
}

/* kube_config: where the API server is and how to authenticate to it.
 *
 * Loaded from a kubeconfig file (current-context) or from the in-cluster
 * ServiceAccount mount.  kube_curl_apply() applies it to a libcurl easy handle;
 * every request (REST verbs, watches, token requests) goes through it, so TLS and
 * authentication live in exactly one place. */
#ifndef OLM_KUBE_CONFIG_H
#define OLM_KUBE_CONFIG_H

#include <curl/curl.h>
#include <stdbool.h>

#include "olm_error.h"

typedef struct kube_config {
    char *server;            /* e.g. "https://127.0.0.1:6443", no trailing slash */
    char *ca_file;           /* PEM bundle path, or NULL for the system store */
    char *client_cert_file;  /* PEM client certificate, or NULL */
    char *client_key_file;   /* PEM client key, or NULL */
    char *token;             /* bearer token, or NULL */
    char *token_file;        /* re-read before each request when set (rotating projected tokens) */
    /* Sent as Impersonate-User with the credentials above, or NULL: the requests act as this
     * user (kube_config_with_credential). */
    char *impersonate_user;
    bool insecure_skip_tls_verify;
    char *namespace;         /* context / pod namespace, or NULL */
    /* Inline *-data fields of a kubeconfig are written to private temp files owned
     * by the config and removed by kube_config_free(). */
    char *tmp_dir;
    /* Borrowed, may be NULL: counts every request a kube_client made with this config (and
     * with copies from kube_config_with_token) makes; the caller keeps it alive. */
    struct kube_request_metrics *request_metrics;
} kube_config;

/* path NULL: $KUBECONFIG, else in-cluster (KUBERNETES_SERVICE_HOST and the
 * ServiceAccount mount), else ~/.kube/config.  The result is owned by the caller. */
int kube_config_load(const char *path, kube_config *out, olm_error *err);
/* The same with the kubeconfig context `context` instead of current-context (NULL:
 * current-context), as kubectl's --context.  A context skips the in-cluster config:
 * only a kubeconfig file has contexts. */
int kube_config_load_context(const char *path, const char *context, kube_config *out, olm_error *err);

/* A copy of `base` that authenticates with `token` instead (client certificates
 * dropped): how bundle content is applied as a ClusterExtension's ServiceAccount. */
int kube_config_with_token(const kube_config *base, const char *token, kube_config *out, olm_error *err);

/* A credential to act as a ServiceAccount with: the bearer token a TokenRequest gave, or
 * KUBE_IMPERSONATION_PREFIX, a user name and optionally a space and anything (ignored here),
 * which means "the base's own credentials, impersonating that user".  No bearer token has that
 * form (a token68 holds no space), so both kinds travel as one string through everything that
 * keeps a ServiceAccount's credential (caches, watches, retries) without telling them apart.
 * The ignored tail lets whoever makes them make a new one, as a new token would be: what is
 * keyed on a change of credential (a watch refused with 403 is asked again with the next one)
 * then works alike for both. */
#define KUBE_IMPERSONATION_PREFIX "impersonate "
bool kube_credential_is_impersonation(const char *credential);
/* A copy of `base` that acts with `credential`: for a token, kube_config_with_token; for an
 * impersonation, base's server, CA, client certificate and token (file) with
 * impersonate_user set.  An impersonating copy names base's own files (no copies, so that
 * libcurl sees one TLS configuration and shares connections): base must outlive it. */
int kube_config_with_credential(const kube_config *base, const char *credential, kube_config *out, olm_error *err);

void kube_config_free(kube_config *cfg);

/* The two sources kube_config_load() chooses between, for callers that need one
 * explicitly.  In-cluster reads $OLMV1_SA_DIR instead of
 * /var/run/secrets/kubernetes.io/serviceaccount when set (tests). */
int kube_config_load_file(const char *path, kube_config *out, olm_error *err);
int kube_config_load_file_context(const char *path, const char *context, kube_config *out, olm_error *err);
int kube_config_load_in_cluster(kube_config *out, olm_error *err);

/* Sets URL-independent options on `h`: TLS (CA, client cert/key, verify), and the
 * Authorization (and Impersonate-User) headers appended to *headers (caller frees the list after the
 * transfer).  Returns -1 with err set on failure (e.g. unreadable token file). */
int kube_curl_apply(CURL *h, const kube_config *cfg, struct curl_slist **headers, olm_error *err);

#endif

/* kube_config: kubeconfig files (YAML read by gocompat), the in-cluster ServiceAccount mount,
 * and the one place where TLS and bearer-token options are applied to libcurl.
 *
 * The kubeconfig is converted to a jansson tree first (every scalar a string)
 * because the format is small and nested lists-of-named-entries are far easier to
 * walk as JSON than as a libyaml event stream. */
#include "kube_config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gocompat.h"
#include "http_client.h"
#include "olm_base64.h"
#include "olm_read_file.h"

#define KUBE_SA_DIR_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_MAX_FILE (16u * 1024u * 1024u) /* a kubeconfig or token is never this big */

/* ------------------------------------------------------------------ files */

/* Token files end with a newline when written by hand; the header must not. */
static char *read_trimmed(const char *path, olm_error *err)
{
    char *s = olm_read_file(path, KUBE_MAX_FILE, NULL, err);
    if (!s)
        return NULL;
    size_t start = strspn(s, " \t\r\n");
    size_t end = strlen(s);
    while (end > start && strchr(" \t\r\n", s[end - 1]))
        end--;
    memmove(s, s + start, end - start);
    s[end - start] = '\0';
    return s;
}

static int write_private_file(const char *path, const unsigned char *data, size_t len, olm_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return olm_error_set(err, "cannot create %s: %s", path, strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return olm_error_set(err, "cannot write %s: %s", path, strerror(e));
        }
        off += (size_t)w;
    }
    if (close(fd) < 0)
        return olm_error_set(err, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* ------------------------------------------------------------------ YAML -> JSON */

/* Keeps the first document's root. */
static int take_root(void *ud, json_t *root, int line)
{
    (void)line;
    *(json_t **)ud = root;
    return 1;
}

/* Parses the first YAML document of `text` (kubeconfigs hold exactly one).  Every
 * scalar becomes a string except plain `null`/`~`, which is all a kubeconfig
 * needs; aliases are refused.  Nothing after the root node is parsed. */
static json_t *yaml_to_json(const char *text, size_t len, const char *path, olm_error *err)
{
    gocompat_yaml_opts opts = {
        .flags = GOCOMPAT_YAML_STRINGS | GOCOMPAT_YAML_NO_ALIASES | GOCOMPAT_YAML_FIRST_ROOT,
        .max_depth = 64,
        .max_nodes = SIZE_MAX, /* no aliases, so no expansion to bound */
    };
    gocompat_yaml_error e;
    json_t *root = NULL;
    if (gocompat_yaml_decode(text, len, &opts, take_root, &root, &e) < 0) {
        switch (e.code) {
        case GOCOMPAT_YAML_ESYNTAX:
            olm_error_set(err, "%s: YAML error at line %d: %s", path, e.line,
                          e.problem ? e.problem : "unknown");
            break;
        case GOCOMPAT_YAML_EDEPTH: olm_error_set(err, "%s: YAML nested too deeply", path); break;
        case GOCOMPAT_YAML_ESCALAR:
            olm_error_set(err, "%s: invalid UTF-8 or out of memory in a YAML scalar", path);
            break;
        case GOCOMPAT_YAML_EKEY:
        case GOCOMPAT_YAML_EKEY_COLLECTION:
            olm_error_set(err, "%s: mapping keys must be strings", path);
            break;
        case GOCOMPAT_YAML_EALIAS:
            olm_error_set(err, "%s: YAML aliases are not supported in a kubeconfig", path);
            break;
        case GOCOMPAT_YAML_EEVENT:
            olm_error_set(err, "%s: unexpected YAML event %d", path, (int)e.value);
            break;
        case GOCOMPAT_YAML_ENOMEM: olm_error_set(err, "out of memory"); break;
        default: gocompat_yaml_strerror(&e, path, err); break; /* none other in this mode */
        }
        return NULL;
    }
    if (!root) {
        olm_error_set(err, "%s: empty kubeconfig", path);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        olm_error_set(err, "%s: a kubeconfig must be a YAML mapping", path);
        return NULL;
    }
    return root;
}

/* ------------------------------------------------------------------ kubeconfig */

static const char *jstr(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    const char *s = json_string_value(v);
    return (s && *s) ? s : NULL;
}

/* A boolean field: sigs.k8s.io/yaml reads YAML 1.1 booleans (yes, on, y...). */
static bool yaml_true(const char *s)
{
    gocompat_yaml_scalar v;
    return s && gocompat_yaml_resolve_plain(s, strlen(s), &v) == 0 && v.kind == GOCOMPAT_YAML_BOOL &&
           v.b;
}

/* Finds `{name: <name>, <field>: {...}}` in the list `list_key` of the kubeconfig. */
static const json_t *find_named(const json_t *root, const char *list_key, const char *field,
                                const char *name, const char *path, olm_error *err)
{
    const json_t *list = json_object_get(root, list_key);
    size_t i;
    const json_t *item;
    if (json_is_array(list)) {
        json_array_foreach(list, i, item) {
            const char *n = json_string_value(json_object_get(item, "name"));
            if (n && strcmp(n, name) == 0) {
                const json_t *inner = json_object_get(item, field);
                if (!inner || json_is_null(inner)) {
                    olm_error_set(err, "%s: %s entry \"%s\" has no \"%s\" field", path, list_key, name, field);
                    return NULL;
                }
                if (!json_is_object(inner)) {
                    olm_error_set(err, "%s: %s \"%s\": \"%s\" must be a mapping", path, list_key, name, field);
                    return NULL;
                }
                return inner;
            }
        }
    }
    olm_error_set(err, "%s: no %s entry named \"%s\"", path, list_key, name);
    return NULL;
}

static char *dup_or_oom(const char *s, olm_error *err)
{
    char *d = strdup(s);
    if (!d)
        olm_error_set(err, "out of memory");
    return d;
}

/* Relative paths in a kubeconfig are relative to the file's directory (client-go
 * ResolvePaths), not to the process's working directory. */
static char *resolve_path(const char *dir, const char *p, olm_error *err)
{
    if (p[0] == '/' || !dir)
        return dup_or_oom(p, err);
    char *out = NULL;
    if (asprintf(&out, "%s/%s", dir, p) < 0) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    return out;
}

static int ensure_tmp_dir(kube_config *cfg, olm_error *err)
{
    if (cfg->tmp_dir)
        return 0;
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char *tmpl = NULL;
    if (asprintf(&tmpl, "%s/olmv1-kube-XXXXXX", base) < 0)
        return olm_error_set(err, "out of memory");
    if (!mkdtemp(tmpl)) {
        int e = errno;
        free(tmpl);
        return olm_error_set(err, "cannot create a temporary directory under %s: %s", base, strerror(e));
    }
    cfg->tmp_dir = tmpl;
    return 0;
}

/* Writes decoded `*-data` to <tmp_dir>/<name>; *out receives the path. */
static int data_to_file(kube_config *cfg, const char *b64, const char *name, const char *what,
                        char **out, olm_error *err)
{
    size_t len = 0;
    /* Standard or URL alphabet, padding optional, whitespace ignored (YAML folds long
     * *-data values). */
    unsigned char *bytes = (unsigned char *)olm_base64_decode(
        b64, strlen(b64), OLM_BASE64_UNPADDED | OLM_BASE64_URL | OLM_BASE64_SPACE, &len, err);
    if (!bytes)
        return olm_error_wrap(err, "%s", what);
    if (ensure_tmp_dir(cfg, err) < 0) {
        free(bytes);
        return -1;
    }
    char *p = NULL;
    if (asprintf(&p, "%s/%s", cfg->tmp_dir, name) < 0) {
        free(bytes);
        return olm_error_set(err, "out of memory");
    }
    int rc = write_private_file(p, bytes, len, err);
    free(bytes);
    if (rc < 0) {
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

/* Either the inline `<key>-data` or the path `<key>`; data wins, as in client-go. */
static int file_or_data(kube_config *cfg, const json_t *obj, const char *key, const char *tmp_name,
                        const char *dir, const char *what, char **out, olm_error *err)
{
    char data_key[64];
    snprintf(data_key, sizeof data_key, "%s-data", key);
    const char *data = jstr(obj, data_key);
    if (data)
        return data_to_file(cfg, data, tmp_name, what, out, err);
    const char *p = jstr(obj, key);
    if (!p)
        return 0;
    char *full = resolve_path(dir, p, err);
    if (!full)
        return -1;
    if (access(full, R_OK) != 0) {
        int e = errno;
        olm_error_set(err, "%s file %s: %s", what, full, strerror(e));
        free(full);
        return -1;
    }
    *out = full;
    return 0;
}

static int strip_server(kube_config *cfg, const char *server, const char *where, olm_error *err)
{
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return olm_error_set(err, "%s: server \"%s\" must start with https:// or http://", where, server);
    cfg->server = dup_or_oom(server, err);
    if (!cfg->server)
        return -1;
    size_t n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
    return 0;
}

static int load_from_tree(const json_t *root, const char *path, const char *dir, const char *context,
                          kube_config *cfg, olm_error *err)
{
    const char *ctx_name = context ? context : jstr(root, "current-context");
    if (!ctx_name)
        return olm_error_set(err, "%s: current-context is not set (choose one with `kubectl config use-context`)", path);
    const json_t *ctx = find_named(root, "contexts", "context", ctx_name, path, err);
    if (!ctx)
        return -1;
    const char *cluster_name = jstr(ctx, "cluster");
    if (!cluster_name)
        return olm_error_set(err, "%s: context \"%s\" names no cluster", path, ctx_name);
    const json_t *cluster = find_named(root, "clusters", "cluster", cluster_name, path, err);
    if (!cluster)
        return -1;
    const char *server = jstr(cluster, "server");
    if (!server)
        return olm_error_set(err, "%s: cluster \"%s\" has no server", path, cluster_name);
    char where[512];
    snprintf(where, sizeof where, "%s: cluster \"%s\"", path, cluster_name);
    if (strip_server(cfg, server, where, err) < 0)
        return -1;
    cfg->insecure_skip_tls_verify = yaml_true(jstr(cluster, "insecure-skip-tls-verify"));
    if (file_or_data(cfg, cluster, "certificate-authority", "ca.crt", dir, where, &cfg->ca_file, err) < 0)
        return -1;

    const char *ns = jstr(ctx, "namespace");
    if (ns && !(cfg->namespace = dup_or_oom(ns, err)))
        return -1;

    const char *user_name = jstr(ctx, "user");
    if (!user_name) /* an anonymous context is legal (e.g. a plain-HTTP test server) */
        return 0;
    const json_t *user = find_named(root, "users", "user", user_name, path, err);
    if (!user)
        return -1;
    snprintf(where, sizeof where, "%s: user \"%s\"", path, user_name);
    if (json_object_get(user, "exec") || json_object_get(user, "auth-provider"))
        return olm_error_set(err, "%s: exec and auth-provider credentials are not supported; "
                             "use a token, tokenFile or client certificate", where);
    if (file_or_data(cfg, user, "client-certificate", "client.crt", dir, where, &cfg->client_cert_file, err) < 0 ||
        file_or_data(cfg, user, "client-key", "client.key", dir, where, &cfg->client_key_file, err) < 0)
        return -1;
    if (!cfg->client_cert_file != !cfg->client_key_file)
        return olm_error_set(err, "%s: client-certificate and client-key must be given together", where);
    const char *tok = jstr(user, "token");
    if (tok && !(cfg->token = dup_or_oom(tok, err)))
        return -1;
    const char *tf = jstr(user, "tokenFile");
    if (tf) {
        if (!(cfg->token_file = resolve_path(dir, tf, err)))
            return -1;
        if (access(cfg->token_file, R_OK) != 0)
            return olm_error_set(err, "%s: tokenFile %s: %s", where, cfg->token_file, strerror(errno));
    }
    return 0;
}

int kube_config_load_file(const char *path, kube_config *out, olm_error *err)
{
    return kube_config_load_file_context(path, NULL, out, err);
}

int kube_config_load_file_context(const char *path, const char *context, kube_config *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    char *text = olm_read_file(path, KUBE_MAX_FILE, &len, err);
    if (!text)
        return olm_error_wrap(err, "kubeconfig");
    json_t *root = yaml_to_json(text, len, path, err);
    free(text);
    if (!root)
        return -1;
    char *dir = NULL;
    const char *slash = strrchr(path, '/');
    if (slash && !(dir = strndup(path, slash == path ? 1 : (size_t)(slash - path)))) {
        json_decref(root);
        return olm_error_set(err, "out of memory");
    }
    int rc = load_from_tree(root, path, dir, context, out, err);
    free(dir);
    json_decref(root);
    if (rc < 0)
        kube_config_free(out);
    return rc;
}

int kube_config_load_in_cluster(kube_config *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return olm_error_set(err, "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                             "KUBERNETES_SERVICE_PORT must both be set");
    const char *dir = getenv("OLMV1_SA_DIR");
    if (!dir || !*dir)
        dir = KUBE_SA_DIR_DEFAULT;
    bool v6 = strchr(host, ':') != NULL;
    if (asprintf(&out->server, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0) {
        out->server = NULL;
        return olm_error_set(err, "out of memory");
    }
    if (asprintf(&out->token_file, "%s/token", dir) < 0) {
        out->token_file = NULL;
        goto oom;
    }
    if (access(out->token_file, R_OK) != 0) {
        olm_error_set(err, "in-cluster config: ServiceAccount token %s: %s", out->token_file, strerror(errno));
        goto fail;
    }
    char *ca = NULL;
    if (asprintf(&ca, "%s/ca.crt", dir) < 0)
        goto oom;
    if (access(ca, R_OK) == 0)
        out->ca_file = ca;
    else
        free(ca); /* fall back to the system store, as a missing CA is not fatal in client-go either */
    char *nsf = NULL;
    if (asprintf(&nsf, "%s/namespace", dir) < 0)
        goto oom;
    if (access(nsf, R_OK) == 0) {
        out->namespace = read_trimmed(nsf, err);
        if (!out->namespace) {
            free(nsf);
            goto fail;
        }
    }
    free(nsf);
    return 0;
oom:
    olm_error_set(err, "out of memory");
fail:
    kube_config_free(out);
    return -1;
}

int kube_config_load(const char *path, kube_config *out, olm_error *err)
{
    return kube_config_load_context(path, NULL, out, err);
}

int kube_config_load_context(const char *path, const char *context, kube_config *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (path)
        return kube_config_load_file_context(path, context, out, err);
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        /* KUBECONFIG may be a list; merging is not supported, the first entry that
         * exists is used (which is what every single-file setup means). */
        char *copy = strdup(env);
        if (!copy)
            return olm_error_set(err, "out of memory");
        char *save = NULL;
        for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (access(p, F_OK) == 0) {
                int rc = kube_config_load_file_context(p, context, out, err);
                free(copy);
                return rc;
            }
        }
        free(copy);
        return olm_error_set(err, "KUBECONFIG=%s: no such file", env);
    }
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (host && *host && !context)
        return kube_config_load_in_cluster(out, err);
    const char *home = getenv("HOME");
    if (!home || !*home)
        return olm_error_set(err, "no kubeconfig: set KUBECONFIG, or run in a cluster, or set HOME for ~/.kube/config");
    char *p = NULL;
    if (asprintf(&p, "%s/.kube/config", home) < 0)
        return olm_error_set(err, "out of memory");
    int rc = kube_config_load_file_context(p, context, out, err);
    free(p);
    return rc;
}

/* ------------------------------------------------------------------ copies */

static int copy_file(const char *from, const char *to, olm_error *err)
{
    size_t len = 0;
    char *data = olm_read_file(from, KUBE_MAX_FILE, &len, err);
    if (!data)
        return -1;
    int rc = write_private_file(to, (const unsigned char *)data, len, err);
    free(data);
    return rc;
}

int kube_config_with_token(const kube_config *base, const char *token, kube_config *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!token || !*token)
        return olm_error_set(err, "kube_config_with_token: empty token");
    out->insecure_skip_tls_verify = base->insecure_skip_tls_verify;
    out->request_metrics = base->request_metrics;
    if (!(out->server = dup_or_oom(base->server, err)) || !(out->token = dup_or_oom(token, err)))
        goto fail;
    if (base->namespace && !(out->namespace = dup_or_oom(base->namespace, err)))
        goto fail;
    if (base->ca_file) {
        /* A CA written from inline data lives in base's temp dir, which dies with
         * base; the copy gets its own file so the two lifetimes are independent. */
        size_t tl = base->tmp_dir ? strlen(base->tmp_dir) : 0;
        if (tl && strncmp(base->ca_file, base->tmp_dir, tl) == 0 && base->ca_file[tl] == '/') {
            if (ensure_tmp_dir(out, err) < 0)
                goto fail;
            if (asprintf(&out->ca_file, "%s/ca.crt", out->tmp_dir) < 0) {
                out->ca_file = NULL;
                olm_error_set(err, "out of memory");
                goto fail;
            }
            if (copy_file(base->ca_file, out->ca_file, err) < 0)
                goto fail;
        } else if (!(out->ca_file = dup_or_oom(base->ca_file, err))) {
            goto fail;
        }
    }
    return 0;
fail:
    kube_config_free(out);
    return -1;
}

bool kube_credential_is_impersonation(const char *credential)
{
    return credential && strncmp(credential, KUBE_IMPERSONATION_PREFIX, strlen(KUBE_IMPERSONATION_PREFIX)) == 0;
}

/* *to = a copy of from (NULL stays NULL); false when out of memory. */
static bool dup_field(char **to, const char *from, olm_error *err)
{
    return !from || (*to = dup_or_oom(from, err)) != NULL;
}

int kube_config_with_credential(const kube_config *base, const char *credential, kube_config *out, olm_error *err)
{
    if (!kube_credential_is_impersonation(credential))
        return kube_config_with_token(base, credential, out, err);
    memset(out, 0, sizeof *out);
    const char *user = credential + strlen(KUBE_IMPERSONATION_PREFIX);
    size_t user_len = strcspn(user, " ");
    if (user_len == 0)
        return olm_error_set(err, "kube_config_with_credential: no user to impersonate");
    out->insecure_skip_tls_verify = base->insecure_skip_tls_verify;
    out->request_metrics = base->request_metrics;
    if (!dup_field(&out->server, base->server, err) || !dup_field(&out->ca_file, base->ca_file, err) ||
        !dup_field(&out->client_cert_file, base->client_cert_file, err) ||
        !dup_field(&out->client_key_file, base->client_key_file, err) || !dup_field(&out->token, base->token, err) ||
        !dup_field(&out->token_file, base->token_file, err) || !dup_field(&out->namespace, base->namespace, err) ||
        !(out->impersonate_user = strndup(user, user_len))) {
        if (!out->impersonate_user)
            olm_error_set(err, "out of memory");
        kube_config_free(out);
        return -1;
    }
    return 0;
}

static void remove_tmp(const char *dir)
{
    static const char *const names[] = {"ca.crt", "client.crt", "client.key"};
    char p[4096];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

void kube_config_free(kube_config *cfg)
{
    if (!cfg)
        return;
    if (cfg->tmp_dir)
        remove_tmp(cfg->tmp_dir);
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->client_cert_file);
    free(cfg->client_key_file);
    if (cfg->token) /* do not leave credentials in freed heap memory */
        explicit_bzero(cfg->token, strlen(cfg->token));
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->impersonate_user);
    free(cfg->namespace);
    free(cfg->tmp_dir);
    memset(cfg, 0, sizeof *cfg);
}

/* ------------------------------------------------------------------ libcurl */

#define SETOPT(h, opt, val)                                                                  \
    do {                                                                                     \
        CURLcode rc_ = curl_easy_setopt((h), (opt), (val));                                  \
        if (rc_ != CURLE_OK)                                                                 \
            return olm_error_set(err, "libcurl: setting " #opt ": %s", curl_easy_strerror(rc_)); \
    } while (0)

int kube_curl_apply(CURL *h, const kube_config *cfg, struct curl_slist **headers, olm_error *err)
{
    /* The kubeconfig's CA replaces the system store, as client-go's does.  No extra CAs and
     * no profile here, so the handle keeps no pointer to `o` (the transfer comes later, on
     * the loop); the callers set their own timeouts after this. */
    http_client_opts o = {.tls = {.ca_file = cfg->ca_file, .client_cert_file = cfg->client_cert_file,
                                  .client_key_file = cfg->client_key_file,
                                  .skip_verify = cfg->insecure_skip_tls_verify}};
    if (http_client_setup(h, cfg->server ? cfg->server : "", &o, err) < 0)
        return -1;
    /* A token file wins over a static token (client-go: "the last successfully
     * read value takes precedence"); it is re-read so rotated projected tokens work. */
    char *file_tok = NULL;
    const char *tok = cfg->token;
    if (cfg->token_file) {
        file_tok = read_trimmed(cfg->token_file, err);
        if (!file_tok)
            return olm_error_wrap(err, "bearer token");
        if (!*file_tok) {
            free(file_tok);
            return olm_error_set(err, "bearer token file %s is empty", cfg->token_file);
        }
        tok = file_tok;
    }
    if (tok) {
        char *hdr = NULL;
        int n = asprintf(&hdr, "Authorization: Bearer %s", tok);
        if (file_tok) {
            explicit_bzero(file_tok, strlen(file_tok));
            free(file_tok);
        }
        if (n < 0)
            return olm_error_set(err, "out of memory");
        struct curl_slist *nl = curl_slist_append(*headers, hdr);
        explicit_bzero(hdr, (size_t)n);
        free(hdr);
        if (!nl)
            return olm_error_set(err, "out of memory");
        *headers = nl;
    }
    if (cfg->impersonate_user) {
        char *hdr = NULL;
        if (asprintf(&hdr, "Impersonate-User: %s", cfg->impersonate_user) < 0)
            return olm_error_set(err, "out of memory");
        struct curl_slist *nl = curl_slist_append(*headers, hdr);
        free(hdr);
        if (!nl)
            return olm_error_set(err, "out of memory");
        *headers = nl;
    }
    return 0;
}

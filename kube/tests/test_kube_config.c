/* Unit tests for kube_config: kubeconfig parsing (inline data, relative paths,
 * contexts, tokens), in-cluster config through OLMV1_SA_DIR, with_token copies,
 * and kube_curl_apply's Authorization header.  Everything runs in a private
 * temporary directory; no network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube_config.h"

static char tmpdir[256];

static void write_text(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/kcfg-test-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(tmpdir));
    char p[512];
    snprintf(p, sizeof p, "%s/pki", tmpdir);
    mkdir(p, 0700);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static int load_text(const char *yaml, kube_config *cfg, olm_error *err)
{
    write_text("config", yaml);
    char p[512];
    snprintf(p, sizeof p, "%s/config", tmpdir);
    return kube_config_load(p, cfg, err);
}

#define HEAD "apiVersion: v1\nkind: Config\n"

static void test_inline_data(void **state)
{
    (void)state;
    kube_config cfg;
    olm_error err = {""};
    int rc = load_text(HEAD
                       "current-context: admin\n"
                       "clusters:\n"
                       "- name: local\n"
                       "  cluster:\n"
                       "    server: https://127.0.0.1:6443/\n"
                       "    certificate-authority-data: Q0EgUEVNCg==\n"
                       "contexts:\n"
                       "- name: admin\n"
                       "  context: {cluster: local, user: admin, namespace: olmv1-system}\n"
                       "users:\n"
                       "- name: admin\n"
                       "  user:\n"
                       "    client-certificate-data: Q0VS\n      VAo=\n"
                       "    client-key-data: S0VZCg\n",
                       &cfg, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(cfg.server, "https://127.0.0.1:6443");
    assert_string_equal(cfg.namespace, "olmv1-system");
    assert_non_null(cfg.tmp_dir);
    assert_string_equal(slurp(cfg.ca_file), "CA PEM\n");
    assert_string_equal(slurp(cfg.client_cert_file), "CERT\n");
    assert_string_equal(slurp(cfg.client_key_file), "KEY\n");
    struct stat st;
    assert_int_equal(stat(cfg.client_key_file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_null(cfg.token);
    assert_false(cfg.insecure_skip_tls_verify);
    char dir[256];
    snprintf(dir, sizeof dir, "%s", cfg.tmp_dir);
    kube_config_free(&cfg);
    assert_int_not_equal(access(dir, F_OK), 0); /* temp files removed */
}

static void test_relative_paths_and_contexts(void **state)
{
    (void)state;
    write_text("pki/ca.crt", "ca");
    write_text("pki/u.crt", "c");
    write_text("pki/u.key", "k");
    write_text("tok", "  file-token\n");
    kube_config cfg;
    olm_error err = {""};
    int rc = load_text(HEAD
                       "current-context: second\n"
                       "clusters:\n"
                       "- name: a\n  cluster: {server: 'https://a.example:1'}\n"
                       "- name: b\n  cluster:\n    server: https://b.example:2\n"
                       "    certificate-authority: pki/ca.crt\n"
                       "    insecure-skip-tls-verify: yes\n"
                       "contexts:\n"
                       "- name: first\n  context: {cluster: a, user: u1}\n"
                       "- name: second\n  context: {cluster: b, user: u2}\n"
                       "users:\n"
                       "- name: u1\n  user: {token: nope}\n"
                       "- name: u2\n  user:\n    client-certificate: pki/u.crt\n"
                       "    client-key: pki/u.key\n    token: static\n    tokenFile: tok\n",
                       &cfg, &err);
    assert_int_equal(rc, 0);
    char want[512];
    assert_string_equal(cfg.server, "https://b.example:2");
    snprintf(want, sizeof want, "%s/pki/ca.crt", tmpdir);
    assert_string_equal(cfg.ca_file, want);
    snprintf(want, sizeof want, "%s/pki/u.key", tmpdir);
    assert_string_equal(cfg.client_key_file, want);
    snprintf(want, sizeof want, "%s/tok", tmpdir);
    assert_string_equal(cfg.token_file, want);
    assert_string_equal(cfg.token, "static");
    assert_true(cfg.insecure_skip_tls_verify);
    assert_null(cfg.namespace);
    assert_null(cfg.tmp_dir);
    kube_config_free(&cfg);

    /* --context: another context of the same file, and a missing one. */
    char p[512];
    snprintf(p, sizeof p, "%s/config", tmpdir);
    assert_int_equal(kube_config_load_context(p, "first", &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://a.example:1");
    assert_string_equal(cfg.token, "nope");
    assert_null(cfg.ca_file);
    kube_config_free(&cfg);
    assert_int_equal(kube_config_load_context(p, "third", &cfg, &err), -1);
    assert_non_null(strstr(err.msg, "no contexts entry named \"third\""));
}

struct bad_case {
    const char *yaml;
    const char *want;
};

static void test_errors(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {HEAD "clusters: []\n", "current-context is not set"},
        {HEAD "current-context: x\ncontexts: []\n", "no contexts entry named \"x\""},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n", "no clusters entry named \"c\""},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {}\n",
         "cluster \"c\" has no server"},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: 127.0.0.1:6443}\n",
         "must start with https://"},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
              "  cluster: {server: 'https://h', certificate-authority-data: '!!notbase64'}\n",
         "invalid base64"},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n"
              "  cluster: {server: 'https://h', certificate-authority: missing/ca.crt}\n",
         "missing/ca.crt: No such file"},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
              "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {client-certificate-data: Q0VSVAo=}\n",
         "client-certificate and client-key must be given together"},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
              "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {exec: {command: gke-auth}}\n",
         "exec and auth-provider credentials are not supported"},
        {HEAD "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
              "  cluster: {server: 'https://h'}\nusers:\n- name: u\n  user: {tokenFile: nothere}\n",
         "tokenFile"},
        {"a: [unclosed\n", "YAML error at line"},
        {"- just\n- a list\n", "must be a YAML mapping"},
        {"", "empty kubeconfig"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kube_config cfg;
        olm_error err = {""};
        int rc = load_text(cases[i].yaml, &cfg, &err);
        if (rc != -1 || !strstr(err.msg, cases[i].want))
            fail_msg("case %zu: rc=%d err=\"%s\", want \"%s\"", i, rc, err.msg, cases[i].want);
        assert_null(cfg.server); /* nothing half-filled */
    }
    kube_config cfg;
    olm_error err = {""};
    assert_int_equal(kube_config_load("/nonexistent/kubeconfig", &cfg, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/kubeconfig"));
}

static void test_env_kubeconfig(void **state)
{
    (void)state;
    write_text("envcfg", HEAD "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
                              "clusters:\n- name: k\n  cluster: {server: 'http://127.0.0.1:1'}\n");
    char p[600];
    snprintf(p, sizeof p, "/nonexistent/first:%s/envcfg", tmpdir);
    setenv("KUBECONFIG", p, 1);
    kube_config cfg;
    olm_error err = {""};
    assert_int_equal(kube_config_load(NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "http://127.0.0.1:1");
    kube_config_free(&cfg);
    setenv("KUBECONFIG", "/nonexistent/only", 1);
    assert_int_equal(kube_config_load(NULL, &cfg, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/only"));
    unsetenv("KUBECONFIG");
}

static void test_in_cluster(void **state)
{
    (void)state;
    char sa[512];
    snprintf(sa, sizeof sa, "%s/sa", tmpdir);
    mkdir(sa, 0700);
    write_text("sa/token", "tok-1\n");
    write_text("sa/ca.crt", "ca");
    write_text("sa/namespace", "olmv1-system\n");
    setenv("OLMV1_SA_DIR", sa, 1);
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    kube_config cfg;
    olm_error err = {""};
    assert_int_equal(kube_config_load(NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    assert_string_equal(cfg.namespace, "olmv1-system");
    char want[600];
    snprintf(want, sizeof want, "%s/token", sa);
    assert_string_equal(cfg.token_file, want);
    snprintf(want, sizeof want, "%s/ca.crt", sa);
    assert_string_equal(cfg.ca_file, want);
    assert_null(cfg.token);

    /* The token is re-read per call: a rotated projected token is picked up. */
    CURL *h = curl_easy_init();
    assert_non_null(h);
    struct curl_slist *hdrs = NULL;
    assert_int_equal(kube_curl_apply(h, &cfg, &hdrs, &err), 0);
    assert_string_equal(hdrs->data, "Authorization: Bearer tok-1");
    curl_slist_free_all(hdrs);
    hdrs = NULL;
    write_text("sa/token", "tok-2");
    assert_int_equal(kube_curl_apply(h, &cfg, &hdrs, &err), 0);
    assert_string_equal(hdrs->data, "Authorization: Bearer tok-2");
    curl_slist_free_all(hdrs);
    hdrs = NULL;
    unlink(cfg.token_file);
    assert_int_equal(kube_curl_apply(h, &cfg, &hdrs, &err), -1);
    assert_non_null(strstr(err.msg, "bearer token"));
    assert_null(hdrs);
    curl_easy_cleanup(h);
    kube_config_free(&cfg);

    /* IPv6 service host; missing token is an error naming the file. */
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(kube_config_load_in_cluster(&cfg, &err), -1);
    assert_non_null(strstr(err.msg, "/sa/token"));
    write_text("sa/token", "t");
    assert_int_equal(kube_config_load_in_cluster(&cfg, &err), 0);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");
    kube_config_free(&cfg);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_load_in_cluster(&cfg, &err), -1);
    assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_HOST"));
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("OLMV1_SA_DIR");
}

/* Namespace ns, a server with an inline CA, a user with an inline client certificate and key. */
#define CERT_USER_KUBECONFIG                                                                                      \
    HEAD "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u, namespace: ns}\n"             \
         "clusters:\n- name: k\n  cluster: {server: 'https://h:1', certificate-authority-data: Q0EgUEVNCg==}\n"     \
         "users:\n- name: u\n  user: {client-certificate-data: Q0VSVAo=, client-key-data: S0VZCg==}\n"

static void test_with_token(void **state)
{
    (void)state;
    kube_config base;
    olm_error err = {""};
    int rc = load_text(CERT_USER_KUBECONFIG, &base, &err);
    assert_int_equal(rc, 0);
    kube_config sa;
    assert_int_equal(kube_config_with_token(&base, "sa-token", &sa, &err), 0);
    assert_string_equal(sa.server, "https://h:1");
    assert_string_equal(sa.token, "sa-token");
    assert_null(sa.client_cert_file);
    assert_null(sa.client_key_file);
    assert_string_equal(sa.namespace, "ns");
    assert_string_not_equal(sa.ca_file, base.ca_file);
    kube_config_free(&base); /* the copy's CA must survive its base */
    assert_string_equal(slurp(sa.ca_file), "CA PEM\n");

    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = NULL;
    assert_int_equal(kube_curl_apply(h, &sa, &hdrs, &err), 0);
    assert_string_equal(hdrs->data, "Authorization: Bearer sa-token");
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    kube_config_free(&sa);

    assert_int_equal(kube_config_with_token(&sa, "", &base, &err), -1);
    assert_non_null(strstr(err.msg, "empty token"));
}

/* An impersonation credential keeps the base's own credentials (its files, by name) and adds
 * the user; a token credential is kube_config_with_token's copy. */
static void test_with_credential(void **state)
{
    (void)state;
    kube_config base;
    olm_error err = {""};
    int rc = load_text(CERT_USER_KUBECONFIG, &base, &err);
    assert_int_equal(rc, 0);
    assert_false(kube_credential_is_impersonation("eyJ.tok"));
    kube_config imp;
    assert_int_equal(kube_config_with_credential(&base, KUBE_IMPERSONATION_PREFIX "system:serviceaccount:n:s 7", &imp, &err), 0);
    assert_string_equal(imp.impersonate_user, "system:serviceaccount:n:s");
    assert_string_equal(imp.server, "https://h:1");
    assert_string_equal(imp.ca_file, base.ca_file); /* the same files: one TLS configuration */
    assert_string_equal(imp.client_cert_file, base.client_cert_file);
    assert_string_equal(imp.client_key_file, base.client_key_file);
    assert_null(imp.token);
    assert_null(imp.tmp_dir); /* the files stay the base's */
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = NULL;
    assert_int_equal(kube_curl_apply(h, &imp, &hdrs, &err), 0);
    assert_non_null(hdrs);
    assert_string_equal(hdrs->data, "Impersonate-User: system:serviceaccount:n:s");
    assert_null(hdrs->next); /* a client certificate: no Authorization header */
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    kube_config_free(&imp);

    kube_config tok;
    assert_int_equal(kube_config_with_credential(&base, "sa-token", &tok, &err), 0);
    assert_string_equal(tok.token, "sa-token");
    assert_null(tok.impersonate_user);
    assert_null(tok.client_cert_file);
    kube_config_free(&tok);
    assert_int_equal(kube_config_with_credential(&base, KUBE_IMPERSONATION_PREFIX, &tok, &err), -1);
    kube_config_free(&base);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_inline_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relative_paths_and_contexts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_kubeconfig, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster, setup, teardown),
        cmocka_unit_test_setup_teardown(test_with_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_with_credential, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}

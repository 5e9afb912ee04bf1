/* test_kubeconfig: a token kubeconfig for the tests that load one (daemon_runtime_connect),
 * written to a fresh file made from the mkstemp template `path` (rewritten in place).  Aborts
 * when it cannot be written. */
#ifndef OLM_TESTSUPPORT_TEST_KUBECONFIG_H
#define OLM_TESTSUPPORT_TEST_KUBECONFIG_H

/* server: "http://127.0.0.1:1" for one nobody listens on. */
void test_kubeconfig_write(char *path, const char *server);

#endif

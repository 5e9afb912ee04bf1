/* test_kubeconfig: see the header. */
#include "test_kubeconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void test_kubeconfig_write(char *path, const char *server)
{
    int fd = mkstemp(path);
    char kc[1024];
    int n = snprintf(kc, sizeof kc,
                     "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                     "clusters:\n- name: k\n  cluster:\n    server: %s\n"
                     "users:\n- name: u\n  user:\n    token: t\n"
                     "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n",
                     server);
    if (fd < 0 || n <= 0 || (size_t)n >= sizeof kc || write(fd, kc, (size_t)n) != n) {
        perror("test_kubeconfig_write");
        abort();
    }
    close(fd);
}

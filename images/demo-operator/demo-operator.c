/* demo-operator: the container of the demo package's Deployment (scripts/demo-package.py), so
 * that on a real node (OLMV1_NODE=real) the installed extension runs a real process.
 *
 * Prints one line with its version (argv[1]), user and namespace, then sleeps until SIGTERM or
 * SIGINT and says so; exit 0. Built static by demo-package.py: the image holds only this file. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int signo)
{
    stop = signo;
}

int main(int argc, char **argv)
{
    char ns[64] = "?";
    FILE *f = fopen("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "r");
    if (f) {
        if (!fgets(ns, sizeof ns, f))
            strcpy(ns, "?");
        fclose(f);
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0) {
        perror("demo-operator: sigaction");
        return 1;
    }
    printf("olmv1-demo-operator %s running as uid %ld in namespace %s\n", argc > 1 ? argv[1] : "?",
           (long)getuid(), ns);
    fflush(stdout);
    while (!stop)
        pause();
    printf("olmv1-demo-operator: signal %d, stopping\n", (int)stop);
    return 0;
}

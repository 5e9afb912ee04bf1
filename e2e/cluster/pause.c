/* pause: the sandbox ("pause") container of the real test node, and the process that holds the
 * node's network and mount namespaces (node.sh). Like Kubernetes' build/pause/linux/pause.c:
 * sleeps until SIGINT/SIGTERM, reaps children (as PID 1 of a Pod that shares its PID namespace
 * it inherits orphans). Arguments are ignored (node.sh passes the state dir, so down.sh can tell
 * its own holder from a recycled PID). Built static: the image holds nothing but /pause. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void sigdown(int signo)
{
    (void)signo;
    _exit(0);
}

static void sigreap(int signo)
{
    (void)signo;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int main(void)
{
    struct sigaction down = {.sa_handler = sigdown}, reap = {.sa_handler = sigreap, .sa_flags = SA_NOCLDSTOP};
    if (sigaction(SIGINT, &down, NULL) < 0 || sigaction(SIGTERM, &down, NULL) < 0 ||
        sigaction(SIGCHLD, &reap, NULL) < 0) {
        perror("pause: sigaction");
        return 1;
    }
    for (;;)
        pause();
}

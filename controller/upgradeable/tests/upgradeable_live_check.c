/* upgradeable_live_check: the upgradeable reconciler against a real kube-apiserver.
 *
 * Not a unit test (needs a cluster and KUBECONFIG; run by e2e/tests/test_upgradeable.py).
 *
 *   upgradeable_live_check once [--system-namespace NS] [--cluster-version V]
 *       one upgradeable_reconcile_once pass; prints "written", or "not-openshift"
 *       (exit 3); exit 1 with the error on stderr.
 *   upgradeable_live_check watch [--system-namespace NS] [--cluster-version V]
 *       the event-driven reconciler (informers + work queue) until SIGTERM/SIGINT,
 *       then a clean stop; prints "started" once running, "stopped" at the end.
 *   --revisions (either mode): as operator-controller with BoxcutterRuntime on, the
 *       installed ClusterObjectSet revisions count too (upgradeable_reconcile_opts.revisions). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upgradeable_reconciler.h"

static upgradeable_reconciler *rec;
static uv_signal_t sig_term, sig_int;

static void stopped(void *data)
{
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_int, NULL);
    printf("stopped\n");
    fflush(stdout);
}

static void on_signal(uv_signal_t *h, int signum)
{
    uv_signal_stop(&sig_term);
    uv_signal_stop(&sig_int);
    upgradeable_reconciler_stop(rec, stopped, NULL);
}

static int watch(kube_client *c, const upgradeable_reconcile_opts *o)
{
    uv_loop_t *loop = uv_default_loop();
    olm_error err;
    int rc = upgradeable_reconciler_start(loop, c, o, &rec, &err);
    if (rc == UPGRADEABLE_NOT_OPENSHIFT) {
        printf("not-openshift\n");
        return 3;
    }
    if (rc < 0) {
        fprintf(stderr, "upgradeable_live_check: %s\n", err.msg);
        uv_run(loop, UV_RUN_DEFAULT); /* lets the partial start tear down */
        return 1;
    }
    uv_signal_init(loop, &sig_term);
    uv_signal_init(loop, &sig_int);
    uv_signal_start(&sig_term, on_signal, SIGTERM);
    uv_signal_start(&sig_int, on_signal, SIGINT);
    printf("started\n");
    fflush(stdout);
    uv_run(loop, UV_RUN_DEFAULT);
    return uv_loop_close(loop) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"system-namespace", required_argument, NULL, 'n'},
        {"cluster-version", required_argument, NULL, 'v'},
        {"revisions", no_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    upgradeable_reconcile_opts o = {0};
    int opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (opt == 'n')
            o.system_namespace = optarg;
        else if (opt == 'v')
            o.cluster_version_override = optarg;
        else if (opt == 'r')
            o.revisions = true;
        else
            return 2;
    }
    const char *mode = optind < argc ? argv[optind] : "once";
    kube_config cfg;
    olm_error err;
    if (kube_config_load(NULL, &cfg, &err) < 0) {
        fprintf(stderr, "upgradeable_live_check: %s\n", err.msg);
        return 1;
    }
    kube_client *c = kube_client_new(&cfg, NULL, &err);
    if (!c) {
        kube_config_free(&cfg);
        fprintf(stderr, "upgradeable_live_check: %s\n", err.msg);
        return 1;
    }
    int rc;
    if (strcmp(mode, "watch") == 0) {
        rc = watch(c, &o);
    } else {
        rc = upgradeable_reconcile_once(c, &o, &err);
        if (rc == UPGRADEABLE_NOT_OPENSHIFT)
            printf("not-openshift\n");
        else if (rc == 0)
            printf("written\n");
        else
            fprintf(stderr, "upgradeable_live_check: %s\n", err.msg);
        rc = rc == UPGRADEABLE_NOT_OPENSHIFT ? 3 : rc < 0 ? 1 : 0;
    }
    kube_client_free(c);
    return rc;
}

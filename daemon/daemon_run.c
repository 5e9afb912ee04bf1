/* daemon_runtime_run: the start-up order both daemons follow, and the election's hooks
 * (daemon_runtime.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon_runtime.h"
#include "oci_pull.h"
#include "olm_fs.h"
#include "olm_log.h"

/* Pulls killed with a previous process left temp dirs in the pull cache that nothing else
 * removes (caches and GC leave dot-names alone).  Before any pull can run. */
static void sweep_interrupted_pulls(daemon_runtime *rt, const daemon_spec *s)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", s->cache_dir, s->pull_cache);
    olm_error err;
    int n = oci_pull_cache_sweep(dir, &err);
    if (n < 0)
        olm_log(OLM_LOG_WARN, rt->log_key, NULL, "sweeping interrupted pulls: %s", err.msg);
    else if (n > 0)
        olm_log(OLM_LOG_INFO, rt->log_key, NULL, "removed %d temp dir%s of interrupted pulls from %s", n,
                n == 1 ? "" : "s", dir);
}

static void on_signal(void *data, int signum)
{
    (void)signum; /* the runtime logged it */
    const daemon_spec *s = data;
    s->begin_shutdown(s->app, 0);
}

static void start_controllers_once(daemon_runtime *rt, const daemon_spec *s)
{
    olm_error err;
    if (rt->controllers_started)
        return;
    if (s->start_controllers(s->app, &err) != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "starting the reconciler: %s", err.msg);
        s->begin_shutdown(s->app, 1);
        return;
    }
    rt->controllers_started = true;
}

static void on_started_leading(void *data)
{
    const daemon_spec *s = data;
    start_controllers_once(s->rt, s);
}

static void on_stopped_leading(void *data)
{
    const daemon_spec *s = data;
    s->begin_shutdown(s->app, 1); /* a fresh start campaigns again, as controller-runtime does */
}

int daemon_runtime_run(daemon_runtime *rt, const daemon_spec *s, bool *started)
{
    if (daemon_runtime_connect(rt, s->kubeconfig) != 0)
        return 1;
    if (olm_mkdir_p(s->cache_dir) != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "%s %s: cannot create it: %s", s->cache_flag, s->cache_dir,
                strerror(errno));
        return 1;
    }
    sweep_interrupted_pulls(rt, s);
    rt->loop = uv_default_loop();
    char msg[OLM_ERROR_MAX + 256];
    if (s->start_listeners(s->app, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: %s\n", rt->prog, msg);
        uv_loop_close(rt->loop);
        return 1;
    }
    daemon_runtime_watch_signals(rt, on_signal, (void *)s);
    if (s->before_start)
        s->before_start(s->app);
    *started = true;

    olm_error err;
    int rc = daemon_runtime_start_transport(rt, &err);
    if (rc == 0 && s->leader_elect)
        rc = daemon_runtime_campaign(rt, s->lease_namespace, s->lease_name, on_started_leading, on_stopped_leading,
                                     (void *)s, &err);
    if (rc != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "starting: %s", err.msg);
        s->begin_shutdown(s->app, 1);
    } else {
        if (!s->leader_elect)
            start_controllers_once(rt, s);
        if (!rt->stopping)
            s->log_started(s->app);
    }
    uv_run(rt->loop, UV_RUN_DEFAULT);
    if (s->listeners_open && s->listeners_open(s->app))
        return -1; /* a server could not close with connections open: the OS reclaims it */
    uv_loop_close(rt->loop);
    return 0;
}

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
    daemon_runtime_terminate(data);
}

static void start_controllers_once(daemon_runtime *rt, const daemon_spec *s)
{
    olm_error err;
    if (rt->controllers_started)
        return;
    if (s->start_controllers(s->app, &err) != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "starting the reconciler: %s", err.msg);
        daemon_runtime_shutdown(rt, 1);
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
    daemon_runtime_lost_lease(s->rt);
}

/* Binds the daemon's servers, then the health and metrics listeners, before anything else
 * runs, so that a port in use is one line and exit 1 with nothing started; on failure those
 * already up are closed again (the loop runs until they are). */
static int start_listening(daemon_runtime *rt, const daemon_spec *s)
{
    char msg[OLM_ERROR_MAX + 256];
    int rc = s->start_servers ? s->start_servers(s->app, msg, sizeof msg) : 0;
    if (rc == 0) {
        olm_http_listeners_opts o = {.flags = rt->flags, .log_key = rt->log_key,
                                     .health = daemon_runtime_health_answer,
                                     .metrics = daemon_runtime_metrics_answer, .arg = rt};
        rc = olm_http_listeners_start(rt->loop, &o, &rt->listeners, msg, sizeof msg);
        if (rc == 0) {
            daemon_runtime_own_server(rt, &rt->listeners.health);
            daemon_runtime_own_server(rt, &rt->listeners.metrics);
        }
    }
    if (rc == 0)
        return 0;
    fprintf(stderr, "%s: %s\n", rt->prog, msg);
    daemon_runtime_stop_servers(rt);
    uv_run(rt->loop, UV_RUN_DEFAULT); /* lets them close */
    uv_loop_close(rt->loop);
    return -1;
}

int daemon_runtime_run(daemon_runtime *rt, const daemon_spec *s, bool *started)
{
    rt->spec = s;
    if (daemon_runtime_connect(rt, s->kubeconfig) != 0)
        return 1;
    if (olm_mkdir_p(s->cache_dir) != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "%s %s: cannot create it: %s", s->cache_flag, s->cache_dir,
                strerror(errno));
        return 1;
    }
    sweep_interrupted_pulls(rt, s);
    rt->loop = uv_default_loop();
    if (start_listening(rt, s) != 0)
        return 1;
    daemon_runtime_watch_signals(rt, on_signal, rt);
    if (s->before_start)
        s->before_start(s->app);
    *started = true;

    olm_error err;
    int rc = daemon_runtime_start_transport(rt, &err);
    if (rc == 0 && s->start_on_every_replica)
        rc = s->start_on_every_replica(s->app, &err);
    if (rc == 0 && s->leader_elect)
        rc = daemon_runtime_campaign(rt, s->lease_namespace, s->lease_name, on_started_leading, on_stopped_leading,
                                     (void *)s, &err);
    if (rc != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "starting: %s", err.msg);
        daemon_runtime_shutdown(rt, 1);
    } else {
        if (!s->leader_elect)
            start_controllers_once(rt, s);
        if (!rt->stopping)
            s->log_started(s->app);
    }
    uv_run(rt->loop, UV_RUN_DEFAULT);
    if (daemon_runtime_servers_open(rt))
        return -1; /* a server could not close with connections open: the OS reclaims it */
    uv_loop_close(rt->loop);
    return 0;
}

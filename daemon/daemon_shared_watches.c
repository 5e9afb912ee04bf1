/* daemon_runtime: the watches both daemons run for every pull, and the close count-down
 * (daemon_runtime.h). */
#include "daemon_runtime.h"
#include "daemon_flags.h"
#include <stdio.h>

int daemon_runtime_follow_registries(daemon_runtime *rt, const char *path, char *msg, size_t msgsz)
{
    olm_error err;
    rt->registries = oci_registries_follow_new(path, path != NULL, olm_daemon_registries_notice, NULL, &err);
    if (rt->registries)
        return 0;
    snprintf(msg, msgsz, "%s%s", path ? "--registries-conf: " : "", err.msg);
    return -1;
}

int daemon_runtime_watch_pull_secret(daemon_runtime *rt, const char *ref, void (*on_loaded)(void *data), void *data,
                                     olm_error *err)
{
    if (!ref)
        return 0;
    if (!(rt->pull_secret = oci_auth_store_new(err)))
        return -1;
    pull_secret_watch_options o = {
        .ref = ref, .store = rt->pull_secret, .log_key = rt->log_key, .on_loaded = on_loaded, .data = data};
    rt->secret_watch = pull_secret_watch_start(rt->uc, kube_client_config(rt->client), &o, err);
    return rt->secret_watch ? 0 : -1;
}

static void transport_closed(void *data)
{
    ((daemon_runtime *)data)->uc = NULL;
}

void daemon_runtime_closing_begin(daemon_runtime *rt)
{
    rt->closing = 1;
}

void daemon_runtime_closing_add(daemon_runtime *rt)
{
    rt->closing++;
}

void daemon_runtime_closing_done(daemon_runtime *rt)
{
    if (--rt->closing == 0 && rt->uc)
        kube_uvcurl_close(rt->uc, transport_closed, rt);
}

static void secret_watch_closed(void *data)
{
    daemon_runtime *rt = data;
    rt->secret_watch = NULL;
    daemon_runtime_closing_done(rt);
}

static void leader_closed(void *data)
{
    daemon_runtime *rt = data;
    rt->leader = NULL;
    daemon_runtime_closing_done(rt);
}

void daemon_runtime_stop_watches(daemon_runtime *rt)
{
    if (rt->secret_watch) {
        daemon_runtime_closing_add(rt);
        pull_secret_watch_stop(rt->secret_watch, secret_watch_closed, rt);
    }
    if (rt->leader) {
        daemon_runtime_closing_add(rt);
        kube_leader_stop(rt->leader, leader_closed, rt); /* releases the Lease */
    }
}

int daemon_runtime_preflight(daemon_runtime *rt, const olm_daemon_flags *common, olm_ca_set **pull_cas)
{
    char msg[OLM_ERROR_MAX + 256];
    rt->flags = common;
    if (olm_daemon_preflight(common, pull_cas, msg, sizeof msg) != 0 ||
        daemon_runtime_follow_registries(rt, common->registries_conf, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: %s\n", rt->prog, msg);
        return 1;
    }
    rt->election.lease_duration_ms = common->lease_duration_ms;
    rt->election.renew_deadline_ms = common->renew_deadline_ms;
    rt->election.retry_period_ms = common->retry_period_ms;
    rt->system_namespace = common->system_namespace ? common->system_namespace
                                                    : olm_daemon_system_namespace(OLM_POD_NAMESPACE_FILE, rt->ns_buf,
                                                                                  sizeof rt->ns_buf);
    return -1;
}

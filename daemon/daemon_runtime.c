#include "daemon_runtime.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "olm_log.h"

int daemon_runtime_connect(daemon_runtime *rt, const char *kubeconfig_path)
{
    olm_error err;
    kube_config cfg;
    if (kube_config_load(kubeconfig_path, &cfg, &err) != 0) {
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "loading the kubeconfig: %s", err.msg);
        return -1;
    }
    if (!(rt->rest_metrics = kube_request_metrics_new())) {
        kube_config_free(&cfg);
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "out of memory");
        return -1;
    }
    cfg.request_metrics = rt->rest_metrics;
    kube_client_options co = {.user_agent = rt->prog};
    rt->client = kube_client_new(&cfg, &co, &err); /* takes cfg when it succeeds */
    if (!rt->client) {
        kube_config_free(&cfg);
        olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "kube client: %s", err.msg);
        return -1;
    }
    return 0;
}

int daemon_runtime_start_transport(daemon_runtime *rt, olm_error *err)
{
    rt->uc = kube_uvcurl_new(rt->loop, err);
    if (!rt->uc)
        return -1;
    kube_uvcurl_set_request_metrics(rt->uc, rt->rest_metrics);
    if (!rt->listeners.metrics)
        return 0;
    rt->authz = kube_authz_new(rt->uc, kube_client_config(rt->client), NULL, err);
    if (!rt->authz)
        return -1;
    olm_http_gate g = kube_authz_gate(rt->authz);
    olm_http_server_set_gate(rt->listeners.metrics, &g);
    return 0;
}

/* ------------------------------------------------------------ signals */

static void on_signal(uv_signal_t *h, int signum)
{
    daemon_runtime *rt = h->data;
    olm_log(OLM_LOG_INFO, rt->log_key, NULL, "signal %d: shutting down", signum);
    rt->on_signal(rt->signal_data, signum);
}

void daemon_runtime_watch_signals(daemon_runtime *rt, void (*cb)(void *data, int signum), void *data)
{
    rt->on_signal = cb;
    rt->signal_data = data;
    uv_signal_init(rt->loop, &rt->sigterm);
    uv_signal_init(rt->loop, &rt->sigint);
    rt->sigterm.data = rt->sigint.data = rt;
    uv_signal_start(&rt->sigterm, on_signal, SIGTERM);
    uv_signal_start(&rt->sigint, on_signal, SIGINT);
    rt->signals_on = true;
}

void daemon_runtime_close_signals(daemon_runtime *rt)
{
    if (!rt->signals_on)
        return;
    rt->signals_on = false;
    uv_close((uv_handle_t *)&rt->sigterm, NULL);
    uv_close((uv_handle_t *)&rt->sigint, NULL);
}

/* ------------------------------------------------------------ leader election */

static void on_started_leading(void *data)
{
    daemon_runtime *rt = data;
    olm_log(OLM_LOG_INFO, rt->log_key, NULL, "became leader (Lease %s)", rt->election.lease);
    if (!rt->stopping)
        rt->election.started(rt->election.data);
}

static void on_stopped_leading(void *data)
{
    daemon_runtime *rt = data;
    if (rt->stopping)
        return; /* our own shutdown released the Lease */
    olm_log(OLM_LOG_ERROR, rt->log_key, NULL, "leader election lost; exiting");
    rt->election.stopped(rt->election.data);
}

static void on_new_leader(const char *identity, void *data)
{
    daemon_runtime *rt = data;
    olm_log(OLM_LOG_INFO, rt->log_key, NULL, "current leader: %s", identity && *identity ? identity : "(none)");
}

static void on_leader_error(const char *msg, void *data)
{
    daemon_runtime *rt = data;
    olm_log(OLM_LOG_WARN, rt->log_key, NULL, "leader election: %s", msg);
}

void daemon_leader_identity(const char *fallback_host, char *buf, size_t bufsz)
{
    char host[128];
    if (gethostname(host, sizeof host - 1) != 0 || !*host)
        snprintf(host, sizeof host, "%s", fallback_host);
    host[sizeof host - 1] = '\0';
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
    snprintf(buf, bufsz, "%s_%d_%08x", host, (int)getpid(), (unsigned)rand_r(&seed));
}

int daemon_runtime_campaign(daemon_runtime *rt, const char *ns, const char *lease, void (*started)(void *data),
                            void (*stopped)(void *data), void *data, olm_error *err)
{
    rt->election.started = started;
    rt->election.stopped = stopped;
    rt->election.data = data;
    rt->election.lease = lease;
    char identity[256];
    daemon_leader_identity(rt->prog, identity, sizeof identity);
    kube_leader_options o = {.lease_namespace = ns, .lease_name = lease, .identity = identity, /* copied */
                             .lease_duration_ms = rt->election.lease_duration_ms,
                             .renew_deadline_ms = rt->election.renew_deadline_ms,
                             .retry_period_ms = rt->election.retry_period_ms};
    kube_leader_callbacks cb = {on_started_leading, on_stopped_leading, on_new_leader, on_leader_error};
    rt->leader = kube_leader_new(rt->uc, kube_client_config(rt->client), &o, &cb, rt, err);
    if (!rt->leader)
        return -1;
    olm_log(OLM_LOG_INFO, rt->log_key, NULL, "campaigning for Lease %s/%s as %s", ns, lease, identity);
    return kube_leader_start(rt->leader, err);
}

void daemon_runtime_free(daemon_runtime *rt)
{
    if (rt->client)
        kube_client_free(rt->client);
    rt->client = NULL;
    kube_request_metrics_free(rt->rest_metrics);
    rt->rest_metrics = NULL;
    oci_registries_follow_free(rt->registries);
    rt->registries = NULL;
    oci_auth_store_free(rt->pull_secret);
    rt->pull_secret = NULL;
}

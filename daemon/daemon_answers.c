/* What the health and metrics listeners answer (daemon_runtime.h): /readyz as the daemon's
 * spec says, and /metrics, the daemon's own series followed by those both daemons export
 * under the names upstream's dashboards and alerts use (controller-runtime's workqueue
 * series, client-go's rest_client_requests_total, leader election, the process, build_info). */
#include <string.h>

#include "daemon_runtime.h"
#include "olm_metrics.h"
#include "olm_process_metrics.h"

/* Ready once this replica reconciles with full caches, or while it stands by without the
 * Lease (it cannot do more until it leads). */
static bool default_ready(daemon_runtime *rt, strbuf *why)
{
    if (!rt->controllers_started) {
        if (rt->spec && rt->spec->leader_elect && !rt->stopping)
            return true;
        strbuf_puts(why, "controllers not started");
        return false;
    }
    for (size_t i = 0; i < rt->nparts; i++) {
        const daemon_part *p = &rt->parts[i];
        if (p->kind == DAEMON_PART_INFORMER && (!p->obj || !kube_informer_has_synced(p->obj))) {
            strbuf_puts(why, "informers not synced");
            return false;
        }
    }
    return true;
}

bool daemon_runtime_ready(daemon_runtime *rt, strbuf *why)
{
    if (rt->terminating || rt->stopping) {
        strbuf_puts(why, "shutting down");
        return false;
    }
    if (rt->spec && rt->spec->ready)
        return rt->spec->ready(rt->spec->app, why);
    return default_ready(rt, why);
}

int daemon_runtime_metrics(daemon_runtime *rt, strbuf *out)
{
    const daemon_spec *s = rt->spec;
    if (s && s->metrics && s->metrics(s->app, out) < 0)
        return -1;
    /* All queues at once: one HELP per family however many controllers run. */
    const kube_workqueue *qs[DAEMON_PARTS_MAX];
    const char *names[DAEMON_PARTS_MAX];
    size_t nq = 0;
    for (size_t i = 0; i < rt->nparts && nq < DAEMON_PARTS_MAX; i++) {
        const daemon_part *p = &rt->parts[i];
        if (p->kind == DAEMON_PART_WORKQUEUE && p->obj) {
            qs[nq] = p->obj;
            names[nq++] = p->metrics_name;
        }
    }
    int rc = kube_workqueues_render_metrics(qs, names, nq, out);
    if (rt->rest_metrics)
        rc |= kube_request_metrics_render(rt->rest_metrics, out);
    if (s && s->leader_elect) {
        rc |= olm_metrics_header(out, "leader_election_master_status",
                                 "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                                 "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                                 "gauge");
        rc |= olm_metrics_sample(out, "leader_election_master_status", "name", s->lease_name,
                                 rt->leader && kube_leader_is_leader(rt->leader) ? 1 : 0);
    }
    rc |= olm_process_metrics_render(out);
    rc |= olm_build_info_render(out, s && s->metrics_name ? s->metrics_name : rt->prog);
    return rc ? -1 : 0;
}

/* The listeners' handlers (daemon_listeners.h). */
int daemon_runtime_health_answer(const char *path, strbuf *body, void *data)
{
    daemon_runtime *rt = data;
    if (strcmp(path, "/healthz") == 0) {
        strbuf_puts(body, "ok");
        return 200;
    }
    strbuf why = STRBUF_INIT;
    bool ready = daemon_runtime_ready(rt, &why);
    strbuf_puts(body, ready ? "ok" : (why.len ? strbuf_str(&why) : "not ready"));
    strbuf_free(&why);
    return ready ? 200 : 503;
}

int daemon_runtime_metrics_answer(strbuf *body, void *data)
{
    return daemon_runtime_metrics(data, body);
}

/* cluster_apply: applying objects and waiting for ClusterExtensions (cluster_apply.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_apply.h"
#include "cluster_objects.h"

void cluster_describe(const json_t *obj, char *buf, size_t size)
{
    const char *kind = cluster_str(obj, "kind"), *ns = cluster_str(obj, "metadata.namespace");
    char lower[128];
    size_t i = 0;
    for (; kind[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)kind[i]);
    lower[i] = '\0';
    snprintf(buf, size, "%s %s%s%s", lower, ns, *ns ? "/" : "", cluster_str(obj, "metadata.name"));
}

int cluster_apply_labelled(kube_client *c, const json_t *obj, const char *label, const char *value, bool *created,
                           olm_error *err)
{
    const char *av = cluster_str(obj, "apiVersion"), *kind = cluster_str(obj, "kind");
    const char *ns = cluster_str(obj, "metadata.namespace"), *name = cluster_str(obj, "metadata.name");
    char what[512];
    cluster_describe(obj, what, sizeof what);
    json_t *cur = NULL;
    int rc = kube_get(c, av, kind, *ns ? ns : NULL, name, &cur, err);
    if (rc < 0 && rc != KUBE_NOT_FOUND)
        return cluster_exit_from_kube(rc);
    if (created)
        *created = rc == KUBE_NOT_FOUND;
    if (rc == 0) {
        const char *have = json_string_value(json_object_get(json_object_get(json_object_get(cur, "metadata"), "labels"),
                                                             label));
        bool ours = have && strcmp(have, value) == 0;
        json_decref(cur);
        if (!ours)
            return cluster_error(err, CLI_EXIT_CONFLICT, "%s exists and was not made by olmv1 for \"%s\" (no label %s=%s): "
                                                         "leaving it alone",
                                 what, value, label, value);
    }
    rc = kube_apply(c, obj, CLUSTER_FIELD_MANAGER, true, NULL, NULL, err);
    if (rc < 0)
        return cluster_wrap(err, cluster_exit_from_kube(rc), "applying %s", what);
    return 0;
}

/* ------------------------------------------------------------ waiting */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long long observed(const json_t *cond)
{
    return json_integer_value(json_object_get(cond, "observedGeneration"));
}

int cluster_wait_installed(kube_client *c, const char *name, const char *want_version, long timeout_s, bool quiet,
                           olm_error *err)
{
    time_t deadline = time(NULL) + timeout_s;
    char last[OLM_ERROR_MAX] = "";
    for (;;) {
        json_t *ce = NULL;
        int rc = kube_get(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, name, &ce, err);
        if (rc < 0)
            return cluster_exit_from_kube(rc);
        long long gen = json_integer_value(json_object_get(json_object_get(ce, "metadata"), "generation"));
        const json_t *inst = cluster_condition(ce, "Installed"), *prog = cluster_condition(ce, "Progressing");
        const char *version = cluster_str(ce, "status.install.bundle.version");
        bool current = prog && observed(prog) == gen;
        /* Copies: ce goes before they are used. */
        char pst[16], reason[128], msg[OLM_ERROR_MAX];
        snprintf(pst, sizeof pst, "%s", cluster_str(prog, "status"));
        snprintf(reason, sizeof reason, "%s", cluster_str(prog, "reason"));
        snprintf(msg, sizeof msg, "%s", cluster_str(prog, "message"));
        if (current && strcmp(cluster_str(inst, "status"), "True") == 0 && strcmp(pst, "True") == 0 &&
            strcmp(reason, "Succeeded") == 0 && (!want_version || strcmp(version, want_version) == 0)) {
            if (!quiet)
                fprintf(stderr, "clusterextension %s: installed %s (%s)\n", name,
                        cluster_str(ce, "status.install.bundle.name"), version);
            json_decref(ce);
            return 0;
        }
        json_decref(ce);
        if (current && strcmp(pst, "False") == 0) {
            return cluster_error(err, strcmp(reason, "InvalidConfiguration") == 0 ? CLI_EXIT_INVALID : CLI_EXIT_FAILED,
                                 "clusterextension %s: Progressing %s: %s", name, reason, msg);
        }
        if (!quiet && current && *msg && strcmp(msg, last) != 0)
            fprintf(stderr, "clusterextension %s: Progressing %s: %s\n", name, reason, msg);
        if (current)
            snprintf(last, sizeof last, "%s", msg);
        if (time(NULL) >= deadline)
            return cluster_error(err, CLI_EXIT_TIMEOUT, "clusterextension %s: not installed after %lds%s%s", name,
                                 timeout_s, *last ? "; Progressing: " : "", last);
        sleep_ms(1000);
    }
}

int cluster_wait_gone(kube_client *c, const char *api_version, const char *kind, const char *ns, const char *name,
                      long timeout_s, olm_error *err)
{
    time_t deadline = time(NULL) + timeout_s;
    for (;;) {
        json_t *obj = NULL;
        int rc = kube_get(c, api_version, kind, ns, name, &obj, err);
        json_decref(obj);
        if (rc == KUBE_NOT_FOUND)
            return 0;
        if (rc < 0)
            return cluster_exit_from_kube(rc);
        if (time(NULL) >= deadline)
            return cluster_error(err, CLI_EXIT_TIMEOUT, "%s %s still exists after %lds", kind, name, timeout_s);
        sleep_ms(1000);
    }
}

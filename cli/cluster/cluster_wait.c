/* cluster_wait: polling a ClusterExtension until it is installed or gone (cluster_wait.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cluster_objects.h"
#include "cluster_wait.h"
#include "resolve.h"
#include "semver.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One look at the extension, copied out of the object. */
typedef struct ext_state {
    bool current;   /* Progressing observed the current generation */
    bool installed; /* Installed True */
    char progressing[16], reason[128], message[OLM_ERROR_MAX];
    char bundle[256], version[128];
    char range[128]; /* spec.source.catalog.version */
} ext_state;

static bool observed_current(const json_t *cond, long long gen)
{
    return cond && json_integer_value(json_object_get(cond, "observedGeneration")) == gen;
}

static void read_state(const json_t *ce, ext_state *st)
{
    long long gen = json_integer_value(json_object_get(json_object_get(ce, "metadata"), "generation"));
    const json_t *inst = cluster_condition(ce, "Installed"), *prog = cluster_condition(ce, "Progressing");
    st->current = observed_current(prog, gen);
    st->installed = strcmp(cluster_str(inst, "status"), "True") == 0;
    snprintf(st->progressing, sizeof st->progressing, "%s", cluster_str(prog, "status"));
    snprintf(st->reason, sizeof st->reason, "%s", cluster_str(prog, "reason"));
    snprintf(st->message, sizeof st->message, "%s", cluster_str(prog, "message"));
    snprintf(st->bundle, sizeof st->bundle, "%s", cluster_str(ce, "status.install.bundle.name"));
    snprintf(st->version, sizeof st->version, "%s", cluster_str(ce, "status.install.bundle.version"));
    snprintf(st->range, sizeof st->range, "%s", cluster_str(ce, "spec.source.catalog.version"));
}

bool cluster_wait_arrived(const char *version, const char *want_version, const char *range)
{
    if (!want_version || strcmp(version, want_version) == 0)
        return true;
    bundle_version have, want;
    if (bundle_version_parse(version, &have, NULL) < 0)
        return false;
    bool beyond = false;
    if (bundle_version_parse(want_version, &want, NULL) == 0) {
        beyond = bundle_version_compare(&have, &want) > 0;
        bundle_version_free(&want);
    }
    semver_constraint *c = range && *range ? semver_constraint_parse(range, NULL) : NULL;
    bool in_range = !(range && *range) || (c && semver_constraint_check(c, &have.version));
    semver_constraint_free(c);
    bundle_version_free(&have);
    return beyond && in_range;
}

/* The controller has finished with the current generation (whatever it installed). */
static bool settled(const ext_state *st)
{
    return st->current && st->installed && strcmp(st->progressing, "True") == 0 &&
           strcmp(st->reason, "Succeeded") == 0;
}

/* 1 when the controller gave up on this generation (err set, *code the exit code). */
static bool gave_up(const char *name, const ext_state *st, int *code, olm_error *err)
{
    if (!st->current || strcmp(st->progressing, "False") != 0)
        return false;
    *code = cluster_error(err, strcmp(st->reason, "InvalidConfiguration") == 0 ? CLI_EXIT_INVALID : CLI_EXIT_BLOCKED,
                          "clusterextension %s: Progressing %s: %s", name, st->reason, st->message);
    return true;
}

static void say_installed(const char *name, const ext_state *st, const char *want_version)
{
    if (want_version && strcmp(st->version, want_version) != 0)
        fprintf(stderr, "clusterextension %s: installed %s (%s), newer than %s resolved here: the catalogs "
                        "changed meanwhile\n", name, st->bundle, st->version, want_version);
    else
        fprintf(stderr, "clusterextension %s: installed %s (%s)\n", name, st->bundle, st->version);
}

static int timed_out(const char *name, const char *want_version, long timeout_s, const ext_state *st, olm_error *err)
{
    return cluster_error(err, CLI_EXIT_TIMEOUT, "clusterextension %s: not at %s after %lds (installed: %s %s)%s%s%s%s",
                         name, want_version ? want_version : "an installed bundle", timeout_s,
                         *st->bundle ? st->bundle : "nothing", st->version, *st->message ? "; Progressing " : "",
                         *st->message ? st->reason : "", *st->message ? ": " : "", st->message);
}

int cluster_wait_installed(kube_client *c, const char *name, const char *want_version, long timeout_s, bool quiet,
                           olm_error *err)
{
    time_t deadline = time(NULL) + timeout_s;
    char last[OLM_ERROR_MAX] = "";
    ext_state st;
    for (;;) {
        json_t *ce = NULL;
        int rc = kube_get(c, CLUSTER_OLM_API_VERSION, "ClusterExtension", NULL, name, &ce, err);
        if (rc < 0)
            return cluster_exit_from_kube(rc);
        read_state(ce, &st);
        json_decref(ce);
        bool at_rest = settled(&st);
        if (at_rest && cluster_wait_arrived(st.version, want_version, st.range)) {
            if (!quiet)
                say_installed(name, &st, want_version);
            return 0;
        }
        if (gave_up(name, &st, &rc, err))
            return rc;
        /* At rest elsewhere: the controller has not seen what the CLI resolved yet (a
         * catalog changed); it moves when it does, or the timeout says it did not. */
        if (at_rest)
            snprintf(st.message, sizeof st.message, "installed %s, waiting for %s", st.version, want_version);
        if (!quiet && st.current && *st.message && strcmp(st.message, last) != 0)
            fprintf(stderr, "clusterextension %s: Progressing %s: %s\n", name, st.reason, st.message);
        if (st.current)
            snprintf(last, sizeof last, "%s", st.message);
        if (time(NULL) >= deadline)
            return timed_out(name, want_version, timeout_s, &st, err);
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

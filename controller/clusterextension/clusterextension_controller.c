/* The ClusterExtension controller's setup beside its reconciler, as upstream keeps
 * SetupWithManager beside each reconciler: which watch events call for a reconcile, what its
 * cache keeps of each object, and its metrics (clusterextension.h, "Controller setup").
 * operator-controller's main wires these to its informers and listeners. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension_controller.h"
#include "kube_object.h"
#include "olm_metrics.h"

static bool same_json(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal((json_t *)a, (json_t *)b));
}

/* `now` is `before` with our finalizer appended: what a reconcile's first step writes
 * (and then carries on with the updated object), so no reason for another reconcile. */
static bool gained_only_our_finalizer(const json_t *before, const json_t *now)
{
    size_t n = json_array_size(now);
    if (n != json_array_size(before) + 1 || !json_is_string(json_array_get(now, n - 1)) ||
        strcmp(json_string_value(json_array_get(now, n - 1)), CE_FINALIZER) != 0)
        return false;
    for (size_t i = 0; i + 1 < n; i++)
        if (!json_equal(json_array_get(before, i), json_array_get(now, i)))
            return false;
    return true;
}

bool clusterextension_update_needs_reconcile(const json_t *old_obj, const json_t *new_obj)
{
    const json_t *om = json_object_get(old_obj, "metadata"), *nm = json_object_get(new_obj, "metadata");
    /* Status-only updates (ours) change none of these; adding our finalizer is ours too
     * (at 1,000 extensions, each such event cost a second full reconcile). */
    const json_t *of = json_object_get(om, "finalizers"), *nf = json_object_get(nm, "finalizers");
    return !(same_json(json_object_get(om, "generation"), json_object_get(nm, "generation")) &&
             same_json(json_object_get(om, "deletionTimestamp"), json_object_get(nm, "deletionTimestamp")) &&
             (same_json(of, nf) || gained_only_our_finalizer(of, nf)));
}

/* Each condition's type and status, nothing else. */
static json_t *slim_conditions(const json_t *conds)
{
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        json_t *slim = json_object();
        if (!out || !slim || json_array_append_new(out, slim) != 0) {
            json_decref(out);
            return NULL;
        }
        if (json_object_get(c, "type"))
            json_object_set(slim, "type", json_object_get(c, "type"));
        if (json_object_get(c, "status"))
            json_object_set(slim, "status", json_object_get(c, "status"));
    }
    return out;
}

const char *clusterextension_cached_text(const json_t *cached)
{
    return json_string_value(json_object_get(cached, CE_CACHE_TEXT_KEY));
}

void clusterextension_cache_form(json_t *obj)
{
    /* The whole object as compact text first: a few KB against ~20 KB parsed. */
    char *text = json_dumps(obj, JSON_COMPACT);
    json_t *text_value = text ? json_stringn_nocheck(text, strlen(text)) : NULL;
    free(text);
    static const char *const meta_keep[] = {"name", "namespace", "uid", "resourceVersion", "generation",
                                            "deletionTimestamp", "finalizers"};
    json_t *md = json_object_get(obj, "metadata"), *slim_md = json_object();
    for (size_t i = 0; slim_md && i < sizeof meta_keep / sizeof *meta_keep; i++)
        if (json_object_get(md, meta_keep[i]))
            json_object_set(slim_md, meta_keep[i], json_object_get(md, meta_keep[i]));
    const json_t *pkg = kube_object_path(obj, "spec.source.catalog.packageName");
    json_t *install = json_incref(kube_object_path(obj, "status.install"));
    json_t *conds = slim_conditions(kube_object_path(obj, "status.conditions"));
    json_t *spec = pkg ? json_pack("{s:{s:{s:O}}}", "source", "catalog", "packageName", pkg) : json_object();
    json_t *status = json_object();
    if (!slim_md || !conds || !spec || !status || !text_value) { /* out of memory: keep the object whole */
        json_decref(text_value);
        json_decref(slim_md);
        json_decref(conds);
        json_decref(spec);
        json_decref(status);
        json_decref(install);
        return;
    }
    if (install)
        json_object_set_new(status, "install", install);
    json_object_set_new(status, "conditions", conds);
    json_object_set_new(obj, "metadata", slim_md);
    json_object_set_new(obj, "spec", spec);
    json_object_set_new(obj, "status", status);
    json_object_set_new(obj, CE_CACHE_TEXT_KEY, text_value);
}

/* FNV-1a of what the extension's reconcile reads of a revision: its labels, annotations,
 * deletion, spec and status -- not its finalizers (the ClusterObjectSet controller's own
 * teardown finalizer) nor resourceVersion, generation or managedFields. */
static char *revision_read_hash(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    json_t *read = json_pack("{s:O*, s:O*, s:O*, s:O*, s:O*}", "labels", json_object_get(meta, "labels"), "annotations",
                             json_object_get(meta, "annotations"), "deletionTimestamp",
                             json_object_get(meta, "deletionTimestamp"), "spec", json_object_get(obj, "spec"),
                             "status", json_object_get(obj, "status"));
    char *text = read ? json_dumps(read, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(read);
    if (!text)
        return NULL;
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    free(text);
    char *out = malloc(17);
    if (out)
        snprintf(out, 17, "%016llx", (unsigned long long)h);
    return out;
}

void clusterextension_revision_cache_form(json_t *obj)
{
    char *hash = revision_read_hash(obj);
    if (hash)
        json_object_set_new(obj, "readHash", json_string(hash));
    free(hash);
    json_t *meta = json_object_get(obj, "metadata");
    json_t *kept = json_object();
    if (!kept)
        return;
    static const char *const KEEP[] = {"name", "resourceVersion", "uid"};
    for (size_t i = 0; i < 3; i++)
        if (json_object_get(meta, KEEP[i]))
            json_object_set(kept, KEEP[i], json_object_get(meta, KEEP[i]));
    json_t *owner = json_object_get(json_object_get(meta, "labels"), "olm.operatorframework.io/owner-name");
    if (owner)
        json_object_set_new(kept, "labels", json_pack("{s:O}", "olm.operatorframework.io/owner-name", owner));
    json_object_set_new(obj, "metadata", kept);
    json_object_del(obj, "spec");
    json_object_del(obj, "status");
}

bool clusterextension_revision_update_needs_reconcile(const json_t *old_obj, const json_t *new_obj)
{
    const char *a = json_string_value(json_object_get(old_obj, "readHash"));
    const char *b = json_string_value(json_object_get(new_obj, "readHash"));
    return !a || !b || strcmp(a, b) != 0;
}

/* olm_clusterextension_info{name,package,version,catalog} 1 for every ClusterExtension: which
 * bundle version each one runs and where it came from, joinable with other series by name. */
static void write_extension_info(const clusterextension_metrics_sources *s, strbuf *b)
{
    olm_metrics_header(b, "olm_clusterextension_info",
                       "A ClusterExtension: its package, installed version and the catalog it came from.", "gauge");
    size_t i;
    json_t *o;
    json_array_foreach(s->extensions, i, o) {
        const char *name = kube_object_string(o, "metadata.name");
        const char *pkg = kube_object_string(o, "spec.source.catalog.packageName");
        const char *version = kube_object_string(o, "status.install.bundle.version");
        char catalog[256] = "";
        if (!name)
            continue;
        if (s->rec)
            clusterextension_reconciler_catalog_of(s->rec, name, catalog, sizeof catalog);
        const char *labels[][2] = {{"name", name}, {"package", pkg ? pkg : ""}, {"version", version ? version : ""},
                                   {"catalog", catalog}};
        strbuf_puts(b, "olm_clusterextension_info{");
        for (size_t l = 0; l < 4; l++) {
            strbuf_printf(b, "%s%s=\"", l ? "," : "", labels[l][0]);
            olm_metrics_label_value(b, labels[l][1]);
            strbuf_putc(b, '"');
        }
        strbuf_puts(b, "} 1\n");
    }
}

static void write_duration_histogram(const clusterextension_reconcile_stats *st, strbuf *b)
{
    /* The standard form (controller-runtime's reconcile_time_seconds is one too): quantiles and
     * rates come from the buckets. */
    olm_histogram h;
    olm_histogram_init(&h, clusterextension_duration_bounds, CE_DURATION_NBOUNDS);
    for (size_t i = 0; i < CE_DURATION_NBOUNDS; i++)
        h.counts[i] = st->duration_buckets[i];
    h.count = st->total;
    h.sum = (double)st->micros_total / 1e6;
    olm_metrics_header(b, "operator_controller_reconcile_duration_seconds", "Wall time of ClusterExtension reconciles.",
                       "histogram");
    olm_histogram_render(b, "operator_controller_reconcile_duration_seconds", NULL, NULL, &h);
}

void clusterextension_metrics_render(const clusterextension_metrics_sources *s, strbuf *b)
{
    clusterextension_reconcile_stats st = {0};
    if (s->rec)
        clusterextension_reconciler_stats(s->rec, &st);
    size_t installed = 0, total = json_array_size(s->extensions);
    size_t i;
    json_t *o;
    json_array_foreach(s->extensions, i, o) installed += kube_object_condition_is(o, "Installed", "True");
    strbuf_printf(b,
                  "# HELP operator_controller_reconcile_total ClusterExtension reconciles.\n"
                  "# TYPE operator_controller_reconcile_total counter\n"
                  "operator_controller_reconcile_total %llu\n"
                  "# TYPE operator_controller_reconcile_errors_total counter\n"
                  "operator_controller_reconcile_errors_total %llu\n"
                  "# TYPE operator_controller_reconcile_terminal_errors_total counter\n"
                  "operator_controller_reconcile_terminal_errors_total %llu\n"
                  "# HELP operator_controller_reconcile_duration_max_seconds The longest reconcile so far.\n"
                  "# TYPE operator_controller_reconcile_duration_max_seconds gauge\n"
                  "operator_controller_reconcile_duration_max_seconds %.6f\n"
                  "# TYPE operator_controller_drift_repaired_objects_total counter\n"
                  "operator_controller_drift_repaired_objects_total %llu\n"
                  "# TYPE operator_controller_clusterextensions gauge\n"
                  "operator_controller_clusterextensions %zu\n"
                  "# TYPE operator_controller_installed_extensions gauge\n"
                  "operator_controller_installed_extensions %zu\n"
                  "# TYPE operator_controller_catalog_cache_entries gauge\n"
                  "operator_controller_catalog_cache_entries %zu\n"
                  "# TYPE operator_controller_workqueue_depth gauge\n"
                  "operator_controller_workqueue_depth %zu\n"
                  "# HELP operator_controller_drift_watches Watches on installed objects (one shared per kind, or per "
                  "extension and kind).\n"
                  "# TYPE operator_controller_drift_watches gauge\n"
                  "operator_controller_drift_watches %zu\n"
                  "# TYPE operator_controller_drift_watched_extensions gauge\n"
                  "operator_controller_drift_watched_extensions %zu\n"
                  "# HELP operator_controller_serviceaccount_tokens_requested_total TokenRequests made (cache misses).\n"
                  "# TYPE operator_controller_serviceaccount_tokens_requested_total counter\n"
                  "operator_controller_serviceaccount_tokens_requested_total %llu\n",
                  (unsigned long long)st.total, (unsigned long long)st.errors, (unsigned long long)st.terminal,
                  (double)st.micros_max / 1e6, (unsigned long long)st.repaired_objects, total, installed,
                  s->catalog_cache_entries, s->queue_depth, s->drift_watches, s->drift_extensions,
                  s->tokens_requested);
    write_duration_histogram(&st, b);
}

void clusterextension_info_metrics_render(const clusterextension_metrics_sources *s, strbuf *b)
{
    write_extension_info(s, b);
}

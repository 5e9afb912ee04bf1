/* revision_build: a ClusterObjectSet revision from a bundle's rendered objects, as upstream's
 * SimpleRevisionGenerator.GenerateRevision, buildClusterObjectSet and
 * Boxcutter.createExternalizedRevision build it (applier/boxcutter.go at df2c201). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "revision.h"

/* defaultProgressionProbes: what a phase waits for before the next one rolls out. */
static const char DEFAULT_PROBES[] =
    "["
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"apiextensions.k8s.io\",\"kind\":"
    "\"CustomResourceDefinition\"}},\"assertions\":[{\"type\":\"ConditionEqual\",\"conditionEqual\":{\"type\":"
    "\"Established\",\"status\":\"True\"}}]},"
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"cert-manager.io\",\"kind\":\"Certificate\"}},"
    "\"assertions\":[{\"type\":\"ConditionEqual\",\"conditionEqual\":{\"type\":\"Ready\",\"status\":\"True\"}}]},"
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"cert-manager.io\",\"kind\":\"Issuer\"}},"
    "\"assertions\":[{\"type\":\"ConditionEqual\",\"conditionEqual\":{\"type\":\"Ready\",\"status\":\"True\"}}]},"
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"\",\"kind\":\"Namespace\"}},"
    "\"assertions\":[{\"type\":\"FieldValue\",\"fieldValue\":{\"fieldPath\":\"status.phase\",\"value\":\"Active\"}}]},"
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"\",\"kind\":\"PersistentVolumeClaim\"}},"
    "\"assertions\":[{\"type\":\"FieldValue\",\"fieldValue\":{\"fieldPath\":\"status.phase\",\"value\":\"Bound\"}}]},"
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"apps\",\"kind\":\"StatefulSet\"}},"
    "\"assertions\":[{\"type\":\"FieldsEqual\",\"fieldsEqual\":{\"fieldA\":\"status.updatedReplicas\",\"fieldB\":"
    "\"status.replicas\"}},{\"type\":\"ConditionEqual\",\"conditionEqual\":{\"type\":\"Available\",\"status\":"
    "\"True\"}}]},"
    "{\"selector\":{\"type\":\"GroupKind\",\"groupKind\":{\"group\":\"apps\",\"kind\":\"Deployment\"}},"
    "\"assertions\":[{\"type\":\"FieldsEqual\",\"fieldsEqual\":{\"fieldA\":\"status.updatedReplicas\",\"fieldB\":"
    "\"status.replicas\"}},{\"type\":\"ConditionEqual\",\"conditionEqual\":{\"type\":\"Available\",\"status\":"
    "\"True\"}}]}"
    "]";

static const char *str_at(const json_t *o, const char *k1, const char *k2)
{
    const json_t *v = json_object_get(o, k1);
    if (k2)
        v = json_object_get(v, k2);
    return json_string_value(v) ? json_string_value(v) : "";
}

/* The object as the revision holds it: a deep copy without status, with metadata reduced to
 * name, namespace, labels and annotations (sanitizedUnstructured), without kubectl's
 * last-applied annotation (the cache's strip transform), with the owner labels and the
 * bundle-version and package-name annotations merged in.  NULL on out of memory. */
static json_t *revision_object(const json_t *obj, const char *extension, const revision_bundle *b)
{
    json_t *o = json_deep_copy(obj);
    if (!o)
        return NULL;
    json_object_del(o, "status");
    if (revision_typed_fields(o) != 0)
        goto oom;
    json_t *meta = json_object_get(o, "metadata");
    json_t *kept = json_object();
    if (!kept)
        goto oom;
    static const char *const ALLOWED[] = {"annotations", "labels", "name", "namespace"};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_object_get(meta, ALLOWED[i]);
        if (v && json_object_set(kept, ALLOWED[i], v) != 0)
            goto oom_kept;
    }
    json_t *anns = json_object_get(kept, "annotations");
    if (json_is_object(anns)) {
        json_object_del(anns, "kubectl.kubernetes.io/last-applied-configuration");
        if (json_object_size(anns) == 0)
            json_object_del(kept, "annotations");
    }
    json_t *labels = json_object_get(kept, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        if (!labels || json_object_set_new(kept, "labels", labels) != 0)
            goto oom_kept;
    }
    if (json_object_set_new(labels, REVISION_LABEL_OWNER_KIND, json_string("ClusterExtension")) != 0 ||
        json_object_set_new(labels, REVISION_LABEL_OWNER_NAME, json_string(extension)) != 0)
        goto oom_kept;
    if ((b->version && *b->version) || (b->package && *b->package)) {
        anns = json_object_get(kept, "annotations");
        if (!json_is_object(anns)) {
            anns = json_object();
            if (!anns || json_object_set_new(kept, "annotations", anns) != 0)
                goto oom_kept;
        }
        if (b->version && *b->version &&
            json_object_set_new(anns, REVISION_ANN_BUNDLE_VERSION, json_string(b->version)) != 0)
            goto oom_kept;
        if (b->package && *b->package && json_object_set_new(anns, REVISION_ANN_PACKAGE, json_string(b->package)) != 0)
            goto oom_kept;
    }
    if (json_object_set_new(o, "metadata", kept) != 0)
        goto oom;
    return o;
oom_kept:
    json_decref(kept);
oom:
    json_decref(o);
    return NULL;
}

/* Group and version of an apiVersion ("v1": core group). */
static void split_api_version(const char *av, char *group, size_t gsz, const char **version)
{
    const char *slash = strchr(av, '/');
    if (!slash) {
        group[0] = '\0';
        *version = av;
        return;
    }
    snprintf(group, gsz, "%.*s", (int)(slash - av), av);
    *version = slash + 1;
}

typedef struct sort_item {
    json_t *obj;
    const char *phase;
    char group[256];
    const char *version, *kind, *ns, *name;
} sort_item;

/* compareClusterObjectSetObjectApplyConfigurations: group, version, kind, namespace, name. */
static int cmp_item(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    int c = strcmp(a->group, b->group);
    if (!c)
        c = strcmp(a->version, b->version);
    if (!c)
        c = strcmp(a->kind, b->kind);
    if (!c)
        c = strcmp(a->ns, b->ns);
    if (!c)
        c = strcmp(a->name, b->name);
    return c;
}

/* PhaseSort: the phases in rollout order, only those with objects, objects sorted. */
static json_t *phase_sort(json_t *objs)
{
    size_t n = json_array_size(objs);
    sort_item *items = calloc(n ? n : 1, sizeof *items);
    json_t *phases = json_array();
    if (!items || !phases)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        sort_item *it = &items[i];
        it->obj = json_array_get(objs, i);
        split_api_version(str_at(it->obj, "apiVersion", NULL), it->group, sizeof it->group, &it->version);
        it->kind = str_at(it->obj, "kind", NULL);
        it->ns = str_at(it->obj, "metadata", "namespace");
        it->name = str_at(it->obj, "metadata", "name");
        it->phase = revision_phase_of(it->group, it->kind);
    }
    qsort(items, n, sizeof *items, cmp_item);
    for (size_t p = 0; p < revision_phase_count; p++) {
        json_t *objects = NULL;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(items[i].phase, revision_phase_order[p]) != 0)
                continue;
            if (!objects) {
                objects = json_array();
                json_t *phase = json_pack("{s:s, s:o}", "name", revision_phase_order[p], "objects", objects);
                if (!phase || json_array_append_new(phases, phase) != 0)
                    goto fail;
            }
            if (json_array_append_new(objects, json_pack("{s:O}", "object", items[i].obj)) != 0)
                goto fail;
        }
    }
    free(items);
    return phases;
fail:
    free(items);
    json_decref(phases);
    return NULL;
}

static json_t *revision_annotations(const revision_bundle *b)
{
    json_t *a = json_pack("{s:s, s:s, s:s, s:s}", REVISION_ANN_BUNDLE_NAME, b->name ? b->name : "",
                          REVISION_ANN_PACKAGE, b->package ? b->package : "", REVISION_ANN_BUNDLE_VERSION,
                          b->version ? b->version : "", REVISION_ANN_BUNDLE_REFERENCE, b->image ? b->image : "");
    if (a && b->properties && json_object_set_new(a, REVISION_ANN_PROPERTIES, json_string(b->properties)) != 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

void revision_built_free(revision_built *b)
{
    free(b->name);
    json_decref(b->cos);
    json_decref(b->secrets);
    memset(b, 0, sizeof *b);
}

int revision_build(const revision_input *in, const revision_bundle *b, const json_t *objects, revision_built *out,
                   olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (asprintf(&out->name, "%s-%lld", in->extension, (long long)in->number) < 0) {
        out->name = NULL;
        return olm_error_set(err, "out of memory");
    }
    json_t *objs = json_array();
    size_t i;
    const json_t *o;
    int ok = objs != NULL;
    json_array_foreach((json_t *)objects, i, o) {
        if (!ok)
            break;
        ok = json_array_append_new(objs, revision_object(o, in->extension, b)) == 0;
    }
    json_t *phases = ok ? phase_sort(objs) : NULL;
    json_decref(objs);
    json_t *probes = json_loads(DEFAULT_PROBES, 0, NULL);
    json_t *anns = revision_annotations(b);
    if (anns && in->service_account && *in->service_account &&
        (json_object_set_new(anns, REVISION_ANN_SA_NAME, json_string(in->service_account)) != 0 ||
         json_object_set_new(anns, REVISION_ANN_SA_NAMESPACE,
                             json_string(in->service_account_namespace ? in->service_account_namespace : "")) != 0)) {
        json_decref(anns);
        anns = NULL;
    }
    json_t *labels = json_pack("{s:s, s:s}", REVISION_LABEL_OWNER_KIND, "ClusterExtension", REVISION_LABEL_OWNER_NAME,
                               in->extension);
    if (labels && in->migrated && json_object_set_new(labels, REVISION_LABEL_MIGRATED, json_string("true")) != 0) {
        json_decref(labels);
        labels = NULL;
    }
    json_t *spec = NULL;
    if (phases && probes && anns && labels)
        spec = json_pack("{s:s, s:I, s:O, s:O, s:s}", "lifecycleState", "Active", "revision", (json_int_t)in->number,
                         "phases", phases, "progressionProbes", probes, "collisionProtection",
                         in->migrated ? "None" : "Prevent");
    if (spec && in->progress_deadline_minutes > 0 &&
        json_object_set_new(spec, "progressDeadlineMinutes", json_integer(in->progress_deadline_minutes)) != 0) {
        json_decref(spec);
        spec = NULL;
    }
    if (spec)
        out->cos = json_pack("{s:s, s:s, s:{s:s, s:O, s:O, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}, s:O}", "apiVersion",
                             REVISION_API_VERSION, "kind", REVISION_KIND, "metadata", "name", out->name, "labels",
                             labels, "annotations", anns, "ownerReferences", "apiVersion", REVISION_API_VERSION,
                             "kind", "ClusterExtension", "name", in->extension, "uid",
                             in->extension_uid ? in->extension_uid : "", "blockOwnerDeletion", 1, "controller", 1,
                             "spec", spec);
    json_decref(phases);
    json_decref(probes);
    json_decref(anns);
    json_decref(labels);
    json_decref(spec);
    out->secrets = json_array();
    if (!out->cos || !out->secrets) {
        revision_built_free(out);
        return olm_error_set(err, "out of memory building revision");
    }
    json_t *cos_phases = json_object_get(json_object_get(out->cos, "spec"), "phases");
    if (revision_pack(cos_phases, out->name, in->extension, in->system_namespace, out->secrets, err) != 0) {
        revision_built_free(out);
        return olm_error_wrap(err, "packing objects into Secrets");
    }
    return 0;
}

/* cluster_objects: the OLM kinds as the CLI reads them (cluster_objects.h). */
#include <stdlib.h>
#include <string.h>

#include "cluster_objects.h"
#include "strbuf.h"

static const cluster_kind kinds[] = {
    {CLUSTER_KIND_EXTENSION, "ClusterExtension", "clusterextensions", "clusterextension.olm.operatorframework.io"},
    {CLUSTER_KIND_CATALOG, "ClusterCatalog", "clustercatalogs", "clustercatalog.olm.operatorframework.io"},
};

const cluster_kind *cluster_kind_get(cluster_kind_id id)
{
    return &kinds[id];
}

const cluster_kind *cluster_kind_lookup(const char *word)
{
    static const struct {
        const char *word;
        cluster_kind_id id;
    } aliases[] = {
        {"extension", CLUSTER_KIND_EXTENSION},
        {"extensions", CLUSTER_KIND_EXTENSION},
        {"ext", CLUSTER_KIND_EXTENSION},
        {"clusterextension", CLUSTER_KIND_EXTENSION},
        {"clusterextensions", CLUSTER_KIND_EXTENSION},
        {"clusterextensions.olm.operatorframework.io", CLUSTER_KIND_EXTENSION},
        {"catalog", CLUSTER_KIND_CATALOG},
        {"catalogs", CLUSTER_KIND_CATALOG},
        {"clustercatalog", CLUSTER_KIND_CATALOG},
        {"clustercatalogs", CLUSTER_KIND_CATALOG},
        {"clustercatalogs.olm.operatorframework.io", CLUSTER_KIND_CATALOG},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(word, aliases[i].word) == 0)
            return &kinds[aliases[i].id];
    return NULL;
}

int cluster_list(kube_client *c, const cluster_kind *kind, const char *selector, json_t **items, olm_error *err)
{
    *items = json_array();
    if (!*items)
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    char *cont = NULL;
    for (;;) {
        kube_list_options lo = {.label_selector = selector, .limit = 500, .continue_token = cont};
        json_t *list = NULL;
        int rc = kube_list(c, CLUSTER_OLM_API_VERSION, kind->kind, NULL, &lo, &list, err);
        free(cont);
        cont = NULL;
        if (rc < 0) {
            json_decref(*items);
            *items = NULL;
            /* A cluster without the CRD answers 404 for the whole resource. */
            if (rc == KUBE_NOT_FOUND)
                olm_error_wrap(err, "the %s API is not served (are OLM's CRDs installed?)", kind->plural);
            return cluster_exit_from_kube(rc);
        }
        int arc = json_array_extend(*items, json_object_get(list, "items"));
        const char *next = cluster_str(list, "metadata.continue");
        if (arc == 0 && *next && !(cont = strdup(next)))
            arc = -1;
        json_decref(list);
        if (arc < 0) {
            json_decref(*items);
            *items = NULL;
            return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
        }
        if (!cont)
            return 0;
    }
}

void cluster_items_tidy(json_t *items, const cluster_kind *kind)
{
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item) {
        if (!json_object_get(item, "apiVersion"))
            json_object_set_new(item, "apiVersion", json_string(CLUSTER_OLM_API_VERSION));
        if (!json_object_get(item, "kind"))
            json_object_set_new(item, "kind", json_string(kind->kind));
        json_object_del(json_object_get(item, "metadata"), "managedFields");
    }
}

/* One "Type Reason: message" (newlines in the message as spaces). */
static int add_problem(strbuf *sb, const json_t *cond)
{
    if (sb->len && strbuf_puts(sb, "; ") < 0)
        return -1;
    if (strbuf_printf(sb, "%s %s", cluster_str(cond, "type"), cluster_str(cond, "reason")) < 0)
        return -1;
    const char *msg = cluster_str(cond, "message");
    if (*msg && strbuf_puts(sb, ": ") < 0)
        return -1;
    for (; *msg; msg++)
        if (strbuf_putc(sb, *msg == '\n' || *msg == '\r' || *msg == '\t' ? ' ' : *msg) < 0)
            return -1;
    return 0;
}

char *cluster_problems(const json_t *obj, cluster_kind_id kind)
{
    strbuf sb = STRBUF_INIT;
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    bool specific_deprecation = false;
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c) {
        const char *t = cluster_str(c, "type");
        if (strstr(t, "Deprecated") && strcmp(t, "Deprecated") != 0 && strcmp(cluster_str(c, "status"), "True") == 0)
            specific_deprecation = true;
    }
    json_array_foreach(conds, i, c) {
        const char *t = cluster_str(c, "type"), *st = cluster_str(c, "status"), *reason = cluster_str(c, "reason");
        bool bad = false;
        if (strcmp(t, "Progressing") == 0)
            bad = strcmp(st, "True") != 0 || strcmp(reason, "Succeeded") != 0;
        else if (kind == CLUSTER_KIND_EXTENSION && strcmp(t, "Installed") == 0)
            bad = strcmp(st, "True") != 0;
        else if (kind == CLUSTER_KIND_EXTENSION && strstr(t, "Deprecated"))
            /* The roll-up repeats the specific ones: only alone is it news. */
            bad = strcmp(st, "True") == 0 && !(strcmp(t, "Deprecated") == 0 && specific_deprecation);
        else if (kind == CLUSTER_KIND_CATALOG && strcmp(t, "Serving") == 0)
            bad = strcmp(st, "True") != 0;
        if (bad && add_problem(&sb, c) < 0) {
            strbuf_free(&sb);
            return NULL;
        }
    }
    return strbuf_detach(&sb);
}

char *cluster_join_strings(const json_t *array, const char *sep)
{
    strbuf sb = STRBUF_INIT;
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v) {
        if ((i && strbuf_puts(&sb, sep) < 0) || strbuf_puts(&sb, json_string_value(v) ? json_string_value(v) : "") < 0) {
            strbuf_free(&sb);
            return NULL;
        }
    }
    return strbuf_detach(&sb);
}

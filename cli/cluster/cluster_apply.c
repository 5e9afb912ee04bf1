/* cluster_apply: applying objects (cluster_apply.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

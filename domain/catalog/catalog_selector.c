/* catalog_selector: spec.source.catalog.selector, a metav1.LabelSelector evaluated by
 * kube_label_selector (this adds what the selector is for to its errors, as upstream's
 * "desired catalog selector is invalid: ..." does), and the selection both
 * operator-controller and the CLI make with it. */
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "kube_object.h"

int catalog_selector_parse(const json_t *selector, kube_label_selector **out, olm_error *err)
{
    if (kube_label_selector_parse(selector, out, err) != 0)
        return olm_error_wrap(err, "desired catalog selector is invalid");
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const catalog_pick *)a)->name, ((const catalog_pick *)b)->name);
}

int catalog_select(const json_t *catalogs, const json_t *selector, catalog_pick **out, size_t *n, olm_error *err)
{
    *out = NULL;
    *n = 0;
    kube_label_selector *sel;
    if (catalog_selector_parse(selector, &sel, err) != 0)
        return -1;
    size_t total = json_array_size(catalogs);
    catalog_pick *picks = calloc(total ? total : 1, sizeof *picks);
    if (!picks) {
        kube_label_selector_free(sel);
        return olm_error_set(err, "out of memory");
    }
    size_t i;
    json_t *c;
    json_array_foreach(catalogs, i, c) {
        const char *name = kube_object_string(c, "metadata.name");
        const char *mode = kube_object_string(c, "spec.availabilityMode");
        if (!name || !kube_label_selector_matches(sel, kube_object_path(c, "metadata.labels")))
            continue;
        picks[(*n)++] = (catalog_pick){.obj = c,
                                       .name = name,
                                       .priority = (int32_t)json_integer_value(kube_object_path(c, "spec.priority")),
                                       .unavailable = mode && strcmp(mode, "Unavailable") == 0};
    }
    kube_label_selector_free(sel);
    /* Listings come in any order; a fixed one keeps messages stable. */
    qsort(picks, *n, sizeof *picks, by_name);
    *out = picks;
    return 0;
}

/* catalog_selector: spec.source.catalog.selector, a metav1.LabelSelector evaluated by
 * kube_label_selector; this adds what the selector is for to its errors, as upstream's
 * "desired catalog selector is invalid: ..." does. */
#include "catalog.h"

int catalog_selector_parse(const json_t *selector, kube_label_selector **out, olm_error *err)
{
    if (kube_label_selector_parse(selector, out, err) != 0)
        return olm_error_wrap(err, "desired catalog selector is invalid");
    return 0;
}

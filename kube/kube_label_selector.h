/* kube_label_selector: metav1.LabelSelector, matchLabels AND every matchExpressions
 * requirement (In, NotIn, Exists, DoesNotExist), evaluated against metadata.labels the
 * way apimachinery does (an absent key matches NotIn). */
#ifndef OLM_KUBE_LABEL_SELECTOR_H
#define OLM_KUBE_LABEL_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>

#include "olm_error.h"

typedef struct kube_label_selector kube_label_selector;

/* Parses a metav1.LabelSelector object.  NULL, JSON null or {} select everything.
 * A bad selector returns -1 with err saying why in apimachinery's words, e.g.
 * "\"Like\" is not a valid label selector operator" (callers add what it selects).
 * *out is owned by the caller (kube_label_selector_free). */
int kube_label_selector_parse(const json_t *selector, kube_label_selector **out, olm_error *err);
/* `labels` is metadata.labels (may be NULL: no labels). */
bool kube_label_selector_matches(const kube_label_selector *sel, const json_t *labels);
void kube_label_selector_free(kube_label_selector *sel);

#endif

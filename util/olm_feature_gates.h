/* olm_feature_gates: --feature-gates=Name=true|false[,Name=...], as upstream's daemons
 * (k8s.io/component-base featuregate) accept it.
 *
 * A daemon lists the gates that change its behaviour, one row each; the list may be empty
 * (pass NULL, 0), and then every name is refused, which is the point: a gate this build
 * does not implement must not look as if it were honoured. */
#ifndef OLMV1_OLM_FEATURE_GATES_H
#define OLMV1_OLM_FEATURE_GATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct olm_feature_gate {
    const char *name;  /* "DeploymentConfig" */
    bool *value;       /* set to `def`, then to what the list says */
    bool def;
    const char *about; /* one line for --help */
} olm_feature_gate;

/* Sets every gate to its default, then applies `list` (NULL or "" changes nothing).  Items
 * are "Name=value" separated by commas, spaces around them ignored; values are Go's
 * strconv.ParseBool spellings (true/false, 1/0, t/f, TRUE/FALSE, True/False).  Returns 0,
 * or -1 with msg "--feature-gates: ..." naming the first bad item or unknown gate. */
int olm_feature_gates_parse(const olm_feature_gate *gates, size_t ngates, const char *list, char *msg,
                            size_t msgsz);

/* The --help lines: "<indent>Name=true|false (default false): about", or
 * "<indent>(none in this build)". */
void olm_feature_gates_usage(FILE *out, const olm_feature_gate *gates, size_t ngates, const char *indent);

#endif

/* kube_label_selector: metav1.LabelSelector semantics (matchLabels AND every
 * matchExpressions requirement), see kube_label_selector.h.  Error texts follow
 * apimachinery's LabelSelectorAsSelector where they are short. */
#include <stdlib.h>
#include <string.h>

#include "kube_label_selector.h"
#include "olm_array.h"

typedef enum { OP_IN, OP_NOT_IN, OP_EXISTS, OP_DOES_NOT_EXIST } sel_op;

typedef struct sel_req {
    char *key;
    sel_op op;
    char **values; /* owned */
    size_t nvalues;
} sel_req;

struct kube_label_selector {
    sel_req *reqs; /* owned; matchLabels become In with one value */
    size_t n, cap;
};

void kube_label_selector_free(kube_label_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++) {
        free(sel->reqs[i].key);
        for (size_t j = 0; j < sel->reqs[i].nvalues; j++)
            free(sel->reqs[i].values[j]);
        free(sel->reqs[i].values);
    }
    free(sel->reqs);
    free(sel);
}

/* A label name part: at most 63 characters, alphanumeric at both ends, [-_.A-Za-z0-9]
 * inside.  `allow_empty` for values. */
static bool label_name_ok(const char *s, bool allow_empty)
{
    size_t n = strlen(s);
    if (n == 0)
        return allow_empty;
    if (n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
            return false;
    }
    return true;
}

/* A qualified key: [prefix/]name, the prefix a DNS subdomain of at most 253 chars. */
static bool label_key_ok(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return label_name_ok(key, false);
    size_t plen = (size_t)(slash - key);
    if (plen == 0 || plen > 253 || !label_name_ok(slash + 1, false))
        return false;
    for (size_t i = 0; i < plen; i++) {
        char c = key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static int add_req(kube_label_selector *sel, const char *key, sel_op op, const json_t *values, const char *single,
                   olm_error *err)
{
    if (!label_key_ok(key))
        return olm_error_set(err,
                             "key: Invalid value: \"%s\": name part must consist of alphanumeric characters, "
                             "'-', '_' or '.', and must start and end with an alphanumeric character",
                             key);
    if (OLM_ARRAY_RESERVE(sel->reqs, sel->cap, sel->n + 1) < 0)
        return olm_error_set(err, "out of memory");
    sel_req *r = &sel->reqs[sel->n];
    *r = (sel_req){.op = op};
    r->key = strdup(key);
    if (!r->key)
        return olm_error_set(err, "out of memory");
    sel->n++; /* from here kube_label_selector_free owns r */
    size_t nv = single ? 1 : (values ? json_array_size(values) : 0);
    if (nv == 0)
        return 0;
    r->values = calloc(nv, sizeof *r->values);
    if (!r->values)
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < nv; i++) {
        const char *v = single ? single : json_string_value(json_array_get(values, i));
        if (!v)
            return olm_error_set(err, "values of key \"%s\" must be strings", key);
        if (!label_name_ok(v, true))
            return olm_error_set(err,
                                 "values[%zu]: Invalid value: \"%s\": a valid label must be an empty string or "
                                 "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                                 "with an alphanumeric character",
                                 i, v);
        r->values[i] = strdup(v);
        if (!r->values[i])
            return olm_error_set(err, "out of memory");
        r->nvalues++;
    }
    return 0;
}

static int parse_expression(kube_label_selector *sel, const json_t *e, olm_error *err)
{
    const char *key = json_string_value(json_object_get(e, "key"));
    const char *op = json_string_value(json_object_get(e, "operator"));
    const json_t *values = json_object_get(e, "values");
    if (!json_is_object(e) || !key)
        return olm_error_set(err, "matchExpressions entries need a string key");
    if (values && !json_is_null(values) && !json_is_array(values))
        return olm_error_set(err, "values of key \"%s\" must be a list", key);
    size_t nv = json_is_array(values) ? json_array_size(values) : 0;
    sel_op o;
    if (op && strcmp(op, "In") == 0)
        o = OP_IN;
    else if (op && strcmp(op, "NotIn") == 0)
        o = OP_NOT_IN;
    else if (op && strcmp(op, "Exists") == 0)
        o = OP_EXISTS;
    else if (op && strcmp(op, "DoesNotExist") == 0)
        o = OP_DOES_NOT_EXIST;
    else
        return olm_error_set(err, "\"%s\" is not a valid label selector operator", op ? op : "");
    if ((o == OP_IN || o == OP_NOT_IN) && nv == 0)
        return olm_error_set(err, "values: Invalid value: []string{}: for 'in', 'notin' operators, "
                                  "values set can't be empty");
    if ((o == OP_EXISTS || o == OP_DOES_NOT_EXIST) && nv != 0)
        return olm_error_set(err, "values: Invalid value: values set must be empty for exists and "
                                  "does not exist");
    return add_req(sel, key, o, json_is_array(values) ? values : NULL, NULL, err);
}

int kube_label_selector_parse(const json_t *selector, kube_label_selector **out, olm_error *err)
{
    *out = NULL;
    kube_label_selector *sel = calloc(1, sizeof *sel);
    if (!sel)
        return olm_error_set(err, "out of memory");
    if (!selector || json_is_null(selector)) {
        *out = sel;
        return 0;
    }
    if (!json_is_object(selector)) {
        kube_label_selector_free(sel);
        return olm_error_set(err, "a selector must be an object");
    }
    const json_t *ml = json_object_get(selector, "matchLabels");
    const json_t *me = json_object_get(selector, "matchExpressions");
    if ((ml && !json_is_null(ml) && !json_is_object(ml)) || (me && !json_is_null(me) && !json_is_array(me))) {
        kube_label_selector_free(sel);
        return olm_error_set(err, "matchLabels must be an object and matchExpressions a list");
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ml, k, v) {
        if (!json_is_string(v)) {
            kube_label_selector_free(sel);
            return olm_error_set(err, "matchLabels[%s] must be a string", k);
        }
        if (add_req(sel, k, OP_IN, NULL, json_string_value(v), err) != 0) {
            kube_label_selector_free(sel);
            return -1;
        }
    }
    size_t i;
    json_array_foreach((json_t *)me, i, v) {
        if (parse_expression(sel, v, err) != 0) {
            kube_label_selector_free(sel);
            return -1;
        }
    }
    *out = sel;
    return 0;
}

bool kube_label_selector_matches(const kube_label_selector *sel, const json_t *labels)
{
    for (size_t i = 0; i < sel->n; i++) {
        const sel_req *r = &sel->reqs[i];
        const char *have = json_string_value(json_object_get(labels, r->key));
        bool in = false;
        for (size_t j = 0; have && j < r->nvalues; j++)
            in |= strcmp(have, r->values[j]) == 0;
        switch (r->op) {
        case OP_IN:
            if (!in)
                return false;
            break;
        case OP_NOT_IN: /* absent keys match NotIn, as in apimachinery */
            if (in)
                return false;
            break;
        case OP_EXISTS:
            if (!have)
                return false;
            break;
        case OP_DOES_NOT_EXIST:
            if (have)
                return false;
            break;
        }
    }
    return true;
}

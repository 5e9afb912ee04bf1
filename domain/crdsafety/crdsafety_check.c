/* crdsafety: the CRD upgrade-safety preflight (olmv1-behaviour.md §6.3),
 * a re-implementation of sigs.k8s.io/crdify as operator-controller configures it:
 * conversion policy Ignore, unhandled changes fail, description ignored, enum
 * additions allowed.
 *
 * Upstream collects results in Go maps, so its line order is random; ours is
 * fixed so messages are stable: CRD-wide checks (existingFieldRemoval, scope,
 * storedVersionRemoval), then same-version results in the existing CRD's version
 * order, then served-version pairs in kube-aware version order; within a version,
 * property paths sorted, then comparators in registry order, "unhandled" last. */
#include <stdlib.h>
#include <string.h>

#include "crdsafety.h"
#include "crdsafety_internal.h"

static const json_t *versions_of(const json_t *crd)
{
    return json_object_get(json_object_get(crd, "spec"), "versions");
}

static const char *str_or_empty(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

/* existingFieldRemoval: every path of an existing version missing from the same
 * version of the new CRD ("removed field : <version>.<path>"). */
static int existing_field_removal(const json_t *old, const json_t *new, crdsafety_list *out)
{
    size_t i;
    const json_t *nv;
    json_array_foreach(versions_of(new), i, nv) {
        const char *name = json_string_value(json_object_get(nv, "name"));
        const json_t *ov = name ? crdsafety_crd_version(old, name) : NULL;
        if (!ov)
            continue;
        json_t *fa = crdsafety_flatten(crdsafety_version_schema(ov)), *fb = crdsafety_flatten(crdsafety_version_schema(nv));
        size_t n = 0;
        const char **paths = fa ? crdsafety_sorted_keys(fa, &n) : NULL;
        int r = !fa || !fb || (!paths && n) ? -1 : 0;
        for (size_t k = 0; !r && k < n; k++)
            if (!json_object_get(fb, paths[k]))
                r = crdsafety_list_addf(out, "existingFieldRemoval: removed field : %s.%s", name, paths[k]);
        free(paths);
        json_decref(fa);
        json_decref(fb);
        if (r)
            return -1;
    }
    return 0;
}

static int scope_check(const json_t *old, const json_t *new, crdsafety_list *out)
{
    const char *a = str_or_empty(json_object_get(json_object_get(old, "spec"), "scope"));
    const char *b = str_or_empty(json_object_get(json_object_get(new, "spec"), "scope"));
    if (strcmp(a, b) == 0)
        return 0;
    strbuf m = STRBUF_INIT;
    int r = strbuf_puts(&m, "scope: scope changed : ") || crdsafety_go_quote(&m, a) || strbuf_puts(&m, " -> ") ||
            crdsafety_go_quote(&m, b) || crdsafety_list_addf(out, "%s", strbuf_str(&m));
    strbuf_free(&m);
    return r ? -1 : 0;
}

static int stored_version_removal(const json_t *old, const json_t *new, crdsafety_list *out)
{
    const json_t *stored = json_object_get(json_object_get(old, "status"), "storedVersions");
    strbuf m = STRBUF_INIT;
    size_t i;
    const json_t *sv;
    int r = 0;
    json_array_foreach(stored, i, sv) {
        const char *name = str_or_empty(sv);
        if (crdsafety_crd_version(new, name))
            continue;
        r = r || strbuf_puts(&m, m.len ? " " : "storedVersionRemoval: stored versions removed : [") ||
            strbuf_puts(&m, name);
    }
    if (!r && m.len)
        r = strbuf_putc(&m, ']') || crdsafety_list_addf(out, "%s", strbuf_str(&m));
    strbuf_free(&m);
    return r ? -1 : 0;
}

/* Same-version comparison: each existing version against its namesake. */
static int same_versions(const json_t *old, const json_t *new, crdsafety_list *out)
{
    size_t i;
    const json_t *ov;
    json_array_foreach(versions_of(old), i, ov) {
        const char *name = json_string_value(json_object_get(ov, "name"));
        const json_t *nv = name ? crdsafety_crd_version(new, name) : NULL;
        if (nv && crdsafety_compare_versions(ov, nv, name, out))
            return -1;
    }
    return 0;
}


static int cmp_version(const void *a, const void *b)
{
    const char *na = str_or_empty(json_object_get(*(const json_t *const *)a, "name"));
    const char *nb = str_or_empty(json_object_get(*(const json_t *const *)b, "name"));
    return crdsafety_kube_version_cmp(na, nb);
}

/* crdify's served-version comparison of one CRD: every pair of served versions,
 * older -> newer in kube-aware order, labelled "<a> -> <b>". */
static int served_pairs(const json_t *crd, crdsafety_list *out)
{
    const json_t *versions = versions_of(crd);
    size_t n = 0, total = json_array_size(versions);
    if (total < 2)
        return 0;
    const json_t **served = malloc(total * sizeof(*served));
    if (!served)
        return -1;
    for (size_t i = 0; i < total; i++) {
        const json_t *v = json_array_get(versions, i);
        if (json_is_true(json_object_get(v, "served")))
            served[n++] = v;
    }
    qsort(served, n, sizeof(*served), cmp_version);
    int r = 0;
    for (size_t i = 0; !r && i + 1 < n; i++)
        for (size_t j = i + 1; !r && j < n; j++) {
            char *label = NULL;
            if (asprintf(&label, "%s -> %s", str_or_empty(json_object_get(served[i], "name")),
                         str_or_empty(json_object_get(served[j], "name"))) < 0)
                r = -1;
            else
                r = crdsafety_compare_versions(served[i], served[j], label, out);
            free(label);
        }
    free(served);
    return r;
}

/* Served versions of the new CRD, minus the issues the existing CRD already had
 * (crdify subtracts them so a CRD that was already inconsistent can still be
 * re-applied).  Skipped with a conversion webhook (policy Ignore). */
static int served_versions(const json_t *old, const json_t *new, crdsafety_list *out)
{
    const json_t *conv = json_object_get(json_object_get(new, "spec"), "conversion");
    if (strcmp(str_or_empty(json_object_get(conv, "strategy")), "Webhook") == 0)
        return 0;
    crdsafety_list had = {0}, now = {0};
    int r = served_pairs(old, &had) || served_pairs(new, &now);
    for (size_t i = 0; !r && i < now.n; i++) {
        if (crdsafety_list_has(&had, now.v[i]))
            continue;
        r = crdsafety_list_take(out, now.v[i]);
        now.v[i] = NULL; /* moved (freed by crdsafety_list_take on failure) */
    }
    crdsafety_list_free(&had);
    crdsafety_list_free(&now);
    return r ? -1 : 0;
}

int crdsafety_report(const json_t *existing, const json_t *desired, char **report, olm_error *err)
{
    *report = NULL;
    crdsafety_list errs = {0};
    if (existing_field_removal(existing, desired, &errs) || scope_check(existing, desired, &errs) ||
        stored_version_removal(existing, desired, &errs) || same_versions(existing, desired, &errs) ||
        served_versions(existing, desired, &errs)) {
        crdsafety_list_free(&errs);
        return olm_error_set(err, "checking CRD upgrade safety: out of memory");
    }
    if (errs.n == 0) {
        crdsafety_list_free(&errs);
        return 0;
    }
    const char *name = str_or_empty(json_object_get(json_object_get(desired, "metadata"), "name"));
    strbuf m = STRBUF_INIT;
    int r = strbuf_printf(&m, "validating upgrade for CRD \"%s\": ", name);
    for (size_t i = 0; !r && i < errs.n; i++)
        r = (i && strbuf_putc(&m, '\n')) || strbuf_puts(&m, errs.v[i]);
    crdsafety_list_free(&errs);
    if (r) {
        strbuf_free(&m);
        return olm_error_set(err, "checking CRD upgrade safety: out of memory");
    }
    *report = strbuf_detach(&m);
    return 0;
}

int crdsafety_check(const json_t *existing, const json_t *desired, olm_error *err)
{
    char *report = NULL;
    if (crdsafety_report(existing, desired, &report, err))
        return -1;
    if (!report)
        return 0;
    /* olm_error truncates very long reports; crdsafety_report has them whole. */
    olm_error_set(err, "%s", report);
    free(report);
    return -1;
}

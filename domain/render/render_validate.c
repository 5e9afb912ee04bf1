/* render_validate: the registry+v1 validators (spec §5.3), in upstream order.
 * Every validator runs; the errors are joined with "\n" (Go's errors.Join). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "olm_array.h"
#include "render_internal.h"
#include "strbuf.h"

typedef struct vctx {
    strbuf sb;
    int oom;
} vctx;

static void verr(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verr(vctx *v, const char *fmt, ...)
{
    va_list ap;
    char *m = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&m, fmt, ap);
    va_end(ap);
    if (n < 0 || (v->sb.len && strbuf_putc(&v->sb, '\n') < 0) || strbuf_puts(&v->sb, m) < 0)
        v->oom = 1;
    free(m);
}

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names that occur more than once in `names`, each once, sorted.  Sorts `names`;
 * each is reported as "<prefix> '<name>'". */
static void report_duplicates(vctx *v, const char **names, size_t n, const char *prefix)
{
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i], names[i - 1]) == 0 && (i + 1 == n || strcmp(names[i + 1], names[i]) != 0))
            verr(v, "%s '%s'", prefix, names[i]);
}

/* k8s.io/apimachinery IsDNS1123Subdomain, messages joined with `sep`.  Returns
 * an allocated string, "" when valid, NULL on OOM. */
static char *dns1123_subdomain_errors(const char *s, const char *sep)
{
    size_t n = strlen(s);
    /* [a-z0-9]([-a-z0-9]*[a-z0-9])? labels joined by '.'. */
    int ok = n > 0;
    for (size_t i = 0, lab = 0; ok && i <= n; i++) {
        char c = s[i];
        if (c == '.' || c == '\0') {
            ok = i > lab && s[i - 1] != '-';
            lab = i + 1;
        } else if (c == '-') {
            ok = i > lab;
        } else {
            ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        }
    }
    char *out = NULL;
    const char *toolong = n > 253 ? "must be no more than 253 characters" : NULL;
    const char *regex = ok ? NULL
                           : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                             "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                             "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    if (asprintf(&out, "%s%s%s", toolong ? toolong : "", toolong && regex ? sep : "", regex ? regex : "") < 0)
        return NULL;
    return out;
}

static void check_deployments(vctx *v, const bundle *b)
{
    json_t *deps = render_strategy_list(b, "deployments"), *d;
    size_t n = json_array_size(deps), i;
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) {
        v->oom = 1;
        return;
    }
    json_array_foreach(deps, i, d) names[i] = str_of(d, "name");
    report_duplicates(v, names, n, "cluster service version contains duplicate strategy deployment spec");
    free(names);
    json_array_foreach(deps, i, d) {
        char *e = dns1123_subdomain_errors(str_of(d, "name"), ", ");
        if (!e)
            v->oom = 1;
        else if (*e)
            verr(v, "invalid cluster service version strategy deployment name '%s': %s", str_of(d, "name"), e);
        free(e);
    }
}

static void check_crds(vctx *v, const bundle *b)
{
    size_t n = json_array_size(b->crds), i;
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) {
        v->oom = 1;
        return;
    }
    json_t *crd;
    json_array_foreach(b->crds, i, crd) names[i] = bundle_json_str(crd, "metadata.name");
    report_duplicates(v, names, n, "bundle contains duplicate custom resource definition");
    /* Owned CRDs that the bundle does not ship: sorted, each once. */
    json_t *owned = bundle_json_path(b->csv, "spec.customresourcedefinitions.owned"), *o;
    size_t no = json_array_size(owned), nm = 0;
    const char **missing = calloc(no ? no : 1, sizeof *missing);
    if (!missing) {
        v->oom = 1;
        free(names);
        return;
    }
    json_array_foreach(owned, i, o) {
        const char *name = str_of(o, "name");
        int found = 0;
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(names[k], name) == 0;
        if (!found)
            missing[nm++] = name;
    }
    qsort(missing, nm, sizeof *missing, cmp_str);
    for (size_t k = 0; k < nm; k++)
        if (k == 0 || strcmp(missing[k], missing[k - 1]) != 0)
            verr(v, "cluster service definition references owned custom resource definition '%s' not found in bundle",
                 missing[k]);
    free(missing);
    free(names);
}

/* Webhook definitions sorted by (type, generateName), as upstream iterates them. */
static int cmp_webhooks(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int r = strcmp(str_of(a, "type"), str_of(b, "type"));
    return r ? r : strcmp(str_of(a, "generateName"), str_of(b, "generateName"));
}

static int has_deployment(const bundle *b, const char *name)
{
    json_t *d;
    size_t i;
    json_array_foreach(render_strategy_list(b, "deployments"), i, d) if (strcmp(str_of(d, "name"), name) == 0) return 1;
    return 0;
}

static int owns_crd(const bundle *b, const char *name)
{
    json_t *o;
    size_t i;
    json_array_foreach(bundle_json_path(b->csv, "spec.customresourcedefinitions.owned"), i, o) if (strcmp(str_of(o, "name"), name) == 0) return 1;
    return 0;
}

static void check_conversion_modes(vctx *v, const bundle *b)
{
    unsigned modes = bundle_install_modes(b->csv);
    if (modes == INSTALL_MODE_ALL)
        return;
    char ms[128];
    bundle_install_modes_format(modes, ms, sizeof ms);
    /* CSV order here: upstream collects the names before any sorting. */
    json_t *w;
    size_t i;
    json_array_foreach(render_webhook_definitions(b), i, w) if (strcmp(str_of(w, "type"), "ConversionWebhook") == 0)
        verr(v, "bundle contains conversion webhook \"%s\" and supports install modes %s - conversion webhooks are only supported for bundles that only support AllNamespaces install mode",
             str_of(w, "generateName"), ms);
}

static void check_webhook_rules(vctx *v, json_t **wh, size_t n)
{
    static const char *const forbidden_res[] = {"*", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations",
                                                "validatingwebhookconfiguration", "validatingwebhookconfigurations"};
    json_t *r, *g, *res;
    size_t i, j, k;
    for (size_t w = 0; w < n; w++) {
        if (strcmp(str_of(wh[w], "type"), "ConversionWebhook") == 0)
            continue;
        const char *name = str_of(wh[w], "generateName");
        json_array_foreach(json_object_get(wh[w], "rules"), i, r) json_array_foreach(json_object_get(r, "apiGroups"), j, g) {
            const char *group = json_string_value(g);
            if (!group)
                continue;
            if (strcmp(group, "olm.operatorframework.io") == 0 || strcmp(group, "*") == 0)
                verr(v, "webhook \"%s\" contains forbidden rule: admission webhook rules cannot reference API group \"%s\"", name, group);
            if (strcmp(group, "admissionregistration.k8s.io") != 0)
                continue;
            json_array_foreach(json_object_get(r, "resources"), k, res) {
                const char *rs = json_string_value(res);
                for (size_t f = 0; rs && f < sizeof forbidden_res / sizeof forbidden_res[0]; f++)
                    if (strcasecmp(rs, forbidden_res[f]) == 0) {
                        verr(v, "webhook \"%s\" contains forbidden rule: admission webhook rules cannot reference resource \"%s\" for API group \"%s\"",
                             name, rs, group);
                        break;
                    }
            }
        }
    }
}

static void check_webhooks(vctx *v, const bundle *b)
{
    json_t *defs = render_webhook_definitions(b);
    size_t n = json_array_size(defs);
    if (n == 0)
        return;
    json_t **wh = calloc(n, sizeof *wh);
    if (!wh) {
        v->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        wh[i] = json_array_get(defs, i);
    qsort(wh, n, sizeof *wh, cmp_webhooks);
    check_conversion_modes(v, b);
    for (size_t i = 0; i < n; i++)
        if (!has_deployment(b, str_of(wh[i], "deploymentName")))
            verr(v, "webhook of type '%s' with name '%s' references non-existent deployment '%s'", str_of(wh[i], "type"),
                 str_of(wh[i], "generateName"), str_of(wh[i], "deploymentName"));
    /* Sorted by (type, name), so duplicates are neighbours. */
    for (size_t i = 1; i < n; i++)
        if (cmp_webhooks(&wh[i], &wh[i - 1]) == 0 && (i + 1 == n || cmp_webhooks(&wh[i + 1], &wh[i]) != 0))
            verr(v, "duplicate webhook '%s' of type '%s'", str_of(wh[i], "generateName"), str_of(wh[i], "type"));
    for (size_t i = 0; i < n; i++) {
        char *e = dns1123_subdomain_errors(str_of(wh[i], "generateName"), ",");
        if (!e)
            v->oom = 1;
        else if (*e)
            verr(v, "webhook of type '%s' has invalid name '%s': %s", str_of(wh[i], "type"), str_of(wh[i], "generateName"), e);
        free(e);
    }
    /* Conversion CRDs claimed by more than one webhook (CRDs in sorted order). */
    const char **crds = NULL;
    size_t ncrd = 0, crds_cap = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(str_of(wh[i], "type"), "ConversionWebhook") != 0)
            continue;
        json_t *c;
        size_t k;
        json_array_foreach(json_object_get(wh[i], "conversionCRDs"), k, c) {
            if (OLM_ARRAY_RESERVE(crds, crds_cap, ncrd + 1) < 0) {
                v->oom = 1;
                break;
            }
            crds[ncrd++] = json_string_value(c) ? json_string_value(c) : "";
        }
    }
    if (ncrd)
        qsort(crds, ncrd, sizeof *crds, cmp_str); /* crds is NULL when empty */
    for (size_t k = 0; k < ncrd; k++) {
        if ((k > 0 && strcmp(crds[k], crds[k - 1]) == 0) || k + 1 == ncrd || strcmp(crds[k + 1], crds[k]) != 0)
            continue;
        strbuf names = STRBUF_INIT;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(str_of(wh[i], "type"), "ConversionWebhook") != 0)
                continue;
            json_t *c;
            size_t j;
            json_array_foreach(json_object_get(wh[i], "conversionCRDs"), j, c) if (json_string_value(c) && strcmp(json_string_value(c), crds[k]) == 0) {
                if ((names.len && strbuf_putc(&names, ',') < 0) || strbuf_puts(&names, str_of(wh[i], "generateName")) < 0)
                    v->oom = 1;
                break;
            }
        }
        verr(v, "conversion webhooks [%s] reference same custom resource definition '%s'", strbuf_str(&names), crds[k]);
        strbuf_free(&names);
    }
    free(crds);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(str_of(wh[i], "type"), "ConversionWebhook") != 0)
            continue;
        json_t *c;
        size_t k;
        json_array_foreach(json_object_get(wh[i], "conversionCRDs"), k, c) if (!owns_crd(b, json_string_value(c) ? json_string_value(c) : ""))
            verr(v, "conversion webhook '%s' references custom resource definition '%s' not owned bundle",
                 str_of(wh[i], "generateName"), json_string_value(c) ? json_string_value(c) : "");
    }
    check_webhook_rules(v, wh, n);
    free(wh);
}

int render_kind_support(const char *kind)
{
    static const char *const namespaced[] = {"ClusterServiceVersion", "Service", "ServiceAccount", "Role",
                                             "RoleBinding", "PrometheusRule", "ServiceMonitor", "Secret",
                                             "ConfigMap", "PodDisruptionBudget", "NetworkPolicy", "PodMonitor"};
    static const char *const cluster[] = {"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
                                          "PriorityClass", "VerticalPodAutoscaler", "ConsoleYAMLSample",
                                          "ConsoleQuickStart", "ConsoleCLIDownload", "ConsoleLink", "ConsolePlugin"};
    for (size_t i = 0; i < sizeof namespaced / sizeof namespaced[0]; i++)
        if (strcmp(kind, namespaced[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof cluster / sizeof cluster[0]; i++)
        if (strcmp(kind, cluster[i]) == 0)
            return 2;
    return 0;
}

int render_validate(const bundle *b, olm_error *err)
{
    vctx v = {STRBUF_INIT, 0};
    check_deployments(&v, b);
    check_crds(&v, b);
    if (!*b->package_name)
        verr(&v, "package name is empty");
    check_webhooks(&v, b);
    json_t *o;
    size_t i;
    json_array_foreach(b->others, i, o) {
        const char *kind = bundle_json_str(o, "kind");
        if (!render_kind_support(kind))
            verr(&v, "unsupported resource \"%s\" with kind \"%s\"", bundle_json_str(o, "metadata.name"), kind);
    }
    int rc = 0;
    if (v.oom)
        rc = olm_error_set(err, "validating bundle: out of memory");
    else if (v.sb.len)
        rc = olm_error_set(err, "%s", strbuf_str(&v.sb));
    strbuf_free(&v.sb);
    return rc;
}

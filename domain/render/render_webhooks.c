/* render_webhooks: CRDs (with conversion webhooks), admission webhook
 * configurations, their Services and the certificate provider's part (§5.5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "render_internal.h"

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

char *render_webhook_service_name(const char *deployment)
{
    char *base = strdup(deployment);
    if (!base)
        return NULL;
    for (char *p = base; *p; p++)
        if (*p == '.')
            *p = '-';
    char *name = render_object_name(base, "service");
    free(base);
    return name;
}

char *render_cert_name(const char *deployment)
{
    char *svc = render_webhook_service_name(deployment);
    char *cert = svc ? render_object_name(svc, "cert") : NULL;
    free(svc);
    return cert;
}

long render_webhook_container_port(const json_t *wh)
{
    json_t *p = json_object_get(wh, "containerPort");
    double v = json_is_number(p) ? json_number_value(p) : 0;
    return v > 0 ? (long)v : 443;
}

int render_deployment_serves_webhooks(const bundle *b, const char *deployment)
{
    json_t *w;
    size_t i;
    json_array_foreach(render_webhook_definitions(b), i, w) if (strcmp(str_of(w, "deploymentName"), deployment) == 0) return 1;
    return 0;
}

int render_cert_annotate_inject(const render_ctx *c, json_t *obj, const char *deployment, olm_error *err)
{
    int rc = 0;
    if (c->opts->cert_provider == RENDER_CERT_OPENSHIFT_SERVICE_CA) {
        rc = render_set_annotation(obj, "service.beta.openshift.io/inject-cabundle", "true");
    } else if (c->opts->cert_provider == RENDER_CERT_MANAGER) {
        char *cert = render_cert_name(deployment), *ref = NULL;
        rc = cert && asprintf(&ref, "%s/%s", c->install_ns, cert) >= 0
                 ? render_set_annotation(obj, "cert-manager.io/inject-ca-from", ref)
                 : -1;
        free(ref);
        free(cert);
    }
    return rc < 0 ? olm_error_set(err, "rendering webhooks: out of memory") : 0;
}

int render_cert_annotate_service(const render_ctx *c, json_t *svc, const char *deployment, olm_error *err)
{
    if (c->opts->cert_provider != RENDER_CERT_OPENSHIFT_SERVICE_CA)
        return 0;
    char *cert = render_cert_name(deployment);
    int rc = cert ? render_set_annotation(svc, "service.beta.openshift.io/serving-cert-secret-name", cert) : -1;
    free(cert);
    return rc < 0 ? olm_error_set(err, "rendering webhooks: out of memory") : 0;
}

/* {"service": {namespace, name, path, port}} for a webhook definition. */
static json_t *client_config(const render_ctx *c, const json_t *wh, const char *default_path)
{
    char *svc = render_webhook_service_name(str_of(wh, "deploymentName"));
    if (!svc)
        return NULL;
    json_t *path = json_object_get(wh, "webhookPath");
    json_t *service = json_pack("{s:s,s:s}", "namespace", c->install_ns, "name", svc);
    free(svc);
    if (!service)
        return NULL;
    if ((json_is_string(path) || default_path) &&
        json_object_set_new(service, "path", json_is_string(path) ? json_incref(path) : json_string(default_path)) < 0)
        goto fail;
    if (json_object_set_new(service, "port", json_integer(render_webhook_container_port(wh))) < 0)
        goto fail;
    return json_pack("{s:o}", "service", service);
fail:
    json_decref(service);
    return NULL;
}

int render_crds(render_ctx *c, olm_error *err)
{
    json_t *defs = render_webhook_definitions(c->b), *w, *crd;
    size_t i, k;
    /* A CRD converted by two webhooks is ambiguous; upstream refuses it here too. */
    json_array_foreach(defs, i, w) {
        if (strcmp(str_of(w, "type"), "ConversionWebhook") != 0)
            continue;
        json_t *name;
        json_array_foreach(json_object_get(w, "conversionCRDs"), k, name) {
            for (size_t j = 0; j < i; j++) {
                json_t *o = json_array_get(defs, j), *n2;
                size_t m;
                if (strcmp(str_of(o, "type"), "ConversionWebhook") != 0)
                    continue;
                json_array_foreach(json_object_get(o, "conversionCRDs"), m, n2) if (json_equal(n2, name))
                    return olm_error_set(err, "custom resource definition '%s' is referenced by multiple conversion webhook definitions",
                                         json_string_value(name) ? json_string_value(name) : "");
            }
        }
    }
    json_array_foreach(c->b->crds, i, crd) {
        const char *name = bundle_json_str(crd, "metadata.name");
        const json_t *conv = NULL;
        json_array_foreach(defs, k, w) {
            json_t *n;
            size_t m;
            if (strcmp(str_of(w, "type"), "ConversionWebhook") == 0)
                json_array_foreach(json_object_get(w, "conversionCRDs"), m, n) if (json_string_value(n) && strcmp(json_string_value(n), name) == 0) conv = w;
        }
        json_t *copy = json_deep_copy(crd);
        if (copy && conv) {
            if (json_is_true(bundle_json_path(copy, "spec.preserveUnknownFields"))) {
                json_decref(copy);
                return olm_error_set(err, "custom resource definition '%s' must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion",
                                     name);
            }
            json_t *versions = json_object_get(conv, "admissionReviewVersions");
            json_t *conversion = json_pack("{s:s,s:{s:o,s:O}}", "strategy", "Webhook", "webhook", "clientConfig",
                                           client_config(c, conv, "/"), "conversionReviewVersions",
                                           versions ? versions : json_null());
            json_t *spec = json_object_get(copy, "spec");
            if (!json_is_object(spec) && (!(spec = json_object()) || json_object_set_new(copy, "spec", spec) < 0))
                spec = NULL;
            if (!conversion || !spec || json_object_set_new(spec, "conversion", conversion) < 0) {
                json_decref(copy);
                return olm_error_set(err, "rendering CRDs: out of memory");
            }
            if (render_cert_annotate_inject(c, copy, str_of(conv, "deploymentName"), err) < 0) {
                json_decref(copy);
                return -1;
            }
        }
        if (render_emit(c, copy, err) < 0)
            return -1;
    }
    return 0;
}

/* Copies `key` from the definition when present (upstream copies typed fields;
 * absent pointers stay absent). */
static int copy_field(json_t *dst, const json_t *wh, const char *key)
{
    json_t *v = json_object_get(wh, key);
    return v && !json_is_null(v) ? json_object_set_new(dst, key, json_deep_copy(v)) : 0;
}

static json_t *namespace_selector(const render_ctx *c)
{
    json_t *values = json_array();
    for (size_t i = 0; values && i < c->ntargets; i++) {
        if (!*c->targets[i]) {
            json_decref(values);
            return json_null(); /* all namespaces: no selector */
        }
        if (json_array_append_new(values, json_string(c->targets[i])) < 0) {
            json_decref(values);
            return NULL;
        }
    }
    if (!values)
        return NULL;
    return json_pack("{s:[{s:s,s:s,s:o}]}", "matchExpressions", "key", "kubernetes.io/metadata.name", "operator", "In",
                     "values", values);
}

int render_webhook_configs(render_ctx *c, const char *type, olm_error *err)
{
    int mutating = strcmp(type, "MutatingAdmissionWebhook") == 0;
    json_t *w;
    size_t i;
    json_array_foreach(render_webhook_definitions(c->b), i, w) {
        if (strcmp(str_of(w, "type"), type) != 0)
            continue;
        char *name = strdup(str_of(w, "generateName"));
        if (!name)
            return olm_error_set(err, "rendering webhooks: out of memory");
        size_t n = strlen(name);
        if (n && name[n - 1] == '-')
            name[n - 1] = '\0';
        /* metadata.namespace on a cluster-scoped object: upstream sets it (sic). */
        json_t *cfg = render_new_object("admissionregistration.k8s.io/v1",
                                        mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
                                        name, c->install_ns);
        json_t *hook = json_pack("{s:s}", "name", name);
        json_t *sel = namespace_selector(c);
        free(name);
        int bad = !cfg || !hook || !sel || json_object_set_new(hook, "clientConfig", client_config(c, w, NULL)) < 0 ||
                  copy_field(hook, w, "rules") < 0 || copy_field(hook, w, "failurePolicy") < 0 ||
                  copy_field(hook, w, "matchPolicy") < 0 ||
                  (!json_is_null(sel) && json_object_set(hook, "namespaceSelector", sel) < 0) ||
                  copy_field(hook, w, "objectSelector") < 0 || copy_field(hook, w, "sideEffects") < 0 ||
                  copy_field(hook, w, "timeoutSeconds") < 0 || copy_field(hook, w, "admissionReviewVersions") < 0 ||
                  (mutating && copy_field(hook, w, "reinvocationPolicy") < 0) ||
                  json_object_set_new(cfg, "webhooks", json_pack("[O]", hook)) < 0;
        json_decref(sel);
        json_decref(hook);
        if (bad) {
            json_decref(cfg);
            return olm_error_set(err, "rendering webhooks: out of memory");
        }
        if (render_cert_annotate_inject(c, cfg, str_of(w, "deploymentName"), err) < 0) {
            json_decref(cfg);
            return -1;
        }
        if (render_emit(c, cfg, err) < 0)
            return -1;
    }
    return 0;
}

/* One Service port per distinct (port, targetPort), sorted by port then by the
 * numeric value of targetPort (0 for a named port). */
typedef struct svc_port {
    long port;
    json_t *target; /* borrowed: the definition's targetPort, or NULL = port */
} svc_port;

static long target_int(const svc_port *p)
{
    if (!p->target)
        return p->port;
    if (json_is_number(p->target))
        return (long)json_number_value(p->target);
    const char *s = json_string_value(p->target);
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : 0;
    return s && *s && end && !*end ? v : 0;
}

static int ports_equal(const svc_port *a, const svc_port *b)
{
    if (a->port != b->port)
        return 0;
    json_t *ta = a->target ? a->target : NULL, *tb = b->target ? b->target : NULL;
    if (!ta || !tb || json_is_number(ta) != json_is_number(tb))
        return target_int(a) == target_int(b) && json_is_string(ta) == json_is_string(tb);
    return json_is_number(ta) ? target_int(a) == target_int(b) : json_equal(ta, tb);
}

static int cmp_ports(const void *pa, const void *pb)
{
    const svc_port *a = pa, *b = pb;
    if (a->port != b->port)
        return a->port < b->port ? -1 : 1;
    long ta = target_int(a), tb = target_int(b);
    return ta < tb ? -1 : ta > tb;
}

static json_t *service_for(render_ctx *c, const json_t *ds, olm_error *err)
{
    const char *dep = str_of(ds, "name");
    json_t *defs = render_webhook_definitions(c->b), *w;
    size_t n = json_array_size(defs), np = 0, i;
    svc_port *ports = calloc(n ? n : 1, sizeof *ports);
    char *svc_name = render_webhook_service_name(dep);
    json_t *svc = NULL, *plist = json_array();
    if (!ports || !svc_name || !plist)
        goto oom;
    json_array_foreach(defs, i, w) {
        if (strcmp(str_of(w, "deploymentName"), dep) != 0)
            continue;
        json_t *t = json_object_get(w, "targetPort");
        svc_port p = {render_webhook_container_port(w), json_is_number(t) || json_is_string(t) ? t : NULL};
        int dup = 0;
        for (size_t k = 0; k < np && !dup; k++)
            dup = ports_equal(&ports[k], &p);
        if (!dup)
            ports[np++] = p;
    }
    qsort(ports, np, sizeof *ports, cmp_ports);
    for (size_t k = 0; k < np; k++) {
        char pname[32];
        snprintf(pname, sizeof pname, "%ld", ports[k].port);
        json_t *target = !ports[k].target ? json_integer(ports[k].port)
                         : json_is_number(ports[k].target) ? json_integer((json_int_t)json_number_value(ports[k].target))
                                                            : json_incref(ports[k].target);
        if (json_array_append_new(plist, json_pack("{s:s,s:I,s:o}", "name", pname, "port", (json_int_t)ports[k].port,
                                                   "targetPort", target)) < 0)
            goto oom;
    }
    svc = render_new_object("v1", "Service", svc_name, c->install_ns);
    json_t *spec = json_pack("{s:O}", "ports", plist);
    json_t *labels = bundle_json_path(ds, "spec.selector.matchLabels");
    if (!svc || !spec || (json_is_object(labels) && json_object_set_new(spec, "selector", json_deep_copy(labels)) < 0) ||
        json_object_set_new(svc, "spec", spec) < 0) {
        if (!svc)
            json_decref(spec);
        goto oom;
    }
    free(ports);
    free(svc_name);
    json_decref(plist);
    if (render_cert_annotate_service(c, svc, dep, err) < 0) {
        json_decref(svc);
        return NULL;
    }
    return svc;
oom:
    free(ports);
    free(svc_name);
    json_decref(plist);
    json_decref(svc);
    olm_error_set(err, "rendering webhook services: out of memory");
    return NULL;
}

int render_webhook_services(render_ctx *c, olm_error *err)
{
    json_t *ds;
    size_t i;
    json_array_foreach(render_strategy_list(c->b, "deployments"), i, ds) {
        if (!render_deployment_serves_webhooks(c->b, str_of(ds, "name")))
            continue;
        json_t *svc = service_for(c, ds, err);
        if (!svc || render_emit(c, svc, err) < 0)
            return -1;
    }
    return 0;
}

/* cert-manager: a self-signed Issuer and a Certificate per webhook deployment.
 * The OpenShift service-CA needs no objects (it reacts to the annotations). */
int render_cert_objects(render_ctx *c, olm_error *err)
{
    if (c->opts->cert_provider != RENDER_CERT_MANAGER)
        return 0;
    json_t *ds;
    size_t i;
    json_array_foreach(render_strategy_list(c->b, "deployments"), i, ds) {
        const char *dep = str_of(ds, "name");
        if (!render_deployment_serves_webhooks(c->b, dep))
            continue;
        char *svc = render_webhook_service_name(dep), *cert = render_cert_name(dep);
        char *issuer = cert ? render_object_name(cert, "selfsigned-issuer") : NULL;
        char *dns[3] = {NULL, NULL, NULL};
        const char *ns = c->install_ns;
        int rc = -1;
        if (svc && issuer && asprintf(&dns[0], "%s.%s", svc, ns) >= 0 && asprintf(&dns[1], "%s.%s.svc", svc, ns) >= 0 &&
            asprintf(&dns[2], "%s.%s.svc.cluster.local", svc, ns) >= 0) {
            json_t *iss = render_new_object("cert-manager.io/v1", "Issuer", issuer, ns);
            json_t *crt = render_new_object("cert-manager.io/v1", "Certificate", cert, ns);
            json_t *ispec = json_pack("{s:{}}", "selfSigned");
            json_t *cspec = json_pack("{s:s,s:s,s:[sss],s:[s],s:b,s:s,s:s,s:{s:s}}", "secretName", cert, "commonName",
                                      dns[0], "dnsNames", dns[0], dns[1], dns[2], "usages", "server auth", "isCA", 0,
                                      "duration", "17520h0m0s", "renewBefore", "24h0m0s", "issuerRef", "name", issuer);
            if (iss && crt && ispec && cspec && json_object_set(iss, "spec", ispec) == 0 &&
                json_object_set(crt, "spec", cspec) == 0) {
                rc = render_emit(c, json_incref(iss), err) < 0 || render_emit(c, json_incref(crt), err) < 0 ? -2 : 0;
            }
            json_decref(iss);
            json_decref(crt);
            json_decref(ispec);
            json_decref(cspec);
        }
        for (int k = 0; k < 3; k++)
            free(dns[k]);
        free(svc);
        free(cert);
        free(issuer);
        if (rc == -1)
            return olm_error_set(err, "rendering certificates: out of memory");
        if (rc < 0)
            return -1;
    }
    return 0;
}

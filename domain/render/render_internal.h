/* render_internal: what the generator files of the registry+v1 renderer share. */
#ifndef OLM_RENDER_INTERNAL_H
#define OLM_RENDER_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "bundle.h"
#include "olm_error.h"
#include "render.h"

typedef struct render_ctx {
    const bundle *b;
    const render_options *opts;
    const char *install_ns;
    const char *targets[1]; /* one target: "" (all namespaces) or a namespace */
    size_t ntargets;
    json_t *out;            /* the objects rendered so far (owned by render_bundle) */
} render_ctx;

/* Appends `obj` (reference stolen, NULL = OOM) to ctx->out. */
int render_emit(render_ctx *c, json_t *obj, olm_error *err);

/* {"apiVersion", "kind", "metadata": {"name"[, "namespace"]}}; NULL on OOM. */
json_t *render_new_object(const char *api_version, const char *kind, const char *name, const char *ns);

/* The CSV's spec.install.spec.<key> list, or NULL. */
json_t *render_strategy_list(const bundle *b, const char *key);
json_t *render_webhook_definitions(const bundle *b);

/* "" -> "default", as upstream's saNameOrDefault. */
const char *render_sa_name(const json_t *perm);

/* Webhook naming: <svc> = ObjectNameForBaseAndSuffix(replace(dep, ".", "-"),
 * "service"), <cert> = ObjectNameForBaseAndSuffix(<svc>, "cert").  Caller frees. */
char *render_webhook_service_name(const char *deployment);
char *render_cert_name(const char *deployment);
/* containerPort, 443 when absent or not positive. */
long render_webhook_container_port(const json_t *wh);
/* 1 when some webhook definition names this deployment. */
int render_deployment_serves_webhooks(const bundle *b, const char *deployment);

/* Adds the cert provider's CA injection annotation to a webhook configuration,
 * a converted CRD ("inject") or a webhook Service ("serving"). */
int render_cert_annotate_inject(const render_ctx *c, json_t *obj, const char *deployment, olm_error *err);
int render_cert_annotate_service(const render_ctx *c, json_t *svc, const char *deployment, olm_error *err);
/* Sets metadata.annotations[key] = value, creating the maps. */
int render_set_annotation(json_t *obj, const char *key, const char *value);

/* Generators, in upstream order. */
int render_service_accounts(render_ctx *c, olm_error *err);
int render_roles(render_ctx *c, olm_error *err);
int render_cluster_roles(render_ctx *c, olm_error *err);
int render_crds(render_ctx *c, olm_error *err);
int render_others(render_ctx *c, olm_error *err);
int render_deployments(render_ctx *c, olm_error *err);
int render_webhook_configs(render_ctx *c, const char *type, olm_error *err);
int render_webhook_services(render_ctx *c, olm_error *err);
int render_cert_objects(render_ctx *c, olm_error *err);

/* deploymentConfig applied to one rendered Deployment (OLM v0 inject semantics). */
int render_apply_deployment_config(json_t *deployment, const json_t *dc, olm_error *err);

/* §5.3 supported kinds: 1 supported namespaced, 2 supported cluster-scoped, 0 not. */
int render_kind_support(const char *kind);

/* §5.3 validators; errors joined with "\n" into err. */
int render_validate(const bundle *b, olm_error *err);

#endif

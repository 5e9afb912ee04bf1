/* clusterextension_certs: which certificate provider serves a bundle's webhooks
 * (--webhook-cert-provider).  upstream hard-codes OpenShift's service-ca; on plain Kubernetes
 * that leaves webhooks without certificates, so "auto" takes whichever provider the cluster
 * has: OpenShift (config.openshift.io/v1 served, the test operator-controller already uses for
 * OpenShift) before cert-manager (cert-manager.io/v1). */
#include <stdio.h>

#include "clusterextension_internal.h"

int clusterextension_cert_choose(clusterextension_cert_mode mode, bool openshift, bool cert_manager,
                                 render_cert_provider *out)
{
    switch (mode) {
    case CE_CERT_SERVICE_CA:
        *out = RENDER_CERT_OPENSHIFT_SERVICE_CA;
        return 0;
    case CE_CERT_MANAGER:
        *out = RENDER_CERT_MANAGER;
        return 0;
    case CE_CERT_AUTO:
        break;
    }
    if (!openshift && !cert_manager)
        return -1;
    *out = openshift ? RENDER_CERT_OPENSHIFT_SERVICE_CA : RENDER_CERT_MANAGER;
    return 0;
}

int clusterextension_cert_provider(clusterextension_run *run, const bundle *b, render_cert_provider *out)
{
    /* Without webhooks the provider changes nothing the renderer emits. */
    *out = RENDER_CERT_OPENSHIFT_SERVICE_CA;
    if (json_array_size(bundle_json_path(b->csv, "spec.webhookdefinitions")) == 0)
        return 0;
    clusterextension_cert_mode mode = run->r->cfg.cert_mode;
    bool openshift = false, cert_manager = false;
    olm_error err;
    if (mode == CE_CERT_AUTO) {
        kube_client *c = run->r->cfg.admin;
        /* A provider installed since the last look must be seen: discovery caches misses. */
        kube_discovery_reset(c);
        if (kube_group_version_served(c, "config.openshift.io/v1", &openshift, &err) != 0 ||
            (!openshift && kube_group_version_served(c, "cert-manager.io/v1", &cert_manager, &err) != 0))
            return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING,
                                                "looking for a webhook certificate provider: %s", err.msg);
    }
    if (clusterextension_cert_choose(mode, openshift, cert_manager, out) == 0)
        return 0;
    return clusterextension_fail_bundle(run, CE_PROGRESS_RETRYING, CE_NO_CERT_PROVIDER_MESSAGE);
}

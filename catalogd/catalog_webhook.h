/* catalog_webhook: the mutating admission webhook upstream's catalogd serves and upstream's
 * install manifests register (MutatingWebhookConfiguration catalogd-mutating-webhook-configuration,
 * failurePolicy Fail, service catalogd-service:9443, path below): every ClusterCatalog created
 * or updated gets the label olm.operatorframework.io/metadata.name=<its name>.  Without it, a
 * cluster installed from upstream's manifests could not create a single ClusterCatalog.
 *
 * catalogd serves it on --webhook-server-port (default 9443, as upstream) over HTTPS with
 * --tls-cert/--tls-key, the certificate upstream's manifests mount; without a certificate there
 * is no webhook listener (an apiserver only calls webhooks over TLS).  The reconciler sets the
 * same label anyway, so our own install file registers no webhook. */
#ifndef OLM_CATALOG_WEBHOOK_H
#define OLM_CATALOG_WEBHOOK_H

#include <stddef.h>

#include "strbuf.h"

#define CATALOG_WEBHOOK_PATH "/mutate-olm-operatorframework-io-v1-clustercatalog"
#define CATALOG_WEBHOOK_DEFAULT_PORT 9443

/* The AdmissionReview (admission.k8s.io/v1) answering `review` (a request's body): allowed, with
 * a JSONPatch setting the label when the object lacks it or has another value.  0 with *out
 * filled; -1 with msg (a body that is not an AdmissionReview with a request, uid and object):
 * the caller answers 400. */
int catalog_webhook_review(const char *review, size_t len, strbuf *out, char *msg, size_t msgsz);

#endif

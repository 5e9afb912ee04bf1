/* catalog_webhook: the metadata.name label, set at admission (catalog_webhook.h). */
#include "catalog_webhook.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_base64.h"

#define NAME_LABEL "olm.operatorframework.io/metadata.name"
/* The label key in a JSON pointer: '/' is written "~1" (RFC 6901). */
#define NAME_LABEL_POINTER "/metadata/labels/olm.operatorframework.io~1metadata.name"

/* The JSONPatch for `obj`, or NULL when nothing is to change (new reference). */
static json_t *label_patch(const json_t *obj, const char *name)
{
    const json_t *md = json_object_get(obj, "metadata");
    const json_t *labels = json_object_get(md, "labels");
    const char *cur = json_string_value(json_object_get(labels, NAME_LABEL));
    if (cur && strcmp(cur, name) == 0)
        return NULL;
    if (!json_is_object(labels))
        return json_pack("[{s:s, s:s, s:{s:s}}]", "op", "add", "path", "/metadata/labels", "value", NAME_LABEL, name);
    /* "add" of an existing member replaces it (RFC 6902 4.1). */
    return json_pack("[{s:s, s:s, s:s}]", "op", "add", "path", NAME_LABEL_POINTER, "value", name);
}

int catalog_webhook_review(const char *review, size_t len, strbuf *out, char *msg, size_t msgsz)
{
    json_error_t je;
    json_t *in = json_loadb(review, len, 0, &je);
    const json_t *req = json_object_get(in, "request");
    const char *uid = json_string_value(json_object_get(req, "uid"));
    const json_t *obj = json_object_get(req, "object");
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (!in || !json_is_object(req) || !uid) {
        snprintf(msg, msgsz, "want an admission.k8s.io/v1 AdmissionReview with a request and its uid%s%s",
                 in ? "" : ": ", in ? "" : je.text);
        json_decref(in);
        return -1;
    }
    json_t *patch = json_is_object(obj) && name && *name ? label_patch(obj, name) : NULL;
    json_t *resp = json_pack("{s:s, s:b}", "uid", uid, "allowed", 1);
    int rc = resp ? 0 : -1;
    if (patch && rc == 0) {
        char *text = json_dumps(patch, JSON_COMPACT);
        char *b64 = text ? olm_base64_encode(text, strlen(text), NULL, NULL) : NULL;
        rc = b64 && json_object_set_new(resp, "patchType", json_string("JSONPatch")) == 0 &&
                     json_object_set_new(resp, "patch", json_string(b64)) == 0
                 ? 0
                 : -1;
        free(text);
        free(b64);
    }
    json_t *doc = rc == 0 ? json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                                      "AdmissionReview", "response", resp)
                          : NULL;
    if (!doc)
        json_decref(resp);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    rc = text && strbuf_puts(out, text) == 0 ? 0 : -1;
    if (rc < 0)
        snprintf(msg, msgsz, "out of memory");
    free(text);
    json_decref(doc);
    json_decref(patch);
    json_decref(in);
    return rc;
}

/* catalog_webhook_review: the AdmissionReview answers of the metadata.name label webhook. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_webhook.h"
#include "olm_base64.h"

/* The response object of reviewing `object_json` (NULL: no object), and its decoded patch. */
static json_t *review(const char *object_json, json_t **patch)
{
    char in[2048];
    snprintf(in, sizeof in,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-1\","
             "\"operation\":\"CREATE\"%s%s}}",
             object_json ? ",\"object\":" : "", object_json ? object_json : "");
    strbuf out = STRBUF_INIT;
    char msg[256];
    assert_int_equal(catalog_webhook_review(in, strlen(in), &out, msg, sizeof msg), 0);
    json_t *doc = json_loads(strbuf_str(&out), 0, NULL);
    strbuf_free(&out);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "kind")), "AdmissionReview");
    json_t *resp = json_incref(json_object_get(doc, "response"));
    json_decref(doc);
    assert_string_equal(json_string_value(json_object_get(resp, "uid")), "u-1");
    assert_true(json_is_true(json_object_get(resp, "allowed")));
    *patch = NULL;
    const char *b64 = json_string_value(json_object_get(resp, "patch"));
    if (b64) {
        assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
        size_t len = 0;
        char *text = olm_base64_decode(b64, strlen(b64), 0, &len, NULL);
        *patch = json_loadb(text, len, 0, NULL);
        free(text);
        assert_non_null(*patch);
    }
    return resp;
}

static void expect_patch(const char *object_json, const char *want)
{
    json_t *patch, *resp = review(object_json, &patch);
    json_t *w = want ? json_loads(want, 0, NULL) : NULL;
    if (!want)
        assert_null(patch);
    else if (!json_equal(patch, w))
        fail_msg("patch %s, want %s", json_dumps(patch, JSON_COMPACT), want);
    json_decref(w);
    json_decref(patch);
    json_decref(resp);
}

static void test_label_added_or_corrected(void **state)
{
    (void)state;
    expect_patch("{\"metadata\":{\"name\":\"c\"}}",
                 "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"olm.operatorframework.io/metadata.name\":\"c\"}}]");
    expect_patch("{\"metadata\":{\"name\":\"c\",\"labels\":{\"team\":\"a\"}}}",
                 "[{\"op\":\"add\",\"path\":\"/metadata/labels/olm.operatorframework.io~1metadata.name\",\"value\":\"c\"}]");
    expect_patch("{\"metadata\":{\"name\":\"c\",\"labels\":{\"olm.operatorframework.io/metadata.name\":\"wrong\"}}}",
                 "[{\"op\":\"add\",\"path\":\"/metadata/labels/olm.operatorframework.io~1metadata.name\",\"value\":\"c\"}]");
    /* Already right, or nothing to label (no object, no name: a DELETE, a generateName): allowed as is. */
    expect_patch("{\"metadata\":{\"name\":\"c\",\"labels\":{\"olm.operatorframework.io/metadata.name\":\"c\"}}}", NULL);
    expect_patch(NULL, NULL);
    expect_patch("{\"metadata\":{\"generateName\":\"c-\"}}", NULL);
}

static void test_bad_reviews(void **state)
{
    (void)state;
    const char *bad[] = {"", "not json", "{}", "{\"request\":{}}", "{\"request\":{\"uid\":7}}", "[1]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf out = STRBUF_INIT;
        char msg[256] = "";
        assert_int_equal(catalog_webhook_review(bad[i], strlen(bad[i]), &out, msg, sizeof msg), -1);
        assert_non_null(strstr(msg, "AdmissionReview"));
        assert_int_equal(out.len, 0);
        strbuf_free(&out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_added_or_corrected),
        cmocka_unit_test(test_bad_reviews),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

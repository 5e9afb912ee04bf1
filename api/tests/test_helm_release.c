/* helm_release: the Secrets we write read back, as upstream's chunked driver would find
 * them (labels, annotations, gzip of the release JSON, chunks), and a release written the
 * way upstream writes it (labels on the Secret only, a YAML manifest) decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "helm_release.h"
#include "olm_base64.h"

static install_object_ref REFS[] = {
    {"apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com", 0},
    {"apps/v1", "Deployment", "ns1", "widget-manager", 0},
    {"v1", "ConfigMap", "ns1", "widget-config", 0},
};

static install_record record(void)
{
    return (install_record){.extension = "widget", .bundle_name = "widget.v1.2.0", .bundle_version = "1.2.0",
                            .bundle_image = "registry.example.com/widget@sha256:0123456789abcdef", .package = "widget",
                            .properties = "[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":4.10}]",
                            .objects = REFS, .nobjects = 3, .installed_at = "2026-11-28T03:00:00Z"};
}

static const char *meta_str(const json_t *secret, const char *map, const char *key)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(secret, "metadata"), map), key));
}

/* The gunzipped release JSON of an index Secret without extra chunks. */
static json_t *release_of(const json_t *secret)
{
    const char *b = json_string_value(json_object_get(json_object_get(secret, "data"), "chunk"));
    size_t len = 0;
    char *gz = olm_base64_decode(b, strlen(b), 0, &len, NULL);
    assert_non_null(gz);
    static char out[1 << 20];
    uLongf outlen = sizeof out;
    z_stream z = {0};
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)outlen;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    json_t *doc = json_loadb(out, z.total_out, 0, NULL);
    inflateEnd(&z);
    free(gz);
    assert_non_null(doc);
    return doc;
}

static void test_written_as_upstream_reads_it(void **state)
{
    (void)state;
    install_record rec = record();
    json_t *objects = json_pack("[{s:s, s:s, s:{s:s}}, {s:s, s:s, s:{s:s, s:s}}, {s:s, s:s, s:{s:s, s:s}}]",
                                "apiVersion", "apiextensions.k8s.io/v1", "kind", "CustomResourceDefinition",
                                "metadata", "name", "widgets.example.com", "apiVersion", "apps/v1", "kind",
                                "Deployment", "metadata", "name", "widget-manager", "namespace", "ns1", "apiVersion",
                                "v1", "kind", "ConfigMap", "metadata", "name", "widget-config", "namespace", "ns1");
    helm_release_in in = {.rec = &rec, .objects = objects, .release_namespace = "ns1", .version = 3,
                          .first_deployed = "2026-11-01T00:00:00Z", .owner_uid = "uid-1"};
    json_t *chunks = NULL;
    olm_error err;
    json_t *s = helm_release_secrets(&in, "olmv1-system", &chunks, &err);
    assert_non_null(s);
    assert_int_equal(json_array_size(chunks), 0);
    assert_string_equal(json_string_value(json_object_get(s, "type")), HELM_INDEX_TYPE);
    assert_string_equal(meta_str(s, "labels", "name"), "widget");
    assert_string_equal(meta_str(s, "labels", "status"), "deployed");
    assert_string_equal(meta_str(s, "labels", "version"), "3");
    assert_string_equal(meta_str(s, "labels", "owner"), "operator-controller");
    assert_string_equal(meta_str(s, "labels", "type"), "index");
    assert_string_equal(meta_str(s, "labels", "key"), "sh.helm.release.v1.widget.v3");
    assert_string_equal(json_string_value(json_object_get(json_object_get(s, "metadata"), "name")),
                        "sh.helm.release.v1.widget.v3");
    /* a valid label value is a label; an image reference is not, so it is an annotation */
    assert_string_equal(meta_str(s, "labels", HELM_LABEL_BUNDLE), "widget.v1.2.0");
    assert_null(meta_str(s, "labels", HELM_LABEL_REFERENCE));
    assert_string_equal(meta_str(s, "annotations", HELM_LABEL_REFERENCE), rec.bundle_image);
    json_t *owner = json_array_get(json_object_get(json_object_get(s, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(owner, "uid")), "uid-1");
    assert_true(json_is_true(json_object_get(owner, "controller")));

    /* What upstream's e2e suite reads: gunzip(chunk) is a helm release with the manifest. */
    json_t *doc = release_of(s);
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "widget");
    assert_string_equal(json_string_value(json_object_get(doc, "namespace")), "ns1");
    assert_int_equal(json_integer_value(json_object_get(doc, "version")), 3);
    json_t *info = json_object_get(doc, "info");
    assert_string_equal(json_string_value(json_object_get(info, "status")), "deployed");
    assert_string_equal(json_string_value(json_object_get(info, "first_deployed")), "2026-11-01T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(info, "deleted")), "");
    const char *manifest = json_string_value(json_object_get(doc, "manifest"));
    /* as upstream's post-renderer leaves it: one object's JSON a line */
    assert_int_equal(manifest[0], '{');
    size_t lines = 0;
    for (const char *p = manifest; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 3);
    assert_non_null(strstr(manifest, "\"kind\":\"Deployment\""));
    json_decref(doc);

    /* And we read it back. */
    helm_release r;
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), 0);
    assert_string_equal(r.name, "widget");
    assert_string_equal(r.status, "deployed");
    assert_int_equal(r.version, 3);
    assert_string_equal(r.rec.bundle_name, "widget.v1.2.0");
    assert_string_equal(r.rec.bundle_version, "1.2.0");
    assert_string_equal(r.rec.bundle_image, rec.bundle_image);
    assert_string_equal(r.rec.package, "widget");
    assert_string_equal(r.rec.properties, rec.properties); /* 4.10 stays 4.10: kept as text */
    assert_int_equal(r.rec.nobjects, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(r.rec.objects[i].kind, REFS[i].kind);
        assert_string_equal(r.rec.objects[i].name, REFS[i].name);
        assert_string_equal(r.rec.objects[i].namespace_, REFS[i].namespace_);
    }
    helm_release_free(&r);
    json_decref(s);
    json_decref(chunks);
    json_decref(objects);
}

/* Without the applied objects (NULL), the manifest names the record's objects. */
static void test_refs_only(void **state)
{
    (void)state;
    install_record rec = record();
    helm_release_in in = {.rec = &rec, .release_namespace = "ns1", .version = 1};
    json_t *chunks = NULL;
    olm_error err;
    json_t *s = helm_release_secrets(&in, "sys", &chunks, &err);
    assert_non_null(s);
    helm_release r;
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), 0);
    assert_int_equal(r.rec.nobjects, 3);
    assert_string_equal(r.rec.objects[1].namespace_, "ns1");
    assert_string_equal(r.rec.objects[0].namespace_, "");
    assert_string_equal(r.first_deployed, rec.installed_at);
    helm_release_free(&r);
    json_decref(s);
    json_decref(chunks);
    /* a pending record is not a release */
    rec.pending = true;
    assert_null(helm_release_secrets(&in, "sys", &chunks, &err));
}

/* A release bigger than a chunk is split as the chunked driver splits it; the names of the
 * extra chunks are in extraChunks, and decoding with their data gives the release back. */
static void test_chunks(void **state)
{
    (void)state;
    install_record rec = record();
    size_t n = 1500 * 1024;
    char *noise = malloc(n + 1);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise[i] = "abcdefghijklmnopqrstuvwxyz0123456789+/ABCDEFGHIJKLMNOPQRSTUVWXYZ"[x & 63];
    }
    noise[n] = 0;
    json_t *objects = json_pack("[{s:s, s:s, s:{s:s, s:s}, s:{s:s}}]", "apiVersion", "v1", "kind", "ConfigMap",
                                "metadata", "name", "big", "namespace", "ns1", "data", "noise", noise);
    free(noise);
    helm_release_in in = {.rec = &rec, .objects = objects, .release_namespace = "ns1", .version = 1};
    json_t *chunks = NULL;
    olm_error err;
    json_t *s = helm_release_secrets(&in, "sys", &chunks, &err);
    assert_non_null(s);
    assert_int_equal(json_array_size(chunks), 1);
    json_t *c = json_array_get(chunks, 0);
    assert_string_equal(json_string_value(json_object_get(c, "type")), HELM_CHUNK_TYPE);
    assert_true(json_is_true(json_object_get(c, "immutable")));
    json_t *names = helm_release_extra_chunk_names(s, &err);
    assert_non_null(names);
    const char *cname = json_string_value(json_object_get(json_object_get(c, "metadata"), "name"));
    assert_string_equal(json_string_value(json_array_get(names, 0)), cname);
    assert_int_equal(strncmp(cname, "sh.helm.release.v1.widget.v1-", 29), 0);
    assert_int_equal(strlen(cname), 29 + 13); /* 64 bits in base32: 13 characters */
    const char *b = json_string_value(json_object_get(json_object_get(c, "data"), "chunk"));
    size_t len = 0;
    char *data = olm_base64_decode(b, strlen(b), 0, &len, NULL);
    const char *extra[] = {data};
    helm_release r;
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), -1); /* without the chunk: truncated */
    assert_non_null(strstr(err.msg, "gzip"));
    assert_int_equal(helm_release_decode(s, extra, &len, 1, &r, &err), 0);
    assert_int_equal(r.rec.nobjects, 1);
    assert_string_equal(r.rec.objects[0].name, "big");
    helm_release_free(&r);
    free(data);
    json_decref(names);
    json_decref(s);
    json_decref(chunks);
    json_decref(objects);
}

/* The index Secret as upstream's operator-controller writes it: release labels on the Secret
 * (the image reference in an annotation), none in the JSON; a manifest of YAML documents. */
static json_t *upstream_secret(const char *release_json)
{
    unsigned char gz[8192];
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)release_json;
    z.avail_in = (uInt)strlen(release_json);
    z.next_out = gz;
    z.avail_out = sizeof gz;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    char *chunk = olm_base64_encode(gz, z.total_out, NULL, NULL);
    deflateEnd(&z);
    json_t *s = json_pack("{s:s, s:{s:s, s:{s:s, s:s, s:s, s:s, s:s}, s:{s:s}}, s:{s:s, s:s}}", "type",
                          HELM_INDEX_TYPE, "metadata", "name", "sh.helm.release.v1.argocd.v2", "labels", "name",
                          "argocd", "status", "deployed", HELM_LABEL_BUNDLE, "argocd-operator.v0.6.0",
                          HELM_LABEL_VERSION, "0.6.0", HELM_LABEL_PACKAGE, "argocd-operator", "annotations",
                          HELM_LABEL_REFERENCE, "quay.io/x/argocd@sha256:abc", "data", "chunk", chunk, "extraChunks",
                          "W10=");
    free(chunk);
    return s;
}

static void test_upstream_release_decoded(void **state)
{
    (void)state;
    json_t *s = upstream_secret(
        "{\"name\":\"argocd\",\"namespace\":\"argocd\",\"version\":2,\"info\":{\"first_deployed\":\"2026-01-01T00:00:00Z\","
        "\"last_deployed\":\"2026-02-01T00:00:00Z\",\"deleted\":\"\",\"status\":\"deployed\"},"
        "\"chart\":{\"metadata\":{\"name\":\"argocd-operator\",\"annotations\":{\"olm.properties\":\"[]\"}}},"
        "\"manifest\":\"---\\n# Source: argocd-operator/templates/object-1.json\\napiVersion: v1\\nkind: ServiceAccount\\n"
        "metadata:\\n  name: argocd-operator\\n  namespace: argocd\\n---\\n# Source: x/templates/object-2.json\\n"
        "{\\\"apiVersion\\\":\\\"rbac.authorization.k8s.io/v1\\\",\\\"kind\\\":\\\"ClusterRole\\\",\\\"metadata\\\":{\\\"name\\\":\\\"argocd-r\\\"}}\\n\"}");
    helm_release r;
    olm_error err;
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), 0);
    assert_string_equal(r.name, "argocd");
    assert_int_equal(r.version, 2);
    assert_string_equal(r.rec.bundle_name, "argocd-operator.v0.6.0");
    assert_string_equal(r.rec.bundle_version, "0.6.0");
    assert_string_equal(r.rec.bundle_image, "quay.io/x/argocd@sha256:abc");
    assert_string_equal(r.rec.package, "argocd-operator");
    assert_string_equal(r.rec.installed_at, "2026-02-01T00:00:00Z");
    assert_int_equal(r.rec.nobjects, 2);
    assert_string_equal(r.rec.objects[0].kind, "ServiceAccount");
    assert_string_equal(r.rec.objects[0].namespace_, "argocd");
    assert_string_equal(r.rec.objects[1].kind, "ClusterRole");
    assert_string_equal(r.rec.objects[1].namespace_, "");
    helm_release_free(&r);
    json_decref(s);

    /* What upstream's operator-controller at df2c201 really writes (seen on a cluster): the
     * release labels inside the JSON, the Secret's labels only the driver's, and the manifest
     * one object's JSON a line, with no "---" between them. */
    s = upstream_secret(
        "{\"name\":\"argocd\",\"namespace\":\"argocd\",\"version\":1,\"info\":{\"status\":\"deployed\"},"
        "\"labels\":{\"olm.operatorframework.io/bundle-name\":\"argocd-operator.v0.7.0\","
        "\"olm.operatorframework.io/bundle-version\":\"0.7.0\"},\"chart\":{\"metadata\":{}},"
        "\"manifest\":\"{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"namespace\\\":\\\"argocd\\\"}}\\n"
        "{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"Namespace\\\",\\\"metadata\\\":{\\\"name\\\":\\\"b\\\"}}\\n\"}");
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), 0);
    assert_string_equal(r.rec.bundle_name, "argocd-operator.v0.7.0"); /* the JSON's label wins */
    assert_string_equal(r.rec.bundle_version, "0.7.0");
    assert_string_equal(r.rec.properties, "[]");
    assert_int_equal(r.rec.nobjects, 2);
    assert_string_equal(r.rec.objects[0].name, "a");
    assert_string_equal(r.rec.objects[1].kind, "Namespace");
    helm_release_free(&r);
    json_decref(s);

    /* A Helm release no OLM installed (no bundle label) is not adopted. */
    s = upstream_secret("{\"name\":\"argocd\",\"info\":{\"status\":\"deployed\"}}");
    json_object_del(json_object_get(json_object_get(s, "metadata"), "labels"), HELM_LABEL_BUNDLE);
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), -1);
    assert_non_null(strstr(err.msg, "not installed by OLM v1"));
    json_decref(s);
    /* Garbage where the gzip should be. */
    s = upstream_secret("{}");
    json_object_set_new(json_object_get(s, "data"), "chunk", json_string("aGVsbG8="));
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), -1);
    assert_non_null(strstr(err.msg, "gzip"));
    json_decref(s);
    /* A manifest object without a name. */
    s = upstream_secret("{\"name\":\"a\",\"manifest\":\"kind: X\\napiVersion: v1\\n\"}");
    assert_int_equal(helm_release_decode(s, NULL, NULL, 0, &r, &err), -1);
    assert_non_null(strstr(err.msg, "metadata.name"));
    json_decref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_as_upstream_reads_it),
        cmocka_unit_test(test_refs_only),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_upstream_release_decoded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

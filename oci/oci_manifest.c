/* Image manifests, indexes and platforms: JSON in, C structs out, no I/O. */
#include "oci_manifest.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* ---------------------------------------------------------------- platforms */

/* Bounded copy; platform strings longer than our fields match nothing anyway. */
static void set_str(char *dst, size_t n, const char *src)
{
    size_t len = src ? strnlen(src, n - 1) : 0;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

int oci_platform_host(oci_platform *out, olm_error *err)
{
    struct utsname u;
    memset(out, 0, sizeof *out);
    if (uname(&u) != 0)
        return olm_error_set(err, "uname failed");
    const char *m = u.machine;
    const char *arch = NULL, *variant = "";
    /* GOARCH names, as in image indexes */
    if (strcmp(m, "x86_64") == 0 || strcmp(m, "amd64") == 0)
        arch = "amd64";
    else if (strcmp(m, "aarch64") == 0 || strcmp(m, "arm64") == 0)
        arch = "arm64", variant = "v8";
    else if (strncmp(m, "armv7", 5) == 0)
        arch = "arm", variant = "v7";
    else if (strncmp(m, "armv6", 5) == 0)
        arch = "arm", variant = "v6";
    else if (strncmp(m, "armv5", 5) == 0)
        arch = "arm", variant = "v5";
    else if (strcmp(m, "i386") == 0 || strcmp(m, "i686") == 0)
        arch = "386";
    else if (strcmp(m, "ppc64le") == 0 || strcmp(m, "s390x") == 0 || strcmp(m, "riscv64") == 0)
        arch = m;
    else
        return olm_error_set(err, "unknown machine type \"%s\"; pass a platform explicitly", m);
    set_str(out->os, sizeof out->os, "linux");
    set_str(out->arch, sizeof out->arch, arch);
    set_str(out->variant, sizeof out->variant, variant);
    return 0;
}

int oci_platform_parse(const char *s, oci_platform *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    const char *a = strchr(s, '/');
    const char *v = a ? strchr(a + 1, '/') : NULL;
    size_t olen = a ? (size_t)(a - s) : 0;
    size_t alen = a ? (v ? (size_t)(v - a - 1) : strlen(a + 1)) : 0;
    size_t vlen = v ? strlen(v + 1) : 0;
    if (!a || olen == 0 || alen == 0 || (v && (vlen == 0 || strchr(v + 1, '/'))) ||
        olen >= sizeof out->os || alen >= sizeof out->arch || vlen >= sizeof out->variant)
        return olm_error_set(err, "platform \"%s\": expected os/arch[/variant], e.g. linux/arm64",
                             s);
    memcpy(out->os, s, olen);
    memcpy(out->arch, a + 1, alen);
    if (v)
        memcpy(out->variant, v + 1, vlen);
    return 0;
}

/* ---------------------------------------------------------------- descriptors */

static int parse_descriptor(json_t *d, const char *what, oci_descriptor *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    const char *mt = json_string_value(json_object_get(d, "mediaType"));
    const char *digest = json_string_value(json_object_get(d, "digest"));
    json_t *size = json_object_get(d, "size");
    if (!json_is_object(d) || !digest)
        return olm_error_set(err, "%s: not a descriptor with a digest", what);
    if (oci_digest_validate(digest, err) != 0)
        return olm_error_wrap(err, "%s", what);
    if (!json_is_integer(size) || json_integer_value(size) < 0)
        return olm_error_set(err, "%s %s: missing or negative size", what, digest);
    snprintf(out->digest, sizeof out->digest, "%s", digest);
    out->size = (uint64_t)json_integer_value(size);
    if (mt && !(out->media_type = strdup(mt)))
        return olm_error_set(err, "out of memory");
    json_t *p = json_object_get(d, "platform");
    if (json_is_object(p)) {
        set_str(out->platform.os, sizeof out->platform.os,
                json_string_value(json_object_get(p, "os")));
        set_str(out->platform.arch, sizeof out->platform.arch,
                json_string_value(json_object_get(p, "architecture")));
        set_str(out->platform.variant, sizeof out->platform.variant,
                json_string_value(json_object_get(p, "variant")));
    }
    return 0;
}

static void descriptor_free(oci_descriptor *d)
{
    free(d->media_type);
    d->media_type = NULL;
}

/* ---------------------------------------------------------------- kinds */

static json_t *load(const char *json, size_t len, olm_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, 0, &je);
    if (!root) {
        olm_error_set(err, "invalid JSON at line %d: %s", je.line, je.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        olm_error_set(err, "not a JSON object");
        return NULL;
    }
    return root;
}

static int kind_of_type(const char *mt, oci_manifest_kind *out)
{
    /* Content-Type may carry parameters: compare the type only */
    size_t n = strcspn(mt, "; ");
    if ((n == strlen(OCI_MT_MANIFEST) && strncmp(mt, OCI_MT_MANIFEST, n) == 0) ||
        (n == strlen(OCI_MT_DOCKER_MANIFEST) && strncmp(mt, OCI_MT_DOCKER_MANIFEST, n) == 0))
        *out = OCI_KIND_MANIFEST;
    else if ((n == strlen(OCI_MT_INDEX) && strncmp(mt, OCI_MT_INDEX, n) == 0) ||
             (n == strlen(OCI_MT_DOCKER_LIST) && strncmp(mt, OCI_MT_DOCKER_LIST, n) == 0))
        *out = OCI_KIND_INDEX;
    else
        return -1;
    return 0;
}

int oci_manifest_kind_of(const char *json, size_t len, const char *content_type,
                         oci_manifest_kind *out, olm_error *err)
{
    json_t *root = load(json, len, err);
    if (!root)
        return olm_error_wrap(err, "manifest");
    const char *mt = json_string_value(json_object_get(root, "mediaType"));
    json_int_t schema = json_integer_value(json_object_get(root, "schemaVersion"));
    int rc = 0;
    static const char v1[] = "application/vnd.docker.distribution.manifest.v1";
    if (schema == 1 || (content_type && strncmp(content_type, v1, sizeof v1 - 1) == 0))
        rc = olm_error_set(err, "Docker schema 1 manifests are not supported; push the image "
                                "again with a current tool");
    else if (mt)
        rc = kind_of_type(mt, out) == 0
                 ? 0
                 : olm_error_set(err, "unsupported manifest media type \"%s\"", mt);
    else if (content_type && kind_of_type(content_type, out) == 0)
        rc = 0;
    else if (json_is_array(json_object_get(root, "manifests")))
        *out = OCI_KIND_INDEX; /* OCI allows omitting mediaType */
    else if (json_is_array(json_object_get(root, "layers")))
        *out = OCI_KIND_MANIFEST;
    else
        rc = olm_error_set(err, "neither an image manifest nor an index (Content-Type \"%s\")",
                           content_type ? content_type : "");
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- image manifests */

static int is_layer_type(const char *mt)
{
    static const char *const ok[] = {
        OCI_MT_LAYER_TAR, OCI_MT_LAYER_GZIP, OCI_MT_LAYER_ZSTD, OCI_MT_DOCKER_LAYER,
        "application/vnd.docker.image.rootfs.diff.tar",
        "application/vnd.docker.image.rootfs.diff.tar.zstd",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strcmp(mt, ok[i]) == 0)
            return 1;
    return 0;
}

int oci_manifest_parse(const char *json, size_t len, oci_manifest *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, err);
    if (!root)
        return olm_error_wrap(err, "manifest");
    int rc = -1;
    json_t *layers = json_object_get(root, "layers");
    if (parse_descriptor(json_object_get(root, "config"), "manifest config", &out->config,
                         err) != 0)
        goto out;
    if (!json_is_array(layers)) {
        olm_error_set(err, "manifest has no \"layers\" array");
        goto out;
    }
    size_t n = json_array_size(layers);
    if (n > OCI_MAX_LAYERS) {
        olm_error_set(err, "manifest has %zu layers; images of more than %d layers are refused (the limit)", n,
                      OCI_MAX_LAYERS);
        goto out;
    }
    if (n && !(out->layers = calloc(n, sizeof *out->layers))) {
        olm_error_set(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "manifest layer %zu", i);
        if (parse_descriptor(json_array_get(layers, i), what, &out->layers[i], err) != 0)
            goto out;
        out->nlayers = i + 1;
        const char *mt = out->layers[i].media_type;
        if (!mt || !is_layer_type(mt)) {
            olm_error_set(err, "manifest layer %zu (%s): unsupported media type \"%s\" (expected "
                               "a tar, tar+gzip or tar+zstd layer)",
                          i, out->layers[i].digest, mt ? mt : "");
            goto out;
        }
    }
    rc = 0;
out:
    json_decref(root);
    if (rc != 0)
        oci_manifest_free(out);
    return rc;
}

void oci_manifest_free(oci_manifest *m)
{
    if (!m)
        return;
    descriptor_free(&m->config);
    for (size_t i = 0; i < m->nlayers; i++)
        descriptor_free(&m->layers[i]);
    free(m->layers);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- indexes */

/* Higher is better; 0 = does not run here. */
static int platform_score(const oci_platform *have, const oci_platform *want)
{
    if (strcmp(have->os, want->os) != 0 || strcmp(have->arch, want->arch) != 0)
        return 0;
    if (strcmp(have->variant, want->variant) == 0)
        return 100;
    /* arm64 images are "v8" whether or not they say so */
    if (strcmp(want->arch, "arm64") == 0 &&
        (!have->variant[0] || strcmp(have->variant, "v8") == 0) &&
        (!want->variant[0] || strcmp(want->variant, "v8") == 0))
        return 100;
    if (!have->variant[0])
        return 50;
    /* arm vN runs older variants: v7 runs v6 and v5 */
    if (strcmp(want->arch, "arm") == 0 && have->variant[0] == 'v' && want->variant[0] == 'v') {
        int h = atoi(have->variant + 1), w = atoi(want->variant + 1);
        if (h > 0 && h < w)
            return 10 + h;
    }
    return 0;
}

static void append_platform(char *buf, size_t size, const oci_platform *p)
{
    size_t n = strlen(buf);
    if (n + 1 >= size)
        return;
    snprintf(buf + n, size - n, "%s%s/%s%s%s", n ? ", " : "", p->os[0] ? p->os : "?",
             p->arch[0] ? p->arch : "?", p->variant[0] ? "/" : "", p->variant);
}

int oci_index_select(const char *json, size_t len, const oci_platform *want,
                     oci_descriptor *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *root = load(json, len, err);
    if (!root)
        return olm_error_wrap(err, "image index");
    json_t *list = json_object_get(root, "manifests");
    int rc = -1, best = 0;
    char avail[512] = "";
    if (!json_is_array(list)) {
        olm_error_set(err, "image index has no \"manifests\" array");
        goto out;
    }
    size_t i;
    json_t *d;
    json_array_foreach(list, i, d) {
        oci_descriptor cand;
        char what[40];
        snprintf(what, sizeof what, "image index entry %zu", i);
        if (parse_descriptor(d, what, &cand, err) != 0)
            goto out;
        /* attestation manifests and the like say "unknown/unknown": not a platform */
        if (strcmp(cand.platform.os, "unknown") != 0)
            append_platform(avail, sizeof avail, &cand.platform);
        int score = platform_score(&cand.platform, want);
        if (score > best) {
            descriptor_free(out);
            *out = cand;
            best = score;
        } else {
            descriptor_free(&cand);
        }
    }
    if (!best) {
        olm_error_set(err, "no image for platform %s/%s%s%s in the index; available: %s",
                      want->os, want->arch, want->variant[0] ? "/" : "", want->variant,
                      avail[0] ? avail : "none");
        goto out;
    }
    if (out->media_type) {
        oci_manifest_kind k;
        if (kind_of_type(out->media_type, &k) != 0 || k != OCI_KIND_MANIFEST) {
            olm_error_set(err, "index entry %s for %s/%s has media type \"%s\", not an image "
                               "manifest",
                          out->digest, want->os, want->arch, out->media_type);
            goto out;
        }
    }
    rc = 0;
out:
    json_decref(root);
    if (rc != 0)
        descriptor_free(out);
    return rc;
}

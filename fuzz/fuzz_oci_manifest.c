/* fuzz_oci_manifest: a registry's manifest or index response body: kind detection (with and
 * without a Content-Type), manifest parsing and platform selection from an index.  Checks what
 * the puller then trusts: at most OCI_MAX_LAYERS layers, every digest valid, and a selected
 * entry of the wanted os/arch. */
#include "fuzz_util.h"
#include "oci_manifest.h"

static const char *const content_types[] = {NULL, OCI_MT_MANIFEST, OCI_MT_INDEX, OCI_MT_DOCKER_MANIFEST,
                                            OCI_MT_DOCKER_LIST, "text/plain"};

static void select_for(const char *json, size_t len, const char *platform)
{
    oci_platform want;
    oci_descriptor d;
    olm_error err;
    FUZZ_CHECK(oci_platform_parse(platform, &want, &err) == 0, "platform %s: %s", platform, err.msg);
    if (oci_index_select(json, len, &want, &d, &err) != 0)
        return;
    FUZZ_CHECK(strcmp(d.platform.os, want.os) == 0 && strcmp(d.platform.arch, want.arch) == 0,
               "asked for %s, got %s/%s", platform, d.platform.os, d.platform.arch);
    FUZZ_CHECK(oci_digest_validate(d.digest, &err) == 0, "selected digest %s: %s", d.digest, err.msg);
    free(d.media_type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *json = (const char *)data;
    olm_error err;
    oci_manifest_kind kind;
    for (size_t i = 0; i < sizeof content_types / sizeof content_types[0]; i++)
        (void)oci_manifest_kind_of(json, size, content_types[i], &kind, &err);
    oci_manifest m;
    if (oci_manifest_parse(json, size, &m, &err) == 0) {
        FUZZ_CHECK(m.nlayers <= OCI_MAX_LAYERS, "%zu layers", m.nlayers);
        FUZZ_CHECK(oci_digest_validate(m.config.digest, &err) == 0, "config digest: %s", err.msg);
        for (size_t i = 0; i < m.nlayers; i++)
            FUZZ_CHECK(oci_digest_validate(m.layers[i].digest, &err) == 0, "layer %zu digest: %s", i, err.msg);
        oci_manifest_free(&m);
    }
    select_for(json, size, "linux/amd64");
    select_for(json, size, "linux/arm/v7");
    oci_platform p;
    char *s = fuzz_cstr(data, size < 64 ? size : 64);
    if (s)
        (void)oci_platform_parse(s, &p, &err);
    free(s);
    return 0;
}

/* fuzz_oci_registries_conf: a registries.conf (TOML) as a drop-in or main file, then the pull
 * sources of a few references through it.  Checks that the TOML reader returns an object, that
 * an accepted file gives every reference either a clear error or sources that parse as
 * references and end with the primary location (never a mirror). */
#include "fuzz_util.h"
#include "oci_registries_conf.h"
#include "oci_toml.h"

static const char *const refs[] = {
    "example.com/ns/app:v1",
    "example.com/ns/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "a.b.example.com:5000/x/y/z:latest",
    "docker.io/library/busybox:latest",
    "127.0.0.1:5000/e2e/catalog:v1",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    olm_error err;
    json_t *doc = oci_toml_parse((const char *)data, size, &err);
    FUZZ_CHECK(!doc || json_is_object(doc), "the TOML reader returned a non-object");
    json_decref(doc);

    oci_registries_conf *conf = oci_registries_conf_new(&err);
    if (!conf)
        return 0;
    if (oci_registries_conf_add_text(conf, (const char *)data, size, "fuzz.conf", size % 2 == 0, &err) == 0) {
        for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
            oci_ref r;
            if (oci_ref_parse(refs[i], &r, &err) != 0)
                continue;
            oci_pull_sources s;
            if (oci_registries_conf_sources(conf, &r, &s, &err) == 0) {
                FUZZ_CHECK(s.n >= 1, "no source for %s", refs[i]);
                FUZZ_CHECK(!s.v[s.n - 1].mirror, "the last source of %s is a mirror", refs[i]);
                for (size_t k = 0; k < s.n; k++) {
                    oci_ref check;
                    FUZZ_CHECK(oci_ref_parse(s.v[k].ref, &check, &err) == 0, "source \"%s\" does not parse: %s",
                               s.v[k].ref, err.msg);
                    oci_ref_free(&check);
                }
                oci_pull_sources_free(&s);
            }
            oci_ref_free(&r);
        }
    }
    oci_registries_conf_free(conf);
    return 0;
}

/* fuzz_oci_ref: image references as a ClusterCatalog's or a bundle's image field gives them.
 * Checks that a parsed reference's normalised string parses back to the same reference (the
 * form catalogd writes into status and operator-controller pulls again), and that the digest
 * form keeps the name. */
#include "fuzz_util.h"
#include "oci_ref.h"

static int same(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    (void)oci_registry_is_loopback(s);
    oci_ref ref;
    olm_error err;
    if (oci_ref_parse(s, &ref, &err) == 0) {
        FUZZ_CHECK(ref.registry && ref.repository && (ref.tag || ref.digest), "incomplete reference");
        FUZZ_CHECK(oci_ref_manifest_id(&ref) != NULL, "no manifest id");
        char *text = oci_ref_string(&ref);
        FUZZ_CHECK(text, "out of memory");
        oci_ref back;
        FUZZ_CHECK(oci_ref_parse(text, &back, &err) == 0, "\"%s\" -> \"%s\" does not parse: %s", s, text, err.msg);
        FUZZ_CHECK(same(ref.registry, back.registry) && same(ref.repository, back.repository) &&
                       same(ref.tag, back.tag) && same(ref.digest, back.digest),
                   "\"%s\" -> \"%s\" parses differently", s, text);
        char *name = oci_ref_name(&ref);
        char *pinned = oci_ref_with_digest(&ref, "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
        FUZZ_CHECK(name && pinned && strncmp(pinned, name, strlen(name)) == 0 && pinned[strlen(name)] == '@',
                   "digest form \"%s\" does not start with the name \"%s\"", pinned, name);
        free(name);
        free(pinned);
        free(text);
        oci_ref_free(&back);
        oci_ref_free(&ref);
    }
    free(s);
    return 0;
}

/* Normalisation: YAML/JSON input -> the exact catalog.jsonl bytes upstream writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fbc.h"
#include "fbc_internal.h"

static const struct vector {
    const char *name, *input, *expected;
} vectors[] = {
#include "normalise_vectors.inc"
};

/* Renders a buffer to the concatenation of its normalised lines; caller frees. */
static char *render_buffer(const char *input, olm_error *err)
{
    fbc_catalog *c = fbc_load_buffer(input, strlen(input), "vec.yaml", err);
    if (!c)
        return NULL;
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < c->nmetas; i++)
        assert_int_equal(strbuf_append(&sb, c->metas[i].line, c->metas[i].line_len), 0);
    fbc_catalog_free(c);
    return strbuf_detach(&sb);
}

static void test_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        olm_error err;
        olm_error_clear(&err);
        char *got = render_buffer(vectors[i].input, &err);
        if (!got)
            fail_msg("%s: load failed: %s", vectors[i].name, err.msg);
        if (strcmp(got, vectors[i].expected) != 0)
            fail_msg("%s:\n got      %s\n expected %s", vectors[i].name, got, vectors[i].expected);
        free(got);
    }
}

static void expect_load_error(const char *input, const char *needle)
{
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_buffer(input, strlen(input), "in.yaml", &err);
    if (c) {
        fbc_catalog_free(c);
        fail_msg("expected an error containing \"%s\" for %s", needle, input);
    }
    if (!strstr(err.msg, needle))
        fail_msg("error \"%s\" does not contain \"%s\"", err.msg, needle);
}

static void test_meta_key_errors(void **state)
{
    (void)state;
    expect_load_error("schema: a\nSchema: b\n", "in.yaml:1: duplicate key schema");
    expect_load_error("{\"name\":\"x\"}\n{\"schema\":\"s\",\"NAME\":\"a\",\"Name\":\"b\"}\n",
                      "in.yaml:2: duplicate key name");
    expect_load_error("schema: olm.bundle\nname: [1]\n", "in.yaml:1: expected value for key \"name\"");
    expect_load_error("schema: x\nv: .inf\n", "in.yaml:2: value .inf cannot be represented in JSON");
    expect_load_error("schema: x\nv: -.Inf\n", "cannot be represented in JSON");
    expect_load_error("schema: x\nv: .NaN\n", "cannot be represented in JSON");
    expect_load_error("schema: x\n~: null key\n", "in.yaml:2: unsupported map key null");
    expect_load_error("schema: x\n18446744073709551615: k\n", "unsupported map key");
    expect_load_error("schema: x\n? [a]\n: v\n", "in.yaml:2: invalid map key");
    expect_load_error("schema: x\nv: *nope\n", "in.yaml:2: unknown anchor");
    expect_load_error("schema: x\n<<: 1\n", "in.yaml:2: map merge requires map");
}

static void test_meta_fields(void **state)
{
    (void)state;
    const char *in = "SCHEMA: olm.bundle\nPackage: p\nname: nm\n";
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(in, strlen(in), "x", &err);
    assert_non_null(c);
    assert_int_equal(c->nmetas, 1);
    assert_string_equal(c->metas[0].schema, "olm.bundle");
    assert_string_equal(c->metas[0].package, "p");
    assert_string_equal(c->metas[0].name, "nm");
    assert_string_equal(c->metas[0].file, "x");
    assert_int_equal(c->metas[0].lineno, 1);
    assert_int_equal(c->nbundles, 1);
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_meta_key_errors),
        cmocka_unit_test(test_meta_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

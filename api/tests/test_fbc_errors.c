/* Bad input: malformed files (load errors naming file and line), one fixture per
 * validator rule (exact problem lines), and truncated/garbage input that must
 * fail cleanly (run this under ASan+UBSan). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fbc.h"
#include "fbc_internal.h"

static void test_malformed_files(void **state)
{
    (void)state;
    static const struct { const char *dir, *error; } cases[] = {
        {"fixtures/malformed/broken-yaml",
         "fixtures/malformed/broken-yaml/b.yaml:6: invalid YAML: mapping values are not allowed"},
        {"fixtures/malformed/broken-json",
         "fixtures/malformed/broken-json/catalog.json:4: invalid JSON: unexpected token"},
        {"fixtures/malformed/non-object",
         "fixtures/malformed/non-object/catalog.json:2: expected a JSON object, got array"},
        {"fixtures/malformed/yaml-list-doc",
         "fixtures/malformed/yaml-list-doc/catalog.yaml:5: expected a YAML mapping (JSON object), "
         "got a sequence"},
        {"fixtures/malformed/dup-schema",
         "fixtures/malformed/dup-schema/catalog.json:3: duplicate key schema"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        olm_error err;
        olm_error_clear(&err);
        fbc_catalog *c = fbc_load_dir(cases[i].dir, &err);
        if (c) {
            fbc_catalog_free(c);
            fail_msg("%s loaded", cases[i].dir);
        }
        if (strncmp(err.msg, cases[i].error, strlen(cases[i].error)) != 0)
            fail_msg("%s:\n got  %s\n want %s...", cases[i].dir, err.msg, cases[i].error);
    }
}

static void test_buffer_errors(void **state)
{
    (void)state;
    static const struct { const char *in, *error; } cases[] = {
        {"{\"schema\":\"a\"}\n{\"schema\":\"b\",}\n", "buf:2: invalid JSON"},
        {"{\"schema\":\"a\"}\n\n\n\"str\"\n", "buf:4: expected a JSON object, got string"},
        {"{\"schema\":\"a\"} ---\n", "buf:1: invalid JSON"},
        {"schema: a\n---\nkey: [unclosed\n", "buf:4: invalid YAML"},
        {"schema: a\n---\njust a string\n", "buf:3: expected a YAML mapping (JSON object), got a string"},
        {"schema: a\n\tname: tab\n", "buf:2: invalid YAML"},
        {"schema: a\nname: \"unterminated\n", "invalid YAML"},
        {"\"schema\": x\n\"Schema\": y\n", "buf:1: duplicate key schema"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        olm_error err;
        olm_error_clear(&err);
        fbc_catalog *c = fbc_load_buffer(cases[i].in, strlen(cases[i].in), "buf", &err);
        if (c) {
            fbc_catalog_free(c);
            fail_msg("case %zu loaded", i);
        }
        if (!strstr(err.msg, cases[i].error))
            fail_msg("case %zu:\n got  %s\n want %s", i, err.msg, cases[i].error);
    }
}

/* Validates a fixture directory and compares the problems line by line. */
static void expect_problems(const char *dir, const char *const *want)
{
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_dir(dir, &err);
    if (!c)
        fail_msg("%s: %s", dir, err.msg);
    fbc_problems p;
    int n = fbc_validate(c, &p);
    size_t nwant = 0;
    while (want[nwant])
        nwant++;
    for (size_t i = 0; i < p.n || i < nwant; i++) {
        const char *got = i < p.n ? p.items[i] : "(none)";
        const char *exp = i < nwant ? want[i] : "(none)";
        if (strcmp(got, exp) != 0)
            fail_msg("%s problem %zu:\n got  %s\n want %s", dir, i, got, exp);
    }
    assert_int_equal(n, (int)nwant);
    fbc_problems_free(&p);
    fbc_catalog_free(c);
}

#define FIX "fixtures/invalid/"
#define PROBLEMS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_validator_rules(void **state)
{
    (void)state;
    expect_problems("fixtures/valid/basic", (const char *const[]){NULL});
    expect_problems(FIX "missing-schema",
                    PROBLEMS("catalog.yaml:30: missing-schema: blob has no schema (package \"foo\", name \"orphan\")"));
    expect_problems(FIX "missing-name",
                    PROBLEMS("catalog.yaml:30: missing-name: olm.bundle blob has no name (package \"foo\")"));
    expect_problems(FIX "duplicate-package",
                    PROBLEMS("catalog.yaml:30: duplicate-package: package \"foo\" is already defined at catalog.yaml:2"));
    expect_problems(FIX "default-channel",
                    PROBLEMS("catalog.yaml:2: default-channel: defaultChannel \"fast\" of package \"foo\" is not a channel of the package"));
    expect_problems(FIX "no-default-channel",
                    PROBLEMS("catalog.yaml:2: default-channel: package \"foo\" has no defaultChannel"));
    expect_problems(FIX "duplicate-channel",
                    PROBLEMS("catalog.yaml:30: duplicate-channel: channel \"foo/stable\" is already defined at catalog.yaml:6"));
    expect_problems(FIX "duplicate-bundle",
                    PROBLEMS("catalog.yaml:30: duplicate-bundle: bundle \"foo/foo.v1.1.0\" is already defined at catalog.yaml:22"));
    expect_problems(FIX "channel-entry",
                    PROBLEMS("catalog.yaml:6: channel-entry: channel \"foo/stable\" entry \"foo.v9.0.0\" names no olm.bundle of package \"foo\""));
    expect_problems(FIX "channel-empty",
                    PROBLEMS("catalog.yaml:30: channel-empty: channel \"foo/empty\" has no entries"));
    expect_problems(FIX "bundle-not-in-channel",
                    PROBLEMS("catalog.yaml:30: bundle-not-in-channel: bundle \"foo/foo.v2.0.0\" is not in any channel"));
    expect_problems(FIX "multiple-heads",
                    PROBLEMS("catalog.yaml:6: channel-head: channel \"foo/stable\" has 2 heads: foo.v1.0.0, foo.v1.1.0"));
    expect_problems(FIX "no-head",
                    PROBLEMS("catalog.yaml:6: channel-head: channel \"foo/stable\" has no head: every entry is replaced or skipped by another (cycle)"));
    expect_problems(FIX "replaces-cycle",
                    PROBLEMS("catalog.yaml:6: replaces-cycle: channel \"foo/stable\": the replaces chain from head \"foo.v1.2.0\" loops back to \"foo.v1.1.0\""));
    expect_problems(FIX "package-property",
                    PROBLEMS("catalog.yaml:22: bundle-package-property: bundle \"foo/foo.v1.1.0\": olm.package property packageName \"bar\" does not match the bundle's package"));
    expect_problems(FIX "two-package-properties",
                    PROBLEMS("catalog.yaml:14: bundle-package-property: bundle \"foo/foo.v1.0.0\" must have exactly one olm.package property, found 2"));
    expect_problems(FIX "bundle-version",
                    PROBLEMS("catalog.yaml:14: bundle-version: bundle \"foo/foo.v1.0.0\": version \"1.0\" is not strict semver: invalid version \"1.0\": expected MAJOR.MINOR.PATCH, found 2 numeric parts",
                             "catalog.yaml:22: bundle-version: bundle \"foo/foo.v1.1.0\": version \"v1.1.0\" is not strict semver: invalid version \"v1.1.0\": major \"v1\" is not a number"));
    expect_problems(FIX "duplicate-deprecations",
                    PROBLEMS("catalog.yaml:40: duplicate-deprecations: package \"foo\" already has olm.deprecations at catalog.yaml:30"));
    expect_problems(FIX "deprecation-reference",
                    PROBLEMS("catalog.yaml:30: deprecation-reference: package \"foo\": deprecated bundle \"foo.v3.0.0\" does not exist",
                             "catalog.yaml:30: deprecation-reference: package \"foo\": deprecated channel \"beta\" does not exist",
                             "catalog.yaml:30: deprecation-reference: package \"foo\": an olm.package reference must not have a name (got \"foo\")",
                             "catalog.yaml:30: deprecation-reference: package \"foo\": entries[3] references unknown schema \"olm.thing\"",
                             "catalog.yaml:30: deprecation-reference: package \"foo\": duplicate deprecation entry for olm.bundle \"foo.v1.0.0\""));
    expect_problems(FIX "unknown-package",
                    PROBLEMS("catalog.yaml:30: unknown-package: channel \"bar/stable\" belongs to package \"bar\", which has no olm.package blob",
                             "catalog.yaml:38: unknown-package: bundle \"bar/bar.v1.0.0\" belongs to package \"bar\", which has no olm.package blob"));
    expect_problems(FIX "invalid-field",
                    PROBLEMS("catalog.yaml:15: invalid-field: olm.bundle \"foo/foo.v1.0.0\": image must be a string",
                             "catalog.yaml:31: invalid-field: olm.channel \"foo/bad\": entries must be an array",
                             "catalog.yaml:31: channel-empty: channel \"foo/bad\" has no entries"));
}

/* The typed views of the valid fixture, as the resolver sees them. */
static void test_model_views(void **state)
{
    (void)state;
    olm_error err;
    fbc_catalog *c = fbc_load_dir("fixtures/valid/basic", &err);
    assert_non_null(c);
    const fbc_package *p = fbc_find_package(c, "foo");
    assert_non_null(p);
    assert_string_equal(p->default_channel, "stable");
    const fbc_channel *ch = fbc_find_channel(c, "foo", "stable");
    assert_non_null(ch);
    assert_int_equal(ch->nentries, 2);
    assert_null(ch->entries[0].replaces);
    assert_string_equal(ch->entries[1].replaces, "foo.v1.0.0");
    const fbc_bundle *b = fbc_find_bundle(c, "foo", "foo.v1.1.0");
    assert_non_null(b);
    assert_string_equal(b->version, "1.1.0");
    assert_null(b->release);
    assert_string_equal(b->image, "quay.io/foo/bundle:1.1.0");
    assert_int_equal(b->nproperties, 1);
    assert_string_equal(b->properties[0].type, "olm.package");
    const fbc_deprecation *d = fbc_find_deprecation(c, "foo");
    assert_non_null(d);
    assert_int_equal(d->nentries, 3);
    assert_string_equal(d->entries[0].schema, "olm.bundle");
    assert_string_equal(d->entries[0].name, "foo.v1.0.0");
    assert_string_equal(d->entries[2].schema, "olm.package");
    assert_string_equal(d->entries[2].name, "");
    assert_string_equal(d->entries[2].message, "foo is deprecated");
    assert_null(fbc_find_package(c, "bar"));
    assert_null(fbc_find_bundle(c, "foo", "foo.v9"));
    assert_null(fbc_find_channel(c, "foo", "fast"));
    fbc_catalog_free(c);
}

/* Unknown schemas are kept and rendered; release and skips are read. */
static void test_unknown_schema_and_fields(void **state)
{
    (void)state;
    const char *in = "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"c\"}\n"
                     "{\"schema\":\"my.schema\",\"package\":\"p\",\"x\":1}\n"
                     "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"c\",\"entries\":[{\"name\":\"b2\",\"replaces\":\"b1\",\"skips\":[\"b0\",\"bx\"],\"skipRange\":\"<2.0.0\"},{\"name\":\"b1\"}]}\n"
                     "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"b1\",\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}}]}\n"
                     "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"b2\",\"properties\":[{\"type\":\"olm.gvk\",\"value\":{}},{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"2.0.0\",\"release\":\"2\"}}]}\n";
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(in, strlen(in), "mem", &err);
    assert_non_null(c);
    assert_int_equal(c->nmetas, 5);
    assert_string_equal(c->metas[1].schema, "my.schema");
    static const char want[] = "{\"package\":\"p\",\"schema\":\"my.schema\",\"x\":1}\n";
    assert_int_equal(c->metas[1].line_len, strlen(want)); /* lines are not NUL-terminated */
    assert_memory_equal(c->metas[1].line, want, strlen(want));
    /* A property value is its normalised text inside the bundle's line. */
    const fbc_property *gvk = &fbc_find_bundle(c, "p", "b2")->properties[0];
    assert_int_equal(gvk->value_len, 2);
    assert_memory_equal(gvk->value, "{}", 2);
    const fbc_channel_entry *e = &c->channels[0].entries[0];
    assert_int_equal(e->nskips, 2);
    assert_string_equal(e->skips[1], "bx");
    assert_string_equal(e->skip_range, "<2.0.0");
    const fbc_bundle *b2 = fbc_find_bundle(c, "p", "b2");
    assert_string_equal(b2->version, "2.0.0");
    assert_string_equal(b2->release, "2");
    fbc_problems p;
    assert_int_equal(fbc_validate(c, &p), 0);
    fbc_problems_free(&p);
    fbc_catalog_free(c);
}

/* Loads (and validates when it loads) whatever the bytes are; the test is that
 * nothing crashes, leaks or trips the sanitizers, and errors say where. */
static void try_load(const char *data, size_t len)
{
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_buffer(data, len, "fuzz", &err);
    if (!c) {
        assert_true(strncmp(err.msg, "fuzz", 4) == 0);
        return;
    }
    fbc_problems p;
    assert_true(fbc_validate(c, &p) >= 0);
    fbc_problems_free(&p);
    fbc_catalog_free(c);
}

static void test_fuzz_truncation_and_garbage(void **state)
{
    (void)state;
    char *yaml = NULL, *json = NULL;
    size_t ylen, jlen;
    olm_error err;
    assert_int_equal(fbc_read_file("fixtures/valid/basic/catalog.yaml", &yaml, &ylen, &err), 0);
    assert_int_equal(fbc_read_file("fixtures/indexignore/a.json", &json, &jlen, &err), 0);
    const char extra[] = "\n---\nanchors: &a [*a]\nm: {<<: [1]}\nk: !!binary aGVsbG8=\n"
                         "x: \"\\ud800\"\ny: 1e999\n? [k]\n: v\nz: &b {<<: *b}\n";
    size_t blen = ylen + sizeof extra - 1;
    char *buf = malloc(blen + 1);
    assert_non_null(buf);
    memcpy(buf, yaml, ylen);
    memcpy(buf + ylen, extra, sizeof extra - 1);

    /* Every prefix, of the YAML catalog and of a JSON stream.  The copy is exactly
     * `n` bytes so ASan sees any read past the end. */
    for (size_t n = 0; n <= blen; n++) {
        char *cut = malloc(n ? n : 1);
        assert_non_null(cut);
        memcpy(cut, buf, n);
        try_load(cut, n);
        free(cut);
    }
    for (size_t n = 0; n <= jlen; n++) {
        char *cut = malloc(n ? n : 1);
        assert_non_null(cut);
        memcpy(cut, json, n);
        try_load(cut, n);
        free(cut);
    }
    /* Random mutations with a fixed seed: byte flips and YAML/JSON punctuation. */
    static const char punct[] = "{}[]:,-&*!|>'\"#\n ?%@`<\\\t0xe.~";
    unsigned seed = 12345;
    for (int round = 0; round < 3000; round++) {
        char *m = malloc(blen);
        assert_non_null(m);
        memcpy(m, buf, blen);
        int edits = 1 + rand_r(&seed) % 8;
        for (int k = 0; k < edits; k++) {
            size_t pos = (size_t)rand_r(&seed) % blen;
            if (rand_r(&seed) % 3 == 0)
                m[pos] = (char)(rand_r(&seed) & 0xFF);
            else
                m[pos] = punct[(size_t)rand_r(&seed) % (sizeof punct - 1)];
        }
        try_load(m, blen);
        free(m);
    }
    /* Deep nesting and an alias bomb fail with a message instead of crashing. */
    size_t deep = 200000;
    char *d = malloc(deep);
    assert_non_null(d);
    memset(d, '[', deep);
    try_load(d, deep);
    d[0] = '{';
    try_load(d, deep);
    free(d);
    const char *bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                       "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                       "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                       "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n";
    assert_null(fbc_load_buffer(bomb, strlen(bomb), "bomb", &err));
    assert_non_null(strstr(err.msg, "excessive aliasing"));
    /* Few nodes, many bytes: a 1 MiB scalar aliased 10 x 10 x 10 times would be 1 GiB of
     * JSON.  Refused, naming the file and the line where the expansion passes the budget. */
    size_t sn = 1024 * 1024;
    char *big = malloc(sn + 512);
    assert_non_null(big);
    int bl = snprintf(big, 64, "schema: olm.package\nname: p\ndescription: &s ");
    memset(big + bl, 'y', sn);
    snprintf(big + bl + sn, 512, "\nx1: &a [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n"
                                 "x2: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                 "x3: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n");
    assert_null(fbc_load_buffer(big, strlen(big), "pkg/catalog.yaml", &err));
    assert_string_equal(err.msg, "pkg/catalog.yaml:5: document contains excessive aliasing");
    free(big);
    free(buf);
    free(yaml);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_buffer_errors),
        cmocka_unit_test(test_validator_rules),
        cmocka_unit_test(test_model_views),
        cmocka_unit_test(test_unknown_schema_and_fields),
        cmocka_unit_test(test_fuzz_truncation_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

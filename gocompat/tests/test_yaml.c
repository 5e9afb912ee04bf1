/* gocompat_yaml: sigs.k8s.io/yaml.  Expected outputs come from Go 1.26 with
 * sigs.k8s.io/yaml v1.4.0: YAMLToJSON's text, and that text decoded into
 * interface{} and written by an Encoder with SetEscapeHTML(false) (catalogd). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gocompat.h"

/* Moved from api/tests/test_fbc_normalise.c. */
static void test_yaml_scalar_resolution(void **state)
{
    (void)state;
    gocompat_yaml_scalar s;
    assert_int_equal(gocompat_yaml_resolve_plain("0x7FFFFFFFFFFFFFFF", 18, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_INT);
    assert_true(s.i == INT64_MAX);
    assert_int_equal(gocompat_yaml_resolve_plain("-9223372036854775808", 20, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_INT);
    assert_true(s.i == INT64_MIN);
    assert_int_equal(gocompat_yaml_resolve_plain("18446744073709551615", 20, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_UINT);
    assert_int_equal(gocompat_yaml_resolve_plain("+18446744073709551615", 21, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_FLOAT); /* ParseUint takes no sign: float path */
    assert_int_equal(gocompat_yaml_resolve_plain(".inf", 4, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_FLOAT);
    assert_int_equal(gocompat_yaml_resolve_plain("<<", 2, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_MERGE);
    assert_int_equal(gocompat_yaml_resolve_plain("2025-06-24T14:07:09", 19, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_STRING);
    assert_int_equal(gocompat_yaml_resolve_plain("1.2.3", 5, &s), 0);
    assert_int_equal(s.kind, GOCOMPAT_YAML_STRING);
}

typedef struct docs {
    strbuf text;  /* every document, encoded, one per line */
    int lines[8]; /* the line each document starts on */
    int n;
    int stop_after; /* callback returns 1 after this many; 0: never */
} docs;

static int collect(void *ud, json_t *root, int line)
{
    docs *d = ud;
    int rc = gocompat_json_encode(&d->text, root, GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_FLOAT64_NUMBERS);
    json_decref(root);
    if (rc < 0 || strbuf_putc(&d->text, '\n') < 0)
        return -1;
    if (d->n < 8)
        d->lines[d->n] = line;
    d->n++;
    return d->stop_after && d->n >= d->stop_after ? 1 : 0;
}

/* The catalogd pipeline: every document decoded and encoded. */
static void expect_decode(const char *yaml, unsigned flags, const char *want)
{
    gocompat_yaml_opts opts = {flags, 0, 0, 0};
    gocompat_yaml_error e;
    docs d = {STRBUF_INIT, {0}, 0, 0};
    if (gocompat_yaml_decode(yaml, strlen(yaml), &opts, collect, &d, &e) < 0)
        fail_msg("%s: error %d at line %d (%s)", yaml, e.code, e.line, e.text);
    assert_string_equal(strbuf_str(&d.text), want);
    strbuf_free(&d.text);
}

static void test_decode(void **state)
{
    (void)state;
    expect_decode("a: [yes, on, y, Off, N, tRUE, \"yes\"]\nb: [~, null, NULL, \"\", '~']\nc:\n", 0,
                  "{\"a\":[true,true,true,false,false,\"tRUE\",\"yes\"],\"b\":[null,null,null,\"\",\"~\"],\"c\":null}\n");
    expect_decode("i: [0x1F, 0o17, 017, 0b101, -0b11, 1_000_000, 09, +12, -0, 9007199254740993, "
                  "12345678901234567890, 18446744073709551615, 99999999999999999999, "
                  "-9223372036854775808, 0xFFFFFFFFFFFFFFFFFF]\n", 0,
                  "{\"i\":[31,15,15,5,-3,1000000,9,12,0,9007199254740992,12345678901234567000,"
                  "18446744073709552000,100000000000000000000,-9223372036854776000,\"0xFFFFFFFFFFFFFFFFFF\"]}\n");
    expect_decode("f: [1.5, .5, 1e21, 1e-7, -0.0, 4.10, 5.0, 1e400, 0.000001, 123456789012345678901234]\n", 0,
                  "{\"f\":[1.5,0.5,1e+21,1e-7,-0,4.1,5,\"1e400\",0.000001,1.2345678901234569e+23]}\n");
    expect_decode("k: {1: a, -2: b, 1.5: c, 1e6: d, 0x10: e, yes: f, 3.14159265358979: h, off: j, 0.1: k}\n", 0,
                  "{\"k\":{\"-2\":\"b\",\"0.1\":\"k\",\"1\":\"a\",\"1.5\":\"c\",\"16\":\"e\",\"1e+06\":\"d\","
                  "\"3.1415927\":\"h\",\"false\":\"j\",\"true\":\"f\"}}\n");
    expect_decode("k: {0.053598975: g, 1e39: i, -1e39: j, 16777217.0: k}\n", 0,
                  "{\"k\":{\"-.inf\":\"j\",\".inf\":\"i\",\"0.053598974\":\"g\",\"1.6777216e+07\":\"k\"}}\n");
    expect_decode("base: &B {x: 1, l: [a, b]}\nref: *B\nm1:\n  <<: *B\n  x: 2\nm2:\n  x: 0\n  <<: *B\n"
                  "m3:\n  <<: [{p: 1}, {p: 2, q: 3}]\ns: &S scalar\nt: *S\n", 0,
                  "{\"base\":{\"l\":[\"a\",\"b\"],\"x\":1},\"m1\":{\"l\":[\"a\",\"b\"],\"x\":2},"
                  "\"m2\":{\"l\":[\"a\",\"b\"],\"x\":1},\"m3\":{\"p\":1,\"q\":3},\"ref\":{\"l\":[\"a\",\"b\"],\"x\":1},"
                  "\"s\":\"scalar\",\"t\":\"scalar\"}\n");
    expect_decode("s: \"q\\\" \\b\\f\\n\\t \\x01 \\u2028 <>& \\u00e9\"\ne: !!str 12\ni: !!int \"12\"\n", 0,
                  "{\"e\":\"12\",\"i\":12,\"s\":\"q\\\" \\b\\f\\n\\t \\u0001 \\u2028 <>& \xc3\xa9\"}\n");
    expect_decode("c: &x 5\nd: {*x : c}\n", 0, "{\"c\":5,\"d\":{\"5\":\"c\"}}\n");
    /* An anchor on a key names the key's scalar. */
    expect_decode("&k 1: a\n*k : b\nc: *k\n&s key: d\ne: [*s]\n", 0,
                  "{\"1\":\"b\",\"c\":1,\"e\":[\"key\"],\"key\":\"d\"}\n");
    /* Every document, an empty one as null. */
    expect_decode("a: 1\n---\n---\n# comment\n---\n- 2\n", 0, "{\"a\":1}\nnull\nnull\n[2]\n");
    expect_decode("", 0, "");
}

static void test_document_lines(void **state)
{
    (void)state;
    const char *y = "a: 1\n---\n\nb: 2\n---\n[3]\n";
    gocompat_yaml_error e;
    docs d = {STRBUF_INIT, {0}, 0, 2};
    assert_int_equal(gocompat_yaml_decode(y, strlen(y), NULL, collect, &d, &e), 0);
    assert_int_equal(d.n, 2); /* the callback stopped it */
    assert_int_equal(d.lines[0], 1);
    assert_int_equal(d.lines[1], 4);
    strbuf_free(&d.text);
}

static gocompat_yaml_error expect_error(const char *yaml, const gocompat_yaml_opts *opts,
                                        gocompat_yaml_errcode code, int line)
{
    gocompat_yaml_error e;
    docs d = {STRBUF_INIT, {0}, 0, 0};
    if (gocompat_yaml_decode(yaml, strlen(yaml), opts, collect, &d, &e) == 0)
        fail_msg("%s: no error", yaml);
    strbuf_free(&d.text);
    if (e.code != code || e.line != line)
        fail_msg("%s: error %d at line %d (%s), expected %d at %d", yaml, e.code, e.line, e.text, code, line);
    return e;
}

static void test_errors(void **state)
{
    (void)state;
    gocompat_yaml_error e;
    e = expect_error("a: b\n~: x\n", NULL, GOCOMPAT_YAML_EKEY, 2);
    assert_string_equal(e.text, "null");
    e = expect_error("18446744073709551615: x\n", NULL, GOCOMPAT_YAML_EKEY, 1);
    assert_string_equal(e.text, "18446744073709551615");
    expect_error("? [a]\n: v\n", NULL, GOCOMPAT_YAML_EKEY_COLLECTION, 1);
    e = expect_error("a: 1\nb: *nope\n", NULL, GOCOMPAT_YAML_EANCHOR, 2);
    assert_string_equal(e.text, "nope");
    expect_error("a: 1\n<<: 1\n", NULL, GOCOMPAT_YAML_EMERGE, 2);
    expect_error("<<: [{a: 1}, 2]\n", NULL, GOCOMPAT_YAML_EMERGE, 1);
    e = expect_error("k: &n ~\n*n : v\n", NULL, GOCOMPAT_YAML_EKEY_ALIAS, 2);
    assert_string_equal(e.text, "null");
    e = expect_error("k: &n [1]\n*n : v\n", NULL, GOCOMPAT_YAML_EKEY_ALIAS, 2);
    assert_string_equal(e.text, "collection");
    e = expect_error("a:\n  b: -.Inf\n", NULL, GOCOMPAT_YAML_ENONFINITE, 2);
    assert_string_equal(e.text, "-.Inf");
    assert_true(isinf(e.value) && e.value < 0);
    e = expect_error("a: b\nc: [unclosed\n", NULL, GOCOMPAT_YAML_ESYNTAX, 3);
    assert_non_null(e.problem);
    e = expect_error("a: b\n\tc: tab\n", NULL, GOCOMPAT_YAML_ESYNTAX, 2);
    assert_non_null(e.problem);

    gocompat_yaml_opts shallow = {0, 2, 0, 0};
    expect_decode("a: {b: 1}\n", 0, "{\"a\":{\"b\":1}}\n");
    e = expect_error("a: {b: [1]}\n", &shallow, GOCOMPAT_YAML_EDEPTH, 1);
    assert_true(e.value == 2);
    /* Each alias of l4 stands for 10^4 nodes. */
    const char *laughs = "l0: &a [x, x, x, x, x, x, x, x, x, x]\n"
                         "l1: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                         "l2: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                         "l3: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n";
    gocompat_yaml_opts budget = {0, 0, 5000, 0};
    expect_error(laughs, &budget, GOCOMPAT_YAML_EALIASING, 4);
}

/* gocompat_yaml hands scalars and keys to jansson unchecked (string_value): that holds only
 * while libyaml refuses every input that would give a string or key that is not UTF-8. */
static void test_invalid_utf8(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "a: \xff\n",             /* not a leading byte */
        "a: \xc3\n",             /* truncated sequence */
        "a: \xc0\x80\n",         /* overlong NUL */
        "a: \xe0\x80\xaf\n",     /* overlong '/' */
        "a: \xed\xa0\x80\n",     /* a surrogate */
        "a: \xf4\x90\x80\x80\n", /* past U+10FFFF */
        "\xff: b\n",             /* in a key */
        "a: \"\\ud800\"\n",     /* an escape naming a surrogate */
        "a: \"\\U00110000\"\n", /* an escape past U+10FFFF */
        "\"\\udfff\": b\n",     /* in a key */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_error(bad[i], NULL, GOCOMPAT_YAML_ESYNTAX, 1);
    /* What libyaml does accept arrives as it was: \xNN escapes are code points, not bytes. */
    expect_decode("a: \"\\xff \\u00e9 \\U0001F600\"\n\xc3\xa9: \xf0\x9f\x98\x80\n", 0,
                  "{\"a\":\"\xc3\xbf \xc3\xa9 \xf0\x9f\x98\x80\",\"\xc3\xa9\":\"\xf0\x9f\x98\x80\"}\n");
}

/* The budget counts bytes too: a 1 MiB scalar anchored and aliased through lists of 10 is
 * a few dozen nodes, yet 10 MiB, 100 MiB, 1 GiB of JSON (1.1 GB RSS for a 1 MB file).
 * Past max(64 MiB, 4 x the input) of expanded text it is refused at the node that passes
 * it.  10 MiB of expansion still decodes. */
static void test_alias_bytes_budget(void **state)
{
    (void)state;
    size_t n = 1024 * 1024;
    strbuf y = STRBUF_INIT;
    assert_int_equal(strbuf_puts(&y, "s: &s "), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(strbuf_append(&y, "x", 1), 0);
    assert_int_equal(strbuf_puts(&y, "\nl1: &a [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n"), 0);
    docs d = {STRBUF_INIT, {0}, 0, 0};
    gocompat_yaml_error e;
    assert_int_equal(gocompat_yaml_decode(y.data, y.len, NULL, collect, &d, &e), 0);
    strbuf_free(&d.text);
    assert_int_equal(strbuf_puts(&y, "l2: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                     "l3: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"),
                     0);
    expect_error(y.data, NULL, GOCOMPAT_YAML_EALIASING, 3);
    /* An explicit budget replaces the default. */
    gocompat_yaml_opts tight = {.max_bytes = 5 * n};
    expect_error(strbuf_str(&y), &tight, GOCOMPAT_YAML_EALIASING, 2);
    strbuf_free(&y);
}

/* A callback's failure stops the stream and says so. */
static int refuse(void *ud, json_t *root, int line)
{
    (void)ud;
    (void)line;
    json_decref(root);
    return -1;
}

static void test_callback_error(void **state)
{
    (void)state;
    gocompat_yaml_error e;
    assert_int_equal(gocompat_yaml_decode("a: 1\n---\nb: [", 13, NULL, refuse, NULL, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_ECALLBACK);
}

/* The kubeconfig flavour: scalars stay text, no aliases, only the first root. */
static void test_strings_mode(void **state)
{
    (void)state;
    const unsigned kube = GOCOMPAT_YAML_STRINGS | GOCOMPAT_YAML_NO_ALIASES | GOCOMPAT_YAML_FIRST_ROOT;
    expect_decode("a: yes\nb: 1\nc: null\nd: ''\ne:\nf: 'null'\ng: [~, NULL, nULL, 0x10, 1.50]\n3: k\n", kube,
                  "{\"3\":\"k\",\"a\":\"yes\",\"b\":\"1\",\"c\":null,\"d\":\"\",\"e\":\"\",\"f\":\"null\","
                  "\"g\":[null,null,\"nULL\",\"0x10\",\"1.50\"]}\n");
    /* Nothing after the first root is parsed. */
    expect_decode("a: 1\n---\nb: [unclosed\n", kube, "{\"a\":\"1\"}\n");
    expect_decode("&x a: 1\n", kube, "{\"a\":\"1\"}\n"); /* an anchor alone is fine */
    gocompat_yaml_opts opts = {kube, 64, SIZE_MAX, SIZE_MAX};
    expect_error("a: &x 1\nb: *x\n", &opts, GOCOMPAT_YAML_EALIAS, 2);
    expect_error("~: 1\n", &opts, GOCOMPAT_YAML_EKEY, 1);
    expect_error("? {a: 1}\n: 1\n", &opts, GOCOMPAT_YAML_EKEY_COLLECTION, 1);
    /* A collection key is built first: what is wrong inside it comes first. */
    expect_error("? [*x]\n: 1\n", &opts, GOCOMPAT_YAML_EALIAS, 1);
}

static void expect_text(const char *yaml, unsigned json_flags, const char *want)
{
    gocompat_yaml_opts opts = {0, 0, 0, 0};
    gocompat_yaml_error e;
    strbuf out = STRBUF_INIT;
    if (gocompat_yaml_to_json(yaml, strlen(yaml), &opts, json_flags, 0, &out, &e) < 0)
        fail_msg("%s: error %d at line %d (%s)", yaml, e.code, e.line, e.text);
    assert_string_equal(strbuf_str(&out), want);
    strbuf_free(&out);
}

/* YAMLToJSON's own text: exact integers, json.Marshal's escaping. */
static void test_to_json(void **state)
{
    (void)state;
    const unsigned marshal = GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML;
    expect_text("i: [0x1F, 0o17, 017, 0b101, -0b11, 1_000_000, 09, +12, -0, 9007199254740993, "
                "12345678901234567890, 18446744073709551615, 99999999999999999999, "
                "-9223372036854775808, 0xFFFFFFFFFFFFFFFFFF]\n", marshal,
                "{\"i\":[31,15,15,5,-3,1000000,9,12,0,9007199254740993,12345678901234567890,"
                "18446744073709551615,100000000000000000000,-9223372036854775808,\"0xFFFFFFFFFFFFFFFFFF\"]}");
    expect_text("f: [1.5, .5, 1e21, 1e-7, -0.0, 4.10, 5.0, 1e400, 0.000001, 123456789012345678901234]\n", marshal,
                "{\"f\":[1.5,0.5,1e+21,1e-7,-0,4.1,5,\"1e400\",0.000001,1.2345678901234569e+23]}");
    expect_text("s: \"q\\\" \\b\\f\\n\\t \\x01 \\u2028 <>& \\u00e9\"\ne: !!str 12\ni: !!int \"12\"\n", marshal,
                "{\"e\":\"12\",\"i\":12,\"s\":\"q\\\" \\b\\f\\n\\t \\u0001 \\u2028 \\u003c\\u003e\\u0026 \xc3\xa9\"}");
    expect_text("a: &u 18446744073709551615\nb: *u\n", marshal,
                "{\"a\":18446744073709551615,\"b\":18446744073709551615}");
    expect_text("a: 1\n---\nb: [unclosed\n", marshal, "{\"a\":1}"); /* one document */
    expect_text("", marshal, "null");
    expect_text("---\n", marshal, "null");
    expect_text("- 1\n- 2\n", marshal, "[1,2]");
    /* The upgradeable properties flavour (Go before 1.22). */
    expect_text("a: \"\\b\\f\"\n", marshal | GOCOMPAT_JSON_LEGACY_BF, "{\"a\":\"\\u0008\\u000c\"}");
}

static void test_to_json_limits(void **state)
{
    (void)state;
    gocompat_yaml_opts opts = {0, 3, SIZE_MAX, SIZE_MAX};
    gocompat_yaml_error e;
    strbuf out = STRBUF_INIT;
    /* Deeper than 3 once the alias is expanded, though no node is built deeper. */
    const char *deep = "x: &a [[1]]\ny: [[*a]]\n";
    assert_int_equal(gocompat_yaml_to_json(deep, strlen(deep), &opts, 0, 0, &out, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_EDEPTH);
    strbuf_reset(&out);
    const char *big = "a: &a [xxxxxxxxxx, xxxxxxxxxx, xxxxxxxxxx, xxxxxxxxxx]\nb: [*a, *a, *a, *a, *a]\n";
    assert_int_equal(gocompat_yaml_to_json(big, strlen(big), &opts, 0, 100, &out, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_ETOOBIG);
    strbuf_reset(&out);
    assert_int_equal(gocompat_yaml_to_json(big, strlen(big), &opts, 0, 1000, &out, &e), 0);
    strbuf_reset(&out);
    assert_int_equal(gocompat_yaml_to_json("a: .nan\n", 8, &opts, 0, 0, &out, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_ENONFINITE);
    assert_true(isnan(e.value));
    strbuf_free(&out);
}

/* go-yaml parses a whole document before decoding it: its syntax errors and
 * unknown anchors come before any key or value problem. */
static void test_to_json_error_order(void **state)
{
    (void)state;
    gocompat_yaml_error e;
    strbuf out = STRBUF_INIT;
    const char *y = "~: x\nb: .nan\nc: *nope\nd: [unclosed\n";
    assert_int_equal(gocompat_yaml_to_json(y, strlen(y), NULL, 0, 0, &out, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_EANCHOR);
    assert_int_equal(e.line, 3);
    const char *z = "~: x\nb: .nan\nd: [unclosed\n";
    assert_int_equal(gocompat_yaml_to_json(z, strlen(z), NULL, 0, 0, &out, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_ESYNTAX);
    const char *k = "~: x\nb: .nan\n";
    assert_int_equal(gocompat_yaml_to_json(k, strlen(k), NULL, 0, 0, &out, &e), -1);
    assert_int_equal(e.code, GOCOMPAT_YAML_EKEY);
    /* Only the first document counts. */
    const char *two = "a: 1\n---\nb: *nope\n";
    assert_int_equal(gocompat_yaml_to_json(two, strlen(two), NULL, 0, 0, &out, &e), 0);
    assert_string_equal(strbuf_str(&out), "{\"a\":1}");
    strbuf_free(&out);
}

/* The FBC loader's wording. */
static void test_strerror(void **state)
{
    (void)state;
    gocompat_yaml_error e;
    olm_error err;
    docs d = {STRBUF_INIT, {0}, 0, 0};
    assert_int_equal(gocompat_yaml_decode("a: b\nc: *x\n", 11, NULL, collect, &d, &e), -1);
    assert_int_equal(gocompat_yaml_strerror(&e, "f.yaml", &err), -1);
    assert_string_equal(err.msg, "f.yaml:2: unknown anchor 'x' referenced");
    assert_int_equal(gocompat_yaml_decode("a: b\n  c: d\n", 12, NULL, collect, &d, &e), -1);
    gocompat_yaml_strerror(&e, "f.yaml", &err);
    assert_string_equal(err.msg, "f.yaml:2: invalid YAML: mapping values are not allowed in this context");
    assert_int_equal(gocompat_yaml_decode("v: .inf\n", 8, NULL, collect, &d, &e), -1);
    gocompat_yaml_strerror(&e, "f.yaml", &err);
    assert_string_equal(err.msg, "f.yaml:1: value .inf cannot be represented in JSON");
    strbuf_free(&d.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_scalar_resolution),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_document_lines),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_alias_bytes_budget),
        cmocka_unit_test(test_callback_error),
        cmocka_unit_test(test_strings_mode),
        cmocka_unit_test(test_to_json),
        cmocka_unit_test(test_to_json_limits),
        cmocka_unit_test(test_to_json_error_order),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* olm_flags: both value forms, booleans, defaults, exact names, and one message per kind
 * of mistake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "olm_flags.h"

typedef struct opts {
    const char *dir, *name;
    bool elect, log;
    uint64_t every_ms, backstop_ms;
    unsigned workers, v;
} opts;

static char msg[256];

/* Parses a NULL-terminated argument list (argv[0] is added). */
static int parse_args(opts *o, char **args)
{
    char *argv[32] = {"daemon"};
    int argc = 1;
    while (*args)
        argv[argc++] = *args++;
    argv[argc] = NULL;
    const olm_flag flags[] = {
        OLM_FLAG_STRING("--dir", &o->dir, "/var/cache/x"),
        OLM_FLAG_STRING("--dir-name", &o->name, NULL),
        OLM_FLAG_BOOL("--leader-elect", &o->elect, NULL),
        OLM_FLAG_NO("--no-access-log", &o->log),
        OLM_FLAG_DURATION("--every", &o->every_ms, "12h", 1, "--every: bad duration \"%s\" (e.g. 12h)"),
        OLM_FLAG_DURATION("--backstop", &o->backstop_ms, "5m", 0, NULL),
        OLM_FLAG_UINT("--workers", &o->workers, "2", 1, 64, "--workers must be 1..64, not %s"),
        OLM_FLAG_UINT("-v", &o->v, "0", 0, 10, "-v: want 0..10, not %s"),
    };
    msg[0] = '\0';
    return olm_flags_parse(flags, OLM_FLAGS_COUNT(flags), "unknown flag %s", argc, argv, msg, sizeof msg);
}

#define PARSE(o, ...) parse_args((o), (char *[]){__VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    (void)state;
    opts o;
    memset(&o, 0xff, sizeof o);
    assert_int_equal(parse_args(&o, (char *[]){NULL}), 0);
    assert_string_equal(o.dir, "/var/cache/x");
    assert_null(o.name);
    assert_false(o.elect);
    assert_true(o.log);
    assert_int_equal(o.every_ms, 12u * 3600u * 1000u);
    assert_int_equal(o.backstop_ms, 300000);
    assert_int_equal(o.workers, 2);
}

static void test_forms(void **state)
{
    (void)state;
    opts o;
    assert_int_equal(PARSE(&o, "--dir=/a", "--dir-name", "n", "--every", "90s", "--backstop=0", "--workers=64",
                           "--leader-elect", "--no-access-log"),
                     0);
    assert_string_equal(o.dir, "/a");
    assert_string_equal(o.name, "n");
    assert_int_equal(o.every_ms, 90000);
    assert_int_equal(o.backstop_ms, 0);
    assert_int_equal(o.workers, 64);
    assert_true(o.elect);
    assert_false(o.log);
    /* The word after a flag is its value, whatever it looks like; "=" may give "". */
    assert_int_equal(PARSE(&o, "--dir", "--leader-elect", "--dir-name="), 0);
    assert_string_equal(o.dir, "--leader-elect");
    assert_string_equal(o.name, "");
    assert_false(o.elect);
    /* Later wins; booleans take =true / =false. */
    assert_int_equal(PARSE(&o, "--dir=a", "--dir=b", "--leader-elect=true"), 0);
    assert_string_equal(o.dir, "b");
    assert_true(o.elect);
    assert_int_equal(PARSE(&o, "--leader-elect", "--leader-elect=false"), 0);
    assert_false(o.elect);
}

/* A one-dash row (klog's -v): every spelling Go's flag package takes, anywhere in the line. */
static void test_one_dash(void **state)
{
    (void)state;
    opts o;
    assert_int_equal(PARSE(&o, "-v", "4"), 0);
    assert_int_equal(o.v, 4);
    assert_int_equal(PARSE(&o, "-v=2", "--workers", "3"), 0);
    assert_int_equal(o.v, 2);
    assert_int_equal(o.workers, 3);
    assert_int_equal(PARSE(&o, "--workers=5", "--v", "6", "--dir", "d"), 0);
    assert_int_equal(o.v, 6);
    assert_int_equal(o.workers, 5);
    assert_string_equal(o.dir, "d");
    assert_int_equal(PARSE(&o, "--v=1"), 0);
    assert_int_equal(o.v, 1);
    assert_int_equal(PARSE(&o, "--dir", "-v"), 0); /* a value, not the flag */
    assert_string_equal(o.dir, "-v");
    assert_int_equal(o.v, 0);
    assert_int_equal(PARSE(&o, "-v", "11"), -1);
    assert_string_equal(msg, "-v: want 0..10, not 11");
    assert_int_equal(PARSE(&o, "--workers", "2", "-v"), -1);
    assert_string_equal(msg, "-v needs a value");
    assert_int_equal(PARSE(&o, "-vv", "1"), -1);
    assert_string_equal(msg, "unknown flag -vv");
    assert_int_equal(PARSE(&o, "-workers", "1"), -1); /* other rows keep their two dashes */
    assert_string_equal(msg, "unknown flag -workers");
}

static void test_help(void **state)
{
    (void)state;
    opts o;
    assert_int_equal(PARSE(&o, "-h"), 1);
    assert_int_equal(PARSE(&o, "--dir", "x", "--help", "--bogus"), 1);
    assert_int_equal(PARSE(&o, "--bogus", "--help"), -1); /* in order, like before */
    assert_string_equal(msg, "unknown flag --bogus");
}

/* An alias is a second row with the same destination and default (how the daemons keep
 * --health-addr beside --health-probe-bind-address): either spelling, the later wins. */
static void test_alias(void **state)
{
    (void)state;
    const char *addr = NULL;
    const olm_flag flags[] = {
        OLM_FLAG_STRING("--health-probe-bind-address", &addr, "127.0.0.1:8081"),
        OLM_FLAG_STRING("--health-addr", &addr, "127.0.0.1:8081"),
    };
    char *none[] = {"d", NULL};
    assert_int_equal(olm_flags_parse(flags, 2, "unknown flag %s", 1, none, msg, sizeof msg), 0);
    assert_string_equal(addr, "127.0.0.1:8081");
    char *old[] = {"d", "--health-addr", ":1", NULL};
    assert_int_equal(olm_flags_parse(flags, 2, "unknown flag %s", 3, old, msg, sizeof msg), 0);
    assert_string_equal(addr, ":1");
    char *both[] = {"d", "--health-addr=:1", "--health-probe-bind-address=:2", NULL};
    assert_int_equal(olm_flags_parse(flags, 2, "unknown flag %s", 3, both, msg, sizeof msg), 0);
    assert_string_equal(addr, ":2");
}

static void expect_error(opts *o, char **args, const char *want)
{
    assert_int_equal(parse_args(o, args), -1);
    assert_string_equal(msg, want);
}

#define EXPECT_ERROR(o, want, ...) expect_error((o), (char *[]){__VA_ARGS__, NULL}, (want))

static void test_errors(void **state)
{
    (void)state;
    opts o;
    EXPECT_ERROR(&o, "unknown flag --bogus", "--bogus");
    EXPECT_ERROR(&o, "unknown flag --bogus=1", "--bogus=1");
    EXPECT_ERROR(&o, "unknown flag --di", "--di", "x");           /* no abbreviations */
    EXPECT_ERROR(&o, "unknown flag --dir-n=x", "--dir-n=x");      /* not even unique ones */
    EXPECT_ERROR(&o, "unknown flag positional", "--dir", "x", "positional");
    EXPECT_ERROR(&o, "unknown flag -x", "-x");
    EXPECT_ERROR(&o, "unknown flag -hx", "-hx");
    EXPECT_ERROR(&o, "unknown flag --", "--", "--dir");
    EXPECT_ERROR(&o, "unknown flag -", "-");
    EXPECT_ERROR(&o, "unknown flag --leader-elect=yes", "--leader-elect=yes");
    EXPECT_ERROR(&o, "unknown flag true", "--leader-elect", "true");
    EXPECT_ERROR(&o, "unknown flag --no-access-log=true", "--no-access-log=true");
    EXPECT_ERROR(&o, "unknown flag --help=1", "--help=1");
    EXPECT_ERROR(&o, "--dir needs a value", "--dir");
    EXPECT_ERROR(&o, "--workers needs a value", "--leader-elect", "--workers");
    EXPECT_ERROR(&o, "--every: bad duration \"0\" (e.g. 12h)", "--every", "0");
    EXPECT_ERROR(&o, "--every: bad duration \"soon\" (e.g. 12h)", "--every=soon");
    EXPECT_ERROR(&o, "--backstop: bad value \"-1s\"", "--backstop", "-1s");
    EXPECT_ERROR(&o, "--workers must be 1..64, not 0", "--workers", "0");
    EXPECT_ERROR(&o, "--workers must be 1..64, not 65", "--workers=65");
    EXPECT_ERROR(&o, "--workers must be 1..64, not 2x", "--workers=2x");
    EXPECT_ERROR(&o, "--workers must be 1..64, not ", "--workers=");
    EXPECT_ERROR(&o, "--workers must be 1..64, not 99999999999999999999", "--workers=99999999999999999999");
    /* The first mistake is the one reported. */
    EXPECT_ERROR(&o, "unknown flag --a", "--a", "--b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_one_dash),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_alias),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* .indexignore (gitignore semantics) and the walk order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fbc.h"
#include "fbc_internal.h"

static void check(fbc_ignore *ig, const char *path, int want)
{
    int got = fbc_ignore_match(ig, path);
    if (got != want)
        fail_msg("%s: ignored=%d, want %d", path, got, want);
}

static void test_matcher(void **state)
{
    (void)state;
    fbc_ignore *ig = fbc_ignore_new();
    assert_non_null(ig);
    const char *root = "# comment\n"
                       "\n"
                       "*.md\n"
                       "!keep.md\n"
                       "/anchored.yaml\n"
                       "build/\n"
                       "a/**/z.json\n"
                       "**/deep.txt\n"
                       "logs/**\n"
                       "file?.yaml\n"
                       "\\#hash.yaml\n"
                       "trailing.yaml   \n"
                       "x/y/\n";
    assert_int_equal(fbc_ignore_add(ig, "", root, strlen(root)), 0);
    const char *sub = "local.yaml\n!notes.md\n/only-here.yaml\n";
    assert_int_equal(fbc_ignore_add(ig, "pkg", sub, strlen(sub)), 0);

    check(ig, "README.md", 1);
    check(ig, "dir/README.md", 1);   /* a name pattern matches at any depth */
    check(ig, "keep.md", 0);         /* negated later */
    check(ig, "dir/keep.md", 0);
    check(ig, "anchored.yaml", 1);
    check(ig, "dir/anchored.yaml", 0); /* leading / anchors to the .indexignore's dir */
    check(ig, "build", 0);           /* dir-only pattern, and this is a file */
    check(ig, "build/x.yaml", 1);
    check(ig, "p/build/x.yaml", 1);
    check(ig, "a/z.json", 1);        /* ** matches zero directories */
    check(ig, "a/b/c/z.json", 1);
    check(ig, "b/a/z.json", 0);      /* a pattern with a slash is anchored */
    check(ig, "deep.txt", 1);
    check(ig, "q/r/deep.txt", 1);
    check(ig, "logs", 0);            /* a trailing double star matches inside only */
    check(ig, "logs/a/b.yaml", 1);
    check(ig, "file1.yaml", 1);
    check(ig, "file12.yaml", 0);
    check(ig, "#hash.yaml", 1);
    check(ig, "trailing.yaml", 1);
    check(ig, "x/y", 0);
    check(ig, "x/y/z.yaml", 1);
    check(ig, "pkg/local.yaml", 1);  /* patterns of pkg/.indexignore ... */
    check(ig, "local.yaml", 0);      /* ... only apply under pkg/ */
    check(ig, "pkg/notes.md", 0);    /* a deeper file overrides its parent */
    check(ig, "pkg/other.md", 1);
    check(ig, "pkg/only-here.yaml", 1);
    check(ig, "pkg/sub/only-here.yaml", 0);
    check(ig, "catalog.yaml", 0);
    fbc_ignore_free(ig);
}

/* A pattern with k "**" components against an n-deep path tried every split of the path:
 * C(n,k) fnmatch calls, so 8 of them against 60 directories never finished.  Matching is
 * now a table over (pattern component, path component): n * k steps. */
static void test_double_star_is_linear(void **state)
{
    (void)state;
    fbc_ignore *ig = fbc_ignore_new();
    assert_non_null(ig);
    const char *pats = "**/**/**/**/**/**/**/**/nomatch\n"
                       "**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/d59/**/**/**/hit.json\n"
                       "q/**/**/r/**/s\n";
    assert_int_equal(fbc_ignore_add(ig, "", pats, strlen(pats)), 0);
    char path[1024];
    int n = 0;
    for (int i = 0; i < 60; i++)
        n += snprintf(path + n, sizeof path - (size_t)n, "d%d/", i);
    snprintf(path + n, sizeof path - (size_t)n, "catalog.json");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    check(ig, path, 0);
    snprintf(path + n, sizeof path - (size_t)n, "a/b/hit.json");
    check(ig, path, 1);
    for (int i = 0; i < 1000; i++)
        check(ig, path, 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (secs > 5) /* microseconds each; minutes to forever before */
        fail_msg("1,002 matches took %.1f s", secs);
    /* The semantics of "**" stay: zero or more directories, between fixed components. */
    check(ig, "q/r/s", 1);
    check(ig, "q/x/r/y/z/s", 1);
    check(ig, "q/x/r/y/z/s/inside.json", 1); /* s is a directory: what is in it is ignored */
    check(ig, "q/s", 0);
    check(ig, "x/q/r/s", 0);
    check(ig, "d59/x/y/hit.json", 1);
    check(ig, "hit.json", 0);
    fbc_ignore_free(ig);
}

static void test_walk_fixture(void **state)
{
    (void)state;
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_dir("fixtures/indexignore", &err);
    if (!c)
        fail_msg("%s", err.msg);
    /* fs.WalkDir order: "a/" sorts before "a.json" because "a" < "a.json". */
    static const char *const want[][2] = {
        {"a/b.yaml", "a-dir-b"},          {"a.json", "json-1"},
        {"a.json", "json-2"},             {"a.yaml", "a-yaml"},
        {"keep.md", "keep-md"},           {"other/rootonly.yaml", "other-rootonly"},
        {"sub/deep/ok.yaml", "sub-deep-ok"}, {"sub/keepdir/README.md", "sub-keepdir-readme"},
        {"z/tmp", "z-tmp-file"},
    };
    assert_int_equal(c->nmetas, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < c->nmetas; i++) {
        assert_string_equal(c->metas[i].file, want[i][0]);
        assert_string_equal(c->metas[i].name, want[i][1]);
    }
    assert_int_equal(c->metas[1].lineno, 1);
    assert_int_equal(c->metas[2].lineno, 2);
    fbc_catalog_free(c);
}

static void test_walk_errors(void **state)
{
    (void)state;
    olm_error err;
    assert_null(fbc_load_dir("fixtures/does-not-exist", &err));
    assert_non_null(strstr(err.msg, "fixtures/does-not-exist"));
    assert_null(fbc_load_dir("test_fbc_ignore.c", &err));
    assert_non_null(strstr(err.msg, "not a directory"));
}

/* An empty directory (or one whose files are all ignored) is an empty catalog. */
static void test_empty_dir(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/fbc-empty-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    olm_error err;
    fbc_catalog *c = fbc_load_dir(tmpl, &err);
    assert_non_null(c);
    assert_int_equal(c->nmetas, 0);
    assert_int_equal(c->npackages, 0);
    assert_null(fbc_find_package(c, "x"));
    fbc_problems p;
    assert_int_equal(fbc_validate(c, &p), 0);
    fbc_problems_free(&p);
    fbc_catalog_free(c);
    assert_int_equal(rmdir(tmpl), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matcher),
        cmocka_unit_test(test_double_star_is_linear),
        cmocka_unit_test(test_walk_fixture),
        cmocka_unit_test(test_walk_errors),
        cmocka_unit_test(test_empty_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

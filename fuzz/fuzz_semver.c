/* fuzz_semver: "<left>\n<right>" through every semver entry point: both strings as strict and
 * lenient versions, <left> as a Masterminds constraint and as a blang range checked against
 * <right>'s version.  Checks: a version formats to text that the same parser reads back as an
 * equal version with the same text; comparison is antisymmetric.  (Not: that a lenient
 * version's text is strictly valid.  Masterminds takes a numeric prerelease identifier over
 * 64 bits, as text, where blang refuses it; both as upstream.) */
#include "fuzz_util.h"
#include "semver.h"

static int sign(int x) { return (x > 0) - (x < 0); }

/* Parses with `parse`; on success checks the format round trip and returns 1. */
static int parse_checked(int (*parse)(const char *, semver_version *, olm_error *), const char *s,
                         semver_version *v)
{
    olm_error err;
    if (parse(s, v, &err) < 0)
        return 0;
    char *text = semver_version_format(v);
    FUZZ_CHECK(text != NULL, "out of memory");
    semver_version back;
    FUZZ_CHECK(parse(text, &back, &err) == 0, "\"%s\" formats as \"%s\", which does not parse: %s", s, text,
               err.msg);
    FUZZ_CHECK(semver_compare(v, &back) == 0 && strcmp(v->build, back.build) == 0,
               "\"%s\" -> \"%s\" is not the same version", s, text);
    char *again = semver_version_format(&back);
    FUZZ_CHECK(again && strcmp(again, text) == 0, "\"%s\" formats as \"%s\", then \"%s\"", s, text, again);
    free(again);
    free(text);
    semver_version_free(&back);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *left = fuzz_cstr(data, size);
    if (!left)
        return 0;
    char *nl = strchr(left, '\n');
    const char *right = "1.0.0";
    if (nl) {
        *nl = '\0';
        right = nl + 1;
    }
    semver_version lv, rv, tmp;
    int have_l = parse_checked(semver_parse_strict, left, &lv);
    int have_r = parse_checked(semver_parse_lenient, right, &rv);
    if (parse_checked(semver_parse_lenient, left, &tmp))
        semver_version_free(&tmp);
    if (parse_checked(semver_parse_strict, right, &tmp))
        semver_version_free(&tmp);
    if (have_l && have_r)
        FUZZ_CHECK(sign(semver_compare(&lv, &rv)) == -sign(semver_compare(&rv, &lv)), "compare not antisymmetric");

    olm_error err;
    semver_constraint *c = semver_constraint_parse(left, &err);
    if (c) {
        if (have_r)
            (void)semver_constraint_check(c, &rv);
        semver_constraint_free(c);
    }
    semver_range *r = semver_range_parse(left, &err);
    if (r) {
        if (have_r)
            (void)semver_range_match(r, &rv);
        semver_range_free(r);
    }
    if (have_l)
        semver_version_free(&lv);
    if (have_r)
        semver_version_free(&rv);
    free(left);
    return 0;
}

/* Versions: strict parsing (blang Parse), lenient parsing (Masterminds NewVersion),
 * precedence and formatting.  Rules: shared/spec/semver.md §1-§3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semver.h"
#include "semver_internal.h"

bool semver_all_digits(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!semver_is_digit(s[i]))
            return false;
    return true;
}

bool semver_parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (!semver_all_digits(s, n))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Which dialect a prerelease/build identifier list is checked against. */
enum ident_rules {
    IDENT_PRE_STRICT,  /* blang: numeric ids without leading zero and within uint64 */
    IDENT_PRE_LENIENT, /* Masterminds: numeric ids without leading zero, any size */
    IDENT_BUILD,       /* both: any [0-9A-Za-z-]+ */
};

/* Validates a dot-separated identifier list [s, s+n).  `what` is "prerelease" or
 * "build metadata", used in the message together with the whole version `full`. */
static int check_identifiers(const char *full, const char *s, size_t n, enum ident_rules rules,
                             olm_error *err)
{
    const char *what = rules == IDENT_BUILD ? "build metadata" : "prerelease";
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        const char *id = s + start;
        size_t len = i - start;
        if (len == 0)
            return olm_error_set(err, "invalid version \"%s\": empty %s identifier", full, what);
        for (size_t k = 0; k < len; k++)
            if (!semver_is_ident_char(id[k]))
                return olm_error_set(err,
                                     "invalid version \"%s\": %s identifier \"%.*s\" contains "
                                     "'%c' (only [0-9A-Za-z-] allowed)",
                                     full, what, (int)len, id, id[k]);
        if (rules != IDENT_BUILD && semver_all_digits(id, len)) {
            if (len > 1 && id[0] == '0')
                return olm_error_set(err,
                                     "invalid version \"%s\": numeric prerelease identifier "
                                     "\"%.*s\" has a leading zero",
                                     full, (int)len, id);
            uint64_t ignored;
            if (rules == IDENT_PRE_STRICT && !semver_parse_u64(id, len, &ignored))
                return olm_error_set(err,
                                     "invalid version \"%s\": numeric prerelease identifier "
                                     "\"%.*s\" does not fit in 64 bits",
                                     full, (int)len, id);
        }
        start = i + 1;
    }
    return 0;
}

/* Fills `out` from parsed pieces; the strings are copied.  -1 on out of memory. */
static int build_version(semver_version *out, uint64_t parts[3], const char *pre, size_t pre_len,
                         const char *build, size_t build_len, olm_error *err)
{
    char *p = strndup(pre, pre_len);
    char *b = strndup(build, build_len);
    if (!p || !b) {
        free(p);
        free(b);
        return olm_error_set(err, "out of memory");
    }
    out->major = parts[0];
    out->minor = parts[1];
    out->patch = parts[2];
    out->prerelease = p;
    out->build = b;
    return 0;
}

int semver_parse_strict(const char *s, semver_version *out, olm_error *err)
{
    if (!s)
        return olm_error_set(err, "invalid version: no version given");
    if (*s == '\0')
        return olm_error_set(err, "invalid version \"\": empty string");
    size_t len = strlen(s);
    /* Build metadata starts at the first '+', the prerelease at the first '-' before it. */
    const char *plus = strchr(s, '+');
    size_t core_len = plus ? (size_t)(plus - s) : len;
    const char *dash = memchr(s, '-', core_len);
    size_t num_len = dash ? (size_t)(dash - s) : core_len;

    static const char *const names[3] = {"major", "minor", "patch"};
    uint64_t parts[3] = {0, 0, 0};
    size_t start = 0;
    int nparts = 0;
    for (size_t i = 0; i <= num_len; i++) {
        if (i < num_len && s[i] != '.')
            continue;
        if (nparts == 3)
            return olm_error_set(err,
                                 "invalid version \"%s\": expected MAJOR.MINOR.PATCH, found "
                                 "more than 3 numeric parts",
                                 s);
        const char *p = s + start;
        size_t plen = i - start;
        if (plen == 0)
            return olm_error_set(err, "invalid version \"%s\": %s number is empty", s,
                                 names[nparts]);
        if (!semver_all_digits(p, plen))
            return olm_error_set(err, "invalid version \"%s\": %s \"%.*s\" is not a number", s,
                                 names[nparts], (int)plen, p);
        if (plen > 1 && p[0] == '0')
            return olm_error_set(err, "invalid version \"%s\": %s \"%.*s\" has a leading zero", s,
                                 names[nparts], (int)plen, p);
        if (!semver_parse_u64(p, plen, &parts[nparts]))
            return olm_error_set(err, "invalid version \"%s\": %s \"%.*s\" does not fit in 64 bits",
                                 s, names[nparts], (int)plen, p);
        nparts++;
        start = i + 1;
    }
    if (nparts != 3)
        return olm_error_set(err,
                             "invalid version \"%s\": expected MAJOR.MINOR.PATCH, found %d "
                             "numeric part%s",
                             s, nparts, nparts == 1 ? "" : "s");

    const char *pre = dash ? dash + 1 : "";
    size_t pre_len = dash ? core_len - num_len - 1 : 0;
    const char *build = plus ? plus + 1 : "";
    size_t build_len = plus ? len - core_len - 1 : 0;
    if (dash && check_identifiers(s, pre, pre_len, IDENT_PRE_STRICT, err) < 0)
        return -1;
    if (plus && check_identifiers(s, build, build_len, IDENT_BUILD, err) < 0)
        return -1;
    return build_version(out, parts, pre, pre_len, build, build_len, err);
}

int semver_parse_lenient(const char *s, semver_version *out, olm_error *err)
{
    if (!s)
        return olm_error_set(err, "invalid version: no version given");
    if (*s == '\0')
        return olm_error_set(err, "invalid version \"\": empty string");
    static const char *const names[3] = {"major", "minor", "patch"};
    uint64_t parts[3] = {0, 0, 0};
    const char *p = s;
    if (*p == 'v')
        p++;
    for (int i = 0; i < 3; i++) {
        if (i > 0) {
            if (*p != '.')
                break; /* missing minor/patch default to 0 */
            p++;
        }
        size_t n = 0;
        while (semver_is_digit(p[n]))
            n++;
        if (n == 0) {
            if (*p == '\0')
                return olm_error_set(err, "invalid version \"%s\": %s number is missing", s,
                                     names[i]);
            return olm_error_set(err, "invalid version \"%s\": unexpected '%c' at offset %zu "
                                      "where the %s number should be",
                                 s, *p, (size_t)(p - s), names[i]);
        }
        if (!semver_parse_u64(p, n, &parts[i]))
            return olm_error_set(err, "invalid version \"%s\": %s \"%.*s\" does not fit in 64 bits",
                                 s, names[i], (int)n, p);
        p += n;
    }
    const char *pre = "", *build = "";
    size_t pre_len = 0, build_len = 0;
    if (*p == '-') {
        pre = p + 1;
        pre_len = strcspn(pre, "+");
        if (check_identifiers(s, pre, pre_len, IDENT_PRE_LENIENT, err) < 0)
            return -1;
        p = pre + pre_len;
    }
    if (*p == '+') {
        build = p + 1;
        build_len = strlen(build);
        if (check_identifiers(s, build, build_len, IDENT_BUILD, err) < 0)
            return -1;
        p = build + build_len;
    }
    if (*p != '\0') {
        if (*p == '.')
            return olm_error_set(err, "invalid version \"%s\": more than 3 numeric parts", s);
        return olm_error_set(err, "invalid version \"%s\": unexpected '%c' at offset %zu", s, *p,
                             (size_t)(p - s));
    }
    return build_version(out, parts, pre, pre_len, build, build_len, err);
}

void semver_version_free(semver_version *v)
{
    if (!v)
        return;
    free(v->prerelease);
    free(v->build);
    v->prerelease = NULL;
    v->build = NULL;
}

int semver_version_copy(semver_version *dst, const semver_version *src)
{
    char *p = strdup(src->prerelease ? src->prerelease : "");
    char *b = strdup(src->build ? src->build : "");
    if (!p || !b) {
        free(p);
        free(b);
        return -1;
    }
    dst->major = src->major;
    dst->minor = src->minor;
    dst->patch = src->patch;
    dst->prerelease = p;
    dst->build = b;
    return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

/* One prerelease identifier against another (§1 rule 3). */
static int compare_identifier(const char *a, size_t alen, const char *b, size_t blen)
{
    uint64_t na, nb;
    bool a_num = semver_parse_u64(a, alen, &na);
    bool b_num = semver_parse_u64(b, blen, &nb);
    if (a_num && b_num)
        return cmp_u64(na, nb);
    if (a_num)
        return -1;
    if (b_num)
        return 1;
    size_t n = alen < blen ? alen : blen;
    int c = memcmp(a, b, n);
    if (c != 0)
        return c < 0 ? -1 : 1;
    return cmp_u64(alen, blen);
}

/* Non-empty prerelease strings, dot-separated, compared identifier by identifier. */
static int compare_prerelease(const char *a, const char *b)
{
    for (;;) {
        size_t alen = strcspn(a, ".");
        size_t blen = strcspn(b, ".");
        int c = compare_identifier(a, alen, b, blen);
        if (c != 0)
            return c;
        bool a_more = a[alen] == '.', b_more = b[blen] == '.';
        if (!a_more || !b_more)
            return a_more ? 1 : b_more ? -1 : 0; /* the shorter list is lower */
        a += alen + 1;
        b += blen + 1;
    }
}

int semver_compare(const semver_version *a, const semver_version *b)
{
    int c = cmp_u64(a->major, b->major);
    if (!c)
        c = cmp_u64(a->minor, b->minor);
    if (!c)
        c = cmp_u64(a->patch, b->patch);
    if (c)
        return c;
    const char *pa = a->prerelease ? a->prerelease : "";
    const char *pb = b->prerelease ? b->prerelease : "";
    if (!*pa || !*pb)
        return *pa ? -1 : *pb ? 1 : 0; /* a release sorts above its prereleases */
    return compare_prerelease(pa, pb);
}

char *semver_version_format(const semver_version *v)
{
    const char *pre = v->prerelease ? v->prerelease : "";
    const char *build = v->build ? v->build : "";
    char *out = NULL;
    if (asprintf(&out, "%llu.%llu.%llu%s%s%s%s", (unsigned long long)v->major,
                 (unsigned long long)v->minor, (unsigned long long)v->patch, *pre ? "-" : "", pre,
                 *build ? "+" : "", build) < 0)
        return NULL;
    return out;
}

#include "resolve.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define RELEASE_MAX_LEN 20

/* One segment of a release: a semver pre-release identifier (non-empty,
 * [0-9A-Za-z-], and no leading zero when all digits). */
static int release_segment_valid(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    int digits_only = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int is_digit = c >= '0' && c <= '9';
        int is_alnum = is_digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
        if (!is_alnum)
            return 0;
        if (!is_digit)
            digits_only = 0;
    }
    return !(digits_only && n > 1 && s[0] == '0');
}

int bundle_release_valid(const char *release)
{
    size_t len = strlen(release);
    if (len == 0 || len > RELEASE_MAX_LEN)
        return 0;
    const char *seg = release;
    for (;;) {
        const char *dot = strchr(seg, '.');
        size_t n = dot ? (size_t)(dot - seg) : strlen(seg);
        if (!release_segment_valid(seg, n))
            return 0;
        if (!dot)
            return 1;
        seg = dot + 1;
    }
}

int bundle_version_parse(const char *text, bundle_version *out, olm_error *err)
{
    semver_version v;
    if (semver_parse_strict(text, &v, err) < 0)
        return -1;
    char *release;
    if (v.build[0] && bundle_release_valid(v.build)) {
        /* The build metadata is the release; it no longer counts as build. */
        release = v.build;
        v.build = strdup("");
        if (!v.build) {
            v.build = release;
            semver_version_free(&v);
            return olm_error_set(err, "out of memory");
        }
    } else {
        release = strdup("");
        if (!release) {
            semver_version_free(&v);
            return olm_error_set(err, "out of memory");
        }
    }
    out->version = v;
    out->release = release;
    return 0;
}

void bundle_version_free(bundle_version *bv)
{
    if (!bv)
        return;
    semver_version_free(&bv->version);
    free(bv->release);
    bv->release = NULL;
}

static int is_numeric(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return n > 0;
}

/* Compares numeric strings without leading zeros by length, then bytes. */
static int compare_numeric(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn)
        return an < bn ? -1 : 1;
    int c = memcmp(a, b, an);
    return (c > 0) - (c < 0);
}

static int compare_release(const char *a, const char *b)
{
    if (!a[0] || !b[0])
        return (a[0] != 0) - (b[0] != 0);
    for (;;) {
        const char *ad = strchr(a, '.'), *bd = strchr(b, '.');
        size_t an = ad ? (size_t)(ad - a) : strlen(a);
        size_t bn = bd ? (size_t)(bd - b) : strlen(b);
        int an_num = is_numeric(a, an), bn_num = is_numeric(b, bn);
        int c;
        if (an_num && bn_num) {
            c = compare_numeric(a, an, b, bn);
        } else if (an_num != bn_num) {
            c = an_num ? -1 : 1; /* numeric identifiers sort below alphanumeric ones */
        } else {
            size_t n = an < bn ? an : bn;
            c = memcmp(a, b, n);
            c = c ? (c > 0) - (c < 0) : (an > bn) - (an < bn);
        }
        if (c)
            return c;
        if (!ad || !bd)
            return (ad != NULL) - (bd != NULL); /* the shorter list is lower */
        a = ad + 1;
        b = bd + 1;
    }
}

int bundle_version_compare(const bundle_version *a, const bundle_version *b)
{
    int c = semver_compare(&a->version, &b->version);
    if (c)
        return c;
    return compare_release(a->release, b->release);
}

char *bundle_version_format(const bundle_version *bv)
{
    if (!bv->release[0])
        return semver_version_format(&bv->version);
    semver_version plain = bv->version;
    plain.build = "";
    char *base = semver_version_format(&plain);
    if (!base)
        return NULL;
    strbuf sb = STRBUF_INIT;
    if (strbuf_puts(&sb, base) < 0 || strbuf_putc(&sb, '+') < 0 || strbuf_puts(&sb, bv->release) < 0) {
        free(base);
        strbuf_free(&sb);
        return NULL;
    }
    free(base);
    return strbuf_detach(&sb);
}

int bundle_version_text_order(const char *a, const char *b)
{
    bundle_version va, vb;
    int ra = a ? bundle_version_parse(a, &va, NULL) : -1;
    int rb = b ? bundle_version_parse(b, &vb, NULL) : -1;
    int r = ra < 0 ? (rb < 0 ? 0 : 1) : rb < 0 ? -1 : -bundle_version_compare(&va, &vb);
    if (ra == 0)
        bundle_version_free(&va);
    if (rb == 0)
        bundle_version_free(&vb);
    return r;
}

/* upgradeable_version: the value of an olm.maxOpenShiftVersion property
 * (openshift-upgradeable.md §4): cluster-olm-operator's ToAllowedSemver, which
 * takes the raw JSON, accepts a number only as the literal text M.m, and hands a
 * string to blang/semver's ParseTolerant.  The error texts are blang's and Go's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"
#include "upgradeable_internal.h"

/* ^[1-9][0-9]*\.(0|[1-9][0-9]*)$ */
static bool number_is_major_minor(const char *s, size_t len)
{
    size_t i = 0;
    if (i >= len || s[i] < '1' || s[i] > '9')
        return false;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    if (i >= len || s[i] != '.')
        return false;
    i++;
    if (i < len && s[i] == '0')
        return i + 1 == len;
    if (i >= len || s[i] < '1' || s[i] > '9')
        return false;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    return i == len;
}

/* unicode.IsSpace for the rune at p (valid UTF-8 assumed); its size in *n. */
static bool space_at(const char *p, size_t len, size_t *n)
{
    uint32_t r = 0xFFFD; /* utf8.RuneError for an invalid byte, which is no space */
    if ((*n = gocompat_utf8_decode((const unsigned char *)p, len, &r)) == 0)
        *n = 1;
    return r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == ' ' || r == 0x85 ||
           r == 0xA0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 ||
           r == 0x202F || r == 0x205F || r == 0x3000;
}

/* Length of the last rune ending at p[len-1]. */
static size_t last_rune(const char *p, size_t len)
{
    size_t start = len - 1;
    while (start > 0 && len - start < 4 && ((unsigned char)p[start] & 0xC0) == 0x80)
        start--;
    uint32_t r;
    size_t n = gocompat_utf8_decode((const unsigned char *)p + start, len - start, &r);
    if (n > 0 && start + n == len)
        return n;
    return 1;
}

static bool all_digits(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* strconv.ParseUint(s, 10, 64) for an all-digit string. */
static int parse_uint(const char *s, size_t len, uint64_t *out, strbuf *msg)
{
    uint64_t v = 0;
    const char *why = len == 0 ? "invalid syntax" : NULL;
    for (size_t i = 0; !why && i < len; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            why = "value out of range";
        else
            v = v * 10 + d;
    }
    if (!why) {
        *out = v;
        return 0;
    }
    if (strbuf_puts(msg, "strconv.ParseUint: parsing ") < 0 || gocompat_quote(msg, s, len, 0) < 0 ||
        strbuf_printf(msg, ": %s", why) < 0)
        return -2;
    return -1;
}

/* One of blang Parse's number checks on a part of "major.minor.0". */
static int parse_part(const char *s, size_t len, const char *what, uint64_t *out, strbuf *msg)
{
    if (!all_digits(s, len)) {
        if (strbuf_printf(msg, "Invalid character(s) found in %s number ", what) < 0 ||
            gocompat_quote(msg, s, len, 0) < 0)
            return -2;
        return -1;
    }
    if (len > 1 && s[0] == '0') {
        char cap[16];
        snprintf(cap, sizeof cap, "%s", what);
        cap[0] = (char)(cap[0] - 'a' + 'A');
        if (strbuf_printf(msg, "%s number must not contain leading zeroes ", cap) < 0 ||
            gocompat_quote(msg, s, len, 0) < 0)
            return -2;
        return -1;
    }
    return parse_uint(s, len, out, msg);
}

/* ParseTolerant's leading-zero removal on one part; the result goes to `out`. */
static int strip_zeros(const char *s, size_t len, strbuf *out)
{
    if (len > 1) {
        while (len > 0 && s[0] == '0')
            s++, len--;
        if (len == 0 || s[0] < '0' || s[0] > '9')
            if (strbuf_putc(out, '0') < 0)
                return -2;
    }
    return strbuf_append(out, s, len) < 0 ? -2 : 0;
}

/* The string branch: the prefix/dot checks, then blang ParseTolerant. */
static int parse_string_version(const char *s, size_t len, upgradeable_minor *out, strbuf *msg)
{
    size_t dots = 0;
    for (size_t i = 0; i < len; i++)
        dots += s[i] == '.';
    if ((len > 0 && s[0] == 'v') || dots != 1)
        return strbuf_puts(msg, "invalid version format") < 0 ? -2 : -1;

    size_t n;
    while (len > 0 && space_at(s, len, &n))
        s += n, len -= n;
    while (len > 0 && space_at(s + len - last_rune(s, len), last_rune(s, len), &n))
        len -= n;
    if (len > 0 && s[0] == 'v')
        s++, len--;

    const char *dot = memchr(s, '.', len);
    size_t major_len = (size_t)(dot - s);
    strbuf major = STRBUF_INIT, minor = STRBUF_INIT;
    int rc = strip_zeros(s, major_len, &major);
    if (rc == 0)
        rc = strip_zeros(dot + 1, len - major_len - 1, &minor);
    if (rc == 0 && (memchr(strbuf_str(&minor), '+', minor.len) || memchr(strbuf_str(&minor), '-', minor.len)))
        rc = strbuf_puts(msg, "short version cannot contain PreRelease/Build meta data") < 0 ? -2 : -1;
    if (rc == 0)
        rc = parse_part(strbuf_str(&major), major.len, "major", &out->major, msg);
    if (rc == 0)
        rc = parse_part(strbuf_str(&minor), minor.len, "minor", &out->minor, msg);
    strbuf_free(&major);
    strbuf_free(&minor);
    return rc;
}

static const char *go_type_name(upgradeable_json_kind k)
{
    switch (k) {
    case UPG_J_BOOL: return "bool";
    case UPG_J_NULL: return "<nil>";
    case UPG_J_OBJECT: return "map[string]interface {}";
    case UPG_J_ARRAY: return "[]interface {}";
    default: return "?";
    }
}

int upgradeable_parse_max_version(const char *raw, size_t len, upgradeable_minor *out, strbuf *msg)
{
    if (!raw)
        raw = "", len = 0; /* a nil json.RawMessage: Unmarshal sees empty input */
    upgradeable_json_kind kind;
    char *str;
    size_t str_len;
    int rc = upgradeable_json_decode_any(raw, len, &kind, &str, &str_len, msg);
    if (rc < 0)
        return rc;
    if (kind == UPG_J_NUMBER) {
        if (!number_is_major_minor(raw, len)) {
            if (strbuf_puts(msg, "invalid semver format ") < 0 || gocompat_quote(msg, raw, len, 0) < 0 ||
                strbuf_puts(msg, ": expected <major>.<minor>") < 0)
                return -2;
            return -1;
        }
        return parse_string_version(raw, len, out, msg);
    }
    if (kind == UPG_J_STRING) {
        rc = parse_string_version(str, str_len, out, msg);
        free(str);
        return rc;
    }
    if (strbuf_printf(msg, "invalid type %s for olm.maxOpenshiftVersion: ", go_type_name(kind)) < 0 ||
        strbuf_append(msg, raw, len) < 0)
        return -2;
    return -1;
}

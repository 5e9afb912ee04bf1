/* gocompat_yaml_scalar: what an untagged plain YAML scalar means under the rules
 * the Kubernetes tooling uses (sigs.k8s.io/yaml on top of go-yaml v2, YAML
 * 1.1-ish).
 *
 * Hand-written because libyaml only tokenises: it leaves the meaning of `yes`,
 * `0x1F`, `1_000`, `.inf` or `2025-06-24` to the application, and the meaning
 * is observable (a normalised catalog, a kubeconfig's booleans, a bundle's
 * properties).  Go's resolver decides by the first byte:
 *  - a fixed table of spellings for booleans (y/yes/true/on and n/no/false/off in
 *    lower, Title and UPPER case), null (~, null, empty) and the float specials;
 *  - a leading digit or sign: integer (Go's ParseInt base 0 after removing every
 *    '_': 0x, 0o, 0b, a leading 0 for octal), then unsigned, then a decimal float;
 *  - a leading '.': a float such as .5;
 *  - anything else, and anything that fails the above, is a string.
 * Timestamps (2006-01-02...) stay strings: go-yaml v2 hands them to interface{}
 * as their original text, and nothing else in the table can parse them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"

static const struct {
    const char *text;
    gocompat_yaml_kind kind;
    double num;
    bool b;
} table[] = {
    {"y", GOCOMPAT_YAML_BOOL, 0, true},            {"Y", GOCOMPAT_YAML_BOOL, 0, true},
    {"yes", GOCOMPAT_YAML_BOOL, 0, true},          {"Yes", GOCOMPAT_YAML_BOOL, 0, true},
    {"YES", GOCOMPAT_YAML_BOOL, 0, true},          {"true", GOCOMPAT_YAML_BOOL, 0, true},
    {"True", GOCOMPAT_YAML_BOOL, 0, true},         {"TRUE", GOCOMPAT_YAML_BOOL, 0, true},
    {"on", GOCOMPAT_YAML_BOOL, 0, true},           {"On", GOCOMPAT_YAML_BOOL, 0, true},
    {"ON", GOCOMPAT_YAML_BOOL, 0, true},           {"n", GOCOMPAT_YAML_BOOL, 0, false},
    {"N", GOCOMPAT_YAML_BOOL, 0, false},           {"no", GOCOMPAT_YAML_BOOL, 0, false},
    {"No", GOCOMPAT_YAML_BOOL, 0, false},          {"NO", GOCOMPAT_YAML_BOOL, 0, false},
    {"false", GOCOMPAT_YAML_BOOL, 0, false},       {"False", GOCOMPAT_YAML_BOOL, 0, false},
    {"FALSE", GOCOMPAT_YAML_BOOL, 0, false},       {"off", GOCOMPAT_YAML_BOOL, 0, false},
    {"Off", GOCOMPAT_YAML_BOOL, 0, false},         {"OFF", GOCOMPAT_YAML_BOOL, 0, false},
    {"", GOCOMPAT_YAML_NULL, 0, false},            {"~", GOCOMPAT_YAML_NULL, 0, false},
    {"null", GOCOMPAT_YAML_NULL, 0, false},        {"Null", GOCOMPAT_YAML_NULL, 0, false},
    {"NULL", GOCOMPAT_YAML_NULL, 0, false},        {".nan", GOCOMPAT_YAML_FLOAT, NAN, false},
    {".NaN", GOCOMPAT_YAML_FLOAT, NAN, false},     {".NAN", GOCOMPAT_YAML_FLOAT, NAN, false},
    {".inf", GOCOMPAT_YAML_FLOAT, INFINITY, false}, {".Inf", GOCOMPAT_YAML_FLOAT, INFINITY, false},
    {".INF", GOCOMPAT_YAML_FLOAT, INFINITY, false}, {"+.inf", GOCOMPAT_YAML_FLOAT, INFINITY, false},
    {"+.Inf", GOCOMPAT_YAML_FLOAT, INFINITY, false}, {"+.INF", GOCOMPAT_YAML_FLOAT, INFINITY, false},
    {"-.inf", GOCOMPAT_YAML_FLOAT, -INFINITY, false}, {"-.Inf", GOCOMPAT_YAML_FLOAT, -INFINITY, false},
    {"-.INF", GOCOMPAT_YAML_FLOAT, -INFINITY, false}, {"<<", GOCOMPAT_YAML_MERGE, 0, false},
};

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 99;
}

/* Go's strconv.ParseUint(s, 0, 64) magnitude after an optional sign was removed.
 * Returns 0 ok, 1 syntax error, 2 out of range. */
static int parse_base0(const char *s, uint64_t *out)
{
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    else if (s[0] == '0' && s[1])
        base = 8, s += 1;
    if (!*s)
        return 1;
    uint64_t v = 0;
    bool range = false;
    for (; *s; s++) {
        int d = digit_value(*s);
        if (d >= (int)base)
            return 1;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            range = true;
        else
            v = v * base + (uint64_t)d;
    }
    if (range)
        return 2;
    *out = v;
    return 0;
}

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (*s == '.') {
        s++;
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
    } else {
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
        if (*s == '.') {
            s++;
            while (is_digit(*s))
                s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
    }
    return *s == '\0';
}

/* ParseFloat for a string the float grammar accepted; an overflow to infinity is
 * an error in Go (and the scalar stays a string). */
static bool parse_float(const char *s, double *out)
{
    char *end;
    double d = strtod(s, &end);
    if (*end || isinf(d))
        return false;
    *out = d;
    return true;
}

int gocompat_yaml_resolve_plain(const char *v, size_t len, gocompat_yaml_scalar *out)
{
    memset(out, 0, sizeof *out);
    out->kind = GOCOMPAT_YAML_STRING;
    /* Most of a catalog's keys and values can only be strings: the table's spellings are
     * at most 5 bytes, and a number starts with a digit, sign or '.'.  Those return here
     * before the scans below (strlen, strcmp per table entry: ~3% of a catalog decode). */
    char c = v[0];
    bool maybe_number = is_digit(c) || c == '-' || c == '+' || c == '.';
    bool maybe_table = len <= 5 && (len == 0 || (c != '\0' && strchr("yYnNtTfFoO~.+-<", c) != NULL));
    if (!maybe_number && !maybe_table)
        return 0;
    if (strlen(v) != len) /* an embedded NUL can only be a string */
        return 0;
    if (maybe_table) {
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
            /* The first byte settles most entries without a call: keys such as "name" and
             * "type" came here for ~40 strcmp calls each (~1% of a catalog decode). */
            if (table[i].text[0] == c && strcmp(table[i].text, v) == 0) {
                out->kind = table[i].kind;
                out->b = table[i].b;
                out->f = table[i].num;
                return 0;
            }
        }
    }
    if (c == '.') {
        /* ParseFloat of the raw text; the table handled the specials. */
        double d;
        if (yaml_style_float(v) && parse_float(v, &d)) {
            out->kind = GOCOMPAT_YAML_FLOAT;
            out->f = d;
        }
        return 0;
    }
    if (!is_digit(c) && c != '-' && c != '+')
        return 0;

    char *plain = malloc(len + 1);
    if (!plain)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (v[i] != '_')
            plain[n++] = v[i];
    plain[n] = '\0';

    const char *mag = plain;
    char sign = 0;
    if (*mag == '-' || *mag == '+')
        sign = *mag++;
    uint64_t u = 0;
    int rc = *mag ? parse_base0(mag, &u) : 1;
    if (rc == 0 && sign == '-' && u <= (uint64_t)INT64_MAX + 1) {
        out->kind = GOCOMPAT_YAML_INT;
        out->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    } else if (rc == 0 && sign != '-' && u <= (uint64_t)INT64_MAX) {
        out->kind = GOCOMPAT_YAML_INT;
        out->i = (int64_t)u;
    } else if (rc == 0 && sign == 0) {
        out->kind = GOCOMPAT_YAML_UINT; /* ParseUint takes no sign */
        out->u = u;
    } else {
        double d;
        if (yaml_style_float(plain) && parse_float(plain, &d)) {
            out->kind = GOCOMPAT_YAML_FLOAT;
            out->f = d;
        }
    }
    free(plain);
    return 0;
}

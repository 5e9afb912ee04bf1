/* blang/semver v4 ranges (channel-entry skipRange), quirks included on purpose:
 * published catalogs were written against them (shared/spec/semver.md §6-§7).
 *
 * Pipeline, as in blang: tokenize -> split on "||" -> wildcard text substitution
 * -> comparator parsing.  The only deliberate difference: an empty middle
 * alternative (`a || || b`) evaluates to false instead of panicking. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "semver.h"
#include "semver_internal.h"

enum bl_op { BL_EQ, BL_NE, BL_GT, BL_GE, BL_LT, BL_LE };

struct bl_cmp {
    enum bl_op op;
    semver_version v; /* owned */
};

/* One alternative: comparators ANDed.  n == 0 is the empty alternative. */
struct bl_alt {
    struct bl_cmp *cmps; /* owned */
    size_t n, cap;
};

struct semver_range {
    struct bl_alt *alts; /* owned */
    size_t n;
};

/* A list of owned strings. */
struct str_list {
    char **items;
    size_t n, cap;
};

static void str_list_free(struct str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

/* Takes ownership of s (freed on failure).  -1 on out of memory. */
static int str_list_push(struct str_list *l, char *s)
{
    if (!s)
        return -1;
    if (OLM_ARRAY_RESERVE(l->items, l->cap, l->n + 1) < 0) {
        free(s);
        return -1;
    }
    l->items[l->n++] = s;
    return 0;
}

/* Copy of [s, s+n) with every ' ' removed. */
static char *copy_without_spaces(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ')
            out[o++] = s[i];
    out[o] = '\0';
    return out;
}

/* §6.1: a ' ' ends a token unless the last non-space character was '>', '<' or '='.
 * Tokens shorter than 2 bytes (counted before spaces are removed) are dropped. */
static int tokenize(const char *s, struct str_list *out)
{
    size_t len = strlen(s), last = 0;
    char last_char = '\0';
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ' && last_char != '>' && last_char != '<' && last_char != '=') {
            if (last + 1 < i && str_list_push(out, copy_without_spaces(s + last, i - last)) < 0)
                return -1;
            last = i + 1;
        } else if (s[i] != ' ') {
            last_char = s[i];
        }
    }
    if (last + 1 < len && str_list_push(out, copy_without_spaces(s + last, len - last)) < 0)
        return -1;
    return 0;
}

/* Byte length of the Unicode white space character (Go unicode.IsSpace) at p, or 0. */
static size_t space_len(const unsigned char *p, size_t n)
{
    if (n >= 1 && (p[0] == ' ' || (p[0] >= '\t' && p[0] <= '\r')))
        return 1;
    if (n >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0))
        return 2;
    if (n >= 3 && p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80) /* U+1680 */
        return 3;
    if (n >= 3 && p[0] == 0xE2 && p[1] == 0x80 &&
        (p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF)) /* U+2000-200A, 2028, 2029, 202F */
        return 3;
    if (n >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F) /* U+205F */
        return 3;
    if (n >= 3 && p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) /* U+3000 */
        return 3;
    return 0;
}

/* A token split at its first digit: operator text (trimmed like Go strings.TrimSpace)
 * and the version text.  Borrowed pointers into the token. */
struct op_version {
    const char *op;
    size_t op_len;
    const char *ver;
};

static bool split_comparator(const char *tok, struct op_version *out)
{
    const char *d = tok;
    while (*d && !semver_is_digit(*d))
        d++;
    if (!*d)
        return false;
    const unsigned char *b = (const unsigned char *)tok, *e = (const unsigned char *)d;
    size_t k;
    while (b < e && (k = space_len(b, (size_t)(e - b))) > 0)
        b += k;
    for (;;) { /* trailing spaces: try each start position of a space ending at e */
        bool trimmed = false;
        for (size_t w = 1; w <= 3 && (size_t)(e - b) >= w; w++) {
            if (space_len(e - w, w) == w) {
                e -= w;
                trimmed = true;
                break;
            }
        }
        if (!trimmed)
            break;
    }
    out->op = (const char *)b;
    out->op_len = (size_t)(e - b);
    out->ver = d;
    return true;
}

static bool op_is(const struct op_version *ov, const char *text)
{
    return ov->op_len == strlen(text) && memcmp(ov->op, text, ov->op_len) == 0;
}

/* Replaces the first occurrence of `from` in s by `to`; returns a new string. */
static char *replace_first(const char *s, const char *from, const char *to)
{
    const char *hit = strstr(s, from);
    if (!hit)
        return strdup(s);
    char *out = NULL;
    if (asprintf(&out, "%.*s%s%s", (int)(hit - s), s, to, hit + strlen(from)) < 0)
        return NULL;
    return out;
}

static size_t count_dot_parts(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == '.';
    return n;
}

enum wildcard_kind { WILD_NONE, WILD_MINOR, WILD_PATCH };

/* The kind depends only on the last dot-part being exactly "x" (§6.3). */
static enum wildcard_kind wildcard_kind_of(const char *ver)
{
    const char *last_dot = strrchr(ver, '.');
    const char *last = last_dot ? last_dot + 1 : ver;
    if (strcmp(last, "x") != 0)
        return WILD_NONE;
    size_t parts = count_dot_parts(ver);
    return parts == 2 ? WILD_MINOR : parts == 3 ? WILD_PATCH : WILD_NONE;
}

/* ".x.x" -> ".x", then ".x" -> ".0", then ".0" appended when two parts remain. */
static char *flatten_wildcard(const char *ver)
{
    char *a = replace_first(ver, ".x.x", ".x");
    if (!a)
        return NULL;
    char *b = replace_first(a, ".x", ".0");
    free(a);
    if (!b || count_dot_parts(b) != 2)
        return b;
    char *c = NULL;
    if (asprintf(&c, "%s.0", b) < 0)
        c = NULL;
    free(b);
    return c;
}

/* Go strconv.Atoi on 64 bits: optional sign, decimal digits, int64 range. */
static bool go_atoi(const char *s, size_t n, int64_t *out)
{
    bool neg = false;
    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        s++;
        n--;
    }
    uint64_t mag;
    if (!semver_parse_u64(s, n, &mag))
        return false;
    if (mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return false;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
}

/* Adds 1 to dot-part `idx` of a flattened version.  Returns a new string, "" when
 * that part is not a number (as blang, which ignores the error), NULL on OOM. */
static char *bump_part(const char *flat, size_t idx)
{
    const char *start = flat;
    for (size_t k = 0; k < idx; k++) {
        start = strchr(start, '.');
        if (!start)
            return strdup("");
        start++;
    }
    size_t n = strcspn(start, ".");
    int64_t value;
    if (!go_atoi(start, n, &value) || value == INT64_MAX)
        return strdup(""); /* INT64_MAX+1 wraps in Go and fails Parse anyway */
    char *out = NULL;
    if (asprintf(&out, "%.*s%lld%s", (int)(start - flat), flat, (long long)(value + 1),
                 start + n) < 0)
        return NULL;
    return out;
}

/* Pushes "<op><ver>" to out. */
static int push_joined(struct str_list *out, const char *op, const char *ver)
{
    char *s = NULL;
    if (asprintf(&s, "%s%s", op, ver) < 0)
        return -1;
    return str_list_push(out, s);
}

/* §6.3: rewrites a token containing 'x' into one or two comparator strings. */
static int expand_wildcard(const char *full, const char *tok, struct str_list *out, olm_error *err)
{
    struct op_version ov;
    if (!split_comparator(tok, &ov))
        return olm_error_set(err, "invalid range \"%s\": token \"%s\" has no version", full, tok);
    enum wildcard_kind kind = wildcard_kind_of(ov.ver);
    char *flat = flatten_wildcard(ov.ver);
    if (!flat)
        return olm_error_set(err, "out of memory");

    const char *result_op = "";
    bool bump = false;
    int rc = 0;
    if (op_is(&ov, ">")) {
        result_op = ">=";
        bump = true;
    } else if (op_is(&ov, ">=")) {
        result_op = ">=";
    } else if (op_is(&ov, "<")) {
        result_op = "<";
    } else if (op_is(&ov, "<=")) {
        result_op = "<";
        bump = true;
    } else if (op_is(&ov, "") || op_is(&ov, "=") || op_is(&ov, "==")) {
        rc = push_joined(out, ">=", flat);
        result_op = "<";
        bump = true;
    } else if (op_is(&ov, "!=") || op_is(&ov, "!")) {
        /* "<flat" AND ">=bump" can never both hold: blang's `!=1.x` matches nothing. */
        rc = push_joined(out, "<", flat);
        result_op = ">=";
        bump = true;
    } /* any other operator (~, ^, =>, ...) is dropped: exact match on the flat version */

    char *result_ver = NULL;
    if (rc == 0) {
        if (!bump)
            result_ver = strdup(flat);
        else if (kind == WILD_PATCH)
            result_ver = bump_part(flat, 1);
        else if (kind == WILD_MINOR)
            result_ver = bump_part(flat, 0);
        else
            result_ver = strdup(""); /* leaves a bare operator: an error later */
        rc = result_ver ? push_joined(out, result_op, result_ver) : -1;
    }
    free(result_ver);
    free(flat);
    if (rc < 0)
        return olm_error_set(err, "out of memory");
    return 0;
}

static int alt_add(struct bl_alt *a, enum bl_op op, semver_version *v)
{
    if (OLM_ARRAY_RESERVE(a->cmps, a->cap, a->n + 1) < 0)
        return -1;
    a->cmps[a->n].op = op;
    a->cmps[a->n].v = *v; /* the alternative now owns v's strings */
    a->n++;
    return 0;
}

/* §6.4: one comparator string ("op" + strict version) appended to a. */
static int parse_comparator(const char *full, const char *cmp, const char *orig_tok,
                            struct bl_alt *a, olm_error *err)
{
    struct op_version ov;
    if (!split_comparator(cmp, &ov)) {
        if (strcmp(cmp, orig_tok) == 0)
            return olm_error_set(err, "invalid range \"%s\": token \"%s\" has no version", full,
                                 cmp);
        return olm_error_set(err,
                             "invalid range \"%s\": wildcard \"%s\" expands to \"%s\", which has "
                             "no version",
                             full, orig_tok, cmp);
    }
    enum bl_op op;
    if (op_is(&ov, "") || op_is(&ov, "=") || op_is(&ov, "=="))
        op = BL_EQ;
    else if (op_is(&ov, "!") || op_is(&ov, "!="))
        op = BL_NE;
    else if (op_is(&ov, ">"))
        op = BL_GT;
    else if (op_is(&ov, ">="))
        op = BL_GE;
    else if (op_is(&ov, "<"))
        op = BL_LT;
    else if (op_is(&ov, "<="))
        op = BL_LE;
    else
        return olm_error_set(err, "invalid range \"%s\": unknown operator \"%.*s\" in \"%s\"",
                             full, (int)ov.op_len, ov.op, orig_tok);
    semver_version v;
    olm_error inner;
    if (semver_parse_strict(ov.ver, &v, &inner) < 0)
        return olm_error_set(err, "invalid range \"%s\": in \"%s\": %s", full, orig_tok, inner.msg);
    if (alt_add(a, op, &v) < 0) {
        semver_version_free(&v);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

/* Parses the tokens of one alternative [tok, tok+n) into a. */
static int parse_alternative(const char *full, char **tok, size_t n, struct bl_alt *a,
                             olm_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!strchr(tok[i], 'x')) {
            if (parse_comparator(full, tok[i], tok[i], a, err) < 0)
                return -1;
            continue;
        }
        struct str_list expanded = {0};
        int rc = expand_wildcard(full, tok[i], &expanded, err);
        for (size_t k = 0; rc == 0 && k < expanded.n; k++)
            rc = parse_comparator(full, expanded.items[k], tok[i], a, err);
        str_list_free(&expanded);
        if (rc < 0)
            return -1;
    }
    return 0;
}

semver_range *semver_range_parse(const char *s, olm_error *err)
{
    const char *full = s ? s : "";
    struct str_list toks = {0};
    semver_range *r = NULL;
    if (tokenize(full, &toks) < 0) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    if (toks.n == 0) {
        olm_error_set(err, "invalid range \"%s\": no comparators (one-character tokens are "
                           "ignored)", full);
        goto done;
    }
    if (strcmp(toks.items[0], "||") == 0) {
        olm_error_set(err, "invalid range \"%s\": starts with \"||\"", full);
        goto done;
    }
    if (strcmp(toks.items[toks.n - 1], "||") == 0) {
        olm_error_set(err, "invalid range \"%s\": ends with \"||\"", full);
        goto done;
    }
    size_t nalts = 1;
    for (size_t i = 0; i < toks.n; i++)
        nalts += strcmp(toks.items[i], "||") == 0;
    r = calloc(1, sizeof *r);
    if (r)
        r->alts = calloc(nalts, sizeof *r->alts);
    if (!r || !r->alts) {
        free(r);
        r = NULL;
        olm_error_set(err, "out of memory");
        goto done;
    }
    r->n = nalts;
    size_t alt = 0, first = 0;
    for (size_t i = 0; i <= toks.n; i++) {
        if (i < toks.n && strcmp(toks.items[i], "||") != 0)
            continue;
        if (parse_alternative(full, toks.items + first, i - first, &r->alts[alt], err) < 0) {
            semver_range_free(r);
            r = NULL;
            goto done;
        }
        alt++;
        first = i + 1;
    }
done:
    str_list_free(&toks);
    return r;
}

void semver_range_free(semver_range *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        for (size_t k = 0; k < r->alts[i].n; k++)
            semver_version_free(&r->alts[i].cmps[k].v);
        free(r->alts[i].cmps);
    }
    free(r->alts);
    free(r);
}

static bool cmp_holds(const struct bl_cmp *c, const semver_version *v)
{
    int d = semver_compare(v, &c->v);
    switch (c->op) {
    case BL_EQ: return d == 0;
    case BL_NE: return d != 0;
    case BL_GT: return d > 0;
    case BL_GE: return d >= 0;
    case BL_LT: return d < 0;
    case BL_LE: return d <= 0;
    }
    return false;
}

/* No prerelease gate in blang (§7): plain precedence. */
bool semver_range_match(const semver_range *r, const semver_version *v)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct bl_alt *a = &r->alts[i];
        if (a->n == 0)
            continue; /* empty alternative: false (blang would panic here) */
        bool all = true;
        for (size_t k = 0; k < a->n && all; k++)
            all = cmp_holds(&a->cmps[k], v);
        if (all)
            return true;
    }
    return false;
}

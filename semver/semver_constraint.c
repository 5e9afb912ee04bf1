/* Masterminds/semver v3 constraints: NewConstraint grammar and Check semantics
 * (shared/spec/semver.md §4-§5).  Hand-written parser; no regular expressions, so the
 * error messages can point at the offending token. */
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "semver.h"
#include "semver_internal.h"

enum mm_op { MM_EQ, MM_NE, MM_GT, MM_LT, MM_GE, MM_LE, MM_TILDE, MM_CARET };

struct mm_item {
    enum mm_op op;
    semver_version con; /* owned; wildcard/missing parts set to 0 */
    bool dirty;         /* some part is a wildcard or missing */
    bool minor_dirty;   /* the first wildcard/missing part is the minor */
    bool patch_dirty;   /* the first wildcard/missing part is the patch */
};

/* One `||` alternative: items ANDed together. */
struct mm_group {
    struct mm_item *items; /* owned */
    size_t n, cap;
    bool has_pre; /* some item has a prerelease: prerelease versions may pass (§5.1) */
};

struct semver_constraint {
    struct mm_group *groups; /* owned */
    size_t n;
};

/* Operators, longest first so that `>=` wins over `>`. */
static const struct {
    const char *text;
    enum mm_op op;
} mm_ops[] = {
    {"!=", MM_NE}, {">=", MM_GE}, {"=>", MM_GE}, {"<=", MM_LE},    {"=<", MM_LE},  {"~>", MM_TILDE},
    {">", MM_GT},  {"<", MM_LT},  {"=", MM_EQ},  {"~", MM_TILDE}, {"^", MM_CARET},
};

/* Parsing context: the whole input (for messages) and the error sink. */
struct mm_parser {
    const char *full;
    olm_error *err;
};

static int mm_fail(struct mm_parser *ps, const char *what, const char *tok, size_t tok_len)
{
    return olm_error_set(ps->err, "improper constraint \"%s\": %s \"%.*s\"", ps->full, what,
                         (int)tok_len, tok);
}

static bool is_part_char(char c)
{
    /* Masterminds' version-part character class; `|` included, it only ever
     * appears in parts that are ignored or rejected later. */
    return semver_is_digit(c) || c == 'x' || c == 'X' || c == '*' || c == '|';
}

static bool is_wildcard_part(const char *p, size_t n)
{
    return n == 1 && (p[0] == 'x' || p[0] == 'X' || p[0] == '*');
}

/* Parses a version token (§4 rule 5) into `item` (all but op). */
static int parse_constraint_version(struct mm_parser *ps, const char *tok, size_t len,
                                    struct mm_item *item)
{
    size_t i = 0;
    if (i < len && tok[i] == 'v')
        i++;
    const char *part[3] = {NULL, NULL, NULL};
    size_t part_len[3] = {0, 0, 0};
    int nparts = 0;
    while (nparts < 3) {
        size_t start = i;
        while (i < len && is_part_char(tok[i]))
            i++;
        if (i == start)
            return mm_fail(ps, "expected a number or wildcard in version", tok, len);
        part[nparts] = tok + start;
        part_len[nparts] = i - start;
        nparts++;
        if (nparts < 3 && i < len && tok[i] == '.')
            i++;
        else
            break;
    }
    const char *tail = tok + i; /* "-pre+build", "+build" or "" */
    size_t tail_len = len - i;
    if (tail_len > 0 && tail[0] != '-' && tail[0] != '+')
        return mm_fail(ps, tail[0] == '.' ? "too many parts in version" : "unexpected text in version",
                       tok, len);

    /* The first wildcard or missing part decides the kind; later parts are ignored. */
    int first_wild = 3;
    for (int k = 0; k < 3; k++) {
        if (k >= nparts || is_wildcard_part(part[k], part_len[k])) {
            first_wild = k;
            break;
        }
    }
    item->dirty = first_wild < 3;
    item->minor_dirty = first_wild == 1;
    item->patch_dirty = first_wild == 2;

    /* Rebuild "M.m.p<tail>" and let the lenient parser check numbers, overflow,
     * prerelease and build. */
    size_t cap = part_len[0] + part_len[1] + part_len[2] + tail_len + 8;
    char *text = malloc(cap);
    if (!text)
        return olm_error_set(ps->err, "out of memory");
    size_t o = 0;
    for (int k = 0; k < 3; k++) {
        if (k > 0)
            text[o++] = '.';
        if (k < first_wild) {
            memcpy(text + o, part[k], part_len[k]);
            o += part_len[k];
        } else {
            text[o++] = '0';
        }
    }
    memcpy(text + o, tail, tail_len);
    text[o + tail_len] = '\0';
    olm_error inner;
    int rc = semver_parse_lenient(text, &item->con, &inner);
    free(text);
    if (rc < 0)
        return olm_error_set(ps->err, "improper constraint \"%s\": version \"%.*s\": %s", ps->full,
                             (int)len, tok, inner.msg);
    return 0;
}

static int group_add(struct mm_parser *ps, struct mm_group *g, struct mm_item *item)
{
    if (OLM_ARRAY_RESERVE(g->items, g->cap, g->n + 1) < 0) {
        semver_version_free(&item->con);
        return olm_error_set(ps->err, "out of memory");
    }
    if (item->con.prerelease[0] != '\0')
        g->has_pre = true;
    g->items[g->n++] = *item; /* the group now owns item->con */
    return 0;
}

static size_t skip_ws(const char *s, size_t i, size_t len)
{
    while (i < len && semver_is_go_space(s[i]))
        i++;
    return i;
}

/* A version token runs to the next whitespace or comma. */
static size_t token_end(const char *s, size_t i, size_t len)
{
    while (i < len && !semver_is_go_space(s[i]) && s[i] != ',')
        i++;
    return i;
}

static bool starts_like_operator(char c)
{
    return c == '!' || c == '=' || c == '<' || c == '>' || c == '~' || c == '^' || c == '&' ||
           c == ';';
}

/* Parses one `OP VERSION` item starting at *pos (no leading whitespace), or a hyphen
 * range `A - B`, appending to g.  Advances *pos past the item. */
static int parse_item(struct mm_parser *ps, const char *s, size_t len, size_t *pos,
                      struct mm_group *g)
{
    size_t i = *pos;
    enum mm_op op = MM_EQ;
    bool has_op = false;
    for (size_t k = 0; k < sizeof mm_ops / sizeof mm_ops[0]; k++) {
        size_t n = strlen(mm_ops[k].text);
        if (len - i >= n && memcmp(s + i, mm_ops[k].text, n) == 0) {
            op = mm_ops[k].op;
            has_op = true;
            i += n;
            break;
        }
    }
    size_t op_start = *pos;
    i = skip_ws(s, i, len);
    size_t vstart = i, vend = token_end(s, i, len);
    if (vend == vstart) {
        if (has_op)
            return mm_fail(ps, "missing version after operator", s + op_start, i - op_start);
        return mm_fail(ps, "expected a version at", s + op_start, token_end(s, op_start, len) - op_start);
    }
    if (s[vstart] == '-' && vend - vstart == 1)
        return mm_fail(ps,
                       "stray hyphen (a hyphen range is \"A - B\" with bare versions, not "
                       "chained) at",
                       s + op_start, len - op_start);
    if (starts_like_operator(s[vstart]))
        return mm_fail(ps, "unknown operator in", s + op_start, vend - op_start);

    struct mm_item item = {.op = op};
    if (parse_constraint_version(ps, s + vstart, vend - vstart, &item) < 0)
        return -1;

    /* Hyphen range: a bare version, whitespace, "-", whitespace, a bare version. */
    size_t h = skip_ws(s, vend, len);
    if (!has_op && h > vend && h + 1 < len && s[h] == '-' && semver_is_go_space(s[h + 1])) {
        size_t bstart = skip_ws(s, h + 1, len);
        size_t bend = token_end(s, bstart, len);
        if (bend == bstart) {
            semver_version_free(&item.con);
            return mm_fail(ps, "hyphen range is missing its upper bound in", s + op_start,
                           bstart - op_start);
        }
        struct mm_item upper = {.op = MM_LE};
        if (parse_constraint_version(ps, s + bstart, bend - bstart, &upper) < 0) {
            semver_version_free(&item.con);
            return -1;
        }
        item.op = MM_GE;
        if (group_add(ps, g, &item) < 0) {
            semver_version_free(&upper.con);
            return -1;
        }
        if (group_add(ps, g, &upper) < 0)
            return -1;
        *pos = bend;
        return 0;
    }
    if (group_add(ps, g, &item) < 0)
        return -1;
    *pos = vend;
    return 0;
}

/* Parses one `||` alternative [s, s+len) into g. */
static int parse_alternative(struct mm_parser *ps, const char *s, size_t len, struct mm_group *g)
{
    size_t i = skip_ws(s, 0, len);
    if (i == len)
        return olm_error_set(ps->err, "improper constraint \"%s\": empty alternative around \"||\"",
                             ps->full);
    for (;;) {
        if (s[i] == ',')
            return mm_fail(ps, "unexpected comma at", s + i, len - i);
        if (parse_item(ps, s, len, &i, g) < 0)
            return -1;
        size_t k = skip_ws(s, i, len);
        if (k == len)
            return 0;
        bool had_ws = k > i;
        if (s[k] == ',') {
            k = skip_ws(s, k + 1, len);
            if (k == len)
                return mm_fail(ps, "trailing comma in", s, len);
        } else if (!had_ws) {
            return mm_fail(ps, "expected whitespace or comma before", s + k, len - k);
        }
        i = k;
    }
}

semver_constraint *semver_constraint_parse(const char *s, olm_error *err)
{
    struct mm_parser ps = {.full = s ? s : "", .err = err};
    if (!s || s[skip_ws(s, 0, strlen(s))] == '\0') {
        olm_error_set(err, "improper constraint \"%s\": empty constraint", ps.full);
        return NULL;
    }
    size_t ngroups = 1;
    for (const char *p = strstr(s, "||"); p; p = strstr(p + 2, "||"))
        ngroups++;
    semver_constraint *c = calloc(1, sizeof *c);
    if (c)
        c->groups = calloc(ngroups, sizeof *c->groups);
    if (!c || !c->groups) {
        free(c);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    const char *alt = s;
    for (size_t gi = 0; gi < ngroups; gi++) {
        const char *bar = strstr(alt, "||");
        size_t alen = bar ? (size_t)(bar - alt) : strlen(alt);
        c->n = gi + 1; /* so that free releases this group on failure */
        if (parse_alternative(&ps, alt, alen, &c->groups[gi]) < 0) {
            semver_constraint_free(c);
            return NULL;
        }
        alt = bar ? bar + 2 : alt + alen;
    }
    return c;
}

void semver_constraint_free(semver_constraint *c)
{
    if (!c)
        return;
    for (size_t gi = 0; gi < c->n; gi++) {
        for (size_t k = 0; k < c->groups[gi].n; k++)
            semver_version_free(&c->groups[gi].items[k].con);
        free(c->groups[gi].items);
    }
    free(c->groups);
    free(c);
}

/* ---- check (§5.2) ---- */

static bool check_tilde(const semver_version *v, const struct mm_item *it)
{
    const semver_version *con = &it->con;
    if (semver_compare(v, con) < 0)
        return false;
    /* ~0.0.0, ~*, *, x: any version (that passed the prerelease gate). */
    if (con->major == 0 && con->minor == 0 && con->patch == 0 && !it->minor_dirty &&
        !it->patch_dirty)
        return true;
    if (v->major != con->major)
        return false;
    return v->minor == con->minor || it->minor_dirty;
}

static bool check_not_equal(const semver_version *v, const struct mm_item *it)
{
    const semver_version *con = &it->con;
    if (it->dirty) {
        if (con->major != v->major)
            return true;
        if (con->minor != v->minor && !it->minor_dirty)
            return true;
        if (it->minor_dirty)
            return false;
        if (con->patch != v->patch && !it->patch_dirty)
            return true;
        if (it->patch_dirty) {
            if (v->prerelease[0] || con->prerelease[0])
                return strcmp(v->prerelease, con->prerelease) != 0;
            return false;
        }
        /* major wildcard only: falls through to plain inequality (`!=*` is `!=0.0.0`) */
    }
    return semver_compare(v, con) != 0;
}

static bool check_greater(const semver_version *v, const struct mm_item *it)
{
    const semver_version *con = &it->con;
    if (!it->dirty || (!it->minor_dirty && !it->patch_dirty))
        return semver_compare(v, con) > 0;
    if (v->major != con->major)
        return v->major > con->major;
    if (it->minor_dirty)
        return false; /* `>1` needs 2.0.0 or more */
    return v->minor > con->minor; /* `>1.2` needs 1.3.0 or more */
}

static bool check_less_equal(const semver_version *v, const struct mm_item *it)
{
    const semver_version *con = &it->con;
    if (!it->dirty)
        return semver_compare(v, con) <= 0;
    if (v->major > con->major)
        return false;
    if (v->major == con->major && v->minor > con->minor && !it->minor_dirty)
        return false; /* also makes `<=*` mean `<0.1.0`, as upstream does */
    return true;
}

static bool check_caret(const semver_version *v, const struct mm_item *it)
{
    const semver_version *con = &it->con;
    if (semver_compare(v, con) < 0)
        return false;
    if (con->major > 0 || it->minor_dirty)
        return v->major == con->major;
    if (v->major > 0)
        return false;
    if (con->minor > 0 || it->patch_dirty)
        return v->minor == con->minor;
    if (v->minor > 0)
        return false;
    /* ^0.0.z exactly (and `^*`/`^x`, which only set the major flag: 0.0.0 only) */
    return v->patch == con->patch;
}

static bool check_item(const semver_version *v, const struct mm_item *it)
{
    switch (it->op) {
    case MM_EQ:
        return it->dirty ? check_tilde(v, it) : semver_compare(v, &it->con) == 0;
    case MM_NE:
        return check_not_equal(v, it);
    case MM_GT:
        return check_greater(v, it);
    case MM_LT:
        return semver_compare(v, &it->con) < 0;
    case MM_GE:
        return semver_compare(v, &it->con) >= 0;
    case MM_LE:
        return check_less_equal(v, it);
    case MM_TILDE:
        return check_tilde(v, it);
    case MM_CARET:
        return check_caret(v, it);
    }
    return false;
}

bool semver_constraint_check(const semver_constraint *c, const semver_version *v)
{
    bool v_is_pre = v->prerelease && v->prerelease[0];
    semver_version view = *v; /* NULL strings read as "" below */
    if (!view.prerelease)
        view.prerelease = "";
    for (size_t gi = 0; gi < c->n; gi++) {
        const struct mm_group *g = &c->groups[gi];
        /* Prerelease gate, decided per AND group (§5.1). */
        if (v_is_pre && !g->has_pre)
            continue;
        bool all = true;
        for (size_t k = 0; k < g->n && all; k++)
            all = check_item(&view, &g->items[k]);
        if (all)
            return true;
    }
    return false;
}

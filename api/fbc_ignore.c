/* fbc_ignore: `.indexignore` patterns with gitignore semantics.
 *
 * Each pattern belongs to the directory ("domain") of the .indexignore it came
 * from and only applies to paths under it.  Patterns are checked newest first and
 * the first one that matches decides (so a later `!pattern` re-includes, and a
 * deeper directory's file overrides its parents'), the way go-git's matcher that
 * opm uses behaves.  A pattern that matches a directory ignores everything in it;
 * paths are always files here, so `dir/`-only patterns match ancestors only. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "fbc_internal.h"

typedef struct ign_pattern {
    char *domain;   /* owned: directory of the .indexignore, "" for the root */
    char **comps;   /* owned: pattern split at '/' */
    size_t ncomps;
    bool negate;    /* leading '!' */
    bool dir_only;  /* trailing '/' */
    bool anchored;  /* contains '/' (other than trailing): relative to domain */
} ign_pattern;

struct fbc_ignore {
    ign_pattern *pats;
    size_t n, cap;
};

fbc_ignore *fbc_ignore_new(void) { return calloc(1, sizeof(fbc_ignore)); }

static void pattern_free(ign_pattern *p)
{
    free(p->domain);
    for (size_t i = 0; i < p->ncomps; i++)
        free(p->comps[i]);
    free(p->comps);
}

void fbc_ignore_free(fbc_ignore *ig)
{
    if (!ig)
        return;
    for (size_t i = 0; i < ig->n; i++)
        pattern_free(&ig->pats[i]);
    free(ig->pats);
    free(ig);
}

/* Splits `s` (length n) at '/' into owned components; empty components (from "//")
 * are dropped. */
static int split_components(const char *s, size_t n, char ***out, size_t *nout)
{
    size_t cap = 1;
    for (size_t i = 0; i < n; i++)
        cap += s[i] == '/';
    char **v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        if (i > start) {
            v[k] = strndup(s + start, i - start);
            if (!v[k]) {
                for (size_t j = 0; j < k; j++)
                    free(v[j]);
                free(v);
                return -1;
            }
            k++;
        }
        start = i + 1;
    }
    *out = v;
    *nout = k;
    return 0;
}

/* Parses one line; returns 0 (added or nothing to add) or -1 on out of memory. */
static int add_line(fbc_ignore *ig, const char *domain, const char *line, size_t len)
{
    if (len && line[len - 1] == '\r')
        len--;
    /* Trailing spaces are dropped unless escaped with a backslash. */
    while (len && line[len - 1] == ' ' && !(len >= 2 && line[len - 2] == '\\'))
        len--;
    if (len == 0 || line[0] == '#')
        return 0;
    ign_pattern p = {0};
    if (line[0] == '!') {
        p.negate = true;
        line++, len--;
    } else if (line[0] == '\\' && len > 1 && (line[1] == '#' || line[1] == '!')) {
        line++, len--; /* "\#foo" and "\!foo" are literal names */
    }
    if (len && line[len - 1] == '/') {
        p.dir_only = true;
        len--;
    }
    if (len == 0)
        return 0;
    p.anchored = memchr(line, '/', len) != NULL;
    if (split_components(line, len, &p.comps, &p.ncomps) < 0)
        return -1;
    if (p.ncomps == 0) { /* a pattern of only slashes matches nothing */
        free(p.comps);
        return 0;
    }
    p.domain = strdup(domain);
    if (!p.domain) {
        pattern_free(&p);
        return -1;
    }
    if (OLM_ARRAY_RESERVE(ig->pats, ig->cap, ig->n + 1) < 0) {
        pattern_free(&p);
        return -1;
    }
    ig->pats[ig->n++] = p;
    return 0;
}

int fbc_ignore_add(fbc_ignore *ig, const char *domain, const char *text, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n')
            continue;
        if (add_line(ig, domain, text + start, i - start) < 0)
            return -1;
        start = i + 1;
    }
    return 0;
}

/* Does the anchored pattern p match path components pp[0..np)?  Reaching the end of the
 * pattern with path left over means it matched an ancestor directory of the file, which
 * ignores the file too.
 *
 * m(pi, ri) = "pattern components pi.. match path components ri..":
 *   m(end, ri)  = ri < np || !dir_only
 *   "**" last   = ri < np                     (everything inside)
 *   "**"        = m(pi+1, k) for some k >= ri (zero or more directories)
 *   otherwise   = ri < np && fnmatch(p[pi], pp[ri]) && m(pi+1, ri+1)
 * computed one pattern component at a time from the end, in two rows of np+1: at most
 * ncomps * np fnmatch calls.  (Trying every split recursively was C(np, k) calls for k
 * "**" components: "**" x8 against a 60-deep path never finished.)
 * Returns 1, 0, or -1 when out of memory. */
static int match_anchored(const ign_pattern *p, char **pp, size_t np)
{
    bool *rows = malloc(2 * (np + 1) * sizeof *rows);
    if (!rows)
        return -1;
    bool *next = rows, *cur = rows + np + 1; /* m(pi+1, .) and m(pi, .) */
    for (size_t ri = 0; ri <= np; ri++)
        next[ri] = ri < np || !p->dir_only;
    for (size_t pi = p->ncomps; pi-- > 0;) {
        if (strcmp(p->comps[pi], "**") == 0) {
            bool any = false;
            for (size_t ri = np + 1; ri-- > 0;) {
                any = any || next[ri];
                cur[ri] = pi + 1 == p->ncomps ? ri < np : any;
            }
        } else {
            for (size_t ri = 0; ri <= np; ri++)
                cur[ri] = ri < np && next[ri + 1] && fnmatch(p->comps[pi], pp[ri], 0) == 0;
        }
        bool *t = next;
        next = cur;
        cur = t;
    }
    int matched = next[0];
    free(rows);
    return matched;
}

/* 1 when p matches, 0 when not, -1 when out of memory. */
static int pattern_matches(const ign_pattern *p, char **comps, size_t ncomps)
{
    /* Skip the domain's own components; the path must be inside the domain. */
    size_t d = 0;
    if (p->domain[0]) {
        const char *s = p->domain;
        while (*s) {
            const char *slash = strchr(s, '/');
            size_t l = slash ? (size_t)(slash - s) : strlen(s);
            if (d >= ncomps || strlen(comps[d]) != l || strncmp(comps[d], s, l) != 0)
                return 0;
            d++;
            s += l + (slash ? 1 : 0);
        }
        if (d >= ncomps)
            return 0;
    }
    if (p->anchored)
        return match_anchored(p, comps + d, ncomps - d);
    /* A name pattern matches any component; the last one is the file itself,
     * which a directory-only pattern cannot match. */
    for (size_t i = d; i < ncomps; i++) {
        if (fnmatch(p->comps[0], comps[i], 0) != 0)
            continue;
        if (p->dir_only && i == ncomps - 1)
            return 0;
        return 1;
    }
    return 0;
}

int fbc_ignore_match(const fbc_ignore *ig, const char *path)
{
    if (!ig || ig->n == 0)
        return 0;
    char **comps;
    size_t ncomps;
    if (split_components(path, strlen(path), &comps, &ncomps) < 0)
        return -1;
    int ignored = 0;
    for (size_t i = ig->n; i-- > 0;) {
        int m = pattern_matches(&ig->pats[i], comps, ncomps);
        if (m) {
            ignored = m < 0 ? -1 : ig->pats[i].negate ? 0 : 1;
            break;
        }
    }
    for (size_t i = 0; i < ncomps; i++)
        free(comps[i]);
    free(comps);
    return ignored;
}

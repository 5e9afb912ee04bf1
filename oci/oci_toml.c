/* TOML → jansson (see oci_toml.h for what is read and why it is hand-written).
 *
 * A recursive-descent reader over the whole text.  Every error names the line it met;
 * nesting of arrays and inline tables is bounded so hostile input cannot exhaust the
 * stack.  Tables defined twice and keys set twice are errors, as the TOML spec says. */
#include "oci_toml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_KEY_PARTS 32

typedef struct parser {
    const char *p, *end;
    unsigned line;
    olm_error *err;
    bool failed;
    json_t *defined; /* set of "[table]" paths defined explicitly: {path: true} */
} parser;

__attribute__((format(printf, 2, 3))) static int fail(parser *ps, const char *fmt, ...)
{
    if (!ps->failed) {
        char why[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        olm_error_set(ps->err, "line %u: %s", ps->line, why);
        ps->failed = true;
    }
    return -1;
}

static bool at_end(const parser *ps) { return ps->p >= ps->end; }
static char peek(const parser *ps) { return at_end(ps) ? '\0' : *ps->p; }
static char peek_at(const parser *ps, size_t k) { return ps->p + k < ps->end ? ps->p[k] : '\0'; }

static void skip_ws(parser *ps)
{
    while (!at_end(ps) && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

static void skip_comment(parser *ps)
{
    if (peek(ps) == '#')
        while (!at_end(ps) && *ps->p != '\n')
            ps->p++;
}

static bool at_newline(const parser *ps)
{
    return peek(ps) == '\n' || (peek(ps) == '\r' && peek_at(ps, 1) == '\n');
}

static void eat_newline(parser *ps)
{
    if (peek(ps) == '\r')
        ps->p++;
    if (peek(ps) == '\n') {
        ps->p++;
        ps->line++;
    }
}

/* Whitespace, comments and newlines (inside arrays). */
static void skip_blank(parser *ps)
{
    for (;;) {
        skip_ws(ps);
        skip_comment(ps);
        if (!at_newline(ps))
            return;
        eat_newline(ps);
    }
}

/* After a key/value or a header: only a comment may follow on the line. */
static int end_of_line(parser *ps)
{
    skip_ws(ps);
    skip_comment(ps);
    if (at_end(ps))
        return 0;
    if (!at_newline(ps))
        return fail(ps, "unexpected '%s' after the value (one key = value a line)",
                    (char[]){peek(ps), 0});
    eat_newline(ps);
    return 0;
}

/* ---------------------------------------------------------------- strings */

typedef struct buf {
    char *s;
    size_t len, cap;
} buf;

static int buf_put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t)
            return -1;
        b->s = t;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static int put_utf8(buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_put(b, u, n);
}

static int escape(parser *ps, buf *b)
{
    char c = peek(ps);
    ps->p++;
    const char *simple = NULL;
    switch (c) {
    case 'b': simple = "\b"; break;
    case 't': simple = "\t"; break;
    case 'n': simple = "\n"; break;
    case 'f': simple = "\f"; break;
    case 'r': simple = "\r"; break;
    case 'e': simple = "\x1b"; break;
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    case 'u':
    case 'U': {
        int digits = c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (int i = 0; i < digits; i++) {
            char h = peek(ps);
            int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (v < 0)
                return fail(ps, "\\%s escape needs hex digits", c == 'u' ? "u" : "U");
            cp = cp * 16 + (uint32_t)v;
            ps->p++;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0)
            return fail(ps, "escape is not a Unicode scalar value (or is NUL)");
        return put_utf8(b, cp) == 0 ? 0 : fail(ps, "out of memory");
    }
    default:
        return fail(ps, "unknown escape \\%s in a string", (char[]){c ? c : '?', 0});
    }
    return buf_put(b, simple, 1) == 0 ? 0 : fail(ps, "out of memory");
}

/* A string at ps->p (which is at a quote).  Returns the text (caller frees) or NULL. */
static char *parse_string(parser *ps, size_t *len_out)
{
    char q = peek(ps);
    bool literal = q == '\'';
    bool multi = peek_at(ps, 1) == q && peek_at(ps, 2) == q;
    buf b = {0};
    ps->p += multi ? 3 : 1;
    if (multi && at_newline(ps))
        eat_newline(ps); /* a newline right after the opening quotes is trimmed */
    if (buf_put(&b, "", 0) != 0)
        goto oom;
    for (;;) {
        if (at_end(ps)) {
            fail(ps, "unterminated string");
            goto bad;
        }
        char c = *ps->p;
        if (c == q && (!multi || (peek_at(ps, 1) == q && peek_at(ps, 2) == q))) {
            if (multi) {
                ps->p += 3;
                /* up to two quotes may close the content: """a"""" is a" */
                for (int extra = 0; extra < 2 && peek(ps) == q; extra++, ps->p++)
                    if (buf_put(&b, &q, 1) != 0)
                        goto oom;
            } else {
                ps->p++;
            }
            break;
        }
        if (c == '\n' || c == '\r') {
            if (!multi) {
                fail(ps, "newline in a single-line string");
                goto bad;
            }
            if (c == '\r' && peek_at(ps, 1) != '\n') {
                fail(ps, "bare carriage return in a string");
                goto bad;
            }
            eat_newline(ps);
            if (buf_put(&b, "\n", 1) != 0)
                goto oom;
            continue;
        }
        if (c == '\\' && !literal) {
            ps->p++;
            if (multi && (peek(ps) == ' ' || peek(ps) == '\t' || at_newline(ps))) {
                /* line-ending backslash: drop the newline and the whitespace after it */
                const char *save = ps->p;
                skip_ws(ps);
                if (!at_newline(ps)) {
                    ps->p = save;
                    fail(ps, "a backslash in a multi-line string must end the line");
                    goto bad;
                }
                while (!at_end(ps) && (*ps->p == ' ' || *ps->p == '\t' || at_newline(ps))) {
                    if (at_newline(ps))
                        eat_newline(ps);
                    else
                        ps->p++;
                }
                continue;
            }
            if (escape(ps, &b) != 0)
                goto bad;
            continue;
        }
        if (c == '\0' || ((unsigned char)c < 0x20 && c != '\t') || c == 0x7f) {
            fail(ps, "control character in a string");
            goto bad;
        }
        if (buf_put(&b, &c, 1) != 0)
            goto oom;
        ps->p++;
    }
    *len_out = b.len;
    return b.s;
oom:
    fail(ps, "out of memory");
bad:
    free(b.s);
    return NULL;
}

/* ---------------------------------------------------------------- keys */

static bool bare_key_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

typedef struct key {
    char *part[MAX_KEY_PARTS];
    size_t n;
} key;

static void key_free(key *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->part[i]);
    k->n = 0;
}

static int parse_key_parts(parser *ps, key *k);

/* A key, plain or dotted; on error nothing is left allocated in k. */
static int parse_key(parser *ps, key *k)
{
    k->n = 0;
    if (parse_key_parts(ps, k) == 0)
        return 0;
    key_free(k);
    return -1;
}

static int parse_key_parts(parser *ps, key *k)
{
    for (;;) {
        skip_ws(ps);
        if (k->n == MAX_KEY_PARTS)
            return fail(ps, "key has too many dotted parts");
        char *part = NULL;
        char c = peek(ps);
        if (c == '"' || c == '\'') {
            if (peek_at(ps, 1) == c && peek_at(ps, 2) == c)
                return fail(ps, "a key cannot be a multi-line string");
            size_t len;
            part = parse_string(ps, &len);
            if (!part)
                return -1;
            if (strlen(part) != len) {
                free(part);
                return fail(ps, "NUL in a key");
            }
        } else {
            const char *s = ps->p;
            while (!at_end(ps) && bare_key_char(*ps->p))
                ps->p++;
            if (ps->p == s)
                return fail(ps, "expected a key, found %s", at_end(ps)              ? "the end of the file"
                                                            : (c == '\n' || c == '\r') ? "the end of the line"
                                                                                       : (char[]){'\'', c, '\'', 0});
            part = strndup(s, (size_t)(ps->p - s));
            if (!part)
                return fail(ps, "out of memory");
        }
        k->part[k->n++] = part;
        skip_ws(ps);
        if (peek(ps) != '.')
            return 0;
        ps->p++;
    }
}

/* ---------------------------------------------------------------- values */

static json_t *parse_value(parser *ps, int depth);

static json_t *parse_array(parser *ps, int depth)
{
    ps->p++; /* '[' */
    json_t *arr = json_array();
    if (!arr) {
        fail(ps, "out of memory");
        return NULL;
    }
    for (;;) {
        skip_blank(ps);
        if (peek(ps) == ']') {
            ps->p++;
            return arr;
        }
        json_t *v = parse_value(ps, depth + 1);
        if (!v || json_array_append_new(arr, v) != 0)
            goto bad;
        skip_blank(ps);
        if (peek(ps) == ',') {
            ps->p++;
            continue;
        }
        if (peek(ps) == ']') {
            ps->p++;
            return arr;
        }
        fail(ps, "expected ',' or ']' in an array");
        goto bad;
    }
bad:
    if (!ps->failed)
        fail(ps, "out of memory");
    json_decref(arr);
    return NULL;
}

static int set_dotted(parser *ps, json_t *table, key *k, json_t *value /* taken */);

static json_t *parse_inline_table(parser *ps, int depth)
{
    ps->p++; /* '{' */
    json_t *obj = json_object();
    if (!obj) {
        fail(ps, "out of memory");
        return NULL;
    }
    skip_ws(ps);
    if (peek(ps) == '}') {
        ps->p++;
        return obj;
    }
    for (;;) {
        key k;
        skip_ws(ps);
        if (at_newline(ps) || at_end(ps)) {
            fail(ps, "an inline table { ... } must fit on one line");
            goto bad;
        }
        if (parse_key(ps, &k) != 0)
            goto bad;
        skip_ws(ps);
        if (peek(ps) != '=') {
            key_free(&k);
            fail(ps, "expected '=' after a key in an inline table");
            goto bad;
        }
        ps->p++;
        skip_ws(ps);
        json_t *v = parse_value(ps, depth + 1);
        int rc = v ? set_dotted(ps, obj, &k, v) : -1;
        key_free(&k);
        if (rc != 0)
            goto bad;
        skip_ws(ps);
        if (peek(ps) == ',') {
            ps->p++;
            continue;
        }
        if (peek(ps) == '}') {
            ps->p++;
            return obj;
        }
        fail(ps, "expected ',' or '}' in an inline table (which must fit on one line)");
        goto bad;
    }
bad:
    json_decref(obj);
    return NULL;
}

static json_t *parse_number_or_word(parser *ps)
{
    const char *s = ps->p;
    while (!at_end(ps) && (bare_key_char(*ps->p) || *ps->p == '+' || *ps->p == '.' || *ps->p == ':'))
        ps->p++;
    size_t n = (size_t)(ps->p - s);
    char tok[128];
    if (n == 0 || n >= sizeof tok)
        return fail(ps, "expected a value (string, number, true/false, array or table)"), NULL;
    memcpy(tok, s, n);
    tok[n] = '\0';
    if ((tok[0] >= 'a' && tok[0] <= 'z') || (tok[0] >= 'A' && tok[0] <= 'Z')) {
        if (strcmp(tok, "true") && strcmp(tok, "false") && strcmp(tok, "inf") && strcmp(tok, "nan"))
            return fail(ps, "\"%s\" is not a value: strings need quotes, booleans are true or false", tok), NULL;
    }
    if (strcmp(tok, "true") == 0)
        return json_true();
    if (strcmp(tok, "false") == 0)
        return json_false();
    if (strcmp(tok, "inf") == 0 || strcmp(tok, "+inf") == 0 || strcmp(tok, "-inf") == 0 ||
        strcmp(tok, "nan") == 0 || strcmp(tok, "+nan") == 0 || strcmp(tok, "-nan") == 0)
        return fail(ps, "inf and nan are not supported here"), NULL;
    if (n >= 10 && tok[4] == '-' && tok[0] >= '0' && tok[0] <= '9')
        return fail(ps, "dates and times are not supported here (\"%s\")", tok), NULL;
    if (strchr(tok, ':'))
        return fail(ps, "dates and times are not supported here (\"%s\")", tok), NULL;
    /* digits with single underscores between them */
    char clean[128];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (tok[i] == '_') {
            bool ok = i > 0 && i + 1 < n && bare_key_char(tok[i - 1]) && tok[i - 1] != '_' &&
                      bare_key_char(tok[i + 1]) && tok[i + 1] != '_';
            if (!ok)
                return fail(ps, "misplaced '_' in the number \"%s\"", tok), NULL;
            continue;
        }
        clean[m++] = tok[i];
    }
    clean[m] = '\0';
    const char *d = clean + (clean[0] == '+' || clean[0] == '-');
    int base = 10;
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'o' || d[1] == 'b')) {
        if (d != clean)
            return fail(ps, "a sign is not allowed on \"%s\"", tok), NULL;
        base = d[1] == 'x' ? 16 : d[1] == 'o' ? 8 : 2;
        d += 2;
    }
    bool is_float = base == 10 && (strpbrk(d, ".eE") != NULL);
    if (!*d)
        return fail(ps, "\"%s\" is not a number", tok), NULL;
    if (base == 10 && d[0] == '0' && d[1] && d[1] != '.' && d[1] != 'e' && d[1] != 'E')
        return fail(ps, "leading zeros are not allowed in \"%s\"", tok), NULL;
    char *stop = NULL;
    errno = 0;
    if (is_float) {
        double v = strtod(clean, &stop);
        if (*stop || errno == ERANGE || !isfinite(v) || strchr(clean, 'x') || strchr(clean, 'X') ||
            clean[m - 1] == '.' || strstr(clean, ".e") || strstr(clean, ".E") || d[0] == '.')
            return fail(ps, "\"%s\" is not a number", tok), NULL;
        return json_real(v);
    }
    long long v = strtoll(base == 10 ? clean : d, &stop, base);
    if (*stop || errno == ERANGE || (base != 10 && (d[0] == '+' || d[0] == '-')))
        return fail(ps, "\"%s\" is not a number (or is out of range)", tok), NULL;
    return json_integer((json_int_t)v);
}

static json_t *parse_value(parser *ps, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(ps, "arrays or tables nested too deeply"), NULL;
    char c = peek(ps);
    json_t *v = NULL;
    if (c == '"' || c == '\'') {
        size_t len;
        char *s = parse_string(ps, &len);
        if (!s)
            return NULL;
        v = json_stringn(s, len);
        free(s);
        if (!v)
            fail(ps, "string is not valid UTF-8");
        return v;
    }
    if (c == '[')
        return parse_array(ps, depth);
    if (c == '{')
        return parse_inline_table(ps, depth);
    if (at_end(ps) || at_newline(ps) || c == '#')
        return fail(ps, "a key needs a value after '='"), NULL;
    v = parse_number_or_word(ps);
    if (!v && !ps->failed)
        fail(ps, "out of memory");
    return v;
}

/* ---------------------------------------------------------------- tables */

/* The object under `k` (all parts but the last when `all` is false), created as needed.
 * An array of tables on the way stands for its last element. */
static json_t *walk(parser *ps, json_t *table, key *k, size_t nparts)
{
    json_t *cur = table;
    for (size_t i = 0; i < nparts; i++) {
        json_t *next = json_object_get(cur, k->part[i]);
        if (!next) {
            next = json_object();
            if (!next || json_object_set_new(cur, k->part[i], next) != 0) {
                fail(ps, "out of memory");
                return NULL;
            }
        } else if (json_is_array(next)) {
            size_t n = json_array_size(next);
            next = n ? json_array_get(next, n - 1) : NULL;
            if (!json_is_object(next)) {
                fail(ps, "\"%s\" is an array of values, not of tables", k->part[i]);
                return NULL;
            }
        } else if (!json_is_object(next)) {
            fail(ps, "\"%s\" already has a value that is not a table", k->part[i]);
            return NULL;
        }
        cur = next;
    }
    return cur;
}

static int set_dotted(parser *ps, json_t *table, key *k, json_t *value)
{
    json_t *parent = walk(ps, table, k, k->n - 1);
    const char *last = k->part[k->n - 1];
    if (!parent) {
        json_decref(value);
        return -1;
    }
    if (json_object_get(parent, last)) {
        json_decref(value);
        return fail(ps, "key \"%s\" is defined twice", last);
    }
    if (json_object_set_new(parent, last, value) != 0)
        return fail(ps, "out of memory");
    return 0;
}

/* "[a.b]" or "[[a.b]]" at the start of a line: the table that key/values go into next. */
static json_t *parse_header(parser *ps, json_t *root)
{
    bool array = peek_at(ps, 1) == '[';
    ps->p += array ? 2 : 1;
    key k;
    if (parse_key(ps, &k) != 0)
        return NULL;
    json_t *out = NULL;
    skip_ws(ps);
    if (peek(ps) != ']' || (array && peek_at(ps, 1) != ']')) {
        fail(ps, array ? "expected ']]' to close the table header" : "expected ']' to close the table header");
        goto done;
    }
    ps->p += array ? 2 : 1;
    json_t *parent = walk(ps, root, &k, k.n - 1);
    if (!parent)
        goto done;
    const char *last = k.part[k.n - 1];
    json_t *cur = json_object_get(parent, last);
    if (array) {
        if (!cur) {
            cur = json_array();
            if (!cur || json_object_set_new(parent, last, cur) != 0) {
                fail(ps, "out of memory");
                goto done;
            }
        } else if (!json_is_array(cur)) {
            fail(ps, "[[%s]]: that key is already a table or a value", last);
            goto done;
        }
        out = json_object();
        if (!out || json_array_append_new(cur, out) != 0) {
            out = NULL;
            fail(ps, "out of memory");
        }
        goto done;
    }
    /* a plain table may be defined once; its path names it in `defined` */
    char path[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < k.n && used < sizeof path; i++)
        used += (size_t)snprintf(path + used, sizeof path - used, "%s\x1f", k.part[i]);
    if (!cur) {
        cur = json_object();
        if (!cur || json_object_set_new(parent, last, cur) != 0) {
            fail(ps, "out of memory");
            goto done;
        }
    } else if (!json_is_object(cur) || json_object_get(ps->defined, path)) {
        fail(ps, "table [%s] is defined twice (or the key already has a value)", last);
        goto done;
    }
    json_object_set_new(ps->defined, path, json_true());
    out = cur;
done:
    key_free(&k);
    return out;
}

json_t *oci_toml_parse(const char *text, size_t len, olm_error *err)
{
    if (memchr(text, '\0', len)) {
        olm_error_set(err, "the file contains a NUL byte: not TOML text");
        return NULL;
    }
    parser ps = {.p = text, .end = text + len, .line = 1, .err = err};
    json_t *root = json_object();
    ps.defined = json_object();
    if (!root || !ps.defined) {
        olm_error_set(err, "out of memory");
        goto bad;
    }
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3; /* a UTF-8 byte order mark */
    json_t *table = root;
    while (!at_end(&ps)) {
        skip_blank(&ps);
        if (at_end(&ps))
            break;
        if (peek(&ps) == '[') {
            if (!(table = parse_header(&ps, root)) || end_of_line(&ps) != 0)
                goto bad;
            continue;
        }
        key k;
        if (parse_key(&ps, &k) != 0)
            goto bad;
        skip_ws(&ps);
        if (peek(&ps) != '=') {
            key_free(&k);
            fail(&ps, "expected '=' after the key");
            goto bad;
        }
        ps.p++;
        skip_ws(&ps);
        json_t *v = parse_value(&ps, 0);
        int rc = v ? set_dotted(&ps, table, &k, v) : -1;
        key_free(&k);
        if (rc != 0 || end_of_line(&ps) != 0)
            goto bad;
    }
    json_decref(ps.defined);
    return root;
bad:
    json_decref(ps.defined);
    json_decref(root);
    return NULL;
}

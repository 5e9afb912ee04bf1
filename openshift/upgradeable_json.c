/* upgradeable_json: the parts of Go's encoding/json that the upgrade check
 * reports errors from.  jansson cannot be used here: it turns the number 4.10
 * into the double 4.1 (the spec keeps the raw text, so 4.10 is 4.10), and its
 * error texts are not Go's, which end up verbatim in the condition message.
 *
 * Validation mirrors Go's scanner (scanner.go): the first byte the state machine
 * rejects is reported as "invalid character <c> <context>", a truncated input as
 * "unexpected end of JSON input".  Decoding then runs over text known to be
 * valid, so it never needs to report syntax errors itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upgradeable_internal.h"

#define GO_MAX_DEPTH 10000

typedef struct scan {
    const unsigned char *s;
    size_t len, pos;
    int depth;
    strbuf *msg;
    int oom;
} scan;

static int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static void skip_ws(scan *sc)
{
    while (sc->pos < sc->len && is_ws(sc->s[sc->pos]))
        sc->pos++;
}

/* Go's quoteChar: the byte as a rune in single quotes. */
static int quote_char(strbuf *sb, unsigned char c)
{
    if (c == '\'')
        return strbuf_puts(sb, "'\\''");
    if (c == '"')
        return strbuf_puts(sb, "'\"'");
    /* string(byte) in Go is the rune U+00XX, UTF-8 encoded. */
    char rune[2];
    size_t n = 1;
    rune[0] = (char)c;
    if (c >= 0x80) {
        rune[0] = (char)(0xC0 | (c >> 6));
        rune[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    }
    strbuf q = STRBUF_INIT;
    int rc = upgradeable_go_quote(&q, rune, n);
    if (rc == 0) {
        rc = strbuf_putc(sb, '\'');
        if (rc == 0)
            rc = strbuf_append(sb, q.data + 1, q.len - 2);
        if (rc == 0)
            rc = strbuf_putc(sb, '\'');
    }
    strbuf_free(&q);
    return rc;
}

static int fail_char(scan *sc, const char *context)
{
    strbuf_reset(sc->msg);
    if (sc->pos >= sc->len)
        return strbuf_puts(sc->msg, "unexpected end of JSON input") < 0 ? (sc->oom = 1, -1) : -1;
    if (strbuf_puts(sc->msg, "invalid character ") < 0 || quote_char(sc->msg, sc->s[sc->pos]) < 0 ||
        strbuf_printf(sc->msg, " %s", context) < 0)
        sc->oom = 1;
    return -1;
}

static int peek(scan *sc) { return sc->pos < sc->len ? sc->s[sc->pos] : -1; }

static int scan_value(scan *sc);

static int scan_string(scan *sc)
{
    sc->pos++; /* the opening quote */
    for (;;) {
        if (sc->pos >= sc->len)
            return fail_char(sc, "");
        unsigned char c = sc->s[sc->pos];
        if (c == '"') {
            sc->pos++;
            return 0;
        }
        if (c == '\\') {
            sc->pos++;
            int e = peek(sc);
            if (e < 0)
                return fail_char(sc, "");
            if (e == 'u') {
                sc->pos++;
                for (int i = 0; i < 4; i++, sc->pos++)
                    if (sc->pos >= sc->len || !is_hex(sc->s[sc->pos]))
                        return fail_char(sc, "in \\u hexadecimal character escape");
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0)
                return fail_char(sc, "in string escape code");
            sc->pos++;
            continue;
        }
        if (c < 0x20)
            return fail_char(sc, "in string literal");
        sc->pos++;
    }
}

static int scan_number(scan *sc)
{
    if (peek(sc) == '-') {
        sc->pos++;
        if (peek(sc) < 0 || !is_digit((unsigned char)peek(sc)))
            return fail_char(sc, "in numeric literal");
    }
    if (peek(sc) == '0')
        sc->pos++;
    else
        while (peek(sc) >= 0 && is_digit((unsigned char)peek(sc)))
            sc->pos++;
    if (peek(sc) == '.') {
        sc->pos++;
        if (peek(sc) < 0 || !is_digit((unsigned char)peek(sc)))
            return fail_char(sc, "after decimal point in numeric literal");
        while (peek(sc) >= 0 && is_digit((unsigned char)peek(sc)))
            sc->pos++;
    }
    if (peek(sc) == 'e' || peek(sc) == 'E') {
        sc->pos++;
        if (peek(sc) == '+' || peek(sc) == '-')
            sc->pos++;
        if (peek(sc) < 0 || !is_digit((unsigned char)peek(sc)))
            return fail_char(sc, "in exponent of numeric literal");
        while (peek(sc) >= 0 && is_digit((unsigned char)peek(sc)))
            sc->pos++;
    }
    return 0;
}

static int scan_literal(scan *sc, const char *word)
{
    sc->pos++;
    for (size_t i = 1; word[i]; i++, sc->pos++) {
        if (peek(sc) != word[i]) {
            char ctx[64];
            snprintf(ctx, sizeof ctx, "in literal %s (expecting '%c')", word, word[i]);
            return fail_char(sc, ctx);
        }
    }
    return 0;
}

static int scan_object(scan *sc)
{
    if (++sc->depth > GO_MAX_DEPTH)
        return fail_char(sc, "exceeded max depth");
    sc->pos++;
    skip_ws(sc);
    if (peek(sc) == '}') {
        sc->pos++;
        sc->depth--;
        return 0;
    }
    for (;;) {
        if (peek(sc) != '"')
            return fail_char(sc, "looking for beginning of object key string");
        if (scan_string(sc) < 0)
            return -1;
        skip_ws(sc);
        if (peek(sc) != ':')
            return fail_char(sc, "after object key");
        sc->pos++;
        if (scan_value(sc) < 0)
            return -1;
        skip_ws(sc);
        if (peek(sc) == '}') {
            sc->pos++;
            sc->depth--;
            return 0;
        }
        if (peek(sc) != ',')
            return fail_char(sc, "after object key:value pair");
        sc->pos++;
        skip_ws(sc);
    }
}

static int scan_array(scan *sc)
{
    if (++sc->depth > GO_MAX_DEPTH)
        return fail_char(sc, "exceeded max depth");
    sc->pos++;
    skip_ws(sc);
    if (peek(sc) == ']') {
        sc->pos++;
        sc->depth--;
        return 0;
    }
    for (;;) {
        if (scan_value(sc) < 0)
            return -1;
        skip_ws(sc);
        if (peek(sc) == ']') {
            sc->pos++;
            sc->depth--;
            return 0;
        }
        if (peek(sc) != ',')
            return fail_char(sc, "after array element");
        sc->pos++;
    }
}

/* Scans one value starting after optional whitespace; leaves pos after it. */
static int scan_value(scan *sc)
{
    skip_ws(sc);
    switch (peek(sc)) {
    case '{': return scan_object(sc);
    case '[': return scan_array(sc);
    case '"': return scan_string(sc);
    case 't': return scan_literal(sc, "true");
    case 'f': return scan_literal(sc, "false");
    case 'n': return scan_literal(sc, "null");
    default:
        if (peek(sc) == '-' || (peek(sc) >= 0 && is_digit((unsigned char)peek(sc))))
            return scan_number(sc);
        return fail_char(sc, "looking for beginning of value");
    }
}

int upgradeable_json_check(const char *text, size_t len, strbuf *msg)
{
    scan sc = {(const unsigned char *)text, len, 0, 0, msg, 0};
    if (scan_value(&sc) < 0)
        return sc.oom ? -2 : -1;
    skip_ws(&sc);
    if (sc.pos < sc.len) {
        fail_char(&sc, "after top-level value");
        return sc.oom ? -2 : -1;
    }
    return 0;
}

/* ---- decoding text already known to be valid ---- */

/* Position just past the value starting at `pos` (after whitespace). */
static size_t value_end(const char *s, size_t len, size_t pos)
{
    strbuf ignored = STRBUF_INIT;
    scan sc = {(const unsigned char *)s, len, pos, 0, &ignored, 0};
    scan_value(&sc);
    strbuf_free(&ignored);
    return sc.pos;
}

static size_t ws_end(const char *s, size_t len, size_t pos)
{
    while (pos < len && is_ws((unsigned char)s[pos]))
        pos++;
    return pos;
}

static int put_rune(strbuf *sb, long r)
{
    char b[4];
    size_t n;
    if (r < 0x80)
        b[0] = (char)r, n = 1;
    else if (r < 0x800)
        b[0] = (char)(0xC0 | (r >> 6)), b[1] = (char)(0x80 | (r & 0x3F)), n = 2;
    else if (r < 0x10000)
        b[0] = (char)(0xE0 | (r >> 12)), b[1] = (char)(0x80 | ((r >> 6) & 0x3F)),
        b[2] = (char)(0x80 | (r & 0x3F)), n = 3;
    else
        b[0] = (char)(0xF0 | (r >> 18)), b[1] = (char)(0x80 | ((r >> 12) & 0x3F)),
        b[2] = (char)(0x80 | ((r >> 6) & 0x3F)), b[3] = (char)(0x80 | (r & 0x3F)), n = 4;
    return strbuf_append(sb, b, n);
}

static long hex4(const char *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        v = v * 16 + d;
    }
    return v;
}

/* Go's unquote of the valid string literal at s[pos] (the opening quote). */
static int decode_string(const char *s, size_t len, size_t pos, strbuf *out)
{
    size_t i = pos + 1;
    while (i < len && s[i] != '"') {
        unsigned char c = (unsigned char)s[i];
        int rc = 0;
        if (c == '\\') {
            char e = s[i + 1];
            i += 2;
            switch (e) {
            case 'b': rc = strbuf_putc(out, '\b'); break;
            case 'f': rc = strbuf_putc(out, '\f'); break;
            case 'n': rc = strbuf_putc(out, '\n'); break;
            case 'r': rc = strbuf_putc(out, '\r'); break;
            case 't': rc = strbuf_putc(out, '\t'); break;
            case 'u': {
                long r = hex4(s + i);
                i += 4;
                if (r >= 0xD800 && r <= 0xDFFF) {
                    long r2 = -1;
                    if (r < 0xDC00 && i + 6 <= len && s[i] == '\\' && s[i + 1] == 'u')
                        r2 = hex4(s + i + 2);
                    if (r2 >= 0xDC00 && r2 <= 0xDFFF) {
                        r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                        i += 6;
                    } else {
                        r = 0xFFFD;
                    }
                }
                rc = put_rune(out, r);
                break;
            }
            default: rc = strbuf_putc(out, e); break; /* " \ / */
            }
        } else {
            size_t n;
            long r = upgradeable_utf8_decode((const unsigned char *)s + i, len - i, &n);
            rc = r < 0 ? put_rune(out, 0xFFFD) : strbuf_append(out, s + i, n);
            i += n;
        }
        if (rc < 0)
            return -2;
    }
    return 0;
}

static const char *kind_word(char c)
{
    switch (c) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't':
    case 'f': return "bool";
    default: return "number";
    }
}

void upgradeable_prop_list_free(upgradeable_prop_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].type);
        free(l->items[i].value);
    }
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

/* Saves Go's first UnmarshalTypeError only, as decodeState.saveError does. */
static int save_error(strbuf *msg, int *have, const char *word, const char *into)
{
    if (*have)
        return 0;
    *have = 1;
    strbuf_reset(msg);
    return strbuf_printf(msg, "json: cannot unmarshal %s into %s", word, into);
}

static bool key_is(const strbuf *key, const char *name)
{
    return key->len == strlen(name) && strncasecmp(strbuf_str(key), name, key->len) == 0;
}

/* Decodes the object at s[pos] into *p (Go struct decoding: case-insensitive
 * keys, the last duplicate wins, unknown keys ignored). */
static int decode_prop(const char *s, size_t len, size_t pos, upgradeable_prop *p, strbuf *msg, int *have_err)
{
    pos = ws_end(s, len, pos + 1);
    strbuf key = STRBUF_INIT;
    int rc = 0;
    while (rc == 0 && s[pos] != '}') {
        strbuf_reset(&key);
        if (decode_string(s, len, pos, &key) < 0) {
            rc = -2;
            break;
        }
        pos = ws_end(s, len, value_end(s, len, pos));
        pos = ws_end(s, len, pos + 1); /* ':' */
        size_t end = value_end(s, len, pos);
        if (key_is(&key, "type")) {
            if (s[pos] == '"') {
                strbuf v = STRBUF_INIT;
                if (decode_string(s, len, pos, &v) < 0 || strbuf_reserve(&v, 0) < 0) {
                    strbuf_free(&v);
                    rc = -2;
                    break;
                }
                free(p->type);
                p->type_len = v.len;
                p->type = strbuf_detach(&v);
                if (!p->type)
                    rc = -2;
            } else if (s[pos] != 'n') {
                if (save_error(msg, have_err, kind_word(s[pos]),
                               "Go struct field Property.type of type string") < 0)
                    rc = -2;
            }
        } else if (key_is(&key, "value")) {
            char *raw = strndup(s + pos, end - pos);
            if (!raw) {
                rc = -2;
                break;
            }
            free(p->value);
            p->value = raw;
            p->value_len = end - pos;
        }
        pos = ws_end(s, len, end);
        if (s[pos] == ',')
            pos = ws_end(s, len, pos + 1);
    }
    strbuf_free(&key);
    return rc;
}

static int new_prop(upgradeable_prop_list *out, upgradeable_prop **p)
{
    upgradeable_prop *items = realloc(out->items, (out->n + 1) * sizeof *items);
    if (!items)
        return -2;
    out->items = items;
    *p = &items[out->n];
    memset(*p, 0, sizeof **p);
    (*p)->type = strdup("");
    if (!(*p)->type)
        return -2;
    out->n++;
    return 0;
}

/* Decodes the array (or null) at s[pos] as []property.Property. */
static int decode_list_at(const char *s, size_t len, size_t pos, upgradeable_prop_list *out, strbuf *msg, int *have_err)
{
    char c = s[pos];
    if (c == 'n')
        return 0;
    if (c != '[')
        return save_error(msg, have_err, kind_word(c), "Go value of type []property.Property") < 0 ? -2 : 0;
    pos = ws_end(s, len, pos + 1);
    while (s[pos] != ']') {
        upgradeable_prop *p;
        if (new_prop(out, &p) < 0)
            return -2;
        if (s[pos] == '{') {
            if (decode_prop(s, len, pos, p, msg, have_err) < 0)
                return -2;
        } else if (s[pos] != 'n') {
            if (save_error(msg, have_err, kind_word(s[pos]), "Go value of type property.Property") < 0)
                return -2;
        }
        pos = ws_end(s, len, value_end(s, len, pos));
        if (s[pos] == ',')
            pos = ws_end(s, len, pos + 1);
    }
    return 0;
}

static int finish(int rc, int have_err, upgradeable_prop_list *out)
{
    if (rc < 0 || have_err) {
        upgradeable_prop_list_free(out);
        return rc < 0 ? -2 : -1;
    }
    return 0;
}

int upgradeable_json_decode_props(const char *text, size_t len, upgradeable_prop_list *out, strbuf *msg)
{
    out->items = NULL;
    out->n = 0;
    int rc = upgradeable_json_check(text, len, msg);
    if (rc < 0)
        return rc;
    int have_err = 0;
    rc = decode_list_at(text, len, ws_end(text, len, 0), out, msg, &have_err);
    return finish(rc, have_err, out);
}

int upgradeable_json_decode_props_field(const char *text, size_t len, const char *field, upgradeable_prop_list *out,
                                strbuf *msg)
{
    out->items = NULL;
    out->n = 0;
    int rc = upgradeable_json_check(text, len, msg);
    if (rc < 0)
        return rc;
    size_t pos = ws_end(text, len, 0);
    if (text[pos] != '{')
        return 0; /* a document that is not a mapping holds no properties */
    int have_err = 0;
    strbuf key = STRBUF_INIT;
    pos = ws_end(text, len, pos + 1);
    size_t found = 0;
    bool have = false;
    rc = 0;
    while (text[pos] != '}') {
        strbuf_reset(&key);
        if (decode_string(text, len, pos, &key) < 0) {
            rc = -2;
            break;
        }
        pos = ws_end(text, len, value_end(text, len, pos));
        pos = ws_end(text, len, pos + 1);
        if (key_is(&key, field))
            found = pos, have = true; /* the last duplicate wins */
        pos = ws_end(text, len, value_end(text, len, pos));
        if (text[pos] == ',')
            pos = ws_end(text, len, pos + 1);
    }
    strbuf_free(&key);
    if (rc == 0 && have)
        rc = decode_list_at(text, len, found, out, msg, &have_err);
    return finish(rc, have_err, out);
}

int upgradeable_json_decode_any(const char *raw, size_t len, upgradeable_json_kind *kind, char **str, size_t *str_len,
                        strbuf *msg)
{
    *str = NULL;
    *str_len = 0;
    int rc = upgradeable_json_check(raw, len, msg);
    if (rc < 0)
        return rc;
    size_t pos = ws_end(raw, len, 0);
    size_t end = value_end(raw, len, pos);
    switch (raw[pos]) {
    case '"': {
        strbuf v = STRBUF_INIT;
        if (decode_string(raw, len, pos, &v) < 0 || strbuf_reserve(&v, 0) < 0) {
            strbuf_free(&v);
            return -2;
        }
        *str_len = v.len;
        *str = strbuf_detach(&v);
        if (!*str)
            return -2;
        *kind = UPG_J_STRING;
        return 0;
    }
    case '{': *kind = UPG_J_OBJECT; return 0;
    case '[': *kind = UPG_J_ARRAY; return 0;
    case 't':
    case 'f': *kind = UPG_J_BOOL; return 0;
    case 'n': *kind = UPG_J_NULL; return 0;
    default: break;
    }
    /* A number: interface{} gets a float64, and ParseFloat fails on overflow. */
    char *num = strndup(raw + pos, end - pos);
    if (!num)
        return -2;
    double d = strtod(num, NULL);
    if (isinf(d)) {
        strbuf_reset(msg);
        rc = strbuf_printf(msg, "json: cannot unmarshal number %s into Go value of type float64", num) < 0 ? -2 : -1;
        free(num);
        return rc;
    }
    free(num);
    *kind = UPG_J_NUMBER;
    return 0;
}

int upgradeable_json_compact(strbuf *sb, const char *raw, size_t len)
{
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)raw[i];
        int rc = 0;
        if (!in_str && is_ws(c))
            continue;
        if (c == '<' || c == '>' || c == '&') {
            rc = strbuf_printf(sb, "\\u00%02x", c);
        } else if (c == 0xE2 && i + 2 < len && (unsigned char)raw[i + 1] == 0x80 &&
                   ((unsigned char)raw[i + 2] == 0xA8 || (unsigned char)raw[i + 2] == 0xA9)) {
            rc = strbuf_printf(sb, "\\u202%c", (unsigned char)raw[i + 2] == 0xA8 ? '8' : '9');
            i += 2;
        } else {
            if (in_str && c == '\\') {
                rc = strbuf_append(sb, raw + i, 2); /* an escape never ends the string */
                i++;
            } else {
                if (c == '"')
                    in_str = !in_str;
                rc = strbuf_putc(sb, (char)c);
            }
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

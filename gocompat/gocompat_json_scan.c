/* gocompat_json_scan: Go's encoding/json scanner (checkValid and its
 * SyntaxError texts), its string unquoting, and json.Compact as json.Marshal
 * applies it to a json.RawMessage.
 *
 * Hand-written because the texts are observable: upstream decodes the
 * olm.properties annotation with encoding/json, and its error texts ("invalid
 * character 'a' looking for beginning of value", "unexpected end of JSON
 * input") end up verbatim in a condition message; jansson's differ.  jansson
 * would also turn the number 4.10 into the double 4.1, where a RawMessage
 * keeps the text as written.
 *
 * Validation mirrors Go's scanner (scanner.go): the first byte the state machine
 * rejects is reported as "invalid character <c> <context>", a truncated input as
 * "unexpected end of JSON input".  The other functions run over text known to be
 * valid, so they never report syntax errors themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"

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
    int rc = gocompat_quote(&q, rune, n, 0);
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

int gocompat_json_check(const char *text, size_t len, strbuf *msg)
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
size_t gocompat_json_value_end(const char *s, size_t len, size_t pos)
{
    strbuf ignored = STRBUF_INIT;
    scan sc = {(const unsigned char *)s, len, pos, 0, &ignored, 0};
    scan_value(&sc);
    strbuf_free(&ignored);
    return sc.pos;
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
int gocompat_json_unquote(const char *s, size_t len, size_t pos, strbuf *out)
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
            uint32_t cp;
            size_t n = gocompat_utf8_decode((const unsigned char *)s + i, len - i, &cp);
            rc = n == 0 ? put_rune(out, 0xFFFD) : strbuf_append(out, s + i, n);
            i += n ? n : 1;
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

int gocompat_json_compact(strbuf *sb, const char *raw, size_t len)
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

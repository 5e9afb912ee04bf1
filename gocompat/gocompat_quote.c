/* gocompat_quote: Go's utf8.DecodeRune and strconv.Quote (what %q prints).
 *
 * Hand-written because upstream quotes bundle names, ClusterExtension names,
 * bad version texts and CRD field values with %q, and those strings reach
 * condition messages and preflight errors unchanged: the quoting must be Go's
 * byte for byte, which no C routine does.
 *
 * strconv.IsPrint is Unicode's L/M/N/P/S categories plus U+0020.  Instead of the
 * full tables, the code points below are treated as not printable: the C0/C1
 * controls, DEL, U+00A0, U+00AD, the Unicode spaces and format characters
 * (U+1680, U+180E, U+2000-U+200F, U+2028-U+202F, U+205F-U+206F, U+3000, U+FEFF,
 * U+FFF9-U+FFFB), the private use area and the noncharacters U+FFFE/U+FFFF.
 * Unassigned code points are the only ones this can print differently from Go. */
#include "gocompat.h"

size_t gocompat_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    uint32_t c = s[0];
    size_t len;
    uint32_t min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80, c &= 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800, c &= 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000, c &= 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

static bool not_printable(uint32_t r)
{
    return r < 0x20 || (r >= 0x7F && r <= 0xA0) || r == 0xAD || r == 0x1680 || r == 0x180E ||
           (r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F) ||
           (r >= 0x205F && r <= 0x206F) || r == 0x3000 || r == 0xFEFF ||
           (r >= 0xFFF9 && r <= 0xFFFB) || r == 0xFFFE || r == 0xFFFF ||
           (r >= 0xE000 && r <= 0xF8FF) || r >= 0xF0000;
}

/* The escape of a non-printable rune (appendEscapedRune). */
static int put_escaped(strbuf *sb, uint32_t r)
{
    switch (r) {
    case '\a': return strbuf_puts(sb, "\\a");
    case '\b': return strbuf_puts(sb, "\\b");
    case '\f': return strbuf_puts(sb, "\\f");
    case '\n': return strbuf_puts(sb, "\\n");
    case '\r': return strbuf_puts(sb, "\\r");
    case '\t': return strbuf_puts(sb, "\\t");
    case '\v': return strbuf_puts(sb, "\\v");
    default: break;
    }
    if (r < ' ' || r == 0x7F)
        return strbuf_printf(sb, "\\x%02x", (unsigned)r);
    if (r < 0x10000)
        return strbuf_printf(sb, "\\u%04x", (unsigned)r);
    return strbuf_printf(sb, "\\U%08x", (unsigned)r);
}

int gocompat_quote(strbuf *sb, const char *s, size_t len, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    if (strbuf_putc(sb, '"') < 0)
        return -1;
    for (size_t i = 0; i < len;) {
        uint32_t r = 0;
        size_t n;
        int rc;
        if (p[i] >= 0x80 && (flags & GOCOMPAT_QUOTE_ASCII_ONLY)) {
            rc = strbuf_putc(sb, (char)p[i]);
            n = 1;
        } else if ((n = gocompat_utf8_decode(p + i, len - i, &r)) == 0) {
            rc = strbuf_printf(sb, "\\x%02x", p[i]);
            n = 1;
        } else if (r == '"' || r == '\\') {
            rc = strbuf_printf(sb, "\\%c", (char)r);
        } else if (!not_printable(r)) {
            rc = strbuf_append(sb, s + i, n);
        } else {
            rc = put_escaped(sb, r);
        }
        if (rc < 0)
            return -1;
        i += n;
    }
    return strbuf_putc(sb, '"');
}

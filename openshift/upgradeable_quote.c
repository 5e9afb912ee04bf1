/* upgradeable_quote: Go's strconv.Quote, which is what %q prints.  Upstream
 * quotes bundle and ClusterExtension names and bad version texts with %q, and
 * those strings reach the condition message unchanged.
 *
 * strconv.IsPrint is Unicode's L/M/N/P/S categories plus U+0020.  Instead of the
 * full tables, the code points below are treated as not printable: the C0/C1
 * controls, DEL, U+00A0, U+00AD, the Unicode spaces and format characters
 * (U+1680, U+180E, U+2000-U+200F, U+2028-U+202F, U+205F-U+206F, U+3000, U+FEFF,
 * U+FFF9-U+FFFB), the private use area and the noncharacters U+FFFE/U+FFFF.
 * Unassigned code points are the only ones this can print differently from Go. */
#include "upgradeable_internal.h"

static int not_printable(long r)
{
    return r < 0x20 || (r >= 0x7F && r <= 0xA0) || r == 0xAD || r == 0x1680 || r == 0x180E ||
           (r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F) || (r >= 0x205F && r <= 0x206F) ||
           r == 0x3000 || r == 0xFEFF || (r >= 0xFFF9 && r <= 0xFFFB) || r == 0xFFFE || r == 0xFFFF ||
           (r >= 0xE000 && r <= 0xF8FF) || r >= 0xF0000;
}

long upgradeable_utf8_decode(const unsigned char *p, size_t n, size_t *size)
{
    *size = 1;
    if (p[0] < 0x80)
        return p[0];
    int need;
    long r, min;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        need = 1, r = p[0] & 0x1F, min = 0x80;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        need = 2, r = p[0] & 0x0F, min = 0x800;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        need = 3, r = p[0] & 0x07, min = 0x10000;
    else
        return -1;
    if ((size_t)need >= n)
        return -1;
    for (int i = 1; i <= need; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return -1;
        r = (r << 6) | (p[i] & 0x3F);
    }
    if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF))
        return -1;
    *size = (size_t)need + 1;
    return r;
}

int upgradeable_go_quote(strbuf *sb, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    if (strbuf_putc(sb, '"') < 0)
        return -1;
    for (size_t i = 0; i < len;) {
        size_t n;
        long r = upgradeable_utf8_decode(p + i, len - i, &n);
        int rc;
        if (r < 0)
            rc = strbuf_printf(sb, "\\x%02x", p[i]);
        else if (r == '"' || r == '\\')
            rc = strbuf_printf(sb, "\\%c", (char)r);
        else if (!not_printable(r))
            rc = strbuf_append(sb, s + i, n);
        else if (r == '\a')
            rc = strbuf_puts(sb, "\\a");
        else if (r == '\b')
            rc = strbuf_puts(sb, "\\b");
        else if (r == '\f')
            rc = strbuf_puts(sb, "\\f");
        else if (r == '\n')
            rc = strbuf_puts(sb, "\\n");
        else if (r == '\r')
            rc = strbuf_puts(sb, "\\r");
        else if (r == '\t')
            rc = strbuf_puts(sb, "\\t");
        else if (r == '\v')
            rc = strbuf_puts(sb, "\\v");
        else if (r < ' ' || r == 0x7F)
            rc = strbuf_printf(sb, "\\x%02lx", r);
        else if (r < 0x10000)
            rc = strbuf_printf(sb, "\\u%04lx", r);
        else
            rc = strbuf_printf(sb, "\\U%08lx", r);
        if (rc < 0)
            return -1;
        i += n;
    }
    return strbuf_putc(sb, '"');
}

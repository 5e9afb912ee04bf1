#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strbuf_reserve(strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return 0;
    if (sb->fixed)
        return -1;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) {
        if (cap > ((size_t)-1) / 2)
            return -1;
        cap *= 2;
    }
    char *p = realloc(sb->data, cap);
    if (!p)
        return -1;
    sb->data = p;
    sb->cap = cap;
    return 0;
}

int strbuf_append(strbuf *sb, const char *s, size_t n)
{
    if (strbuf_reserve(sb, n) < 0)
        return -1;
    if (n)
        memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return 0;
}

int strbuf_puts(strbuf *sb, const char *s) { return strbuf_append(sb, s, strlen(s)); }

int strbuf_putc(strbuf *sb, char c) { return strbuf_append(sb, &c, 1); }

int strbuf_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || strbuf_reserve(sb, (size_t)n) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
    return 0;
}

void strbuf_reset(strbuf *sb)
{
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
}

char *strbuf_detach(strbuf *sb)
{
    char *p = sb->data ? sb->data : strdup("");
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return p;
}

void strbuf_free(strbuf *sb)
{
    if (!sb->fixed)
        free(sb->data);
    sb->fixed = 0;
    sb->data = NULL;
    sb->len = sb->cap = 0;
}

const char *strbuf_str(const strbuf *sb) { return sb->data ? sb->data : ""; }

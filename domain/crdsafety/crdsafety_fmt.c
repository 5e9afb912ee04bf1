/* crdsafety_fmt: the Go formatting rules that crdify's messages depend
 * on (%q, %v of float64, encoding/json bytes: gocompat's, with this preflight's
 * flags; kube-aware version order), so our messages match upstream byte for
 * byte, and the message list. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "crdsafety_internal.h"
#include "gocompat.h"

int crdsafety_list_take(crdsafety_list *l, char *s)
{
    if (!s)
        return -1;
    if (OLM_ARRAY_RESERVE(l->v, l->cap, l->n + 1) < 0) {
        free(s);
        return -1;
    }
    l->v[l->n++] = s;
    return 0;
}

int crdsafety_list_addf(crdsafety_list *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        return -1;
    return crdsafety_list_take(l, s);
}

int crdsafety_list_has(const crdsafety_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

void crdsafety_list_free(crdsafety_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void crdsafety_strv_sort(const char **v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_str);
}

/* The Go texts come from gocompat; the flags below are this preflight's own
 * flavour, kept as its messages have always been. */

/* %q of a string.  Only ASCII is escaped: bytes >= 0x80 are copied as they are
 * (Go would escape invalid UTF-8 and non-printable runes). */
int crdsafety_go_quote(strbuf *sb, const char *s)
{
    return gocompat_quote(sb, s, strlen(s), GOCOMPAT_QUOTE_ASCII_ONLY);
}

/* %v of a float64. */
int crdsafety_go_float(strbuf *sb, double v)
{
    char buf[GOCOMPAT_FLOAT_BUF];
    gocompat_format_float_g(v, 64, buf);
    return strbuf_puts(sb, buf);
}

/* json.Marshal's bytes (sorted keys, HTML escaping, integers as written), except
 * that a zero float is "0" whatever its sign (Go writes -0). */
char *crdsafety_raw_json(const json_t *v)
{
    strbuf sb = STRBUF_INIT;
    if (gocompat_json_encode(&sb, v,
                             GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML | GOCOMPAT_JSON_LEGACY_ZERO) < 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* ^v(\d+)(?:(alpha|beta)(\d+))?$ ; type: 0 alpha, 1 beta, 2 GA. */
static int parse_kube(const char *s, long *major, int *type, long *minor)
{
    if (*s++ != 'v' || !isdigit((unsigned char)*s))
        return 0;
    char *end;
    *major = strtol(s, &end, 10);
    *type = 2;
    *minor = 0;
    if (!*end)
        return 1;
    if (strncmp(end, "alpha", 5) == 0) {
        *type = 0;
        end += 5;
    } else if (strncmp(end, "beta", 4) == 0) {
        *type = 1;
        end += 4;
    } else
        return 0;
    if (!isdigit((unsigned char)*end))
        return 0;
    *minor = strtol(end, &end, 10);
    return *end == '\0';
}

int crdsafety_kube_version_cmp(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return 0;
    long amaj = 0, amin = 0, bmaj = 0, bmin = 0; /* set only on success; -O3 cannot see that */
    int at = 0, bt = 0;
    int oka = parse_kube(a, &amaj, &at, &amin), okb = parse_kube(b, &bmaj, &bt, &bmin);
    if (!oka && !okb)
        return strcmp(b, a);
    if (!oka)
        return -1;
    if (!okb)
        return 1;
    if (at != bt)
        return at - bt;
    if (amaj != bmaj)
        return amaj < bmaj ? -1 : 1;
    return amin < bmin ? -1 : (amin > bmin);
}

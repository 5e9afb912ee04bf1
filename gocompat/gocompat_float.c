/* gocompat_float: Go's strconv.FormatFloat(f, 'g', -1, 32|64) (what %v prints)
 * and encoding/json's floatEncoder (bits 64).
 *
 * Hand-written because Go prints the shortest decimal digits that read back to
 * the same float, in a layout of its own (1e+21 but 1e-7 in JSON, 1e-05 for %v,
 * "-0"), and those texts are observable: every number of a normalised catalog,
 * YAML float keys, the values in crdify-style messages and in the upgradeable
 * properties text.  printf has no shortest mode, so the digits are found by
 * trying precisions until strtod/strtof gives the value back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gocompat.h"

/* Shortest decimal digits of a > 0 (finite) that round-trip at `bits` (32 or
 * 64): digits[] (no dot, NUL-terminated), their count, and the decimal
 * exponent of the first digit (a = d.ddd * 10^exp10). */
static void shortest_digits(double a, int bits, char digits[24], int *nd, int *exp10)
{
    char buf[40];
    int maxp = bits == 32 ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, a);
        if (p == maxp)
            break;
        if (bits == 32 ? strtof(buf, NULL) == (float)a : strtod(buf, NULL) == a)
            break;
    }
    /* buf is "d[.ddd]e[+-]xx" */
    const char *s = buf;
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            digits[n++] = *s;
    /* Trailing zeros carry no information (Go prints 1e+21 and 100, not 1.0e+21). */
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    *nd = n;
    *exp10 = atoi(s + 1);
}

/* %e with the shortest digits: d[.ddd]e±dd (at least two exponent digits). */
static void fmt_e(char *out, bool neg, const char *d, int nd, int exp10)
{
    snprintf(out, GOCOMPAT_FLOAT_BUF, "%s%c%s%.*se%c%02d", neg ? "-" : "", d[0], nd > 1 ? "." : "",
             nd - 1, d + 1, exp10 < 0 ? '-' : '+', abs(exp10));
}

/* %f with the shortest digits. */
static void fmt_f(char *out, bool neg, const char *d, int nd, int exp10)
{
    const size_t size = GOCOMPAT_FLOAT_BUF;
    int dp = exp10 + 1; /* digits before the decimal point */
    size_t k = 0;
    if (neg && k + 1 < size)
        out[k++] = '-';
    if (dp > 0) {
        for (int i = 0; i < dp && k + 1 < size; i++)
            out[k++] = i < nd ? d[i] : '0';
    } else if (k + 1 < size) {
        out[k++] = '0';
    }
    if (nd > dp) {
        if (k + 1 < size)
            out[k++] = '.';
        for (int i = dp; i < nd && k + 1 < size; i++)
            out[k++] = i < 0 ? '0' : d[i];
    }
    out[k] = '\0';
}

void gocompat_format_float_g(double f, int bits, char buf[GOCOMPAT_FLOAT_BUF])
{
    /* FormatFloat(x, 'g', -1, 32) formats float32(x): round first, so that the
     * digits are the float's own (and 1e39 is +Inf). */
    if (bits == 32)
        f = (float)f;
    if (isnan(f)) {
        snprintf(buf, GOCOMPAT_FLOAT_BUF, "NaN");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, GOCOMPAT_FLOAT_BUF, f > 0 ? "+Inf" : "-Inf");
        return;
    }
    bool neg = signbit(f) != 0;
    if (f == 0) {
        snprintf(buf, GOCOMPAT_FLOAT_BUF, "%s0", neg ? "-" : "");
        return;
    }
    char d[24];
    int nd, e;
    shortest_digits(fabs(f), bits, d, &nd, &e);
    /* With the shortest digits Go decides by exponent alone (eprec = 6). */
    if (e < -4 || e >= 6)
        fmt_e(buf, neg, d, nd, e);
    else
        fmt_f(buf, neg, d, nd, e);
}

void gocompat_json_float(double f, char buf[GOCOMPAT_FLOAT_BUF])
{
    bool neg = signbit(f) != 0;
    double a = fabs(f);
    if (a == 0) {
        snprintf(buf, GOCOMPAT_FLOAT_BUF, "%s0", neg ? "-" : "");
        return;
    }
    char d[24];
    int nd, e;
    shortest_digits(a, 64, d, &nd, &e);
    if (a < 1e-6 || a >= 1e21) {
        fmt_e(buf, neg, d, nd, e);
        /* encoding/json cleans "e-07" up to "e-7" but keeps "e+21". */
        size_t n = strlen(buf);
        if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
            buf[n - 2] = buf[n - 1];
            buf[n - 1] = '\0';
        }
        return;
    }
    fmt_f(buf, neg, d, nd, e);
}

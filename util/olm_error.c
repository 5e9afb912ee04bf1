#include "olm_error.h"

#include <stdio.h>
#include <string.h>

int olm_error_setv(olm_error *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return -1;
}

int olm_error_set(olm_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    olm_error_setv(err, fmt, ap);
    va_end(ap);
    return -1;
}

int olm_error_wrap(olm_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix[OLM_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* Build "<prefix>: <old>" in place: shift the old message right, then copy the prefix. */
    size_t plen = strnlen(prefix, sizeof prefix) + 2;
    if (plen >= sizeof err->msg)
        plen = sizeof err->msg - 1;
    size_t olen = strnlen(err->msg, sizeof err->msg);
    if (plen + olen >= sizeof err->msg)
        olen = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, olen);
    err->msg[plen + olen] = '\0';
    memcpy(err->msg, prefix, plen - 2);
    memcpy(err->msg + plen - 2, ": ", 2);
    return -1;
}

void olm_error_clear(olm_error *err)
{
    if (err)
        err->msg[0] = '\0';
}

#include "catalog_name.h"

#include <stdbool.h>
#include <stdio.h>

/* The exact texts of k8s.io/apimachinery validation.IsDNS1123Subdomain, which upstream
 * catalogd returns in its 400 body (§4.4). */
#define DNS1123_MAX_LEN 253
#define DNS1123_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
#define DNS1123_MSG                                                                        \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, " \
    "'-' or '.', and must start and end with an alphanumeric character (e.g. "           \
    "'example.com', regex used for validation is '" DNS1123_FMT "')"

static bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* Each dot-separated label must match [a-z0-9]([-a-z0-9]*[a-z0-9])?. */
static bool matches(const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.')
            continue;
        if (i == start || !alnum(s[start]) || !alnum(s[i - 1]))
            return false;
        for (size_t k = start; k < i; k++)
            if (!alnum(s[k]) && s[k] != '-')
                return false;
        start = i + 1;
    }
    return true;
}

int catalog_name_check(const char *name, size_t len, char *msg, size_t msgsz)
{
    bool too_long = len > DNS1123_MAX_LEN;
    bool bad = !matches(name, len);
    if (!too_long && !bad)
        return 0;
    if (msg && msgsz)
        snprintf(msg, msgsz, "%s%s%s", too_long ? "must be no more than 253 characters" : "",
                 too_long && bad ? "; " : "", bad ? DNS1123_MSG : "");
    return -1;
}

/* olm_parse: durations and listen addresses, as the daemons' flags spell them. */
#include "olm_parse.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int olm_parse_duration(const char *s, uint64_t *ms)
{
    if (!s || !*s)
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0) /* strtod takes "inf" and "nan" */
        return -1;
    double mult;
    if (*end == '\0' || strcmp(end, "s") == 0)
        mult = 1000;
    else if (strcmp(end, "ms") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0)
        mult = 60000;
    else if (strcmp(end, "h") == 0)
        mult = 3600000;
    else
        return -1;
    double total = v * mult;
    /* Out of range would be undefined in the cast; a positive value that rounds to nothing
     * ("1e-9") would silently mean 0, which several flags read as "off". */
    if (total >= 9.2e18 || (total > 0 && total < 1))
        return -1;
    *ms = (uint64_t)total;
    return 0;
}

int olm_parse_host_port(const char *addr, const char *empty_host, char *host, size_t hostsz, int *port)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon)
        return -1;
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0) {
        h = empty_host;
        hl = strlen(empty_host);
    }
    if (hl >= hostsz)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || p < 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

int olm_parse_listen_addr(const char *addr, char *host, size_t hostsz, int *port)
{
    if (olm_parse_host_port(addr, OLM_ANY_HOST, host, hostsz, port) != 0)
        return -1;
    /* The listeners bind with uv_ip4_addr / uv_ip6_addr: refuse here what they would. */
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1 ? 0 : -1;
}

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? of any length but 0. */
static int label_chars_ok(const char *s, size_t len)
{
    if (len == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
        return 0;
    for (size_t i = 1; i + 1 < len; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

int olm_is_dns1123_label(const char *s, size_t len)
{
    return len <= 63 && label_chars_ok(s, len);
}

int olm_is_dns1123_subdomain(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > 253)
        return 0;
    for (const char *p = s;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!label_chars_ok(p, n)) /* a subdomain's labels have no limit of their own */
            return 0;
        if (!dot)
            return 1;
        p = dot + 1;
    }
}

int olm_parse_ns_name(const char *s, char *ns, size_t nssz, char *name, size_t namesz)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash || strchr(slash + 1, '/'))
        return -1;
    size_t nl = (size_t)(slash - s);
    if (!olm_is_dns1123_label(s, nl) || !olm_is_dns1123_subdomain(slash + 1) || nl >= nssz ||
        strlen(slash + 1) >= namesz)
        return -1;
    memcpy(ns, s, nl);
    ns[nl] = '\0';
    strcpy(name, slash + 1);
    return 0;
}

/* olm_proxy: Go's proxy choice from the environment (olm_proxy.h). */
#include "olm_proxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *env_any(const char *upper, const char *lower)
{
    const char *v = getenv(upper);
    if (!v || !*v)
        v = getenv(lower);
    return v && *v ? v : NULL;
}

/* An address: family, 4 or 16 bytes. */
typedef struct addr {
    int family;
    unsigned char b[16];
} addr;

static bool parse_ip(const char *s, addr *a)
{
    if (inet_pton(AF_INET, s, a->b) == 1) {
        a->family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, s, a->b) == 1) {
        a->family = AF_INET6;
        return true;
    }
    return false;
}

static bool is_loopback(const addr *a)
{
    if (a->family == AF_INET)
        return a->b[0] == 127;
    static const unsigned char v6[16] = {[15] = 1};
    return memcmp(a->b, v6, 16) == 0;
}

static bool in_cidr(const addr *ip, const addr *net, int bits)
{
    if (ip->family != net->family)
        return false;
    for (int i = 0; bits > 0; i++, bits -= 8) {
        unsigned char mask = bits >= 8 ? 0xff : (unsigned char)(0xff << (8 - bits));
        if ((ip->b[i] & mask) != (net->b[i] & mask))
            return false;
    }
    return true;
}

/* Splits "host:port" / "[v6]:port" / "host" into host and port (port "" when absent). */
static void split_host_port(const char *s, size_t n, char *host, size_t hsz, char *port, size_t psz)
{
    const char *colon = NULL;
    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        size_t hl = close ? (size_t)(close - s - 1) : n - 1;
        snprintf(host, hsz, "%.*s", (int)hl, s + 1);
        colon = close && (size_t)(close - s) + 1 < n && close[1] == ':' ? close + 1 : NULL;
    } else {
        const char *c = memchr(s, ':', n);
        /* A bare IPv6 address has several colons and no port. */
        colon = c && !memchr(c + 1, ':', n - (size_t)(c - s) - 1) ? c : NULL;
        snprintf(host, hsz, "%.*s", (int)(colon ? (size_t)(colon - s) : n), s);
    }
    snprintf(port, psz, "%.*s", colon ? (int)(n - (size_t)(colon - s) - 1) : 0, colon ? colon + 1 : "");
    for (char *p = host; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

/* Whether one NO_PROXY entry covers host:port (`ip` when the host is an address). */
static bool entry_matches(const char *e, size_t n, const char *host, const char *port, const addr *ip)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)n, e);
    char *slash = strchr(buf, '/');
    if (slash) { /* CIDR */
        *slash = 0;
        addr net;
        int bits = atoi(slash + 1);
        return ip && parse_ip(buf, &net) && bits >= 0 && bits <= (net.family == AF_INET ? 32 : 128) &&
               in_cidr(ip, &net, bits);
    }
    addr a;
    if (parse_ip(buf, &a)) /* a bare address, v4 or v6 */
        return ip && a.family == ip->family && memcmp(a.b, ip->b, a.family == AF_INET ? 4 : 16) == 0;
    char phost[256], pport[16];
    split_host_port(buf, strlen(buf), phost, sizeof phost, pport, sizeof pport);
    if (parse_ip(phost, &a)) {
        if (!ip || a.family != ip->family || memcmp(a.b, ip->b, a.family == AF_INET ? 4 : 16) != 0)
            return false;
        return !*pport || strcmp(pport, port) == 0;
    }
    const char *d = phost;
    if (strncmp(d, "*.", 2) == 0)
        d++;
    bool match_host = d[0] != '.';
    const char *suffix = match_host ? d : d + 1; /* without the dot */
    size_t hl = strlen(host), sl = strlen(suffix);
    bool hit = (match_host && strcmp(host, suffix) == 0) ||
               (hl > sl && host[hl - sl - 1] == '.' && strcmp(host + hl - sl, suffix) == 0);
    return hit && (!*pport || strcmp(pport, port) == 0);
}

static bool no_proxy_covers(const char *list, const char *host, const char *port, const addr *ip)
{
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && p[n - 1] == ' ')
            n--;
        if (n == 1 && *p == '*')
            return true;
        if (n && entry_matches(p, n, host, port, ip))
            return true;
        p += end ? (size_t)(end - p) : strlen(p);
    }
    return false;
}

void olm_proxy_for_url(const char *url, char *out, size_t outsz)
{
    if (outsz)
        out[0] = 0;
    const char *sep = url ? strstr(url, "://") : NULL;
    if (!sep || outsz == 0)
        return;
    bool https = (size_t)(sep - url) == 5 && strncasecmp(url, "https", 5) == 0;
    bool http = (size_t)(sep - url) == 4 && strncasecmp(url, "http", 4) == 0;
    const char *proxy = https ? env_any("HTTPS_PROXY", "https_proxy") : http ? env_any("HTTP_PROXY", "http_proxy") : NULL;
    if (!proxy)
        return;
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', alen);
    if (at) {
        alen -= (size_t)(at + 1 - auth);
        auth = at + 1;
    }
    char host[256], port[16];
    split_host_port(auth, alen, host, sizeof host, port, sizeof port);
    if (!*port)
        snprintf(port, sizeof port, "%s", https ? "443" : "80");
    addr ip;
    bool is_ip = parse_ip(host, &ip);
    if (strcmp(host, "localhost") == 0 || (is_ip && is_loopback(&ip)))
        return;
    const char *no = env_any("NO_PROXY", "no_proxy");
    if (no && no_proxy_covers(no, host, port, is_ip ? &ip : NULL))
        return;
    int n = snprintf(out, outsz, "%s%s", strstr(proxy, "://") ? "" : "http://", proxy);
    if (n < 0 || (size_t)n >= outsz)
        out[0] = 0;
}

/* olm_parse: durations and listen addresses, as the daemons' flags spell them. */
#include "olm_parse.h"

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

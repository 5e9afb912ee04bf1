/* olm_parse: the small value syntaxes the daemons' flags share. */
#ifndef OLMV1_OLM_PARSE_H
#define OLMV1_OLM_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* "<number>[ms|s|m|h]" (a bare number is seconds, fractions allowed) to milliseconds.
 * Returns 0, or -1 for an empty, negative, infinite, NaN, unknown-unit or out-of-range
 * value, and for a positive one under 1 ms (it would round to 0, often meaning "off"). */
int olm_parse_duration(const char *s, uint64_t *ms);

/* "host:port", "[v6]:port" (brackets dropped) or ":port" (host = `empty_host`, e.g.
 * "0.0.0.0" for every address like Go, or "127.0.0.1") into host and port 0..65535.
 * Returns 0, or -1 when there is no port, it is not a number in range, or the host does
 * not fit in hostsz. */
int olm_parse_host_port(const char *addr, const char *empty_host, char *host, size_t hostsz, int *port);

#endif

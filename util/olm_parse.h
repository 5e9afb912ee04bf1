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

/* Listen addresses, as Go's net.Listen spells them: ":PORT" binds every IPv4 address
 * (OLM_ANY_HOST), "IP:PORT" and "[IPv6]:PORT" that address.  The host must be an IP
 * literal: nothing here resolves names.  Returns 0, or -1 for anything else. */
#define OLM_ANY_HOST "0.0.0.0"
int olm_parse_listen_addr(const char *addr, char *host, size_t hostsz, int *port);

/* Kubernetes object names: a DNS-1123 label (namespaces: [a-z0-9-], at most 63, alphanumeric
 * at both ends) and a DNS-1123 subdomain (most names: labels joined by '.', at most 253). */
int olm_is_dns1123_label(const char *s, size_t len);
int olm_is_dns1123_subdomain(const char *s);

/* "NAMESPACE/NAME" (e.g. --global-pull-secret) into ns and name, each checked as above.
 * Returns 0, or -1 when the shape or either part is wrong, or a part does not fit. */
int olm_parse_ns_name(const char *s, char *ns, size_t nssz, char *name, size_t namesz);

#endif

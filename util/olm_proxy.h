/* olm_proxy: which proxy a request to a URL goes through, as upstream's Go daemons decide it
 * (net/http.ProxyFromEnvironment, golang.org/x/net/http/httpproxy), so that HTTPS_PROXY,
 * HTTP_PROXY and NO_PROXY mean the same here as there for catalog fetches, registry pulls and
 * API requests:
 *   - https URLs use HTTPS_PROXY (else https_proxy), http URLs HTTP_PROXY (else http_proxy);
 *     a proxy without a scheme is http://;
 *   - never for localhost or a loopback address;
 *   - NO_PROXY (else no_proxy): "*" for everything, or a comma-separated list of IP addresses,
 *     CIDR blocks and host names, each optionally with ":port"; a name matches itself and its
 *     subdomains ("example.com" and "www.example.com"), ".example.com" and "*.example.com" only
 *     the subdomains.
 * libcurl's own reading of the environment differs (it ignores HTTP_PROXY, proxies loopback),
 * so every client sets CURLOPT_PROXY from this, "" meaning "no proxy". */
#ifndef OLMV1_OLM_PROXY_H
#define OLMV1_OLM_PROXY_H

#include <stddef.h>

/* The proxy URL for `url` into out ("" when none, or when it does not fit). */
void olm_proxy_for_url(const char *url, char *out, size_t outsz);

#endif

/* fuzz_oci_auth: registry authentication inputs.  Line 1 is a WWW-Authenticate value (a
 * registry's 401 answer), line 2 a registry host, the rest a docker config JSON (an auth file
 * or pull secret) looked up for that host.  Checks that a parsed challenge has a lowercase
 * scheme and that credentials come as a pair. */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "oci_auth.h"

static void check_challenge(const char *header)
{
    oci_auth_challenge ch;
    olm_error err;
    if (oci_auth_parse_challenge(header, &ch, &err) != 0)
        return;
    for (const char *p = ch.scheme; *p; p++)
        FUZZ_CHECK(!(*p >= 'A' && *p <= 'Z'), "scheme \"%s\" is not lowercased", ch.scheme);
    oci_auth_challenge_free(&ch);
}

static void check_credentials(const char *registry, const char *json, size_t len)
{
    /* The lookup reads a file: hand it one in memory. */
    int fd = memfd_create("authfile", 0);
    if (fd < 0)
        return;
    if (write(fd, json, len) == (ssize_t)len) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        oci_credentials cred;
        olm_error err;
        if (oci_credentials_from_file(path, registry, &cred, &err) == 0) {
            FUZZ_CHECK(!cred.username == !cred.password, "a username without a password or the reverse");
            oci_credentials_free(&cred);
        }
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    char *registry = strchr(s, '\n');
    if (registry)
        *registry++ = '\0';
    check_challenge(s);
    if (registry) {
        char *json = strchr(registry, '\n');
        if (json) {
            *json++ = '\0';
            check_credentials(registry, json, size - (size_t)(json - s));
        }
    }
    free(s);
    return 0;
}

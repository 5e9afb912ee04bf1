/* Image references, following the grammar of github.com/distribution/reference
 * and its docker normalisation (ParseNormalizedNamed), so that a reference means
 * the same thing here as in docker, podman, skopeo and upstream OLM. */
#include "oci_ref.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "oci_digest.h"

#define NAME_MAX_TOTAL 255 /* distribution's limit on "registry/repository" */
#define TAG_MAX 128

static int is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* One path component: [a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)* */
static int valid_path_component(const char *s, size_t n)
{
    size_t i = 0;
    if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return 0;
    while (i < n) {
        if (is_lower_alnum(s[i])) {
            i++;
            continue;
        }
        /* a separator run: ".", "_", "__" or one or more "-" */
        size_t j = i;
        if (s[i] == '.') {
            j++;
        } else if (s[i] == '_') {
            j++;
            if (j < n && s[j] == '_')
                j++;
        } else if (s[i] == '-') {
            while (j < n && s[j] == '-')
                j++;
        } else {
            return 0;
        }
        if (j >= n || !is_lower_alnum(s[j]))
            return 0;
        i = j;
    }
    return 1;
}

/* Host label: [a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9] */
static int valid_host_label(const char *s, size_t n)
{
    if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static int valid_port(const char *s, size_t n)
{
    if (n == 0 || n > 5)
        return 0;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v > 0 && v <= 65535;
}

/* host[:port] where host is dot-separated labels or a bracketed IPv6 address. */
static int valid_domain(const char *s, size_t n)
{
    size_t host_end = n;
    if (n > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close || close == s + 1)
            return 0;
        for (const char *p = s + 1; p < close; p++)
            if (!isxdigit((unsigned char)*p) && *p != ':')
                return 0;
        host_end = (size_t)(close - s) + 1;
        if (host_end == n)
            return 1;
        return s[host_end] == ':' && valid_port(s + host_end + 1, n - host_end - 1);
    }
    const char *colon = memchr(s, ':', n);
    if (colon) {
        host_end = (size_t)(colon - s);
        if (!valid_port(colon + 1, n - host_end - 1))
            return 0;
    }
    size_t start = 0;
    for (size_t i = 0; i <= host_end; i++) {
        if (i == host_end || s[i] == '.') {
            if (!valid_host_label(s + start, i - start))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

/* [\w][\w.-]{0,127} */
static int valid_tag(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > TAG_MAX || s[0] == '.' || s[0] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
            return 0;
    return 1;
}

int oci_registry_is_loopback(const char *registry)
{
    if (!registry)
        return 0;
    size_t hlen;
    if (registry[0] == '[') {
        const char *close = strchr(registry, ']');
        if (!close)
            return 0;
        return (size_t)(close - registry) == 4 && strncmp(registry, "[::1]", 5) == 0;
    }
    const char *colon = strchr(registry, ':');
    hlen = colon ? (size_t)(colon - registry) : strlen(registry);
    if (hlen == 9 && strncasecmp(registry, "localhost", 9) == 0)
        return 1;
    /* 127.0.0.0/8: "127." followed by three numeric labels */
    if (hlen < 9 || strncmp(registry, "127.", 4) != 0)
        return 0;
    int dots = 0;
    for (size_t i = 4; i < hlen; i++) {
        if (registry[i] == '.')
            dots++;
        else if (!isdigit((unsigned char)registry[i]))
            return 0;
    }
    return dots == 2;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void oci_ref_free(oci_ref *ref)
{
    if (!ref)
        return;
    free(ref->registry);
    free(ref->repository);
    free(ref->tag);
    free(ref->digest);
    memset(ref, 0, sizeof *ref);
}

static int fail(oci_ref *out, olm_error *err, const char *input, const char *why)
{
    oci_ref_free(out);
    return olm_error_set(err, "invalid image reference \"%s\": %s", input, why);
}

int oci_ref_parse(const char *s, oci_ref *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s)
        return olm_error_set(err, "invalid image reference \"\": it is empty");
    if (strstr(s, "://"))
        return fail(out, err, s, "a reference has no URL scheme (write host/repo:tag, not https://...)");
    for (const char *p = s; *p; p++)
        if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
            return fail(out, err, s, "it contains whitespace or control characters");

    /* Split off "@digest" first: a digest may contain ':' which would confuse the tag split. */
    const char *at = strchr(s, '@');
    size_t name_tag_len = at ? (size_t)(at - s) : strlen(s);
    if (at) {
        olm_error derr;
        if (oci_digest_validate(at + 1, &derr) != 0)
            return fail(out, err, s, derr.msg);
        if (!(out->digest = strdup(at + 1)))
            return fail(out, err, s, "out of memory");
    }
    if (name_tag_len == 0)
        return fail(out, err, s, "the repository name is missing");

    /* The tag is after the last ':' that comes after the last '/'; an earlier ':' is a port. */
    const char *tag_colon = NULL;
    for (const char *p = s; p < s + name_tag_len; p++) {
        if (*p == '/')
            tag_colon = NULL;
        else if (*p == ':')
            tag_colon = p;
    }
    size_t name_len = tag_colon ? (size_t)(tag_colon - s) : name_tag_len;
    if (tag_colon) {
        char *tag = dup_n(tag_colon + 1, name_tag_len - name_len - 1);
        if (!tag)
            return fail(out, err, s, "out of memory");
        out->tag = tag;
        if (!valid_tag(tag))
            return fail(out, err, s,
                        "bad tag (letters, digits, '_', '.', '-'; at most 128; not starting with '.' or '-')");
    }
    if (name_len == 0)
        return fail(out, err, s, "the repository name is missing");

    /* Registry: the first component, if it looks like a host. */
    const char *name = s;
    const char *slash = memchr(name, '/', name_len);
    const char *path = name;
    size_t path_len = name_len;
    if (slash) {
        size_t first_len = (size_t)(slash - name);
        int is_host = memchr(name, '.', first_len) || memchr(name, ':', first_len) ||
                      (first_len == 9 && strncmp(name, "localhost", 9) == 0) ||
                      (first_len > 0 && name[0] == '[');
        /* docker treats an uppercase first component as a host, too */
        for (size_t i = 0; !is_host && i < first_len; i++)
            if (isupper((unsigned char)name[i]))
                is_host = 1;
        if (is_host) {
            if (!valid_domain(name, first_len))
                return fail(out, err, s, "bad registry host (host[:port], labels of letters, digits and '-')");
            if (!(out->registry = dup_n(name, first_len)))
                return fail(out, err, s, "out of memory");
            path = slash + 1;
            path_len = name_len - first_len - 1;
        }
    }
    if (!out->registry && !(out->registry = strdup(OCI_DEFAULT_REGISTRY)))
        return fail(out, err, s, "out of memory");
    if (strcmp(out->registry, "index.docker.io") == 0) {
        free(out->registry);
        if (!(out->registry = strdup(OCI_DEFAULT_REGISTRY)))
            return fail(out, err, s, "out of memory");
    }

    if (path_len == 0)
        return fail(out, err, s, "the repository name is missing");
    for (size_t i = 0; i < path_len; i++)
        if (isupper((unsigned char)path[i]))
            return fail(out, err, s, "repository name must be lowercase");
    size_t start = 0;
    for (size_t i = 0; i <= path_len; i++) {
        if (i == path_len || path[i] == '/') {
            if (!valid_path_component(path + start, i - start))
                return fail(out, err, s,
                            "bad repository path component (lowercase letters and digits, "
                            "separated by '.', '_', '__' or '-')");
            start = i + 1;
        }
    }
    int add_library = strcmp(out->registry, OCI_DEFAULT_REGISTRY) == 0 && !memchr(path, '/', path_len);
    size_t repo_len = path_len + (add_library ? 8 : 0);
    if (!(out->repository = malloc(repo_len + 1)))
        return fail(out, err, s, "out of memory");
    snprintf(out->repository, repo_len + 1, "%s%.*s", add_library ? "library/" : "", (int)path_len,
             path);
    if (strlen(out->registry) + 1 + repo_len > NAME_MAX_TOTAL)
        return fail(out, err, s, "the repository name is longer than 255 characters");

    if (!out->tag && !out->digest && !(out->tag = strdup(OCI_DEFAULT_TAG)))
        return fail(out, err, s, "out of memory");
    return 0;
}

char *oci_ref_name(const oci_ref *ref)
{
    char *s = NULL;
    if (asprintf(&s, "%s/%s", ref->registry, ref->repository) < 0)
        return NULL;
    return s;
}

char *oci_ref_string(const oci_ref *ref)
{
    char *s = NULL;
    if (asprintf(&s, "%s/%s%s%s%s%s", ref->registry, ref->repository, ref->tag ? ":" : "",
                 ref->tag ? ref->tag : "", ref->digest ? "@" : "",
                 ref->digest ? ref->digest : "") < 0)
        return NULL;
    return s;
}

char *oci_ref_with_digest(const oci_ref *ref, const char *digest)
{
    char *s = NULL;
    if (asprintf(&s, "%s/%s@%s", ref->registry, ref->repository, digest) < 0)
        return NULL;
    return s;
}

const char *oci_ref_manifest_id(const oci_ref *ref)
{
    return ref->digest ? ref->digest : ref->tag;
}

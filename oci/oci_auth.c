/* Registry authentication inputs: WWW-Authenticate challenges (RFC 7235) and
 * credentials from a docker config JSON ("auths"), as docker login, podman
 * login and Kubernetes .dockerconfigjson pull secrets write them. */
#include "oci_auth.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "olm_base64.h"

/* ---------------------------------------------------------------- challenges */

static int is_tchar(char c)
{
    return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Reads a token or quoted-string at *pp into a malloc'd string. */
static char *read_value(const char **pp)
{
    const char *p = *pp;
    size_t cap = strlen(p) + 1;
    char *out = malloc(cap);
    size_t n = 0;
    if (!out)
        return NULL;
    if (*p == '"') {
        p++;
        while (*p && *p != '"') {
            if (*p == '\\' && p[1])
                p++;
            out[n++] = *p++;
        }
        if (*p == '"')
            p++;
    } else {
        while (is_tchar(*p) || *p == '/' || *p == ':')
            out[n++] = *p++;
    }
    out[n] = '\0';
    *pp = p;
    return out;
}

void oci_auth_challenge_free(oci_auth_challenge *c)
{
    if (!c)
        return;
    free(c->realm);
    free(c->service);
    free(c->scope);
    memset(c, 0, sizeof *c);
}

static int rank(const oci_auth_challenge *c)
{
    if (strcmp(c->scheme, "bearer") == 0)
        return 2;
    if (strcmp(c->scheme, "basic") == 0)
        return 1;
    return 0;
}

int oci_auth_parse_challenge(const char *header, oci_auth_challenge *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    int have = 0;
    const char *p = header ? header : "";
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        oci_auth_challenge cur = {0};
        size_t n = 0;
        while (is_tchar(*p)) {
            if (n + 1 < sizeof cur.scheme)
                cur.scheme[n++] = (char)tolower((unsigned char)*p);
            p++;
        }
        if (n == 0) {
            oci_auth_challenge_free(out);
            return olm_error_set(err, "malformed WWW-Authenticate header \"%s\"", header);
        }
        cur.scheme[n] = '\0';
        /* auth-params until the next token that is not followed by '=' (a new scheme) */
        for (;;) {
            p = skip_ws(p);
            const char *name = p;
            while (is_tchar(*p))
                p++;
            size_t name_len = (size_t)(p - name);
            const char *after = skip_ws(p);
            if (name_len == 0 || *after != '=') {
                p = name; /* the next challenge's scheme (or the end) */
                break;
            }
            /* token68 ending in '=' padding: "Basic YWJj==" */
            if (after[1] == '=' || after[1] == ',' || after[1] == '\0') {
                p = after;
                while (*p == '=')
                    p++;
                break;
            }
            p = skip_ws(after + 1);
            char *value = read_value(&p);
            if (!value) {
                oci_auth_challenge_free(&cur);
                oci_auth_challenge_free(out);
                return olm_error_set(err, "out of memory");
            }
            char **slot = NULL;
            if (name_len == 5 && strncasecmp(name, "realm", 5) == 0)
                slot = &cur.realm;
            else if (name_len == 7 && strncasecmp(name, "service", 7) == 0)
                slot = &cur.service;
            else if (name_len == 5 && strncasecmp(name, "scope", 5) == 0)
                slot = &cur.scope;
            if (slot) {
                free(*slot);
                *slot = value;
            } else {
                free(value);
            }
            p = skip_ws(p);
            if (*p == ',')
                p++;
            else if (*p && !is_tchar(*p)) {
                oci_auth_challenge_free(&cur);
                oci_auth_challenge_free(out);
                return olm_error_set(err, "malformed WWW-Authenticate header \"%s\"", header);
            }
        }
        if (!have || rank(&cur) > rank(out)) {
            oci_auth_challenge_free(out);
            *out = cur;
            have = 1;
        } else {
            oci_auth_challenge_free(&cur);
        }
    }
    if (!have)
        return olm_error_set(err, "empty WWW-Authenticate header");
    if (strcmp(out->scheme, "bearer") == 0 && !out->realm) {
        oci_auth_challenge_free(out);
        return olm_error_set(err, "Bearer challenge without a realm in \"%s\"", header);
    }
    return 0;
}

/* ---------------------------------------------------------------- credentials */

void oci_credentials_free(oci_credentials *c)
{
    if (!c)
        return;
    if (c->password)
        memset(c->password, 0, strlen(c->password)); /* do not leave secrets in freed memory */
    free(c->username);
    free(c->password);
    c->username = c->password = NULL;
}

/* A key's host and, for a key without a URL scheme, its repository path:
 * "https://host/v1/" → "host", ""; "host/ns/app" → "host", "ns/app" (containers-auth.json
 * scopes credentials to a namespace or repository that way; docker's URL keys never do).
 * Writes host into out (size outsz); returns the path (in key), "" for none. */
static const char *auth_key_split(const char *key, char *out, size_t outsz)
{
    int url = 0;
    if (strncmp(key, "https://", 8) == 0)
        key += 8, url = 1;
    else if (strncmp(key, "http://", 7) == 0)
        key += 7, url = 1;
    size_t n = strcspn(key, "/");
    const char *path = url || !key[n] ? "" : key + n + 1;
    if (n >= outsz)
        n = outsz - 1;
    memcpy(out, key, n);
    out[n] = '\0';
    return path;
}

/* Whether a key's path covers `repository`: equal, or a parent at a '/'. */
static int path_covers(const char *path, const char *repository)
{
    size_t n = strlen(path);
    while (n && path[n - 1] == '/')
        n--;
    if (n == 0)
        return 1;
    return repository && strncmp(repository, path, n) == 0 && (repository[n] == '\0' || repository[n] == '/');
}

static int host_matches(const char *key_host, const char *registry)
{
    if (strcasecmp(key_host, registry) == 0)
        return 1;
    if (strcmp(registry, "docker.io") == 0)
        return strcasecmp(key_host, "index.docker.io") == 0 ||
               strcasecmp(key_host, "registry-1.docker.io") == 0;
    return 0;
}

static int decode_auth(const char *b64, oci_credentials *out, olm_error *err)
{
    /* Whitespace around the value is ignored: hand-edited files have it. */
    while (isspace((unsigned char)*b64))
        b64++;
    size_t n = strlen(b64);
    while (n && isspace((unsigned char)b64[n - 1]))
        n--;
    if (n == 0 || n > 64 * 1024)
        return olm_error_set(err, "\"auth\" is not valid base64");
    size_t len = 0;
    char *buf = olm_base64_decode(b64, n, 0, &len, err);
    if (!buf)
        return errno == ENOMEM ? olm_error_set(err, "out of memory")
                               : olm_error_set(err, "\"auth\" is not valid base64");
    char *colon = memchr(buf, ':', len);
    if (!colon || strlen(buf) != len) {
        memset(buf, 0, len);
        free(buf);
        return olm_error_set(err, "\"auth\" must encode \"username:password\"");
    }
    *colon = '\0';
    out->username = strdup(buf);
    out->password = strdup(colon + 1);
    memset(buf, 0, len);
    free(buf);
    if (!out->username || !out->password) {
        oci_credentials_free(out);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

/* The entry for `name` ("host" or "host/repository") in a parsed config: {"auths": {...}},
 * or the map itself when `legacy` (.dockercfg).  The most specific key wins ("host/ns/app"
 * over "host/ns" over "host"), the first of equals, as in containers/image.  `origin` names
 * the source in errors. */
static int lookup(json_t *root, bool legacy, const char *origin, const char *name, oci_credentials *out,
                  olm_error *err)
{
    char registry[512];
    size_t hn = strcspn(name, "/");
    snprintf(registry, sizeof registry, "%.*s", (int)(hn < sizeof registry ? hn : sizeof registry - 1), name);
    const char *repository = name[hn] ? name + hn + 1 : NULL;
    json_t *auths = legacy ? root : json_object_get(root, "auths");
    if (!json_is_object(root) || (auths && !json_is_object(auths)))
        return olm_error_set(err, "%s: expected %s", origin,
                             legacy ? "{\"<registry>\": {...}} (.dockercfg)" : "{\"auths\": {\"<registry>\": {...}}}");
    const char *key, *best_key = NULL;
    json_t *entry, *best = NULL;
    size_t best_len = 0;
    json_object_foreach(auths, key, entry) {
        char host[512];
        const char *path = auth_key_split(key, host, sizeof host);
        if (!host_matches(host, registry) || !path_covers(path, repository) || !json_is_object(entry))
            continue;
        size_t len = strlen(path) + 1; /* a bare host (len 1) still beats no match */
        if (len > best_len)
            best = entry, best_key = key, best_len = len;
    }
    int rc = 0;
    if (best) {
        entry = best;
        key = best_key;
        const char *auth = json_string_value(json_object_get(entry, "auth"));
        const char *user = json_string_value(json_object_get(entry, "username"));
        const char *pass = json_string_value(json_object_get(entry, "password"));
        if (auth && *auth) {
            rc = decode_auth(auth, out, err);
            if (rc != 0)
                olm_error_wrap(err, "%s, entry \"%s\"", origin, key);
        } else if (user && pass) {
            out->username = strdup(user);
            out->password = strdup(pass);
            if (!out->username || !out->password) {
                oci_credentials_free(out);
                rc = olm_error_set(err, "out of memory");
            }
        }
    }
    return rc;
}

int oci_credentials_from_file(const char *auth_file, const char *registry, oci_credentials *out,
                              olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!auth_file || !*auth_file)
        return 0;
    json_error_t jerr;
    json_t *root = json_load_file(auth_file, 0, &jerr);
    if (!root)
        return olm_error_set(err, "auth file %s: %s (line %d)", auth_file, jerr.text, jerr.line);
    char origin[600];
    snprintf(origin, sizeof origin, "auth file %s", auth_file);
    int rc = lookup(root, false, origin, registry, out, err);
    json_decref(root);
    return rc;
}

int oci_credentials_from_json(const char *json, size_t len, bool legacy, const char *origin, const char *registry,
                              oci_credentials *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return olm_error_set(err, "%s: not JSON: %s (line %d)", origin, jerr.text, jerr.line);
    int rc = lookup(root, legacy, origin, registry, out, err);
    json_decref(root);
    return rc;
}

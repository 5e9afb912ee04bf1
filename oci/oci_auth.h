/* oci_auth: registry authentication inputs: WWW-Authenticate challenges and
 * credentials from a docker config JSON. */
#ifndef OLM_OCI_AUTH_H
#define OLM_OCI_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "olm_error.h"

/* One authentication challenge from a WWW-Authenticate header. */
typedef struct oci_auth_challenge {
    char scheme[16]; /* lowercased: "bearer", "basic" */
    char *realm;     /* owned, may be NULL */
    char *service;
    char *scope;
} oci_auth_challenge;

/* Parses a WWW-Authenticate value (which may list several challenges) and keeps
 * the most useful one: Bearer, else Basic, else the first. */
int oci_auth_parse_challenge(const char *header, oci_auth_challenge *out, olm_error *err);
void oci_auth_challenge_free(oci_auth_challenge *c);

typedef struct oci_credentials {
    char *username; /* owned; both NULL when there are none */
    char *password;
} oci_credentials;

/* Looks up `registry` in a docker config JSON ({"auths":{"host":{"auth":
 * base64(user:pass)} or {"username","password"}}}) for `registry`: "host", or
 * "host/repository" to also match keys scoped to a repository or its namespace.  Keys match
 * as "host", "host/ns[/app]" (the most specific wins), "http(s)://host" or
 * "http(s)://host/v1/..."; docker.io also matches index.docker.io.  No entry is not an error (*out stays empty); an unreadable
 * or malformed file is. */
int oci_credentials_from_file(const char *auth_file, const char *registry, oci_credentials *out,
                              olm_error *err);
/* The same lookup in a docker config JSON held in memory; with `legacy` the text is a
 * .dockercfg (the "auths" map itself, as kubernetes.io/dockercfg Secrets hold it).
 * `origin` names the source in errors ("pull secret ns/name"). */
int oci_credentials_from_json(const char *json, size_t len, bool legacy, const char *origin, const char *registry,
                              oci_credentials *out, olm_error *err);
void oci_credentials_free(oci_credentials *c);

#endif

/* oci_auth_store: registry credentials that change while a daemon runs — the
 * --global-pull-secret.  It holds one docker config JSON (or a legacy .dockercfg) in
 * memory, replaced as a whole when the watched Secret changes, and is read by pulls on
 * any thread: each pull looks its registry up once, so a rotation applies to the next
 * pull.  Nothing is written to disk. */
#ifndef OLM_OCI_AUTH_STORE_H
#define OLM_OCI_AUTH_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "oci_auth.h"
#include "olm_error.h"

typedef struct oci_auth_store oci_auth_store;

oci_auth_store *oci_auth_store_new(olm_error *err);
void oci_auth_store_free(oci_auth_store *s);

/* Replaces the content (copied).  The text is checked first: JSON of the expected shape
 * ({"auths": {...}}, or with `legacy` the .dockercfg map); on error the old content stays
 * and -1 comes back.  `origin` names it in later errors ("pull secret ns/name"). */
int oci_auth_store_set(oci_auth_store *s, const char *json, size_t len, bool legacy, const char *origin,
                       olm_error *err);

/* Replaces the content from a Kubernetes Secret object (as the API returns it): type
 * kubernetes.io/dockerconfigjson (data[".dockerconfigjson"]) or kubernetes.io/dockercfg
 * (data[".dockercfg"]), base64 in "data".  Another type or a missing key is an error and
 * keeps the old content. */
int oci_auth_store_set_secret(oci_auth_store *s, const json_t *secret, const char *origin, olm_error *err);

/* Forgets the content (the Secret was deleted): pulls go anonymous. */
void oci_auth_store_clear(oci_auth_store *s);

/* True when it holds content. */
bool oci_auth_store_loaded(oci_auth_store *s);

/* Credentials for `registry` (as in oci_ref.registry, or "registry/repository" for keys
 * scoped to a repository: oci_credentials_from_file), empty when there are none (not an
 * error).  Any thread. */
int oci_auth_store_lookup(oci_auth_store *s, const char *registry, oci_credentials *out, olm_error *err);

#endif

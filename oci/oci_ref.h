/* oci_ref: image references, parsed and formatted the way docker and containers do. */
#ifndef OLM_OCI_REF_H
#define OLM_OCI_REF_H

#include "olm_error.h"

#define OCI_DEFAULT_REGISTRY "docker.io"
#define OCI_DEFAULT_TAG "latest"

/* A parsed, normalised reference.  All strings are owned by the struct and
 * released by oci_ref_free.  After a successful parse, registry and repository
 * are set; tag is set unless the input had only a digest; digest is NULL unless
 * the input had "@sha256:...". */
typedef struct oci_ref {
    char *registry;   /* "docker.io", "quay.io", "127.0.0.1:5000", "[::1]:5000" */
    char *repository; /* "library/busybox", "ns/app" (lowercase path components) */
    char *tag;        /* "latest", "v1.2.3", or NULL */
    char *digest;     /* "sha256:<64 hex>" or NULL */
} oci_ref;

/* Parses `[registry[:port]/]repo[:tag][@sha256:hex]` with the docker rules:
 * the first path component is a registry only if it contains '.' or ':' or is
 * "localhost"; otherwise the registry is docker.io, where a one-component name
 * gets "library/"; "index.docker.io" becomes "docker.io"; no tag and no digest
 * means tag "latest".  On failure *out is left zeroed and err says why. */
int oci_ref_parse(const char *s, oci_ref *out, olm_error *err);
void oci_ref_free(oci_ref *ref);

/* "registry/repository" (the name).  Caller frees.  NULL on OOM. */
char *oci_ref_name(const oci_ref *ref);
/* Full normalised form: "registry/repository[:tag][@digest]".  Caller frees. */
char *oci_ref_string(const oci_ref *ref);
/* "registry/repository@<digest>": the canonical digest reference.  Caller frees. */
char *oci_ref_with_digest(const oci_ref *ref, const char *digest);
/* What goes after /manifests/: the digest if there is one, else the tag.  Borrowed. */
const char *oci_ref_manifest_id(const oci_ref *ref);
/* True for hosts that are served over plain HTTP by default: localhost,
 * 127.0.0.0/8 and [::1], with or without a port. */
int oci_registry_is_loopback(const char *registry);

#endif

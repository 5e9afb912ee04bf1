/* oci_manifest: OCI and Docker manifest and index JSON: parsing, validation and
 * platform selection.  No I/O. */
#ifndef OLM_OCI_MANIFEST_H
#define OLM_OCI_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "oci_digest.h"
#include "oci_media.h"
#include "olm_error.h"

/* Every manifest type we can use, for the Accept header of manifest requests. */
#define OCI_MANIFEST_ACCEPT                                                                   \
    "Accept: " OCI_MT_MANIFEST ", " OCI_MT_INDEX ", " OCI_MT_DOCKER_MANIFEST ", "             \
    OCI_MT_DOCKER_LIST

/* Manifests and configs are small; a bigger one is refused rather than buffered. */
#define OCI_MAX_MANIFEST_SIZE ((size_t)4 * 1024 * 1024)
#define OCI_MAX_CONFIG_SIZE ((size_t)8 * 1024 * 1024)
/* An image with more layers is refused (overlayfs stacks at most 128 lower layers, Docker
 * builds at most 127); a 3,000-layer manifest meant 3,000 requests. */
#define OCI_MAX_LAYERS 128

typedef struct oci_platform {
    char os[32];      /* "linux" */
    char arch[32];    /* "amd64", "arm64", "arm", "ppc64le", "s390x", "386" */
    char variant[16]; /* "v7", "v8", or "" */
} oci_platform;

/* The platform of the running process (linux + uname machine mapped to the
 * GOARCH names; arm gets a variant from the machine name, arm64 gets "v8"). */
int oci_platform_host(oci_platform *out, olm_error *err);
/* Parses "os/arch[/variant]" (e.g. "linux/arm/v7"). */
int oci_platform_parse(const char *s, oci_platform *out, olm_error *err);

typedef struct oci_descriptor {
    char *media_type; /* owned; may be NULL for index entries without one */
    char digest[OCI_DIGEST_BUFSZ];
    uint64_t size;
    oci_platform platform; /* index entries only; zeroed otherwise */
} oci_descriptor;

/* An image manifest (OCI or Docker v2 schema 2).  Owned; oci_manifest_free. */
typedef struct oci_manifest {
    oci_descriptor config;
    oci_descriptor *layers; /* nlayers entries, in application order */
    size_t nlayers;
} oci_manifest;

typedef enum { OCI_KIND_MANIFEST = 1, OCI_KIND_INDEX = 2 } oci_manifest_kind;

/* Which kind of document `json` is: its mediaType field, else the response
 * Content-Type (may be NULL), else its shape ("manifests" vs "layers").
 * Docker schema 1 and unknown types are errors. */
int oci_manifest_kind_of(const char *json, size_t len, const char *content_type,
                         oci_manifest_kind *out, olm_error *err);
/* Parses an image manifest; every digest is validated, every layer media type
 * must be a tar layer (plain, gzip, zstd; OCI or Docker), and there are at most
 * OCI_MAX_LAYERS layers. */
int oci_manifest_parse(const char *json, size_t len, oci_manifest *out, olm_error *err);
void oci_manifest_free(oci_manifest *m);

/* Picks the manifest for `want` from an OCI index / Docker manifest list:
 * os and arch must be equal; an exact variant is best, then an entry without a
 * variant, then (arm only) an older variant the CPU also runs (v7 runs v6, v5).
 * When nothing fits the error lists what the index offers.  out is owned by the
 * caller (free out->media_type). */
int oci_index_select(const char *json, size_t len, const oci_platform *want,
                     oci_descriptor *out, olm_error *err);

#endif

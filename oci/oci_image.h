/* oci_image: building images: blobs, a reproducible tar+gzip layer from a directory,
 * the image config and manifest, and registry+v1 bundle labels. */
#ifndef OLM_OCI_IMAGE_H
#define OLM_OCI_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oci_digest.h"
#include "oci_layer.h"
#include "olm_error.h"

/* ---------------------------------------------------------------- images (oci_image.c) */

typedef struct oci_label {
    const char *key;
    const char *value;
} oci_label;

/* A one-layer image ready to push.  Everything is owned by the struct. */
typedef struct oci_image {
    oci_layer layer;
    oci_blob config;   /* config.data is the JSON below */
    char *config_json; /* compact, keys sorted */
    char *manifest_json;
    size_t manifest_len;
    char manifest_digest[OCI_DIGEST_BUFSZ];
} oci_image;

/* How a container runs the image: the OCI config's User, Entrypoint and Env.  Every
 * field may be empty; strings are borrowed. */
typedef struct oci_run_config {
    const char *user;              /* "65532:65532" (numeric, so no /etc/passwd lookup is needed) */
    const char *const *entrypoint; /* the argv prefix, e.g. {"/usr/local/bin/catalogd"} */
    size_t nentrypoint;
    const char *const *env;        /* "KEY=VALUE" */
    size_t nenv;
} oci_run_config;

/* The image config JSON: architecture amd64, os linux, config.Labels (later
 * labels with the same key win), config.User/Entrypoint/Env from `run` (NULL or
 * empty fields: absent), rootfs.diff_ids, one history entry with `created_by`,
 * created at the epoch (so builds are reproducible).  Keys sorted, compact.
 * Caller frees. */
char *oci_image_config_json(const oci_label *labels, size_t nlabels, const oci_run_config *run,
                            const char *diff_id, const char *created_by, olm_error *err);
/* The OCI image manifest for one config and n layers.  Caller frees. */
char *oci_image_manifest_json(const oci_blob *config, const oci_blob *const *layers,
                              size_t nlayers, olm_error *err);
/* Layer from `dir` (under `prefix` if not NULL), config with `labels`, manifest. */
int oci_image_build(const char *dir, const char *prefix, const oci_label *labels, size_t nlabels,
                    const oci_run_config *run, const char *created_by, oci_image *out, olm_error *err);
void oci_image_free(oci_image *img);

/* ---------------------------------------------------------------- bundles (oci_bundle.c) */

/* A label list whose strings it owns. */
typedef struct oci_labels {
    oci_label *items; /* keys and values are malloc'd and owned */
    size_t len;
    size_t cap;
} oci_labels;

/* Adds or replaces key=value (copies both). */
int oci_labels_set(oci_labels *l, const char *key, const char *value, olm_error *err);
/* Parses "K=V" (K non-empty) and adds it. */
int oci_labels_set_kv(oci_labels *l, const char *kv, olm_error *err);
const char *oci_labels_get(const oci_labels *l, const char *key);
void oci_labels_free(oci_labels *l);

/* Checks that `dir` is a registry+v1 bundle (manifests/ and
 * metadata/annotations.yaml exist) and adds the bundle labels: the three
 * standard ones, then every entry of the `annotations:` map of annotations.yaml
 * (package, channels, ...), which is how operator-sdk builds bundle images. */
int oci_bundle_labels(const char *dir, oci_labels *labels, olm_error *err);

#endif

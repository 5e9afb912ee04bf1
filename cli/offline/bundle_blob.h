/* bundle_blob: the olm.bundle blob of a registry+v1 bundle, as `opm render` writes one
 * for a bundle image (what a catalog template's `- image: REF` entry becomes):
 *
 *   name      the CSV's metadata.name          package   annotations.yaml's package
 *   image     the reference as given
 *   properties  olm.package {packageName, version}; olm.gvk for every version of every
 *               CRD the bundle ships; olm.gvk.required for the CSV's required CRDs; the
 *               CSV's olm.properties annotation and metadata/properties.yaml; and
 *               olm.csv.metadata (the CSV's descriptive fields: annotations, apiService-
 *               and crdDescriptions, description, displayName, installModes, keywords,
 *               labels, links, maintainers, maturity, minKubeVersion, nativeAPIs, provider)
 *   relatedImages  the bundle image itself (name ""), then the CSV's spec.relatedImages
 *
 * Close to opm's, not byte for byte: property order and the related images opm
 * collects from the Deployments' containers may differ. */
#ifndef OLMV1_CLI_BUNDLE_BLOB_H
#define OLMV1_CLI_BUNDLE_BLOB_H

#include <jansson.h>

#include "olm_error.h"

/* The blob of the bundle directory `dir` (pulled from `image`).  New reference, or NULL
 * with err set (a bundle that does not load, a CSV without name or version). */
json_t *bundle_blob_from_dir(const char *dir, const char *image, olm_error *err);

/* Pulls `image` (from where olmv1 runs: $REGISTRY_AUTH_FILE, loopback registries and
 * $OLMV1_INSECURE_REGISTRIES over http) into a temporary directory and makes its blob.
 * *code is 5 when the pull fails, 8 when the bundle is bad. */
json_t *bundle_blob_from_image(const char *image, int *code, olm_error *err);

#endif

/* image_temp: an image pulled into a fresh temporary directory for one use, then removed,
 * as every olmv1 command that reads an image from a registry needs it.  The pull takes
 * what podman and skopeo take from the environment: $REGISTRY_AUTH_FILE for credentials,
 * $CONTAINERS_REGISTRIES_CONF (else /etc/containers/registries.conf when it exists) for
 * mirrors and blocked registries, plus $OLMV1_INSECURE_REGISTRIES; the directory is made
 * under $TMPDIR (else /tmp). */
#ifndef OLMV1_IMAGE_TEMP_H
#define OLMV1_IMAGE_TEMP_H

#include <stdbool.h>

#include "oci_pull.h"
#include "olm_error.h"

/* What to do with the pulled image: `dir` is where it was unpacked (res->fbc_root for a
 * catalog).  Returns 0 or the caller's own nonzero code, with err set. */
typedef int (*image_temp_use)(const char *dir, const oci_pull_result *res, void *data, olm_error *err);

enum {
    IMAGE_TEMP_SETUP_FAILED = -1, /* temporary directory or registries configuration */
    IMAGE_TEMP_PULL_FAILED = -2,  /* err says "pulling <what> image REF: ..." */
};

/* Pulls `ref` (`catalog`: the catalog's FBC root is found as `oci_pull` finds it), calls
 * `use`, removes the directory.  Returns 0, IMAGE_TEMP_SETUP_FAILED,
 * IMAGE_TEMP_PULL_FAILED, or what `use` returned. */
int image_temp_pull(const char *ref, bool catalog, image_temp_use use, void *data, olm_error *err);

#endif

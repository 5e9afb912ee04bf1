/* oci: image references, digests, image building and a registry v2 client.
 *
 * Public headers, lowest first; each includes only headers above it in this list:
 *   oci_media.h     media types and image labels (constants)
 *   oci_digest.h    sha256 digests ("sha256:<hex>") of buffers, files and streams
 *   oci_ref.h       parse/format image references the way docker/containers do
 *   oci_auth.h      WWW-Authenticate parsing, docker config "auths" credentials
 *   oci_auth_store.h  credentials replaced at run time (--global-pull-secret)
 *   oci_registries_conf.h  registries.conf v2: mirrors, blocked and insecure registries
 *   oci_registries_follow.h  the same, re-read when it changes (daemons)
 *   oci_manifest.h  manifest / index JSON parsing, platform selection (no I/O)
 *   oci_unpack.h    applying tar layers under a root dir (paths, links, whiteouts)
 *   oci_image.h     blobs; deterministic tar+gzip layer, config and manifest; bundle labels
 *   oci_registry.h  one registry host: scheme, requests, token/basic auth, errors; push
 *   oci_pull.h      resolve, verified fetches, oci_pull / oci_pull_cached / oci_pull_catalog
 * This header includes the build-and-push half (everything but oci_manifest.h,
 * oci_unpack.h and oci_pull.h); oci_pull.h includes the pull half.
 *
 * Errors follow util/olm_error.h: functions return 0 / -1 (or a pointer / NULL)
 * and fill the caller's olm_error with a message a user can act on.  Nothing here
 * keeps global state; an oci_registry handle is not thread-safe (one per thread). */
#ifndef OLM_OCI_H
#define OLM_OCI_H

#include "oci_auth.h"
#include "oci_auth_store.h"
#include "oci_digest.h"
#include "oci_image.h"
#include "oci_media.h"
#include "oci_ref.h"
#include "oci_registries_conf.h"
#include "oci_registries_follow.h"
#include "oci_registry.h"

#endif

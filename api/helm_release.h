/* helm_release: upstream OLM v1's install record, a Helm release kept in "chunked" Secrets,
 * read and written so that an administrator can switch between upstream and us either way
 * with nothing reinstalled (the two-way door of issue 28).
 *
 * Upstream (operator-controller's Helm applier, helm-operator-plugins' chunked driver):
 *   index Secret  name "sh.helm.release.v1.<release>.v<N>" in the system namespace,
 *                 type "operatorframework.io/index.v1",
 *                 labels name=<release>, owner=operator-controller, status=<deployed|superseded|...>,
 *                        version=<N>, key=<Secret name>, type=index, createdAt[, modifiedAt],
 *                        and every release label that is a valid label (the others are
 *                        annotations): olm.operatorframework.io/{package-name,bundle-name,
 *                        bundle-version,bundle-reference}
 *                 data   chunk: the first chunk of gzip(JSON of helm's release.Release)
 *                        extraChunks: JSON list of the names of the other chunks' Secrets
 *                 a controller ownerReference to the ClusterExtension (GC uninstalls upstream)
 *   chunk Secrets type "operatorframework.io/chunk.v1", immutable, labels owner, key, type=chunk,
 *                 data chunk; (1024-8) KiB each.
 *   release JSON  name, namespace, version, info{first_deployed,last_deployed,deleted,description,
 *                 status}, chart{metadata{name,version,apiVersion,annotations},...}, manifest:
 *                 "---\n# Source: <chart>/templates/object-<hash>.json\n<object JSON>\n" per object.
 *
 * We write what upstream reads (the index Secret mirrors our install record after every
 * install or upgrade) and read what upstream wrote (a deployed release with no record of ours
 * is adopted: its manifest lists the objects, its labels the bundle). */
#ifndef OLM_HELM_RELEASE_H
#define OLM_HELM_RELEASE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "install_record.h"
#include "olm_error.h"

#define HELM_INDEX_TYPE "operatorframework.io/index.v1"
#define HELM_CHUNK_TYPE "operatorframework.io/chunk.v1"
#define HELM_OWNER "operator-controller"
#define HELM_CHUNK_SIZE ((1024 - 8) * 1024)
#define HELM_MAX_CHUNKS 11

#define HELM_LABEL_PACKAGE "olm.operatorframework.io/package-name"
#define HELM_LABEL_BUNDLE "olm.operatorframework.io/bundle-name"
#define HELM_LABEL_VERSION "olm.operatorframework.io/bundle-version"
#define HELM_LABEL_REFERENCE "olm.operatorframework.io/bundle-reference"

/* What to write: the record (not pending), the objects as applied (a JSON array; NULL: the
 * manifest names the record's objects only), the release namespace (spec.namespace), the
 * release version N and when it was first deployed (RFC 3339; NULL: the record's time), and
 * the ClusterExtension's uid for the ownerReference (NULL: none). */
typedef struct helm_release_in {
    const install_record *rec;
    const json_t *objects;
    const char *release_namespace;
    int version;
    const char *first_deployed;
    const char *owner_uid;
} helm_release_in;

/* The index Secret and its chunk Secrets (*chunks: a JSON array, empty when one chunk holds
 * it all; each chunk's ownerReference to the index needs the index's uid, which the caller
 * adds once the index exists).  New references, or NULL with err set. */
json_t *helm_release_secrets(const helm_release_in *in, const char *system_namespace, json_t **chunks,
                             olm_error *err);

/* "sh.helm.release.v1.<release>.v<N>".  Caller frees. */
char *helm_release_secret_name(const char *release, int version);

/* A release read back. */
typedef struct helm_release {
    char *name, *namespace_, *status, *first_deployed; /* owned */
    int version;
    install_record rec; /* the bundle (from the release labels) and the objects (from the manifest) */
} helm_release;

/* Decodes a release from the index Secret and the data of its extra chunks (`extra`, n of
 * them, in extraChunks order, already base64-decoded; labels and annotations of the Secret
 * are the release labels).  0, or -1 with err naming what is wrong. */
int helm_release_decode(const json_t *index_secret, const char *const *extra, const size_t *extra_len, size_t n,
                        helm_release *out, olm_error *err);

/* The names in the index Secret's extraChunks (a new JSON array of strings), or NULL with err. */
json_t *helm_release_extra_chunk_names(const json_t *index_secret, olm_error *err);

void helm_release_free(helm_release *r);

#endif

/* oci_media: media types of OCI and Docker manifests, configs and layers, and the
 * image labels operator bundles and catalogs carry.  Constants only. */
#ifndef OLM_OCI_MEDIA_H
#define OLM_OCI_MEDIA_H

#define OCI_MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define OCI_MT_INDEX "application/vnd.oci.image.index.v1+json"
#define OCI_MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define OCI_MT_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define OCI_MT_LAYER_TAR "application/vnd.oci.image.layer.v1.tar"
#define OCI_MT_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"
#define OCI_MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define OCI_MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define OCI_MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define OCI_MT_DOCKER_MANIFEST_V1 "application/vnd.docker.distribution.manifest.v1+prettyjws"
#define OCI_MT_DOCKER_LAYER "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* catalogd extracts only the directory this config label names (spec §4.2). */
#define OCI_LABEL_CATALOG_CONFIGS "operators.operatorframework.io.index.configs.v1"
#define OCI_LABEL_BUNDLE_MEDIATYPE "operators.operatorframework.io.bundle.mediatype.v1"
#define OCI_LABEL_BUNDLE_MANIFESTS "operators.operatorframework.io.bundle.manifests.v1"
#define OCI_LABEL_BUNDLE_METADATA "operators.operatorframework.io.bundle.metadata.v1"
#define OCI_LABEL_BUNDLE_PACKAGE "operators.operatorframework.io.bundle.package.v1"
#define OCI_LABEL_BUNDLE_CHANNELS "operators.operatorframework.io.bundle.channels.v1"
#define OCI_LABEL_BUNDLE_DEFAULT_CHANNEL "operators.operatorframework.io.bundle.channel.default.v1"

#endif

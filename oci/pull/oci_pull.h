/* oci pull side: resolve a reference to a digest, fetch and verify manifests,
 * configs and layers, and unpack layers safely into a directory.
 *
 * Layout (one job per file):
 *   oci_manifest.c  manifest / index JSON parsing, platform selection (oci_manifest.h)
 *   oci_fetch.c     digest resolution, verified manifest and blob downloads (oci_fetch.h)
 *   oci_unpack.c    applying tar layers under a root dir fd (oci_unpack.h)
 *   oci_unpack_path.c  entry path rules (private: oci_unpack_rules.h)
 *   oci_fsutil.c    fd-relative helpers: walk parents without symlinks, remove trees
 *   oci_pull.c      oci_pull / oci_pull_cached / oci_pull_catalog (temp dir + rename)
 *
 * Trust model: nothing the registry sends is trusted.  Every manifest and blob
 * is checked against the digest that names it (the Docker-Content-Digest header
 * is only compared, never believed alone), sizes are bounded before and while
 * downloading, and the unpacker never follows a symlink, never writes outside
 * the root and never creates device nodes. */
#ifndef OLM_OCI_PULL_H
#define OLM_OCI_PULL_H

#include <stdint.h>
#include <stdio.h>

#include "oci.h"
#include "oci_fetch.h"
#include "oci_manifest.h"
#include "oci_unpack.h"

/* ---------------------------------------------------------------- pulling (oci_pull.c) */

typedef struct oci_pull_opts {
    oci_registry_opts registry; /* insecure, auth_file, ca_path, timeout, progress */
    const char *prefix;         /* extract only this dir (see oci_unpacker_new), or NULL */
    int strip_prefix;
    int catalog;                /* catalog image: the prefix is the configs label,
                                   which must be present; `prefix` is ignored */
    const char *platform;       /* "os/arch[/variant]" for indexes; NULL = this host */
    int skip_config;            /* the image config is not fetched and labels_json is "{}":
                                   for bundle pulls, whose metadata is in the layers (one
                                   registry request fewer per pull); ignored for catalogs */
    oci_unpack_limits limits;
    /* Optional: told of each file as soon as a download has unpacked it, before the pull
     * ends (catalogd starts decoding catalog files then); see oci_unpacker_observe.  `path`
     * is in the pull's temp tree, which is renamed away when the pull ends; `rel` is below
     * the prefix (the fbc_root of a catalog pull).  Nothing is told on a cache hit. */
    oci_unpack_file_fn on_file;
    void *on_file_ctx;
} oci_pull_opts;

/* What a pull produced.  Strings owned; oci_pull_result_free. */
typedef struct oci_pull_result {
    char *digest_ref;  /* "registry/repository@sha256:..." (of the index for multi-arch) */
    char *labels_json; /* the config's Labels as a compact JSON object ("{}" if none or
                          skip_config) */
    char *dir;         /* the unpacked tree */
    char *fbc_root;    /* catalog pulls: dir + the label's path; else NULL */
    int cache_hit;     /* oci_pull_cached: 1 when nothing was downloaded */
} oci_pull_result;
void oci_pull_result_free(oci_pull_result *r);

/* Pulls `ref` and unpacks it into `dest`, which must not exist or be an empty
 * dir.  Everything is built in a temp dir next to `dest` and renamed into
 * place only on success: a failed pull leaves no partial tree. */
int oci_pull(const char *ref, const char *dest, const oci_pull_opts *opts,
             oci_pull_result *result, olm_error *err);

/* Cache-first pull into <base>/<owner>/<digest>/ (`owner` is one path
 * component, e.g. a ClusterCatalog name).  The tag is resolved on every call;
 * an existing entry for the digest is returned without downloading (cache_hit).
 * After a successful pull, other digests of that owner are removed.  The config
 * labels are kept beside the tree in <base>/<owner>/<digest>.json. */
int oci_pull_cached(const char *base, const char *owner, const char *ref,
                    const oci_pull_opts *opts, oci_pull_result *result, olm_error *err);

/* Removes what interrupted pulls left in the cache at `base`: every temp dir
 * ".<digest>.pull-XXXXXX" in <base>/<owner>/ (a pull killed with its process
 * leaves one; oci_pull_cached never touches dot-names, which may be pulls in
 * progress).  Call it only while nothing pulls into `base`, e.g. at start-up.
 * Returns how many it removed, or -1 with err set (a missing base is 0). */
int oci_pull_cache_sweep(const char *base, olm_error *err);

/* oci_pull_cached for catalog images (opts->catalog forced on): only the dir the
 * configs label names is extracted, and result->fbc_root points at it. */
int oci_pull_catalog(const char *base, const char *owner, const char *ref,
                     const oci_pull_opts *opts, oci_pull_result *result, olm_error *err);

#endif

/* image_temp: pull into a temporary directory, use, remove (image_temp.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "image_temp.h"

static void pull_opts_from_env(oci_pull_opts *opts, bool catalog)
{
    *opts = (oci_pull_opts){.catalog = catalog};
    const char *auth = getenv("REGISTRY_AUTH_FILE");
    opts->registry.auth_file = auth && *auth ? auth : NULL;
    opts->registry.insecure_hosts = getenv("OLMV1_INSECURE_REGISTRIES");
}

int image_temp_pull(const char *ref, bool catalog, image_temp_use use, void *data, olm_error *err)
{
    const char *leaf = catalog ? "catalog" : "bundle";
    const char *tmp = getenv("TMPDIR");
    char *parent = NULL, *dest = NULL;
    if (asprintf(&parent, "%s/olmv1-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", leaf) < 0) {
        olm_error_set(err, "out of memory");
        return IMAGE_TEMP_SETUP_FAILED;
    }
    if (!mkdtemp(parent)) {
        olm_error_set(err, "cannot create a temporary directory: %m");
        free(parent);
        return IMAGE_TEMP_SETUP_FAILED;
    }
    int rc = IMAGE_TEMP_SETUP_FAILED;
    oci_registries_conf *conf = NULL;
    if (asprintf(&dest, "%s/%s", parent, leaf) < 0) {
        dest = NULL;
        olm_error_set(err, "out of memory");
    } else if ((conf = oci_registries_conf_from_env(err))) {
        oci_pull_opts opts;
        pull_opts_from_env(&opts, catalog);
        opts.registry.registries = conf;
        oci_pull_result res;
        if (oci_pull(ref, dest, &opts, &res, err) != 0) {
            olm_error_wrap(err, "pulling %s image %s", leaf, ref);
            rc = IMAGE_TEMP_PULL_FAILED;
        } else {
            rc = use(catalog ? res.fbc_root : dest, &res, data, err);
            oci_pull_result_free(&res);
        }
        oci_registries_conf_free(conf);
    }
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        oci_remove_tree_at(fd, leaf, NULL);
        close(fd);
    }
    rmdir(parent);
    free(dest);
    free(parent);
    return rc;
}

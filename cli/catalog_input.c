/* catalog_input: a catalog directory or image reference (catalog_input.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog_input.h"
#include "oci_pull.h"

static int load_image(const char *ref, fbc_catalog **out, olm_error *err)
{
    const char *tmp = getenv("TMPDIR");
    char *parent = NULL, *dest = NULL;
    if (asprintf(&parent, "%s/olmv1-catalog-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
        return olm_error_set(err, "out of memory"), 1;
    if (!mkdtemp(parent)) {
        free(parent);
        olm_error_set(err, "cannot create a temporary directory: %m");
        return 1;
    }
    if (asprintf(&dest, "%s/catalog", parent) < 0) {
        rmdir(parent);
        free(parent);
        olm_error_set(err, "out of memory");
        return 1;
    }
    oci_pull_opts opts = {.catalog = 1};
    const char *auth = getenv("REGISTRY_AUTH_FILE");
    opts.registry.auth_file = auth && *auth ? auth : NULL;
    opts.registry.insecure_hosts = getenv("OLMV1_INSECURE_REGISTRIES");
    oci_pull_result res;
    int rc = 0;
    oci_registries_conf *conf = oci_registries_conf_from_env(err);
    opts.registry.registries = conf;
    if (!conf) {
        rc = 1;
    } else if (oci_pull(ref, dest, &opts, &res, err) != 0) {
        olm_error_wrap(err, "pulling catalog image %s", ref);
        rc = 5;
    } else {
        if (!(*out = fbc_load_dir(res.fbc_root, err)))
            rc = 1;
        oci_pull_result_free(&res);
    }
    oci_registries_conf_free(conf);
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        oci_remove_tree_at(fd, "catalog", NULL);
        close(fd);
    }
    rmdir(parent);
    free(dest);
    free(parent);
    return rc;
}

int catalog_input_load(const char *arg, fbc_catalog **out, olm_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return (*out = fbc_load_dir(arg, err)) ? 0 : 1;
    /* Not a directory: an image reference when it names its registry (a first component
     * with '.' or ':', or localhost), so that a mistyped path never goes to docker.io. */
    size_t first = strcspn(arg, "/");
    bool registry = arg[first] == '/' && (memchr(arg, '.', first) || memchr(arg, ':', first) ||
                                          (first == 9 && strncmp(arg, "localhost", 9) == 0));
    if (!registry || arg[0] == '.')
        return (*out = fbc_load_dir(arg, err)) ? 0 : 1;
    oci_ref ref;
    if (oci_ref_parse(arg, &ref, err) != 0)
        return 5;
    oci_ref_free(&ref);
    return load_image(arg, out, err);
}

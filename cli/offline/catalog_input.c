/* catalog_input: a catalog directory or image reference (catalog_input.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog_input.h"
#include "image_temp.h"

static int load_dir(const char *dir, const oci_pull_result *res, void *data, olm_error *err)
{
    (void)res;
    fbc_catalog **out = data;
    return (*out = fbc_load_dir(dir, err)) ? 0 : 1;
}

static int load_image(const char *ref, fbc_catalog **out, olm_error *err)
{
    int rc = image_temp_pull(ref, true, load_dir, out, err);
    return rc == IMAGE_TEMP_PULL_FAILED ? 5 : rc == IMAGE_TEMP_SETUP_FAILED ? 1 : rc;
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

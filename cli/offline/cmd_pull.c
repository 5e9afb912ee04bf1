/* olmv1 image pull: resolve, download, verify and safely unpack an image into a
 * directory, the way catalogd (--catalog) and operator-controller (bundles) do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "oci_pull.h"
#include "olm_parse.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 image pull REF DIR [options]\n\n"
            "Resolves REF to a digest, downloads the manifest (for a multi-arch index, the\n"
            "one for this machine), the config and the layers, checks every one against its\n"
            "digest, and unpacks the layers in order into DIR, which must not exist or be\n"
            "empty.  The tree is built beside DIR and moved into place only when complete.\n"
            "Unpacking refuses absolute paths, \"..\", writes through symlinks, links out of\n"
            "the tree and oversized content; devices, fifos and sockets are skipped; files\n"
            "belong to you whatever the image says.\n\n"
            "Prints the canonical reference (registry/repository@sha256:...) on success;\n"
            "with --catalog, the catalog (FBC) directory on a second line.\n\n"
            "Options:\n"
            "  --catalog           a catalog image: only the directory named by its label\n"
            "                      %s is extracted\n"
            "                      (an image without the label is an error)\n"
            "  --platform OS/ARCH[/VARIANT]  pick this platform from an index\n"
            "                      (default: this machine)\n"
            "  --authfile PATH     docker config JSON with an \"auths\" entry for the registry\n"
            "                      (default: $REGISTRY_AUTH_FILE)\n"
            "  --insecure          TLS without verification, else plain HTTP, for every registry\n"
            "                      (so are those in $OLMV1_INSECURE_REGISTRIES; a loopback\n"
            "                      registry not named there speaks plain HTTP)\n"
            "  --registries-conf PATH  pull as containers-registries.conf v2 says (mirrors,\n"
            "                      blocked and insecure registries), with drop-ins PATH.d/*.conf\n"
            "                      (default: $CONTAINERS_REGISTRIES_CONF, else\n"
            "                      /etc/containers/registries.conf when it exists)\n"
            "  --max-bytes N       refuse images whose files add up to more (default 2 GiB)\n"
            "  --max-files N       refuse images with more entries, counting the parent\n"
            "                      directories they imply (default 200000)\n"
            "  --max-skipped-bytes N  refuse images whose entries outside the extracted\n"
            "                      directory (decompressed only to be skipped) add up to more\n"
            "                      (default 4 GiB)\n"
            "  --pull-timeout DURATION  give up when the whole pull takes longer\n"
            "                      (default 10m; e.g. 90s, 30m)\n"
            "  -q, --quiet         no progress messages on stderr\n"
            "  -h, --help          show this help\n",
            OCI_LABEL_CATALOG_CONFIGS);
}

static void progress(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "%s\n", msg);
}

/* "--name VALUE" or "--name=VALUE"; NULL if this is not that option. */
static const char *opt_value(const char *name, int argc, char **argv, int *i, int *missing)
{
    size_t n = strlen(name);
    const char *s = argv[*i];
    if (strncmp(s, name, n) != 0)
        return NULL;
    if (s[n] == '=')
        return s + n + 1;
    if (s[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int parse_count(const char *v, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || n == 0 || v[0] == '-')
        return -1;
    *out = n;
    return 0;
}

int cmd_image_pull(int argc, char **argv)
{
    oci_pull_opts opts = {.registry = {.deadline_seconds = OCI_DEFAULT_PULL_TIMEOUT_SECONDS}};
    const char *pos[2];
    int npos = 0, only_pos = 0, quiet = 0;
    const char *registries_conf = NULL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v;
        int missing = 0;
        if (!only_pos && strcmp(s, "--") == 0) {
            only_pos = 1;
        } else if (!only_pos && (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)) {
            usage(stdout);
            return 0;
        } else if (!only_pos && (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0)) {
            quiet = 1;
        } else if (!only_pos && strcmp(s, "--insecure") == 0) {
            opts.registry.insecure = 1;
        } else if (!only_pos && strcmp(s, "--catalog") == 0) {
            opts.catalog = 1;
        } else if (!only_pos && ((v = opt_value("--authfile", argc, argv, &i, &missing)) ||
                                 missing)) {
            if (!v || !*v) {
                fprintf(stderr, "olmv1 %s: --authfile needs a path\n", argv[0]);
                return 1;
            }
            opts.registry.auth_file = v;
        } else if (!only_pos && ((v = opt_value("--registries-conf", argc, argv, &i, &missing)) ||
                                 missing)) {
            if (!v || !*v) {
                fprintf(stderr, "olmv1 %s: --registries-conf needs a path\n", argv[0]);
                return 1;
            }
            registries_conf = v;
        } else if (!only_pos && ((v = opt_value("--platform", argc, argv, &i, &missing)) ||
                                 missing)) {
            if (!v || !*v) {
                fprintf(stderr, "olmv1 %s: --platform needs OS/ARCH[/VARIANT]\n", argv[0]);
                return 1;
            }
            opts.platform = v;
        } else if (!only_pos && ((v = opt_value("--max-bytes", argc, argv, &i, &missing)) ||
                                 missing)) {
            if (!v || parse_count(v, &opts.limits.max_bytes) != 0) {
                fprintf(stderr, "olmv1 %s: --max-bytes needs a positive number\n", argv[0]);
                return 1;
            }
        } else if (!only_pos && ((v = opt_value("--max-files", argc, argv, &i, &missing)) ||
                                 missing)) {
            if (!v || parse_count(v, &opts.limits.max_files) != 0) {
                fprintf(stderr, "olmv1 %s: --max-files needs a positive number\n", argv[0]);
                return 1;
            }
        } else if (!only_pos && ((v = opt_value("--max-skipped-bytes", argc, argv, &i, &missing)) ||
                                 missing)) {
            if (!v || parse_count(v, &opts.limits.max_skipped_bytes) != 0) {
                fprintf(stderr, "olmv1 %s: --max-skipped-bytes needs a positive number\n", argv[0]);
                return 1;
            }
        } else if (!only_pos && ((v = opt_value("--pull-timeout", argc, argv, &i, &missing)) ||
                                 missing)) {
            uint64_t ms;
            if (!v || olm_parse_duration(v, &ms) != 0 || ms < 1000) {
                fprintf(stderr, "olmv1 %s: --pull-timeout needs a duration of at least 1s (e.g. 10m)\n", argv[0]);
                return 1;
            }
            opts.registry.deadline_seconds = (long)(ms / 1000);
        } else if (!only_pos && s[0] == '-' && s[1]) {
            fprintf(stderr, "olmv1 %s: unknown option %s (see --help)\n", argv[0], s);
            return 1;
        } else if (npos < 2) {
            pos[npos++] = s;
        } else {
            fprintf(stderr, "olmv1 %s: unexpected argument \"%s\" (expected REF DIR)\n", argv[0], s);
            return 1;
        }
    }
    if (npos != 2) {
        fprintf(stderr, "olmv1 %s: expected REF and DIR\n", argv[0]);
        usage(stderr);
        return 1;
    }
    if (!opts.registry.auth_file) {
        const char *env = getenv("REGISTRY_AUTH_FILE");
        if (env && *env)
            opts.registry.auth_file = env;
    }
    opts.registry.insecure_hosts = getenv("OLMV1_INSECURE_REGISTRIES");
    opts.registry.progress = quiet ? NULL : progress;

    oci_pull_result res;
    olm_error err;
    oci_registries_conf *conf = NULL;
    if (registries_conf ? !(conf = oci_registries_conf_load(registries_conf, true, &err))
                        : !(conf = oci_registries_conf_from_env(&err))) {
        fprintf(stderr, "olmv1 %s: %s%s\n", argv[0], registries_conf ? "--registries-conf: " : "", err.msg);
        return 1;
    }
    opts.registry.registries = conf;
    int prc = oci_pull(pos[0], pos[1], &opts, &res, &err);
    oci_registries_conf_free(conf);
    if (prc != 0) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        return 1;
    }
    int rc = 0;
    if (printf("%s\n", res.digest_ref) < 0 || (res.fbc_root && printf("%s\n", res.fbc_root) < 0) ||
        fflush(stdout) != 0)
        rc = cli_stdout_failed(argv[0]);
    oci_pull_result_free(&res);
    return rc;
}

/* olmv1 image push | catalog push | bundle push: build a one-layer OCI image
 * from a directory and push it to a registry.  The three differ only in where
 * the content goes inside the layer and which labels the config carries. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "oci.h"

enum push_kind { PUSH_IMAGE, PUSH_CATALOG, PUSH_BUNDLE };

#define MAX_RUN_ARGS 32 /* --entrypoint words, --env entries */

struct push_args {
    const char *dir;
    const char *user;                    /* --user */
    const char *entrypoint[MAX_RUN_ARGS]; /* --entrypoint, in order */
    size_t nentrypoint;
    const char *env[MAX_RUN_ARGS];       /* --env KEY=VALUE */
    size_t nenv;
    const char *ref;
    oci_labels labels; /* from --label, applied last */
    const char *auth_file;
    int insecure;
    int quiet;
    uint64_t chunk_size;
};

static void usage(FILE *out, const char *cmd, enum push_kind kind)
{
    fprintf(out, "Usage: olmv1 %s DIR REF [--label KEY=VALUE ...] [options]\n\n", cmd);
    switch (kind) {
    case PUSH_IMAGE:
        fprintf(out, "Builds a one-layer OCI image holding DIR's content at the root of the\n"
                     "image and pushes it to REF.\n");
        break;
    case PUSH_CATALOG:
        fprintf(out, "Builds a catalog image: DIR (a File-Based Catalog) goes under /configs in\n"
                     "the image, and the label %s=/configs\n"
                     "tells catalogd where to find it.  Pushes it to REF.\n",
                OCI_LABEL_CATALOG_CONFIGS);
        break;
    case PUSH_BUNDLE:
        fprintf(out, "Builds a registry+v1 bundle image: DIR must hold manifests/ and\n"
                     "metadata/annotations.yaml; they go to the root of the image, and the\n"
                     "bundle labels (media type, manifests/metadata dirs, and every entry of\n"
                     "annotations.yaml, e.g. package and channels) go into the config.\n");
        break;
    }
    fprintf(out,
            "\nREF is [registry[:port]/]repository[:tag]; the registry defaults to docker.io\n"
            "and the tag to latest.  On success the pushed image is printed as\n"
            "registry/repository@sha256:<digest>.\n\n"
            "Options:\n"
            "  --label KEY=VALUE   add a label to the image config (repeatable)\n"
            "  --entrypoint ARG    the image's Entrypoint; repeat for each word\n"
            "  --user UID[:GID]    the user the image runs as (numeric, e.g. 65532:65532)\n"
            "  --env KEY=VALUE     an environment variable of the image (repeatable)\n"
            "  --authfile PATH     docker config JSON with an \"auths\" entry for the registry\n"
            "                      (default: $REGISTRY_AUTH_FILE)\n"
            "  --insecure          TLS without verification, else plain HTTP, for every registry\n"
            "                      (so are those in $OLMV1_INSECURE_REGISTRIES, comma-separated;\n"
            "                      loopback registries not named there speak plain HTTP)\n"
            "  --chunk-size BYTES  upload blobs bigger than this in chunks (default 64 MiB)\n"
            "  -q, --quiet         no progress messages on stderr\n"
            "  -h, --help          show this help\n");
}

/* When `s` is option `name` ("--name VALUE" or "--name=VALUE"), sets *val (NULL when the
 * value is missing), steps *i past a separate value and returns 1; else returns 0. */
static int option_value(const char *s, const char *name, int argc, char **argv, int *i, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(s, name, n) != 0 || (s[n] != '\0' && s[n] != '='))
        return 0;
    *val = s[n] == '=' ? s + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    return 1;
}

/* --entrypoint, --user and --env; 1 when `s` was one of them, -1 after a usage error. */
static int parse_run_option(const char *s, int argc, char **argv, int *i, struct push_args *a)
{
    const char *val = NULL;
    const char **list = NULL;
    size_t *n = NULL;
    if (option_value(s, "--entrypoint", argc, argv, i, &val)) {
        list = a->entrypoint, n = &a->nentrypoint;
    } else if (option_value(s, "--env", argc, argv, i, &val)) {
        list = a->env, n = &a->nenv;
        if (val && (val[0] == '=' || !strchr(val, '='))) {
            fprintf(stderr, "olmv1 %s: --env needs KEY=VALUE, got \"%s\"\n", argv[0], val);
            return -1;
        }
    } else if (option_value(s, "--user", argc, argv, i, &val)) {
        if (!val || !*val) {
            fprintf(stderr, "olmv1 %s: --user needs UID[:GID]\n", argv[0]);
            return -1;
        }
        a->user = val;
        return 1;
    } else {
        return 0;
    }
    if (!val || !*val) {
        fprintf(stderr, "olmv1 %s: %.*s needs a value\n", argv[0], (int)strcspn(s, "="), s);
        return -1;
    }
    if (*n == MAX_RUN_ARGS) {
        fprintf(stderr, "olmv1 %s: at most %d %.*s values\n", argv[0], MAX_RUN_ARGS, (int)strcspn(s, "="), s);
        return -1;
    }
    list[(*n)++] = val;
    return 1;
}

/* Returns 0 to go on, 1 for a usage error, 2 after --help. */
static int parse_args(int argc, char **argv, enum push_kind kind, struct push_args *a)
{
    olm_error err;
    const char *pos[2];
    int npos = 0, only_pos = 0, run;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *val = NULL;
        if (!only_pos && strcmp(s, "--") == 0) {
            only_pos = 1;
        } else if (!only_pos && (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)) {
            usage(stdout, argv[0], kind);
            return 2;
        } else if (!only_pos && (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0)) {
            a->quiet = 1;
        } else if (!only_pos && strcmp(s, "--insecure") == 0) {
            a->insecure = 1;
        } else if (!only_pos && (strcmp(s, "--label") == 0 || strncmp(s, "--label=", 8) == 0)) {
            val = s[7] == '=' ? s + 8 : (i + 1 < argc ? argv[++i] : NULL);
            if (!val) {
                fprintf(stderr, "olmv1 %s: --label needs KEY=VALUE\n", argv[0]);
                return 1;
            }
            if (oci_labels_set_kv(&a->labels, val, &err) != 0) {
                fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
                return 1;
            }
        } else if (!only_pos && (strcmp(s, "--authfile") == 0 || strncmp(s, "--authfile=", 11) == 0)) {
            a->auth_file = s[10] == '=' ? s + 11 : (i + 1 < argc ? argv[++i] : NULL);
            if (!a->auth_file || !*a->auth_file) {
                fprintf(stderr, "olmv1 %s: --authfile needs a path\n", argv[0]);
                return 1;
            }
        } else if (!only_pos &&
                   (strcmp(s, "--chunk-size") == 0 || strncmp(s, "--chunk-size=", 13) == 0)) {
            val = s[12] == '=' ? s + 13 : (i + 1 < argc ? argv[++i] : NULL);
            char *end = NULL;
            errno = 0;
            unsigned long long v = val ? strtoull(val, &end, 10) : 0;
            if (!val || errno || end == val || *end || v == 0 || val[0] == '-') {
                fprintf(stderr, "olmv1 %s: --chunk-size needs a positive number of bytes\n",
                        argv[0]);
                return 1;
            }
            a->chunk_size = v;
        } else if (!only_pos && (run = parse_run_option(s, argc, argv, &i, a)) != 0) {
            if (run < 0)
                return 1;
        } else if (!only_pos && s[0] == '-' && s[1]) {
            fprintf(stderr, "olmv1 %s: unknown option %s (see --help)\n", argv[0], s);
            return 1;
        } else if (npos < 2) {
            pos[npos++] = s;
        } else {
            fprintf(stderr, "olmv1 %s: unexpected argument \"%s\" (expected DIR REF)\n", argv[0], s);
            return 1;
        }
    }
    if (npos != 2) {
        fprintf(stderr, "olmv1 %s: expected DIR and REF\n", argv[0]);
        usage(stderr, argv[0], kind);
        return 1;
    }
    a->dir = pos[0];
    a->ref = pos[1];
    if (!a->auth_file) {
        const char *env = getenv("REGISTRY_AUTH_FILE");
        if (env && *env)
            a->auth_file = env;
    }
    return 0;
}

static void progress(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "%s\n", msg);
}

/* A catalog with nothing in it is almost always a wrong path. */
static int dir_has_entries(const char *dir, olm_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return olm_error_set(err, "catalog directory %s: %s", dir, strerror(errno));
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL)
        found = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    if (!found)
        return olm_error_set(err, "catalog directory %s is empty", dir);
    return 0;
}

static int run_push(int argc, char **argv, enum push_kind kind)
{
    struct push_args a = {0};
    oci_labels labels = {0};
    oci_ref ref = {0};
    oci_image img = {0};
    oci_registry *reg = NULL;
    olm_error err;
    int rc = 1;
    char *out_ref = NULL;
    static const char *const created_by[] = {"olmv1 image push", "olmv1 catalog push",
                                             "olmv1 bundle push"};

    int pr = parse_args(argc, argv, kind, &a);
    if (pr != 0) {
        oci_labels_free(&a.labels);
        return pr == 2 ? 0 : 1;
    }
    if (oci_ref_parse(a.ref, &ref, &err) != 0)
        goto fail;
    struct stat st;
    if (stat(a.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        olm_error_set(&err, "%s is not a directory", a.dir);
        goto fail;
    }

    /* Labels: the kind's own first, then --label (which may add or override,
     * except for the one that must match the layer layout). */
    const char *prefix = NULL;
    if (kind == PUSH_CATALOG) {
        if (oci_labels_get(&a.labels, OCI_LABEL_CATALOG_CONFIGS)) {
            olm_error_set(&err, "the label %s is set by catalog push (to /configs, where the "
                                "catalog goes); do not pass it",
                          OCI_LABEL_CATALOG_CONFIGS);
            goto fail;
        }
        if (dir_has_entries(a.dir, &err) != 0)
            goto fail;
        prefix = "configs";
        if (oci_labels_set(&labels, OCI_LABEL_CATALOG_CONFIGS, "/configs", &err) != 0)
            goto fail;
    } else if (kind == PUSH_BUNDLE) {
        if (oci_bundle_labels(a.dir, &labels, &err) != 0)
            goto fail;
    }
    for (size_t i = 0; i < a.labels.len; i++)
        if (oci_labels_set(&labels, a.labels.items[i].key, a.labels.items[i].value, &err) != 0)
            goto fail;

    oci_run_config run = {.user = a.user, .entrypoint = a.entrypoint, .nentrypoint = a.nentrypoint,
                          .env = a.env, .nenv = a.nenv};
    if (oci_image_build(a.dir, prefix, labels.items, labels.len, &run, created_by[kind], &img, &err) != 0)
        goto fail;

    oci_registry_opts opts = {
        .insecure = a.insecure,
        .insecure_hosts = getenv("OLMV1_INSECURE_REGISTRIES"),
        .auth_file = a.auth_file,
        .chunk_size = a.chunk_size,
        .progress = a.quiet ? NULL : progress,
    };
    if (!(reg = oci_registry_new(ref.registry, &opts, &err)))
        goto fail;
    if (oci_image_push(reg, &ref, &img, &err) != 0)
        goto fail;
    if (!(out_ref = oci_ref_with_digest(&ref, img.manifest_digest))) {
        olm_error_set(&err, "out of memory");
        goto fail;
    }
    printf("%s\n", out_ref);
    rc = fflush(stdout) != 0 ? cli_stdout_failed(argv[0]) : 0;
    goto out;
fail:
    fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
out:
    free(out_ref);
    oci_registry_free(reg);
    oci_image_free(&img);
    oci_ref_free(&ref);
    oci_labels_free(&labels);
    oci_labels_free(&a.labels);
    return rc;
}

int cmd_image_push(int argc, char **argv) { return run_push(argc, argv, PUSH_IMAGE); }
int cmd_catalog_push(int argc, char **argv) { return run_push(argc, argv, PUSH_CATALOG); }
int cmd_bundle_push(int argc, char **argv) { return run_push(argc, argv, PUSH_BUNDLE); }

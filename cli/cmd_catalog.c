/* olmv1 catalog validate|render: the FBC library (api/fbc.h) on a directory. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fbc.h"

static void validate_usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: olmv1 %s DIR\n\n"
            "Loads the File-Based Catalog under DIR (recursively, honouring .indexignore)\n"
            "and checks the FBC invariants (one olm.package per package, defaultChannel\n"
            "exists, no duplicate channels/bundles, channel entries name bundles of the\n"
            "package, every bundle is in a channel, one head per channel, one olm.package\n"
            "property with strict semver version, valid olm.deprecations).\n\n"
            "Output: a one-line summary on stdout when the catalog is valid.  Otherwise every\n"
            "problem goes to stdout, one per line as \"<file>:<line>: <rule>: <detail>\" (file\n"
            "relative to DIR), followed by a count on stderr.  A file that is not valid\n"
            "JSON/YAML stops the load with \"<file>:<line>: <reason>\" on stderr.\n\n"
            "Exit status: 0 valid, 1 invalid or unreadable, 2 usage error.\n",
            argv0);
}

static void render_usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: olmv1 %s DIR\n\n"
            "Prints every blob of the File-Based Catalog under DIR as one line of normalised\n"
            "JSON (keys sorted, compact, no HTML escaping, numbers as float64), in load order:\n"
            "files in lexical walk order, blobs in file order.  These are the bytes catalogd\n"
            "stores in catalog.jsonl.  The catalog is not validated (see 'catalog validate').\n\n"
            "Exit status: 0 rendered, 1 load error (\"<file>:<line>: <reason>\" on stderr),\n"
            "2 usage error.\n",
            argv0);
}

/* Parses "[--help] DIR"; returns the directory, or NULL with *rc set. */
static const char *parse_dir(int argc, char **argv, void (*usage)(FILE *, const char *), int *rc)
{
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout, argv[0]);
            *rc = 0;
            return NULL;
        }
        if (argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--") != 0) {
            fprintf(stderr, "olmv1 %s: unknown option %s\n", argv[0], argv[i]);
            usage(stderr, argv[0]);
            *rc = 2;
            return NULL;
        }
        if (!strcmp(argv[i], "--") && i + 1 < argc)
            i++;
        if (dir) {
            fprintf(stderr, "olmv1 %s: expected one directory, got more\n", argv[0]);
            *rc = 2;
            return NULL;
        }
        dir = argv[i];
    }
    if (!dir) {
        usage(stderr, argv[0]);
        *rc = 2;
    }
    return dir;
}

int cmd_catalog_validate(int argc, char **argv)
{
    int rc = 0;
    const char *dir = parse_dir(argc, argv, validate_usage, &rc);
    if (!dir)
        return rc;
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_dir(dir, &err);
    if (!c) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        return 1;
    }
    fbc_problems probs;
    int n = fbc_validate(c, &probs);
    if (n < 0) {
        fprintf(stderr, "olmv1 %s: out of memory\n", argv[0]);
        fbc_catalog_free(c);
        return 1;
    }
    if (n == 0) {
        printf("%s: valid: %zu packages, %zu channels, %zu bundles, %zu blobs\n", dir,
               c->npackages, c->nchannels, c->nbundles, c->nmetas);
    } else {
        for (size_t i = 0; i < probs.n; i++)
            printf("%s\n", probs.items[i]);
        fprintf(stderr, "%s: invalid: %zu problem%s\n", dir, probs.n, probs.n == 1 ? "" : "s");
    }
    fbc_problems_free(&probs);
    fbc_catalog_free(c);
    if (fflush(stdout) != 0)
        return cli_stdout_failed(argv[0]);
    return n == 0 ? 0 : 1;
}

int cmd_catalog_render(int argc, char **argv)
{
    int rc = 0;
    const char *dir = parse_dir(argc, argv, render_usage, &rc);
    if (!dir)
        return rc;
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_dir(dir, &err);
    if (!c) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        return 1;
    }
    for (size_t i = 0; i < c->nmetas && rc == 0; i++)
        if (fwrite(c->metas[i].line, 1, c->metas[i].line_len, stdout) != c->metas[i].line_len)
            rc = 1;
    if (rc || fflush(stdout) != 0) {
        rc = cli_stdout_failed(argv[0]); /* before anything else can touch errno */
        fbc_catalog_free(c);
        return rc;
    }
    fbc_catalog_free(c);
    return 0;
}

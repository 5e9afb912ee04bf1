/* olmv1 catalog validate|render: the FBC library (api/fbc.h) on a directory (render:
 * or a catalog image). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "catalog_input.h"
#include "cli_output.h"
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
            "Usage: olmv1 %s DIR|IMAGE [-o jsonl|json|yaml]\n\n"
            "Prints every blob of the File-Based Catalog under DIR, or in the catalog image IMAGE\n"
            "(a reference naming its registry, e.g. quay.io/org/catalog:tag; pulled like `olmv1\n"
            "image pull --catalog`, $REGISTRY_AUTH_FILE for credentials), in load order: files in\n"
            "lexical walk order, blobs in file order.  The catalog is not validated (see 'catalog\n"
            "validate').\n\n"
            "  -o jsonl   one line of normalised JSON per blob (keys sorted, compact, no HTML\n"
            "             escaping, numbers as float64): the bytes catalogd stores in\n"
            "             catalog.jsonl (default)\n"
            "  -o json    each blob as indented JSON\n"
            "  -o yaml    each blob as a YAML document\n\n"
            "Exit status: 0 rendered, 1 load error (\"<file>:<line>: <reason>\" on stderr),\n"
            "2 usage error, 5 the image cannot be pulled.\n",
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

/* Writes the blobs as -o asks; 0 or -1. */
static int write_blobs(const fbc_catalog *c, const char *format)
{
    if (strcmp(format, "jsonl") == 0) {
        for (size_t i = 0; i < c->nmetas; i++)
            if (fwrite(c->metas[i].line, 1, c->metas[i].line_len, stdout) != c->metas[i].line_len)
                return -1;
        return 0;
    }
    json_t *all = strcmp(format, "yaml") == 0 ? json_array() : NULL;
    int rc = strcmp(format, "yaml") == 0 && !all ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < c->nmetas; i++) {
        json_t *blob = json_loadb(c->metas[i].line, c->metas[i].line_len, 0, NULL);
        if (!blob)
            rc = -1;
        else if (all)
            rc = json_array_append_new(all, blob);
        else {
            rc = cli_write_json(blob, stdout);
            json_decref(blob);
        }
    }
    if (rc == 0 && all)
        rc = cli_write_yaml_docs(all, stdout);
    json_decref(all);
    return rc;
}

int cmd_catalog_render(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = "jsonl";
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'o': format = optarg; break;
        case 'h': render_usage(stdout, argv[0]); return 0;
        default: render_usage(stderr, argv[0]); return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "olmv1 %s: expected one DIR or IMAGE\n", argv[0]);
        render_usage(stderr, argv[0]);
        return 2;
    }
    if (strcmp(format, "jsonl") != 0 && strcmp(format, "json") != 0 && strcmp(format, "yaml") != 0) {
        fprintf(stderr, "olmv1 %s: -o must be jsonl, json or yaml, got \"%s\"\n", argv[0], format);
        return 2;
    }
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = NULL;
    int rc = catalog_input_load(argv[optind], &c, &err);
    if (rc != 0) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        return rc;
    }
    rc = write_blobs(c, format);
    if (rc || fflush(stdout) != 0) {
        rc = cli_stdout_failed(argv[0]); /* before anything else can touch errno */
        fbc_catalog_free(c);
        return rc;
    }
    fbc_catalog_free(c);
    return 0;
}

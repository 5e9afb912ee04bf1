/* olmv1: the offline companion of catalogd and operator-controller, and a client of
 * both on a live cluster. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "commands.h"
#include "olm_version.h"

/* `olmv1 version`: the same text as `catalogd version` and `operator-controller version`. */
static int cmd_version(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("Usage: olmv1 version\n\nPrints \"olmv1 <version>\": git describe --tags --always --dirty of the build.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "olmv1 version: takes no arguments, got \"%s\"\n", argv[1]);
        return 2;
    }
    printf("olmv1 %s\n", OLMV1_VERSION);
    return 0;
}

const struct cli_command cli_commands[] = {
    {"search", cmd_search, "list the packages, channels and versions the cluster's catalogs serve"},
    {"install extension", cmd_install_extension, "create a ClusterExtension (and with --create-rbac its least RBAC)"},
    {"upgrade extension", cmd_upgrade_extension, "change a ClusterExtension's version, channels or upgrade policy"},
    {"uninstall extension", cmd_uninstall_extension, "delete a ClusterExtension (and --delete-rbac its RBAC)"},
    {"explain extension", cmd_explain_extension, "what is installed, what the resolver sees now, what blocks an upgrade"},
    {"get", cmd_get, "list ClusterExtensions or ClusterCatalogs, with what is wrong with them"},
    {"semver match", cmd_semver_match, "check whether a version satisfies a range"},
    {"semver compare", cmd_semver_compare, "compare two versions by semver precedence"},
    {"catalog validate", cmd_catalog_validate, "validate a File-Based Catalog directory"},
    {"catalog render", cmd_catalog_render, "print a catalog (directory or image) as JSON lines, JSON or YAML"},
    {"catalog list", cmd_catalog_list, "list a catalog's packages, channels or bundles (directory or image)"},
    {"catalog graph", cmd_catalog_graph, "draw a package's upgrade graph as SVG, DOT or Mermaid (directory or image)"},
    {"catalog template", cmd_catalog_template, "render an opm basic or semver catalog template into a catalog"},
    {"catalog push", cmd_catalog_push, "build a catalog image from a directory and push it"},
    {"bundle push", cmd_bundle_push, "build a registry+v1 bundle image from a directory and push it"},
    {"bundle render", cmd_bundle_render, "render a registry+v1 bundle directory to Kubernetes manifests"},
    {"image pull", cmd_image_pull, "pull an image (or a catalog image's FBC) into a directory"},
    {"image push", cmd_image_push, "build a one-layer OCI image from a directory and push it"},
    {"resolve", cmd_resolve, "explain which bundle a ClusterExtension would install"},
    {"upgradeable", cmd_upgradeable, "check which extensions block an OpenShift minor upgrade"},
    {"version", cmd_version, "print the version (git describe of the build)"},
    {"completion", cmd_completion, "print a shell completion script: bash, zsh or fish"},
    {"__complete", cmd_complete, NULL},
};

#define NCOMMANDS (sizeof cli_commands / sizeof cli_commands[0])
const size_t cli_ncommands = NCOMMANDS;

static void usage(FILE *out)
{
    fprintf(out, "Usage: olmv1 COMMAND [ARGS...]\n\nCommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (cli_commands[i].summary)
            fprintf(out, "  %-20s %s\n", cli_commands[i].path, cli_commands[i].summary);
    fprintf(out, "\nRun 'olmv1 COMMAND --help' for the options of a command.  Commands that talk to a\n"
                 "cluster take --kubeconfig FILE and --context NAME (default: $KUBECONFIG, in-cluster,\n"
                 "~/.kube/config; its current-context).\n\n" CLI_EXIT_CODES_HELP);
}

/* Whether `word` is the first word of a two-word command (a group such as "catalog"). */
static bool is_group(const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strncmp(cli_commands[i].path, word, n) == 0 && cli_commands[i].path[n] == ' ')
            return true;
    return false;
}

static void group_usage(FILE *out, const char *group)
{
    size_t n = strlen(group);
    fprintf(out, "Usage: olmv1 %s COMMAND [ARGS...]\n\nCommands:\n", group);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strncmp(cli_commands[i].path, group, n) == 0 && cli_commands[i].path[n] == ' ')
            fprintf(out, "  %-20s %s\n", cli_commands[i].path, cli_commands[i].summary);
    fprintf(out, "\nRun 'olmv1 %s COMMAND --help' for the options of a command.\n", group);
}

/* Matches argv[1] (and argv[2] for two-word commands) against a command path.
 * Returns how many argv words the path used, or 0. */
static int match_path(const char *path, int argc, char **argv)
{
    const char *space = strchr(path, ' ');
    if (!space)
        return argc > 1 && strcmp(argv[1], path) == 0 ? 1 : 0;
    size_t first = (size_t)(space - path);
    if (argc > 2 && strlen(argv[1]) == first && strncmp(argv[1], path, first) == 0 &&
        strcmp(argv[2], space + 1) == 0)
        return 2;
    return 0;
}

int main(int argc, char **argv)
{
    /* A peer that hangs up (registry, catalogd, apiserver, or the reader of our stdout) is
     * an EPIPE to handle, not a silent death; see cli_stdout_failed for stdout. */
    signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        int used = match_path(cli_commands[i].path, argc, argv);
        if (used) {
            /* argv[0] becomes the command path so usage messages can name it. */
            char *sub_argv0 = (char *)cli_commands[i].path;
            char **sub = argv + used;
            sub[0] = sub_argv0;
            return cli_commands[i].run(argc - used, sub);
        }
    }
    if (is_group(argv[1])) {
        if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0 ||
                         strcmp(argv[2], "help") == 0)) {
            group_usage(stdout, argv[1]);
            return 0;
        }
        if (argc == 2)
            fprintf(stderr, "olmv1 %s: say which command\n", argv[1]);
        else
            fprintf(stderr, "olmv1 %s: unknown command \"%s\"\n", argv[1], argv[2]);
        group_usage(stderr, argv[1]);
        return 2;
    }
    fprintf(stderr, "olmv1: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}

/* Each olmv1 command is one function in its own cli/cmd_*.c file.  It receives the
 * arguments after the command words (argv[0] is the command path, e.g. "semver match")
 * and returns the process exit code. */
#ifndef OLMV1_CLI_COMMANDS_H
#define OLMV1_CLI_COMMANDS_H

#include <stddef.h>

/* The command table (main.c): what `olmv1 --help` lists and completion offers. */
struct cli_command {
    const char *path; /* one or two words */
    int (*run)(int argc, char **argv);
    const char *summary; /* NULL: hidden */
};
extern const struct cli_command cli_commands[];
extern const size_t cli_ncommands;

int cmd_semver_match(int argc, char **argv);
int cmd_semver_compare(int argc, char **argv);
int cmd_catalog_validate(int argc, char **argv);
int cmd_catalog_render(int argc, char **argv);
int cmd_catalog_list(int argc, char **argv);
int cmd_catalog_template(int argc, char **argv);
int cmd_catalog_graph(int argc, char **argv);
int cmd_resolve(int argc, char **argv);
int cmd_image_push(int argc, char **argv);
int cmd_catalog_push(int argc, char **argv);
int cmd_bundle_push(int argc, char **argv);
int cmd_image_pull(int argc, char **argv);
int cmd_bundle_render(int argc, char **argv);
int cmd_upgradeable(int argc, char **argv);

/* SIGPIPE is ignored (main), so a reader of stdout that went away shows up as EPIPE from
 * stdio.  Call this right after a write to stdout failed (errno still set): EPIPE, e.g.
 * `olmv1 catalog render DIR | head`, ends the command quietly with CLI_EXIT_BROKEN_PIPE,
 * what a shell shows for a command killed by SIGPIPE; anything else prints
 * "olmv1 <argv0>: writing to stdout: <reason>" and gives 1.  Returns the exit code. */
int cli_stdout_failed(const char *argv0);
#define CLI_EXIT_BROKEN_PIPE 141 /* 128 + SIGPIPE */

/* Cluster commands (cli/cluster/). */
int cmd_get(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_install_extension(int argc, char **argv);
int cmd_upgrade_extension(int argc, char **argv);
int cmd_uninstall_extension(int argc, char **argv);
int cmd_explain_extension(int argc, char **argv);

int cmd_completion(int argc, char **argv);
int cmd_complete(int argc, char **argv);

#endif

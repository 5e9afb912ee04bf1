/* Each olmv1 command is one function in its own cli/cmd_*.c file.  It receives the
 * arguments after the command words (argv[0] is the command path, e.g. "semver match")
 * and returns the process exit code. */
#ifndef OLMV1_CLI_COMMANDS_H
#define OLMV1_CLI_COMMANDS_H

int cmd_semver_match(int argc, char **argv);
int cmd_semver_compare(int argc, char **argv);
int cmd_catalog_validate(int argc, char **argv);
int cmd_catalog_render(int argc, char **argv);
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

#endif

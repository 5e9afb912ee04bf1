/* olmv1 completion bash|zsh|fish, and the hidden `olmv1 __complete WORDS...` the
 * scripts call.  Completion is computed by olmv1 itself, so it never drifts from the
 * commands: command words from the command table, flags from each command's own
 * --help text, resource types for `get`, and the names of ClusterExtensions and
 * ClusterCatalogs from the cluster (quietly nothing when it cannot be reached). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "cluster_objects.h"
#include "commands.h"

static const char BASH[] =
    "# olmv1 bash completion: source <(olmv1 completion bash)\n"
    "_olmv1() {\n"
    "  local cur=${COMP_WORDS[COMP_CWORD]}\n"
    "  local IFS=$'\\n'\n"
    "  COMPREPLY=( $(compgen -W \"$(olmv1 __complete \"${COMP_WORDS[@]:1:COMP_CWORD}\" 2>/dev/null)\" -- \"$cur\") )\n"
    "}\n"
    "complete -o default -F _olmv1 olmv1\n";

static const char ZSH[] = "#compdef olmv1\n"
                          "# olmv1 zsh completion: source <(olmv1 completion zsh)\n"
                          "_olmv1() {\n"
                          "  local -a cands\n"
                          "  cands=(\"${(@f)$(olmv1 __complete \"${(@)words[2,CURRENT]}\" 2>/dev/null)}\")\n"
                          "  compadd -a cands\n"
                          "}\n"
                          "compdef _olmv1 olmv1\n";

static const char FISH[] = "# olmv1 fish completion: olmv1 completion fish | source\n"
                           "function __olmv1_complete\n"
                           "    set -l words (commandline -opc) (commandline -ct)\n"
                           "    olmv1 __complete $words[2..-1] 2>/dev/null\n"
                           "end\n"
                           "complete -c olmv1 -f -a '(__olmv1_complete)'\n";

int cmd_completion(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("Usage: olmv1 completion bash|zsh|fish\n\n"
               "Prints a completion script for the shell:\n"
               "  bash   source <(olmv1 completion bash)        (e.g. in ~/.bashrc)\n"
               "  zsh    source <(olmv1 completion zsh)         (after compinit)\n"
               "  fish   olmv1 completion fish | source\n"
               "It completes commands, flags (from each command's --help), `get` resource types\n"
               "and, from the current cluster, extension and catalog names.\n");
        return 0;
    }
    const char *script = argc == 2 ? (strcmp(argv[1], "bash") == 0   ? BASH
                                      : strcmp(argv[1], "zsh") == 0  ? ZSH
                                      : strcmp(argv[1], "fish") == 0 ? FISH
                                                                     : NULL)
                                   : NULL;
    if (!script) {
        fprintf(stderr, "olmv1 completion: say which shell: bash, zsh or fish\n");
        return CLI_EXIT_USAGE;
    }
    fputs(script, stdout);
    return fflush(stdout) == 0 ? 0 : CLI_EXIT_FAILED;
}

/* ------------------------------------------------------------ __complete */

static void offer(const char *word, const char *prefix)
{
    if (strncmp(word, prefix, strlen(prefix)) == 0)
        printf("%s\n", word);
}

/* The flags a command's --help mentions ("--name" at a word start), run with stdout
 * sent to a temporary file. */
static void offer_flags(const struct cli_command *cmd, const char *prefix)
{
    FILE *tmp = tmpfile();
    if (!tmp)
        return;
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        if (saved >= 0)
            close(saved);
        fclose(tmp);
        return;
    }
    char *args[] = {(char *)cmd->path, "--help", NULL};
    cmd->run(2, args);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(tmp);
    char line[1024], seen[8192] = " ";
    while (fgets(line, sizeof line, tmp)) {
        for (char *p = strstr(line, "--"); p; p = strstr(p + 2, "--")) {
            if (p != line && p[-1] != ' ' && p[-1] != '[' && p[-1] != '(' && p[-1] != '|')
                continue;
            size_t n = 2;
            while ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '-')
                n++;
            if (n <= 2 || p[n - 1] == '-')
                continue;
            char flag[96], key[100];
            snprintf(flag, sizeof flag, "%.*s", (int)n, p);
            snprintf(key, sizeof key, " %s ", flag);
            if (strstr(seen, key) || strlen(seen) + strlen(flag) + 2 >= sizeof seen)
                continue;
            strcat(seen, flag);
            strcat(seen, " ");
            offer(flag, prefix);
        }
    }
    fclose(tmp);
}

/* Names of the kind's objects in the cluster; silent on any failure. */
static void offer_names(const cluster_kind *kind, const char *prefix)
{
    cluster_opts o = {0};
    kube_client *c = NULL;
    olm_error err;
    json_t *items = NULL;
    if (cluster_connect(&o, &c, &err) != 0)
        return;
    if (cluster_list(c, kind, NULL, &items, &err) == 0) {
        size_t i;
        const json_t *it;
        json_array_foreach(items, i, it) offer(cluster_str(it, "metadata.name"), prefix);
    }
    json_decref(items);
    kube_client_free(c);
}

int cmd_complete(int argc, char **argv)
{
    /* argv[1..argc-1]: the words after "olmv1"; the last one is being typed. */
    int nw = argc - 1;
    char **w = argv + 1;
    const char *cur = nw > 0 ? w[nw - 1] : "";
    if (nw <= 1) {
        char seen[2048] = " ";
        for (size_t i = 0; i < cli_ncommands; i++) {
            if (!cli_commands[i].summary)
                continue;
            char first[64], key[70];
            snprintf(first, sizeof first, "%.*s", (int)strcspn(cli_commands[i].path, " "), cli_commands[i].path);
            snprintf(key, sizeof key, " %s ", first);
            if (strstr(seen, key))
                continue;
            strncat(seen, first, sizeof seen - strlen(seen) - 2);
            strcat(seen, " ");
            offer(first, cur);
        }
        return 0;
    }
    /* The command the words name: two words first, then one. */
    const struct cli_command *cmd = NULL;
    int used = 0;
    for (size_t i = 0; i < cli_ncommands && !cmd; i++) {
        const char *p = cli_commands[i].path, *sp = strchr(p, ' ');
        if (sp && nw > 2 && strlen(w[0]) == (size_t)(sp - p) && strncmp(w[0], p, (size_t)(sp - p)) == 0 &&
            strcmp(w[1], sp + 1) == 0)
            cmd = &cli_commands[i], used = 2;
    }
    for (size_t i = 0; i < cli_ncommands && !cmd; i++)
        if (!strchr(cli_commands[i].path, ' ') && strcmp(w[0], cli_commands[i].path) == 0)
            cmd = &cli_commands[i], used = 1;
    if (!cmd) {
        /* A group: its second words. */
        size_t n = strlen(w[0]);
        if (nw == 2)
            for (size_t i = 0; i < cli_ncommands; i++)
                if (strncmp(cli_commands[i].path, w[0], n) == 0 && cli_commands[i].path[n] == ' ')
                    offer(cli_commands[i].path + n + 1, cur);
        return 0;
    }
    if (cur[0] == '-') {
        offer_flags(cmd, cur);
        return 0;
    }
    /* Positional words, for the commands that take names. */
    int pos = nw - used; /* 1 for the first word after the command */
    if (strcmp(cmd->path, "get") == 0 && pos == 1) {
        offer("extensions", cur);
        offer("catalogs", cur);
    } else if (strcmp(cmd->path, "get") == 0 && pos == 2 && cluster_kind_lookup(w[1])) {
        offer_names(cluster_kind_lookup(w[1]), cur);
    } else if (pos == 1 && (strcmp(cmd->path, "upgrade extension") == 0 ||
                            strcmp(cmd->path, "uninstall extension") == 0 ||
                            strcmp(cmd->path, "explain extension") == 0)) {
        offer_names(cluster_kind_get(CLUSTER_KIND_EXTENSION), cur);
    } else if (strcmp(cmd->path, "completion") == 0 && pos == 1) {
        offer("bash", cur);
        offer("zsh", cur);
        offer("fish", cur);
    } else if (nw >= 2 && strcmp(w[nw - 2], "--catalog") == 0) {
        offer_names(cluster_kind_get(CLUSTER_KIND_CATALOG), cur);
    }
    return 0;
}

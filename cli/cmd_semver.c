/* placeholder until the semver commands land (same session) */
#include <stdio.h>
#include "commands.h"
int cmd_semver_match(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }
int cmd_semver_compare(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }

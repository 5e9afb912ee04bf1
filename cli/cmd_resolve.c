/* placeholder until the resolve command lands (same session) */
#include <stdio.h>
#include "commands.h"
int cmd_resolve(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }

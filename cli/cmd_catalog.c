/* placeholder until the catalog commands land (same session) */
#include <stdio.h>
#include "commands.h"
int cmd_catalog_validate(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }
int cmd_catalog_render(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }

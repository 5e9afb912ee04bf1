/* placeholder until the image push commands land (same session) */
#include <stdio.h>
#include "commands.h"
int cmd_image_push(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }
int cmd_catalog_push(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }
int cmd_bundle_push(int argc, char **argv) { (void)argc; fprintf(stderr, "%s: not built yet\n", argv[0]); return 2; }

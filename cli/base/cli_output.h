/* cli_output: how olmv1 commands print objects.
 *
 *   YAML  keys sorted (as sigs.k8s.io/yaml), strings YAML would read as another type
 *         quoted, multi-line strings as literal blocks; "---" between documents.
 *   JSON  kubectl's layout: indented by four spaces, keys sorted.
 *
 * Each returns 0, or -1 when writing (or memory) failed. */
#ifndef OLMV1_CLI_OUTPUT_H
#define OLMV1_CLI_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

/* Every element of the array `objects` as one YAML document. */
int cli_write_yaml_docs(const json_t *objects, FILE *out);
/* One value as one YAML document. */
int cli_write_yaml(const json_t *obj, FILE *out);
/* One value as indented JSON and a newline. */
int cli_write_json(const json_t *value, FILE *out);

#endif

/* cli_output: YAML and JSON text of jansson values for the olmv1 commands.
 *
 * YAML sorts mapping keys (as sigs.k8s.io/yaml does), quotes strings that YAML would
 * read as another type, and writes multi-line strings as literal blocks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli_output.h"
#include "commands.h"
#include "gocompat.h"

static int emit(yaml_emitter_t *em, yaml_event_t *ev)
{
    return yaml_emitter_emit(em, ev) ? 0 : -1;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t n, yaml_scalar_style_t style, int is_string)
{
    yaml_event_t ev;
    /* plain_implicit 0 for strings that would resolve as something else keeps
     * libyaml from emitting them plain. */
    if (!yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)"tag:yaml.org,2002:str", (yaml_char_t *)s, (int)n,
                                      style == YAML_PLAIN_SCALAR_STYLE || !is_string, 1, style))
        return -1;
    return emit(em, &ev);
}

static int emit_string(yaml_emitter_t *em, const char *s, size_t n)
{
    gocompat_yaml_scalar sc;
    if (memchr(s, '\n', n))
        return emit_scalar(em, s, n, YAML_LITERAL_SCALAR_STYLE, 1);
    if (n == 0 || gocompat_yaml_resolve_plain(s, n, &sc) < 0 || sc.kind != GOCOMPAT_YAML_STRING)
        return emit_scalar(em, s, n, YAML_DOUBLE_QUOTED_SCALAR_STYLE, 1);
    return emit_scalar(em, s, n, YAML_PLAIN_SCALAR_STYLE, 1);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit_value(yaml_emitter_t *em, const json_t *v)
{
    yaml_event_t ev;
    char num[GOCOMPAT_FLOAT_BUF];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), k = 0;
        const char **keys = calloc(n ? n : 1, sizeof *keys);
        const char *key;
        json_t *val;
        if (!keys)
            return -1;
        json_object_foreach((json_t *)v, key, val) keys[k++] = key;
        qsort(keys, n, sizeof *keys, cmp_keys);
        int rc = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, n ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE)
                     ? emit(em, &ev)
                     : -1;
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = emit_string(em, keys[i], strlen(keys[i])) < 0 || emit_value(em, json_object_get(v, keys[i])) < 0 ? -1 : 0;
        free(keys);
        if (rc < 0 || !yaml_mapping_end_event_initialize(&ev))
            return -1;
        return emit(em, &ev);
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, n ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE) ||
            emit(em, &ev) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (emit_value(em, json_array_get(v, i)) < 0)
                return -1;
        if (!yaml_sequence_end_event_initialize(&ev))
            return -1;
        return emit(em, &ev);
    }
    case JSON_STRING: return emit_string(em, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE, 0);
    case JSON_REAL:
        gocompat_json_float(json_real_value(v), num);
        return emit_scalar(em, num, strlen(num), YAML_PLAIN_SCALAR_STYLE, 0);
    case JSON_TRUE: return emit_scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE, 0);
    case JSON_FALSE: return emit_scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE, 0);
    default: return emit_scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE, 0);
    }
}

int cli_write_yaml_docs(const json_t *objects, FILE *out)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return -1;
    yaml_emitter_set_output_file(&em, out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    int rc = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ? emit(&em, &ev) : -1;
    for (size_t i = 0; rc == 0 && i < json_array_size(objects); i++) {
        /* "---" before every document after the first. */
        rc = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, i == 0) && emit(&em, &ev) == 0 &&
                     emit_value(&em, json_array_get(objects, i)) == 0 && yaml_document_end_event_initialize(&ev, 1) &&
                     emit(&em, &ev) == 0
                 ? 0
                 : -1;
    }
    if (rc == 0)
        rc = yaml_stream_end_event_initialize(&ev) ? emit(&em, &ev) : -1;
    yaml_emitter_delete(&em);
    return rc;
}

int cli_write_yaml(const json_t *obj, FILE *out)
{
    json_t *one = json_array();
    int rc = one && json_array_append(one, (json_t *)obj) == 0 ? cli_write_yaml_docs(one, out) : -1;
    json_decref(one);
    return rc;
}

int cli_write_json(const json_t *value, FILE *out)
{
    /* kubectl's layout: four spaces, keys sorted. */
    if (json_dumpf(value, out, JSON_INDENT(4) | JSON_SORT_KEYS | JSON_ENCODE_ANY) != 0)
        return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

/* See commands.h.  errno is stdio's, from the write that failed. */
int cli_stdout_failed(const char *argv0)
{
    if (errno == EPIPE)
        return CLI_EXIT_BROKEN_PIPE;
    fprintf(stderr, "olmv1 %s: writing to stdout: %s\n", argv0, strerror(errno ? errno : EIO));
    return 1;
}

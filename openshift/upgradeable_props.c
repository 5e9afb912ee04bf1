/* upgradeable_props: the olm.properties text operator-controller records for a
 * registry+v1 bundle directory (openshift-upgradeable.md §1): the CSV's
 * metadata.annotations["olm.properties"] array, then metadata/properties.yaml's
 * `properties` list, not de-duplicated, re-encoded as Go's json.Marshal does.
 *
 * A minimal reader: the bundle loader (domain/bundle) did not exist when this
 * was written.  properties.yaml goes through the sigs.k8s.io/yaml path upstream
 * uses (YAML -> JSON -> []property.Property, gocompat_yaml_to_json), so an
 * unquoted float is re-printed as Go prints a float64: `value: 4.10` becomes 4.1
 * and `value: 5.0` becomes 5. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "gocompat.h"
#include "olm_array.h"
#include "olm_read_file.h"
#include "upgradeable.h"
#include "upgradeable_internal.h"

#define MAX_DEPTH 256
#define MAX_JSON (16u << 20) /* aliases can multiply a small file (billion laughs) */

/* The flavour of json.Marshal this text has always had: HTML escaping, and \b
 * and \f written as \u0008 and \u000c (Go before 1.22). */
#define PROPS_JSON (GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML | GOCOMPAT_JSON_LEGACY_BF)

/* Looks up a key of a mapping node; NULL when absent or not a mapping. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    yaml_node_t *found = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
            found = yaml_document_get_node(doc, p->value);
    }
    return found;
}

static const char *scalar_of(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Finds the CSV among the documents of one manifest file.  Sets *found and
 * copies out its name and olm.properties annotation (either may stay NULL). */
static int scan_manifest(const char *path, bool *found, char **name, char **annotation, size_t *ann_len,
                         olm_error *err)
{
    size_t len;
    char *text = olm_read_file(path, 0, &len, err);
    if (!text)
        return -1;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        free(text);
        return olm_error_set(err, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    while (rc == 0 && !*found) {
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc)) {
            rc = olm_error_set(err, "%s: YAML error: %s (line %zu)", path,
                               parser.problem ? parser.problem : "unknown", parser.problem_mark.line + 1);
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            yaml_document_delete(&doc);
            break;
        }
        const char *kind = scalar_of(map_get(&doc, root, "kind"));
        if (kind && strcmp(kind, "ClusterServiceVersion") == 0) {
            *found = true;
            yaml_node_t *meta = map_get(&doc, root, "metadata");
            yaml_node_t *ann = map_get(&doc, map_get(&doc, meta, "annotations"), "olm.properties");
            const char *nm = scalar_of(map_get(&doc, meta, "name"));
            if (nm && !(*name = strdup(nm)))
                rc = olm_error_set(err, "out of memory");
            if (rc == 0 && ann && ann->type == YAML_SCALAR_NODE) {
                *ann_len = ann->data.scalar.length;
                if (!(*annotation = strndup((const char *)ann->data.scalar.value, *ann_len)))
                    rc = olm_error_set(err, "out of memory");
            }
        }
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    free(text);
    return rc;
}

static bool manifest_name(const char *n)
{
    size_t l = strlen(n);
    return n[0] != '.' && ((l > 5 && strcmp(n + l - 5, ".yaml") == 0) || (l > 4 && strcmp(n + l - 4, ".yml") == 0) ||
                           (l > 5 && strcmp(n + l - 5, ".json") == 0));
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The CSV of bundle_dir/manifests, searched in file-name order. */
static int find_csv(const char *bundle_dir, char **name, char **annotation, size_t *ann_len, olm_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/manifests", bundle_dir);
    DIR *d = opendir(dir);
    if (!d)
        return olm_error_set(err, "cannot open %s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        if (!manifest_name(de->d_name))
            continue;
        if (OLM_ARRAY_RESERVE(names, cap, n + 1) < 0 || !(names[n] = strdup(de->d_name))) {
            rc = olm_error_set(err, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    bool found = false;
    for (size_t i = 0; rc == 0 && !found && i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = scan_manifest(path, &found, name, annotation, ann_len, err);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc == 0 && !found)
        rc = olm_error_set(err, "%s: no ClusterServiceVersion manifest found", dir);
    return rc;
}

/* metadata/properties.yaml as JSON text; *json NULL when the file does not exist. */
static int properties_yaml_json(const char *bundle_dir, char **json, olm_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/metadata/properties.yaml", bundle_dir);
    *json = NULL;
    FILE *probe = fopen(path, "rb");
    if (!probe)
        return errno == ENOENT ? 0 : olm_error_set(err, "cannot open %s: %s", path, strerror(errno));
    fclose(probe);
    size_t len;
    char *text = olm_read_file(path, 0, &len, err);
    if (!text)
        return -1;
    /* sigs.k8s.io/yaml.YAMLToJSON of the first document. */
    gocompat_yaml_opts opts = {.max_depth = MAX_DEPTH, .max_nodes = SIZE_MAX /* MAX_JSON bounds it */};
    gocompat_yaml_error e;
    strbuf out = STRBUF_INIT;
    int rc = 0;
    if (gocompat_yaml_to_json(text, len, &opts, PROPS_JSON, MAX_JSON, &out, &e) < 0) {
        switch (e.code) {
        case GOCOMPAT_YAML_ESYNTAX:
            rc = olm_error_set(err, "%s: YAML error: %s (line %d)", path, e.problem ? e.problem : "unknown", e.line);
            break;
        case GOCOMPAT_YAML_EANCHOR: /* libyaml's loader words it so */
            rc = olm_error_set(err, "%s: YAML error: found undefined alias (line %d)", path, e.line);
            break;
        case GOCOMPAT_YAML_EDEPTH:
            rc = olm_error_set(err, "%s: YAML nested deeper than %d levels", path, MAX_DEPTH);
            break;
        case GOCOMPAT_YAML_ETOOBIG:
            rc = olm_error_set(err, "%s: YAML expands to more than %u bytes of JSON", path, MAX_JSON);
            break;
        case GOCOMPAT_YAML_ENONFINITE: /* json.Marshal's UnsupportedValueError */
            rc = olm_error_set(err, "%s: json: unsupported value: %s", path,
                               isnan(e.value) ? "NaN" : e.value > 0 ? "+Inf" : "-Inf");
            break;
        case GOCOMPAT_YAML_ENOMEM: rc = olm_error_set(err, "out of memory"); break;
        default: rc = gocompat_yaml_strerror(&e, path, err); break; /* map keys, merges */
        }
    } else if (!(*json = strbuf_detach(&out))) {
        rc = olm_error_set(err, "out of memory");
    }
    strbuf_free(&out);
    free(text);
    return rc;
}

static int append_props(strbuf *sb, const upgradeable_prop_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const upgradeable_prop *p = &l->items[i];
        if ((sb->len > 1 && strbuf_putc(sb, ',') < 0) || strbuf_puts(sb, "{\"type\":") < 0 ||
            gocompat_json_string(sb, p->type, p->type_len, PROPS_JSON) < 0 || strbuf_puts(sb, ",\"value\":") < 0)
            return -1;
        /* json.Marshal writes a nil RawMessage as null. */
        if ((p->value ? gocompat_json_compact(sb, p->value, p->value_len) : strbuf_puts(sb, "null")) < 0 ||
            strbuf_putc(sb, '}') < 0)
            return -1;
    }
    return 0;
}

int upgradeable_bundle_properties(const char *bundle_dir, char **out, char **bundle_name, olm_error *err)
{
    char *annotation = NULL, *yaml_json = NULL, *name = NULL;
    size_t ann_len = 0;
    upgradeable_prop_list csv = {0}, extra = {0};
    strbuf why = STRBUF_INIT, sb = STRBUF_INIT;
    *out = NULL;
    if (bundle_name)
        *bundle_name = NULL;
    int rc = find_csv(bundle_dir, &name, &annotation, &ann_len, err);
    if (rc == 0)
        rc = properties_yaml_json(bundle_dir, &yaml_json, err);
    if (rc == 0 && yaml_json) {
        int d = upgradeable_json_decode_props_field(yaml_json, strlen(yaml_json), "properties", &extra, &why);
        if (d == -2)
            rc = olm_error_set(err, "out of memory");
        else if (d < 0)
            rc = olm_error_set(err, "%s/metadata/properties.yaml: %s", bundle_dir, strbuf_str(&why));
    }
    if (rc == 0 && annotation) {
        int d = upgradeable_json_decode_props(annotation, ann_len, &csv, &why);
        if (d == -2) {
            rc = olm_error_set(err, "out of memory");
        } else if (d < 0) {
            *out = annotation; /* let the check report it, as upstream would */
            annotation = NULL;
        }
    }
    if (rc == 0 && !*out && (annotation || yaml_json)) {
        if (strbuf_putc(&sb, '[') < 0 || append_props(&sb, &csv) < 0 || append_props(&sb, &extra) < 0 ||
            strbuf_putc(&sb, ']') < 0 || !(*out = strbuf_detach(&sb)))
            rc = olm_error_set(err, "out of memory");
    }
    if (rc == 0 && bundle_name) {
        *bundle_name = name;
        name = NULL;
    }
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    free(name);
    free(annotation);
    free(yaml_json);
    upgradeable_prop_list_free(&csv);
    upgradeable_prop_list_free(&extra);
    strbuf_free(&why);
    strbuf_free(&sb);
    return rc;
}

/* upgradeable_props: the olm.properties text operator-controller records for a
 * registry+v1 bundle directory (openshift-upgradeable.md §1): the CSV's
 * metadata.annotations["olm.properties"] array, then metadata/properties.yaml's
 * `properties` list, not de-duplicated, re-encoded as Go's json.Marshal does.
 *
 * A minimal reader: the bundle loader (controller/bundle) did not exist when this
 * was written.  properties.yaml goes through the sigs.k8s.io/yaml path upstream
 * uses (YAML -> JSON -> []property.Property), so an unquoted float is re-printed
 * as Go prints a float64: `value: 4.10` becomes 4.1 and `value: 5.0` becomes 5. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "fbc_yaml.h"
#include "gocompat.h"
#include "olm_read_file.h"
#include "upgradeable.h"
#include "upgradeable_internal.h"

#define MAX_DEPTH 256
#define MAX_JSON (16u << 20) /* aliases can multiply a small file (billion laughs) */

/* The flavour of json.Marshal this text has always had: HTML escaping, and \b
 * and \f written as \u0008 and \u000c (Go before 1.22). */
#define PROPS_JSON (GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML | GOCOMPAT_JSON_LEGACY_BF)

static int go_json_string(strbuf *sb, const char *s, size_t len)
{
    return gocompat_json_string(sb, s, len, PROPS_JSON);
}

static int go_json_float(strbuf *sb, double d)
{
    char buf[GOCOMPAT_FLOAT_BUF];
    gocompat_json_float(d, buf);
    return strbuf_puts(sb, buf);
}

typedef struct conv {
    yaml_document_t *doc;
    strbuf *out;
    olm_error *err;
} conv;

static int node_json(conv *c, yaml_node_t *node, int depth);

static int scalar_json(conv *c, yaml_node_t *node)
{
    const char *v = (const char *)node->data.scalar.value;
    size_t len = node->data.scalar.length;
    if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return go_json_string(c->out, v, len);
    fbc_yaml_scalar s;
    if (fbc_yaml_resolve_plain(v, len, &s) < 0)
        return -1;
    switch (s.kind) {
    case FBC_Y_NULL: return strbuf_puts(c->out, "null");
    case FBC_Y_BOOL: return strbuf_puts(c->out, s.b ? "true" : "false");
    case FBC_Y_INT: return strbuf_printf(c->out, "%lld", (long long)s.i);
    case FBC_Y_UINT: return strbuf_printf(c->out, "%llu", (unsigned long long)s.u);
    case FBC_Y_FLOAT:
        if (isnan(s.f) || isinf(s.f))
            return olm_error_set(c->err, "json: unsupported value: %s", isnan(s.f) ? "NaN" : s.f > 0 ? "+Inf" : "-Inf"), -2;
        return go_json_float(c->out, s.f);
    default: return go_json_string(c->out, v, len);
    }
}

typedef struct pair {
    const char *key;
    size_t key_len;
    yaml_node_t *value;
    size_t order;
} pair;

/* Go sorts map keys byte-wise; among duplicate keys the last one wins. */
static int pair_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int r = memcmp(x->key, y->key, n);
    if (r)
        return r;
    if (x->key_len != y->key_len)
        return x->key_len < y->key_len ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int mapping_json(conv *c, yaml_node_t *node, int depth)
{
    size_t n = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    pair *pairs = n ? calloc(n, sizeof *pairs) : NULL;
    if (n && !pairs)
        return -1;
    size_t k = 0;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *key = yaml_document_get_node(c->doc, p->key);
        if (!key || key->type != YAML_SCALAR_NODE)
            continue; /* a non-scalar key cannot become a JSON object key */
        pairs[k++] = (pair){(const char *)key->data.scalar.value, key->data.scalar.length,
                            yaml_document_get_node(c->doc, p->value), k};
    }
    qsort(pairs, k, sizeof *pairs, pair_cmp);
    int rc = strbuf_putc(c->out, '{');
    bool first = true;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        if (i + 1 < k && pairs[i + 1].key_len == pairs[i].key_len &&
            memcmp(pairs[i + 1].key, pairs[i].key, pairs[i].key_len) == 0)
            continue;
        if (!first)
            rc = strbuf_putc(c->out, ',');
        first = false;
        if (rc == 0)
            rc = go_json_string(c->out, pairs[i].key, pairs[i].key_len);
        if (rc == 0)
            rc = strbuf_putc(c->out, ':');
        if (rc == 0)
            rc = node_json(c, pairs[i].value, depth + 1);
    }
    free(pairs);
    return rc < 0 ? rc : strbuf_putc(c->out, '}');
}

static int node_json(conv *c, yaml_node_t *node, int depth)
{
    if (depth > MAX_DEPTH)
        return olm_error_set(c->err, "YAML nested deeper than %d levels", MAX_DEPTH), -2;
    if (c->out->len > MAX_JSON)
        return olm_error_set(c->err, "YAML expands to more than %u bytes of JSON", MAX_JSON), -2;
    if (!node)
        return strbuf_puts(c->out, "null");
    if (node->type == YAML_SCALAR_NODE)
        return scalar_json(c, node);
    if (node->type == YAML_MAPPING_NODE)
        return mapping_json(c, node, depth);
    int rc = strbuf_putc(c->out, '[');
    for (yaml_node_item_t *it = node->data.sequence.items.start; rc == 0 && it < node->data.sequence.items.top; it++) {
        if (it != node->data.sequence.items.start)
            rc = strbuf_putc(c->out, ',');
        if (rc == 0)
            rc = node_json(c, yaml_document_get_node(c->doc, *it), depth + 1);
    }
    return rc < 0 ? rc : strbuf_putc(c->out, ']');
}

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
    size_t n = 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        if (!manifest_name(de->d_name))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown || !(grown[n] = strdup(de->d_name))) {
            names = grown ? grown : names;
            rc = olm_error_set(err, "out of memory");
            break;
        }
        names = grown;
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
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        free(text);
        return olm_error_set(err, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = olm_error_set(err, "%s: YAML error: %s (line %zu)", path, parser.problem ? parser.problem : "unknown",
                           parser.problem_mark.line + 1);
    } else {
        strbuf out = STRBUF_INIT;
        conv c = {&doc, &out, err};
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        int cr = root ? node_json(&c, root, 0) : strbuf_puts(&out, "null");
        if (cr == -2)
            rc = olm_error_wrap(err, "%s", path);
        else if (cr < 0)
            rc = olm_error_set(err, "out of memory");
        else if (!(*json = strbuf_detach(&out)))
            rc = olm_error_set(err, "out of memory");
        strbuf_free(&out);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    free(text);
    return rc;
}

static int append_props(strbuf *sb, const upgradeable_prop_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const upgradeable_prop *p = &l->items[i];
        if ((sb->len > 1 && strbuf_putc(sb, ',') < 0) || strbuf_puts(sb, "{\"type\":") < 0 ||
            go_json_string(sb, p->type, p->type_len) < 0 || strbuf_puts(sb, ",\"value\":") < 0)
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
    upgradeable_prop_list csv = {NULL, 0}, extra = {NULL, 0};
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

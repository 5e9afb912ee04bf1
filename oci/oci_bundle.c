/* Owned label lists, and the labels of a registry+v1 bundle image.
 *
 * operator-sdk builds bundle images with one LABEL per entry of
 * metadata/annotations.yaml, so the labels here are the same: the three that
 * describe the layout, then everything under `annotations:` (package,
 * channels, default channel, ...). */
#include "olm_array.h"
#include "oci_image.h"
#include "oci_media.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

const char *oci_labels_get(const oci_labels *l, const char *key)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

int oci_labels_set(oci_labels *l, const char *key, const char *value, olm_error *err)
{
    char *v = strdup(value);
    if (!v)
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < l->len; i++) {
        if (strcmp(l->items[i].key, key) == 0) {
            free((char *)l->items[i].value);
            l->items[i].value = v;
            return 0;
        }
    }
    if (OLM_ARRAY_RESERVE(l->items, l->cap, l->len + 1) < 0) {
        free(v);
        return olm_error_set(err, "out of memory");
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return olm_error_set(err, "out of memory");
    }
    l->items[l->len].key = k;
    l->items[l->len].value = v;
    l->len++;
    return 0;
}

int oci_labels_set_kv(oci_labels *l, const char *kv, olm_error *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return olm_error_set(err, "label \"%s\" must be KEY=VALUE with a non-empty KEY", kv);
    char *key = strndup(kv, (size_t)(eq - kv));
    if (!key)
        return olm_error_set(err, "out of memory");
    int rc = oci_labels_set(l, key, eq + 1, err);
    free(key);
    return rc;
}

void oci_labels_free(oci_labels *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free((char *)l->items[i].key);
        free((char *)l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Adds the scalar pairs of the top-level `annotations:` mapping. */
static int labels_from_annotations(const char *path, oci_labels *labels, olm_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return olm_error_set(err, "open %s: %s", path, strerror(errno));
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = -1;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return olm_error_set(err, "out of memory");
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        olm_error_set(err, "%s: line %zu: %s", path, parser.problem_mark.line + 1,
                      parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        fclose(f);
        return -1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_node_t *ann = NULL;
    if (root && root->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
             p < root->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&doc, p->key);
            if (k && k->type == YAML_SCALAR_NODE &&
                strcmp((const char *)k->data.scalar.value, "annotations") == 0)
                ann = yaml_document_get_node(&doc, p->value);
        }
    }
    if (!ann || ann->type != YAML_MAPPING_NODE) {
        olm_error_set(err, "%s has no \"annotations:\" mapping (see the registry+v1 bundle format)",
                      path);
        goto out;
    }
    for (yaml_node_pair_t *p = ann->data.mapping.pairs.start; p < ann->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(&doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&doc, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE) {
            olm_error_set(err, "%s: every annotation must be a string key with a string value", path);
            goto out;
        }
        if (oci_labels_set(labels, (const char *)k->data.scalar.value,
                           (const char *)v->data.scalar.value, err) != 0)
            goto out;
    }
    rc = 0;
out:
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}

int oci_bundle_labels(const char *dir, oci_labels *labels, olm_error *err)
{
    char *manifests = NULL, *annotations = NULL;
    int rc = -1;
    if (asprintf(&manifests, "%s/manifests", dir) < 0) {
        manifests = NULL;
        return olm_error_set(err, "out of memory");
    }
    if (asprintf(&annotations, "%s/metadata/annotations.yaml", dir) < 0) {
        annotations = NULL;
        olm_error_set(err, "out of memory");
        goto out;
    }
    if (!is_dir(dir)) {
        olm_error_set(err, "bundle directory %s does not exist", dir);
        goto out;
    }
    if (!is_dir(manifests)) {
        olm_error_set(err, "%s is not a registry+v1 bundle: it has no manifests/ directory (the CSV, CRDs and other objects go there)",
                      dir);
        goto out;
    }
    struct stat st;
    if (stat(annotations, &st) != 0 || !S_ISREG(st.st_mode)) {
        olm_error_set(err, "%s is not a registry+v1 bundle: metadata/annotations.yaml is missing (it names the package and channels)",
                      dir);
        goto out;
    }
    if (oci_labels_set(labels, OCI_LABEL_BUNDLE_MEDIATYPE, "registry+v1", err) != 0 ||
        oci_labels_set(labels, OCI_LABEL_BUNDLE_MANIFESTS, "manifests/", err) != 0 ||
        oci_labels_set(labels, OCI_LABEL_BUNDLE_METADATA, "metadata/", err) != 0)
        goto out;
    if (labels_from_annotations(annotations, labels, err) != 0)
        goto out;
    const char *mt = oci_labels_get(labels, OCI_LABEL_BUNDLE_MEDIATYPE);
    if (strcmp(mt, "registry+v1") != 0) {
        olm_error_set(err, "%s: %s is \"%s\"; only registry+v1 bundles can be pushed", annotations,
                      OCI_LABEL_BUNDLE_MEDIATYPE, mt);
        goto out;
    }
    rc = 0;
out:
    free(manifests);
    free(annotations);
    return rc;
}

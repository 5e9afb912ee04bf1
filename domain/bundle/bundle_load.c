/* bundle_load: registry+v1 bundle directory to JSON (spec §5.1). */
#include "olm_array.h"
#include "bundle.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fbc_stream.h" /* the same YAML/JSON rules as FBC */
#include "gocompat.h"
#include "kube_object.h"

#define PACKAGE_ANNOTATION "operators.operatorframework.io.bundle.package.v1"

json_t *bundle_json_path(const json_t *root, const char *path)
{
    return kube_object_path(root, path);
}

const char *bundle_json_str(const json_t *root, const char *path)
{
    const char *s = json_string_value(bundle_json_path(root, path));
    return s ? s : "";
}

unsigned bundle_install_modes(const json_t *csv)
{
    static const struct { const char *name; unsigned bit; } modes[] = {
        {"AllNamespaces", INSTALL_MODE_ALL}, {"MultiNamespace", INSTALL_MODE_MULTI},
        {"OwnNamespace", INSTALL_MODE_OWN}, {"SingleNamespace", INSTALL_MODE_SINGLE},
    };
    unsigned out = 0;
    json_t *list = bundle_json_path(csv, "spec.installModes"), *m;
    size_t i;
    json_array_foreach(list, i, m) {
        if (!json_is_true(json_object_get(m, "supported")))
            continue;
        const char *t = json_string_value(json_object_get(m, "type"));
        for (size_t k = 0; t && k < sizeof modes / sizeof modes[0]; k++)
            if (strcmp(t, modes[k].name) == 0)
                out |= modes[k].bit;
    }
    return out;
}

void bundle_install_modes_format(unsigned modes, char *buf, size_t size)
{
    /* Bit order is alphabetical order, which is how upstream sorts the set. */
    static const char *const names[] = {"AllNamespaces", "MultiNamespace", "OwnNamespace", "SingleNamespace"};
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (unsigned k = 0, first = 1; k < 4 && n < size; k++) {
        if (!(modes & (1u << k)))
            continue;
        n += (size_t)snprintf(buf + n, size - n, "%s%s", first ? "" : " ", names[k]);
        first = 0;
    }
    if (n < size)
        snprintf(buf + n, size - n, "]");
}

void bundle_free(bundle *b)
{
    free(b->package_name);
    json_decref(b->csv);
    json_decref(b->crds);
    json_decref(b->others);
    memset(b, 0, sizeof *b);
}

/* ---- metadata ---- */

static int take_first(void *ud, json_t *obj, int lineno, olm_error *err)
{
    (void)lineno, (void)err;
    json_t **slot = ud;
    if (!*slot)
        *slot = obj;
    else
        json_decref(obj);
    return 0;
}

/* Reads the first document of a YAML/JSON file; *out NULL for an empty file. */
static int read_doc(const char *path, const char *name, json_t **out, olm_error *err)
{
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    if (fbc_read_file(path, &data, &len, err) < 0)
        return -1;
    int rc = fbc_decode_stream(data, len, name, take_first, out, err);
    free(data);
    if (rc < 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

static int load_package(const char *dir, bundle *b, olm_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "%s/metadata/annotations.yaml", dir) < 0)
        return olm_error_set(err, "out of memory");
    json_t *doc = NULL;
    int rc = read_doc(path, "metadata/annotations.yaml", &doc, err);
    free(path);
    if (rc < 0)
        return olm_error_wrap(err, "error reading bundle annotations");
    json_t *ann = json_object_get(doc, "annotations");
    if (ann && !json_is_object(ann) && !json_is_null(ann)) {
        json_decref(doc);
        return olm_error_set(err, "error reading bundle annotations: metadata/annotations.yaml: annotations must be a map");
    }
    const char *pkg = json_string_value(json_object_get(ann, PACKAGE_ANNOTATION));
    b->package_name = strdup(pkg ? pkg : "");
    json_decref(doc);
    return b->package_name ? 0 : olm_error_set(err, "out of memory");
}

/* Appends metadata/properties.yaml's entries to the CSV annotation olm.properties,
 * as upstream's copyMetadataPropertiesToCSV does: existing entries first, the
 * whole list re-encoded with encoding/json (compact, HTML-escaped). */
static int merge_properties(const char *dir, bundle *b, olm_error *err)
{
    char *path = NULL;
    if (asprintf(&path, "%s/metadata/properties.yaml", dir) < 0)
        return olm_error_set(err, "out of memory");
    struct stat st;
    if (stat(path, &st) < 0 && errno == ENOENT) {
        free(path);
        return 0;
    }
    json_t *doc = NULL;
    int rc = read_doc(path, "metadata/properties.yaml", &doc, err);
    free(path);
    if (rc < 0)
        return olm_error_wrap(err, "error reading metadata/properties.yaml");
    json_t *props = json_object_get(doc, "properties");
    json_t *all = NULL;
    if (!json_is_array(props) || json_array_size(props) == 0) {
        rc = props && !json_is_array(props) && !json_is_null(props)
                 ? olm_error_set(err, "error reading metadata/properties.yaml: properties must be a list")
                 : 0;
        goto done;
    }
    json_t *meta = json_object_get(b->csv, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        if (!meta || json_object_set_new(b->csv, "metadata", meta) < 0) {
            rc = olm_error_set(err, "out of memory");
            goto done;
        }
    }
    json_t *ann = json_object_get(meta, "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        if (!ann || json_object_set_new(meta, "annotations", ann) < 0) {
            rc = olm_error_set(err, "out of memory");
            goto done;
        }
    }
    const char *existing = json_string_value(json_object_get(ann, "olm.properties"));
    if (existing) {
        json_error_t jerr;
        all = json_loads(existing, JSON_DECODE_ANY, &jerr);
        if (!json_is_array(all)) {
            rc = olm_error_set(err, "error merging metadata/properties.yaml: the CSV annotation olm.properties is not a JSON list: %s",
                               all ? "not a list" : jerr.text);
            goto done;
        }
    } else if (!(all = json_array())) {
        rc = olm_error_set(err, "out of memory");
        goto done;
    }
    size_t i;
    json_t *p;
    json_array_foreach(props, i, p) {
        /* property.Property{Type, Value}: exactly these two fields, in this order. */
        json_t *type = json_object_get(p, "type"), *value = json_object_get(p, "value");
        json_t *entry = json_object();
        if (!entry || json_array_append_new(all, entry) < 0 ||
            json_object_set_new(entry, "type", type ? json_incref(type) : json_string("")) < 0 ||
            json_object_set_new(entry, "value", value ? json_incref(value) : json_null()) < 0) {
            rc = olm_error_set(err, "out of memory");
            goto done;
        }
    }
    strbuf sb = STRBUF_INIT;
    /* Values from properties.yaml pass through sigs.k8s.io/yaml, whose maps come
     * out key-sorted; encoding the whole list sorted is the closest single rule. */
    if (gocompat_json_encode(&sb, all, GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML) < 0 ||
        json_object_set_new(ann, "olm.properties", json_string(strbuf_str(&sb))) < 0)
        rc = olm_error_set(err, "out of memory");
    strbuf_free(&sb);
done:
    json_decref(all);
    json_decref(doc);
    return rc;
}

/* ---- manifests ---- */

typedef struct manifest_ctx {
    bundle *b;
    const char *file;
} manifest_ctx;

static int add_object(manifest_ctx *c, json_t *obj, olm_error *err);

/* k8s' local builder flattens List kinds into their items. */
static int add_list(manifest_ctx *c, json_t *list, olm_error *err)
{
    json_t *items = json_object_get(list, "items"), *it;
    size_t i;
    json_array_foreach(items, i, it) {
        if (!json_is_object(it))
            return olm_error_set(err, "manifests/%s: list item %zu is not an object", c->file, i);
        if (add_object(c, json_incref(it), err) < 0)
            return -1;
    }
    return 0;
}

static int add_object(manifest_ctx *c, json_t *obj, olm_error *err)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    int rc = 0;
    if (!kind || !*kind) {
        rc = olm_error_set(err, "manifests/%s: object \"%s\" is missing \"kind\"", c->file,
                           bundle_json_str(obj, "metadata.name"));
    } else if (strcmp(kind, "List") == 0 || (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, "List") == 0 &&
                                             json_is_array(json_object_get(obj, "items")))) {
        rc = add_list(c, obj, err);
    } else if (strcmp(kind, "ClusterServiceVersion") == 0) {
        json_decref(c->b->csv);
        c->b->csv = json_incref(obj);
    } else if (json_array_append(strcmp(kind, "CustomResourceDefinition") == 0 ? c->b->crds : c->b->others, obj) < 0) {
        rc = olm_error_set(err, "out of memory");
    }
    json_decref(obj);
    return rc;
}

static int on_manifest(void *ud, json_t *obj, int lineno, olm_error *err)
{
    (void)lineno;
    return add_object(ud, obj, err);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_manifests(const char *dir, bundle *b, olm_error *err)
{
    char *mdir = NULL;
    if (asprintf(&mdir, "%s/manifests", dir) < 0)
        return olm_error_set(err, "out of memory");
    DIR *d = opendir(mdir);
    if (!d) {
        int e = errno;
        free(mdir);
        return olm_error_set(err, "open manifests: %s", strerror(e));
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (OLM_ARRAY_RESERVE(names, cap, n + 1) < 0) {
            rc = olm_error_set(err, "out of memory");
            break;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = olm_error_set(err, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    /* fs.ReadDir order: sorted by name. */
    if (rc == 0 && n)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *path = NULL;
        struct stat st;
        if (asprintf(&path, "%s/%s", mdir, names[i]) < 0) {
            rc = olm_error_set(err, "out of memory");
            break;
        }
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = olm_error_set(err,
                               "subdirectories are not allowed within the \"manifests\" directory of the bundle "
                               "image filesystem: found \"manifests/%s\"",
                               names[i]);
        } else {
            char *data = NULL;
            size_t len = 0;
            char *label = NULL;
            if (asprintf(&label, "manifests/%s", names[i]) < 0) {
                rc = olm_error_set(err, "out of memory");
            } else if ((rc = fbc_read_file(path, &data, &len, err)) == 0) {
                manifest_ctx c = {b, names[i]};
                rc = fbc_decode_stream(data, len, label, on_manifest, &c, err);
            }
            free(label);
            free(data);
        }
        free(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(mdir);
    return rc;
}

int bundle_load_dir(const char *dir, bundle *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    out->crds = json_array();
    out->others = json_array();
    if (!out->crds || !out->others) {
        bundle_free(out);
        return olm_error_set(err, "out of memory");
    }
    if (load_package(dir, out, err) < 0 || load_manifests(dir, out, err) < 0)
        goto fail;
    if (!out->csv) {
        olm_error_set(err, "no ClusterServiceVersion found in \"manifests\"");
        goto fail;
    }
    if (merge_properties(dir, out, err) < 0)
        goto fail;
    return 0;
fail:
    bundle_free(out);
    return -1;
}

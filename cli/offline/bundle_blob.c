/* bundle_blob: a registry+v1 bundle as an olm.bundle blob (bundle_blob.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "bundle_blob.h"
#include "image_temp.h"
#include "upgradeable.h"

static int add_prop(json_t *props, const char *type, json_t *value)
{
    json_t *p = value ? json_pack("{s:s, s:o}", "type", type, "value", value) : NULL;
    return p ? json_array_append_new(props, p) : -1;
}

/* olm.gvk for every served version of every CRD. */
static int gvk_props(const bundle *b, json_t *props)
{
    size_t i;
    const json_t *crd;
    json_array_foreach(b->crds, i, crd) {
        const char *group = bundle_json_str(crd, "spec.group"), *kind = bundle_json_str(crd, "spec.names.kind");
        const json_t *versions = json_object_get(json_object_get(crd, "spec"), "versions");
        size_t k;
        const json_t *v;
        json_array_foreach(versions, k, v) {
            if (add_prop(props, "olm.gvk", json_pack("{s:s, s:s, s:s}", "group", group, "kind", kind, "version",
                                                     bundle_json_str(v, "name"))) < 0)
                return -1;
        }
    }
    return 0;
}

/* olm.gvk.required from spec.customresourcedefinitions.required ({name: plural.group, kind, version}). */
static int required_props(const bundle *b, json_t *props)
{
    const json_t *req = json_object_get(bundle_json_path(b->csv, "spec.customresourcedefinitions"), "required");
    size_t i;
    const json_t *r;
    json_array_foreach(req, i, r) {
        const char *name = bundle_json_str(r, "name"), *dot = strchr(name, '.');
        if (add_prop(props, "olm.gvk.required", json_pack("{s:s, s:s, s:s}", "group", dot ? dot + 1 : "", "kind",
                                                          bundle_json_str(r, "kind"), "version",
                                                          bundle_json_str(r, "version"))) < 0)
            return -1;
    }
    return 0;
}

static json_t *csv_metadata(const json_t *csv)
{
    static const char *const spec_fields[] = {"apiservicedefinitions", "customresourcedefinitions", "description",
                                              "displayName", "installModes", "keywords", "links", "maintainers",
                                              "maturity", "minKubeVersion", "nativeAPIs", "provider"};
    json_t *md = json_object();
    const json_t *meta = json_object_get(csv, "metadata"), *spec = json_object_get(csv, "spec");
    if (md && json_object_get(meta, "annotations"))
        json_object_set(md, "annotations", json_object_get(meta, "annotations"));
    if (md && json_object_get(meta, "labels"))
        json_object_set(md, "labels", json_object_get(meta, "labels"));
    for (size_t i = 0; md && i < sizeof spec_fields / sizeof spec_fields[0]; i++) {
        const json_t *v = json_object_get(spec, spec_fields[i]);
        /* opm's field names for the two descriptions lists. */
        const char *key = strcmp(spec_fields[i], "apiservicedefinitions") == 0       ? "apiServiceDefinitions"
                          : strcmp(spec_fields[i], "customresourcedefinitions") == 0 ? "crdDescriptions"
                                                                                     : spec_fields[i];
        if (v && json_object_set(md, key, (json_t *)v) < 0) {
            json_decref(md);
            return NULL;
        }
    }
    return md;
}

json_t *bundle_blob_from_dir(const char *dir, const char *image, olm_error *err)
{
    bundle b = {0};
    if (bundle_load_dir(dir, &b, err) < 0)
        return NULL;
    const char *name = bundle_json_str(b.csv, "metadata.name"), *version = bundle_json_str(b.csv, "spec.version");
    if (!*name || !*version || !*b.package_name) {
        olm_error_set(err, "the bundle lacks a CSV name, a CSV spec.version or a package annotation");
        bundle_free(&b);
        return NULL;
    }
    json_t *props = json_array();
    int rc = props ? add_prop(props, "olm.package", json_pack("{s:s, s:s}", "packageName", b.package_name, "version",
                                                                version))
                   : -1;
    if (rc == 0)
        rc = gvk_props(&b, props);
    if (rc == 0)
        rc = required_props(&b, props);
    char *extra = NULL, *bname = NULL;
    if (rc == 0 && upgradeable_bundle_properties(dir, &extra, &bname, err) < 0)
        rc = -2;
    if (rc == 0 && extra) {
        json_error_t je;
        json_t *arr = json_loads(extra, 0, &je);
        if (!json_is_array(arr) || json_array_extend(props, arr) < 0) {
            olm_error_set(err, "the CSV's olm.properties annotation is not a JSON array");
            rc = -2;
        }
        json_decref(arr);
    }
    free(extra);
    free(bname);
    if (rc == 0)
        rc = add_prop(props, "olm.csv.metadata", csv_metadata(b.csv));
    json_t *related = rc == 0 ? json_pack("[{s:s, s:s}]", "name", "", "image", image) : NULL;
    size_t i;
    const json_t *ri;
    json_array_foreach(json_object_get(json_object_get(b.csv, "spec"), "relatedImages"), i, ri) {
        if (related && json_array_append_new(related, json_pack("{s:s, s:s}", "name", bundle_json_str(ri, "name"),
                                                                "image", bundle_json_str(ri, "image"))) < 0) {
            json_decref(related);
            related = NULL;
        }
    }
    json_t *blob = related ? json_pack("{s:s, s:s, s:s, s:s, s:O, s:o}", "schema", "olm.bundle", "name", name,
                                       "package", b.package_name, "image", image, "properties", props,
                                       "relatedImages", related)
                           : NULL;
    if (!blob && rc != -2)
        olm_error_set(err, "out of memory");
    json_decref(props);
    bundle_free(&b);
    return blob;
}

struct blob_pull {
    const char *image;
    json_t *blob;
};

static int blob_of_dir(const char *dir, const oci_pull_result *res, void *data, olm_error *err)
{
    (void)res;
    struct blob_pull *p = data;
    if ((p->blob = bundle_blob_from_dir(dir, p->image, err)))
        return 0;
    olm_error_wrap(err, "bundle %s", p->image);
    return 8;
}

json_t *bundle_blob_from_image(const char *image, int *code, olm_error *err)
{
    struct blob_pull p = {image, NULL};
    int rc = image_temp_pull(image, false, blob_of_dir, &p, err);
    *code = rc == IMAGE_TEMP_PULL_FAILED ? 5 : rc == IMAGE_TEMP_SETUP_FAILED ? 1 : rc;
    return p.blob;
}

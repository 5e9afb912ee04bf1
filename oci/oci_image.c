/* Image config and OCI manifest JSON, and a one-layer image from a directory.
 *
 * JSON is dumped compact with sorted keys: the digest is over these exact
 * bytes, so the same inputs must always give the same bytes. */
#include "oci_image.h"
#include "oci_media.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define EPOCH "1970-01-01T00:00:00Z" /* fixed "created" keeps builds reproducible */

static char *dump(json_t *root, olm_error *err, const char *what)
{
    char *s = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    if (!s)
        olm_error_set(err, "encoding the %s JSON failed (out of memory?)", what);
    return s;
}

/* Adds User, Entrypoint and Env to `config`; 0, or -1 on bad UTF-8 / out of memory. */
static int set_run_config(json_t *config, const oci_run_config *run)
{
    if (!run)
        return 0;
    if (run->user && *run->user && json_object_set_new(config, "User", json_string(run->user)) != 0)
        return -1;
    const char *const *lists[2] = {run->entrypoint, run->env};
    size_t lens[2] = {run->nentrypoint, run->nenv};
    const char *keys[2] = {"Entrypoint", "Env"};
    for (int k = 0; k < 2; k++) {
        if (lens[k] == 0)
            continue;
        json_t *a = json_array();
        if (!a || json_object_set_new(config, keys[k], a) != 0)
            return -1;
        for (size_t i = 0; i < lens[k]; i++)
            if (json_array_append_new(a, json_string(lists[k][i])) != 0)
                return -1;
    }
    return 0;
}

char *oci_image_config_json(const oci_label *labels, size_t nlabels, const oci_run_config *run,
                            const char *diff_id, const char *created_by, olm_error *err)
{
    json_t *root = json_object();
    json_t *config = json_object();
    json_t *lbls = json_object();
    json_t *rootfs = json_object();
    json_t *diff_ids = json_array();
    json_t *history = json_array();
    json_t *hist = json_object();
    char *out = NULL;
    int bad = !root || !config || !lbls || !rootfs || !diff_ids || !history || !hist;
    for (size_t i = 0; !bad && i < nlabels; i++)
        bad = json_object_set_new(lbls, labels[i].key, json_string(labels[i].value)) != 0;
    if (!bad)
        bad = set_run_config(config, run) != 0;
    if (!bad)
        bad = json_array_append_new(diff_ids, json_string(diff_id)) != 0 ||
              json_object_set_new(rootfs, "type", json_string("layers")) != 0 ||
              json_object_set(rootfs, "diff_ids", diff_ids) != 0 ||
              json_object_set_new(hist, "created", json_string(EPOCH)) != 0 ||
              json_object_set_new(hist, "created_by",
                                  json_string(created_by ? created_by : "olmv1")) != 0 ||
              json_array_append(history, hist) != 0 ||
              json_object_set(config, "Labels", lbls) != 0 ||
              json_object_set_new(root, "architecture", json_string("amd64")) != 0 ||
              json_object_set_new(root, "os", json_string("linux")) != 0 ||
              json_object_set_new(root, "created", json_string(EPOCH)) != 0 ||
              json_object_set(root, "config", config) != 0 ||
              json_object_set(root, "rootfs", rootfs) != 0 ||
              json_object_set(root, "history", history) != 0;
    if (bad)
        olm_error_set(err, "building the image config failed (bad UTF-8 in a label, user, entrypoint "
                           "or env, or out of memory)");
    else
        out = dump(root, err, "image config");
    json_decref(root);
    json_decref(config);
    json_decref(lbls);
    json_decref(rootfs);
    json_decref(diff_ids);
    json_decref(history);
    json_decref(hist);
    return out;
}

static json_t *descriptor(const oci_blob *b)
{
    json_t *d = json_object();
    if (!d)
        return NULL;
    if (json_object_set_new(d, "mediaType", json_string(b->media_type)) != 0 ||
        json_object_set_new(d, "digest", json_string(b->digest)) != 0 ||
        json_object_set_new(d, "size", json_integer((json_int_t)b->size)) != 0) {
        json_decref(d);
        return NULL;
    }
    return d;
}

char *oci_image_manifest_json(const oci_blob *config, const oci_blob *const *layers,
                              size_t nlayers, olm_error *err)
{
    json_t *root = json_object();
    json_t *arr = json_array();
    char *out = NULL;
    int bad = !root || !arr;
    for (size_t i = 0; !bad && i < nlayers; i++)
        bad = json_array_append_new(arr, descriptor(layers[i])) != 0;
    if (!bad)
        bad = json_object_set_new(root, "schemaVersion", json_integer(2)) != 0 ||
              json_object_set_new(root, "mediaType", json_string(OCI_MT_MANIFEST)) != 0 ||
              json_object_set_new(root, "config", descriptor(config)) != 0 ||
              json_object_set(root, "layers", arr) != 0;
    if (bad)
        olm_error_set(err, "building the image manifest failed (out of memory)");
    else
        out = dump(root, err, "image manifest");
    json_decref(root);
    json_decref(arr);
    return out;
}

void oci_image_free(oci_image *img)
{
    if (!img)
        return;
    oci_layer_free(&img->layer);
    free(img->config_json);
    free(img->manifest_json);
    memset(img, 0, sizeof *img);
}

int oci_image_build(const char *dir, const char *prefix, const oci_label *labels, size_t nlabels,
                    const oci_run_config *run, const char *created_by, oci_image *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (oci_layer_from_dir(dir, prefix, &out->layer, err) != 0)
        return -1;
    out->config_json = oci_image_config_json(labels, nlabels, run, out->layer.diff_id, created_by, err);
    if (!out->config_json)
        goto fail;
    out->config.media_type = OCI_MT_CONFIG;
    out->config.data = (const unsigned char *)out->config_json;
    out->config.size = strlen(out->config_json);
    if (oci_sha256_buf(out->config_json, out->config.size, out->config.digest) != 0) {
        olm_error_set(err, "hashing the image config failed");
        goto fail;
    }
    const oci_blob *layers[1] = {&out->layer.blob};
    out->manifest_json = oci_image_manifest_json(&out->config, layers, 1, err);
    if (!out->manifest_json)
        goto fail;
    out->manifest_len = strlen(out->manifest_json);
    if (oci_sha256_buf(out->manifest_json, out->manifest_len, out->manifest_digest) != 0) {
        olm_error_set(err, "hashing the image manifest failed");
        goto fail;
    }
    return 0;
fail:
    oci_image_free(out);
    return -1;
}

/* install_record: the record.json codec and the Secret that carries it (install_record.h).
 *
 * The reader is strict on purpose: the record decides what the pruner and the
 * uninstaller delete, so a record that does not parse exactly is an error that names
 * the bad field, never a guess. */
#include "install_record.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "olm_base64.h"

#define SECRET_PREFIX "olmv1-install-"
#define SECRET_NAME_MAX 253
/* Hashed names: prefix + up to this many characters of the name + "-" + 16 hex. */
#define HASHED_KEEP (SECRET_NAME_MAX - (sizeof SECRET_PREFIX - 1) - 1 - 16)

char *install_record_secret_name(const char *extension)
{
    if (!extension)
        return NULL;
    size_t n = strlen(extension);
    char *out = NULL;
    if (sizeof SECRET_PREFIX - 1 + n <= SECRET_NAME_MAX) {
        if (asprintf(&out, SECRET_PREFIX "%s", extension) < 0)
            return NULL;
        return out;
    }
    /* Too long for a Secret name: keep a readable prefix of the extension name and make
     * it unique with a sha256 of the whole name.  The kept part must not end in '.' or
     * '-' (the result must stay a DNS-1123 subdomain). */
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(extension, n, md, &mdlen, EVP_sha256(), NULL) || mdlen < 8)
        return NULL;
    size_t keep = HASHED_KEEP;
    while (keep > 0 && (extension[keep - 1] == '.' || extension[keep - 1] == '-'))
        keep--;
    if (asprintf(&out, SECRET_PREFIX "%.*s-%02x%02x%02x%02x%02x%02x%02x%02x", (int)keep, extension, md[0], md[1],
                 md[2], md[3], md[4], md[5], md[6], md[7]) < 0)
        return NULL;
    return out;
}

/* ------------------------------------------------------------ to JSON */

static json_t *objects_json(const install_record *r)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (size_t i = 0; i < r->nobjects; i++) {
        const install_object_ref *o = &r->objects[i];
        json_t *e = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", o->api_version ? o->api_version : "", "kind",
                              o->kind ? o->kind : "", "namespace", o->namespace_ ? o->namespace_ : "", "name",
                              o->name ? o->name : "");
        char hex[17];
        if (e && o->content_hash) {
            snprintf(hex, sizeof hex, "%016" PRIx64, o->content_hash);
            if (json_object_set_new(e, "contentHash", json_string(hex)) < 0) {
                json_decref(e);
                e = NULL;
            }
        }
        if (!e || json_array_append_new(arr, e) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

#define S(x) ((x) ? (x) : "")

char *install_record_to_json(const install_record *r)
{
    if (!r)
        return NULL;
    json_t *objs = objects_json(r);
    if (!objs)
        return NULL;
    /* "o" steals objs, also on failure. */
    json_t *doc = json_pack("{s:s, s:{s:s, s:s, s:s, s:s}, s:s, s:o, s:s}", "extension", S(r->extension), "bundle",
                            "name", S(r->bundle_name), "version", S(r->bundle_version), "image", S(r->bundle_image),
                            "package", S(r->package), "properties", r->properties ? r->properties : "[]", "objects",
                            objs, "installedAt", S(r->installed_at));
    if (!doc || (r->pending && json_object_set_new(doc, "pending", json_true()) < 0)) {
        json_decref(doc);
        return NULL;
    }
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

/* ------------------------------------------------------------ from JSON */

/* A required (or, with opt, optional) string field: copied into *out. */
static int take_str(const json_t *obj, const char *key, const char *where, int opt, const char *dflt, char **out,
                    olm_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && opt) {
        *out = strdup(dflt);
    } else if (!json_is_string(v)) {
        return olm_error_set(err, "install record: %s%s is %s", where, key, v ? "not a string" : "missing");
    } else {
        *out = strndup(json_string_value(v), json_string_length(v));
    }
    if (!*out)
        return olm_error_set(err, "out of memory");
    return 0;
}

static int take_nonempty(const json_t *obj, const char *key, const char *where, char **out, olm_error *err)
{
    if (take_str(obj, key, where, 0, NULL, out, err) < 0)
        return -1;
    if (!**out)
        return olm_error_set(err, "install record: %s%s is empty", where, key);
    return 0;
}

static int parse_objects(const json_t *arr, install_record *r, olm_error *err)
{
    if (!arr)
        return 0; /* no objects yet: an install that rendered nothing */
    if (!json_is_array(arr))
        return olm_error_set(err, "install record: objects is not an array");
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    r->objects = calloc(n, sizeof *r->objects);
    if (!r->objects)
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        char where[48];
        snprintf(where, sizeof where, "objects[%zu].", i);
        if (!json_is_object(e))
            return olm_error_set(err, "install record: objects[%zu] is not an object", i);
        install_object_ref *o = &r->objects[i];
        r->nobjects = i + 1; /* so install_record_free releases what this entry got */
        if (take_nonempty(e, "apiVersion", where, &o->api_version, err) < 0 ||
            take_nonempty(e, "kind", where, &o->kind, err) < 0 ||
            take_str(e, "namespace", where, 1, "", &o->namespace_, err) < 0 ||
            take_nonempty(e, "name", where, &o->name, err) < 0)
            return -1;
        const json_t *h = json_object_get(e, "contentHash");
        if (h) {
            const char *hs = json_string_value(h);
            size_t hl = hs ? strlen(hs) : 0;
            if (hl == 0 || hl > 16 || strspn(hs, "0123456789abcdefABCDEF") != hl)
                return olm_error_set(err, "install record: %scontentHash is not 1 to 16 hex digits", where);
            o->content_hash = (uint64_t)strtoull(hs, NULL, 16);
        }
    }
    return 0;
}

/* properties must be a JSON array; the text itself is kept as it is. */
static int check_properties(const char *text, olm_error *err)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    int ok = json_is_array(v);
    json_decref(v);
    if (!v)
        return olm_error_set(err, "install record: properties is not valid JSON: %s (line %d column %d)", je.text,
                             je.line, je.column);
    if (!ok)
        return olm_error_set(err, "install record: properties is not a JSON array");
    return 0;
}

int install_record_from_json(const char *text, size_t len, install_record *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (!doc)
        return olm_error_set(err, "install record: not valid JSON: %s (line %d column %d)", je.text, je.line,
                             je.column);
    int rc = -1;
    const json_t *bundle = json_object_get(doc, "bundle");
    if (!json_is_object(bundle)) {
        olm_error_set(err, "install record: bundle is %s", bundle ? "not an object" : "missing");
        goto done;
    }
    if (take_nonempty(doc, "extension", "", &out->extension, err) < 0 ||
        take_nonempty(bundle, "name", "bundle.", &out->bundle_name, err) < 0 ||
        take_str(bundle, "version", "bundle.", 0, NULL, &out->bundle_version, err) < 0 ||
        take_str(bundle, "image", "bundle.", 1, "", &out->bundle_image, err) < 0 ||
        take_str(bundle, "package", "bundle.", 1, "", &out->package, err) < 0 ||
        take_str(doc, "properties", "", 1, "[]", &out->properties, err) < 0 ||
        check_properties(out->properties, err) < 0 ||
        parse_objects(json_object_get(doc, "objects"), out, err) < 0 ||
        take_str(doc, "installedAt", "", 1, "", &out->installed_at, err) < 0)
        goto done;
    const json_t *pending = json_object_get(doc, "pending");
    if (pending && !json_is_boolean(pending)) {
        olm_error_set(err, "install record: pending is not a boolean");
        goto done;
    }
    out->pending = json_is_true(pending);
    rc = 0;
done:
    json_decref(doc);
    if (rc < 0)
        install_record_free(out);
    return rc;
}

/* ------------------------------------------------------------ Secret */

int install_record_from_secret(const json_t *secret, install_record *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    const json_t *md = json_object_get(secret, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const json_t *v = json_object_get(json_object_get(secret, "data"), "record.json");
    if (!json_is_string(v))
        return olm_error_set(err, "install record Secret '%s' has no data \"record.json\"", name ? name : "?");
    /* Secret data is strict, padded base64. */
    size_t len = 0;
    char *text = olm_base64_decode(json_string_value(v), json_string_length(v), 0, &len, err);
    if (!text)
        return errno == ENOMEM
                   ? olm_error_set(err, "out of memory")
                   : olm_error_set(err, "install record Secret '%s': data \"record.json\" is not valid base64",
                                   name ? name : "?");
    int rc = install_record_from_json(text, len, out, err);
    free(text);
    if (rc < 0)
        return olm_error_wrap(err, "install record Secret '%s'", name ? name : "?");
    return 0;
}

json_t *install_record_to_secret(const install_record *r, const char *system_namespace)
{
    if (!r || !r->extension || !system_namespace)
        return NULL;
    char *name = install_record_secret_name(r->extension);
    char *text = install_record_to_json(r);
    char *b64 = text ? olm_base64_encode(text, strlen(text), NULL, NULL) : NULL;
    json_t *s = NULL;
    if (name && b64)
        s = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
                      "Secret", "metadata", "name", name, "namespace", system_namespace, "labels", OWNER_KIND_LABEL,
                      "ClusterExtension", OWNER_NAME_LABEL, r->extension, INSTALL_RECORD_LABEL, "true", "type",
                      INSTALL_RECORD_TYPE, "data", "record.json", b64);
    free(name);
    free(text);
    free(b64);
    return s;
}

void install_record_free(install_record *r)
{
    if (!r)
        return;
    free(r->extension);
    free(r->bundle_name);
    free(r->bundle_version);
    free(r->bundle_image);
    free(r->package);
    free(r->properties);
    for (size_t i = 0; i < r->nobjects; i++) {
        free(r->objects[i].api_version);
        free(r->objects[i].kind);
        free(r->objects[i].namespace_);
        free(r->objects[i].name);
    }
    free(r->objects);
    free(r->installed_at);
    memset(r, 0, sizeof *r);
}

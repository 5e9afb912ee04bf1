/* helm_release: upstream's Helm release Secrets, written and read (helm_release.h). */
#include "olm_array.h"
#include "helm_release.h"
#include "olm_hash.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gocompat.h"
#include "olm_base64.h"
#include "strbuf.h"

/* A release's JSON is at most this big once gunzipped: 11 chunks of ~1 MiB gzip of JSON text
 * compress well, but never 64-fold; anything bigger is not a release but a bomb. */
#define HELM_MAX_JSON (HELM_MAX_CHUNKS * (size_t)HELM_CHUNK_SIZE * 64)

char *helm_release_secret_name(const char *release, int version)
{
    char *s = NULL;
    return asprintf(&s, "sh.helm.release.v1.%s.v%d", release, version) < 0 ? NULL : s;
}

/* ------------------------------------------------------------ gzip */

static int gzip_best(const char *in, size_t len, unsigned char **out, size_t *out_len, olm_error *err)
{
    z_stream z = {0};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return olm_error_set(err, "gzip: cannot start the compressor");
    uLong cap = deflateBound(&z, (uLong)len) + 32;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return olm_error_set(err, "out of memory");
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return olm_error_set(err, "gzip: compressing the release failed");
    }
    *out = buf;
    return 0;
}

static int gunzip_bounded(const unsigned char *in, size_t len, strbuf *out, olm_error *err)
{
    z_stream z = {0};
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return olm_error_set(err, "gunzip: cannot start the decompressor");
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    unsigned char chunk[65536];
    int rc;
    do {
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&z);
            return olm_error_set(err, "the release is not valid gzip (%s)", z.msg ? z.msg : "truncated");
        }
        size_t got = sizeof chunk - z.avail_out;
        if (out->len + got > HELM_MAX_JSON) {
            inflateEnd(&z);
            return olm_error_set(err, "the release is larger than %zu bytes once gunzipped", (size_t)HELM_MAX_JSON);
        }
        if (strbuf_append(out, (const char *)chunk, got) < 0) {
            inflateEnd(&z);
            return olm_error_set(err, "out of memory");
        }
    } while (rc != Z_STREAM_END && (z.avail_in > 0 || z.avail_out == 0));
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        return olm_error_set(err, "the release is not valid gzip (truncated)");
    return 0;
}

/* ------------------------------------------------------------ names */

/* The chunk Secret name: "<key>-" + base32 (alphabet a-z1-6, no padding) of the FNV-1a 64
 * hash of the chunk, as the chunked driver names them. */
static char *chunk_name(const char *key, const unsigned char *data, size_t len)
{
    uint64_t h = olm_fnv1a(OLM_FNV1A_OFFSET, data, len);
    unsigned char be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (unsigned char)(h >> (56 - 8 * i));
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz123456";
    char enc[16];
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (int i = 0; i < 8; i++) {
        acc = (acc << 8) | be[i];
        bits += 8;
        while (bits >= 5) {
            enc[n++] = alphabet[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0)
        enc[n++] = alphabet[(acc << (5 - bits)) & 31];
    enc[n] = 0;
    char *s = NULL;
    return asprintf(&s, "%s-%s", key, enc) < 0 ? NULL : s;
}

/* ------------------------------------------------------------ write */

/* The manifest as upstream's post-renderer leaves it: one object's JSON a line. */
static int manifest_text(const helm_release_in *in, strbuf *out)
{
    size_t n = in->objects ? json_array_size(in->objects) : in->rec->nobjects;
    for (size_t i = 0; i < n; i++) {
        json_t *o = in->objects ? json_incref(json_array_get(in->objects, i)) : NULL;
        if (!o) {
            const install_object_ref *r = &in->rec->objects[i];
            o = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", r->api_version, "kind", r->kind, "metadata", "name",
                          r->name);
            if (o && r->namespace_ && *r->namespace_)
                json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(r->namespace_));
        }
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(o);
        if (!text)
            return -1;
        int rc = strbuf_printf(out, "%s\n", text);
        free(text);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static json_t *release_labels(const install_record *rec)
{
    return json_pack("{s:s, s:s, s:s, s:s}", HELM_LABEL_PACKAGE, rec->package, HELM_LABEL_BUNDLE, rec->bundle_name,
                     HELM_LABEL_VERSION, rec->bundle_version, HELM_LABEL_REFERENCE, rec->bundle_image);
}

static char *release_json(const helm_release_in *in, olm_error *err)
{
    const install_record *rec = in->rec;
    const char *chart = rec->package && *rec->package ? rec->package : rec->bundle_name;
    strbuf manifest = STRBUF_INIT;
    if (manifest_text(in, &manifest) < 0) {
        strbuf_free(&manifest);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    const char *first = in->first_deployed && *in->first_deployed ? in->first_deployed : rec->installed_at;
    json_t *annotations = json_pack("{s:s}", "olm.properties", rec->properties ? rec->properties : "[]");
    json_t *doc = json_pack(
        "{s:s, s:s, s:i, s:{s:s, s:s, s:s, s:s, s:s}, s:{s:{s:s, s:s, s:s, s:o}, s:n, s:[], s:{}, s:n, s:[]},"
        " s:{}, s:s%, s:o}",
        "name", rec->extension, "namespace", in->release_namespace ? in->release_namespace : "", "version",
        in->version, "info", "first_deployed", first, "last_deployed", rec->installed_at, "deleted", "",
        "description", in->version > 1 ? "Upgrade complete" : "Install complete", "status", "deployed", "chart",
        "metadata", "name", chart, "version", rec->bundle_version, "apiVersion", "v2", "annotations", annotations,
        "lock", "templates", "values", "schema", "files", "config", "manifest", strbuf_str(&manifest),
        manifest.len, "labels", release_labels(rec));
    strbuf_free(&manifest);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text)
        olm_error_set(err, "out of memory");
    return text;
}

/* A label value Kubernetes accepts: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
static bool valid_label_value(const char *v)
{
    size_t n = strlen(v);
    if (n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
            return false;
    }
    return true;
}

static json_t *b64(const unsigned char *data, size_t len)
{
    char *s = olm_base64_encode(data, len, NULL, NULL);
    json_t *v = s ? json_string(s) : NULL;
    free(s);
    return v;
}

json_t *helm_release_secrets(const helm_release_in *in, const char *system_namespace, json_t **chunks,
                             olm_error *err)
{
    *chunks = NULL;
    if (!in || !in->rec || in->rec->pending || in->version < 1)
        return olm_error_set(err, "helm release: an installed record and a version are required"), NULL;
    char *text = release_json(in, err);
    if (!text)
        return NULL;
    unsigned char *gz = NULL;
    size_t gzlen = 0;
    int rc = gzip_best(text, strlen(text), &gz, &gzlen, err);
    free(text);
    if (rc < 0)
        return NULL;
    size_t nchunks = gzlen ? (gzlen + HELM_CHUNK_SIZE - 1) / HELM_CHUNK_SIZE : 1;
    json_t *index = NULL, *extra_names = json_array(), *chunk_list = json_array();
    char *key = helm_release_secret_name(in->rec->extension, in->version);
    if (nchunks > HELM_MAX_CHUNKS) {
        olm_error_set(err, "release too large: \"%s\" requires %zu chunks, which exceeds the maximum of %d",
                      in->rec->extension, nchunks, HELM_MAX_CHUNKS);
        goto fail;
    }
    if (!key || !extra_names || !chunk_list)
        goto oom;
    for (size_t i = 1; i < nchunks; i++) {
        size_t off = i * HELM_CHUNK_SIZE, len = gzlen - off < HELM_CHUNK_SIZE ? gzlen - off : HELM_CHUNK_SIZE;
        char *name = chunk_name(key, gz + off, len);
        json_t *data = b64(gz + off, len);
        json_t *c = name && data ? json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:s, s:b, s:{s:o}}",
                                            "apiVersion", "v1", "kind", "Secret", "metadata", "name", name,
                                            "namespace", system_namespace, "labels", "owner", HELM_OWNER, "key",
                                            key, "type", "chunk", "type", HELM_CHUNK_TYPE, "immutable", 1, "data",
                                            "chunk", data)
                                 : NULL;
        if (!c && data)
            json_decref(data);
        int bad = !c || json_array_append_new(chunk_list, c) < 0 || json_array_append_new(extra_names, json_string(name)) < 0;
        free(name);
        if (bad)
            goto oom;
    }
    char *names_text = json_dumps(extra_names, JSON_COMPACT);
    json_t *names_b64 = names_text ? b64((const unsigned char *)names_text, strlen(names_text)) : NULL;
    free(names_text);
    json_t *chunk0 = b64(gz, gzlen < HELM_CHUNK_SIZE ? gzlen : HELM_CHUNK_SIZE);
    char version[16];
    snprintf(version, sizeof version, "%d", in->version);
    index = names_b64 && chunk0
                ? json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:{}}, s:s, s:b, s:{s:o, s:o}}",
                            "apiVersion", "v1", "kind", "Secret", "metadata", "name", key, "namespace",
                            system_namespace, "labels", "name", in->rec->extension, "owner", HELM_OWNER, "status",
                            "deployed", "version", version, "key", key, "type", "index", "annotations", "type",
                            HELM_INDEX_TYPE, "immutable", 0, "data", "chunk", chunk0, "extraChunks", names_b64)
                : NULL;
    if (!index) {
        json_decref(names_b64);
        json_decref(chunk0);
        goto oom;
    }
    /* The release labels: labels where valid, annotations otherwise (an image reference). */
    json_t *meta = json_object_get(index, "metadata"), *labels = release_labels(in->rec);
    const char *k;
    json_t *v;
    json_object_foreach(labels, k, v) json_object_set(
        json_object_get(meta, valid_label_value(json_string_value(v)) ? "labels" : "annotations"), k, v);
    json_decref(labels);
    if (in->owner_uid && *in->owner_uid) {
        json_t *ref = json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion", "olm.operatorframework.io/v1",
                                "kind", "ClusterExtension", "name", in->rec->extension, "uid", in->owner_uid,
                                "controller", 1, "blockOwnerDeletion", 1);
        if (!ref || json_object_set_new(meta, "ownerReferences", ref) < 0)
            goto oom;
    }
    free(key);
    free(gz);
    json_decref(extra_names);
    *chunks = chunk_list;
    return index;
oom:
    olm_error_set(err, "out of memory");
fail:
    free(key);
    free(gz);
    json_decref(index);
    json_decref(extra_names);
    json_decref(chunk_list);
    return NULL;
}

/* ------------------------------------------------------------ read */

static const char *str_at(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static char *dup_or(const char *s, const char *def)
{
    return strdup(s ? s : def);
}

static json_t *decoded_data(const json_t *secret, const char *key, olm_error *err)
{
    const json_t *v = json_object_get(json_object_get(secret, "data"), key);
    if (!json_is_string(v))
        return olm_error_set(err, "the index Secret has no data \"%s\"", key), NULL;
    size_t len = 0;
    char *raw = olm_base64_decode(json_string_value(v), json_string_length(v), 0, &len, err);
    if (!raw)
        return NULL;
    json_t *s = json_stringn_nocheck(raw, len); /* bytes, kept in a jansson string */
    free(raw);
    return s ? s : (olm_error_set(err, "out of memory"), NULL);
}

json_t *helm_release_extra_chunk_names(const json_t *index_secret, olm_error *err)
{
    json_t *text = decoded_data(index_secret, "extraChunks", err);
    if (!text)
        return NULL;
    json_t *names = json_loadb(json_string_value(text), json_string_length(text), JSON_DECODE_ANY, NULL);
    json_decref(text);
    size_t i;
    json_t *n;
    bool ok = json_is_array(names) || json_is_null(names);
    json_array_foreach(names, i, n) ok = ok && json_is_string(n);
    if (!ok) {
        json_decref(names);
        return olm_error_set(err, "extraChunks is not a JSON list of Secret names"), NULL;
    }
    if (json_is_null(names)) {
        json_decref(names);
        names = json_array();
    }
    return names;
}

typedef struct manifest_ctx {
    install_record *rec;
    size_t cap;
    olm_error *err;
} manifest_ctx;

static int add_object(void *ud, json_t *root, int line)
{
    (void)line;
    manifest_ctx *m = ud;
    if (json_is_null(root)) { /* an empty document ("---" twice) */
        json_decref(root);
        return 0;
    }
    const json_t *meta = json_object_get(root, "metadata");
    const char *av = str_at(root, "apiVersion"), *kind = str_at(root, "kind"), *name = str_at(meta, "name");
    if (!av || !kind || !name || !*av || !*kind || !*name) {
        json_decref(root);
        olm_error_set(m->err, "an object of the manifest has no apiVersion, kind or metadata.name");
        return -1;
    }
    install_record *r = m->rec;
    if (OLM_ARRAY_RESERVE(r->objects, m->cap, r->nobjects + 1) < 0) {
        json_decref(root);
        olm_error_set(m->err, "out of memory");
        return -1;
    }
    install_object_ref *o = &r->objects[r->nobjects++];
    o->api_version = strdup(av);
    o->kind = strdup(kind);
    o->namespace_ = dup_or(str_at(meta, "namespace"), "");
    o->name = strdup(name);
    json_decref(root);
    if (!o->api_version || !o->kind || !o->namespace_ || !o->name) {
        olm_error_set(m->err, "out of memory");
        return -1;
    }
    return 0;
}

/* One "---" document of a manifest: JSON objects one after the other (what upstream's
 * post-renderer writes, one a line), or YAML (what Helm's templates write). */
static int manifest_document(const char *p, size_t n, manifest_ctx *m)
{
    while (n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
        n--;
    }
    if (!n)
        return 0;
    if (*p != '{') {
        gocompat_yaml_opts yo = {.flags = GOCOMPAT_YAML_NO_ALIASES};
        gocompat_yaml_error ye;
        olm_error_clear(m->err);
        if (gocompat_yaml_decode(p, n, &yo, add_object, m, &ye) < 0)
            return m->err->msg[0] ? -1 : olm_error_set(m->err, "the release's manifest is not valid YAML (line %d)", ye.line);
        return 0;
    }
    while (n) {
        json_error_t je;
        json_t *o = json_loadb(p, n, JSON_DISABLE_EOF_CHECK, &je);
        if (!o)
            return olm_error_set(m->err, "the release's manifest is not valid JSON: %s", je.text);
        if (add_object(m, o, 0) < 0)
            return -1;
        p += je.position;
        n -= je.position;
        while (n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
            p++;
            n--;
        }
    }
    return 0;
}

/* The objects of a manifest: documents separated by "---" lines; "#" lines are comments. */
static int manifest_objects(const char *text, size_t len, manifest_ctx *m)
{
    strbuf docbuf = STRBUF_INIT;
    const char *end = text + len;
    int rc = 0;
    for (const char *line = text; rc == 0 && line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *next = nl ? nl + 1 : end;
        size_t ll = (size_t)(next - line);
        if (ll >= 3 && strncmp(line, "---", 3) == 0 && (ll == 3 || line[3] == '\n' || line[3] == ' ' || line[3] == '\r')) {
            rc = manifest_document(docbuf.data ? strbuf_str(&docbuf) : "", docbuf.len, m);
            strbuf_reset(&docbuf);
        } else if (*line != '#' && strbuf_append(&docbuf, line, ll) < 0) {
            rc = olm_error_set(m->err, "out of memory");
        }
        line = next;
    }
    if (rc == 0)
        rc = manifest_document(docbuf.data ? strbuf_str(&docbuf) : "", docbuf.len, m);
    strbuf_free(&docbuf);
    return rc;
}

/* A release label: the JSON's own labels (ours), else the Secret's labels, else its
 * annotations (where the chunked driver puts values that are not valid labels). */
static const char *release_label(const json_t *doc, const json_t *secret, const char *key)
{
    const json_t *meta = json_object_get(secret, "metadata");
    const char *v = str_at(json_object_get(doc, "labels"), key);
    if (!v)
        v = str_at(json_object_get(meta, "labels"), key);
    if (!v)
        v = str_at(json_object_get(meta, "annotations"), key);
    return v;
}

static int decode_doc(const json_t *doc, const json_t *secret, helm_release *out, olm_error *err)
{
    install_record *rec = &out->rec;
    const json_t *info = json_object_get(doc, "info");
    const char *name = str_at(doc, "name");
    const char *bundle = release_label(doc, secret, HELM_LABEL_BUNDLE);
    if (!name || !*name)
        return olm_error_set(err, "the release has no name");
    if (!bundle || !*bundle)
        return olm_error_set(err, "the release has no label %s: not installed by OLM v1", HELM_LABEL_BUNDLE);
    const char *props =
        str_at(json_object_get(json_object_get(json_object_get(doc, "chart"), "metadata"), "annotations"),
               "olm.properties");
    json_t *parsed = props ? json_loads(props, JSON_DECODE_ANY, NULL) : NULL;
    bool props_ok = json_is_array(parsed);
    json_decref(parsed);
    out->name = strdup(name);
    out->namespace_ = dup_or(str_at(doc, "namespace"), "");
    out->status = dup_or(str_at(info, "status"), "");
    out->first_deployed = dup_or(str_at(info, "first_deployed"), "");
    out->version = (int)json_integer_value(json_object_get(doc, "version"));
    rec->extension = strdup(name);
    rec->bundle_name = strdup(bundle);
    rec->bundle_version = dup_or(release_label(doc, secret, HELM_LABEL_VERSION), "");
    rec->bundle_image = dup_or(release_label(doc, secret, HELM_LABEL_REFERENCE), "");
    rec->package = dup_or(release_label(doc, secret, HELM_LABEL_PACKAGE), "");
    rec->properties = strdup(props_ok ? props : "[]");
    rec->installed_at = dup_or(str_at(info, "last_deployed"), "");
    if (!out->name || !out->namespace_ || !out->status || !out->first_deployed || !rec->extension ||
        !rec->bundle_name || !rec->bundle_version || !rec->bundle_image || !rec->package || !rec->properties ||
        !rec->installed_at)
        return olm_error_set(err, "out of memory");
    const json_t *manifest = json_object_get(doc, "manifest");
    if (!json_is_string(manifest))
        return 0; /* a release of nothing */
    manifest_ctx m = {.rec = rec, .err = err};
    return manifest_objects(json_string_value(manifest), json_string_length(manifest), &m);
}

int helm_release_decode(const json_t *index_secret, const char *const *extra, const size_t *extra_len, size_t n,
                        helm_release *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *first = decoded_data(index_secret, "chunk", err);
    if (!first)
        return -1;
    strbuf gz = STRBUF_INIT, text = STRBUF_INIT;
    int rc = strbuf_append(&gz, json_string_value(first), json_string_length(first));
    json_decref(first);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = strbuf_append(&gz, extra[i], extra_len[i]);
    if (rc < 0) {
        strbuf_free(&gz);
        return olm_error_set(err, "out of memory");
    }
    rc = gunzip_bounded((const unsigned char *)strbuf_str(&gz), gz.len, &text, err);
    strbuf_free(&gz);
    json_t *doc = NULL;
    if (rc == 0) {
        json_error_t je;
        doc = json_loadb(strbuf_str(&text), text.len, 0, &je);
        if (!json_is_object(doc))
            rc = olm_error_set(err, "the release is not a JSON object: %s", doc ? "" : je.text);
    }
    strbuf_free(&text);
    if (rc == 0)
        rc = decode_doc(doc, index_secret, out, err);
    json_decref(doc);
    if (rc < 0)
        helm_release_free(out);
    return rc;
}

void helm_release_free(helm_release *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->namespace_);
    free(r->status);
    free(r->first_deployed);
    install_record_free(&r->rec);
    memset(r, 0, sizeof *r);
}

/* revision_pack: the objects of a revision packed into immutable, content-addressed Secrets,
 * as upstream's SecretPacker (secretpacker.go) does, so a revision's size is not bound by
 * etcd's object limit (a 1 MB CRD) and unchanged content keeps its Secret name. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "gocompat.h"
#include "olm_array.h"
#include "olm_base64.h"
#include "revision.h"
#include "strbuf.h"

/* ------------------------------------------------------------ bytes as encoding/json writes them */

char *revision_object_bytes(const json_t *object, size_t *len)
{
    /* unstructured's map[string]interface{} through json.Marshal: keys sorted, HTML escaped. */
    strbuf sb = STRBUF_INIT;
    if (gocompat_json_encode(&sb, object, GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    *len = sb.len;
    return strbuf_detach(&sb);
}

/* gzip at best compression (gzip.BestCompression).  malloc'd, or NULL. */
static unsigned char *gzip_bytes(const void *data, size_t len, size_t *out_len)
{
    z_stream zs = {0};
    if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    uLong cap = deflateBound(&zs, (uLong)len);
    unsigned char *out = malloc(cap);
    if (!out) {
        deflateEnd(&zs);
        return NULL;
    }
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int rc = deflate(&zs, Z_FINISH);
    *out_len = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

/* contentHash: base64url (no padding) of the SHA-256, 43 characters. */
static int content_key(const void *data, size_t len, char key[64])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1)
        return -1;
    olm_error err;
    char *b64 = olm_base64_encode(md, mdlen, NULL, &err);
    if (!b64)
        return -1;
    size_t j = 0;
    for (size_t i = 0; b64[i] && b64[i] != '=' && j < 63; i++)
        key[j++] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    key[j] = '\0';
    free(b64);
    return 0;
}

/* ------------------------------------------------------------ packing */

typedef struct entry {
    char key[64];
    unsigned char *data;
    size_t len;
} entry;

typedef struct pending {
    json_t *slot; /* the phase object entry whose "object" becomes a "ref" */
    char key[64];
} pending;

typedef struct packer {
    const char *revision, *owner, *ns;
    json_t *secrets;
    entry *entries;
    size_t nentries, centries, size;
    pending *refs;
    size_t nrefs, crefs;
} packer;

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->key, ((const entry *)b)->key);
}

/* secretNameFromData: "<revision>-<16 hex>" of SHA-256 over the sorted keys and values. */
static int secret_name(packer *p, strbuf *name)
{
    qsort(p->entries, p->nentries, sizeof *p->entries, cmp_entry);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    for (size_t i = 0; ok && i < p->nentries; i++)
        ok = EVP_DigestUpdate(ctx, p->entries[i].key, strlen(p->entries[i].key)) == 1 &&
             EVP_DigestUpdate(ctx, p->entries[i].data, p->entries[i].len) == 1;
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok || strbuf_printf(name, "%s-", p->revision) != 0)
        return -1;
    for (int i = 0; i < 8; i++)
        if (strbuf_printf(name, "%02x", md[i]) != 0)
            return -1;
    return 0;
}

static void entries_clear(packer *p)
{
    for (size_t i = 0; i < p->nentries; i++)
        free(p->entries[i].data);
    p->nentries = 0;
    p->size = 0;
    p->nrefs = 0;
}

/* finalizeCurrent: the Secret of the entries so far, and the refs back-filled. */
static int finalize(packer *p)
{
    if (p->nentries == 0)
        return 0;
    strbuf name = STRBUF_INIT;
    json_t *data = json_object();
    json_t *secret = NULL;
    int rc = data && secret_name(p, &name) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < p->nentries; i++) {
        olm_error err;
        char *b64 = olm_base64_encode(p->entries[i].data, p->entries[i].len, NULL, &err);
        rc = b64 && json_object_set_new(data, p->entries[i].key, json_string(b64)) == 0 ? 0 : -1;
        free(b64);
    }
    if (rc == 0)
        secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:b, s:s, s:O}", "apiVersion", "v1", "kind", "Secret",
                           "metadata", "name", strbuf_str(&name), "namespace", p->ns, "labels",
                           REVISION_LABEL_REVISION_NAME, p->revision, REVISION_LABEL_OWNER_NAME, p->owner, "immutable",
                           1, "type", REVISION_SECRET_TYPE, "data", data);
    rc = secret && json_array_append_new(p->secrets, secret) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < p->nrefs; i++) {
        json_t *ref = json_pack("{s:s, s:s, s:s}", "name", strbuf_str(&name), "namespace", p->ns, "key",
                                p->refs[i].key);
        rc = ref && json_object_del(p->refs[i].slot, "object") == 0 &&
                     json_object_set_new(p->refs[i].slot, "ref", ref) == 0
                 ? 0
                 : -1;
    }
    json_decref(data);
    strbuf_free(&name);
    entries_clear(p);
    return rc;
}

static int add_object(packer *p, json_t *slot, size_t phase_idx, size_t obj_idx, olm_error *err)
{
    size_t len = 0;
    unsigned char *data = (unsigned char *)revision_object_bytes(json_object_get(slot, "object"), &len);
    if (!data)
        return olm_error_set(err, "out of memory serializing object in phase %zu index %zu", phase_idx, obj_idx);
    if (len > REVISION_GZIP_THRESHOLD) {
        size_t zlen = 0;
        unsigned char *z = gzip_bytes(data, len, &zlen);
        free(data);
        if (!z)
            return olm_error_set(err, "compressing object in phase %zu index %zu: out of memory", phase_idx, obj_idx);
        data = z;
        len = zlen;
    }
    if (len > REVISION_MAX_SECRET_DATA) {
        free(data);
        return olm_error_set(err,
                             "object in phase %zu index %zu exceeds maximum Secret data size (%zu bytes > %u bytes) "
                             "even after compression",
                             phase_idx, obj_idx, len, REVISION_MAX_SECRET_DATA);
    }
    char key[64];
    if (content_key(data, len, key) != 0) {
        free(data);
        return olm_error_set(err, "hashing object in phase %zu index %zu failed", phase_idx, obj_idx);
    }
    bool exists = false;
    for (size_t i = 0; i < p->nentries && !exists; i++)
        exists = strcmp(p->entries[i].key, key) == 0;
    if (exists) {
        free(data); /* the same content again: one entry, two refs */
    } else {
        if (p->size + len > REVISION_MAX_SECRET_DATA && p->nentries > 0 && finalize(p) != 0) {
            free(data);
            return olm_error_set(err, "out of memory packing objects into Secrets");
        }
        if (OLM_ARRAY_PUSH_SLOT(p->entries, p->nentries, p->centries) < 0) {
            free(data);
            return olm_error_set(err, "out of memory packing objects into Secrets");
        }
        entry *e = &p->entries[p->nentries - 1];
        memcpy(e->key, key, sizeof key);
        e->data = data;
        e->len = len;
        p->size += len;
    }
    if (OLM_ARRAY_PUSH_SLOT(p->refs, p->nrefs, p->crefs) < 0)
        return olm_error_set(err, "out of memory packing objects into Secrets");
    pending *r = &p->refs[p->nrefs - 1];
    r->slot = slot;
    memcpy(r->key, key, sizeof key);
    return 0;
}

int revision_pack(json_t *phases, const char *revision_name, const char *owner_name, const char *system_namespace,
                  json_t *secrets, olm_error *err)
{
    packer p = {.revision = revision_name, .owner = owner_name, .ns = system_namespace, .secrets = secrets};
    int rc = 0;
    size_t i, j;
    json_t *phase, *slot;
    json_array_foreach(phases, i, phase) {
        json_array_foreach(json_object_get(phase, "objects"), j, slot) {
            if (!json_is_object(json_object_get(slot, "object")))
                continue; /* a ref already */
            if ((rc = add_object(&p, slot, i, j, err)) != 0)
                break;
        }
        if (rc != 0)
            break;
    }
    if (rc == 0 && finalize(&p) != 0)
        rc = olm_error_set(err, "out of memory packing objects into Secrets");
    entries_clear(&p);
    free(p.entries);
    free(p.refs);
    return rc;
}

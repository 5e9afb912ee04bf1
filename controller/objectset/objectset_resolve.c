/* objectset_resolve: a ClusterObjectSet's phases as objects (inline, or by reference to a
 * Secret key), the check that referenced Secrets are immutable, and the per-phase digests of
 * status.observedPhases -- upstream's buildBoxcutterPhases, resolveObjectRef,
 * verifyReferencedSecretsImmutable, computePhaseDigest and verifyObservedPhases, with their
 * messages. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "gocompat.h"
#include "kube_object.h"
#include "olm_base64.h"
#include "objectset_internal.h"
#include "revision.h"


static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

void objectset_phases_free(objectset_phases *p)
{
    for (size_t i = 0; i < p->n; i++) {
        json_decref(p->items[i].objects);
        free(p->items[i].cp);
        free(p->items[i].digest);
    }
    free(p->items);
    memset(p, 0, sizeof *p);
}

int objectset_get_secret(kube_client *admin, json_t *memo, const char *ns, const char *name, json_t **out,
                         olm_error *err)
{
    *out = NULL;
    char key[600];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    json_t *seen = memo ? json_object_get(memo, key) : NULL;
    if (seen) {
        *out = json_incref(seen);
        return 0;
    }
    int g = kube_get(admin, "v1", "Secret", ns, name, out, err);
    if (g == 0 && memo) {
        json_object_del(json_object_get(*out, "metadata"), "managedFields"); /* a memo may outlive the pass */
        json_object_set(memo, key, *out);
    }
    return g;
}

int objectset_check_immutable(kube_client *admin, json_t *memo, const json_t *cos, char **msg, olm_error *err)
{
    *msg = NULL;
    strbuf bad = STRBUF_INIT, seen = STRBUF_INIT; /* seen: "\nns/name\n" entries */
    int rc = 0;
    size_t i, j;
    const json_t *ph, *o;
    json_array_foreach(kube_object_path(cos, "spec") ? json_object_get(kube_object_path(cos, "spec"), "phases") : NULL,
                       i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, o) {
            const json_t *ref = json_object_get(o, "ref");
            const char *name = str(ref, "name"), *ns = str(ref, "namespace");
            if (!*name)
                continue;
            char key[600];
            snprintf(key, sizeof key, "\n%s/%s\n", ns, name);
            if (seen.len && strstr(strbuf_str(&seen), key))
                continue;
            strbuf_puts(&seen, key);
            json_t *secret = NULL;
            olm_error gerr;
            int g = objectset_get_secret(admin, memo, ns, name, &secret, &gerr);
            if (g == KUBE_NOT_FOUND)
                continue; /* resolving says so, and retries */
            if (g != 0) {
                olm_error_set(err, "getting Secret %s/%s: %s", ns, name, gerr.msg);
                rc = -1;
                goto out;
            }
            if (!json_is_true(json_object_get(secret, "immutable")))
                strbuf_printf(&bad, "%s%s/%s", bad.len ? ", " : "", ns, name);
            json_decref(secret);
        }
    }
    if (bad.len) {
        strbuf m = STRBUF_INIT;
        strbuf_printf(&m,
                      "the following secrets are not immutable (referenced secrets must have immutable set to true): %s",
                      strbuf_str(&bad));
        *msg = strbuf_detach(&m);
        rc = 1;
    }
out:
    strbuf_free(&bad);
    strbuf_free(&seen);
    return rc;
}


/* resolveObjectRef.  A new object, or NULL with err. */
static json_t *resolve_ref(kube_client *admin, json_t *memo, const json_t *ref, olm_error *err)
{
    const char *name = str(ref, "name"), *ns = str(ref, "namespace"), *key = str(ref, "key");
    json_t *secret = NULL;
    olm_error gerr;
    if (objectset_get_secret(admin, memo, ns, name, &secret, &gerr) != 0) {
        olm_error_set(err, "getting Secret %s/%s: %s", ns, name, gerr.msg);
        return NULL;
    }
    const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), key));
    if (!b64) {
        olm_error_set(err, "key \"%s\" not found in Secret %s/%s", key, ns, name);
        json_decref(secret);
        return NULL;
    }
    size_t n = 0;
    olm_error berr;
    char *raw = olm_base64_decode(b64, strlen(b64), 0, &n, &berr);
    json_decref(secret);
    if (!raw) {
        olm_error_set(err, "key \"%s\" in Secret %s/%s: %s", key, ns, name, berr.msg);
        return NULL;
    }
    char what[600];
    snprintf(what, sizeof what, "key \"%s\" in Secret %s/%s", key, ns, name);
    if (n >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b) {
        size_t un = 0;
        char *plain = revision_gunzip((unsigned char *)raw, n, &un, what, err);
        free(raw);
        if (!plain)
            return NULL;
        raw = plain;
        n = un;
    }
    json_error_t je;
    json_t *obj = json_loadb(raw, n, 0, &je);
    free(raw);
    if (!obj || !json_is_object(obj)) {
        olm_error_set(err, "unmarshaling object from key \"%s\" in Secret %s/%s: %s", key, ns, name,
                      obj ? "not a JSON object" : je.text);
        json_decref(obj);
        return NULL;
    }
    /* Remember that it came through json.Unmarshal (float64 numbers) for the digest. */
    return obj;
}

static objectset_cp parse_cp(const char *s, objectset_cp dflt)
{
    if (strcmp(s, "Prevent") == 0)
        return OBJECTSET_CP_PREVENT;
    if (strcmp(s, "IfNoController") == 0)
        return OBJECTSET_CP_IF_NO_CONTROLLER;
    if (strcmp(s, "None") == 0)
        return OBJECTSET_CP_NONE;
    return dflt;
}

/* The digest of one phase: sha256 of Go's json.Marshal(map{"name", "objects"}).  `from_ref`
 * marks objects decoded by json.Unmarshal (every number a float64). */
static char *phase_digest(const char *name, const json_t *objects, const bool *from_ref)
{
    strbuf sb = STRBUF_INIT;
    unsigned fl = GOCOMPAT_JSON_SORT_KEYS | GOCOMPAT_JSON_ESCAPE_HTML;
    json_t *jname = json_string(name);
    int bad = !jname || strbuf_puts(&sb, "{\"name\":") != 0 || gocompat_json_encode(&sb, jname, fl) != 0 ||
              strbuf_puts(&sb, ",\"objects\":[") != 0;
    json_decref(jname);
    size_t i;
    const json_t *o;
    json_array_foreach(objects, i, o) {
        if (bad)
            break;
        unsigned f = fl | (from_ref && from_ref[i] ? GOCOMPAT_JSON_FLOAT64_NUMBERS : 0);
        bad = (i && strbuf_putc(&sb, ',') != 0) || gocompat_json_encode(&sb, o, f) != 0;
    }
    if (bad || strbuf_puts(&sb, "]}") != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    char *out = NULL;
    if (EVP_Digest(sb.data, sb.len, md, &mdlen, EVP_sha256(), NULL) == 1 && (out = malloc(8 + 2 * mdlen + 1))) {
        strcpy(out, "sha256:");
        for (unsigned k = 0; k < mdlen; k++)
            snprintf(out + 7 + 2 * k, 3, "%02x", md[k]);
    }
    strbuf_free(&sb);
    return out;
}

char *objectset_phase_digest(const char *name, const json_t *objects)
{
    return phase_digest(name, objects, NULL);
}

int objectset_resolve(kube_client *admin, json_t *memo, const json_t *cos, objectset_phases *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    const json_t *spec = json_object_get(cos, "spec");
    const json_t *phases = json_object_get(spec, "phases");
    objectset_cp spec_cp = parse_cp(str(spec, "collisionProtection"), OBJECTSET_CP_PREVENT);
    size_t np = json_array_size(phases);
    if (np && !(out->items = calloc(np, sizeof *out->items)))
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < np; i++) {
        const json_t *ph = json_array_get(phases, i);
        objectset_phase *p = &out->items[i];
        out->n = i + 1;
        p->name = str(ph, "name");
        const json_t *objs = json_object_get(ph, "objects");
        size_t no = json_array_size(objs);
        objectset_cp phase_cp = parse_cp(str(ph, "collisionProtection"), spec_cp);
        bool *from_ref = calloc(no + 1, sizeof *from_ref);
        p->objects = json_array();
        p->cp = calloc(no + 1, sizeof *p->cp);
        if (!from_ref || !p->objects || !p->cp) {
            free(from_ref);
            objectset_phases_free(out);
            return olm_error_set(err, "out of memory");
        }
        for (size_t j = 0; j < no; j++) {
            const json_t *so = json_array_get(objs, j);
            const json_t *inl = json_object_get(so, "object");
            const json_t *ref = json_object_get(so, "ref");
            json_t *obj = NULL;
            if (json_is_object(inl) && json_object_size(inl)) {
                obj = json_deep_copy(inl);
            } else if (*str(ref, "name")) {
                olm_error rerr;
                if (!(obj = resolve_ref(admin, memo, ref, &rerr))) {
                    olm_error_set(err, "resolving ref in phase \"%s\": %s", p->name, rerr.msg);
                    free(from_ref);
                    objectset_phases_free(out);
                    return -1;
                }
                from_ref[j] = true;
            } else {
                olm_error_set(err, "object in phase \"%s\" has neither object nor ref", p->name);
                free(from_ref);
                objectset_phases_free(out);
                return -1;
            }
            p->cp[j] = parse_cp(str(so, "collisionProtection"), phase_cp);
            json_array_append_new(p->objects, obj);
        }
        p->digest = phase_digest(p->name, p->objects, from_ref);
        free(from_ref);
        if (!p->digest) {
            objectset_phases_free(out);
            return olm_error_set(err, "computing phase digest: out of memory");
        }
    }
    return 0;
}

char *objectset_verify_phases(const json_t *observed, const objectset_phases *p)
{
    strbuf m = STRBUF_INIT;
    if (json_array_size(observed) == 0) {
        strbuf_puts(&m, "stored observedPhases is unexpectedly empty");
        return strbuf_detach(&m);
    }
    if (json_array_size(observed) != p->n) {
        strbuf_printf(&m, "number of phases has changed (expected %zu phases, got %zu)", json_array_size(observed),
                      p->n);
        return strbuf_detach(&m);
    }
    strbuf mis = STRBUF_INIT;
    size_t nmis = 0;
    for (size_t i = 0; i < p->n; i++) {
        size_t k;
        const json_t *o;
        json_array_foreach(observed, k, o) {
            if (strcmp(str(o, "name"), p->items[i].name) != 0)
                continue;
            if (strcmp(str(o, "digest"), p->items[i].digest) != 0) {
                strbuf_printf(&mis, "%sphase \"%s\" (expected digest %s, got %s)", nmis ? "; " : "", p->items[i].name,
                              str(o, "digest"), p->items[i].digest);
                nmis++;
            }
            break;
        }
    }
    if (!nmis) {
        strbuf_free(&mis);
        strbuf_free(&m);
        return NULL;
    }
    strbuf_printf(&m,
                  "resolved content of %zu phase(s) has changed: %s; a referenced object source may have been deleted "
                  "and recreated with different content",
                  nmis, strbuf_str(&mis));
    strbuf_free(&mis);
    return strbuf_detach(&m);
}

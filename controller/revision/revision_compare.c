/* revision_compare: whether a revision holds the objects another would hold, compared by
 * meaning rather than by the bytes in its Secrets.
 *
 * Upstream decides "no new revision" by the bytes: the desired revision packed with the current
 * revision's name must give the same Secret names and keys (hashes of the stored bytes).  Two
 * operator-controllers writing the same bundle can store different bytes for the same objects:
 * gzip (Go's compress/flate and zlib write different streams for the same input; an object
 * above the threshold is stored compressed either way), fields one side's Go types write empty
 * ("strategy":{}, "resources":{}, "rules":null) and the other leaves out, numbers read back as
 * floats (1.0) or written as integers (1).  None of these changes what is applied, so a revision
 * that differs only in them is the current one: taking over another operator-controller's
 * install then makes no revision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "olm_base64.h"
#include "revision.h"


static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}


/* The object stored at `ref` in one of `secrets`, as upstream's resolveObjectRef reads it
 * (base64 data, gzip when it starts with the gzip magic, then JSON).  New reference or NULL. */
static json_t *deref(const json_t *ref, const json_t *secrets, olm_error *err)
{
    const char *name = str(ref, "name"), *ns = str(ref, "namespace"), *key = str(ref, "key");
    size_t i;
    const json_t *s, *secret = NULL;
    json_array_foreach(secrets, i, s) {
        const json_t *md = json_object_get(s, "metadata");
        if (strcmp(str(md, "name"), name) == 0 && (!*ns || strcmp(str(md, "namespace"), ns) == 0)) {
            secret = s;
            break;
        }
    }
    if (!secret) {
        olm_error_set(err, "Secret %s/%s not found", ns, name);
        return NULL;
    }
    const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), key));
    if (!b64) {
        olm_error_set(err, "key \"%s\" not found in Secret %s/%s", key, ns, name);
        return NULL;
    }
    size_t n = 0;
    olm_error berr;
    char *raw = olm_base64_decode(b64, strlen(b64), 0, &n, &berr);
    if (!raw) {
        olm_error_set(err, "key \"%s\" in Secret %s/%s: %s", key, ns, name, berr.msg);
        return NULL;
    }
    if (n >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b) {
        size_t un = 0;
        char what[512];
        snprintf(what, sizeof what, "key \"%s\" in Secret %s/%s", key, ns, name);
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
    if (!json_is_object(obj)) {
        olm_error_set(err, "unmarshaling object from key \"%s\" in Secret %s/%s: %s", key, ns, name,
                      obj ? "not a JSON object" : je.text);
        json_decref(obj);
        return NULL;
    }
    return obj;
}

json_t *revision_phases_inline(const json_t *phases, const json_t *secrets, olm_error *err)
{
    json_t *out = json_deep_copy(phases ? phases : json_array());
    if (!out) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    size_t i, j;
    json_t *ph, *slot;
    json_array_foreach(out, i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, slot) {
            const json_t *ref = json_object_get(slot, "ref");
            if (json_is_object(json_object_get(slot, "object")) || !ref)
                continue;
            json_t *obj = deref(ref, secrets, err);
            if (!obj || json_object_set_new(slot, "object", obj) != 0 || json_object_del(slot, "ref") != 0) {
                if (obj)
                    olm_error_set(err, "out of memory");
                json_decref(out);
                return NULL;
            }
        }
    }
    return out;
}

/* The value as compared: nulls, empty objects and empty arrays left out of objects (what Go's
 * types write and "omitempty" does not), numbers by value.  New reference; NULL for a value
 * that is left out, or on out of memory (*oom set). */
static json_t *normalised(const json_t *v, bool *oom)
{
    if (json_is_null(v))
        return NULL;
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d > -9e15 && d < 9e15 && d == (double)(json_int_t)d)
            return json_integer((json_int_t)d);
        return json_real(d);
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            json_t *n = normalised(x, oom);
            if (*oom)
                break;
            if (n && json_object_set_new(o, k, n) != 0)
                *oom = true;
        }
        if (!o)
            *oom = true;
        if (*oom || json_object_size(o) == 0) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            /* In an array a position counts: an empty element stays (as {}). */
            json_t *n = normalised(x, oom);
            if (*oom)
                break;
            if (json_array_append_new(a, n ? n : json_is_array(x) ? json_array() : json_object()) != 0)
                *oom = true;
        }
        if (!a)
            *oom = true;
        if (*oom || json_array_size(a) == 0) {
            json_decref(a);
            return NULL;
        }
        return a;
    }
    json_t *c = json_copy((json_t *)v);
    if (!c)
        *oom = true;
    return c;
}

int revision_objects_equivalent(const json_t *a, const json_t *b)
{
    bool oom = false;
    json_t *na = normalised(a, &oom);
    json_t *nb = oom ? NULL : normalised(b, &oom);
    int eq = oom ? -1 : json_equal(na ? na : json_null(), nb ? nb : json_null()) ? 1 : 0;
    json_decref(na);
    json_decref(nb);
    return eq;
}

int revision_phases_equivalent(const json_t *a, const json_t *b)
{
    if (json_array_size(a) != json_array_size(b))
        return 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *pa = json_array_get(a, i), *pb = json_array_get(b, i);
        if (strcmp(str(pa, "name"), str(pb, "name")) != 0 ||
            strcmp(str(pa, "collisionProtection"), str(pb, "collisionProtection")) != 0)
            return 0;
        const json_t *oa = json_object_get(pa, "objects"), *ob = json_object_get(pb, "objects");
        if (json_array_size(oa) != json_array_size(ob))
            return 0;
        for (size_t j = 0; j < json_array_size(oa); j++) {
            const json_t *sa = json_array_get(oa, j), *sb = json_array_get(ob, j);
            if (strcmp(str(sa, "collisionProtection"), str(sb, "collisionProtection")) != 0)
                return 0;
            const json_t *xa = json_object_get(sa, "object"), *xb = json_object_get(sb, "object");
            if (!json_is_object(xa) || !json_is_object(xb))
                return 0; /* not resolved: nothing to compare */
            int eq = revision_objects_equivalent(xa, xb);
            if (eq != 1)
                return eq;
        }
    }
    return 1;
}

int revision_equivalent(const json_t *current, const json_t *current_phases, const json_t *desired,
                        const json_t *desired_phases)
{
    const json_t *cs = json_object_get(current, "spec"), *ds = json_object_get(desired, "spec");
    if (strcmp(str(cs, "lifecycleState"), "Archived") == 0)
        return 0;
    if (strcmp(str(cs, "collisionProtection"), str(ds, "collisionProtection")) != 0)
        return 0;
    return revision_phases_equivalent(current_phases, desired_phases);
}

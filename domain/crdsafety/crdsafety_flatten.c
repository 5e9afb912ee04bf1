/* crdsafety_flatten: walks a CRD version's schema the way crdify's
 * SchemaHas does and names every sub-schema by its "simple location"
 * (k8s field.Path rendering rooted at "^"), e.g. ^.spec.foo, ^.spec.list.items,
 * ^.spec.x.allOf[0], ^.spec.m.additionalProperties, ^.patternProperties[re]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdsafety_internal.h"

const json_t *crdsafety_version_schema(const json_t *version)
{
    const json_t *s = json_object_get(json_object_get(version, "schema"), "openAPIV3Schema");
    return json_is_object(s) ? s : NULL;
}

const json_t *crdsafety_crd_version(const json_t *crd, const char *name)
{
    const json_t *versions = json_object_get(json_object_get(crd, "spec"), "versions");
    size_t i;
    const json_t *v;
    json_array_foreach(versions, i, v) {
        const char *n = json_string_value(json_object_get(v, "name"));
        if (n && strcmp(n, name) == 0)
            return v;
    }
    return NULL;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **crdsafety_sorted_keys(const json_t *obj, size_t *n)
{
    *n = json_object_size(obj);
    if (*n == 0)
        return NULL;
    const char **keys = malloc(*n * sizeof(*keys));
    if (!keys)
        return NULL;
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        (void)v;
        keys[i++] = k;
    }
    qsort(keys, *n, sizeof(*keys), cmp_key);
    return keys;
}

static int walk(json_t *out, const json_t *s, const char *path);

/* Recurses into child schema c (if it is a schema) at path <path><suffix>. */
static int child(json_t *out, const json_t *c, const char *path, const char *suffix)
{
    if (!json_is_object(c))
        return 0;
    char *p = NULL;
    if (asprintf(&p, "%s%s", path, suffix) < 0)
        return -1;
    int r = walk(out, c, p);
    free(p);
    return r;
}

/* Children of a keyed map in key order: ".<key>" for properties (prefix NULL),
 * "<prefix>[<key>]" otherwise.  Later duplicates of a path win, as in crdify. */
static int keyed(json_t *out, const json_t *m, const char *path, const char *prefix)
{
    if (!json_is_object(m))
        return 0;
    size_t n;
    const char **keys = crdsafety_sorted_keys(m, &n);
    if (!keys && n)
        return -1;
    int r = 0;
    for (size_t i = 0; !r && i < n; i++) {
        char *suffix = NULL;
        if ((prefix ? asprintf(&suffix, "%s[%s]", prefix, keys[i]) : asprintf(&suffix, ".%s", keys[i])) < 0) {
            r = -1;
            break;
        }
        r = child(out, json_object_get(m, keys[i]), path, suffix);
        free(suffix);
    }
    free(keys);
    return r;
}

static int indexed(json_t *out, const json_t *a, const char *path, const char *prefix)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        char suffix[64];
        snprintf(suffix, sizeof(suffix), "%s[%zu]", prefix, i);
        if (child(out, json_array_get(a, i), path, suffix))
            return -1;
    }
    return 0;
}

static int walk(json_t *out, const json_t *s, const char *path)
{
    /* json_object_set increfs; the CRD outlives the flattened map anyway. */
    if (json_object_set(out, path, (json_t *)s))
        return -1;
    const json_t *items = json_object_get(s, "items");
    if (child(out, items, path, ".items") || indexed(out, items, path, ".items") ||
        indexed(out, json_object_get(s, "allOf"), path, ".allOf") ||
        indexed(out, json_object_get(s, "anyOf"), path, ".anyOf") ||
        indexed(out, json_object_get(s, "oneOf"), path, ".oneOf") ||
        child(out, json_object_get(s, "not"), path, ".not") ||
        keyed(out, json_object_get(s, "properties"), path, NULL) ||
        child(out, json_object_get(s, "additionalProperties"), path, ".additionalProperties") ||
        keyed(out, json_object_get(s, "patternProperties"), path, ".patternProperties") ||
        child(out, json_object_get(s, "additionalItems"), path, ".additionalItems") ||
        keyed(out, json_object_get(s, "definitions"), path, ".definitions") ||
        keyed(out, json_object_get(s, "dependencies"), path, ".dependencies"))
        return -1;
    return 0;
}

json_t *crdsafety_flatten(const json_t *schema)
{
    json_t *out = json_object();
    if (!out)
        return NULL;
    if (schema && walk(out, schema, "^")) {
        json_decref(out);
        return NULL;
    }
    return out;
}

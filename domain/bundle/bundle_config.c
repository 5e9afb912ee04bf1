/* bundle_config: the registry+v1 config schema rules, checked by hand (spec §5.4).
 *
 * The schema upstream builds (draft-07, additionalProperties false):
 *   watchNamespace   absent from the schema when only AllNamespaces is supported;
 *                    otherwise a string, minLength 1, maxLength 63, DNS-1123 label
 *                    pattern, plus a format when only one of Own/Single is
 *                    supported; required unless AllNamespaces is supported, in
 *                    which case it is anyOf [null, <that string>].
 *   deploymentConfig the v0 SubscriptionConfig minus selector.
 * Messages are upstream's rewrites of the jsonschema errors (config/config.go):
 * one error is printed alone, several as "multiple errors found:\n  - a\n  - b". */
#include "bundle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define NS_PATTERN "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
#define NS_MAX 63

typedef struct errlist {
    char *msg[32];
    size_t n;
    int oom;
} errlist;

static void add(errlist *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(errlist *e, const char *fmt, ...)
{
    if (e->n == sizeof e->msg / sizeof e->msg[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    char *m = NULL;
    if (vasprintf(&m, fmt, ap) < 0)
        e->oom = 1;
    else
        e->msg[e->n++] = m;
    va_end(ap);
}

static void errlist_free(errlist *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->msg[i]);
}

/* jsonschema's type names (every JSON number is a float64 upstream: "number"). */
static const char *type_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    default: return "null";
    }
}

static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int is_dns1123_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < n))
            return 0;
    }
    return 1;
}

/* The string branch of watchNamespace: format, then minLength, maxLength, pattern
 * (the order jsonschema v6 checks keywords in). */
static void check_ns_string(errlist *e, const char *v, unsigned modes, const char *install_ns)
{
    int own = (modes & INSTALL_MODE_OWN) != 0, single = (modes & INSTALL_MODE_SINGLE) != 0;
    if (own && !single && *install_ns && strcmp(v, install_ns) != 0)
        add(e, "invalid format for field \"watchNamespace\": '%s' is not valid ownNamespaceInstallMode: "
               "invalid value \"%s\": must be \"%s\" (the namespace where the operator is installed) because "
               "this operator only supports OwnNamespace install mode",
            v, v, install_ns);
    if (single && !own && *install_ns && strcmp(v, install_ns) == 0)
        add(e, "invalid format for field \"watchNamespace\": '%s' is not valid singleNamespaceInstallMode: "
               "invalid value \"%s\": must be different from \"%s\" (the install namespace) because this "
               "operator uses SingleNamespace install mode to watch a different namespace",
            v, v, install_ns);
    size_t len = utf8_len(v);
    if (len < 1)
        add(e, "field \"watchNamespace\" must have minimum length of 1 (len=%zu)", len);
    if (len > NS_MAX)
        add(e, "field \"watchNamespace\" must have maximum length of %d (len=%zu)", NS_MAX, len);
    if (!is_dns1123_label(v))
        add(e, "field \"watchNamespace\" must match pattern \"%s\"", NS_PATTERN);
}

static void check_watch_namespace(errlist *e, const json_t *v, unsigned modes, const char *install_ns)
{
    int required = !(modes & INSTALL_MODE_ALL);
    if (required) {
        if (json_is_null(v))
            add(e, "required field \"watchNamespace\" is missing"); /* upstream's "got null" special case */
        else if (!json_is_string(v))
            add(e, "invalid type for field \"watchNamespace\": got %s, want string", type_of(v));
        else
            check_ns_string(e, json_string_value(v), modes, install_ns);
        return;
    }
    if (json_is_null(v))
        return;
    /* anyOf [null, string]: the anyOf error, then each branch's errors. */
    errlist branch = {0};
    if (!json_is_string(v))
        add(&branch, "invalid type for field \"watchNamespace\": got %s, want string", type_of(v));
    else
        check_ns_string(&branch, json_string_value(v), modes, install_ns);
    if (branch.n == 0 && !branch.oom)
        return;
    add(e, "invalid value for field \"watchNamespace\"");
    add(e, "invalid type for field \"watchNamespace\": got %s, want null", type_of(v));
    if (branch.n > 1)
        add(e, "validation failed"); /* jsonschema's group of several errors in one branch */
    for (size_t i = 0; i < branch.n; i++)
        add(e, "%s", branch.msg[i]);
    e->oom |= branch.oom;
    errlist_free(&branch);
}

/* deploymentConfig: SubscriptionConfig's fields and their JSON types. */
static const struct dc_field {
    const char *name;
    json_type type;
    const char *item_key; /* for lists of objects: a required key of each item */
} dc_fields[] = {
    {"affinity", JSON_OBJECT, NULL},     {"annotations", JSON_OBJECT, NULL},
    {"env", JSON_ARRAY, "name"},         {"envFrom", JSON_ARRAY, NULL},
    {"nodeSelector", JSON_OBJECT, NULL}, {"resources", JSON_OBJECT, NULL},
    {"tolerations", JSON_ARRAY, NULL},   {"volumeMounts", JSON_ARRAY, "name"},
    {"volumes", JSON_ARRAY, "name"},
};

static const struct dc_field *dc_field(const char *name)
{
    for (size_t i = 0; i < sizeof dc_fields / sizeof dc_fields[0]; i++)
        if (strcmp(dc_fields[i].name, name) == 0)
            return &dc_fields[i];
    return NULL;
}

static void check_deployment_config(errlist *e, const json_t *dc)
{
    if (json_is_null(dc))
        return;
    if (!json_is_object(dc)) {
        add(e, "invalid type for field \"deploymentConfig\": got %s, want object", type_of(dc));
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)dc, key, v) {
        const struct dc_field *f = dc_field(key);
        if (!f || json_is_null(v))
            continue;
        if (json_typeof(v) != f->type) {
            add(e, "invalid type for field \"deploymentConfig.%s\": got %s, want %s", key, type_of(v),
                f->type == JSON_ARRAY ? "array" : "object");
            continue;
        }
        if (strcmp(key, "annotations") == 0 || strcmp(key, "nodeSelector") == 0) {
            const char *k2;
            json_t *v2;
            json_object_foreach(v, k2, v2) if (!json_is_string(v2))
                add(e, "invalid type for field \"deploymentConfig.%s.%s\": got %s, want string", key, k2, type_of(v2));
        }
        size_t i;
        json_t *item;
        if (f->type == JSON_ARRAY)
            json_array_foreach(v, i, item) {
                if (!json_is_object(item))
                    add(e, "invalid type for field \"deploymentConfig.%s.%zu\": got %s, want object", key, i, type_of(item));
                else if (f->item_key && !json_is_string(json_object_get(item, f->item_key)))
                    add(e, "required field \"%s\" is missing", f->item_key);
            }
    }
    /* additionalProperties false: jsonschema names the unknown keys in one error and
     * upstream prints the first; we take the first in document order. */
    json_object_foreach((json_t *)dc, key, v) if (!dc_field(key)) {
        add(e, "unknown field \"%s\"", key);
        break;
    }
}

int bundle_config_validate(unsigned modes, const char *install_ns, const json_t *config, bundle_config *out,
                           olm_error *err)
{
    return bundle_config_validate_gated(modes, install_ns, config, BUNDLE_CONFIG_ALL_GATES, out, err);
}

int bundle_config_validate_gated(unsigned modes, const char *install_ns, const json_t *config,
                                 bundle_config_gates gates, bundle_config *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    errlist e = {0};
    int ns_allowed = gates.watch_namespace && (modes & (INSTALL_MODE_OWN | INSTALL_MODE_SINGLE)) != 0;
    const json_t *wn = NULL, *dc = NULL;
    if (config && !json_is_object(config)) {
        add(&e, "invalid type: got %s, want object", type_of(config));
    } else {
        wn = json_object_get(config, "watchNamespace");
        dc = gates.deployment_config ? json_object_get(config, "deploymentConfig") : NULL;
        /* required, then properties, then additionalProperties. */
        if (ns_allowed && !(modes & INSTALL_MODE_ALL) && !wn)
            add(&e, "required field \"watchNamespace\" is missing");
        if (ns_allowed && wn)
            check_watch_namespace(&e, wn, modes, install_ns);
        if (dc)
            check_deployment_config(&e, dc);
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)config, key, v) {
            if ((gates.deployment_config && strcmp(key, "deploymentConfig") == 0) ||
                (ns_allowed && strcmp(key, "watchNamespace") == 0))
                continue;
            add(&e, "unknown field \"%s\"", key);
            break;
        }
    }
    if (e.oom) {
        errlist_free(&e);
        return olm_error_set(err, "out of memory");
    }
    if (e.n) {
        strbuf sb = STRBUF_INIT;
        int bad = strbuf_puts(&sb, BUNDLE_CONFIG_ERROR_PREFIX) < 0 ||
                  (e.n > 1 && strbuf_puts(&sb, "multiple errors found:") < 0);
        for (size_t i = 0; !bad && i < e.n; i++)
            bad = (e.n > 1 && strbuf_puts(&sb, "\n  - ") < 0) || strbuf_puts(&sb, e.msg[i]) < 0;
        olm_error_set(err, "%s", bad ? "invalid ClusterExtension configuration: out of memory" : strbuf_str(&sb));
        strbuf_free(&sb);
        errlist_free(&e);
        return -1;
    }
    if (json_is_string(wn) && !(out->watch_namespace = strdup(json_string_value(wn))))
        return olm_error_set(err, "out of memory");
    if (json_is_object(dc))
        out->deployment_config = json_incref((json_t *)dc);
    return 0;
}

void bundle_config_free(bundle_config *c)
{
    free(c->watch_namespace);
    json_decref(c->deployment_config);
    memset(c, 0, sizeof *c);
}

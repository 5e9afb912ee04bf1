/* crdsafety_props: crdify's per-property comparators over one flattened
 * property (its schema minus child schemas), plus the "unhandled" catch-all.
 *
 * JSON schemas are compared with Go semantics, because crdify compares decoded
 * apiextensionsv1.JSONSchemaProps: a missing key, null and the zero value are the
 * same for plain fields, but not for pointer fields; unknown keys are dropped. */
#include <stdlib.h>
#include <string.h>

#include "crdsafety_internal.h"

enum kind {
    K_STR,     /* string: absent == "" */
    K_BOOL,    /* bool: absent == false */
    K_PSTR,    /* *string */
    K_PBOOL,   /* *bool */
    K_PFLOAT,  /* *float64 */
    K_PINT,    /* *int64 */
    K_RAW,     /* *JSON (raw bytes) */
    K_RAWLIST, /* []JSON */
    K_STRLIST, /* []string */
    K_OTHER,   /* structured (externalDocs, x-kubernetes-validations) */
    K_CHILD,   /* child schemas: dropped before comparing (evaluated at their own paths) */
};

/* JSONSchemaProps fields in Go struct order: the unhandled diff lists them so. */
static const struct field {
    const char *key, *go;
    enum kind kind;
    int handled; /* reset by a registered comparator (or the disabled description check) */
} FIELDS[] = {
    {"id", "ID", K_STR, 0},
    {"$schema", "Schema", K_STR, 0},
    {"$ref", "Ref", K_PSTR, 0},
    {"description", "Description", K_STR, 1},
    {"type", "Type", K_STR, 1},
    {"format", "Format", K_STR, 0},
    {"title", "Title", K_STR, 0},
    {"default", "Default", K_RAW, 1},
    {"maximum", "Maximum", K_PFLOAT, 1},
    {"exclusiveMaximum", "ExclusiveMaximum", K_BOOL, 0},
    {"minimum", "Minimum", K_PFLOAT, 1},
    {"exclusiveMinimum", "ExclusiveMinimum", K_BOOL, 0},
    {"maxLength", "MaxLength", K_PINT, 1},
    {"minLength", "MinLength", K_PINT, 1},
    {"pattern", "Pattern", K_STR, 0},
    {"maxItems", "MaxItems", K_PINT, 1},
    {"minItems", "MinItems", K_PINT, 1},
    {"uniqueItems", "UniqueItems", K_BOOL, 0},
    {"multipleOf", "MultipleOf", K_PFLOAT, 0},
    {"enum", "Enum", K_RAWLIST, 1},
    {"maxProperties", "MaxProperties", K_PINT, 1},
    {"minProperties", "MinProperties", K_PINT, 1},
    {"required", "Required", K_STRLIST, 1},
    {"items", "Items", K_CHILD, 1},
    {"allOf", "AllOf", K_CHILD, 1},
    {"oneOf", "OneOf", K_CHILD, 1},
    {"anyOf", "AnyOf", K_CHILD, 1},
    {"not", "Not", K_CHILD, 1},
    {"properties", "Properties", K_CHILD, 1},
    {"additionalProperties", "AdditionalProperties", K_CHILD, 1},
    {"patternProperties", "PatternProperties", K_CHILD, 1},
    {"dependencies", "Dependencies", K_CHILD, 1},
    {"additionalItems", "AdditionalItems", K_CHILD, 1},
    {"definitions", "Definitions", K_CHILD, 1},
    {"externalDocs", "ExternalDocs", K_OTHER, 0},
    {"example", "Example", K_RAW, 0},
    {"nullable", "Nullable", K_BOOL, 0},
    {"x-kubernetes-preserve-unknown-fields", "XPreserveUnknownFields", K_PBOOL, 0},
    {"x-kubernetes-embedded-resource", "XEmbeddedResource", K_BOOL, 0},
    {"x-kubernetes-int-or-string", "XIntOrString", K_BOOL, 0},
    {"x-kubernetes-list-map-keys", "XListMapKeys", K_STRLIST, 0},
    {"x-kubernetes-list-type", "XListType", K_PSTR, 0},
    {"x-kubernetes-map-type", "XMapType", K_PSTR, 0},
    {"x-kubernetes-validations", "XValidations", K_OTHER, 0},
};
#define NFIELDS (sizeof(FIELDS) / sizeof(FIELDS[0]))

/* The value of key in schema s, NULL when s is NULL (the empty schema used for a
 * removed property), the key is missing, or it is JSON null (Go decodes null as
 * the zero value). */
static const json_t *fget(const json_t *s, const char *key)
{
    const json_t *v = s ? json_object_get(s, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

static const char *str_or_empty(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

static int raw_equal(const json_t *a, const json_t *b)
{
    char *ra = crdsafety_raw_json(a), *rb = crdsafety_raw_json(b);
    /* On OOM fall back to structural equality; only the message could differ. */
    int eq = ra && rb ? strcmp(ra, rb) == 0 : json_equal((json_t *)a, (json_t *)b);
    free(ra);
    free(rb);
    return eq;
}

static int field_equal(enum kind k, const json_t *a, const json_t *b)
{
    switch (k) {
    case K_STR: return strcmp(str_or_empty(a), str_or_empty(b)) == 0;
    case K_BOOL: return json_is_true(a) == json_is_true(b);
    case K_CHILD: return 1;
    default: break;
    }
    size_t na = json_is_array(a) ? json_array_size(a) : 0, nb = json_is_array(b) ? json_array_size(b) : 0;
    if (k == K_RAWLIST || k == K_STRLIST || (k == K_OTHER && (json_is_array(a) || json_is_array(b)))) {
        /* Semantic DeepEqual: a nil and an empty slice are equal; order matters. */
        if (na != nb)
            return 0;
        for (size_t i = 0; i < na; i++)
            if (!raw_equal(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (!a || !b)
        return !a && !b;
    switch (k) {
    case K_PSTR: return strcmp(str_or_empty(a), str_or_empty(b)) == 0;
    case K_PBOOL: return json_is_true(a) == json_is_true(b);
    case K_PFLOAT: return json_number_value(a) == json_number_value(b);
    case K_PINT: return (long long)json_number_value(a) == (long long)json_number_value(b);
    default: return raw_equal(a, b);
    }
}

/* DeepEqual of the two schemas with child schemas dropped. */
static int schema_equal(const json_t *a, const json_t *b)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (!field_equal(FIELDS[i].kind, fget(a, FIELDS[i].key), fget(b, FIELDS[i].key)))
            return 0;
    return 1;
}

/* One comparator result line: "<label>: <path>: <check>: <msg>". */
struct ctx {
    const char *label, *path;
    crdsafety_list *out;
};

static int emit(struct ctx *c, const char *check, strbuf *msg)
{
    int r = crdsafety_list_addf(c->out, "%s: %s: %s: %s", c->label, c->path, check, strbuf_str(msg));
    strbuf_free(msg);
    return r;
}

static int quote_raw(strbuf *sb, const json_t *v)
{
    char *raw = crdsafety_raw_json(v);
    int r = !raw || crdsafety_go_quote(sb, raw);
    free(raw);
    return r ? -1 : 0;
}

static int check_default(struct ctx *c, const json_t *a, const json_t *b)
{
    const json_t *da = fget(a, "default"), *db = fget(b, "default");
    strbuf m = STRBUF_INIT;
    int r = 0;
    if (!da && db)
        r = strbuf_puts(&m, "default added when there was none previously : ") || quote_raw(&m, db);
    else if (da && !db)
        r = strbuf_puts(&m, "default value removed : ") || quote_raw(&m, da);
    else if (da && db && !raw_equal(da, db))
        r = strbuf_puts(&m, "default value changed : ") || quote_raw(&m, da) || strbuf_puts(&m, " -> ") ||
            quote_raw(&m, db);
    else
        return 0;
    if (r) {
        strbuf_free(&m);
        return -1;
    }
    return emit(c, "default", &m);
}

/* Raw values of x's enum that are not in y's enum, sorted and deduplicated
 * (crdify uses sets of the raw bytes). */
static int enum_minus(const json_t *x, const json_t *y, crdsafety_list *out)
{
    for (size_t i = 0; i < json_array_size(x); i++) {
        char *rx = crdsafety_raw_json(json_array_get(x, i));
        if (!rx)
            return -1;
        int found = crdsafety_list_has(out, rx);
        for (size_t j = 0; !found && j < json_array_size(y); j++) {
            char *ry = crdsafety_raw_json(json_array_get(y, j));
            if (!ry) {
                free(rx);
                return -1;
            }
            found = strcmp(rx, ry) == 0;
            free(ry);
        }
        if (found)
            free(rx);
        else if (crdsafety_list_take(out, rx))
            return -1;
    }
    crdsafety_strv_sort((const char **)out->v, out->n);
    return 0;
}

/* Go's %v of a []string: "[a b c]". */
static int go_strv(strbuf *sb, char *const *v, size_t n)
{
    if (strbuf_putc(sb, '['))
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((i && strbuf_putc(sb, ' ')) || strbuf_puts(sb, v[i]))
            return -1;
    return strbuf_putc(sb, ']');
}

static int check_enum(struct ctx *c, const json_t *a, const json_t *b)
{
    const json_t *ea = fget(a, "enum"), *eb = fget(b, "enum");
    crdsafety_list vals = {0};
    strbuf m = STRBUF_INIT;
    int r = 0;
    /* additionPolicy Allow: additions to an existing enum are fine. */
    if (json_array_size(ea) == 0 && json_array_size(eb) > 0) {
        r = enum_minus(eb, NULL, &vals) || strbuf_puts(&m, "enum constraint added when there was none previously : ") ||
            go_strv(&m, vals.v, vals.n);
    } else {
        r = enum_minus(ea, eb, &vals);
        if (!r && vals.n)
            r = strbuf_puts(&m, "allowed enum values removed : ") || go_strv(&m, vals.v, vals.n);
    }
    crdsafety_list_free(&vals);
    if (r || m.len == 0) {
        strbuf_free(&m);
        return r ? -1 : 0;
    }
    return emit(c, "enum", &m);
}

/* maximum/minimum and the maxItems, maxLength, maxProperties (and min) bounds
 * MaxVerification/MinVerification): a new bound, or a tightened one. */
static int check_bound(struct ctx *c, const char *key, int is_max, int is_float, const json_t *a, const json_t *b)
{
    const json_t *va = fget(a, key), *vb = fget(b, key);
    if (!vb)
        return 0;
    double x = va ? json_number_value(va) : 0, y = json_number_value(vb);
    if (!is_float) {
        x = (double)(long long)x;
        y = (double)(long long)y;
    }
    strbuf m = STRBUF_INIT;
    const char *what = is_max ? "maximum" : "minimum";
    int r;
    if (!va)
        r = strbuf_printf(&m, "%s constraint added when there was none previously : ", what);
    else if (is_max ? y < x : y > x)
        r = strbuf_printf(&m, "%s %s : ", what, is_max ? "decreased" : "increased") ||
            (is_float ? crdsafety_go_float(&m, x) : strbuf_printf(&m, "%lld", (long long)x)) || strbuf_puts(&m, " -> ");
    else
        return 0;
    r = r || (is_float ? crdsafety_go_float(&m, y) : strbuf_printf(&m, "%lld", (long long)y));
    if (r) {
        strbuf_free(&m);
        return -1;
    }
    return emit(c, key, &m);
}

static int check_required(struct ctx *c, const json_t *a, const json_t *b)
{
    const json_t *ra = fget(a, "required"), *rb = fget(b, "required");
    crdsafety_list added = {0};
    int r = 0;
    for (size_t i = 0; !r && i < json_array_size(rb); i++) {
        const char *f = str_or_empty(json_array_get(rb, i));
        int found = crdsafety_list_has(&added, f);
        for (size_t j = 0; !found && j < json_array_size(ra); j++)
            found = strcmp(f, str_or_empty(json_array_get(ra, j))) == 0;
        if (!found)
            r = crdsafety_list_addf(&added, "%s", f);
    }
    strbuf m = STRBUF_INIT;
    if (!r && added.n) {
        crdsafety_strv_sort((const char **)added.v, added.n);
        r = strbuf_puts(&m, "new required fields: ") || go_strv(&m, added.v, added.n);
    }
    crdsafety_list_free(&added);
    if (r || m.len == 0) {
        strbuf_free(&m);
        return r ? -1 : 0;
    }
    return emit(c, "required", &m);
}

static int check_type(struct ctx *c, const json_t *a, const json_t *b)
{
    const char *ta = str_or_empty(fget(a, "type")), *tb = str_or_empty(fget(b, "type"));
    if (strcmp(ta, tb) == 0)
        return 0;
    strbuf m = STRBUF_INIT;
    if (strbuf_puts(&m, "type changed : ") || crdsafety_go_quote(&m, ta) || strbuf_puts(&m, " -> ") ||
        crdsafety_go_quote(&m, tb)) {
        strbuf_free(&m);
        return -1;
    }
    return emit(c, "type", &m);
}

static int crdsafety_unhandled_message(const json_t *a, const json_t *b, strbuf *m);

static int compare_property(struct ctx *c, const json_t *a, const json_t *b)
{
    if (check_default(c, a, b) || check_enum(c, a, b) || check_bound(c, "maximum", 1, 1, a, b) ||
        check_bound(c, "maxItems", 1, 0, a, b) || check_bound(c, "maxLength", 1, 0, a, b) ||
        check_bound(c, "maxProperties", 1, 0, a, b) || check_bound(c, "minimum", 0, 1, a, b) ||
        check_bound(c, "minItems", 0, 0, a, b) || check_bound(c, "minLength", 0, 0, a, b) ||
        check_bound(c, "minProperties", 0, 0, a, b) || check_required(c, a, b) || check_type(c, a, b))
        return -1;
    /* Fail closed: any difference no comparator handled is an error. */
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct field *f = &FIELDS[i];
        if (!f->handled && !field_equal(f->kind, fget(a, f->key), fget(b, f->key))) {
            strbuf m = STRBUF_INIT;
            if (crdsafety_unhandled_message(a, b, &m)) {
                strbuf_free(&m);
                return -1;
            }
            return emit(c, "unhandled", &m);
        }
    }
    return 0;
}

int crdsafety_compare_versions(const json_t *oldv, const json_t *newv, const char *label, crdsafety_list *out)
{
    json_t *fa = crdsafety_flatten(crdsafety_version_schema(oldv)), *fb = crdsafety_flatten(crdsafety_version_schema(newv));
    size_t n = 0;
    const char **paths = fa ? crdsafety_sorted_keys(fa, &n) : NULL;
    int r = !fa || !fb || (!paths && n) ? -1 : 0;
    for (size_t i = 0; !r && i < n; i++) {
        const json_t *a = json_object_get(fa, paths[i]), *b = json_object_get(fb, paths[i]);
        /* A removed property is compared against the empty schema (b == NULL). */
        if (b && schema_equal(a, b))
            continue;
        struct ctx c = {label, paths[i], out};
        r = compare_property(&c, a, b);
    }
    free(paths);
    json_decref(fa);
    json_decref(fb);
    return r;
}

/* --- the condensed "unhandled" message ------------------------------------- */

/* The value as go-cmp prints it in a struct diff, or -1 when go-cmp would not
 * print a single "Field: value" line for it (nested diffs), or -2 on OOM. */
static int go_value(strbuf *sb, enum kind k, const json_t *v, const json_t *other)
{
    switch (k) {
    case K_STR: return crdsafety_go_quote(sb, str_or_empty(v)) ? -2 : 0;
    case K_BOOL: return strbuf_puts(sb, json_is_true(v) ? "true" : "false") ? -2 : 0;
    case K_PSTR:
        if (!v)
            return strbuf_puts(sb, "nil") ? -2 : 0;
        return strbuf_putc(sb, '&') || crdsafety_go_quote(sb, str_or_empty(v)) ? -2 : 0;
    case K_PBOOL:
        if (!v)
            return strbuf_puts(sb, "nil") ? -2 : 0;
        return strbuf_puts(sb, json_is_true(v) ? "&true" : "&false") ? -2 : 0;
    case K_PFLOAT:
        if (!v)
            return strbuf_puts(sb, "nil") ? -2 : 0;
        return strbuf_putc(sb, '&') || crdsafety_go_float(sb, json_number_value(v)) ? -2 : 0;
    case K_STRLIST: {
        /* Only nil <-> non-nil prints as one line; otherwise go-cmp diffs elements. */
        if (json_array_size(v) && json_array_size(other))
            return -1;
        if (!json_array_size(v))
            return strbuf_puts(sb, "nil") ? -2 : 0;
        if (strbuf_puts(sb, "[]string{"))
            return -2;
        for (size_t i = 0; i < json_array_size(v); i++)
            if ((i && strbuf_puts(sb, ", ")) || crdsafety_go_quote(sb, str_or_empty(json_array_get(v, i))))
                return -2;
        return strbuf_putc(sb, '}') ? -2 : 0;
    }
    default: return -1; /* structured values: go-cmp prints nested lines */
    }
}

/* operator-controller's normalizeUnhandledValue. */
static int normalize(strbuf *out, const char *v)
{
    if (!*v)
        return strbuf_puts(out, "<empty>");
    strbuf t = STRBUF_INIT;
    for (const char *p = v; *p;) {
        if (strncmp(p, "v1.", 3) == 0) {
            p += 3;
            continue;
        }
        if (strbuf_putc(&t, *p++)) {
            strbuf_free(&t);
            return -1;
        }
    }
    int r = strbuf_puts(out, strstr(strbuf_str(&t), "JSONSchemaProps") ? "<complex value>" : strbuf_str(&t));
    strbuf_free(&t);
    return r;
}

/* "unhandled changes found (<Field> <old> -> <new>; ...)": what operator-controller
 * condenses crdify's go-cmp diff of the two reset schemas into. */
static int crdsafety_unhandled_message(const json_t *a, const json_t *b, strbuf *m)
{
    int first = 1;
    if (strbuf_puts(m, "unhandled changes found"))
        return -1;
    for (size_t i = 0; i < NFIELDS; i++) {
        const struct field *f = &FIELDS[i];
        const json_t *va = fget(a, f->key), *vb = fget(b, f->key);
        if (f->handled || field_equal(f->kind, va, vb))
            continue;
        strbuf ra = STRBUF_INIT, rb = STRBUF_INIT, na = STRBUF_INIT, nb = STRBUF_INIT;
        int r = go_value(&ra, f->kind, va, vb);
        if (r == 0)
            r = go_value(&rb, f->kind, vb, va);
        if (r == 0)
            r = normalize(&na, strbuf_str(&ra)) || normalize(&nb, strbuf_str(&rb)) ? -2 : 0;
        if (r == 0 && !(strcmp(strbuf_str(&na), strbuf_str(&nb)) == 0 && strcmp(strbuf_str(&ra), strbuf_str(&rb)) == 0)) {
            int same = strcmp(strbuf_str(&na), strbuf_str(&nb)) == 0;
            r = strbuf_printf(m, "%s%s %s -> %s%s", first ? " (" : "; ", f->go, strbuf_str(&na), strbuf_str(&nb),
                              same ? " (changed)" : "")
                    ? -2
                    : 0;
            first = 0;
        }
        strbuf_free(&ra);
        strbuf_free(&rb);
        strbuf_free(&na);
        strbuf_free(&nb);
        if (r == -2)
            return -1;
    }
    return first ? 0 : strbuf_putc(m, ')');
}

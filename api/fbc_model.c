/* fbc_model: the typed views (packages, channels, bundles, deprecations) over the
 * loaded metas, and the hash indexes behind the fbc_find_* lookups.
 *
 * A view is built while its meta's DOM is still alive (fbc_model_add) and copies the
 * strings it keeps into the catalog's arena, so the DOM can be freed right after.
 * Pointers into storage that still grows during the load (the metas array, the jsonl
 * buffer) are filled in once by fbc_model_finish.
 *
 * Fields are read the way Go's encoding/json fills a struct: keys match
 * case-insensitively (an exact match first), JSON null means "absent".  A field of
 * the wrong JSON type does not stop the load (upstream would refuse the whole
 * catalog at that point); it is left NULL/empty in the view and remembered as a
 * shape problem that fbc_validate() reports with the others. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "olm_array.h"
#include "fbc_internal.h"

json_t *fbc_obj_get(const json_t *obj, const char *key)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *v = json_object_get(obj, key);
    if (v)
        return v;
    const char *k;
    json_object_foreach((json_t *)obj, k, v) {
        if (strcasecmp(k, key) == 0)
            return v;
    }
    return NULL;
}

static int shape_problem(fbc_priv *p, const fbc_meta *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int shape_problem(fbc_priv *p, const fbc_meta *m, const char *fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (OLM_ARRAY_RESERVE(p->shape, p->shape_cap, p->nshape + 1) < 0)
        return -1;
    char *line;
    if (asprintf(&line, "%s:%d: invalid-field: %s %s", m->file, m->lineno, m->schema, detail) < 0)
        return -1;
    p->shape[p->nshape++] = line;
    return 0;
}

/* Reads an optional string member: 0 absent/null (*out = NULL), 1 ok, -2 wrong
 * type (a shape problem was recorded), -1 out of memory. */
static int get_string(fbc_priv *p, const fbc_meta *m, const json_t *obj, const char *key,
                      const char *where, const char **out)
{
    json_t *v = fbc_obj_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (json_is_string(v))
        return (*out = fbc_arena_strdup(&p->strings, json_string_value(v))) ? 1 : -1;
    return shape_problem(p, m, "%s: %s must be a string", where, key) < 0 ? -1 : -2;
}

/* Same for an optional array member. */
static int get_array(fbc_priv *p, const fbc_meta *m, const json_t *obj, const char *key,
                     const char *where, json_t **out)
{
    json_t *v = fbc_obj_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (json_is_array(v)) {
        *out = v;
        return 1;
    }
    return shape_problem(p, m, "%s: %s must be an array", where, key) < 0 ? -1 : -2;
}

/* Makes room for one more element in a view array; -1 on out of memory. */
static int grow(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 4; /* small: one package is a catalog too */
    void *na = realloc(*arr, ncap * elem);
    if (!na)
        return -1;
    *arr = na;
    *cap = ncap;
    return 0;
}

static int build_package(fbc_catalog *c, fbc_priv *p, const fbc_meta *m, const json_t *obj)
{
    if (grow((void **)&c->packages, c->npackages, &p->packages_cap, sizeof *c->packages) < 0)
        return -1;
    fbc_package *pk = &c->packages[c->npackages++];
    memset(pk, 0, sizeof *pk);
    pk->name = m->name;
    char where[600];
    snprintf(where, sizeof where, "\"%s\"", m->name);
    return get_string(p, m, obj, "defaultChannel", where, &pk->default_channel) == -1 ? -1 : 0;
}

static int build_entry(fbc_priv *p, const fbc_meta *m, const json_t *e, const char *where,
                       fbc_channel_entry *out)
{
    if (!json_is_object(e))
        return shape_problem(p, m, "%s: entry must be an object", where) < 0 ? -1 : 1;
    const char *name;
    if (get_string(p, m, e, "name", where, &name) == -1 ||
        get_string(p, m, e, "replaces", where, &out->replaces) == -1 ||
        get_string(p, m, e, "skipRange", where, &out->skip_range) == -1)
        return -1;
    out->name = name ? name : "";
    json_t *skips;
    int rc = get_array(p, m, e, "skips", where, &skips);
    if (rc == -1)
        return -1;
    if (rc == 1 && json_array_size(skips)) {
        out->skips = calloc(json_array_size(skips), sizeof *out->skips);
        if (!out->skips)
            return -1;
        size_t i;
        json_t *s;
        json_array_foreach(skips, i, s) {
            if (json_is_string(s)) {
                if (!(out->skips[out->nskips++] = fbc_arena_strdup(&p->strings, json_string_value(s))))
                    return -1;
            } else if (shape_problem(p, m, "%s: skips[%zu] must be a string", where, i) < 0)
                return -1;
        }
    }
    return 0;
}

static int build_channel(fbc_catalog *c, fbc_priv *p, const fbc_meta *m, const json_t *obj)
{
    if (grow((void **)&c->channels, c->nchannels, &p->channels_cap, sizeof *c->channels) < 0)
        return -1;
    fbc_channel *ch = &c->channels[c->nchannels++];
    memset(ch, 0, sizeof *ch);
    ch->name = m->name;
    ch->package = m->package;
    char where[1200];
    snprintf(where, sizeof where, "\"%s/%s\"", m->package, m->name);
    json_t *entries;
    int rc = get_array(p, m, obj, "entries", where, &entries);
    if (rc == -1)
        return -1;
    if (rc != 1 || json_array_size(entries) == 0)
        return 0;
    ch->entries = calloc(json_array_size(entries), sizeof *ch->entries);
    if (!ch->entries)
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        char ewhere[1300];
        snprintf(ewhere, sizeof ewhere, "%s entries[%zu]", where, i);
        fbc_channel_entry *out = &ch->entries[ch->nentries];
        rc = build_entry(p, m, e, ewhere, out);
        if (rc < 0) {
            free(out->skips); /* not counted in nentries, so fbc_model_free skips it */
            return -1;
        }
        if (rc == 0)
            ch->nentries++;
        else
            memset(out, 0, sizeof *out);
    }
    return 0;
}

/* fbc_property.value of a property whose value's span is not known yet. */
static const char VALUE_PENDING[] = "";

/* Asks the encoder for the span of a property's value (see fbc_span_marks). */
static int mark_value(fbc_span_marks *marks, const json_t *node)
{
    if (OLM_ARRAY_RESERVE(marks->items, marks->cap, marks->n + 1) < 0)
        return -1;
    marks->items[marks->n++] = (fbc_span_mark){.node = node, .start = SIZE_MAX};
    return 0;
}

static int build_bundle(fbc_catalog *c, fbc_priv *p, const fbc_meta *m, const json_t *obj,
                        fbc_span_marks *marks)
{
    if (grow((void **)&c->bundles, c->nbundles, &p->bundles_cap, sizeof *c->bundles) < 0)
        return -1;
    fbc_bundle *b = &c->bundles[c->nbundles++];
    memset(b, 0, sizeof *b);
    b->name = m->name;
    b->package = m->package;
    char where[1200];
    snprintf(where, sizeof where, "\"%s/%s\"", m->package, m->name);
    if (get_string(p, m, obj, "image", where, &b->image) == -1)
        return -1;
    json_t *props;
    int rc = get_array(p, m, obj, "properties", where, &props);
    if (rc == -1)
        return -1;
    if (rc != 1 || json_array_size(props) == 0)
        return 0;
    b->properties = calloc(json_array_size(props), sizeof *b->properties);
    if (!b->properties)
        return -1;
    bool first_package_property = true;
    size_t i;
    json_t *pr;
    json_array_foreach(props, i, pr) {
        char pwhere[1300];
        snprintf(pwhere, sizeof pwhere, "%s properties[%zu]", where, i);
        const char *type;
        if (!json_is_object(pr)) {
            if (shape_problem(p, m, "%s: property must be an object", pwhere) < 0)
                return -1;
            continue;
        }
        rc = get_string(p, m, pr, "type", pwhere, &type);
        if (rc == -1)
            return -1;
        fbc_property *out = &b->properties[b->nproperties++];
        out->type = type ? type : "";
        const json_t *value = fbc_obj_get(pr, "value");
        if (value) {
            if (mark_value(marks, value) < 0)
                return -1;
            out->value = VALUE_PENDING; /* link_values points it into the line */
        }
        if (strcmp(out->type, "olm.package") != 0)
            continue;
        if (first_package_property) {
            /* The validator matches the first one's packageName with the bundle's. */
            first_package_property = false;
            json_t *pn = fbc_obj_get(value, "packageName");
            if (json_is_string(pn) &&
                !(b->package_name = fbc_arena_strdup(&p->strings, json_string_value(pn))))
                return -1;
        }
        if (b->version)
            continue;
        /* The first olm.package property gives the version (spec §3.4). */
        if (!json_is_object(value)) {
            if (shape_problem(p, m, "%s: olm.package value must be an object", pwhere) < 0)
                return -1;
            continue;
        }
        const char *version = NULL;
        if (get_string(p, m, value, "version", pwhere, &version) == -1 ||
            get_string(p, m, value, "release", pwhere, &b->release) == -1)
            return -1;
        b->version = version ? version : "";
    }
    return 0;
}

static int build_deprecation(fbc_catalog *c, fbc_priv *p, const fbc_meta *m, const json_t *obj)
{
    if (grow((void **)&c->deprecations, c->ndeprecations, &p->deprecations_cap,
             sizeof *c->deprecations) < 0)
        return -1;
    fbc_deprecation *d = &c->deprecations[c->ndeprecations++];
    memset(d, 0, sizeof *d);
    d->package = m->package;
    char where[600];
    snprintf(where, sizeof where, "\"%s\"", m->package);
    json_t *entries;
    int rc = get_array(p, m, obj, "entries", where, &entries);
    if (rc == -1)
        return -1;
    if (rc != 1 || json_array_size(entries) == 0)
        return 0;
    d->entries = calloc(json_array_size(entries), sizeof *d->entries);
    if (!d->entries)
        return -1;
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        char ewhere[700];
        snprintf(ewhere, sizeof ewhere, "%s entries[%zu]", where, i);
        json_t *ref = fbc_obj_get(e, "reference");
        if (!json_is_object(e) || !json_is_object(ref)) {
            if (shape_problem(p, m, "%s: entry must be an object with a reference object",
                              ewhere) < 0)
                return -1;
            continue;
        }
        fbc_deprecation_entry *out = &d->entries[d->nentries];
        const char *schema, *name, *message;
        if (get_string(p, m, ref, "schema", ewhere, &schema) == -1 ||
            get_string(p, m, ref, "name", ewhere, &name) == -1 ||
            get_string(p, m, e, "message", ewhere, &message) == -1)
            return -1;
        out->schema = schema ? schema : "";
        out->name = name ? name : "";
        out->message = message ? message : "";
        d->nentries++;
    }
    return 0;
}

static int build_indexes(fbc_catalog *c, fbc_priv *p)
{
    for (size_t i = 0; i < c->npackages; i++)
        if (fbc_index_put(&p->pkg_ix, c->packages[i].name, NULL, i, NULL) < 0)
            return -1;
    for (size_t i = 0; i < c->nchannels; i++)
        if (fbc_index_put(&p->chan_ix, c->channels[i].package, c->channels[i].name, i, NULL) < 0)
            return -1;
    for (size_t i = 0; i < c->nbundles; i++)
        if (fbc_index_put(&p->bundle_ix, c->bundles[i].package, c->bundles[i].name, i, NULL) < 0)
            return -1;
    for (size_t i = 0; i < c->ndeprecations; i++)
        if (fbc_index_put(&p->depr_ix, c->deprecations[i].package, NULL, i, NULL) < 0)
            return -1;
    return 0;
}

int fbc_model_add(fbc_catalog *c, size_t meta_index, const json_t *obj, fbc_span_marks *marks)
{
    fbc_priv *p = c->priv;
    const fbc_meta *m = &c->metas[meta_index];
    marks->n = marks->next = 0;
    if (strcmp(m->schema, "olm.package") == 0)
        return build_package(c, p, m, obj);
    if (strcmp(m->schema, "olm.channel") == 0)
        return build_channel(c, p, m, obj);
    if (strcmp(m->schema, "olm.bundle") == 0)
        return build_bundle(c, p, m, obj, marks);
    if (strcmp(m->schema, "olm.deprecations") == 0)
        return build_deprecation(c, p, m, obj);
    return 0;
}

int fbc_model_note_spans(fbc_catalog *c, const fbc_span_marks *marks)
{
    fbc_priv *p = c->priv;
    for (size_t i = 0; i < marks->n; i++) {
        /* Room at index n + 1 means room for the pair. */
        if (grow((void **)&p->value_offs, p->nvalue_offs + 1, &p->value_offs_cap,
                 sizeof *p->value_offs) < 0)
            return -1;
        p->value_offs[p->nvalue_offs++] = marks->items[i].start;
        p->value_offs[p->nvalue_offs++] = marks->items[i].len;
    }
    return 0;
}

/* Views were appended in meta order, one per meta of their schema: the k-th package
 * view belongs to the k-th olm.package meta, and so on. */
static void link_metas(fbc_catalog *c)
{
    size_t np = 0, nc = 0, nb = 0, nd = 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        fbc_meta *m = &c->metas[i];
        m->line = c->jsonl + m->offset;
        if (strcmp(m->schema, "olm.package") == 0)
            c->packages[np++].meta = m;
        else if (strcmp(m->schema, "olm.channel") == 0)
            c->channels[nc++].meta = m;
        else if (strcmp(m->schema, "olm.bundle") == 0)
            c->bundles[nb++].meta = m;
        else if (strcmp(m->schema, "olm.deprecations") == 0)
            c->deprecations[nd++].meta = m;
    }
}

/* Property values, in the order fbc_model_note_spans recorded them: one (start, len)
 * pair for each property whose value was marked, i.e. whose value is VALUE_PENDING. */
static void link_values(fbc_catalog *c)
{
    const fbc_priv *p = c->priv;
    size_t k = 0;
    for (size_t i = 0; i < c->nbundles; i++) {
        fbc_bundle *b = &c->bundles[i];
        for (size_t j = 0; j < b->nproperties; j++) {
            fbc_property *pr = &b->properties[j];
            if (!pr->value)
                continue;
            size_t start = k + 1 < p->nvalue_offs ? p->value_offs[k] : SIZE_MAX;
            size_t len = k + 1 < p->nvalue_offs ? p->value_offs[k + 1] : 0;
            k += 2;
            pr->value = start == SIZE_MAX ? NULL : c->jsonl + start;
            pr->value_len = start == SIZE_MAX ? 0 : len;
        }
    }
}

int fbc_model_finish(fbc_catalog *c, olm_error *err)
{
    fbc_priv *p = c->priv;
    /* The buffer grew by doubling; give the slack back, as a catalog may be kept
     * (operator-controller caches them). */
    if (p->jsonl.data && !p->jsonl.fixed && p->jsonl.cap > p->jsonl.len + 1) { /* a mapping keeps its size */
        char *shrunk = realloc(p->jsonl.data, p->jsonl.len + 1);
        if (shrunk) {
            p->jsonl.data = shrunk;
            p->jsonl.cap = p->jsonl.len + 1;
        }
    }
    c->jsonl = p->jsonl.data;
    c->jsonl_len = p->jsonl.len;
    link_metas(c);
    link_values(c);
    free(p->value_offs); /* only needed until now */
    p->value_offs = NULL;
    p->nvalue_offs = p->value_offs_cap = 0;
    if (build_indexes(c, p) < 0)
        return olm_error_set(err, "building catalog model: out of memory");
    return 0;
}

/* realloc *arr down to n elements of `elem` bytes (*cap = n); a failed shrink keeps it. */
static void shrink(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (!*arr || n >= *cap)
        return;
    if (n == 0) {
        free(*arr);
        *arr = NULL;
        *cap = 0;
        return;
    }
    void *na = realloc(*arr, n * elem);
    if (na) {
        *arr = na;
        *cap = n;
    }
}

void fbc_model_trim(fbc_catalog *c)
{
    fbc_priv *p = c->priv;
    shrink((void **)&c->metas, c->nmetas, &p->metas_cap, sizeof *c->metas);
    shrink((void **)&p->files, p->nfiles, &p->files_cap, sizeof *p->files);
    shrink((void **)&p->shape, p->nshape, &p->shape_cap, sizeof *p->shape);
    shrink((void **)&c->packages, c->npackages, &p->packages_cap, sizeof *c->packages);
    shrink((void **)&c->channels, c->nchannels, &p->channels_cap, sizeof *c->channels);
    shrink((void **)&c->bundles, c->nbundles, &p->bundles_cap, sizeof *c->bundles);
    shrink((void **)&c->deprecations, c->ndeprecations, &p->deprecations_cap, sizeof *c->deprecations);
    shrink((void **)&p->value_offs, p->nvalue_offs, &p->value_offs_cap, sizeof *p->value_offs);
    if (p->jsonl.data && !p->jsonl.fixed && p->jsonl.cap > p->jsonl.len + 1) { /* a mapping keeps its size */
        char *shrunk = realloc(p->jsonl.data, p->jsonl.len + 1);
        if (shrunk) {
            p->jsonl.data = shrunk;
            p->jsonl.cap = p->jsonl.len + 1;
        }
    }
}

void fbc_model_free(fbc_catalog *c)
{
    fbc_priv *p = c->priv;
    for (size_t i = 0; c->channels && i < c->nchannels; i++) {
        for (size_t j = 0; j < c->channels[i].nentries; j++)
            free(c->channels[i].entries[j].skips);
        free(c->channels[i].entries);
    }
    for (size_t i = 0; c->bundles && i < c->nbundles; i++)
        free(c->bundles[i].properties);
    for (size_t i = 0; c->deprecations && i < c->ndeprecations; i++)
        free(c->deprecations[i].entries);
    free(c->packages);
    free(c->channels);
    free(c->bundles);
    free(c->deprecations);
    c->packages = NULL;
    c->channels = NULL;
    c->bundles = NULL;
    c->deprecations = NULL;
    c->npackages = c->nchannels = c->nbundles = c->ndeprecations = 0;
    if (p) {
        fbc_index_free(&p->pkg_ix);
        fbc_index_free(&p->chan_ix);
        fbc_index_free(&p->bundle_ix);
        fbc_index_free(&p->depr_ix);
    }
}

const fbc_package *fbc_find_package(const fbc_catalog *c, const char *name)
{
    size_t i;
    if (!c || !name || !fbc_index_get(&((fbc_priv *)c->priv)->pkg_ix, name, NULL, &i))
        return NULL;
    return &c->packages[i];
}

const fbc_channel *fbc_find_channel(const fbc_catalog *c, const char *package, const char *name)
{
    size_t i;
    if (!c || !package || !name ||
        !fbc_index_get(&((fbc_priv *)c->priv)->chan_ix, package, name, &i))
        return NULL;
    return &c->channels[i];
}

const fbc_bundle *fbc_find_bundle(const fbc_catalog *c, const char *package, const char *name)
{
    size_t i;
    if (!c || !package || !name ||
        !fbc_index_get(&((fbc_priv *)c->priv)->bundle_ix, package, name, &i))
        return NULL;
    return &c->bundles[i];
}

const fbc_deprecation *fbc_find_deprecation(const fbc_catalog *c, const char *package)
{
    size_t i;
    if (!c || !package || !fbc_index_get(&((fbc_priv *)c->priv)->depr_ix, package, NULL, &i))
        return NULL;
    return &c->deprecations[i];
}

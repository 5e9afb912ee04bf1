/* fbc_model: the typed views (packages, channels, bundles, deprecations) over the
 * loaded metas, and the hash indexes behind the fbc_find_* lookups.
 *
 * Fields are read the way Go's encoding/json fills a struct: keys match
 * case-insensitively (an exact match first), JSON null means "absent".  A field of
 * the wrong JSON type does not stop the load (upstream would refuse the whole
 * catalog at that point); it is left NULL/empty in the view and remembered as a
 * shape problem that fbc_validate() reports with the others. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    if (p->nshape == p->shape_cap) {
        size_t cap = p->shape_cap ? p->shape_cap * 2 : 8;
        char **ns = realloc(p->shape, cap * sizeof *ns);
        if (!ns)
            return -1;
        p->shape = ns;
        p->shape_cap = cap;
    }
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
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return 1;
    }
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

static int build_package(fbc_catalog *c, fbc_priv *p, const fbc_meta *m)
{
    fbc_package *pk = &c->packages[c->npackages++];
    pk->meta = m;
    pk->name = m->name;
    char where[600];
    snprintf(where, sizeof where, "\"%s\"", m->name);
    return get_string(p, m, m->obj, "defaultChannel", where, &pk->default_channel) == -1 ? -1 : 0;
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
            if (json_is_string(s))
                out->skips[out->nskips++] = json_string_value(s);
            else if (shape_problem(p, m, "%s: skips[%zu] must be a string", where, i) < 0)
                return -1;
        }
    }
    return 0;
}

static int build_channel(fbc_catalog *c, fbc_priv *p, const fbc_meta *m)
{
    fbc_channel *ch = &c->channels[c->nchannels++];
    ch->meta = m;
    ch->name = m->name;
    ch->package = m->package;
    char where[1200];
    snprintf(where, sizeof where, "\"%s/%s\"", m->package, m->name);
    json_t *entries;
    int rc = get_array(p, m, m->obj, "entries", where, &entries);
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
        if (rc < 0)
            return -1;
        if (rc == 0)
            ch->nentries++;
        else
            memset(out, 0, sizeof *out);
    }
    return 0;
}

static int build_bundle(fbc_catalog *c, fbc_priv *p, const fbc_meta *m)
{
    fbc_bundle *b = &c->bundles[c->nbundles++];
    b->meta = m;
    b->name = m->name;
    b->package = m->package;
    char where[1200];
    snprintf(where, sizeof where, "\"%s/%s\"", m->package, m->name);
    if (get_string(p, m, m->obj, "image", where, &b->image) == -1)
        return -1;
    json_t *props;
    int rc = get_array(p, m, m->obj, "properties", where, &props);
    if (rc == -1)
        return -1;
    if (rc != 1 || json_array_size(props) == 0)
        return 0;
    b->properties = calloc(json_array_size(props), sizeof *b->properties);
    if (!b->properties)
        return -1;
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
        out->value = fbc_obj_get(pr, "value");
        if (strcmp(out->type, "olm.package") != 0 || b->version)
            continue;
        /* The first olm.package property gives the version (spec §3.4). */
        if (!json_is_object(out->value)) {
            if (shape_problem(p, m, "%s: olm.package value must be an object", pwhere) < 0)
                return -1;
            continue;
        }
        const char *version = NULL;
        if (get_string(p, m, out->value, "version", pwhere, &version) == -1 ||
            get_string(p, m, out->value, "release", pwhere, &b->release) == -1)
            return -1;
        b->version = version ? version : "";
    }
    return 0;
}

static int build_deprecation(fbc_catalog *c, fbc_priv *p, const fbc_meta *m)
{
    fbc_deprecation *d = &c->deprecations[c->ndeprecations++];
    d->meta = m;
    d->package = m->package;
    char where[600];
    snprintf(where, sizeof where, "\"%s\"", m->package);
    json_t *entries;
    int rc = get_array(p, m, m->obj, "entries", where, &entries);
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

int fbc_model_build(fbc_catalog *c, olm_error *err)
{
    fbc_priv *p = c->priv;
    size_t np = 0, nc = 0, nb = 0, nd = 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        const char *s = c->metas[i].schema;
        np += strcmp(s, "olm.package") == 0;
        nc += strcmp(s, "olm.channel") == 0;
        nb += strcmp(s, "olm.bundle") == 0;
        nd += strcmp(s, "olm.deprecations") == 0;
    }
    /* calloc(0) may return NULL; allocate at least one so NULL means failure. */
    c->packages = calloc(np ? np : 1, sizeof *c->packages);
    c->channels = calloc(nc ? nc : 1, sizeof *c->channels);
    c->bundles = calloc(nb ? nb : 1, sizeof *c->bundles);
    c->deprecations = calloc(nd ? nd : 1, sizeof *c->deprecations);
    if (!c->packages || !c->channels || !c->bundles || !c->deprecations)
        return olm_error_set(err, "building catalog model: out of memory");
    for (size_t i = 0; i < c->nmetas; i++) {
        const fbc_meta *m = &c->metas[i];
        int rc = 0;
        if (strcmp(m->schema, "olm.package") == 0)
            rc = build_package(c, p, m);
        else if (strcmp(m->schema, "olm.channel") == 0)
            rc = build_channel(c, p, m);
        else if (strcmp(m->schema, "olm.bundle") == 0)
            rc = build_bundle(c, p, m);
        else if (strcmp(m->schema, "olm.deprecations") == 0)
            rc = build_deprecation(c, p, m);
        if (rc < 0)
            return olm_error_set(err, "building catalog model: out of memory");
    }
    if (build_indexes(c, p) < 0)
        return olm_error_set(err, "building catalog model: out of memory");
    return 0;
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

/* catalog_summary: a package of a catalog as `olmv1 search` shows it (catalog_summary.h). */
#include <stdlib.h>
#include <string.h>

#include "catalog_summary.h"
#include "resolve.h"

static bool referenced(const fbc_channel *ch, const char *name)
{
    for (size_t i = 0; i < ch->nentries; i++) {
        const fbc_channel_entry *e = &ch->entries[i];
        if (e->replaces && strcmp(e->replaces, name) == 0)
            return true;
        for (size_t k = 0; k < e->nskips; k++)
            if (strcmp(e->skips[k], name) == 0)
                return true;
    }
    return false;
}

/* -1/0/1 like strcmp, unparsable versions lowest. */
static int version_cmp(const char *a, const char *b)
{
    bundle_version va, vb;
    int ra = a ? bundle_version_parse(a, &va, NULL) : -1, rb = b ? bundle_version_parse(b, &vb, NULL) : -1;
    int r = ra < 0 ? (rb < 0 ? 0 : -1) : rb < 0 ? 1 : bundle_version_compare(&va, &vb);
    if (ra == 0)
        bundle_version_free(&va);
    if (rb == 0)
        bundle_version_free(&vb);
    return r;
}

static const char *bundle_version_of(const fbc_catalog *c, const char *package, const char *bundle)
{
    const fbc_bundle *b = fbc_find_bundle(c, package, bundle);
    return b ? b->version : NULL;
}

const char *catalog_channel_head(const fbc_catalog *c, const fbc_channel *ch)
{
    const char *head = NULL;
    for (size_t i = 0; i < ch->nentries; i++) {
        const char *n = ch->entries[i].name;
        if (referenced(ch, n))
            continue;
        if (!head || version_cmp(bundle_version_of(c, ch->package, n), bundle_version_of(c, ch->package, head)) > 0)
            head = n;
    }
    return head;
}

static const char *deprecation_of(const fbc_deprecation *d, const char *schema, const char *name)
{
    for (size_t i = 0; d && i < d->nentries; i++)
        if (strcmp(d->entries[i].schema, schema) == 0 && strcmp(d->entries[i].name, name) == 0)
            return d->entries[i].message ? d->entries[i].message : "";
    return NULL;
}

static bool in_channel(const fbc_channel *ch, const char *bundle)
{
    for (size_t i = 0; i < ch->nentries; i++)
        if (strcmp(ch->entries[i].name, bundle) == 0)
            return true;
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const fbc_channel *const *)a)->name, (*(const fbc_channel *const *)b)->name);
}

static int by_version_desc(const void *a, const void *b)
{
    const fbc_bundle *x = *(const fbc_bundle *const *)a, *y = *(const fbc_bundle *const *)b;
    int r = version_cmp(y->version, x->version);
    return r ? r : strcmp(x->name, y->name);
}

/* json_string of a possibly NULL string: JSON null. */
static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *channels_json(const fbc_catalog *c, const fbc_channel **chs, size_t n, const fbc_deprecation *dep)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        const char *head = catalog_channel_head(c, chs[i]);
        json_t *o = json_pack("{s:s, s:o, s:o, s:o}", "name", chs[i]->name, "head", str_or_null(head), "headVersion",
                              str_or_null(head ? bundle_version_of(c, chs[i]->package, head) : NULL), "deprecation",
                              str_or_null(deprecation_of(dep, "olm.channel", chs[i]->name)));
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *bundles_json(const fbc_catalog *c, const char *package, const fbc_channel **chs, size_t nch,
                            const fbc_deprecation *dep)
{
    size_t n = 0;
    const fbc_bundle **bs = calloc(c->nbundles ? c->nbundles : 1, sizeof *bs);
    if (!bs)
        return NULL;
    for (size_t i = 0; i < c->nbundles; i++) {
        const fbc_bundle *b = &c->bundles[i];
        bool listed = false;
        for (size_t k = 0; k < nch && !listed; k++)
            listed = in_channel(chs[k], b->name);
        if (strcmp(b->package, package) == 0 && listed)
            bs[n++] = b;
    }
    qsort(bs, n, sizeof *bs, by_version_desc);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *in = json_array();
        for (size_t k = 0; in && k < nch; k++)
            if (in_channel(chs[k], bs[i]->name) && json_array_append_new(in, json_string(chs[k]->name)) < 0) {
                json_decref(in);
                in = NULL;
            }
        json_t *o = in ? json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", bs[i]->name, "version",
                                   str_or_null(bs[i]->version), "image", str_or_null(bs[i]->image), "channels", in,
                                   "deprecation", str_or_null(deprecation_of(dep, "olm.bundle", bs[i]->name)))
                       : NULL;
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    free(bs);
    return arr;
}

json_t *catalog_package_summary(const fbc_catalog *c, const char *catalog, const char *package, const char *channel)
{
    const fbc_package *p = fbc_find_package(c, package);
    const fbc_deprecation *dep = fbc_find_deprecation(c, package);
    size_t n = 0;
    const fbc_channel **chs = calloc(c->nchannels ? c->nchannels : 1, sizeof *chs);
    if (!chs)
        return NULL;
    for (size_t i = 0; i < c->nchannels; i++)
        if (strcmp(c->channels[i].package, package) == 0 && (!channel || strcmp(c->channels[i].name, channel) == 0))
            chs[n++] = &c->channels[i];
    qsort(chs, n, sizeof *chs, by_name);
    json_t *out = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "catalog", catalog, "package", package,
                            "defaultChannel", str_or_null(p ? p->default_channel : NULL), "deprecation",
                            str_or_null(deprecation_of(dep, "olm.package", "")), "channels",
                            channels_json(c, chs, n, dep), "bundles", bundles_json(c, package, chs, n, dep));
    free(chs);
    return out;
}

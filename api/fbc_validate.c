/* fbc_validate: the FBC invariants opm checks when it turns a declarative config
 * into its model, reported all at once instead of stopping at the first.
 *
 * Each problem is "<file>:<line>: <rule>: <detail>" for the blob at fault.  Rules:
 *   invalid-field          a known field has the wrong JSON type (from the model)
 *   missing-schema         blob without a schema
 *   missing-name, missing-package
 *   duplicate-package, duplicate-channel, duplicate-bundle, duplicate-deprecations
 *   unknown-package        channel/bundle/deprecations for a package with no olm.package
 *   default-channel        defaultChannel missing or not a channel of the package
 *   channel-empty          channel without entries
 *   channel-entry          entry without a name, duplicated, or naming no bundle of the package
 *   channel-head           not exactly one entry that no other entry replaces or skips
 *   replaces-cycle         the replaces chain from the head loops
 *   bundle-not-in-channel  bundle no channel entry names
 *   bundle-package-property  not exactly one olm.package property, or wrong packageName
 *   bundle-version         olm.package version is not strict semver
 *   deprecation-reference  unknown schema, unknown channel/bundle, named package, duplicate
 * Problems come out in catalog order (shape problems first).  Nothing here is
 * quadratic: names are looked up through hash indexes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "fbc_internal.h"
#include "semver.h"

typedef struct problem {
    size_t order; /* meta index * 2^20 + sequence: keeps catalog order, stable */
    char *text;
} problem;

typedef struct vctx {
    const fbc_catalog *c;
    problem *items;
    size_t n, cap;
    size_t seq;
    bool oom;
} vctx;

static void report(vctx *v, const fbc_meta *m, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(vctx *v, const fbc_meta *m, const char *rule, const char *fmt, ...)
{
    if (v->oom)
        return;
    char detail[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (OLM_ARRAY_RESERVE(v->items, v->cap, v->n + 1) < 0) {
        v->oom = true;
        return;
    }
    char *text;
    if (asprintf(&text, "%s:%d: %s: %s", m->file, m->lineno, rule, detail) < 0) {
        v->oom = true;
        return;
    }
    size_t idx = (size_t)(m - v->c->metas);
    v->items[v->n++] = (problem){idx * ((size_t)1 << 20) + (v->seq++ & 0xFFFFF), text};
}

static const char *where(const fbc_meta *m) { return m->file; }

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_metas(vctx *v)
{
    const fbc_catalog *c = v->c;
    for (size_t i = 0; i < c->nmetas; i++) {
        const fbc_meta *m = &c->metas[i];
        if (!m->schema[0]) {
            report(v, m, "missing-schema", "blob has no schema (package \"%s\", name \"%s\")",
                   m->package, m->name);
            continue;
        }
        bool pkg = !strcmp(m->schema, "olm.package"), ch = !strcmp(m->schema, "olm.channel"),
             b = !strcmp(m->schema, "olm.bundle"), d = !strcmp(m->schema, "olm.deprecations");
        if ((pkg || ch || b) && !m->name[0])
            report(v, m, "missing-name", "%s blob has no name%s%s%s", m->schema,
                   m->package[0] ? " (package \"" : "", m->package,
                   m->package[0] ? "\")" : "");
        if ((ch || b || d) && !m->package[0])
            report(v, m, "missing-package", "%s \"%s\" has no package", m->schema, m->name);
    }
}

static void check_packages(vctx *v)
{
    const fbc_catalog *c = v->c;
    for (size_t i = 0; i < c->npackages; i++) {
        const fbc_package *p = &c->packages[i];
        if (!p->name[0])
            continue;
        const fbc_package *first = fbc_find_package(c, p->name);
        if (first != p) {
            report(v, p->meta, "duplicate-package", "package \"%s\" is already defined at %s:%d",
                   p->name, where(first->meta), first->meta->lineno);
            continue;
        }
        if (!p->default_channel || !p->default_channel[0])
            report(v, p->meta, "default-channel", "package \"%s\" has no defaultChannel", p->name);
        else if (!fbc_find_channel(c, p->name, p->default_channel))
            report(v, p->meta, "default-channel",
                   "defaultChannel \"%s\" of package \"%s\" is not a channel of the package",
                   p->default_channel, p->name);
    }
}

/* A channel's entries by name, and the names some entry replaces or skips. */
typedef struct channel_graph {
    fbc_index names;    /* entry name -> index of its first entry */
    fbc_index incoming; /* names that some entry replaces or skips */
} channel_graph;

/* Checks the entries (names, duplicates, bundles they name) and fills `g`.  `in_channel`
 * collects (package, entry name) for the bundle-not-in-channel check.  -1 on OOM. */
static int check_channel_entries(vctx *v, const fbc_channel *ch, fbc_index *in_channel, channel_graph *g)
{
    const fbc_catalog *c = v->c;
    const fbc_meta *m = ch->meta;
    for (size_t i = 0; i < ch->nentries; i++) {
        const fbc_channel_entry *e = &ch->entries[i];
        if (!e->name[0]) {
            report(v, m, "channel-entry", "channel \"%s/%s\" entries[%zu] has no name",
                   ch->package, ch->name, i);
            continue;
        }
        size_t prev;
        int rc = fbc_index_put(&g->names, e->name, NULL, i, &prev);
        if (rc < 0 || fbc_index_put(in_channel, ch->package, e->name, 0, NULL) < 0)
            return -1;
        if (rc == 0)
            report(v, m, "channel-entry", "channel \"%s/%s\" lists bundle \"%s\" more than once",
                   ch->package, ch->name, e->name);
        else if (fbc_find_package(c, ch->package) && !fbc_find_bundle(c, ch->package, e->name))
            report(v, m, "channel-entry",
                   "channel \"%s/%s\" entry \"%s\" names no olm.bundle of package \"%s\"",
                   ch->package, ch->name, e->name, ch->package);
        if (e->replaces && e->replaces[0] && fbc_index_put(&g->incoming, e->replaces, NULL, i, NULL) < 0)
            return -1;
        for (size_t k = 0; k < e->nskips; k++)
            if (fbc_index_put(&g->incoming, e->skips[k], NULL, i, NULL) < 0)
                return -1;
    }
    return 0;
}

/* Heads are the entries nothing replaces or skips; fills `heads` (room for every entry,
 * names borrowed) and the index of the last head.  Returns how many there are. */
static size_t channel_heads(const fbc_channel *ch, const channel_graph *g, char **heads, size_t *head)
{
    size_t nheads = 0, dummy;
    for (size_t i = 0; i < ch->nentries; i++) {
        const fbc_channel_entry *e = &ch->entries[i];
        size_t first;
        if (!e->name[0] || (fbc_index_get(&g->names, e->name, NULL, &first) && first != i))
            continue; /* nameless or duplicate entries were reported already */
        if (!fbc_index_get(&g->incoming, e->name, NULL, &dummy)) {
            heads[nheads++] = (char *)e->name;
            *head = i;
        }
    }
    return nheads;
}

/* Reports a channel without a head, or with several (sorted).  -1 on OOM. */
static int report_heads(vctx *v, const fbc_channel *ch, char **heads, size_t nheads)
{
    if (nheads == 0) {
        report(v, ch->meta, "channel-head",
               "channel \"%s/%s\" has no head: every entry is replaced or skipped by another "
               "(cycle)", ch->package, ch->name);
        return 0;
    }
    qsort(heads, nheads, sizeof *heads, cmp_str_ptr);
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < nheads; i++)
        if ((i && strbuf_puts(&sb, ", ") < 0) || strbuf_puts(&sb, heads[i]) < 0) {
            strbuf_free(&sb);
            return -1;
        }
    report(v, ch->meta, "channel-head", "channel \"%s/%s\" has %zu heads: %s", ch->package, ch->name,
           nheads, strbuf_str(&sb));
    strbuf_free(&sb);
    return 0;
}

/* Follows replaces from the single head; meeting an entry twice is a loop.  -1 on OOM. */
static int check_replaces_chain(vctx *v, const fbc_channel *ch, const channel_graph *g, size_t head)
{
    bool *seen = calloc(ch->nentries, sizeof *seen);
    if (!seen)
        return -1;
    size_t cur = head;
    for (;;) {
        seen[cur] = true;
        const char *r = ch->entries[cur].replaces;
        size_t next;
        if (!r || !r[0] || !fbc_index_get(&g->names, r, NULL, &next))
            break;
        if (seen[next]) {
            report(v, ch->meta, "replaces-cycle",
                   "channel \"%s/%s\": the replaces chain from head \"%s\" loops back to \"%s\"",
                   ch->package, ch->name, ch->entries[head].name, r);
            break;
        }
        cur = next;
    }
    free(seen);
    return 0;
}

/* One channel: entries, heads and the replaces chain. */
static void check_channel(vctx *v, const fbc_channel *ch, fbc_index *in_channel)
{
    if (ch->nentries == 0) {
        report(v, ch->meta, "channel-empty", "channel \"%s/%s\" has no entries", ch->package, ch->name);
        return;
    }
    channel_graph g = {0};
    char **heads = NULL;
    size_t head = 0, nheads;
    int rc = check_channel_entries(v, ch, in_channel, &g);
    if (rc == 0 && !(heads = calloc(ch->nentries, sizeof *heads)))
        rc = -1;
    if (rc == 0) {
        nheads = channel_heads(ch, &g, heads, &head);
        rc = nheads == 1 ? check_replaces_chain(v, ch, &g, head) : report_heads(v, ch, heads, nheads);
    }
    if (rc < 0)
        v->oom = true;
    free(heads);
    fbc_index_free(&g.names);
    fbc_index_free(&g.incoming);
}

static void check_channels(vctx *v, fbc_index *in_channel)
{
    const fbc_catalog *c = v->c;
    for (size_t i = 0; i < c->nchannels && !v->oom; i++) {
        const fbc_channel *ch = &c->channels[i];
        if (!ch->package[0] || !ch->name[0])
            continue; /* reported by check_metas */
        const fbc_channel *first = fbc_find_channel(c, ch->package, ch->name);
        if (first != ch) {
            report(v, ch->meta, "duplicate-channel", "channel \"%s/%s\" is already defined at %s:%d",
                   ch->package, ch->name, where(first->meta), first->meta->lineno);
            continue;
        }
        if (!fbc_find_package(c, ch->package))
            report(v, ch->meta, "unknown-package",
                   "channel \"%s/%s\" belongs to package \"%s\", which has no olm.package blob",
                   ch->package, ch->name, ch->package);
        check_channel(v, ch, in_channel);
    }
}

static void check_bundle_package_property(vctx *v, const fbc_bundle *b)
{
    size_t count = 0;
    for (size_t k = 0; k < b->nproperties; k++)
        count += strcmp(b->properties[k].type, "olm.package") == 0;
    if (count != 1) {
        report(v, b->meta, "bundle-package-property",
               "bundle \"%s/%s\" must have exactly one olm.package property, found %zu",
               b->package, b->name, count);
        if (count == 0 || !b->version)
            return;
    }
    if (!b->version)
        return; /* the value was malformed: an invalid-field problem says so */
    /* Only the first olm.package property counts (spec §3.4); the model kept its
     * packageName. */
    const char *name = b->package_name ? b->package_name : "";
    if (strcmp(name, b->package) != 0)
        report(v, b->meta, "bundle-package-property",
               "bundle \"%s/%s\": olm.package property packageName \"%s\" does not match "
               "the bundle's package", b->package, b->name, name);
    semver_version sv;
    olm_error serr;
    olm_error_clear(&serr);
    if (semver_parse_strict(b->version, &sv, &serr) < 0)
        report(v, b->meta, "bundle-version", "bundle \"%s/%s\": version \"%s\" is not strict semver: %s",
               b->package, b->name, b->version, serr.msg);
    else
        semver_version_free(&sv);
}

static void check_bundles(vctx *v, const fbc_index *in_channel)
{
    const fbc_catalog *c = v->c;
    for (size_t i = 0; i < c->nbundles && !v->oom; i++) {
        const fbc_bundle *b = &c->bundles[i];
        if (!b->package[0] || !b->name[0])
            continue;
        const fbc_bundle *first = fbc_find_bundle(c, b->package, b->name);
        if (first != b) {
            report(v, b->meta, "duplicate-bundle", "bundle \"%s/%s\" is already defined at %s:%d",
                   b->package, b->name, where(first->meta), first->meta->lineno);
            continue;
        }
        size_t dummy;
        if (!fbc_find_package(c, b->package))
            report(v, b->meta, "unknown-package",
                   "bundle \"%s/%s\" belongs to package \"%s\", which has no olm.package blob",
                   b->package, b->name, b->package);
        else if (!fbc_index_get(in_channel, b->package, b->name, &dummy))
            report(v, b->meta, "bundle-not-in-channel", "bundle \"%s/%s\" is not in any channel",
                   b->package, b->name);
        check_bundle_package_property(v, b);
    }
}

static void check_deprecations(vctx *v)
{
    const fbc_catalog *c = v->c;
    for (size_t i = 0; i < c->ndeprecations && !v->oom; i++) {
        const fbc_deprecation *d = &c->deprecations[i];
        if (!d->package[0])
            continue;
        const fbc_deprecation *first = fbc_find_deprecation(c, d->package);
        if (first != d) {
            report(v, d->meta, "duplicate-deprecations",
                   "package \"%s\" already has olm.deprecations at %s:%d", d->package,
                   where(first->meta), first->meta->lineno);
            continue;
        }
        if (!fbc_find_package(c, d->package)) {
            report(v, d->meta, "unknown-package",
                   "olm.deprecations for package \"%s\", which has no olm.package blob", d->package);
            continue;
        }
        fbc_index refs = {0};
        for (size_t k = 0; k < d->nentries && !v->oom; k++) {
            const fbc_deprecation_entry *e = &d->entries[k];
            int rc = fbc_index_put(&refs, e->schema, e->name, k, NULL);
            if (rc < 0) {
                v->oom = true;
                break;
            }
            if (rc == 0) {
                report(v, d->meta, "deprecation-reference",
                       "package \"%s\": duplicate deprecation entry for %s \"%s\"", d->package,
                       e->schema, e->name);
            } else if (!strcmp(e->schema, "olm.package")) {
                if (e->name[0])
                    report(v, d->meta, "deprecation-reference",
                           "package \"%s\": an olm.package reference must not have a name (got \"%s\")",
                           d->package, e->name);
            } else if (!strcmp(e->schema, "olm.channel")) {
                if (!fbc_find_channel(c, d->package, e->name))
                    report(v, d->meta, "deprecation-reference",
                           "package \"%s\": deprecated channel \"%s\" does not exist", d->package,
                           e->name);
            } else if (!strcmp(e->schema, "olm.bundle")) {
                if (!fbc_find_bundle(c, d->package, e->name))
                    report(v, d->meta, "deprecation-reference",
                           "package \"%s\": deprecated bundle \"%s\" does not exist", d->package,
                           e->name);
            } else {
                report(v, d->meta, "deprecation-reference",
                       "package \"%s\": entries[%zu] references unknown schema \"%s\"", d->package,
                       k, e->schema);
            }
        }
        fbc_index_free(&refs);
    }
}

static int cmp_problem(const void *a, const void *b)
{
    const problem *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

int fbc_validate(const fbc_catalog *c, fbc_problems *out)
{
    out->items = NULL;
    out->n = 0;
    vctx v = {.c = c};
    fbc_index in_channel = {0};
    check_metas(&v);
    check_packages(&v);
    check_channels(&v, &in_channel);
    check_bundles(&v, &in_channel);
    check_deprecations(&v);
    fbc_index_free(&in_channel);
    const fbc_priv *p = c->priv;
    size_t total = v.n + p->nshape;
    char **items = v.oom ? NULL : calloc(total ? total : 1, sizeof *items);
    if (!items) {
        for (size_t i = 0; i < v.n; i++)
            free(v.items[i].text);
        free(v.items);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < p->nshape; i++) {
        if (!(items[k] = strdup(p->shape[i]))) {
            for (size_t j = 0; j < k; j++)
                free(items[j]);
            free(items);
            for (size_t j = 0; j < v.n; j++)
                free(v.items[j].text);
            free(v.items);
            return -1;
        }
        k++;
    }
    if (v.n)
        qsort(v.items, v.n, sizeof *v.items, cmp_problem);
    for (size_t i = 0; i < v.n; i++)
        items[k++] = v.items[i].text; /* ownership moves to out */
    free(v.items);
    out->items = items;
    out->n = total;
    return total > (size_t)0x7fffffff ? 0x7fffffff : (int)total;
}

void fbc_problems_free(fbc_problems *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i]);
    free(p->items);
    p->items = NULL;
    p->n = 0;
}

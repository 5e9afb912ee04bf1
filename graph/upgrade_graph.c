/* upgrade_graph: building the graph of one package from catalog content
 * (upgrade_graph.h).  Edges follow the resolver's successor rule
 * (domain/resolve/resolve_bundle.c): an entry of a channel is a successor of a bundle
 * it replaces, skips, or whose version its skipRange covers (an unparsable range is
 * ignored, as upstream does), wherever that bundle sits in the package. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "resolve.h"
#include "semver.h"
#include "strbuf.h"
#include "upgrade_graph.h"

void upgrade_graph_init(upgrade_graph *g)
{
    memset(g, 0, sizeof *g);
}

void upgrade_graph_free(upgrade_graph *g)
{
    for (size_t i = 0; i < g->nnodes; i++)
        free(g->nodes[i].note);
    for (size_t i = 0; i < g->nedges; i++)
        free(g->edges[i].channels);
    free(g->nodes);
    free(g->edges);
    free(g->channels);
    free(g->package);
    memset(g, 0, sizeof *g);
}

size_t upgrade_graph_find(const upgrade_graph *g, const char *catalog, const char *bundle)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (strcmp(g->nodes[i].bundle, bundle) == 0 && (!catalog || strcmp(g->nodes[i].catalog, catalog) == 0))
            return i;
    return SIZE_MAX;
}

int upgrade_graph_mark(upgrade_graph *g, size_t node, unsigned marks, const char *note)
{
    ug_node *n = &g->nodes[node];
    n->marks |= marks;
    if (note) {
        char *copy = strdup(note);
        if (!copy)
            return -1;
        free(n->note);
        n->note = copy;
    }
    return 0;
}

/* Whether the edge's comma-separated channels name one of `channels` (any: nchannels 0). */
static bool edge_in_channels(const ug_edge *e, const char *const *channels, size_t nchannels)
{
    for (size_t i = 0; i < nchannels; i++) {
        size_t n = strlen(channels[i]);
        for (const char *p = e->channels; p && *p;) {
            size_t len = strcspn(p, ",");
            if (len == n && strncmp(p, channels[i], n) == 0)
                return true;
            p += len + (p[len] == ',');
        }
    }
    return nchannels == 0;
}

void upgrade_graph_mark_reachable(upgrade_graph *g, size_t from, const char *const *channels, size_t nchannels)
{
    size_t *queue = malloc(g->nnodes * sizeof *queue + 1);
    bool *seen = calloc(g->nnodes + 1, sizeof *seen);
    if (!queue || !seen) {
        free(queue);
        free(seen);
        return;
    }
    size_t head = 0, tail = 0;
    queue[tail++] = from;
    seen[from] = true;
    while (head < tail) {
        size_t at = queue[head++];
        for (size_t i = 0; i < g->nedges; i++)
            if (g->edges[i].from == at && !seen[g->edges[i].to] &&
                edge_in_channels(&g->edges[i], channels, nchannels)) {
                seen[g->edges[i].to] = true;
                g->nodes[g->edges[i].to].marks |= UG_MARK_REACHABLE;
                queue[tail++] = g->edges[i].to;
            }
    }
    free(queue);
    free(seen);
}

/* ------------------------------------------------------------ building */

static const char *deprecation_of(const fbc_deprecation *d, const char *schema, const char *name)
{
    for (size_t i = 0; d && i < d->nentries; i++)
        if (strcmp(d->entries[i].schema, schema) == 0 && strcmp(d->entries[i].name, name) == 0)
            return d->entries[i].message ? d->entries[i].message : "";
    return NULL;
}

static bool channel_selected(const char *name, const char *const *channels, size_t nchannels)
{
    for (size_t i = 0; i < nchannels; i++)
        if (strcmp(channels[i], name) == 0)
            return true;
    return nchannels == 0;
}

/* The node of `bundle` in the catalog being added (nodes from `first` on), or SIZE_MAX. */
static size_t find_from(const upgrade_graph *g, size_t first, const char *bundle)
{
    for (size_t i = first; i < g->nnodes; i++)
        if (strcmp(g->nodes[i].bundle, bundle) == 0)
            return i;
    return SIZE_MAX;
}

static int add_node(upgrade_graph *g, size_t first, const fbc_catalog *c, const char *catalog, const char *package,
                    const fbc_channel_entry *e, const fbc_deprecation *dep)
{
    size_t at = find_from(g, first, e->name);
    if (at == SIZE_MAX) {
        if (OLM_ARRAY_PUSH_SLOT(g->nodes, g->nnodes, g->nodes_cap) < 0)
            return -1;
        ug_node *n = &g->nodes[g->nnodes - 1];
        const fbc_bundle *b = fbc_find_bundle(c, package, e->name);
        n->catalog = catalog;
        n->bundle = e->name;
        n->version = b ? b->version : NULL;
        n->deprecation = deprecation_of(dep, "olm.bundle", e->name);
        at = g->nnodes - 1;
    }
    if (!g->nodes[at].skip_range && e->skip_range && *e->skip_range)
        g->nodes[at].skip_range = e->skip_range;
    return 0;
}

/* Highest version first, so the picture and the text read top-down from the newest;
 * bundles without a readable version last, by name. */
static int by_version_desc(const void *pa, const void *pb)
{
    const ug_node *a = pa, *b = pb;
    int r = bundle_version_text_order(a->version, b->version);
    return r ? r : strcmp(a->bundle, b->bundle);
}

/* Appends `channel` to the edge's comma-separated list unless it is there. */
static int edge_add_channel(ug_edge *e, const char *channel)
{
    size_t n = strlen(channel);
    for (const char *p = e->channels; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, channel, n) == 0)
            return 0;
        p += len + (p[len] == ',');
    }
    strbuf sb = STRBUF_INIT;
    if ((e->channels && strbuf_printf(&sb, "%s,", e->channels) < 0) || strbuf_puts(&sb, channel) < 0) {
        strbuf_free(&sb);
        return -1;
    }
    free(e->channels);
    e->channels = strbuf_detach(&sb);
    return 0;
}

static int add_edge(upgrade_graph *g, size_t first_edge, size_t from, size_t to, unsigned kind, const char *channel)
{
    if (from == SIZE_MAX || to == SIZE_MAX || from == to)
        return 0;
    ug_edge *e = NULL;
    for (size_t i = first_edge; i < g->nedges && !e; i++)
        if (g->edges[i].from == from && g->edges[i].to == to)
            e = &g->edges[i];
    if (!e) {
        if (OLM_ARRAY_PUSH_SLOT(g->edges, g->nedges, g->edges_cap) < 0)
            return -1;
        e = &g->edges[g->nedges - 1];
        e->from = from;
        e->to = to;
    }
    e->kinds |= kind;
    return edge_add_channel(e, channel);
}

/* The package's nodes' versions as blang parses them (skipRange matching); ok[i] false
 * when node i has none. */
typedef struct parsed_versions {
    semver_version *v;
    bool *ok;
    size_t first, n;
} parsed_versions;

static int parse_versions(const upgrade_graph *g, size_t first, parsed_versions *pv)
{
    pv->first = first;
    pv->n = g->nnodes - first;
    pv->v = calloc(pv->n + 1, sizeof *pv->v);
    pv->ok = calloc(pv->n + 1, sizeof *pv->ok);
    if (!pv->v || !pv->ok)
        return -1;
    for (size_t i = 0; i < pv->n; i++)
        pv->ok[i] = g->nodes[first + i].version &&
                    semver_parse_strict(g->nodes[first + i].version, &pv->v[i], NULL) == 0;
    return 0;
}

static void free_versions(parsed_versions *pv)
{
    for (size_t i = 0; pv->ok && i < pv->n; i++)
        if (pv->ok[i])
            semver_version_free(&pv->v[i]);
    free(pv->v);
    free(pv->ok);
}

/* The edges one channel entry makes into its bundle. */
static int add_entry_edges(upgrade_graph *g, size_t first, size_t first_edge, const fbc_channel_entry *e,
                           const char *channel, const parsed_versions *pv)
{
    size_t to = find_from(g, first, e->name);
    if (e->replaces && add_edge(g, first_edge, find_from(g, first, e->replaces), to, UG_EDGE_REPLACES, channel) < 0)
        return -1;
    for (size_t k = 0; k < e->nskips; k++)
        if (add_edge(g, first_edge, find_from(g, first, e->skips[k]), to, UG_EDGE_SKIPS, channel) < 0)
            return -1;
    if (!e->skip_range || !*e->skip_range)
        return 0;
    semver_range *r = semver_range_parse(e->skip_range, NULL);
    for (size_t i = 0; r && i < pv->n; i++)
        if (pv->ok[i] && semver_range_match(r, &pv->v[i]) &&
            add_edge(g, first_edge, pv->first + i, to, UG_EDGE_SKIP_RANGE, channel) < 0) {
            semver_range_free(r);
            return -1;
        }
    semver_range_free(r);
    return 0;
}

/* The head of a channel: the entry no other entry of it replaces or skips (the first such
 * entry when the catalog is invalid and has several). */
static size_t channel_head(const upgrade_graph *g, size_t first, const fbc_channel *ch)
{
    for (size_t i = 0; i < ch->nentries; i++) {
        const char *name = ch->entries[i].name;
        bool replaced = false;
        for (size_t k = 0; k < ch->nentries && !replaced; k++) {
            const fbc_channel_entry *o = &ch->entries[k];
            replaced = o->replaces && strcmp(o->replaces, name) == 0;
            for (size_t s = 0; s < o->nskips && !replaced; s++)
                replaced = strcmp(o->skips[s], name) == 0;
        }
        if (!replaced)
            return find_from(g, first, name);
    }
    return SIZE_MAX;
}

static int add_channels(upgrade_graph *g, size_t first, const fbc_catalog *c, const char *catalog, const char *package,
                        const char *const *channels, size_t nchannels)
{
    const fbc_package *pkg = fbc_find_package(c, package);
    const fbc_deprecation *dep = fbc_find_deprecation(c, package);
    for (size_t i = 0; i < c->nchannels; i++) {
        const fbc_channel *ch = &c->channels[i];
        if (strcmp(ch->package, package) != 0 || !channel_selected(ch->name, channels, nchannels))
            continue;
        if (OLM_ARRAY_PUSH_SLOT(g->channels, g->nchannels, g->channels_cap) < 0)
            return -1;
        ug_channel *u = &g->channels[g->nchannels - 1];
        u->catalog = catalog;
        u->name = ch->name;
        u->deprecation = deprecation_of(dep, "olm.channel", ch->name);
        u->is_default = pkg && pkg->default_channel && strcmp(pkg->default_channel, ch->name) == 0;
        u->nentries = ch->nentries;
        u->head = SIZE_MAX;
        for (size_t k = 0; k < ch->nentries; k++)
            if (add_node(g, first, c, catalog, package, &ch->entries[k], dep) < 0)
                return -1;
    }
    return 0;
}

static int add_edges(upgrade_graph *g, size_t first, size_t first_channel, const fbc_catalog *c, const char *package,
                     const char *const *channels, size_t nchannels)
{
    size_t first_edge = g->nedges;
    parsed_versions pv;
    int rc = parse_versions(g, first, &pv);
    size_t u = first_channel;
    for (size_t i = 0; rc == 0 && i < c->nchannels; i++) {
        const fbc_channel *ch = &c->channels[i];
        if (strcmp(ch->package, package) != 0 || !channel_selected(ch->name, channels, nchannels))
            continue;
        g->channels[u++].head = channel_head(g, first, ch);
        for (size_t k = 0; rc == 0 && k < ch->nentries; k++)
            rc = add_entry_edges(g, first, first_edge, &ch->entries[k], ch->name, &pv);
    }
    free_versions(&pv);
    return rc;
}

int upgrade_graph_add_catalog(upgrade_graph *g, const fbc_catalog *c, const char *catalog, const char *package,
                              const char *const *channels, size_t nchannels, olm_error *err)
{
    if (!g->package && !(g->package = strdup(package)))
        return olm_error_set(err, "out of memory");
    size_t first = g->nnodes, first_channel = g->nchannels;
    const fbc_deprecation *dep = fbc_find_deprecation(c, package);
    if (!g->package_deprecation)
        g->package_deprecation = deprecation_of(dep, "olm.package", "");
    if (add_channels(g, first, c, catalog, package, channels, nchannels) < 0)
        return olm_error_set(err, "out of memory");
    qsort(g->nodes + first, g->nnodes - first, sizeof *g->nodes, by_version_desc);
    if (add_edges(g, first, first_channel, c, package, channels, nchannels) < 0)
        return olm_error_set(err, "out of memory");
    if (g->nnodes > first)
        g->ncatalogs++;
    return (int)(g->nnodes - first);
}

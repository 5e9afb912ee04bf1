/* upgrade_graph_simplify: what the SVG leaves out so a big package stays readable
 * (upgrade_graph.h).
 *
 * Two rules, chosen from the real catalogs (../shared/data): gpu-operator-certified gives
 * every bundle a skipRange `>=1.9.0 <self` beside a replaces chain, so 32 bundles make about
 * 500 skipRange edges, every one of them implied by the chain; scaleops-operator's 69
 * bundles are one long `skips` chain.
 *  1. Fold implied skipRange edges: an edge made only by skipRange whose target the source
 *     reaches through its other successors anyway (transitive reduction, on an acyclic graph
 *     only) is left out; the target keeps its range in its label.  Edges out of the
 *     installed bundle stay: they are the upgrades explain is asked about.
 *  2. Collapse runs: a maximal chain of "plain" bundles (one edge in, one edge out, no head,
 *     no mark, not deprecated) longer than max_run becomes one node naming its lowest and
 *     highest version and how many bundles it holds; its neighbours stay visible.
 *  3. Collapse fans: scaleops-operator's minor heads each skip every older patch, 60 leaves
 *     side by side.  More than max_run leaves (no edge in, one edge out, nothing to show)
 *     that point at the same bundle the same way become one node, as a run does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "upgrade_graph.h"

/* ------------------------------------------------------------ rule 1 */

typedef struct bitset {
    uint64_t *words;
    size_t nwords;
} bitset;

#define BIT_TEST(s, i) (((s).words[(i) / 64] >> ((i) % 64)) & 1u)
#define BIT_SET(s, i) ((s).words[(i) / 64] |= (uint64_t)1 << ((i) % 64))

/* Kahn's order of the nodes (sources first); false when the graph has a cycle. */
static bool topological_order(const upgrade_graph *g, size_t *order)
{
    size_t *indeg = calloc(g->nnodes + 1, sizeof *indeg);
    if (!indeg)
        return false;
    for (size_t i = 0; i < g->nedges; i++)
        indeg[g->edges[i].to]++;
    size_t head = 0, tail = 0;
    for (size_t n = 0; n < g->nnodes; n++)
        if (indeg[n] == 0)
            order[tail++] = n;
    while (head < tail) {
        size_t at = order[head++];
        for (size_t i = 0; i < g->nedges; i++)
            if (g->edges[i].from == at && --indeg[g->edges[i].to] == 0)
                order[tail++] = g->edges[i].to;
    }
    free(indeg);
    return tail == g->nnodes;
}

/* reach[n]: every node n reaches through one edge or more. */
static bitset *reach_sets(const upgrade_graph *g, const size_t *order)
{
    size_t nwords = (g->nnodes + 63) / 64;
    bitset *reach = calloc(g->nnodes + 1, sizeof *reach);
    uint64_t *words = calloc(g->nnodes * nwords + 1, sizeof *words);
    if (!reach || !words) {
        free(reach);
        free(words);
        return NULL;
    }
    for (size_t n = 0; n < g->nnodes; n++)
        reach[n] = (bitset){words + n * nwords, nwords};
    for (size_t k = g->nnodes; k-- > 0;) { /* sinks first */
        size_t n = order[k];
        for (size_t i = 0; i < g->nedges; i++) {
            if (g->edges[i].from != n)
                continue;
            size_t to = g->edges[i].to;
            BIT_SET(reach[n], to);
            for (size_t w = 0; w < nwords; w++)
                reach[n].words[w] |= reach[to].words[w];
        }
    }
    return reach;
}

/* keep[i] false for the skipRange edges rule 1 folds. */
static int fold_implied(const upgrade_graph *g, bool *keep)
{
    for (size_t i = 0; i < g->nedges; i++)
        keep[i] = true;
    size_t *order = malloc((g->nnodes + 1) * sizeof *order);
    if (!order)
        return -1;
    if (!topological_order(g, order)) {
        free(order); /* a cyclic (invalid) graph is drawn whole */
        return 0;
    }
    bitset *reach = reach_sets(g, order);
    free(order);
    if (!reach)
        return -1;
    for (size_t i = 0; i < g->nedges; i++) {
        const ug_edge *e = &g->edges[i];
        if (e->kinds != UG_EDGE_SKIP_RANGE || (g->nodes[e->from].marks & UG_MARK_INSTALLED))
            continue;
        for (size_t k = 0; k < g->nedges && keep[i]; k++) {
            const ug_edge *o = &g->edges[k];
            if (k != i && o->from == e->from && o->to != e->to && BIT_TEST(reach[o->to], e->to))
                keep[i] = false;
        }
    }
    if (g->nnodes)
        free(reach[0].words);
    free(reach);
    return 0;
}

/* ------------------------------------------------------------ rule 2 */

static bool is_head(const upgrade_graph *g, size_t n)
{
    for (size_t i = 0; i < g->nchannels; i++)
        if (g->channels[i].head == n)
            return true;
    return false;
}

/* plain[n]: one kept edge in, one out, nothing to show on it. */
static void find_plain(const upgrade_graph *g, const bool *keep, bool *plain)
{
    size_t *in = calloc(g->nnodes + 1, sizeof *in), *out = calloc(g->nnodes + 1, sizeof *out);
    for (size_t i = 0; in && out && i < g->nedges; i++)
        if (keep[i]) {
            out[g->edges[i].from]++;
            in[g->edges[i].to]++;
        }
    for (size_t n = 0; n < g->nnodes; n++) {
        const ug_node *x = &g->nodes[n];
        plain[n] = in && out && in[n] == 1 && out[n] == 1 && !x->marks && !x->deprecation && !x->note &&
                   !is_head(g, n);
    }
    free(in);
    free(out);
}

/* The one kept edge out of n (n plain), or SIZE_MAX. */
static size_t next_of(const upgrade_graph *g, const bool *keep, size_t n)
{
    for (size_t i = 0; i < g->nedges; i++)
        if (keep[i] && g->edges[i].from == n)
            return g->edges[i].to;
    return SIZE_MAX;
}

static size_t prev_of(const upgrade_graph *g, const bool *keep, size_t n)
{
    for (size_t i = 0; i < g->nedges; i++)
        if (keep[i] && g->edges[i].to == n)
            return g->edges[i].from;
    return SIZE_MAX;
}

/* The one kept edge out of n, or SIZE_MAX. */
static size_t out_edge(const upgrade_graph *g, const bool *keep, size_t n)
{
    for (size_t i = 0; i < g->nedges; i++)
        if (keep[i] && g->edges[i].from == n)
            return i;
    return SIZE_MAX;
}

/* Rule 3: a leaf is a node with nothing to show, no kept edge in and one out. */
static bool is_leaf(const upgrade_graph *g, const bool *keep, size_t n)
{
    const ug_node *x = &g->nodes[n];
    if (x->marks || x->deprecation || x->note || is_head(g, n) || prev_of(g, keep, n) != SIZE_MAX)
        return false;
    size_t e = out_edge(g, keep, n);
    if (e == SIZE_MAX)
        return false;
    for (size_t i = e + 1; i < g->nedges; i++)
        if (keep[i] && g->edges[i].from == n)
            return false;
    return true;
}

/* Groups the fans of leaves into run[] as find_runs does (the representative is the
 * oldest member, the last in the newest-first node order). */
static void find_fans(const upgrade_graph *g, const bool *keep, size_t max_run, size_t *run, size_t *len_of)
{
    size_t *leaf_edge = malloc((g->nnodes + 1) * sizeof *leaf_edge); /* SIZE_MAX: not a leaf */
    if (!leaf_edge || !max_run) {
        free(leaf_edge); /* out of memory: the fans are drawn whole */
        return;
    }
    for (size_t n = 0; n < g->nnodes; n++)
        leaf_edge[n] = run[n] == SIZE_MAX && is_leaf(g, keep, n) ? out_edge(g, keep, n) : SIZE_MAX;
    for (size_t n = g->nnodes; n-- > 0;) {
        if (leaf_edge[n] == SIZE_MAX || run[n] != SIZE_MAX)
            continue;
        const ug_edge *e = &g->edges[leaf_edge[n]];
        size_t count = 0;
        for (size_t pass = 0; pass < 2; pass++)
            for (size_t k = 0; k <= n; k++) {
                const ug_edge *o = leaf_edge[k] == SIZE_MAX ? NULL : &g->edges[leaf_edge[k]];
                if (!o || o->to != e->to || o->kinds != e->kinds || run[k] != SIZE_MAX)
                    continue;
                if (pass == 0)
                    count++;
                else if (count > max_run)
                    run[k] = n;
            }
        if (count > max_run)
            len_of[n] = count;
    }
    free(leaf_edge);
}

/* run[n]: the first (oldest) member of n's run when n is in a run longer than max_run,
 * else SIZE_MAX; *len_of[first] the run's length. */
static void find_runs(const upgrade_graph *g, const bool *keep, const bool *plain, size_t max_run, size_t *run,
                      size_t *len_of)
{
    for (size_t n = 0; n < g->nnodes; n++)
        run[n] = SIZE_MAX, len_of[n] = 0;
    for (size_t n = 0; n < g->nnodes && max_run; n++) {
        size_t p = prev_of(g, keep, n);
        if (!plain[n] || (p != SIZE_MAX && plain[p]))
            continue; /* not the oldest member of a run */
        size_t len = 0;
        for (size_t at = n; at != SIZE_MAX && plain[at] && len <= g->nnodes; at = next_of(g, keep, at))
            len++;
        if (len <= max_run)
            continue;
        size_t at = n;
        for (size_t k = 0; k < len; k++, at = next_of(g, keep, at))
            run[at] = n;
        len_of[n] = len;
    }
}

/* ------------------------------------------------------------ the copy */

static int copy_node(upgrade_graph *out, const ug_node *n)
{
    if (OLM_ARRAY_RESERVE(out->nodes, out->nodes_cap, out->nnodes + 1) < 0)
        return -1;
    ug_node *copy = &out->nodes[out->nnodes];
    *copy = *n;
    copy->note = NULL;
    if (n->note && !(copy->note = strdup(n->note)))
        return -1;
    out->nnodes++;
    return 0;
}

static int copy_edge(upgrade_graph *out, size_t from, size_t to, const ug_edge *e)
{
    for (size_t i = 0; i < out->nedges; i++)
        if (out->edges[i].from == from && out->edges[i].to == to)
            return 0;
    if (OLM_ARRAY_RESERVE(out->edges, out->edges_cap, out->nedges + 1) < 0)
        return -1;
    ug_edge *copy = &out->edges[out->nedges];
    *copy = (ug_edge){from, to, e->kinds, e->channels ? strdup(e->channels) : NULL};
    if (e->channels && !copy->channels)
        return -1;
    out->nedges++;
    return 0;
}

/* Nodes: every node not in a run, and one node per run at its oldest member's place (the
 * nodes are newest first, so the run's newest member names run_last). */
static int copy_nodes(const upgrade_graph *in, const size_t *run, const size_t *len_of, size_t *map, upgrade_graph *out)
{
    for (size_t n = 0; n < in->nnodes; n++) {
        if (run[n] != SIZE_MAX && run[n] != n)
            continue;
        if (copy_node(out, &in->nodes[n]) < 0)
            return -1;
        map[n] = out->nnodes - 1;
        if (run[n] == n) {
            ug_node *r = &out->nodes[out->nnodes - 1];
            r->run_len = len_of[n];
            r->skip_range = NULL;
            size_t last = n;
            for (size_t k = 0; k < in->nnodes; k++)
                if (run[k] == n && k < last)
                    last = k;
            r->run_last = in->nodes[last].version ? in->nodes[last].version : in->nodes[last].bundle;
        }
    }
    for (size_t n = 0; n < in->nnodes; n++)
        if (run[n] != SIZE_MAX)
            map[n] = map[run[n]];
    return 0;
}

static int copy_rest(const upgrade_graph *in, const bool *keep, const size_t *map, upgrade_graph *out)
{
    for (size_t i = 0; i < in->nedges; i++) {
        const ug_edge *e = &in->edges[i];
        if (!keep[i]) {
            out->folded_edges++;
            continue;
        }
        if (map[e->from] != map[e->to] && copy_edge(out, map[e->from], map[e->to], e) < 0)
            return -1;
    }
    if (in->nchannels) {
        out->channels = malloc(in->nchannels * sizeof *out->channels);
        if (!out->channels)
            return -1;
        memcpy(out->channels, in->channels, in->nchannels * sizeof *out->channels);
        out->nchannels = out->channels_cap = in->nchannels;
        for (size_t i = 0; i < in->nchannels; i++)
            if (in->channels[i].head != SIZE_MAX)
                out->channels[i].head = map[in->channels[i].head];
    }
    return 0;
}

int upgrade_graph_simplify(const upgrade_graph *in, size_t max_run, upgrade_graph *out, olm_error *err)
{
    upgrade_graph_init(out);
    out->package_deprecation = in->package_deprecation;
    out->ncatalogs = in->ncatalogs;
    out->folded_edges = in->folded_edges;
    size_t n = in->nnodes + 1;
    bool *keep = calloc(in->nedges + 1, sizeof *keep), *plain = calloc(n, sizeof *plain);
    size_t *run = calloc(n, sizeof *run), *len_of = calloc(n, sizeof *len_of), *map = calloc(n, sizeof *map);
    int rc = keep && plain && run && len_of && map && (!in->package || (out->package = strdup(in->package))) ? 0 : -1;
    if (rc == 0)
        rc = fold_implied(in, keep);
    if (rc == 0) {
        find_plain(in, keep, plain);
        find_runs(in, keep, plain, max_run, run, len_of);
        find_fans(in, keep, max_run, run, len_of);
        rc = copy_nodes(in, run, len_of, map, out);
    }
    if (rc == 0)
        rc = copy_rest(in, keep, map, out);
    free(keep);
    free(plain);
    free(run);
    free(len_of);
    free(map);
    if (rc < 0) {
        upgrade_graph_free(out);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

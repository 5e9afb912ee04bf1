/* resolve_reach: the bundles an installed bundle can reach by following upgrade edges
 * one after another (resolve.h).  The resolver takes one edge at a time; this says how
 * far the edges lead, so the CLI can tell a user what a wider version range would
 * allow and the graph picture can mark the reachable nodes. */
#include "resolve.h"

#include <stdlib.h>
#include <string.h>

#include "semver.h"

/* A bundle edges start from: its name and version (NULL fields when unreadable). */
typedef struct reach_node {
    const char *name;
    bool has_version;
    bundle_version version;  /* same-version edges */
    semver_version blang;    /* skipRange edges (blang syntax, as the resolver) */
} reach_node;

static void node_init(reach_node *n, const char *name, const char *version)
{
    memset(n, 0, sizeof *n);
    n->name = name;
    if (!version || bundle_version_parse(version, &n->version, NULL) < 0)
        return;
    if (semver_parse_strict(version, &n->blang, NULL) < 0) {
        bundle_version_free(&n->version);
        return;
    }
    n->has_version = true;
}

static void node_free(reach_node *n)
{
    if (n->has_version) {
        bundle_version_free(&n->version);
        semver_version_free(&n->blang);
    }
}

static bool channel_considered(const resolve_request *req, const fbc_channel *ch)
{
    if (strcmp(ch->package, req->package) != 0)
        return false;
    if (req->nchannels == 0)
        return true;
    for (size_t i = 0; i < req->nchannels; i++)
        if (strcmp(req->channels[i], ch->name) == 0)
            return true;
    return false;
}

/* The resolver's legacy edge (replaces, skips, skipRange) from `from` to entry e. */
static bool entry_follows(const fbc_channel_entry *e, const reach_node *from)
{
    if (e->replaces && strcmp(e->replaces, from->name) == 0)
        return true;
    for (size_t i = 0; i < e->nskips; i++)
        if (strcmp(e->skips[i], from->name) == 0)
            return true;
    if (!e->skip_range || !*e->skip_range || !from->has_version)
        return false;
    semver_range *r = semver_range_parse(e->skip_range, NULL); /* unparsable: ignored, as upstream */
    bool in = r && semver_range_match(r, &from->blang);
    semver_range_free(r);
    return in;
}

/* The resolver's "same version" edge: another bundle of the same VersionRelease. */
static bool same_version(const fbc_bundle *b, const reach_node *from)
{
    bundle_version v;
    if (!from->has_version || !b->version || bundle_version_parse(b->version, &v, NULL) < 0)
        return false;
    bool same = bundle_version_compare(&v, &from->version) == 0;
    bundle_version_free(&v);
    return same;
}

/* Index of the bundle `name` of the package, or -1. */
static long bundle_index(const fbc_catalog *c, const char *package, const char *name)
{
    const fbc_bundle *b = fbc_find_bundle(c, package, name);
    return b ? (long)(b - c->bundles) : -1;
}

/* Marks (in seen, appends to out) every bundle one edge away from `from`. */
static void step(const fbc_catalog *c, const resolve_request *req, const reach_node *from, bool *seen,
                 resolve_reach *out)
{
    for (size_t k = 0; k < c->nchannels; k++) {
        const fbc_channel *ch = &c->channels[k];
        if (!channel_considered(req, ch))
            continue;
        for (size_t e = 0; e < ch->nentries; e++) {
            long i = bundle_index(c, req->package, ch->entries[e].name);
            if (i < 0 || seen[i] || strcmp(c->bundles[i].name, req->installed->bundle_name) == 0)
                continue;
            if (entry_follows(&ch->entries[e], from) || same_version(&c->bundles[i], from)) {
                seen[i] = true;
                out->bundles[out->n++] = &c->bundles[i];
            }
        }
    }
}

/* The highest VersionRelease among out->bundles (unreadable versions never win). */
static const fbc_bundle *highest(const resolve_reach *r)
{
    const fbc_bundle *best = NULL;
    bundle_version best_v, v;
    for (size_t i = 0; i < r->n; i++) {
        if (!r->bundles[i]->version || bundle_version_parse(r->bundles[i]->version, &v, NULL) < 0)
            continue;
        if (best && bundle_version_compare(&v, &best_v) <= 0) {
            bundle_version_free(&v);
            continue;
        }
        if (best)
            bundle_version_free(&best_v);
        best = r->bundles[i];
        best_v = v;
    }
    if (best)
        bundle_version_free(&best_v);
    return best;
}

int resolve_reachable(const fbc_catalog *c, const resolve_request *req, resolve_reach *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (!req->installed || c->nbundles == 0)
        return 0;
    bool *seen = calloc(c->nbundles, sizeof *seen);
    out->bundles = calloc(c->nbundles, sizeof *out->bundles);
    if (!seen || !out->bundles) {
        free(seen);
        resolve_reach_free(out);
        return olm_error_set(err, "out of memory");
    }
    reach_node from;
    node_init(&from, req->installed->bundle_name, req->installed->version);
    step(c, req, &from, seen, out);
    node_free(&from);
    /* Breadth first: out->bundles is the queue, every bundle enters it once. */
    for (size_t q = 0; q < out->n; q++) {
        node_init(&from, out->bundles[q]->name, out->bundles[q]->version);
        step(c, req, &from, seen, out);
        node_free(&from);
    }
    free(seen);
    out->highest = highest(out);
    return 0;
}

bool resolve_reach_contains(const resolve_reach *r, const fbc_bundle *b)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->bundles[i] == b)
            return true;
    return false;
}

void resolve_reach_free(resolve_reach *r)
{
    free(r->bundles);
    memset(r, 0, sizeof *r);
}

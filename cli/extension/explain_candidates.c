/* explain_candidates: the resolver's filters, bundle by bundle (explain_candidates.h). */
#include <stdlib.h>
#include <string.h>

#include "explain_candidates.h"
#include "semver.h"
#include "strbuf.h"
#include "upgrade_graph.h"

static bool wanted_channel(const resolve_request *req, const char *name)
{
    for (size_t i = 0; i < req->nchannels; i++)
        if (strcmp(req->channels[i], name) == 0)
            return true;
    return req->nchannels == 0;
}

/* The edge from the installed bundle to `b` in one channel entry, or NULL. */
static const char *entry_edge(const fbc_channel_entry *e, const resolve_installed *inst,
                              const semver_version *inst_v, strbuf *why)
{
    if (e->replaces && strcmp(e->replaces, inst->bundle_name) == 0) {
        strbuf_printf(why, "replaces %s", inst->bundle_name);
        return strbuf_str(why);
    }
    for (size_t k = 0; k < e->nskips; k++)
        if (strcmp(e->skips[k], inst->bundle_name) == 0) {
            strbuf_printf(why, "skips %s", inst->bundle_name);
            return strbuf_str(why);
        }
    if (e->skip_range && *e->skip_range && inst_v) {
        semver_range *r = semver_range_parse(e->skip_range, NULL); /* unparsable: ignored, as upstream */
        bool in = r && semver_range_match(r, inst_v);
        semver_range_free(r);
        if (in) {
            strbuf_printf(why, "skipRange %s", e->skip_range);
            return strbuf_str(why);
        }
    }
    return NULL;
}

static int append_candidate(json_t *out, const char *catalog, const fbc_catalog *c, const fbc_bundle *b,
                            const resolve_request *req, const semver_constraint *range, const semver_version *inst_v,
                            const bundle_version *inst_bv)
{
    json_t *chans = json_array();
    bool in_channels = false, edge_checked = req->installed && req->policy != RESOLVE_POLICY_SELF_CERTIFIED;
    strbuf why = STRBUF_INIT;
    const char *edge = NULL;
    int rc = chans ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < c->nchannels; i++) {
        const fbc_channel *ch = &c->channels[i];
        if (strcmp(ch->package, b->package) != 0)
            continue;
        for (size_t k = 0; rc == 0 && k < ch->nentries; k++) {
            if (strcmp(ch->entries[k].name, b->name) != 0)
                continue;
            rc = json_array_append_new(chans, json_string(ch->name));
            bool considered = wanted_channel(req, ch->name);
            in_channels = in_channels || considered;
            /* Edges come only from the considered channels. */
            if (considered && edge_checked && !edge)
                edge = entry_edge(&ch->entries[k], req->installed, inst_v, &why);
        }
    }
    bundle_version bv;
    bool parsed = b->version && bundle_version_parse(b->version, &bv, NULL) == 0;
    bool in_range = !range || (parsed && semver_constraint_check(range, &bv.version));
    if (edge_checked && !edge && parsed && inst_bv && bundle_version_compare(&bv, inst_bv) == 0)
        edge = "same version";
    if (parsed)
        bundle_version_free(&bv);
    const char *dep = NULL;
    const fbc_deprecation *d = fbc_find_deprecation(c, b->package);
    for (size_t i = 0; d && i < d->nentries; i++)
        if (strcmp(d->entries[i].schema, "olm.bundle") == 0 && strcmp(d->entries[i].name, b->name) == 0)
            dep = d->entries[i].message ? d->entries[i].message : "";
    strbuf verdict = STRBUF_INIT;
    if (rc == 0 && !in_channels) {
        rc = strbuf_puts(&verdict, "not in channels [");
        for (size_t i = 0; rc == 0 && i < req->nchannels; i++)
            rc = strbuf_printf(&verdict, "%s%s", i ? " " : "", req->channels[i]);
        if (rc == 0)
            rc = strbuf_putc(&verdict, ']');
    } else if (rc == 0 && !in_range) {
        rc = strbuf_printf(&verdict, "not in range %s", req->version_range);
    } else if (rc == 0 && edge_checked && !edge) {
        rc = strbuf_printf(&verdict, "no upgrade edge from %s", req->installed->bundle_name);
    } else if (rc == 0) {
        rc = strbuf_puts(&verdict, "candidate");
    }
    json_t *o = rc == 0 ? json_pack("{s:s, s:s, s:s?, s:O, s:b, s:b, s:s?, s:s?, s:s}", "catalog", catalog, "bundle",
                                    b->name, "version", b->version, "channels", chans, "inChannels", in_channels,
                                    "inRange", in_range, "edge", edge_checked ? (edge ? edge : "") : NULL,
                                    "deprecation", dep, "verdict", strbuf_str(&verdict))
                        : NULL;
    json_decref(chans);
    strbuf_free(&why);
    strbuf_free(&verdict);
    return o ? json_array_append_new(out, o) : -1;
}

static int by_version_desc(const void *pa, const void *pb)
{
    const fbc_bundle *a = *(const fbc_bundle *const *)pa, *b = *(const fbc_bundle *const *)pb;
    int r = bundle_version_text_order(a->version, b->version);
    return r ? r : strcmp(a->name, b->name);
}

int explain_candidates(const fbc_catalog *c, const char *catalog, const resolve_request *req, json_t *out,
                       olm_error *err)
{
    semver_constraint *range = NULL;
    if (req->version_range && *req->version_range &&
        !(range = semver_constraint_parse(req->version_range, err)))
        return olm_error_wrap(err, "desired version range \"%s\" is invalid", req->version_range);
    semver_version inst_v;
    bundle_version inst_bv;
    bool have_v = req->installed && semver_parse_strict(req->installed->version, &inst_v, NULL) == 0;
    bool have_bv = req->installed && bundle_version_parse(req->installed->version, &inst_bv, NULL) == 0;
    const fbc_bundle **bs = calloc(c->nbundles ? c->nbundles : 1, sizeof *bs);
    size_t n = 0;
    int rc = bs ? 0 : olm_error_set(err, "out of memory");
    for (size_t i = 0; bs && i < c->nbundles; i++)
        if (strcmp(c->bundles[i].package, req->package) == 0)
            bs[n++] = &c->bundles[i];
    if (bs)
        qsort(bs, n, sizeof *bs, by_version_desc);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (append_candidate(out, catalog, c, bs[i], req, range, have_v ? &inst_v : NULL, have_bv ? &inst_bv : NULL) <
            0)
            rc = olm_error_set(err, "out of memory");
    free(bs);
    if (have_v)
        semver_version_free(&inst_v);
    if (have_bv)
        bundle_version_free(&inst_bv);
    semver_constraint_free(range);
    return rc;
}

/* ------------------------------------------------------------ --graph */

/* The report's verdicts as marks on the graph's nodes. */
static int mark_verdicts(upgrade_graph *g, const json_t *report, const char *const *channels, size_t nchannels)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(report, "candidates"), i, c) {
        const char *verdict = json_string_value(json_object_get(c, "verdict"));
        size_t n = upgrade_graph_find(g, json_string_value(json_object_get(c, "catalog")),
                                      json_string_value(json_object_get(c, "bundle")));
        if (n == SIZE_MAX || !verdict)
            continue;
        bool allowed = strcmp(verdict, "candidate") == 0;
        if (upgrade_graph_mark(g, n, allowed ? UG_MARK_ALLOWED : UG_MARK_OUT, allowed ? NULL : verdict) < 0)
            return -1;
    }
    const json_t *res = json_object_get(report, "resolution");
    if (json_is_true(json_object_get(res, "resolved"))) {
        size_t n = upgrade_graph_find(g, json_string_value(json_object_get(res, "catalog")),
                                      json_string_value(json_object_get(res, "bundle")));
        if (n != SIZE_MAX && upgrade_graph_mark(g, n, UG_MARK_PICKED, NULL) < 0)
            return -1;
    }
    const char *installed = json_string_value(json_object_get(json_object_get(report, "installed"), "bundle"));
    for (size_t n = 0; installed && *installed && n < g->nnodes; n++)
        if (strcmp(g->nodes[n].bundle, installed) == 0) {
            if (upgrade_graph_mark(g, n, UG_MARK_INSTALLED, NULL) < 0)
                return -1;
            upgrade_graph_mark_reachable(g, n, channels, nchannels);
        }
    return 0;
}

int explain_graph_write(const cluster_catalog_set *set, const json_t *report, const char *package,
                        const char *const *channels, size_t nchannels, const char *format, FILE *out,
                        olm_error *err)
{
    upgrade_graph g;
    upgrade_graph_init(&g);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < set->n; i++)
        if (set->items[i].fbc &&
            upgrade_graph_add_catalog(&g, set->items[i].fbc, set->items[i].name, package, NULL, 0, err) < 0)
            rc = -1;
    if (rc == 0 && g.nnodes == 0)
        rc = olm_error_set(err, "no catalog read has a bundle of package \"%s\" to draw", package);
    if (rc == 0 && mark_verdicts(&g, report, channels, nchannels) < 0)
        rc = olm_error_set(err, "out of memory");
    if (rc == 0)
        rc = upgrade_graph_write(&g, format, false, out, err);
    upgrade_graph_free(&g);
    return rc;
}

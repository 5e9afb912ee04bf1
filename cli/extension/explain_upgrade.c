/* explain_upgrade: the Upgrade section of explain (explain_upgrade.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "cluster_objects.h"
#include "explain_upgrade.h"
#include "strbuf.h"

/* The candidate row of `bundle` in `catalog`, or NULL. */
static const json_t *candidate(const json_t *cands, const char *catalog, const char *bundle)
{
    size_t i;
    const json_t *c;
    json_array_foreach(cands, i, c) {
        if (strcmp(cluster_str(c, "catalog"), catalog) == 0 && strcmp(cluster_str(c, "bundle"), bundle) == 0)
            return c;
    }
    return NULL;
}

/* The channels of candidate `c` the request considers (all of them when it names none). */
static json_t *considered_channels(const json_t *c, const resolve_request *req)
{
    json_t *out = json_array();
    size_t i;
    const json_t *ch;
    json_array_foreach(json_object_get(c, "channels"), i, ch) {
        bool wanted = req->nchannels == 0;
        for (size_t k = 0; k < req->nchannels && !wanted; k++)
            wanted = strcmp(req->channels[k], json_string_value(ch)) == 0;
        if (out && wanted && json_array_append(out, (json_t *)ch) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static json_t *next_json(const extension_outlook *o, const resolve_request *req, const json_t *cands)
{
    if (!o->moves)
        return json_null();
    const json_t *c = candidate(cands, o->next_catalog, o->next_bundle);
    const char *edge = json_string_value(json_object_get(c, "edge"));
    json_t *chans = considered_channels(c, req);
    return chans ? json_pack("{s:s, s:s, s:s, s:o, s:s?}", "bundle", o->next_bundle, "version", o->next_version,
                             "catalog", o->next_catalog, "channels", chans, "edge", edge && *edge ? edge : NULL)
                 : NULL;
}

/* "would upgrade to 1.13.0 (channel stable, replaces p.v1.12.0)", "stays at 1.12.0: why", ... */
static void summary(const char *range, const resolve_installed *inst, const extension_outlook *o, const json_t *next,
                    strbuf *sb)
{
    if (!o->resolved) {
        strbuf_puts(sb, "none: the resolver finds nothing to install (see Verdict)");
        return;
    }
    if (o->moves) {
        char *chans = cluster_join_strings(json_object_get(next, "channels"), ", ");
        const char *edge = cluster_str(next, "edge");
        strbuf_printf(sb, "would %s %s (catalog %s, channel%s %s%s%s)", inst ? "upgrade to" : "install",
                      o->next_version, o->next_catalog, json_array_size(json_object_get(next, "channels")) > 1 ? "s" : "",
                      chans ? chans : "?", *edge ? ", " : "", edge);
        free(chans);
        return;
    }
    strbuf_printf(sb, "stays at %s: ", inst->version);
    if (o->reach_version && !o->reach_in_range)
        strbuf_printf(sb, "the newest your version range \"%s\" allows", range);
    else if (!o->reach_version)
        strbuf_puts(sb, "no upgrade edge leads further from it in its channels");
    else
        strbuf_puts(sb, "no successor of it is in the channels and range");
}

/* "1.14.0 (outside the version range ...: widen it with olmv1 upgrade extension ...)". */
static void reachable(const char *name, const char *range, const resolve_installed *inst, const extension_outlook *o,
                      strbuf *sb)
{
    if (!inst)
        strbuf_puts(sb, "none yet: upgrade edges start from the installed bundle");
    else if (!o->reach_version)
        strbuf_printf(sb, "none: no upgrade edge (replaces, skips, skipRange) leads from %s", inst->bundle_name);
    else if (o->reach_in_range)
        strbuf_printf(sb, "%s (%s, within the version range)", o->reach_version, o->reach_bundle);
    else
        strbuf_printf(sb, "%s (%s, outside the version range \"%s\": widen it with olmv1 upgrade extension %s "
                          "--version '>=%s, <=%s')",
                      o->reach_version, o->reach_bundle, range, name, inst->version, o->reach_version);
}

json_t *explain_upgrade_json(const char *name, const resolve_request *req, const extension_outlook *o,
                             const json_t *cands)
{
    const char *range = req->version_range ? req->version_range : "";
    const resolve_installed *inst = req->installed;
    json_t *next = next_json(o, req, cands);
    json_t *reach = o->reach_version ? json_pack("{s:s, s:s, s:s, s:b}", "bundle", o->reach_bundle, "version",
                                                 o->reach_version, "catalog", o->reach_catalog, "inRange",
                                                 o->reach_in_range)
                                     : json_null();
    strbuf sum = STRBUF_INIT, rea = STRBUF_INIT;
    if (next)
        summary(range, inst, o, next, &sum);
    reachable(name, range, inst, o, &rea);
    json_t *out = next && reach ? json_pack("{s:s?, s:O, s:O, s:s, s:s}", "installed", inst ? inst->version : NULL,
                                            "next", next, "highestReachable", reach, "summary", strbuf_str(&sum),
                                            "reachable", strbuf_str(&rea))
                                : NULL;
    json_decref(next);
    json_decref(reach);
    strbuf_free(&sum);
    strbuf_free(&rea);
    return out;
}

void explain_upgrade_print(const json_t *upgrade, FILE *out)
{
    if (!upgrade)
        return;
    fprintf(out, "\nUpgrade: %s\n", cluster_str(upgrade, "summary"));
    fprintf(out, "Highest reachable by upgrade edges: %s\n", cluster_str(upgrade, "reachable"));
}

int explain_upgrade_add(json_t *report, const char *name, const resolve_request *req, const cluster_resolution *res,
                        olm_error *err)
{
    if (!res->view)
        return 0; /* the catalogs were not read: nothing to say */
    extension_outlook o;
    if (extension_outlook_compute(req, res->view, res->set.n, &o, err) < 0)
        return CLI_EXIT_FAILED;
    json_t *up = explain_upgrade_json(name, req, &o, json_object_get(report, "candidates"));
    extension_outlook_free(&o);
    if (!up || json_object_set_new(report, "upgrade", up) < 0)
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    return 0;
}

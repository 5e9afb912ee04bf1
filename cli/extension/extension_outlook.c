/* extension_outlook: the resolver's pick and the reach of the upgrade edges
 * (extension_outlook.h). */
#include <stdlib.h>
#include <string.h>

#include "extension_outlook.h"
#include "semver.h"

static char *dup_or_null(const char *s, bool *oom)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *oom = true;
    return d;
}

static int next_of(const resolve_request *req, const resolve_catalog *cats, size_t ncats, extension_outlook *out)
{
    resolve_result res;
    olm_error rerr;
    bool oom = false;
    if (resolve_bundle(req, cats, ncats, &res, NULL, &rerr) < 0) {
        out->error = dup_or_null(rerr.msg, &oom);
        return oom ? -1 : 0;
    }
    out->resolved = true;
    out->moves = !req->installed || strcmp(req->installed->bundle_name, res.bundle->name) != 0;
    out->next_bundle = dup_or_null(res.bundle->name, &oom);
    out->next_catalog = dup_or_null(res.catalog->name, &oom);
    out->next_version = bundle_version_format(&res.version);
    oom = oom || !out->next_version;
    resolve_result_free(&res);
    return oom ? -1 : 0;
}

/* True when `b`'s version is above `best`'s (a readable version beats none). */
static bool higher(const fbc_bundle *b, const fbc_bundle *best)
{
    bundle_version vb, vbest;
    if (!b->version || bundle_version_parse(b->version, &vb, NULL) < 0)
        return false;
    bool win = !best || !best->version || bundle_version_parse(best->version, &vbest, NULL) < 0;
    if (!win) {
        win = bundle_version_compare(&vb, &vbest) > 0;
        bundle_version_free(&vbest);
    }
    bundle_version_free(&vb);
    return win;
}

static bool in_range(const char *range_text, const char *version)
{
    if (!range_text || !*range_text)
        return true;
    semver_constraint *range = semver_constraint_parse(range_text, NULL);
    bundle_version v;
    bool ok = false;
    if (range && version && bundle_version_parse(version, &v, NULL) == 0) {
        /* The release is not part of what the range sees, as in the resolver. */
        ok = semver_constraint_check(range, &v.version);
        bundle_version_free(&v);
    }
    semver_constraint_free(range);
    return ok;
}

static int reach_of(const resolve_request *req, const resolve_catalog *cats, size_t ncats, extension_outlook *out,
                    olm_error *err)
{
    const fbc_bundle *best = NULL;
    const char *best_catalog = NULL;
    for (size_t i = 0; req->installed && i < ncats; i++) {
        if (cats[i].unavailable || cats[i].fetch_error || !cats[i].fbc)
            continue;
        resolve_reach r;
        if (resolve_reachable(cats[i].fbc, req, &r, err) < 0)
            return -1;
        if (r.highest && higher(r.highest, best)) {
            best = r.highest;
            best_catalog = cats[i].name;
        }
        resolve_reach_free(&r);
    }
    if (!best)
        return 0;
    bool oom = false;
    out->reach_bundle = dup_or_null(best->name, &oom);
    out->reach_version = dup_or_null(best->version, &oom);
    out->reach_catalog = dup_or_null(best_catalog, &oom);
    out->reach_in_range = in_range(req->version_range, best->version);
    return oom ? olm_error_set(err, "out of memory") : 0;
}

int extension_outlook_compute(const resolve_request *req, const resolve_catalog *cats, size_t ncats,
                              extension_outlook *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    if (next_of(req, cats, ncats, out) < 0 || reach_of(req, cats, ncats, out, err) < 0) {
        extension_outlook_free(out);
        return olm_error_set(err, "out of memory");
    }
    return 0;
}

void extension_outlook_free(extension_outlook *o)
{
    free(o->next_bundle);
    free(o->next_version);
    free(o->next_catalog);
    free(o->error);
    free(o->reach_bundle);
    free(o->reach_version);
    free(o->reach_catalog);
    memset(o, 0, sizeof *o);
}

const char *extension_outlook_next_cell(const extension_outlook *o)
{
    return o->moves ? o->next_version : "-";
}

const char *extension_outlook_reach_cell(const extension_outlook *o)
{
    return o->reach_version ? o->reach_version : "-";
}

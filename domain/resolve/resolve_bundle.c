/* The resolver: per catalog filter (channels, version range, successors), sort
 * (non-deprecated first, highest VersionRelease first), then choose across catalogs
 * (deprecation beats priority, priority breaks ties).  olmv1-behaviour.md §3. */
#include "resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semver.h"

/* A bundle of the requested package in one catalog, with its parsed version. */
typedef struct candidate {
    const fbc_bundle *bundle;
    bundle_version version;
    int version_ok;  /* 0 when the version could not be read: sorts last */
    int deprecated;
} candidate;

/* The winner of one catalog, kept while walking the catalogs. */
typedef struct found {
    const resolve_catalog *catalog;
    const fbc_bundle *bundle;
    const fbc_deprecation *deprecation;
    int deprecated;
} found;

/* What the walk needs that is the same for every catalog. */
typedef struct walk_ctx {
    const resolve_request *req;
    const semver_constraint *range; /* NULL when no version range */
    int check_successors;
    bundle_version installed;       /* valid when check_successors */
    semver_version installed_blang; /* the installed version as blang parses it (skipRange) */
    strbuf *explain;
} walk_ctx;

#define EXPLAIN(ctx, ...)                                   \
    do {                                                    \
        if ((ctx)->explain)                                 \
            strbuf_printf((ctx)->explain, __VA_ARGS__);     \
    } while (0)

bool resolve_bundle_is_deprecated(const fbc_deprecation *dep, const char *bundle_name)
{
    if (!dep)
        return false;
    for (size_t i = 0; i < dep->nentries; i++)
        if (strcmp(dep->entries[i].schema, "olm.bundle") == 0 &&
            strcmp(dep->entries[i].name, bundle_name) == 0)
            return true;
    return false;
}

static int channel_requested(const resolve_request *req, const char *channel)
{
    for (size_t i = 0; i < req->nchannels; i++)
        if (strcmp(req->channels[i], channel) == 0)
            return 1;
    return 0;
}

/* The channels whose entries count for this request: the requested ones, or all
 * channels of the package when none were requested.  Upgrade edges come only from
 * these channels (§3.2.1). */
static int channel_considered(const walk_ctx *ctx, const fbc_channel *ch)
{
    if (strcmp(ch->package, ctx->req->package) != 0)
        return 0;
    return ctx->req->nchannels == 0 || channel_requested(ctx->req, ch->name);
}

static int in_considered_channel(const walk_ctx *ctx, const fbc_catalog *fbc, const char *bundle)
{
    for (size_t c = 0; c < fbc->nchannels; c++) {
        const fbc_channel *ch = &fbc->channels[c];
        if (!channel_considered(ctx, ch))
            continue;
        for (size_t e = 0; e < ch->nentries; e++)
            if (strcmp(ch->entries[e].name, bundle) == 0)
                return 1;
    }
    return 0;
}

/* Legacy successor edge: the entry replaces or skips the installed bundle, or its
 * skipRange (blang syntax; unparsable ranges are ignored, as upstream does) covers
 * the installed version. */
static int entry_is_successor(const walk_ctx *ctx, const fbc_channel_entry *e)
{
    const char *installed_name = ctx->req->installed->bundle_name;
    if (e->replaces && strcmp(e->replaces, installed_name) == 0)
        return 1;
    for (size_t i = 0; i < e->nskips; i++)
        if (strcmp(e->skips[i], installed_name) == 0)
            return 1;
    if (e->skip_range && e->skip_range[0]) {
        semver_range *r = semver_range_parse(e->skip_range, NULL);
        if (r) {
            int ok = semver_range_match(r, &ctx->installed_blang);
            semver_range_free(r);
            if (ok)
                return 1;
        }
    }
    return 0;
}

static int is_successor(const walk_ctx *ctx, const fbc_catalog *fbc, const candidate *cand)
{
    /* "Stay put": the installed VersionRelease itself is always acceptable. */
    if (cand->version_ok && bundle_version_compare(&cand->version, &ctx->installed) == 0)
        return 1;
    for (size_t c = 0; c < fbc->nchannels; c++) {
        const fbc_channel *ch = &fbc->channels[c];
        if (!channel_considered(ctx, ch))
            continue;
        for (size_t e = 0; e < ch->nentries; e++)
            if (strcmp(ch->entries[e].name, cand->bundle->name) == 0 &&
                entry_is_successor(ctx, &ch->entries[e]))
                return 1;
    }
    return 0;
}

static int in_version_range(const walk_ctx *ctx, const candidate *cand)
{
    if (!cand->version_ok)
        return 0;
    /* The release is not part of the version the range sees (§3.2.2). */
    return semver_constraint_check(ctx->range, &cand->version.version);
}

/* Sort order inside a catalog: non-deprecated first, then descending
 * VersionRelease, unreadable versions last.  Ties keep catalog order (stable). */
static int candidate_order(const candidate *a, const candidate *b)
{
    if (a->deprecated != b->deprecated)
        return a->deprecated ? 1 : -1;
    if (a->version_ok != b->version_ok)
        return a->version_ok ? -1 : 1;
    if (!a->version_ok)
        return 0;
    return -bundle_version_compare(&a->version, &b->version);
}

/* Stable insertion sort: per-package candidate lists are small (tens to hundreds). */
static void sort_candidates(candidate *c, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        candidate tmp = c[i];
        size_t j = i;
        while (j > 0 && candidate_order(&tmp, &c[j - 1]) < 0) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = tmp;
    }
}

static void free_candidates(candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].version_ok)
            bundle_version_free(&c[i].version);
    free(c);
}

/* Keeps the elements of c[0..*n) for which keep() is true, freeing the rest; returns
 * how many were removed. */
static size_t filter_candidates(const walk_ctx *ctx, const fbc_catalog *fbc, candidate *c, size_t *n,
                                int (*keep)(const walk_ctx *, const fbc_catalog *, const candidate *))
{
    size_t out = 0, before = *n;
    for (size_t i = 0; i < before; i++) {
        if (keep(ctx, fbc, &c[i])) {
            c[out++] = c[i];
        } else if (c[i].version_ok) {
            bundle_version_free(&c[i].version);
        }
    }
    *n = out;
    return before - out;
}

static int keep_in_channel(const walk_ctx *ctx, const fbc_catalog *fbc, const candidate *cand)
{
    return in_considered_channel(ctx, fbc, cand->bundle->name);
}

static int keep_in_range(const walk_ctx *ctx, const fbc_catalog *fbc, const candidate *cand)
{
    (void)fbc;
    return in_version_range(ctx, cand);
}

static int keep_successor(const walk_ctx *ctx, const fbc_catalog *fbc, const candidate *cand)
{
    return is_successor(ctx, fbc, cand);
}

static void explain_filter(const walk_ctx *ctx, const char *what, size_t kept, size_t removed)
{
    EXPLAIN(ctx, "  %s: %zu kept, %zu removed\n", what, kept, removed);
}

static void explain_channels(const walk_ctx *ctx, strbuf *sb)
{
    strbuf_putc(sb, '[');
    for (size_t i = 0; i < ctx->req->nchannels; i++) {
        if (i)
            strbuf_putc(sb, ' ');
        strbuf_puts(sb, ctx->req->channels[i]);
    }
    strbuf_putc(sb, ']');
}

/* Filters and sorts one catalog's bundles of the package.  On success *best is the
 * catalog's candidate or NULL when none survives.  Returns -1 on out of memory. */
static int walk_catalog(const walk_ctx *ctx, const resolve_catalog *cat, found *best, olm_error *err)
{
    const fbc_catalog *fbc = cat->fbc;
    const char *pkg = ctx->req->package;
    best->bundle = NULL;

    size_t total = 0;
    for (size_t i = 0; i < fbc->nbundles; i++)
        if (strcmp(fbc->bundles[i].package, pkg) == 0)
            total++;
    if (total == 0) {
        EXPLAIN(ctx, "catalog \"%s\" (priority %d): package \"%s\" not found\n", cat->name, (int)cat->priority, pkg);
        return 0;
    }
    EXPLAIN(ctx, "catalog \"%s\" (priority %d): %zu bundles of package \"%s\"\n", cat->name,
            (int)cat->priority, total, pkg);

    const fbc_deprecation *dep = fbc_find_deprecation(fbc, pkg);
    candidate *cands = calloc(total, sizeof *cands);
    if (!cands)
        return olm_error_set(err, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < fbc->nbundles; i++) {
        const fbc_bundle *b = &fbc->bundles[i];
        if (strcmp(b->package, pkg) != 0)
            continue;
        candidate *c = &cands[n++];
        c->bundle = b;
        c->version_ok = b->version && bundle_version_parse(b->version, &c->version, NULL) == 0;
        c->deprecated = resolve_bundle_is_deprecated(dep, b->name);
    }

    size_t removed;
    if (ctx->req->nchannels > 0) {
        removed = filter_candidates(ctx, fbc, cands, &n, keep_in_channel);
        strbuf label = STRBUF_INIT;
        strbuf_puts(&label, "in channels ");
        explain_channels(ctx, &label);
        explain_filter(ctx, strbuf_str(&label), n, removed);
        strbuf_free(&label);
    }
    if (ctx->range) {
        removed = filter_candidates(ctx, fbc, cands, &n, keep_in_range);
        if (ctx->explain) {
            char what[256];
            snprintf(what, sizeof what, "matching version \"%s\"", ctx->req->version_range);
            explain_filter(ctx, what, n, removed);
        }
    }
    if (ctx->check_successors) {
        removed = filter_candidates(ctx, fbc, cands, &n, keep_successor);
        if (ctx->explain) {
            char what[512];
            snprintf(what, sizeof what, "successors of installed \"%s\" (%s)",
                     ctx->req->installed->bundle_name, ctx->req->installed->version);
            explain_filter(ctx, what, n, removed);
        }
    }
    if (n == 0) {
        EXPLAIN(ctx, "  no candidate\n");
        free(cands);
        return 0;
    }

    sort_candidates(cands, n);
    if (ctx->explain) {
        strbuf_puts(ctx->explain, "  candidates, best first:");
        for (size_t i = 0; i < n && i < 10; i++)
            strbuf_printf(ctx->explain, "%s %s (%s%s)", i ? "," : "", cands[i].bundle->name,
                          cands[i].bundle->version ? cands[i].bundle->version : "no version",
                          cands[i].deprecated ? ", deprecated" : "");
        strbuf_puts(ctx->explain, n > 10 ? ", ...\n" : "\n");
    }
    best->catalog = cat;
    best->bundle = cands[0].bundle;
    best->deprecation = dep;
    best->deprecated = cands[0].deprecated;
    free_candidates(cands, n);
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int compare_catalog_by_name(const void *a, const void *b)
{
    const resolve_catalog *x = *(const resolve_catalog *const *)a;
    const resolve_catalog *y = *(const resolve_catalog *const *)b;
    return strcmp(x->name, y->name);
}

/* The resolutionError message of §3.3. */
static int resolution_error(const resolve_request *req, const found *founds, size_t nfound, olm_error *err)
{
    strbuf sb = STRBUF_INIT;
    if (req->installed)
        strbuf_printf(&sb, "error upgrading from currently installed version \"%s\": ", req->installed->version);
    strbuf_printf(&sb, "%s for package \"%s\" ", nfound > 1 ? "found bundles" : "no bundles found", req->package);
    if (req->version_range && req->version_range[0])
        strbuf_printf(&sb, "matching version \"%s\" ", req->version_range);
    if (req->nchannels > 0) {
        strbuf_puts(&sb, "in channels [");
        for (size_t i = 0; i < req->nchannels; i++)
            strbuf_printf(&sb, "%s%s", i ? " " : "", req->channels[i]);
        strbuf_puts(&sb, "] ");
    }
    if (nfound > 1) {
        const char **names = calloc(nfound, sizeof *names);
        if (!names) {
            strbuf_free(&sb);
            return olm_error_set(err, "out of memory");
        }
        for (size_t i = 0; i < nfound; i++)
            names[i] = founds[i].catalog->name;
        qsort(names, nfound, sizeof *names, compare_names);
        strbuf_puts(&sb, "in multiple catalogs with the same priority [");
        for (size_t i = 0; i < nfound; i++)
            strbuf_printf(&sb, "%s%s", i ? " " : "", names[i]);
        strbuf_puts(&sb, "] ");
        free(names);
    }
    /* TrimSpace */
    while (sb.len > 0 && sb.data[sb.len - 1] == ' ')
        sb.data[--sb.len] = '\0';
    olm_error_set(err, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    return -1;
}

/* Upstream rejects bundles that declare dependencies: there is no dependency
 * resolution in OLM v1. */
static int validate_no_dependencies(const fbc_bundle *b, olm_error *err)
{
    static const char *const unsupported[] = {"olm.package.required", "olm.gvk.required", "olm.constraint"};
    for (size_t i = 0; i < b->nproperties; i++)
        for (size_t u = 0; u < sizeof unsupported / sizeof unsupported[0]; u++)
            if (strcmp(b->properties[i].type, unsupported[u]) == 0)
                return olm_error_set(err,
                                     "validating bundle \"%s\": bundle \"%s\" has a dependency declared via "
                                     "property \"%s\" which is currently not supported",
                                     b->name, b->name, unsupported[u]);
    return 0;
}

static int compare_found_by_priority_desc(const void *a, const void *b)
{
    const found *x = a, *y = b;
    return (x->catalog->priority < y->catalog->priority) - (x->catalog->priority > y->catalog->priority);
}

/* Walks the catalogs in name order (the order a Kubernetes List returns) and
 * collects each catalog's best bundle, applying "deprecation beats priority". */
static int walk_catalogs(walk_ctx *ctx, const resolve_catalog *catalogs, size_t ncatalogs, found *founds,
                         size_t *nfound, olm_error *err)
{
    const resolve_catalog **order = calloc(ncatalogs ? ncatalogs : 1, sizeof *order);
    if (!order)
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < ncatalogs; i++)
        order[i] = &catalogs[i];
    qsort(order, ncatalogs, sizeof *order, compare_catalog_by_name);

    int rc = 0;
    for (size_t i = 0; i < ncatalogs && rc == 0; i++) {
        const resolve_catalog *cat = order[i];
        if (cat->unavailable) {
            EXPLAIN(ctx, "catalog \"%s\": skipped, availabilityMode is Unavailable\n", cat->name);
            continue;
        }
        if (cat->fetch_error || !cat->fbc) {
            rc = olm_error_set(err, "error walking catalogs: error getting package \"%s\" from catalog \"%s\": %s",
                               ctx->req->package, cat->name,
                               cat->fetch_error ? cat->fetch_error : "catalog content unavailable");
            break;
        }
        found best;
        if (walk_catalog(ctx, cat, &best, err) < 0) {
            rc = -1;
            break;
        }
        if (!best.bundle)
            continue;
        if (*nfound > 0) {
            int prior_deprecated = founds[*nfound - 1].deprecated;
            if (best.deprecated && !prior_deprecated) {
                EXPLAIN(ctx, "  \"%s\" is deprecated and a non-deprecated candidate exists: ignored\n",
                        best.bundle->name);
                continue;
            }
            if (!best.deprecated && prior_deprecated) {
                EXPLAIN(ctx, "  \"%s\" is not deprecated: earlier deprecated candidates dropped\n",
                        best.bundle->name);
                *nfound = 0;
            }
        }
        founds[(*nfound)++] = best;
    }
    free(order);
    return rc;
}

int resolve_bundle(const resolve_request *req, const resolve_catalog *catalogs, size_t ncatalogs,
                   resolve_result *out, strbuf *explain, olm_error *err)
{
    memset(out, 0, sizeof *out);
    walk_ctx ctx = {.req = req, .explain = explain};
    semver_constraint *range = NULL;
    int rc = -1;
    found *founds = NULL;

    if (req->version_range && req->version_range[0]) {
        olm_error perr;
        range = semver_constraint_parse(req->version_range, &perr);
        if (!range)
            return olm_error_set(err, "desired version range \"%s\" is invalid: %s", req->version_range, perr.msg);
        ctx.range = range;
    }

    if (req->installed && req->policy != RESOLVE_POLICY_SELF_CERTIFIED) {
        olm_error perr;
        if (bundle_version_parse(req->installed->version, &ctx.installed, &perr) < 0) {
            /* Upstream sets up the successor filter per catalog, inside the walk. */
            int any = 0;
            for (size_t i = 0; i < ncatalogs; i++)
                any |= !catalogs[i].unavailable;
            if (any) {
                olm_error_set(err, "error walking catalogs: error finding upgrade edges: %s", perr.msg);
                goto done;
            }
        } else if (semver_parse_strict(req->installed->version, &ctx.installed_blang, &perr) < 0) {
            bundle_version_free(&ctx.installed);
            olm_error_set(err, "error walking catalogs: error finding upgrade edges: %s", perr.msg);
            goto done;
        } else {
            ctx.check_successors = 1;
        }
    }

    founds = calloc(ncatalogs ? ncatalogs : 1, sizeof *founds);
    if (!founds) {
        olm_error_set(err, "out of memory");
        goto done;
    }
    size_t nfound = 0;
    if (walk_catalogs(&ctx, catalogs, ncatalogs, founds, &nfound, err) < 0)
        goto done;

    if (nfound > 1) {
        /* Highest priority first; if the top two differ, priority breaks the tie.
         * Otherwise every candidate stays, lower priorities included (upstream). */
        qsort(founds, nfound, sizeof *founds, compare_found_by_priority_desc);
        if (founds[0].catalog->priority != founds[1].catalog->priority) {
            EXPLAIN(&ctx, "priority: catalog \"%s\" (%d) outranks the others\n", founds[0].catalog->name,
                    (int)founds[0].catalog->priority);
            nfound = 1;
        }
    }
    if (nfound != 1) {
        resolution_error(req, founds, nfound, err);
        goto done;
    }

    const fbc_bundle *chosen = founds[0].bundle;
    olm_error verr;
    if (!chosen->version) {
        olm_error_set(err, "error getting resolved bundle version for bundle \"%s\": no package property found in bundle \"%s\"",
                      chosen->name, chosen->name);
        goto done;
    }
    if (bundle_version_parse(chosen->version, &out->version, &verr) < 0) {
        olm_error_set(err, "error getting resolved bundle version for bundle \"%s\": %s", chosen->name, verr.msg);
        goto done;
    }
    if (validate_no_dependencies(chosen, err) < 0) {
        bundle_version_free(&out->version);
        goto done;
    }
    out->bundle = chosen;
    out->catalog = founds[0].catalog;
    out->deprecation = founds[0].deprecation;
    EXPLAIN(&ctx, "resolved: %s %s from catalog \"%s\"\n", chosen->name, chosen->version, out->catalog->name);
    rc = 0;

done:
    if (ctx.check_successors) {
        bundle_version_free(&ctx.installed);
        semver_version_free(&ctx.installed_blang);
    }
    semver_constraint_free(range);
    free(founds);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    return rc;
}

void resolve_result_free(resolve_result *r)
{
    if (r && r->bundle) {
        bundle_version_free(&r->version);
        r->bundle = NULL;
    }
}

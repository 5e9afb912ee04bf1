/* upgradeable: the incompatible-operator check of cluster-olm-operator HEAD and
 * library-go's Upgradeable merge (openshift-upgradeable.md §2, §3, §5).
 * Value parsing and Go's error texts live in upgradeable_version.c and
 * upgradeable_json.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"
#include "semver.h"
#include "upgradeable.h"
#include "upgradeable_internal.h"

/* How an extension's max is compared (§3). */
typedef struct check_mode {
    bool target;     /* --to: block when norm(max) < norm(limit) */
    upgradeable_minor limit; /* cluster mode: the effective current version; block when max <= limit */
} check_mode;

static int minor_cmp(upgradeable_minor a, upgradeable_minor b)
{
    if (a.major != b.major)
        return a.major < b.major ? -1 : 1;
    return a.minor < b.minor ? -1 : a.minor > b.minor;
}

/* OCP 4.23 and 5.0 are the same release under two names; both upgrade only to 5.1. */
static upgradeable_minor ocp_normalise(upgradeable_minor v)
{
    if (v.major == 4 && v.minor == 23)
        return (upgradeable_minor){5, 0};
    return v;
}

static bool blocks(const check_mode *m, upgradeable_minor max)
{
    if (m->target)
        return minor_cmp(ocp_normalise(max), ocp_normalise(m->limit)) < 0;
    return minor_cmp(max, m->limit) <= 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int add_line(strbuf *sb, const char *line)
{
    if (sb->len && strbuf_putc(sb, '\n') < 0)
        return -1;
    return strbuf_puts(sb, line);
}

/* `bundle "<bundle>" for ClusterExtension "<ce>"`, both Go-%q quoted. */
static char *entry_text(const upgradeable_extension *e)
{
    strbuf sb = STRBUF_INIT;
    const char *b = e->bundle ? e->bundle : "", *n = e->name ? e->name : "";
    if (strbuf_puts(&sb, "bundle ") < 0 || gocompat_quote(&sb, b, strlen(b), 0) < 0 ||
        strbuf_puts(&sb, " for ClusterExtension ") < 0 || gocompat_quote(&sb, n, strlen(n), 0) < 0) {
        strbuf_free(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* Walks one extension's properties (§2 steps b-e).  Fills the verdict and, for
 * an incompatible extension, *entry.  Returns -1 only when out of memory. */
static int check_one(const upgradeable_extension *e, const check_mode *m, upgradeable_verdict *v, char **entry)
{
    const char *ce = e->name ? e->name : "", *bundle = e->bundle ? e->bundle : "";
    strbuf err = STRBUF_INIT, why = STRBUF_INIT;
    upgradeable_prop_list props = {0};
    int rc = 0;
    v->kind = UPGRADEABLE_NO_PROPERTY;

    if (e->lookup_failed) {
        rc = strbuf_printf(&err, "error returning the last deployed release for %s", ce);
        goto done;
    }
    if (!e->properties)
        goto done;
    size_t len = e->properties_len ? e->properties_len : strlen(e->properties);
    int d = upgradeable_json_decode_props(e->properties, len, &props, &why);
    if (d == -2) {
        rc = -1;
        goto done;
    }
    if (d < 0) {
        rc = strbuf_printf(&err,
                           "error with cluster extension %s: error in bundle %s: could not convert olm.properties: "
                           "failed to unmarshal properties annotation: %s",
                           ce, bundle, strbuf_str(&why));
        goto done;
    }

    strbuf errs = STRBUF_INIT;
    bool incompatible = false;
    size_t count = 0;
    for (size_t i = 0; rc == 0 && i < props.n; i++) {
        const upgradeable_prop *p = &props.items[i];
        if (p->type_len != strlen(UPGRADEABLE_MAX_OCP_PROPERTY) || strcmp(p->type, UPGRADEABLE_MAX_OCP_PROPERTY) != 0)
            continue;
        if (++count > 1) {
            rc = add_line(&errs, "more than one " UPGRADEABLE_MAX_OCP_PROPERTY " found in bundle");
            break;
        }
        upgradeable_minor max;
        strbuf_reset(&why);
        int pr = upgradeable_parse_max_version(p->value, p->value_len, &max, &why);
        if (pr == -2) {
            rc = -1;
        } else if (pr < 0) {
            if (errs.len)
                rc = strbuf_putc(&errs, '\n');
            if (rc == 0)
                rc = strbuf_puts(&errs, "error converting to semver for version ");
            if (rc == 0 && p->value)
                rc = strbuf_append(&errs, p->value, p->value_len);
            if (rc == 0)
                rc = strbuf_printf(&errs, ": %s", strbuf_str(&why));
        } else {
            snprintf(v->max, sizeof v->max, "%llu.%llu", (unsigned long long)max.major,
                     (unsigned long long)max.minor);
            incompatible = blocks(m, max);
        }
    }
    if (rc == 0 && errs.len)
        rc = strbuf_printf(&err, "error(s) with cluster extension %s: error in bundle %s: %s", ce, bundle,
                           strbuf_str(&errs));
    else if (rc == 0 && count)
        v->kind = incompatible ? UPGRADEABLE_INCOMPATIBLE : UPGRADEABLE_COMPATIBLE;
    strbuf_free(&errs);
    if (rc == 0 && v->kind == UPGRADEABLE_INCOMPATIBLE && !(*entry = entry_text(e)))
        rc = -1;

done:
    if (rc == 0 && err.len) {
        v->kind = UPGRADEABLE_ERROR;
        v->error = strbuf_detach(&err);
        if (!v->error)
            rc = -1;
    }
    strbuf_free(&err);
    strbuf_free(&why);
    upgradeable_prop_list_free(&props);
    return rc < 0 ? -1 : 0;
}

static int set_cond(upgradeable_condition *c, const char *type, const char *status, const char *reason,
                    const char *message)
{
    c->type = type;
    c->status = status;
    c->reason = strdup(reason);
    c->message = strdup(message);
    return c->reason && c->message ? 0 : -1;
}

/* library-go's Upgradeable merge over our single *Upgradeable condition: the
 * reason is "<type minus Upgradeable>_<reason>", every distinct message line is
 * prefixed with the full type. */
static int merge_upgradeable(upgradeable_result *r)
{
    const upgradeable_condition *c = &r->intermediate;
    if (strcmp(c->status, "True") == 0)
        return set_cond(&r->upgradeable, "Upgradeable", "True", "AsExpected", "All is well");
    strbuf reason = STRBUF_INIT, msg = STRBUF_INIT;
    size_t prefix = strlen(c->type) - strlen("Upgradeable");
    int rc = strbuf_printf(&reason, "%.*s_%s", (int)prefix, c->type, c->reason);
    const char *line = c->message;
    while (rc == 0 && *c->message) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        /* Drop a line already seen in this message (library-go's uniq). */
        bool dup = false;
        for (const char *p = c->message; p < line && !dup;) {
            const char *pnl = strchr(p, '\n');
            size_t pn = (size_t)(pnl - p);
            dup = pn == n && memcmp(p, line, n) == 0;
            p = pnl + 1;
        }
        if (!dup) {
            if (msg.len)
                rc = strbuf_putc(&msg, '\n');
            if (rc == 0)
                rc = strbuf_printf(&msg, "%s: %.*s", c->type, (int)n, line);
        }
        if (!nl)
            break;
        line = nl + 1;
    }
    if (rc == 0)
        rc = set_cond(&r->upgradeable, "Upgradeable", c->status, strbuf_str(&reason), strbuf_str(&msg));
    strbuf_free(&reason);
    strbuf_free(&msg);
    return rc;
}

/* §5: the intermediate condition, the Degraded condition of a failed sync, and the merge. */
static int build_conditions(upgradeable_result *r)
{
    int rc;
    if (r->nincompatible) {
        strbuf msg = STRBUF_INIT;
        rc = strbuf_printf(&msg, "Found ClusterExtensions that require upgrades prior to upgrading cluster to version %s: ",
                           r->next);
        for (size_t i = 0; rc == 0 && i < r->nincompatible; i++)
            rc = strbuf_printf(&msg, "%s%s", i ? "," : "", r->incompatible[i]);
        if (rc == 0)
            rc = strbuf_putc(&msg, '.');
        if (rc == 0 && r->errors)
            rc = strbuf_printf(&msg, "\n Additionally the following errors were encountered while getting extension metadata: %s",
                               r->errors);
        if (rc == 0)
            rc = set_cond(&r->intermediate, UPGRADEABLE_INTERMEDIATE_TYPE, "False", "IncompatibleOperatorsInstalled",
                          strbuf_str(&msg));
        strbuf_free(&msg);
    } else if (r->errors) {
        rc = set_cond(&r->intermediate, UPGRADEABLE_INTERMEDIATE_TYPE, "False", "FailureGettingExtensionMetadata",
                      r->errors);
    } else {
        rc = set_cond(&r->intermediate, UPGRADEABLE_INTERMEDIATE_TYPE, "True", "", "");
    }
    if (rc == 0)
        rc = r->errors ? set_cond(&r->degraded, UPGRADEABLE_DEGRADED_TYPE, "True", "SyncError", r->errors)
                       : set_cond(&r->degraded, UPGRADEABLE_DEGRADED_TYPE, "False", "AsExpected", "");
    if (rc == 0)
        rc = merge_upgradeable(r);
    return rc;
}

static int run(const upgradeable_extension *exts, size_t n, const check_mode *m, upgradeable_result *r)
{
    strbuf errors = STRBUF_INIT;
    int rc = 0;
    if (n) {
        r->verdicts = calloc(n, sizeof *r->verdicts);
        r->incompatible = calloc(n, sizeof *r->incompatible);
        if (!r->verdicts || !r->incompatible)
            rc = -1;
    }
    r->nverdicts = r->verdicts ? n : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *entry = NULL;
        rc = check_one(&exts[i], m, &r->verdicts[i], &entry);
        if (entry)
            r->incompatible[r->nincompatible++] = entry;
        if (rc == 0 && r->verdicts[i].error)
            rc = add_line(&errors, r->verdicts[i].error);
    }
    /* Sorted as plain strings, so by bundle name first (§2 step 3). */
    if (r->nincompatible)
        qsort(r->incompatible, r->nincompatible, sizeof *r->incompatible, cmp_str);
    if (rc == 0 && errors.len && !(r->errors = strbuf_detach(&errors)))
        rc = -1;
    strbuf_free(&errors);
    return rc == 0 ? build_conditions(r) : -1;
}

/* A version the check cannot start from: every condition fails closed. */
static int bad_version(upgradeable_result *r, const char *what)
{
    strbuf msg = STRBUF_INIT;
    int rc = strbuf_printf(&msg, "Encountered errors while checking compatibility with the next minor version of OpenShift: %s",
                           what);
    if (rc == 0)
        rc = set_cond(&r->intermediate, UPGRADEABLE_INTERMEDIATE_TYPE, "False", "ErrorCheckingOperatorCompatibility",
                      strbuf_str(&msg));
    if (rc == 0)
        rc = set_cond(&r->degraded, UPGRADEABLE_DEGRADED_TYPE, "True", "SyncError", strbuf_str(&msg));
    if (rc == 0)
        rc = merge_upgradeable(r);
    if (rc == 0 && !(r->errors = strbuf_detach(&msg)))
        rc = -1;
    strbuf_free(&msg);
    return rc;
}

static int finish(int rc, upgradeable_result *out, olm_error *err)
{
    if (rc == 0)
        return 0;
    upgradeable_result_free(out);
    return olm_error_set(err, "upgradeable: out of memory");
}

int upgradeable_check(const upgradeable_extension *exts, size_t n, const char *cluster_version,
                      upgradeable_result *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    semver_version v;
    olm_error perr;
    if (semver_parse_strict(cluster_version, &v, &perr) < 0) {
        char what[OLM_ERROR_MAX + 64];
        snprintf(what, sizeof what, "cannot parse the cluster version: %s", perr.msg);
        return finish(bad_version(out, what), out, err);
    }
    check_mode m = {false, ocp_normalise((upgradeable_minor){v.major, v.minor})};
    semver_version_free(&v);
    snprintf(out->next, sizeof out->next, "%llu.%llu", (unsigned long long)m.limit.major,
             (unsigned long long)m.limit.minor + 1);
    return finish(run(exts, n, &m, out), out, err);
}

int upgradeable_check_target(const upgradeable_extension *exts, size_t n, const char *target,
                             upgradeable_result *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    /* The target is written like the property value's number form: M.m. */
    strbuf why = STRBUF_INIT;
    check_mode m = {true, {0, 0}};
    size_t len = target ? strlen(target) : 0;
    int rc = target ? upgradeable_parse_max_version(target, len, &m.limit, &why) : -1;
    if (rc == -2) {
        strbuf_free(&why);
        return finish(-1, out, err);
    }
    if (rc < 0) {
        strbuf what = STRBUF_INIT;
        int wr = strbuf_printf(&what, "invalid target version \"%s\": expected <major>.<minor>", target ? target : "");
        rc = wr < 0 ? -1 : bad_version(out, strbuf_str(&what));
        strbuf_free(&what);
        strbuf_free(&why);
        return finish(rc, out, err);
    }
    strbuf_free(&why);
    snprintf(out->next, sizeof out->next, "%llu.%llu", (unsigned long long)m.limit.major,
             (unsigned long long)m.limit.minor);
    return finish(run(exts, n, &m, out), out, err);
}

static void cond_free(upgradeable_condition *c)
{
    free(c->reason);
    free(c->message);
    c->reason = c->message = NULL;
}

void upgradeable_result_free(upgradeable_result *r)
{
    for (size_t i = 0; i < r->nverdicts; i++)
        free(r->verdicts[i].error);
    free(r->verdicts);
    for (size_t i = 0; i < r->nincompatible; i++)
        free(r->incompatible[i]);
    free(r->incompatible);
    free(r->errors);
    cond_free(&r->intermediate);
    cond_free(&r->degraded);
    cond_free(&r->upgradeable);
    memset(r, 0, sizeof *r);
}

char *upgradeable_properties_from_json(const json_t *props)
{
    /* 15 significant digits print 4.18 as 4.18 rather than 4.1799999999999997. */
    return json_dumps(props, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
}

/* containers-registries.conf v2: loading, merging, matching and the pull sources of a
 * reference (see oci_registries_conf.h for the rules, which follow containers/image's
 * pkg/sysregistriesv2). */
#include "oci_registries_conf.h"
#include "oci_internal.h"
#include "oci_toml.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "olm_array.h"
#include "olm_read_file.h"

#define MAX_CONF_BYTES ((size_t)4 * 1024 * 1024)

enum pull_from { PULL_ALL, PULL_DIGEST_ONLY, PULL_TAG_ONLY };

typedef struct endpoint {
    char *location; /* may be "" for a wildcard prefix's primary: the reference itself */
    bool insecure;
    enum pull_from pull_from; /* mirrors only */
} endpoint;

typedef struct rule {
    char *prefix;
    endpoint primary;
    endpoint *mirrors;
    size_t nmirrors;
    bool blocked;
    bool mirror_by_digest_only;
    char *origin; /* the file that defined it */
} rule;

typedef struct rule_list {
    rule *v;
    size_t n, cap;
} rule_list;

struct oci_registries_conf {
    rule_list rules;
};

static void rule_free(rule *r)
{
    free(r->prefix);
    free(r->primary.location);
    for (size_t i = 0; i < r->nmirrors; i++)
        free(r->mirrors[i].location);
    free(r->mirrors);
    free(r->origin);
    memset(r, 0, sizeof *r);
}

oci_registries_conf *oci_registries_conf_new(olm_error *err)
{
    oci_registries_conf *c = calloc(1, sizeof *c);
    if (!c)
        olm_error_set(err, "out of memory");
    return c;
}

void oci_registries_conf_free(oci_registries_conf *conf)
{
    if (!conf)
        return;
    for (size_t i = 0; i < conf->rules.n; i++)
        rule_free(&conf->rules.v[i]);
    free(conf->rules.v);
    free(conf);
}

size_t oci_registries_conf_count(const oci_registries_conf *conf) { return conf ? conf->rules.n : 0; }

/* ---------------------------------------------------------------- reading one file */

/* containers/image's parseLocation: trailing '/' dropped, URI schemes refused. */
static int clean_location(const char *in, char **out, const char *what, olm_error *err)
{
    size_t n = strlen(in);
    while (n && in[n - 1] == '/')
        n--;
    if (strncmp(in, "http://", 7) == 0 || strncmp(in, "https://", 8) == 0)
        return olm_error_set(err, "%s \"%s\": URI schemes are not supported (write host[:port][/path])", what, in);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)in[i] <= ' ' || in[i] == '@' || in[i] == 0x7f)
            return olm_error_set(err, "%s \"%s\" is not a host[:port][/path]", what, in);
    if (!(*out = strndup(in, n)))
        return olm_error_set(err, "out of memory");
    return 0;
}

/* A string field of a table: NULL when absent; -1 when present but not a string. */
static int get_string(json_t *obj, const char *key, const char **out, olm_error *err)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_is_string(v))
        return olm_error_set(err, "\"%s\" must be a string", key);
    *out = json_string_value(v);
    return 0;
}

static int get_bool(json_t *obj, const char *key, bool *out, olm_error *err)
{
    json_t *v = json_object_get(obj, key);
    *out = false;
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return olm_error_set(err, "\"%s\" must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

static int read_mirror(json_t *m, const rule *r, endpoint *e, olm_error *err)
{
    const char *loc, *pull;
    if (!json_is_object(m))
        return olm_error_set(err, "[[registry.mirror]] entries must be tables");
    if (get_string(m, "location", &loc, err) != 0 || get_bool(m, "insecure", &e->insecure, err) != 0 ||
        get_string(m, "pull-from-mirror", &pull, err) != 0)
        return -1;
    if (!loc || !*loc)
        return olm_error_set(err, "a [[registry.mirror]] needs a location");
    if (clean_location(loc, &e->location, "mirror location", err) != 0)
        return -1;
    if (!*e->location)
        return olm_error_set(err, "a [[registry.mirror]] needs a location");
    if (pull && *pull) {
        if (r->mirror_by_digest_only)
            return olm_error_set(err,
                                 "mirror \"%s\": mirror-by-digest-only (on the registry) and pull-from-mirror (on "
                                 "the mirror) cannot both be set",
                                 e->location);
        if (strcmp(pull, "all") == 0)
            e->pull_from = PULL_ALL;
        else if (strcmp(pull, "digest-only") == 0)
            e->pull_from = PULL_DIGEST_ONLY;
        else if (strcmp(pull, "tag-only") == 0)
            e->pull_from = PULL_TAG_ONLY;
        else
            return olm_error_set(err, "mirror \"%s\": pull-from-mirror must be \"all\", \"digest-only\" or \"tag-only\", not \"%s\"",
                                 e->location, pull);
    }
    return 0;
}

static int read_registry(json_t *obj, rule *r, olm_error *err)
{
    const char *prefix, *loc, *pull;
    if (!json_is_object(obj))
        return olm_error_set(err, "[[registry]] entries must be tables");
    if (get_string(obj, "prefix", &prefix, err) != 0 || get_string(obj, "location", &loc, err) != 0 ||
        get_bool(obj, "insecure", &r->primary.insecure, err) != 0 || get_bool(obj, "blocked", &r->blocked, err) != 0 ||
        get_bool(obj, "mirror-by-digest-only", &r->mirror_by_digest_only, err) != 0 ||
        get_string(obj, "pull-from-mirror", &pull, err) != 0)
        return -1;
    if (clean_location(loc ? loc : "", &r->primary.location, "location", err) != 0)
        return -1;
    if (!prefix || !*prefix) {
        if (!*r->primary.location)
            return olm_error_set(err, "[[registry]] needs a location or a prefix (both are unset)");
        if (!(r->prefix = strdup(r->primary.location)))
            return olm_error_set(err, "out of memory");
    } else {
        if (clean_location(prefix, &r->prefix, "prefix", err) != 0)
            return -1;
        bool wildcard = strncmp(r->prefix, "*.", 2) == 0;
        if (wildcard && (strpbrk(r->prefix, "/@:") || !r->prefix[2] || strchr(r->prefix + 1, '*')))
            return olm_error_set(err, "wildcard prefix \"%s\" must be of the form *.example.com (no port, no path)",
                                 r->prefix);
        if (!wildcard && strchr(r->prefix, '*'))
            return olm_error_set(err, "prefix \"%s\": '*' is allowed only as \"*.\" at its start", r->prefix);
        if (!wildcard && !*r->primary.location)
            return olm_error_set(err, "prefix \"%s\" needs a location (only *.example.com prefixes may omit it)",
                                 r->prefix);
    }
    if (pull && *pull)
        return olm_error_set(err, "[[registry]] \"%s\": pull-from-mirror belongs on [[registry.mirror]] entries",
                             r->prefix);
    json_t *mirrors = json_object_get(obj, "mirror");
    if (mirrors && !json_is_array(mirrors))
        return olm_error_set(err, "[[registry]] \"%s\": \"mirror\" must be [[registry.mirror]] tables", r->prefix);
    size_t n = json_array_size(mirrors);
    if (n && !(r->mirrors = calloc(n, sizeof *r->mirrors)))
        return olm_error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        r->nmirrors = i + 1;
        if (read_mirror(json_array_get(mirrors, i), r, &r->mirrors[i], err) != 0)
            return olm_error_wrap(err, "[[registry]] \"%s\"", r->prefix);
    }
    return 0;
}

/* Appends a rule with that prefix, or replaces the existing one (`replace`), or drops the
 * new one (the first of a prefix wins within a file). */
static int put_rule(rule_list *rules, rule *r, bool replace, olm_error *err)
{
    for (size_t i = 0; i < rules->n; i++)
        if (strcmp(rules->v[i].prefix, r->prefix) == 0) {
            if (replace) {
                rule_free(&rules->v[i]);
                rules->v[i] = *r;
            } else {
                rule_free(r);
            }
            memset(r, 0, sizeof *r);
            return 0;
        }
    if (OLM_ARRAY_RESERVE(rules->v, rules->cap, rules->n + 1) < 0)
        return olm_error_set(err, "out of memory");
    rules->v[rules->n++] = *r;
    memset(r, 0, sizeof *r);
    return 0;
}

/* [registries.insecure] / [registries.block] registries = [...] → rules (v1 format). */
static int convert_v1(json_t *v1, rule_list *rules, const char *origin, olm_error *err)
{
    static const char *const lists[] = {"block", "insecure", "search"};
    for (size_t l = 0; l < 3; l++) {
        json_t *t = json_object_get(v1, lists[l]);
        json_t *regs = json_object_get(t, "registries");
        if (t && (!json_is_object(t) || (regs && !json_is_array(regs))))
            return olm_error_set(err, "[registries.%s] must be a table with registries = [\"host\", ...]", lists[l]);
        if (l == 2)
            break; /* search lists are for short names: nothing to do */
        size_t i;
        json_t *h;
        json_array_foreach(regs, i, h) {
            if (!json_is_string(h))
                return olm_error_set(err, "[registries.%s] registries must be strings", lists[l]);
            rule r = {0};
            if (clean_location(json_string_value(h), &r.primary.location, "registry", err) != 0)
                return -1;
            rule *found = NULL;
            for (size_t k = 0; k < rules->n; k++)
                if (strcmp(rules->v[k].prefix, r.primary.location) == 0)
                    found = &rules->v[k];
            if (found) {
                free(r.primary.location);
            } else {
                if (!(r.prefix = strdup(r.primary.location)) || !(r.origin = strdup(origin))) {
                    rule_free(&r);
                    return olm_error_set(err, "out of memory");
                }
                if (put_rule(rules, &r, false, err) != 0) {
                    rule_free(&r);
                    return -1;
                }
                found = &rules->v[rules->n - 1];
            }
            if (l == 0)
                found->blocked = true;
            else
                found->primary.insecure = true;
        }
    }
    return 0;
}

int oci_registries_conf_add_text(oci_registries_conf *conf, const char *text, size_t len, const char *origin,
                                 bool allow_v1, olm_error *err)
{
    json_t *doc = oci_toml_parse(text, len, err);
    if (!doc)
        return olm_error_wrap(err, "%s", origin);
    rule_list rules = {0};
    int rc = -1;
    json_t *regs = json_object_get(doc, "registry");
    json_t *v1 = json_object_get(doc, "registries");
    if (regs && !json_is_array(regs)) {
        olm_error_set(err, "%s: \"registry\" must be [[registry]] tables", origin);
        goto out;
    }
    if (v1) {
        if (!allow_v1) {
            olm_error_set(err, "%s: a drop-in must use the version 2 format ([[registry]]), not [registries.*]", origin);
            goto out;
        }
        if (regs || json_object_get(doc, "unqualified-search-registries")) {
            olm_error_set(err, "%s: mixes the version 1 ([registries.*]) and version 2 ([[registry]]) formats", origin);
            goto out;
        }
        if (convert_v1(v1, &rules, origin, err) != 0) {
            olm_error_wrap(err, "%s", origin);
            goto out;
        }
    }
    for (size_t i = 0; i < json_array_size(regs); i++) {
        rule r = {0};
        int bad = read_registry(json_array_get(regs, i), &r, err);
        if (bad == 0 && !(r.origin = strdup(origin)))
            bad = olm_error_set(err, "out of memory");
        if (bad != 0) {
            rule_free(&r);
            olm_error_wrap(err, "%s: [[registry]] #%zu", origin, i + 1);
            goto out;
        }
        if (put_rule(&rules, &r, false, err) != 0) {
            rule_free(&r);
            goto out;
        }
    }
    /* a registry named twice must agree with itself on insecure and blocked */
    for (size_t i = 0; i < rules.n; i++)
        for (size_t j = i + 1; j < rules.n; j++) {
            const rule *ri = &rules.v[i], *rj = &rules.v[j];
            const char *a = *ri->primary.location ? ri->primary.location : ri->prefix;
            const char *b = *rj->primary.location ? rj->primary.location : rj->prefix;
            if (strcmp(a, b) == 0 && (ri->primary.insecure != rj->primary.insecure || ri->blocked != rj->blocked)) {
                olm_error_set(err, "%s: registry \"%s\" is defined more than once with conflicting insecure or blocked settings",
                              origin, a);
                goto out;
            }
        }
    /* merge: this file's entries replace those with the same prefix */
    for (size_t i = 0; i < rules.n; i++)
        if (put_rule(&conf->rules, &rules.v[i], true, err) != 0)
            goto out; /* only out of memory: conf keeps what was merged so far */
    rc = 0;
out:
    for (size_t i = 0; i < rules.n; i++)
        rule_free(&rules.v[i]);
    free(rules.v);
    json_decref(doc);
    return rc;
}

static int add_file(oci_registries_conf *conf, const char *path, bool allow_v1, bool required, olm_error *err)
{
    size_t len = 0;
    olm_error rerr;
    char *text = olm_read_file(path, MAX_CONF_BYTES, &len, &rerr);
    if (!text) {
        if (!required && errno == ENOENT)
            return 0;
        return olm_error_set(err, "registries configuration: %s", rerr.msg);
    }
    int rc = oci_registries_conf_add_text(conf, text, len, path, allow_v1, err);
    free(text);
    return rc;
}

static int dropin_name(const struct dirent *e)
{
    size_t l = strlen(e->d_name);
    return e->d_name[0] != '.' && l >= 6 && strcmp(e->d_name + l - 5, ".conf") == 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

int oci_registries_dropins(const char *dir, struct dirent ***names)
{
    return scandir(dir, names, dropin_name, by_name);
}

oci_registries_conf *oci_registries_conf_load(const char *path, bool required, olm_error *err)
{
    if (!path)
        path = OCI_REGISTRIES_CONF_DEFAULT;
    oci_registries_conf *conf = oci_registries_conf_new(err);
    if (!conf)
        return NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (required || errno != ENOENT) {
            olm_error_set(err, "registries configuration %s: %s", path, strerror(errno));
            goto bad;
        }
    } else if (!S_ISREG(st.st_mode)) {
        olm_error_set(err, "registries configuration %s is not a regular file", path);
        goto bad;
    } else if (add_file(conf, path, true, true, err) != 0) {
        goto bad;
    }
    char *dir = NULL;
    if (asprintf(&dir, "%s.d", path) < 0) {
        olm_error_set(err, "out of memory");
        goto bad;
    }
    struct dirent **names = NULL;
    int nn = oci_registries_dropins(dir, &names);
    if (nn < 0) {
        int e = errno;
        free(dir);
        if (e == ENOENT || e == ENOTDIR)
            return conf;
        olm_error_set(err, "registries configuration drop-ins %s.d: %s", path, strerror(e));
        goto bad;
    }
    int rc = 0;
    for (int i = 0; i < nn; i++) {
        char *f = NULL;
        if (rc == 0 && asprintf(&f, "%s/%s", dir, names[i]->d_name) < 0) {
            f = NULL; /* asprintf leaves it undefined on failure */
            rc = olm_error_set(err, "out of memory");
        }
        struct stat fs;
        /* only regular files (a directory named x.conf is skipped, as containers/image does) */
        if (rc == 0 && stat(f, &fs) == 0 && S_ISREG(fs.st_mode))
            rc = add_file(conf, f, false, false, err);
        free(f);
        free(names[i]);
    }
    free(names);
    free(dir);
    if (rc != 0)
        goto bad;
    return conf;
bad:
    oci_registries_conf_free(conf);
    return NULL;
}

oci_registries_conf *oci_registries_conf_from_env(olm_error *err)
{
    const char *env = getenv("CONTAINERS_REGISTRIES_CONF");
    if (env && *env)
        return oci_registries_conf_load(env, true, err);
    return oci_registries_conf_load(NULL, false, err);
}

/* ---------------------------------------------------------------- matching */

/* containers/image's refMatchingPrefix: the length of ref that the prefix covers, or -1. */
static long match_prefix(const char *ref, const char *prefix)
{
    size_t rl = strlen(ref);
    if (strncmp(prefix, "*.", 2) == 0) {
        const char *dom = prefix + 1; /* ".example.com" */
        const char *hit = strstr(ref, dom);
        if (!hit || memchr(ref, '/', (size_t)(hit - ref)))
            return -1;
        size_t end = (size_t)(hit - ref) + strlen(dom);
        if (end == rl || ref[end] == ':' || ref[end] == '/' || ref[end] == '@')
            return (long)end;
        return -1;
    }
    size_t pl = strlen(prefix);
    if (rl < pl || strncmp(ref, prefix, pl) != 0)
        return -1;
    if (rl == pl || ref[pl] == ':' || ref[pl] == '/' || ref[pl] == '@')
        return (long)pl;
    return -1;
}

static const rule *find_rule(const oci_registries_conf *conf, const char *ref)
{
    const rule *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; conf && i < conf->rules.n; i++) {
        size_t l = strlen(conf->rules.v[i].prefix);
        if (match_prefix(ref, conf->rules.v[i].prefix) >= 0 && l > best_len) {
            best = &conf->rules.v[i];
            best_len = l;
        }
    }
    return best;
}

void oci_pull_sources_free(oci_pull_sources *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].ref);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int add_source(oci_pull_sources *s, const rule *r, const endpoint *e, const char *ref, bool mirror,
                      olm_error *err)
{
    char *rewritten = NULL;
    if (!*e->location) {
        rewritten = strdup(ref); /* a wildcard prefix without a location: the reference as is */
    } else {
        long cut = match_prefix(ref, r->prefix);
        if (cut < 0 || asprintf(&rewritten, "%s%s", e->location, ref + cut) < 0)
            rewritten = NULL;
    }
    if (!rewritten)
        return olm_error_set(err, "out of memory");
    /* the rewritten name must still be a reference that names its registry */
    oci_ref check;
    olm_error perr;
    if (oci_ref_parse(rewritten, &check, &perr) != 0) {
        olm_error_set(err, "%s location \"%s\" (prefix \"%s\" in %s) turns the image into \"%s\": %s",
                      mirror ? "mirror" : "registry", e->location, r->prefix, r->origin, rewritten, perr.msg);
        free(rewritten);
        return -1;
    }
    size_t hl = strcspn(e->location, "/");
    bool host_kept = !*e->location || (strlen(check.registry) == hl && strncmp(check.registry, e->location, hl) == 0) ||
                     (hl == 15 && strncmp(e->location, "index.docker.io", 15) == 0);
    oci_ref_free(&check);
    if (!host_kept) {
        olm_error_set(err, "%s location \"%s\" (prefix \"%s\" in %s) does not start with a registry host "
                           "(a host has a '.' or a ':port', or is localhost)",
                      mirror ? "mirror" : "registry", e->location, r->prefix, r->origin);
        free(rewritten);
        return -1;
    }
    if (OLM_ARRAY_RESERVE(s->v, s->cap, s->n + 1) < 0) {
        free(rewritten);
        return olm_error_set(err, "out of memory");
    }
    s->v[s->n++] = (oci_pull_source){.ref = rewritten, .insecure = e->insecure, .mirror = mirror};
    return 0;
}

int oci_registries_conf_sources(const oci_registries_conf *conf, const oci_ref *ref, oci_pull_sources *out,
                                olm_error *err)
{
    memset(out, 0, sizeof *out);
    char *s = oci_ref_string(ref);
    if (!s)
        return olm_error_set(err, "out of memory");
    const rule *r = find_rule(conf, s);
    int rc = 0;
    if (!r) {
        endpoint self = {.location = ""};
        rule none = {.prefix = "", .origin = ""};
        rc = add_source(out, &none, &self, s, false, err);
    } else if (r->blocked) {
        rc = olm_error_set(err, "image %s: registry \"%s\" is blocked (blocked = true in %s)", s, r->prefix, r->origin);
    } else {
        bool by_digest = ref->digest != NULL;
        for (size_t i = 0; rc == 0 && i < r->nmirrors; i++) {
            const endpoint *m = &r->mirrors[i];
            if ((r->mirror_by_digest_only || m->pull_from == PULL_DIGEST_ONLY) && !by_digest)
                continue;
            if (m->pull_from == PULL_TAG_ONLY && by_digest)
                continue;
            rc = add_source(out, r, m, s, true, err);
        }
        if (rc == 0)
            rc = add_source(out, r, &r->primary, s, false, err);
    }
    free(s);
    if (rc != 0)
        oci_pull_sources_free(out);
    return rc;
}

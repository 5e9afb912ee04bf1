/* rbac_derive: the installer ServiceAccount's least RBAC for a rendered bundle
 * (rbac_derive.h).
 *
 * Every permission is first a "grant" (scope, group, resource, verb, name-or-any);
 * grants are sorted and folded into PolicyRules: the verbs of one named object
 * together, then the objects with the same verbs into one rule's resourceNames, then
 * the unnamed (list/watch) rules of one apiGroup into one rule's resources. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "olm_array.h"
#include "rbac_derive.h"
#include "strbuf.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

typedef struct grant {
    const char *scope;    /* "" cluster-wide, else a namespace */
    const char *group;
    const char *resource;
    const char *verb;
    const char *name;     /* NULL: any */
} grant;

/* Every string a grant points at is interned in `strings` (owned), so grants are plain
 * structs that sort and compare cheaply. */
typedef struct grants {
    grant *items;
    size_t n, cap;
    char **strings;
    size_t nstrings, capstrings;
} grants;

static const char *intern(grants *g, const char *s)
{
    if (!s)
        return NULL;
    for (size_t i = 0; i < g->nstrings; i++)
        if (strcmp(g->strings[i], s) == 0)
            return g->strings[i];
    if (OLM_ARRAY_RESERVE(g->strings, g->capstrings, g->nstrings + 1) < 0)
        return NULL;
    char *d = strdup(s);
    if (!d)
        return NULL;
    g->strings[g->nstrings++] = d;
    return d;
}

static int add(grants *g, const char *scope, const char *group, const char *resource, const char *verb,
               const char *name)
{
    if (OLM_ARRAY_RESERVE(g->items, g->cap, g->n + 1) < 0)
        return -1;
    grant x = {intern(g, scope), intern(g, group), intern(g, resource), intern(g, verb), intern(g, name)};
    if (!x.scope || !x.group || !x.resource || !x.verb || (name && !x.name))
        return -1;
    g->items[g->n++] = x;
    return 0;
}

static void grants_free(grants *g)
{
    for (size_t i = 0; i < g->nstrings; i++)
        free(g->strings[i]);
    free(g->strings);
    free(g->items);
}

/* NULL sorts first. */
static int cmp_opt(const char *a, const char *b)
{
    if (!a || !b)
        return (!a - !b) ? (a ? 1 : -1) : 0;
    return strcmp(a, b);
}

/* ------------------------------------------------------------ kinds */

/* The bundle's own CRD for group/kind, which the cluster does not serve yet. */
static bool crd_kind(const json_t *objects, const char *api_version, const char *kind, kube_resource_info *out)
{
    const char *slash = strchr(api_version, '/');
    if (!slash)
        return false;
    size_t glen = (size_t)(slash - api_version);
    size_t i;
    const json_t *o;
    json_array_foreach(objects, i, o) {
        const char *k = json_string_value(json_object_get(o, "kind"));
        if (!k || strcmp(k, "CustomResourceDefinition") != 0)
            continue;
        const json_t *spec = json_object_get(o, "spec");
        const char *group = json_string_value(json_object_get(spec, "group"));
        const json_t *names = json_object_get(spec, "names");
        const char *ckind = json_string_value(json_object_get(names, "kind"));
        const char *plural = json_string_value(json_object_get(names, "plural"));
        const char *scope = json_string_value(json_object_get(spec, "scope"));
        if (!group || !ckind || !plural || strlen(group) != glen || strncmp(group, api_version, glen) != 0 ||
            strcmp(ckind, kind) != 0)
            continue;
        memset(out, 0, sizeof *out);
        snprintf(out->group, sizeof out->group, "%s", group);
        snprintf(out->version, sizeof out->version, "%s", slash + 1);
        snprintf(out->resource, sizeof out->resource, "%s", plural);
        out->namespaced = !scope || strcmp(scope, "Cluster") != 0;
        return true;
    }
    return false;
}

/* ------------------------------------------------------------ collecting */

typedef struct watch_scope {
    const char *group, *resource; /* interned */
    const char *ns;               /* the one namespace so far; NULL for cluster-scoped */
    bool many;                    /* several namespaces (or cluster-scoped): cluster-wide */
} watch_scope;

typedef struct watch_scopes {
    watch_scope *v;
    size_t n, cap;
} watch_scopes;

static int collect_object(grants *g, const json_t *objects, const json_t *o, const char *install_ns,
                          rbac_resolve_fn resolve, void *ud, watch_scopes *ws, olm_error *err)
{
    const char *av = json_string_value(json_object_get(o, "apiVersion"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const json_t *meta = json_object_get(o, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!av || !kind || !name || !*name)
        return olm_error_set(err, "a rendered object lacks apiVersion, kind or metadata.name");
    kube_resource_info ri;
    if (!crd_kind(objects, av, kind, &ri) && resolve(ud, av, kind, &ri, err) < 0)
        return -1;
    const char *scope = ri.namespaced ? (ns && *ns ? ns : install_ns) : "";
    static const char *const manage[] = {"create", "delete", "get", "patch"};
    for (size_t i = 0; i < 4; i++)
        if (add(g, scope, ri.group, ri.resource, manage[i], name) < 0)
            return olm_error_set(err, "out of memory");

    /* list/watch: where the drift watch will look. */
    const char *group = intern(g, ri.group), *res = intern(g, ri.resource), *sc = intern(g, scope);
    if (!group || !res || !sc)
        return olm_error_set(err, "out of memory");
    watch_scope *w = NULL;
    for (size_t i = 0; i < ws->n && !w; i++)
        if (ws->v[i].group == group && ws->v[i].resource == res)
            w = &ws->v[i];
    if (!w) {
        if (OLM_ARRAY_RESERVE(ws->v, ws->cap, ws->n + 1) < 0)
            return olm_error_set(err, "out of memory");
        w = &ws->v[ws->n++];
        *w = (watch_scope){group, res, ri.namespaced ? sc : NULL, !ri.namespaced};
    } else if (!w->many && w->ns != sc) {
        w->many = true;
    }

    /* Granting what the bundle's roles hold: escalate on each role, bind on each bound role. */
    if (strcmp(ri.group, RBAC_GROUP) == 0) {
        if (strcmp(kind, "Role") == 0 || strcmp(kind, "ClusterRole") == 0) {
            if (add(g, scope, RBAC_GROUP, ri.resource, "escalate", name) < 0)
                return olm_error_set(err, "out of memory");
        } else if (strcmp(kind, "RoleBinding") == 0 || strcmp(kind, "ClusterRoleBinding") == 0) {
            const json_t *ref = json_object_get(o, "roleRef");
            const char *rkind = json_string_value(json_object_get(ref, "kind"));
            const char *rname = json_string_value(json_object_get(ref, "name"));
            if (!rkind || !rname || (strcmp(rkind, "Role") != 0 && strcmp(rkind, "ClusterRole") != 0))
                return olm_error_set(err, "%s %s has no roleRef to a Role or ClusterRole", kind, name);
            if (add(g, scope, RBAC_GROUP, strcmp(rkind, "Role") == 0 ? "roles" : "clusterroles", "bind", rname) < 0)
                return olm_error_set(err, "out of memory");
        }
    }
    return 0;
}

/* ------------------------------------------------------------ folding into rules */

static int by_object_then_verb(const void *pa, const void *pb)
{
    const grant *a = pa, *b = pb;
    int r;
    if ((r = strcmp(a->scope, b->scope)) || (r = strcmp(a->group, b->group)) ||
        (r = strcmp(a->resource, b->resource)) || (r = cmp_opt(a->name, b->name)))
        return r;
    return strcmp(a->verb, b->verb);
}

/* One named (or unnamed) object's verbs, joined with ",": the key rules are merged on. */
typedef struct object_verbs {
    const char *scope, *group, *resource, *name;
    char *verbs; /* owned */
} object_verbs;

/* Scope, group, unnamed (list/watch) first; unnamed by verbs then resource (to merge
 * resources), named by resource then verbs then name (to merge names). */
static int by_rule(const void *pa, const void *pb)
{
    const object_verbs *a = pa, *b = pb;
    int r;
    if ((r = strcmp(a->scope, b->scope)) || (r = strcmp(a->group, b->group)) || (r = (a->name != NULL) - (b->name != NULL)))
        return r;
    if (!a->name)
        return (r = strcmp(a->verbs, b->verbs)) ? r : strcmp(a->resource, b->resource);
    if ((r = strcmp(a->resource, b->resource)) || (r = strcmp(a->verbs, b->verbs)))
        return r;
    return strcmp(a->name, b->name);
}

static json_t *verbs_array(const char *joined)
{
    json_t *arr = json_array();
    for (const char *p = joined; arr && *p;) {
        size_t n = strcspn(p, ",");
        if (json_array_append_new(arr, json_stringn(p, n)) < 0) {
            json_decref(arr);
            return NULL;
        }
        p += n + (p[n] == ',');
    }
    return arr;
}

/* Appends the rule to the scope's array in `plan`. */
static int put_rule(rbac_plan *plan, const char *scope, json_t *rule)
{
    if (!rule)
        return -1;
    json_t *arr = plan->cluster_rules;
    if (*scope) {
        arr = json_object_get(plan->ns_rules, scope);
        if (!arr) {
            arr = json_array();
            if (!arr || json_object_set_new(plan->ns_rules, scope, arr) < 0) {
                json_decref(rule);
                return -1;
            }
        }
    }
    return json_array_append_new(arr, rule);
}

static int fold(grants *g, rbac_plan *plan)
{
    qsort(g->items, g->n, sizeof *g->items, by_object_then_verb);
    object_verbs *ov = calloc(g->n ? g->n : 1, sizeof *ov);
    size_t nov = 0;
    int rc = ov ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < g->n;) {
        size_t j = i;
        strbuf verbs = STRBUF_INIT;
        const char *last = NULL;
        while (j < g->n && g->items[j].scope == g->items[i].scope && g->items[j].group == g->items[i].group &&
               g->items[j].resource == g->items[i].resource && g->items[j].name == g->items[i].name) {
            if (g->items[j].verb != last &&
                ((verbs.len && strbuf_putc(&verbs, ',') < 0) || strbuf_puts(&verbs, g->items[j].verb) < 0))
                rc = -1;
            last = g->items[j].verb;
            j++;
        }
        ov[nov] = (object_verbs){g->items[i].scope, g->items[i].group, g->items[i].resource, g->items[i].name,
                                 strbuf_detach(&verbs)};
        if (!ov[nov++].verbs)
            rc = -1;
        i = j;
    }
    if (rc == 0)
        qsort(ov, nov, sizeof *ov, by_rule);
    /* Named objects: one rule per (scope, group, verbs, resource) with its names.  Unnamed
     * (list/watch): one rule per (scope, group, verbs) with its resources. */
    for (size_t i = 0; rc == 0 && i < nov;) {
        size_t j = i;
        json_t *list = json_array(), *resources = json_array();
        bool named = ov[i].name != NULL;
        while (j < nov && ov[j].scope == ov[i].scope && ov[j].group == ov[i].group &&
               (ov[j].name != NULL) == named && strcmp(ov[j].verbs, ov[i].verbs) == 0 &&
               (!named || ov[j].resource == ov[i].resource)) {
            if (list && json_array_append_new(list, json_string(named ? ov[j].name : ov[j].resource)) < 0)
                rc = -1;
            j++;
        }
        if (!list || !resources || rc < 0) {
            json_decref(list);
            json_decref(resources);
            rc = -1;
            break;
        }
        json_t *rule;
        if (named) {
            json_array_append_new(resources, json_string(ov[i].resource));
            rule = json_pack("{s:[s], s:o, s:o, s:o}", "apiGroups", ov[i].group, "resources", resources, "verbs",
                             verbs_array(ov[i].verbs), "resourceNames", list);
        } else {
            json_decref(resources);
            rule = json_pack("{s:[s], s:o, s:o}", "apiGroups", ov[i].group, "resources", list, "verbs",
                             verbs_array(ov[i].verbs));
        }
        if (put_rule(plan, ov[i].scope, rule) < 0)
            rc = -1;
        i = j;
    }
    for (size_t i = 0; i < nov; i++)
        free(ov[i].verbs);
    free(ov);
    return rc;
}

int rbac_derive(const json_t *objects, const char *install_ns, rbac_resolve_fn resolve, void *ud, rbac_plan *out,
                olm_error *err)
{
    memset(out, 0, sizeof *out);
    grants g = {0};
    watch_scopes ws = {0};
    int rc = 0;
    size_t i;
    const json_t *o;
    json_array_foreach(objects, i, o) {
        if ((rc = collect_object(&g, objects, o, install_ns, resolve, ud, &ws, err)) < 0)
            break;
    }
    for (size_t k = 0; rc == 0 && k < ws.n; k++) {
        const watch_scope *w = &ws.v[k];
        const char *scope = w->many ? "" : w->ns;
        if (add(&g, scope, w->group, w->resource, "list", NULL) < 0 ||
            add(&g, scope, w->group, w->resource, "watch", NULL) < 0)
            rc = olm_error_set(err, "out of memory");
    }
    if (rc == 0) {
        out->cluster_rules = json_array();
        out->ns_rules = json_object();
        if (!out->cluster_rules || !out->ns_rules || fold(&g, out) < 0)
            rc = olm_error_set(err, "out of memory");
    }
    free(ws.v);
    grants_free(&g);
    if (rc < 0)
        rbac_plan_free(out);
    return rc;
}

void rbac_plan_free(rbac_plan *p)
{
    json_decref(p->cluster_rules);
    json_decref(p->ns_rules);
    memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------ objects */

char *rbac_object_name(const char *extension)
{
    char *s = NULL;
    return asprintf(&s, "%s-installer", extension) < 0 ? NULL : s;
}

static json_t *meta(const char *name, const char *ns, const rbac_names *n)
{
    json_t *m = json_pack("{s:s, s:{s:s}}", "name", name, "labels", RBAC_LABEL, n->extension);
    if (m && ns && json_object_set_new(m, "namespace", json_string(ns)) < 0) {
        json_decref(m);
        return NULL;
    }
    if (m && n->bundle &&
        json_object_set_new(m, "annotations",
                            json_pack("{s:s}", "olmv1.operatorframework.io/derived-from-bundle", n->bundle)) < 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

static int append(json_t *arr, json_t *obj)
{
    return obj ? json_array_append_new(arr, obj) : -1;
}

static json_t *binding(const char *kind, const char *role_kind, const char *name, const char *ns, const rbac_names *n)
{
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:s}]}", "apiVersion", RBAC_GROUP "/v1", "kind",
                     kind, "metadata", meta(name, ns, n), "roleRef", "apiGroup", RBAC_GROUP, "kind", role_kind, "name",
                     name, "subjects", "kind", "ServiceAccount", "name", n->service_account, "namespace", n->namespace_);
}

json_t *rbac_objects(const rbac_plan *plan, const rbac_names *n)
{
    char *name = rbac_object_name(n->extension);
    json_t *out = json_array();
    if (!name || !out) {
        free(name);
        json_decref(out);
        return NULL;
    }
    int rc = append(out, json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata",
                                   meta(n->service_account, n->namespace_, n)));
    if (rc == 0 && json_array_size(plan->cluster_rules) > 0) {
        rc = append(out, json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", RBAC_GROUP "/v1", "kind", "ClusterRole",
                                   "metadata", meta(name, NULL, n), "rules", plan->cluster_rules));
        if (rc == 0)
            rc = append(out, binding("ClusterRoleBinding", "ClusterRole", name, NULL, n));
    }
    const char *ns;
    json_t *rules;
    /* jansson keeps insertion order; namespaces were inserted in sorted order. */
    json_object_foreach(plan->ns_rules, ns, rules) {
        if (rc == 0)
            rc = append(out, json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", RBAC_GROUP "/v1", "kind", "Role",
                                       "metadata", meta(name, ns, n), "rules", rules));
        if (rc == 0)
            rc = append(out, binding("RoleBinding", "Role", name, ns, n));
    }
    free(name);
    if (rc < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

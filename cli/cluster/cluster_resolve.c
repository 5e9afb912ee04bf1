/* cluster_resolve: selectors, resolution from the cluster's catalogs, and the bundle
 * rendered as operator-controller renders it (cluster_resolve.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cluster_resolve.h"
#include "image_temp.h"
#include "render.h"

#define CATALOG_NAME_LABEL "olm.operatorframework.io/metadata.name"

/* ------------------------------------------------------------ selectors */

static char *trimmed(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return strndup(s, n);
}

/* "(a, b)" -> ["a", "b"]; NULL when not parenthesised. */
static json_t *value_list(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n < 2 || s[0] != '(' || s[n - 1] != ')')
        return NULL;
    json_t *arr = json_array();
    for (const char *p = s + 1; arr && p < s + n - 1;) {
        size_t len = strcspn(p, ",)");
        char *v = trimmed(p, len);
        if (!v || !*v || json_array_append_new(arr, json_string(v)) < 0) {
            free(v);
            json_decref(arr);
            return NULL;
        }
        free(v);
        p += len + 1;
    }
    return arr;
}

static int add_expression(json_t *sel, const char *key, const char *op, json_t *values)
{
    json_t *exprs = json_object_get(sel, "matchExpressions");
    if (!exprs && (!(exprs = json_array()) || json_object_set_new(sel, "matchExpressions", exprs) < 0)) {
        json_decref(values);
        return -1;
    }
    json_t *e = json_pack("{s:s, s:s}", "key", key, "operator", op);
    if (!e || (values && json_object_set_new(e, "values", values) < 0)) {
        json_decref(e);
        return -1;
    }
    return json_array_append_new(exprs, e);
}

static int add_label(json_t *sel, const char *key, const char *value)
{
    json_t *ml = json_object_get(sel, "matchLabels");
    if (!ml && (!(ml = json_object()) || json_object_set_new(sel, "matchLabels", ml) < 0))
        return -1;
    return json_object_set_new(ml, key, json_string(value));
}

/* One requirement; 0, -1 on out of memory, -2 when malformed. */
static int parse_requirement(json_t *sel, const char *req)
{
    if (req[0] == '!') {
        char *k = trimmed(req + 1, strlen(req + 1));
        int rc = !k ? -1 : !*k ? -2 : add_expression(sel, k, "DoesNotExist", NULL);
        free(k);
        return rc;
    }
    const char *op = strpbrk(req, "=!");
    if (op) {
        bool ne = op[0] == '!';
        if (ne && op[1] != '=')
            return -2;
        const char *val = op + (ne || op[1] == '=' ? 2 : 1);
        char *k = trimmed(req, (size_t)(op - req)), *v = trimmed(val, strlen(val));
        int rc = !k || !v ? -1 : !*k || strpbrk(v, "=!") ? -2 : 0;
        if (rc == 0)
            rc = ne ? add_expression(sel, k, "NotIn", json_pack("[s]", v)) : add_label(sel, k, v);
        free(k);
        free(v);
        return rc;
    }
    /* "key in (...)", "key notin (...)" or "key". */
    size_t klen = strcspn(req, " \t");
    char *k = strndup(req, klen);
    if (!k)
        return -1;
    const char *rest = req + klen;
    while (isspace((unsigned char)*rest))
        rest++;
    int rc;
    if (!*rest) {
        rc = *k ? add_expression(sel, k, "Exists", NULL) : -2;
    } else {
        bool in = strncmp(rest, "in", 2) == 0 && (isspace((unsigned char)rest[2]) || rest[2] == '(');
        bool notin = strncmp(rest, "notin", 5) == 0 && (isspace((unsigned char)rest[5]) || rest[5] == '(');
        json_t *vals = in || notin ? value_list(rest + (in ? 2 : 5)) : NULL;
        rc = vals && json_array_size(vals) ? add_expression(sel, k, in ? "In" : "NotIn", vals) : (json_decref(vals), -2);
    }
    free(k);
    return rc;
}

int cluster_selector_parse(const char *text, const char *const *catalogs, size_t ncatalogs, json_t **out,
                           olm_error *err)
{
    *out = NULL;
    json_t *sel = json_object();
    if (!sel)
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    int rc = 0;
    for (const char *p = text; rc == 0 && p && *p;) {
        /* Split at commas outside parentheses. */
        size_t n = 0;
        int depth = 0;
        while (p[n] && (p[n] != ',' || depth > 0)) {
            depth += p[n] == '(' ? 1 : p[n] == ')' ? -1 : 0;
            n++;
        }
        char *req = trimmed(p, n);
        rc = !req ? -1 : *req ? parse_requirement(sel, req) : -2;
        free(req);
        p += n + (p[n] == ',');
    }
    if (rc == -2) {
        json_decref(sel);
        return cluster_error(err, CLI_EXIT_USAGE, "bad label selector \"%s\"", text);
    }
    if (rc == 0 && ncatalogs == 1)
        rc = add_label(sel, CATALOG_NAME_LABEL, catalogs[0]);
    if (rc == 0 && ncatalogs > 1) {
        json_t *vals = json_array();
        for (size_t i = 0; vals && i < ncatalogs; i++)
            if (json_array_append_new(vals, json_string(catalogs[i])) < 0) {
                json_decref(vals);
                vals = NULL;
            }
        rc = vals ? add_expression(sel, CATALOG_NAME_LABEL, "In", vals) : -1;
    }
    if (rc < 0) {
        json_decref(sel);
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    if (json_object_size(sel) == 0)
        json_decref(sel);
    else
        *out = sel;
    return 0;
}

/* ------------------------------------------------------------ resolution */

static bool has_package(const fbc_catalog *c, const char *package)
{
    if (fbc_find_package(c, package))
        return true;
    for (size_t i = 0; i < c->nbundles; i++)
        if (strcmp(c->bundles[i].package, package) == 0)
            return true;
    return false;
}

int cluster_resolve(kube_client *api, const catalog_source *src, const json_t *selector, const resolve_request *req,
                    cluster_resolution *out, strbuf *explain, olm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = catalog_set_select(api, selector, NULL, 0, &out->set, err);
    if (rc != 0)
        return rc;
    cluster_catalog_set *set = &out->set;
    if (set->n == 0)
        return cluster_error(err, CLI_EXIT_NO_CATALOGS, selector ? "no ClusterCatalog matches the catalog selector"
                                                                 : "no ClusterCatalogs found");
    size_t available = 0;
    for (size_t i = 0; i < set->n; i++)
        available += !set->items[i].unavailable;
    if (available == 0)
        return cluster_error(err, CLI_EXIT_NO_CATALOGS, "every selected ClusterCatalog has availabilityMode Unavailable");
    if ((rc = catalog_set_fetch(src, set, req->package, err)) != 0)
        return rc;
    /* As the controller: a selected catalog that cannot be read stops the resolution. */
    for (size_t i = 0; i < set->n; i++)
        if (set->items[i].fetch_error)
            return cluster_error(err, set->items[i].fetch_code, "%s", set->items[i].fetch_error);
    bool found = false;
    for (size_t i = 0; i < set->n && !found; i++)
        found = set->items[i].fbc && has_package(set->items[i].fbc, req->package);
    if (!found)
        return cluster_error(err, CLI_EXIT_NOT_FOUND, "no package \"%s\" in the selected catalogs", req->package);
    if (!(out->view = calloc(set->n, sizeof *out->view)))
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    catalog_set_resolve_view(set, out->view);
    if (resolve_bundle(req, out->view, set->n, &out->res, explain, err) < 0)
        return CLI_EXIT_NO_MATCH;
    out->resolved = true;
    return 0;
}

void cluster_resolution_free(cluster_resolution *r)
{
    if (r->resolved)
        resolve_result_free(&r->res);
    free(r->view);
    cluster_catalog_set_free(&r->set);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------ bundles */

static int render_dir(const char *dir, const char *install_ns, const json_t *config, json_t **objects, olm_error *err)
{
    bundle b = {0};
    bundle_config bc = {0};
    int rc = 0;
    if (bundle_load_dir(dir, &b, err) < 0)
        return CLI_EXIT_INVALID;
    if (bundle_config_validate(bundle_install_modes(b.csv), install_ns, config, &bc, err) < 0) {
        rc = CLI_EXIT_INVALID;
    } else {
        /* The certificate provider operator-controller uses (clusterextension_steps.c). */
        render_options ro = {install_ns, bc.watch_namespace, bc.deployment_config, RENDER_CERT_OPENSHIFT_SERVICE_CA};
        if (render_bundle(&b, &ro, objects, err) < 0)
            rc = CLI_EXIT_INVALID;
    }
    bundle_config_free(&bc);
    bundle_free(&b);
    return rc;
}

struct render_pull {
    const char *image, *install_ns;
    const json_t *config;
    json_t **objects;
};

static int render_pulled(const char *dir, const oci_pull_result *res, void *data, olm_error *err)
{
    (void)res;
    struct render_pull *p = data;
    int rc = render_dir(dir, p->install_ns, p->config, p->objects, err);
    if (rc != 0)
        cluster_wrap(err, rc, "bundle %s", p->image);
    return rc;
}

int cluster_render_bundle(const char *image, const char *install_ns, const json_t *config, json_t **objects,
                          olm_error *err)
{
    *objects = NULL;
    struct render_pull p = {image, install_ns, config, objects};
    int rc = image_temp_pull(image, false, render_pulled, &p, err);
    return rc == IMAGE_TEMP_PULL_FAILED ? CLI_EXIT_UNREACHABLE : rc == IMAGE_TEMP_SETUP_FAILED ? CLI_EXIT_FAILED : rc;
}

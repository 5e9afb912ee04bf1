/* outlook_catalogs: the catalogs read once for many extensions' outlook
 * (outlook_catalogs.h). */
#include <stdlib.h>
#include <string.h>

#include "cluster_extension.h"
#include "kube_label_selector.h"
#include "outlook_catalogs.h"

/* selected[i]: catalog i is picked by `ce`'s spec.source.catalog.selector.  0, or -1
 * when the selector cannot be read (the controller cannot resolve either). */
static int select_for(const outlook_catalogs *oc, const json_t *ce, bool *selected)
{
    extension_spec s;
    extension_spec_from_object(ce, &s);
    kube_label_selector *sel = NULL;
    olm_error err;
    if (kube_label_selector_parse(s.selector_json, &sel, &err) < 0)
        return -1;
    for (size_t i = 0; i < oc->set.n; i++)
        selected[i] = kube_label_selector_matches(
            sel, json_object_get(json_object_get(oc->set.items[i].obj, "metadata"), "labels"));
    kube_label_selector_free(sel);
    return 0;
}

/* The catalogs some extension selects: only those are read. */
static int wanted_catalogs(const outlook_catalogs *oc, const json_t *extensions, bool *wanted)
{
    bool *one = calloc(oc->set.n ? oc->set.n : 1, sizeof *one);
    if (!one)
        return -1;
    size_t i;
    const json_t *ce;
    json_array_foreach(extensions, i, ce) {
        if (select_for(oc, ce, one) < 0)
            continue;
        for (size_t k = 0; k < oc->set.n; k++)
            wanted[k] = wanted[k] || one[k];
    }
    free(one);
    return 0;
}

int outlook_catalogs_read(kube_client *c, const char *catalogd_url, const json_t *extensions, outlook_catalogs *out,
                          olm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = catalog_source_open(c, catalogd_url, &out->src, err);
    if (rc != 0)
        return rc;
    olm_error lerr;
    if (catalog_set_select(c, NULL, NULL, 0, &out->set, &lerr) != 0) {
        out->error = strdup(lerr.msg);
        return out->error ? 0 : cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    bool *wanted = calloc(out->set.n ? out->set.n : 1, sizeof *wanted);
    out->view = calloc(out->set.n ? out->set.n : 1, sizeof *out->view);
    if (!wanted || !out->view || wanted_catalogs(out, extensions, wanted) < 0) {
        free(wanted);
        return cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    }
    rc = catalog_set_fetch_wanted(&out->src, &out->set, NULL, wanted, err);
    free(wanted);
    if (rc == 0)
        catalog_set_resolve_view(&out->set, out->view);
    return rc;
}

void outlook_catalogs_free(outlook_catalogs *oc)
{
    free(oc->view);
    free(oc->error);
    cluster_catalog_set_free(&oc->set);
    catalog_source_close(&oc->src);
    memset(oc, 0, sizeof *oc);
}

/* The view of the catalogs `selected` picks, into cats; false when one of them that is
 * available could not be read. */
static bool pick(const outlook_catalogs *oc, const bool *selected, resolve_catalog *cats, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < oc->set.n; i++) {
        if (!selected[i])
            continue;
        if (!oc->view[i].unavailable && (oc->view[i].fetch_error || !oc->view[i].fbc))
            return false;
        cats[(*n)++] = oc->view[i];
    }
    return true;
}

int outlook_for_extension(const outlook_catalogs *oc, const json_t *ce, extension_outlook *out, bool *known,
                          olm_error *err)
{
    memset(out, 0, sizeof *out);
    *known = false;
    if (oc->error)
        return 0;
    bool *selected = calloc(oc->set.n ? oc->set.n : 1, sizeof *selected);
    resolve_catalog *cats = calloc(oc->set.n ? oc->set.n : 1, sizeof *cats);
    int rc = selected && cats ? 0 : cluster_error(err, CLI_EXIT_FAILED, "out of memory");
    size_t n = 0;
    if (rc == 0 && select_for(oc, ce, selected) == 0 && pick(oc, selected, cats, &n)) {
        extension_spec s;
        extension_spec_from_object(ce, &s);
        resolve_installed buf;
        resolve_request req = {s.package, s.version, s.channels, s.nchannels,
                               s.self_certified ? RESOLVE_POLICY_SELF_CERTIFIED : RESOLVE_POLICY_CATALOG_PROVIDED,
                               extension_installed(ce, &buf)};
        if (extension_outlook_compute(&req, cats, n, out, err) < 0)
            rc = CLI_EXIT_FAILED;
        else
            *known = true;
    }
    free(selected);
    free(cats);
    return rc;
}

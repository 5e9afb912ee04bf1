/* upgradeable_reconcile_inputs: what the upgrade check reads from the cluster — the
 * cluster version, the ClusterExtensions and their install record Secrets — turned into
 * upgradeable_extension rows, plus the fail-closed conditions for a read that failed.
 *
 * The record is decoded here (base64 + jansson) rather than through install_record.h so
 * that this check only depends on the three fields it needs and keeps working while the
 * record grows other fields. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "install_record.h"
#include "olm_array.h"
#include "olm_base64.h"
#include "strbuf.h"
#include "upgradeable_internal.h"
#include "upgradeable_reconciler.h"

#define PAGE_SIZE 100 /* one page is what a pass holds whole at a time */

/* ------------------------------------------------------------ record decoding */

int upgradeable_record_from_secret(const json_t *secret, char **extension, char **bundle, char **properties,
                                   olm_error *err)
{
    *extension = *bundle = *properties = NULL;
    const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), "record.json"));
    if (!b64)
        return olm_error_set(err, "no data[\"record.json\"]");
    /* Padding optional: this check reads what it can rather than judging the writer. */
    size_t len = 0;
    char *text = olm_base64_decode(b64, strlen(b64), OLM_BASE64_UNPADDED, &len, err);
    if (!text)
        return olm_error_set(err, errno == ENOMEM ? "out of memory" : "data[\"record.json\"] is not valid base64");
    json_error_t jerr;
    json_t *rec = json_loadb(text, len, 0, &jerr);
    free(text);
    if (!json_is_object(rec)) {
        json_decref(rec);
        return olm_error_set(err, "record.json is not a JSON object: %s", rec ? "wrong type" : jerr.text);
    }
    const char *ext = json_string_value(json_object_get(rec, "extension"));
    if (!ext) /* fall back to the owner label every record carries */
        ext = json_string_value(
            json_object_get(json_object_get(json_object_get(secret, "metadata"), "labels"), OWNER_NAME_LABEL));
    const char *bname = json_string_value(json_object_get(json_object_get(rec, "bundle"), "name"));
    json_t *props = json_object_get(rec, "properties");
    int rc = 0;
    if (!ext || !*ext)
        rc = olm_error_set(err, "record.json names no extension");
    else if (!bname)
        rc = olm_error_set(err, "record.json has no bundle.name");
    else if (props && !json_is_null(props) && !json_is_string(props) && !json_is_array(props))
        rc = olm_error_set(err, "record.json \"properties\" is neither text nor an array");
    if (rc == 0) {
        *extension = strdup(ext);
        *bundle = strdup(bname);
        if (json_is_string(props)) /* the verbatim olm.properties text (install_record.h) */
            *properties = strndup(json_string_value(props), json_string_length(props));
        else if (json_is_array(props)) /* tolerated; number texts may be normalised */
            *properties = upgradeable_properties_from_json(props);
        if (!*extension || !*bundle || (props && (json_is_string(props) || json_is_array(props)) && !*properties)) {
            free(*extension);
            free(*bundle);
            free(*properties);
            *extension = *bundle = *properties = NULL;
            rc = olm_error_set(err, "out of memory");
        }
    }
    json_decref(rec);
    return rc;
}

/* ------------------------------------------------------------ reading the cluster */

/* Takes ownership of s (NULL allowed: out of memory). */
static const char *keep(upgradeable_inputs *in, char *s)
{
    if (!s)
        return NULL;
    if (OLM_ARRAY_RESERVE(in->strings, in->strings_cap, in->nstrings + 1) < 0) {
        free(s);
        return NULL;
    }
    in->strings[in->nstrings++] = s;
    return s;
}

/* What a pass keeps of a listed object: only what upgradeable_inputs_match reads, so a
 * thousand ClusterExtensions and records are not all held whole (status, managedFields)
 * while the pass runs.  A new reference, NULL when out of memory. */
typedef json_t *(*slim_fn)(const json_t *item);

static json_t *copy_path(json_t *to, const json_t *from, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(from, a), b);
    if (!v)
        return to;
    json_t *sub = json_object_get(to, a);
    if (!sub) {
        if (json_object_set_new(to, a, json_object()) != 0)
            return NULL;
        sub = json_object_get(to, a);
    }
    return json_object_set(sub, b, v) == 0 ? to : NULL;
}

json_t *upgradeable_slim_extension(const json_t *ce)
{
    json_t *k = json_object();
    if (k && !copy_path(k, ce, "metadata", "name")) {
        json_decref(k);
        return NULL;
    }
    return k;
}

json_t *upgradeable_slim_record(const json_t *secret)
{
    json_t *k = json_object();
    if (k && (!copy_path(k, secret, "metadata", "labels") || !copy_path(k, secret, "data", "record.json"))) {
        json_decref(k);
        return NULL;
    }
    return k;
}

bool upgradeable_copy_unchanged(bool listed, const json_t *held, const json_t *kept)
{
    return listed && held && kept && json_equal(held, kept);
}

/* Every page of a list, what `slim` keeps of each item appended to *items (created here). */
static int list_all(kube_client *c, const char *api_version, const char *kind, const char *ns, const char *selector,
                    slim_fn slim, json_t **items, olm_error *err)
{
    *items = json_array();
    if (!*items)
        return olm_error_set(err, "out of memory");
    char *cont = NULL;
    int rc;
    do {
        kube_list_options lo = {.label_selector = selector, .limit = PAGE_SIZE, .continue_token = cont};
        json_t *page = NULL;
        rc = kube_list(c, api_version, kind, ns, &lo, &page, err);
        free(cont);
        cont = NULL;
        if (rc < 0)
            break;
        size_t i;
        json_t *it;
        json_array_foreach (json_object_get(page, "items"), i, it) {
            if (rc == 0 && json_array_append_new(*items, slim(it)) < 0)
                rc = olm_error_set(err, "out of memory");
        }
        const char *next = json_string_value(json_object_get(json_object_get(page, "metadata"), "continue"));
        if (rc == 0 && next && *next && !(cont = strdup(next)))
            rc = olm_error_set(err, "out of memory");
        json_decref(page);
    } while (rc == 0 && cont);
    free(cont);
    if (rc < 0) {
        json_decref(*items);
        *items = NULL;
    }
    return rc;
}

static int read_version(kube_client *c, const upgradeable_reconcile_opts *o, upgradeable_inputs *out)
{
    if (o && o->skip_cluster_version)
        return 0;
    if (o && o->cluster_version_override && *o->cluster_version_override)
        return (out->cluster_version = strdup(o->cluster_version_override)) ? 0 : -1;
    json_t *cv = NULL;
    olm_error kerr;
    int rc = kube_get(c, UPGRADEABLE_OPENSHIFT_API, "ClusterVersion", NULL, "version", &cv, &kerr);
    const char *v = json_string_value(json_object_get(json_object_get(json_object_get(cv, "status"), "desired"),
                                                      "version"));
    strbuf why = STRBUF_INIT;
    int wr = 0;
    if (rc == KUBE_NOT_FOUND)
        wr = strbuf_puts(&why, "ClusterVersion \"version\" not found");
    else if (rc < 0)
        wr = strbuf_printf(&why, "cannot read ClusterVersion \"version\": %s", kerr.msg);
    else if (!v || !*v)
        wr = strbuf_puts(&why, "ClusterVersion \"version\" has no status.desired.version");
    else if (!(out->cluster_version = strdup(v)))
        wr = -1;
    json_decref(cv);
    if (wr == 0 && why.len && !(out->version_error = strbuf_detach(&why)))
        wr = -1;
    strbuf_free(&why);
    return wr;
}

/* Each record Secret decoded once, found by the extension it names.  The pass used to decode
 * every Secret again for every ClusterExtension: n x n base64 + JSON decodes, which at a
 * thousand extensions was most of operator-controller's CPU during an install burst. */
typedef struct record_row {
    char *bundle, *properties; /* NULL for a bad Secret (properties also when it has none) */
    bool bad;                  /* its owner cannot be told which bundle is installed */
} record_row;

typedef struct record_index {
    json_t *by_name; /* extension name -> integer index into rows (the first Secret for it) */
    record_row *rows;
    size_t n;
} record_index;

static void record_index_free(record_index *x)
{
    for (size_t i = 0; i < x->n; i++) {
        free(x->rows[i].bundle);
        free(x->rows[i].properties);
    }
    free(x->rows);
    json_decref(x->by_name);
    memset(x, 0, sizeof *x);
}

/* A Secret counts for the extension its record names; one that cannot be read counts, as a
 * failed lookup, for the extension its owner label names.  When several Secrets count for
 * one extension the first in list order wins (as the scan per extension did). */
static int record_index_build(const json_t *secrets, record_index *x)
{
    memset(x, 0, sizeof *x);
    size_t total = json_array_size(secrets);
    x->by_name = json_object();
    x->rows = calloc(total ? total : 1, sizeof *x->rows);
    if (!x->by_name || !x->rows)
        return -1;
    size_t i;
    json_t *s;
    json_array_foreach (secrets, i, s) {
        char *ext = NULL, *bundle = NULL, *props = NULL;
        olm_error rerr;
        const char *name;
        bool bad = upgradeable_record_from_secret(s, &ext, &bundle, &props, &rerr) < 0;
        if (bad) {
            if (strcmp(rerr.msg, "out of memory") == 0)
                return -1;
            name = json_string_value(
                json_object_get(json_object_get(json_object_get(s, "metadata"), "labels"), OWNER_NAME_LABEL));
        } else {
            name = ext;
        }
        if (!name || json_object_get(x->by_name, name)) { /* nobody's, or not the first */
            free(ext);
            free(bundle);
            free(props);
            continue;
        }
        record_row *row = &x->rows[x->n];
        *row = (record_row){.bundle = bundle, .properties = props, .bad = bad};
        int rc = json_object_set_new(x->by_name, name, json_integer((json_int_t)x->n));
        free(ext);
        x->n++; /* the row is the index's now, whatever happened to the key */
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The record of extension `name` into *e: *found set when there is one. */
static int find_record(upgradeable_inputs *out, const record_index *x, const char *name, upgradeable_extension *e,
                       bool *found)
{
    const json_t *at = json_object_get(x->by_name, name);
    *found = at != NULL;
    if (!at)
        return 0;
    const record_row *row = &x->rows[json_integer_value(at)];
    if (row->bad) {
        e->lookup_failed = true;
        e->bundle = "";
        return 0;
    }
    if (!(e->bundle = keep(out, strdup(row->bundle))))
        return -1;
    e->properties = row->properties ? keep(out, strdup(row->properties)) : NULL;
    return row->properties && !e->properties ? -1 : 0;
}

/* The installed revision `rv` (a slim copy) into *e. */
static int from_revision(upgradeable_inputs *out, const json_t *rv, upgradeable_extension *e)
{
    const char *b = json_string_value(json_object_get(rv, "b"));
    const json_t *p = json_object_get(rv, "p");
    if (!(e->bundle = keep(out, strdup(b ? b : ""))))
        return -1;
    e->properties = json_is_string(p) ? keep(out, strndup(json_string_value(p), json_string_length(p))) : NULL;
    return json_is_string(p) && !e->properties ? -1 : 0;
}

int upgradeable_inputs_match(const json_t *ces, const json_t *secrets, upgradeable_inputs *out)
{
    json_t *none = json_array();
    int rc = none ? upgradeable_inputs_match_revisions(ces, secrets, none, out) : -1;
    json_decref(none);
    return rc;
}

int upgradeable_inputs_match_revisions(const json_t *ces, const json_t *secrets, const json_t *revisions,
                                       upgradeable_inputs *out)
{
    bool secrets_ok = secrets != NULL, revisions_ok = revisions != NULL;
    record_index x = {0};
    int rc = secrets_ok ? record_index_build(secrets, &x) : 0;
    json_t *installed = revisions_ok ? upgradeable_installed_revisions(revisions) : json_object();
    if (!installed)
        rc = -1;
    size_t nces = json_array_size(ces);
    if (rc == 0 && nces && !(out->exts = calloc(nces, sizeof *out->exts)))
        rc = -1;
    size_t i;
    json_t *ce;
    json_array_foreach (ces, i, ce) {
        if (rc < 0)
            break;
        const char *name = json_string_value(json_object_get(json_object_get(ce, "metadata"), "name"));
        if (!name)
            continue;
        upgradeable_extension *e = &out->exts[out->n];
        memset(e, 0, sizeof *e);
        bool found = !secrets_ok || !revisions_ok;
        const json_t *rv = json_object_get(installed, name);
        if (rv) {
            found = true;
            if (from_revision(out, rv, e) < 0) {
                rc = -1;
                break;
            }
        } else if (!secrets_ok || !revisions_ok) {
            e->lookup_failed = true;
            e->bundle = "";
        } else if (find_record(out, &x, name, e, &found) < 0) {
            rc = -1;
            break;
        }
        if (!found) /* not installed yet: upstream skips it silently */
            continue;
        if (!(e->name = keep(out, strdup(name))))
            rc = -1;
        else
            out->n++;
    }
    record_index_free(&x);
    json_decref(installed);
    return rc;
}

int upgradeable_inputs_read(kube_client *c, const upgradeable_reconcile_opts *o, upgradeable_inputs *out,
                            olm_error *err)
{
    memset(out, 0, sizeof *out);
    const char *ns = o && o->system_namespace && *o->system_namespace ? o->system_namespace
                                                                       : UPGRADEABLE_DEFAULT_SYSTEM_NAMESPACE;
    json_t *ces = NULL, *secrets = NULL;
    olm_error kerr;
    int rc = read_version(c, o, out);
    if (rc == 0 && list_all(c, "olm.operatorframework.io/v1", "ClusterExtension", NULL, NULL, upgradeable_slim_extension, &ces, &kerr) < 0) {
        strbuf why = STRBUF_INIT;
        if (strbuf_printf(&why, "cannot list ClusterExtensions: %s", kerr.msg) < 0 ||
            !(out->list_error = strbuf_detach(&why)))
            rc = -1;
        strbuf_free(&why);
    }
    /* A failed Secret list leaves secrets NULL: every extension is then a failed lookup. */
    if (rc == 0 && ces && list_all(c, "v1", "Secret", ns, INSTALL_RECORD_LABEL "=true", upgradeable_slim_record, &secrets, &kerr) != 0)
        secrets = NULL;
    /* BoxcutterRuntime: the revisions too; an API not served is none, another failure leaves
     * revisions NULL (every extension without an installed revision a failed lookup). */
    json_t *revisions = NULL;
    if (rc == 0 && ces && o && o->revisions) {
        int lrc = list_all(c, "olm.operatorframework.io/v1", "ClusterObjectSet", NULL, "olm.operatorframework.io/owner-name",
                           upgradeable_slim_revision, &revisions, &kerr);
        if (lrc == KUBE_NOT_FOUND && !(revisions = json_array()))
            rc = -1;
    } else if (rc == 0 && ces && !(revisions = json_array())) {
        rc = -1;
    }
    if (rc == 0 && ces)
        rc = upgradeable_inputs_match_revisions(ces, secrets, revisions, out);
    json_decref(ces);
    json_decref(secrets);
    json_decref(revisions);
    if (rc < 0) {
        upgradeable_inputs_free(out);
        return olm_error_set(err, "upgradeable: out of memory");
    }
    return 0;
}

int upgradeable_inputs_from_lists(kube_client *c, const upgradeable_reconcile_opts *o, const json_t *ces,
                                  const json_t *secrets, const json_t *revisions, upgradeable_inputs *out,
                                  olm_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = read_version(c, o, out);
    if (rc == 0)
        rc = revisions ? upgradeable_inputs_match_revisions(ces, secrets, revisions, out)
                       : upgradeable_inputs_match(ces, secrets, out);
    if (rc < 0) {
        upgradeable_inputs_free(out);
        return olm_error_set(err, "upgradeable: out of memory");
    }
    return 0;
}

void upgradeable_inputs_free(upgradeable_inputs *in)
{
    for (size_t i = 0; i < in->nstrings; i++)
        free(in->strings[i]);
    free(in->strings);
    free(in->exts);
    free(in->cluster_version);
    free(in->version_error);
    free(in->list_error);
    memset(in, 0, sizeof *in);
}

/* ------------------------------------------------------------ fail-closed conditions */

static int set_cond(upgradeable_condition *c, const char *type, const char *status, const char *reason,
                    const char *message)
{
    free(c->reason);
    free(c->message);
    c->type = type;
    c->status = status;
    c->reason = strdup(reason);
    c->message = strdup(message);
    return c->reason && c->message ? 0 : -1;
}

/* The read failed before the check could run: all three conditions fail closed, the
 * same shape upgradeable_check gives a bad cluster version (library-go's merge:
 * reason "InstalledOLMOperators_<reason>", message lines prefixed with the type). */
static int fail_closed(upgradeable_result *r, const char *reason, const char *message)
{
    strbuf co_reason = STRBUF_INIT, co_msg = STRBUF_INIT;
    int rc = strbuf_printf(&co_reason, "InstalledOLMOperators_%s", reason);
    for (const char *line = message; rc == 0 && line;) {
        const char *nl = strchr(line, '\n');
        int n = nl ? (int)(nl - line) : (int)strlen(line);
        rc = strbuf_printf(&co_msg, "%s%s: %.*s", co_msg.len ? "\n" : "", UPGRADEABLE_INTERMEDIATE_TYPE, n, line);
        line = nl ? nl + 1 : NULL;
    }
    if (rc == 0)
        rc = set_cond(&r->intermediate, UPGRADEABLE_INTERMEDIATE_TYPE, "False", reason, message);
    if (rc == 0)
        rc = set_cond(&r->degraded, UPGRADEABLE_DEGRADED_TYPE, "True", "SyncError", message);
    if (rc == 0)
        rc = set_cond(&r->upgradeable, "Upgradeable", "False", strbuf_str(&co_reason), strbuf_str(&co_msg));
    if (rc == 0) {
        free(r->errors);
        rc = (r->errors = strdup(message)) ? 0 : -1;
    }
    strbuf_free(&co_reason);
    strbuf_free(&co_msg);
    return rc;
}

int upgradeable_inputs_check(const upgradeable_inputs *in, const char *target, upgradeable_result *out,
                             olm_error *err)
{
    /* --to does not need the cluster version; the reconciler always does. */
    bool need_version = !target;
    int rc = target ? upgradeable_check_target(in->exts, in->n, target, out, err)
                    : upgradeable_check(in->exts, in->n, in->cluster_version ? in->cluster_version : "", out, err);
    if (rc < 0)
        return -1;
    strbuf msg = STRBUF_INIT;
    int wr = 0;
    if (need_version && !in->cluster_version) {
        wr = strbuf_printf(&msg, "Encountered errors while checking compatibility with the next minor version of "
                                 "OpenShift: %s", in->version_error ? in->version_error : "no cluster version");
        if (wr == 0)
            wr = fail_closed(out, "ErrorCheckingOperatorCompatibility", strbuf_str(&msg));
    } else if (in->list_error) {
        wr = fail_closed(out, "FailureGettingExtensionMetadata", in->list_error);
    }
    strbuf_free(&msg);
    if (wr < 0) {
        upgradeable_result_free(out);
        return olm_error_set(err, "upgradeable: out of memory");
    }
    return 0;
}

/* objectset_object: one object of a revision, as boxcutter v0.14.0's ObjectEngine (Reconcile
 * and Teardown) with operator-controller's options: field manager, managed-by value and
 * annotation prefix all "olm.operatorframework.io", native controller ownerReferences.
 *
 * Who controls the live object decides (objects.go's ctrlSituation):
 *   this COS                -> apply (forced: our fields win back from whoever took them)
 *   a sibling revision      -> its revision annotation higher: Progressed (left alone);
 *                              lower: adopted; equal: Collision
 *   another controller      -> Collision, unless collisionProtection None (adopted)
 *   no controller           -> Collision under Prevent or when it carries a revision
 *                              annotation (another revision's leftover); else adopted
 * Adopting keeps the other ownerReferences, none of them a controller any more, and adds ours.
 *
 * Where we differ: an object we control is applied (forced) unless everything we would send
 * is already there (subset() below), instead of boxcutter's comparison of field ownership;
 * a new object is created by a
 * server-side apply instead of a create followed by a managed-fields migration (the result
 * is the same: one Apply entry of our field manager); and teardown deletes an object only when
 * this COS controls it (upstream deletes one whose revision annotation equals ours whoever
 * controls it, which lets an archived revision delete an object another revision of the same
 * number won in a collision).  Upstream reads the objects from its tracking cache; here a pass
 * reads them from the apiserver, except one found in order at the version its watch still
 * reports (objectset_watches_unchanged, objectset_watch.h). */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "objectset_internal.h"
#include "objectset_watch.h"

#define MANAGED_BY_LABEL "app.kubernetes.io/managed-by"
#define OWNER_NAME_LABEL "olm.operatorframework.io/owner-name"
#define REVISION_ANNOTATION "olm.operatorframework.io/revision"

void objectset_object_result_free(objectset_object_result *r)
{
    json_decref(r->obj);
    probe_result_free(&r->probe);
    free(r->collision);
    memset(r, 0, sizeof *r);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static json_t *meta_obj(json_t *obj, const char *k)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!md) {
        md = json_object();
        json_object_set_new(obj, "metadata", md);
    }
    json_t *m = json_object_get(md, k);
    if (!json_is_object(m)) {
        m = json_object();
        json_object_set_new(md, k, m);
    }
    return m;
}

/* The ownerReference that points at the COS. */
static json_t *cos_owner_ref(const json_t *cos, bool controller)
{
    const json_t *md = json_object_get(cos, "metadata");
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", OBJECTSET_API_VERSION, "kind", OBJECTSET_KIND,
                     "name", str(md, "name"), "uid", str(md, "uid"), "controller", controller,
                     "blockOwnerDeletion", true);
}

static bool refers_to_cos(const json_t *ref, const json_t *cos)
{
    const char *av = str(ref, "apiVersion");
    const char *slash = strchr(av, '/');
    size_t glen = slash ? (size_t)(slash - av) : 0;
    return glen == strlen("olm.operatorframework.io") && strncmp(av, "olm.operatorframework.io", glen) == 0 &&
           strcmp(str(ref, "kind"), OBJECTSET_KIND) == 0 &&
           strcmp(str(ref, "name"), kube_object_string(cos, "metadata.name") ?: "") == 0 &&
           strcmp(str(ref, "uid"), kube_object_string(cos, "metadata.uid") ?: "") == 0;
}

/* The controller ownerReference of obj, or NULL. */
static const json_t *controller_ref(const json_t *obj)
{
    size_t i;
    const json_t *r;
    json_array_foreach(kube_object_path(obj, "metadata") ? json_object_get(kube_object_path(obj, "metadata"),
                                                                           "ownerReferences")
                                                         : NULL,
                       i, r) if (json_is_true(json_object_get(r, "controller"))) return r;
    return NULL;
}

static json_int_t object_revision(const json_t *obj)
{
    const json_t *a = json_object_get(kube_object_path(obj, "metadata"), "annotations");
    const char *s = json_string_value(json_object_get(a, REVISION_ANNOTATION));
    return s && *s ? strtoll(s, NULL, 10) : 0;
}

static bool has_revision_annotation(const json_t *obj)
{
    const json_t *a = json_object_get(kube_object_path(obj, "metadata"), "annotations");
    return json_object_get(a, REVISION_ANNOTATION) != NULL;
}

typedef enum { SIT_IS, SIT_SIBLING, SIT_UNKNOWN, SIT_NONE } ctrl_sit;

static ctrl_sit situation(const objectset_target *t, const json_t *actual)
{
    const json_t *ref = controller_ref(actual);
    if (!ref)
        return SIT_NONE;
    if (refers_to_cos(ref, t->cos))
        return SIT_IS;
    for (size_t i = 0; i < t->nsiblings; i++)
        if (strcmp(str(ref, "uid"), t->sibling_uids[i]) == 0)
            return SIT_SIBLING;
    return SIT_UNKNOWN;
}

/* desired + labels, revision annotation and, when adopting, actual's ownerReferences released;
 * then our controller reference.  A new object, or NULL. */
static json_t *prepare(const objectset_target *t, const json_t *desired, const json_t *adopt_from)
{
    json_t *o = json_deep_copy(desired);
    if (!o)
        return NULL;
    json_t *labels = meta_obj(o, "labels");
    json_object_set_new(labels, OWNER_NAME_LABEL, json_string(t->owner_name));
    json_object_set_new(labels, MANAGED_BY_LABEL, json_string(OBJECTSET_FIELD_MANAGER));
    char rev[32];
    snprintf(rev, sizeof rev, "%lld", (long long)t->revision);
    json_object_set_new(meta_obj(o, "annotations"), REVISION_ANNOTATION, json_string(rev));
    json_t *md = json_object_get(o, "metadata");
    json_t *refs = json_array();
    const json_t *src = adopt_from ? json_object_get(json_object_get(adopt_from, "metadata"), "ownerReferences")
                                   : json_object_get(md, "ownerReferences");
    size_t i;
    const json_t *r;
    json_array_foreach(src, i, r) {
        if (refers_to_cos(r, t->cos))
            continue; /* SetControllerReference replaces ours */
        json_t *c = json_deep_copy(r);
        if (adopt_from)
            json_object_set_new(c, "controller", json_false()); /* ReleaseController */
        json_array_append_new(refs, c);
    }
    json_array_append_new(refs, cos_owner_ref(t->cos, true));
    json_object_set_new(md, "ownerReferences", refs);
    json_object_del(md, "resourceVersion");
    return o;
}

/* Whether everything `want` says is already in `have`: objects key by key (`have` may hold
 * more: defaults, status, other managers' fields), arrays element by element with the same
 * length, numbers by value, the rest equal.  The comparison that spares an apply (boxcutter's
 * comparator answers "Idle" then): a ~1 MB CRD re-applied on every pass costs the apiserver
 * seconds. */
static bool subset(const json_t *want, const json_t *have)
{
    if (json_is_object(want)) {
        if (!json_is_object(have))
            return false;
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)want, k, v) {
            if (!subset(v, json_object_get(have, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(have) || json_array_size(want) != json_array_size(have))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!subset(json_array_get(want, i), json_array_get(have, i)))
                return false;
        return true;
    }
    if (json_is_number(want) && json_is_number(have))
        return json_number_value(want) == json_number_value(have);
    return have && json_equal(want, have);
}

static int apply(const objectset_target *t, json_t *obj, bool force, const char *what, json_t **out, olm_error *err)
{
    olm_error aerr;
    if (kube_apply(t->client, obj, OBJECTSET_FIELD_MANAGER, force, NULL, out, &aerr) != 0)
        return olm_error_set(err, "%s: %.1900s", what, aerr.msg);
    objectset_watches_note_write(t->watches, *out); /* its watch event queues no pass */
    return 0;
}

static int run_probe(const objectset_target *t, objectset_object_result *res, olm_error *err)
{
    return probe_user(t->probes, res->obj, &res->probe, err);
}

/* boxcutter's collision report, shortened: the object, the action and the conflicting owner. */
static char *describe_collision(const json_t *actual, const json_t *ref)
{
    strbuf sb = STRBUF_INIT;
    const json_t *md = json_object_get(actual, "metadata");
    strbuf_printf(&sb, "Object %s.%s %s/%s\nAction: \"Collision\"\n", str(actual, "kind"), str(actual, "apiVersion"),
                  str(md, "namespace"), str(md, "name"));
    if (ref)
        strbuf_printf(&sb, "Conflicting Owner: %s %s/%s (uid %s)\n", str(ref, "apiVersion"), str(ref, "kind"),
                      str(ref, "name"), str(ref, "uid"));
    else
        strbuf_puts(&sb, "Conflicting Owner: nil\n");
    return strbuf_detach(&sb);
}

/* The verdict key of `desired` in this set (objectset_watches_verdict): the set's uid and
 * generation (its phases and probes), then the object's identity. */
static void verdict_key(const objectset_target *t, const json_t *desired, strbuf *key)
{
    const json_t *md = json_object_get(desired, "metadata");
    strbuf_printf(key, "%s\n%lld\n%s\n%s\n%s\n%s", kube_object_string(t->cos, "metadata.uid") ?: "",
                  (long long)json_integer_value(kube_object_path(t->cos, "metadata.generation")),
                  str(desired, "apiVersion"), str(desired, "kind"), str(md, "namespace"), str(md, "name"));
}

/* After a pass found the object in order: remember the version when its probe passed (a
 * failing probe's message needs the object, which is read again). */
static int found_in_order(const objectset_target *t, const char *key, objectset_object_result *out, int rc)
{
    if (rc == 0 && out->probe.status == PROBE_TRUE)
        objectset_watches_verdict(t->watches, key, out->obj);
    else
        objectset_watches_verdict_drop(t->watches, key);
    return rc;
}

static int reconcile_read(const objectset_target *t, const json_t *desired, objectset_cp cp, const char *key,
                          objectset_object_result *out, olm_error *err);

int objectset_object_reconcile(const objectset_target *t, const json_t *desired, objectset_cp cp,
                               objectset_object_result *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    strbuf key = STRBUF_INIT;
    if (t->watches)
        verdict_key(t, desired, &key);
    /* In order at a version the watch still reports: nothing to read, apply or probe. */
    if (t->watches && objectset_watches_unchanged(t->watches, strbuf_str(&key))) {
        strbuf_free(&key);
        out->action = OBJECTSET_UPDATED;
        out->probe.status = PROBE_TRUE;
        return 0;
    }
    int rc = reconcile_read(t, desired, cp, t->watches ? strbuf_str(&key) : NULL, out, err);
    strbuf_free(&key);
    return rc;
}

/* objectset_object_reconcile with the object read from the apiserver. */
static int reconcile_read(const objectset_target *t, const json_t *desired, objectset_cp cp, const char *key,
                          objectset_object_result *out, olm_error *err)
{
    const json_t *md = json_object_get(desired, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    json_t *actual = NULL;
    olm_error gerr;
    int g = kube_get(t->client, str(desired, "apiVersion"), str(desired, "kind"), ns && *ns ? ns : NULL,
                     str(md, "name"), &actual, &gerr);
    if (g == KUBE_NOT_FOUND) {
        json_t *o = prepare(t, desired, NULL);
        if (!o)
            return olm_error_set(err, "out of memory");
        int rc = apply(t, o, false, "creating resource", &out->obj, err);
        json_decref(o);
        if (rc != 0)
            return -1;
        out->action = OBJECTSET_CREATED;
        return found_in_order(t, key, out, run_probe(t, out, err));
    }
    if (g != 0)
        return olm_error_set(err, "getting object: %s", gerr.msg);
    ctrl_sit sit = situation(t, actual);
    json_int_t arev = object_revision(actual);
    bool adopt = false, collide = false;
    switch (sit) {
    case SIT_UNKNOWN:
        collide = cp != OBJECTSET_CP_NONE;
        adopt = !collide;
        break;
    case SIT_NONE:
        collide = cp == OBJECTSET_CP_PREVENT || has_revision_annotation(actual);
        adopt = !collide;
        break;
    case SIT_SIBLING:
        if (arev > t->revision) {
            out->action = OBJECTSET_PROGRESSED;
            out->obj = actual;
            return run_probe(t, out, err);
        }
        collide = arev == t->revision;
        adopt = !collide;
        break;
    case SIT_IS:
        break;
    }
    if (collide) {
        out->action = OBJECTSET_COLLISION;
        out->collision = describe_collision(actual, controller_ref(actual));
        out->obj = actual;
        return run_probe(t, out, err);
    }
    json_t *o = prepare(t, desired, adopt ? actual : NULL);
    if (!o) {
        json_decref(actual);
        return olm_error_set(err, "out of memory");
    }
    if (!adopt && subset(o, actual)) {
        json_decref(o);
        out->action = OBJECTSET_UPDATED; /* boxcutter's Idle: nothing to change */
        out->obj = actual;
        return found_in_order(t, key, out, run_probe(t, out, err));
    }
    json_decref(actual);
    int rc = apply(t, o, true, adopt ? "patching (owner change)" : "patching", &out->obj, err);
    json_decref(o);
    if (rc != 0)
        return -1;
    out->action = OBJECTSET_UPDATED;
    return found_in_order(t, key, out, run_probe(t, out, err));
}

int objectset_object_teardown(const objectset_target *t, const json_t *desired, bool *gone, olm_error *err)
{
    *gone = false;
    const json_t *md = json_object_get(desired, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    ns = ns && *ns ? ns : NULL;
    const char *av = str(desired, "apiVersion"), *kind = str(desired, "kind"), *name = str(md, "name");
    json_t *actual = NULL;
    olm_error gerr;
    int g = kube_get(t->client, av, kind, ns, name, &actual, &gerr);
    if (g == KUBE_NOT_FOUND) {
        *gone = true;
        return 0;
    }
    if (g != 0)
        return olm_error_set(err, "getting object before deletion: %s", gerr.msg);
    if (situation(t, actual) != SIT_IS) {
        /* Someone else's now (a later revision took it over): only our reference goes. */
        json_t *refs = json_array();
        size_t i;
        const json_t *r;
        bool ours = false;
        json_array_foreach(json_object_get(json_object_get(actual, "metadata"), "ownerReferences"), i, r) {
            if (refers_to_cos(r, t->cos))
                ours = true;
            else
                json_array_append(refs, (json_t *)r);
        }
        int rc = 0;
        if (ours) {
            json_t *patch = json_pack("{s:{s:o, s:s}}", "metadata", "ownerReferences", refs, "resourceVersion",
                                      kube_object_string(actual, "metadata.resourceVersion") ?: "");
            char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
            olm_error perr;
            if (!body)
                rc = olm_error_set(err, "out of memory");
            else {
                int pr = kube_patch(t->client, av, kind, ns, name, NULL, KUBE_PATCH_MERGE, body, NULL, &perr);
                if (pr != 0 && pr != KUBE_NOT_FOUND)
                    rc = olm_error_set(err, "removing owner reference: %s", perr.msg);
            }
            free(body);
            json_decref(patch);
        } else {
            json_decref(refs);
        }
        json_decref(actual);
        *gone = rc == 0;
        return rc;
    }
    kube_delete_options dopts = {.precondition_uid = kube_object_string(actual, "metadata.uid"),
                                 .precondition_resource_version = kube_object_string(actual, "metadata.resourceVersion"),
                                 .grace_period_seconds = -1};
    olm_error derr;
    int d = kube_delete(t->client, av, kind, ns, name, &dopts, &derr);
    json_decref(actual);
    if (d == KUBE_NOT_FOUND) {
        *gone = true;
        return 0;
    }
    if (d != 0)
        return olm_error_set(err, "deleting object: %s", derr.msg);
    return 0; /* asked to go; the next pass sees it gone */
}

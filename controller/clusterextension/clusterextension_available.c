/* clusterextension_available: the Available condition's input.  The applier hands every live
 * object it holds after an apply or a repair to clusterextension_observe (applier_ctx.observe):
 * the server-side apply's answer, the GET of an object that needed no repair, the reads of the
 * wait for CRDs.  Each is probed (probe.h) at once and only the verdict is kept, so Available
 * costs no request of its own.  Maintain mode applies nothing, so it reads the recorded objects
 * (what a repair would have read).  The record's order gives the order of the failure lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterextension_internal.h"
#include "kube_object.h"
#include "olm_log.h"
#include "probe.h"
#include "strbuf.h"

/* "<group>/<Kind>/<ns>/<name>": one object whatever its version (an apply of v1beta1 and a
 * record of v1 are the same object). */
static char *key_of(const char *api_version, const char *kind, const char *ns, const char *name)
{
    const char *slash = strchr(api_version ? api_version : "", '/');
    int glen = slash ? (int)(slash - api_version) : 0;
    char *key = NULL;
    if (asprintf(&key, "%.*s/%s/%s/%s", glen, slash ? api_version : "", kind ? kind : "", ns ? ns : "",
                 name ? name : "") < 0)
        return NULL;
    return key;
}

static char *key_of_object(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    return key_of(json_string_value(json_object_get(obj, "apiVersion")), json_string_value(json_object_get(obj, "kind")),
                  json_string_value(json_object_get(md, "namespace")), json_string_value(json_object_get(md, "name")));
}

/* Keeps `digest`, `line` (NULL: passes) and the content hash `content` (0: unknown) for `key`;
 * false when memory ran out. */
static bool keep(clusterextension_run *run, const char *key, uint64_t digest, const char *line, uint64_t content)
{
    if (!run->observed && !(run->observed = json_object()))
        return false;
    json_t *v = line ? json_pack("{s:I, s:s}", "d", (json_int_t)digest, "l", line)
                     : json_pack("{s:I}", "d", (json_int_t)digest);
    if (v && content && json_object_set_new(v, "h", json_integer((json_int_t)content)) != 0) {
        json_decref(v);
        return false;
    }
    return v && json_object_set_new(run->observed, key, v) == 0;
}

void clusterextension_observe(void *data, const json_t *live)
{
    clusterextension_run *run = data;
    char *key = key_of_object(live);
    uint64_t digest;
    char *line = NULL;
    bool ok = key && probe_verdict(live, &digest, &line) == 0 &&
              keep(run, key, digest, line, kube_object_content_hash(live));
    free(line);
    if (!ok && key && run->observed)
        json_object_del(run->observed, key); /* out of memory: unknown rather than an older state */
    free(key);
}

int clusterextension_probe_recorded(clusterextension_run *run)
{
    for (size_t i = 0; i < run->rec.nobjects; i++) {
        const install_object_ref *o = &run->rec.objects[i];
        const char *ns = o->namespace_ && *o->namespace_ ? o->namespace_ : NULL;
        json_t *live = NULL;
        olm_error err;
        int rc = applier_get(&run->actx, o->api_version, o->kind, ns, o->name, &live, &err);
        if (rc == KUBE_NOT_FOUND) {
            /* Nothing puts it back in maintain mode: it is not available. */
            char *key = key_of(o->api_version, o->kind, ns, o->name), *line = NULL;
            if (!key || asprintf(&line, "Object %s.%s %s/%s: not found", o->kind, o->api_version, ns ? ns : "",
                                 o->name) < 0)
                line = NULL;
            bool ok = key && line && keep(run, key, 0, line, 0);
            free(key);
            free(line);
            if (!ok)
                return -1;
            continue;
        }
        if (rc < 0) {
            olm_log(OLM_LOG_DEBUG, "clusterExtension", run->name, "probing the installed objects: %s", err.msg);
            return -1;
        }
        clusterextension_observe(run, live);
        json_decref(live);
    }
    run->probed = true;
    return 0;
}

bool clusterextension_known_unchanged(void *data, const install_object_ref *ref, uint64_t content_hash)
{
    clusterextension_run *run = data;
    drift_watcher *d = run->r->cfg.drift;
    if (!d)
        return false;
    kube_resource_info ri;
    olm_error err;
    if (kube_resolve_kind(run->r->cfg.admin, ref->api_version, ref->kind, &ri, &err) < 0)
        return false;
    char *resource = kube_resource_path(&ri, NULL, NULL, NULL, &err), *wkey = NULL;
    if (!resource)
        return false;
    bool ns = ri.namespaced && ref->namespace_ && *ref->namespace_;
    if (ns ? asprintf(&wkey, "%s/%s", ref->namespace_, ref->name) < 0 : !(wkey = strdup(ref->name)))
        wkey = NULL;
    uint64_t content = 0, probe = 0;
    char *line = NULL;
    bool same = wkey && drift_watcher_lookup(d, resource, wkey, &content, &probe, &line) == 1 && content == content_hash;
    free(resource);
    free(wkey);
    /* A failing object's line in the Available condition comes from the watch too; without
     * one (memory ran out there) the object is read after all. */
    bool probes = !run->r->cfg.no_available_condition;
    bool failing = probes && probe != PROBE_DIGEST_PASS;
    if (!same || (failing && !line)) {
        free(line);
        return false;
    }
    char *key = key_of(ref->api_version, ref->kind, ns ? ref->namespace_ : NULL, ref->name);
    bool ok = key && keep(run, key, failing ? probe : PROBE_DIGEST_PASS, failing ? line : NULL, content);
    free(key);
    free(line);
    return ok;
}

uint64_t *clusterextension_content_hashes(const clusterextension_run *run)
{
    if (!run->observed || !run->rec.nobjects)
        return NULL;
    uint64_t *h = calloc(run->rec.nobjects, sizeof *h);
    for (size_t i = 0; h && i < run->rec.nobjects; i++) {
        const install_object_ref *o = &run->rec.objects[i];
        char *key = key_of(o->api_version, o->kind, o->namespace_, o->name);
        h[i] = key ? (uint64_t)json_integer_value(json_object_get(json_object_get(run->observed, key), "h")) : 0;
        free(key);
    }
    return h;
}

int clusterextension_available(const clusterextension_run *run, bool *available, char **failures)
{
    *available = true;
    *failures = NULL;
    strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < run->rec.nobjects; i++) {
        const install_object_ref *o = &run->rec.objects[i];
        char *key = key_of(o->api_version, o->kind, o->namespace_, o->name);
        if (!key) {
            strbuf_free(&sb);
            return -1;
        }
        const char *line = json_string_value(json_object_get(json_object_get(run->observed, key), "l"));
        free(key);
        if (!line)
            continue; /* passes, or not observed */
        *available = false;
        if ((sb.len && strbuf_putc(&sb, '\n') != 0) || strbuf_puts(&sb, line) != 0) {
            strbuf_free(&sb);
            return -1;
        }
    }
    if (!*available && !(*failures = strbuf_detach(&sb)))
        return -1;
    strbuf_free(&sb);
    return 0;
}

uint64_t *clusterextension_probe_digests(const clusterextension_run *run)
{
    if (!run->probed || !run->rec.nobjects)
        return NULL;
    uint64_t *d = calloc(run->rec.nobjects, sizeof *d);
    for (size_t i = 0; d && i < run->rec.nobjects; i++) {
        const install_object_ref *o = &run->rec.objects[i];
        char *key = key_of(o->api_version, o->kind, o->namespace_, o->name);
        d[i] = key ? (uint64_t)json_integer_value(json_object_get(json_object_get(run->observed, key), "d")) : 0;
        free(key);
    }
    return d;
}

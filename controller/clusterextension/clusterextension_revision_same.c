/* clusterextension_revision_same: whether the latest revision holds the rendered bundle when
 * its stored bytes differ from ours -- the revision another operator-controller (upstream's,
 * or an older one of ours) wrote for the same bundle.  Upstream's Boxcutter.Apply would write a
 * new revision then (its check is the bytes: the Secret names and keys are their hashes);
 * taking an install over must not, so the objects are read back from the revision's Secrets
 * and compared by meaning (revision_equivalent).
 *
 * A revision's phases and Secrets are immutable, so the answer for one revision (uid) and one
 * rendering (the digest of its packed phases) never changes: it is remembered, and the Secrets
 * are read once per revision and rendering, not at every reconcile. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "clusterextension_internal.h"
#include "olm_array.h"
#include "olm_log.h"

typedef struct same_entry {
    char *extension;
    char *key; /* "<revision uid> <digest of the desired phases>" */
} same_entry;

struct clusterextension_same {
    pthread_mutex_t mu;
    same_entry *items;
    size_t n, cap;
};

clusterextension_same *clusterextension_same_new(void)
{
    clusterextension_same *s = calloc(1, sizeof *s);
    if (s && pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        s = NULL;
    }
    return s;
}

void clusterextension_same_free(clusterextension_same *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->items[i].extension);
        free(s->items[i].key);
    }
    free(s->items);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Whether `key` is remembered for `extension`; with `set`, remembers it (one entry an extension). */
static bool same_lookup(clusterextension_same *s, const char *extension, const char *key, bool set)
{
    bool hit = false;
    pthread_mutex_lock(&s->mu);
    size_t i = 0;
    while (i < s->n && strcmp(s->items[i].extension, extension) != 0)
        i++;
    if (i < s->n && strcmp(s->items[i].key, key) == 0) {
        hit = true;
    } else if (set) {
        char *k = strdup(key);
        if (k && i < s->n) {
            free(s->items[i].key);
            s->items[i].key = k;
        } else {
            char *e = k ? strdup(extension) : NULL;
            if (e && OLM_ARRAY_PUSH_SLOT(s->items, s->n, s->cap) == 0) {
                s->items[s->n - 1] = (same_entry){.extension = e, .key = k};
            } else { /* out of memory: not remembered, compared again next time */
                free(e);
                free(k);
            }
        }
    }
    pthread_mutex_unlock(&s->mu);
    return hit;
}

void clusterextension_same_forget(clusterextension_same *s, const char *extension)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->items[i].extension, extension) != 0)
            continue;
        free(s->items[i].extension);
        free(s->items[i].key);
        s->items[i] = s->items[--s->n];
        break;
    }
    pthread_mutex_unlock(&s->mu);
}

/* "<uid> <sha256 hex of the desired phases>", or NULL on out of memory. */
static char *same_key(const char *uid, const json_t *desired)
{
    char *text = json_dumps(json_object_get(json_object_get(desired, "spec"), "phases"), JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    int ok = EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) == 1;
    free(text);
    if (!ok)
        return NULL;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    char *key = NULL;
    return asprintf(&key, "%s %s", uid, hex) < 0 ? NULL : key;
}

/* The Secrets `phases` refers to, each read once.  A new array, NULL with err; *missing set
 * when one is not there (the revision cannot be read: not the same). */
static json_t *read_secrets(clusterextension_run *run, const json_t *phases, bool *missing, olm_error *err)
{
    json_t *out = json_array();
    if (!out) {
        olm_error_set(err, "out of memory");
        return NULL;
    }
    size_t i, j, k;
    const json_t *ph, *slot, *have;
    json_array_foreach(phases, i, ph) {
        json_array_foreach(json_object_get(ph, "objects"), j, slot) {
            const json_t *ref = json_object_get(slot, "ref");
            const char *name = json_string_value(json_object_get(ref, "name"));
            const char *ns = json_string_value(json_object_get(ref, "namespace"));
            if (!name || !ns)
                continue;
            bool seen = false;
            json_array_foreach(out, k, have) {
                const json_t *md = json_object_get(have, "metadata");
                seen = seen || (strcmp(json_string_value(json_object_get(md, "name")), name) == 0 &&
                                strcmp(json_string_value(json_object_get(md, "namespace")), ns) == 0);
            }
            if (seen)
                continue;
            json_t *secret = NULL;
            int rc = kube_get(run->r->cfg.admin, "v1", "Secret", ns, name, &secret, err);
            if (rc == KUBE_NOT_FOUND) {
                *missing = true;
                return out;
            }
            if (rc != 0) {
                json_decref(out);
                olm_error_wrap(err, "reading Secret %s/%s of revision", ns, name);
                return NULL;
            }
            json_array_append_new(out, secret);
        }
    }
    return out;
}

int clusterextension_revision_same(clusterextension_run *run, const revision_info *cur, const revision_built *b,
                                   olm_error *err)
{
    if (cur->archived)
        return 0;
    /* Cheap answers first: every object carries the bundle version, and collisionProtection is
     * compared as it is. */
    const char *cp = json_string_value(json_object_get(json_object_get(cur->object, "spec"), "collisionProtection"));
    const char *want_cp = json_string_value(json_object_get(json_object_get(b->cos, "spec"), "collisionProtection"));
    if (strcmp(cur->bundle_version, run->target.version ? run->target.version : "") != 0 ||
        strcmp(cp ? cp : "", want_cp ? want_cp : "") != 0)
        return 0;
    const char *uid = json_string_value(json_object_get(json_object_get(cur->object, "metadata"), "uid"));
    char *key = same_key(uid ? uid : "", b->cos);
    if (!key)
        return olm_error_set(err, "out of memory");
    if (same_lookup(run->r->same, run->name, key, false)) {
        free(key);
        return 1;
    }
    const json_t *cur_phases = json_object_get(json_object_get(cur->object, "spec"), "phases");
    bool missing = false;
    json_t *secrets = read_secrets(run, cur_phases, &missing, err);
    if (!secrets) {
        free(key);
        return -1;
    }
    int eq = 0;
    json_t *have = NULL, *want = NULL;
    olm_error rerr;
    if (!missing) {
        have = revision_phases_inline(cur_phases, secrets, &rerr);
        want = revision_phases_inline(json_object_get(json_object_get(b->cos, "spec"), "phases"), b->secrets, &rerr);
        if (!have)
            /* Unreadable: not the same, as for upstream (whose check fails on the bytes). */
            olm_log(OLM_LOG_WARN, "clusterExtension", run->name, "reading revision %s: %s", cur->name, rerr.msg);
        else if (want)
            eq = revision_equivalent(cur->object, have, b->cos, want);
    }
    if (eq < 0 || (have && !want)) {
        eq = -1;
        olm_error_set(err, "out of memory comparing revision %s", cur->name);
    }
    if (eq == 1) {
        olm_log(OLM_LOG_INFO, "clusterExtension", run->name,
                "revision %s holds bundle %s already (stored in other bytes, as another operator-controller "
                "writes it): no new revision",
                cur->name, run->target.name ? run->target.name : "");
        same_lookup(run->r->same, run->name, key, true);
    }
    json_decref(have);
    json_decref(want);
    json_decref(secrets);
    free(key);
    return eq;
}

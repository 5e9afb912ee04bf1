/* The in-memory credentials of --global-pull-secret (see oci_auth_store.h).  A mutex
 * guards the text; a lookup copies it out under the lock and parses outside it, so a
 * pull never waits on another's parsing and a rotation never tears a read. */
#include "oci_auth_store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "olm_base64.h"

struct oci_auth_store {
    pthread_mutex_t lock;
    char *json; /* NULL: nothing loaded */
    size_t len;
    bool legacy;
    char *origin;
};

oci_auth_store *oci_auth_store_new(olm_error *err)
{
    oci_auth_store *s = calloc(1, sizeof *s);
    if (!s || pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        olm_error_set(err, "out of memory");
        return NULL;
    }
    return s;
}

static void wipe(char *p, size_t n)
{
    if (p) {
        memset(p, 0, n); /* do not leave secrets in freed memory */
        free(p);
    }
}

void oci_auth_store_free(oci_auth_store *s)
{
    if (!s)
        return;
    wipe(s->json, s->len);
    free(s->origin);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int oci_auth_store_set(oci_auth_store *s, const char *json, size_t len, bool legacy, const char *origin,
                       olm_error *err)
{
    /* check the shape now, so that a bad Secret is reported when it arrives */
    oci_credentials probe;
    if (oci_credentials_from_json(json, len, legacy, origin, "check.invalid", &probe, err) != 0)
        return -1;
    oci_credentials_free(&probe);
    char *copy = malloc(len + 1), *o = strdup(origin ? origin : "pull secret");
    if (!copy || !o) {
        free(copy);
        free(o);
        return olm_error_set(err, "out of memory");
    }
    memcpy(copy, json, len);
    copy[len] = '\0';
    pthread_mutex_lock(&s->lock);
    char *old = s->json, *old_origin = s->origin;
    size_t old_len = s->len;
    s->json = copy;
    s->len = len;
    s->legacy = legacy;
    s->origin = o;
    pthread_mutex_unlock(&s->lock);
    wipe(old, old_len);
    free(old_origin);
    return 0;
}

int oci_auth_store_set_secret(oci_auth_store *s, const json_t *secret, const char *origin, olm_error *err)
{
    const char *type = json_string_value(json_object_get(secret, "type"));
    json_t *data = json_object_get(secret, "data");
    bool legacy;
    const char *key;
    if (type && strcmp(type, "kubernetes.io/dockerconfigjson") == 0) {
        legacy = false;
        key = ".dockerconfigjson";
    } else if (type && strcmp(type, "kubernetes.io/dockercfg") == 0) {
        legacy = true;
        key = ".dockercfg";
    } else {
        return olm_error_set(err, "%s: type is \"%s\"; want kubernetes.io/dockerconfigjson (or kubernetes.io/dockercfg)",
                             origin, type ? type : "");
    }
    const char *b64 = json_string_value(json_object_get(data, key));
    if (!b64)
        return olm_error_set(err, "%s: data[\"%s\"] is missing", origin, key);
    size_t len = 0;
    char *text = olm_base64_decode(b64, strlen(b64), 0, &len, err);
    if (!text)
        return olm_error_wrap(err, "%s: data[\"%s\"]", origin, key);
    int rc = oci_auth_store_set(s, text, len, legacy, origin, err);
    wipe(text, len);
    return rc;
}

void oci_auth_store_clear(oci_auth_store *s)
{
    pthread_mutex_lock(&s->lock);
    char *old = s->json;
    size_t old_len = s->len;
    s->json = NULL;
    s->len = 0;
    pthread_mutex_unlock(&s->lock);
    wipe(old, old_len);
}

bool oci_auth_store_loaded(oci_auth_store *s)
{
    pthread_mutex_lock(&s->lock);
    bool loaded = s->json != NULL;
    pthread_mutex_unlock(&s->lock);
    return loaded;
}

int oci_auth_store_lookup(oci_auth_store *s, const char *registry, oci_credentials *out, olm_error *err)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->lock);
    size_t len = s->len;
    bool legacy = s->legacy;
    char *copy = s->json ? malloc(len + 1) : NULL;
    char *origin = s->json && s->origin ? strdup(s->origin) : NULL;
    bool loaded = s->json != NULL;
    if (copy)
        memcpy(copy, s->json, len + 1);
    pthread_mutex_unlock(&s->lock);
    int rc = 0;
    if (loaded && (!copy || !origin))
        rc = olm_error_set(err, "out of memory");
    else if (loaded)
        rc = oci_credentials_from_json(copy, len, legacy, origin, registry, out, err);
    wipe(copy, len);
    free(origin);
    return rc;
}

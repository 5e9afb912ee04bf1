/* kube_token: TokenRequest for a ServiceAccount (see kube_verbs.h), and the RFC 3339
 * parser its expirationTimestamp needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_verbs.h"

int kube_parse_time(const char *s, time_t *out)
{
    if (!s)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    if (*p == '.') /* fractional seconds: dropped */
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int hh = 0, mm = 0;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = t - off;
    return 0;
}

int kube_token_request(kube_client *c, const char *ns, const char *sa, int64_t expiration_seconds,
                       const char *const *audiences, char **token, time_t *expires, olm_error *err)
{
    *token = NULL;
    if (expiration_seconds < 600)
        return olm_error_set(err, "TokenRequest for %s/%s: expirationSeconds %lld is below the API server's "
                             "minimum of 600 (10 minutes)", ns, sa, (long long)expiration_seconds);
    kube_resource_info ri;
    kube_builtin_kind("v1", "ServiceAccount", &ri);
    char *path = kube_resource_path(&ri, ns, sa, "token", err);
    if (!path)
        return KUBE_ERROR;
    json_t *spec = json_pack("{s:I}", "expirationSeconds", (json_int_t)expiration_seconds);
    json_t *auds = json_array();
    int bad = !spec || !auds;
    for (size_t i = 0; !bad && audiences && audiences[i]; i++)
        bad |= json_array_append_new(auds, json_string(audiences[i]));
    if (!bad && json_array_size(auds) > 0)
        bad |= json_object_set(spec, "audiences", auds);
    json_decref(auds);
    json_t *req = bad ? NULL
                      : json_pack("{s:s, s:s, s:O}", "apiVersion", "authentication.k8s.io/v1", "kind",
                                  "TokenRequest", "spec", spec);
    json_decref(spec);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!body) {
        free(path);
        return olm_error_set(err, "out of memory");
    }
    json_t *resp = NULL;
    int rc = kube_request_json(c, "POST", path, NULL, "application/json", body, &resp, err);
    free(body);
    free(path);
    if (rc < 0) {
        olm_error_wrap(err, "TokenRequest for ServiceAccount %s/%s", ns, sa);
        return rc; /* keep the kube_result (NotFound, Forbidden, ...) */
    }
    const json_t *st = json_object_get(resp, "status");
    const char *tok = json_string_value(json_object_get(st, "token"));
    const char *exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    time_t when = 0;
    if (!tok || !*tok)
        rc = olm_error_set(err, "TokenRequest for ServiceAccount %s/%s: the response has no status.token", ns, sa);
    else if (expires && kube_parse_time(exp, &when) < 0)
        rc = olm_error_set(err, "TokenRequest for ServiceAccount %s/%s: bad status.expirationTimestamp \"%s\"", ns,
                           sa, exp ? exp : "");
    else if (!(*token = strdup(tok)))
        rc = olm_error_set(err, "out of memory");
    if (rc == KUBE_OK && expires)
        *expires = when;
    json_decref(resp); /* jansson does not wipe strings; the token copy is the caller's */
    return rc;
}

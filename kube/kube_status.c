/* kube_status: turning API server failures into messages a user can act on.
 *
 * The API server answers failed requests with a metav1.Status whose `message`
 * is already the sentence kubectl prints ("deployments.apps \"x\" is forbidden:
 * User ... cannot create resource ..."), so that is used verbatim and only the
 * HTTP status is appended.  Anything else (a proxy's HTML page, an empty body)
 * is quoted, shortened and stripped of control characters. */
#include <stdio.h>
#include <string.h>

#include "kube_transport.h"
#include "strbuf.h"

kube_result kube_result_from_http(long http_status, const char *reason)
{
    if (http_status >= 200 && http_status < 300)
        return KUBE_OK;
    switch (http_status) {
    case 400:
    case 422:
        return KUBE_INVALID;
    case 401:
        return KUBE_UNAUTHORIZED;
    case 403:
        return KUBE_FORBIDDEN;
    case 404:
        return KUBE_NOT_FOUND;
    case 409:
        return (reason && strcmp(reason, "AlreadyExists") == 0) ? KUBE_ALREADY_EXISTS : KUBE_CONFLICT;
    case 410:
        return KUBE_GONE;
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
        return KUBE_UNAVAILABLE;
    default:
        return KUBE_ERROR;
    }
}

const char *kube_result_name(kube_result r)
{
    switch (r) {
    case KUBE_OK: return "OK";
    case KUBE_ERROR: return "Error";
    case KUBE_NOT_FOUND: return "NotFound";
    case KUBE_CONFLICT: return "Conflict";
    case KUBE_ALREADY_EXISTS: return "AlreadyExists";
    case KUBE_FORBIDDEN: return "Forbidden";
    case KUBE_UNAUTHORIZED: return "Unauthorized";
    case KUBE_INVALID: return "Invalid";
    case KUBE_GONE: return "Gone";
    case KUBE_UNAVAILABLE: return "Unavailable";
    }
    return "Error";
}

static const char *http_text(long code)
{
    switch (code) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Request Entity Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

/* Hints for the cases where the server's own words do not say what to do. */
static const char *hint(long code)
{
    switch (code) {
    case 401: return ": the API server rejected the credentials (expired or invalid token, or an untrusted client certificate)";
    case 429: return ": the API server is throttling requests; retry later";
    default: return "";
    }
}

kube_result kube_status_error(long http_status, const char *body, size_t body_len,
                              const char *method, const char *path, olm_error *err)
{
    const char *reason = NULL;
    const char *message = NULL;
    json_t *st = NULL;
    if (body && body_len > 0) {
        st = json_loadb(body, body_len, 0, NULL);
        if (st && json_is_object(st) &&
            json_is_string(json_object_get(st, "kind")) &&
            strcmp(json_string_value(json_object_get(st, "kind")), "Status") == 0) {
            reason = json_string_value(json_object_get(st, "reason"));
            message = json_string_value(json_object_get(st, "message"));
        }
    }
    kube_result r = kube_result_from_http(http_status, reason);
    const char *text = http_text(http_status);
    char code_part[128];
    snprintf(code_part, sizeof code_part, "HTTP %ld%s%s", http_status, *text ? " " : "", text);
    if (message && *message) {
        olm_error_set(err, "%s (%s)%s", message, code_part, hint(http_status));
    } else if (reason && *reason) {
        olm_error_set(err, "%s %s: %s (%s)%s", method, path, reason, code_part, hint(http_status));
    } else {
        /* Not a Status: quote up to 300 bytes so HTML error pages stay readable. */
        char excerpt[304];
        size_t n = 0;
        for (size_t i = 0; body && i < body_len && n < 300; i++) {
            unsigned char ch = (unsigned char)body[i];
            excerpt[n++] = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
        }
        excerpt[n] = '\0';
        if (n)
            olm_error_set(err, "%s %s: %s%s: %s%s", method, path, code_part, hint(http_status), excerpt,
                          body_len > n ? "..." : "");
        else
            olm_error_set(err, "%s %s: %s%s (empty body)", method, path, code_part, hint(http_status));
    }
    json_decref(st);
    return r == KUBE_OK ? KUBE_ERROR : r;
}

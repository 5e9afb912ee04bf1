/* clusterextension_status: pure status computation; see the header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clusterextension.h"
#include "kube_object.h"
#include "strbuf.h"

/* Length of "<addr>-><addr>" starting at s (no spaces inside, "->" required), not
 * counting a final ':' that belongs to the "(: )?" tail; 0 when it is not there. */
static size_t socket_pair_len(const char *s, bool *colon_tail)
{
    const char *arrow = NULL;
    size_t n = 0;
    while (s[n] && s[n] != ' ' && s[n] != '\n') {
        if (!arrow && s[n] == '-' && s[n + 1] == '>')
            arrow = s + n;
        n++;
    }
    *colon_tail = false;
    if (!arrow || arrow == s || arrow + 2 >= s + n)
        return 0;
    if (s[n - 1] == ':' && s[n] == ' ') {
        *colon_tail = true;
        return n - 1;
    }
    return n;
}

/* Removes upstream's "(read|write) (tcp|udp) <ip[:port]>-><ip[:port]>(: )?" so a
 * message does not change with every new connection. */
static int strip_socket_addrs(const char *in, strbuf *out)
{
    size_t i = 0;
    while (in[i]) {
        size_t verb = strncmp(in + i, "read ", 5) == 0 ? 5 : strncmp(in + i, "write ", 6) == 0 ? 6 : 0;
        size_t proto = 0;
        if (verb && (strncmp(in + i + verb, "tcp ", 4) == 0 || strncmp(in + i + verb, "udp ", 4) == 0))
            proto = 4;
        bool colon = false;
        size_t pair = proto ? socket_pair_len(in + i + verb + proto, &colon) : 0;
        if (pair) {
            i += verb + proto + pair;
            if (colon || (in[i] == ':' && in[i + 1] == ' '))
                i += 2;
            continue;
        }
        if (strbuf_putc(out, in[i]) != 0)
            return -1;
        i++;
    }
    return 0;
}

char *clusterextension_message_clean(const char *message)
{
    strbuf sb = STRBUF_INIT;
    if (strip_socket_addrs(message ? message : "", &sb) != 0) {
        strbuf_free(&sb);
        return NULL;
    }
    if (sb.len > CE_MESSAGE_MAX) {
        size_t keep = CE_MESSAGE_MAX - (sizeof CE_TRUNCATED_SUFFIX - 1);
        /* Never split a UTF-8 sequence: the API server (and jansson) want valid UTF-8. */
        while (keep > 0 && ((unsigned char)sb.data[keep] & 0xC0) == 0x80)
            keep--;
        sb.len = keep;
        sb.data[keep] = '\0';
        if (strbuf_puts(&sb, CE_TRUNCATED_SUFFIX) != 0) {
            strbuf_free(&sb);
            return NULL;
        }
    }
    return strbuf_detach(&sb);
}

int clusterextension_condition_set(json_t *conditions, const char *type, const char *status, const char *reason,
                                   const char *message, int64_t generation, const char *now)
{
    char *msg = clusterextension_message_clean(message);
    if (!msg)
        return -1;
    kube_condition c = {type, status, reason, msg, generation};
    int rc = kube_conditions_set(conditions, &c, now);
    free(msg);
    return rc;
}

static int set_install(json_t *status, const clusterextension_status_input *in)
{
    if (in->installed_error || !in->installed) {
        json_object_del(status, "install");
        return 0;
    }
    json_t *inst = json_pack("{s:{s:s, s:s}}", "bundle", "name", in->installed->name ? in->installed->name : "",
                             "version", in->installed->version ? in->installed->version : "");
    return inst ? json_object_set_new(status, "install", inst) : -1;
}

static int set_installed_condition(json_t *conds, const clusterextension_status_input *in)
{
    if (in->installed_error)
        return clusterextension_condition_set(conds, "Installed", "Unknown", "Failed", in->installed_error, in->generation, in->now);
    if (!in->installed)
        return clusterextension_condition_set(conds, "Installed", "False", "Failed", "No bundle installed", in->generation, in->now);
    strbuf sb = STRBUF_INIT;
    if (strbuf_printf(&sb, "Installed bundle %s successfully", in->installed->image ? in->installed->image : "") != 0)
        return -1;
    int rc = clusterextension_condition_set(conds, "Installed", "True", "Succeeded", strbuf_str(&sb), in->generation, in->now);
    strbuf_free(&sb);
    return rc;
}

/* Available follows what is installed: set from the probes when they ran, removed with the
 * last bundle, left alone otherwise (also while the installed state cannot be read). */
static int set_available_condition(json_t *conds, const clusterextension_status_input *in)
{
    if (in->installed_error && !in->no_available)
        return 0;
    if (!in->installed || in->no_available) {
        size_t i;
        json_t *c;
        json_array_foreach(conds, i, c) {
            const char *t = json_string_value(json_object_get(c, "type"));
            if (t && strcmp(t, "Available") == 0)
                return json_array_remove(conds, i);
        }
        return 0;
    }
    if (!in->available)
        return 0;
    if (in->available->available)
        return clusterextension_condition_set(conds, "Available", "True", CE_AVAILABLE_REASON, CE_AVAILABLE_MESSAGE,
                                              in->generation, in->now);
    return clusterextension_condition_set(conds, "Available", "False", CE_UNAVAILABLE_REASON,
                                          in->available->failures ? in->available->failures : "", in->generation,
                                          in->now);
}

static int set_progressing_condition(json_t *conds, const clusterextension_status_input *in)
{
    const char *msg = in->progress_message ? in->progress_message : "";
    switch (in->progress) {
    case CE_PROGRESS_SUCCEEDED:
        return clusterextension_condition_set(conds, "Progressing", "True", "Succeeded", "Desired state reached", in->generation,
                                in->now);
    case CE_PROGRESS_RETRYING:
        return clusterextension_condition_set(conds, "Progressing", "True", "Retrying", msg, in->generation, in->now);
    case CE_PROGRESS_BLOCKED:
        return clusterextension_condition_set(conds, "Progressing", "False", "Blocked", msg, in->generation, in->now);
    case CE_PROGRESS_INVALID_CONFIG:
        return clusterextension_condition_set(conds, "Progressing", "False", "InvalidConfiguration", msg, in->generation, in->now);
    case CE_PROGRESS_DEADLINE_EXCEEDED:
        return clusterextension_condition_set(conds, "Progressing", "False", "ProgressDeadlineExceeded", msg,
                                              in->generation, in->now);
    }
    return -1;
}

json_t *clusterextension_status_compute(const json_t *old_status, const clusterextension_status_input *in, olm_error *err)
{
    json_t *status = json_is_object(old_status) ? json_deep_copy(old_status) : json_object();
    json_t *conds = status ? json_object_get(status, "conditions") : NULL;
    if (status && !json_is_array(conds)) {
        conds = json_array();
        if (!conds || json_object_set_new(status, "conditions", conds) != 0)
            conds = NULL;
    }
    int rc = conds ? 0 : -1;
    if (rc == 0)
        rc = set_install(status, in);
    if (rc == 0)
        rc = set_installed_condition(conds, in);
    if (rc == 0)
        rc = set_available_condition(conds, in);
    if (rc == 0 && in->deprecation)
        for (int i = 0; rc == 0 && i < DEPRECATION_NCONDITIONS; i++)
            rc = clusterextension_condition_set(conds, in->deprecation[i].type, in->deprecation[i].status,
                                  in->deprecation[i].reason, in->deprecation[i].message, in->generation, in->now);
    if (rc == 0)
        rc = set_progressing_condition(conds, in);
    if (rc != 0) {
        json_decref(status);
        olm_error_set(err, "out of memory building the ClusterExtension status");
        return NULL;
    }
    return status;
}

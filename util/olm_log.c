/* olm_log: timestamped, levelled, one-line log records on stderr, as text or JSON. */
#include "olm_log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "olm_time.h"

#define LINE_MAX_BYTES 4096

/* Written once in main before threads exist, read-only afterwards. */
static olm_log_level min_level = OLM_LOG_INFO;
static olm_log_format log_format = OLM_LOG_TEXT;

void olm_log_set_level(olm_log_level min)
{
    min_level = min;
}

void olm_log_set_format(olm_log_format format)
{
    log_format = format;
}

int olm_log_enabled(olm_log_level level)
{
    return level >= min_level;
}

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int olm_log_parse_level(const char *word, olm_log_level *out)
{
    for (int l = OLM_LOG_DEBUG; l <= OLM_LOG_ERROR; l++)
        if (strcasecmp(word, level_names[l]) == 0) {
            *out = (olm_log_level)l;
            return 0;
        }
    if (strcasecmp(word, "warning") == 0) {
        *out = OLM_LOG_WARN;
        return 0;
    }
    return -1;
}

int olm_log_parse_format(const char *word, olm_log_format *out)
{
    if (strcasecmp(word, "text") == 0)
        *out = OLM_LOG_TEXT;
    else if (strcasecmp(word, "json") == 0)
        *out = OLM_LOG_JSON;
    else
        return -1;
    return 0;
}

static const char *level_upper(olm_log_level l)
{
    switch (l) {
    case OLM_LOG_DEBUG: return "DEBUG";
    case OLM_LOG_INFO: return "INFO";
    case OLM_LOG_WARN: return "WARN";
    case OLM_LOG_ERROR: return "ERROR";
    }
    return "INFO";
}

/* The length of the valid UTF-8 sequence at p (at most n bytes), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0xc2 ? 0 : p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : p[0] < 0xf5 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) || (p[0] == 0xf0 && p[1] < 0x90) ||
        (p[0] == 0xf4 && p[1] > 0x8f))
        return 0; /* overlong, surrogate or above U+10FFFF */
    return len;
}

/* Appends `s` as a JSON string (with its quotes) to out[*len..]; stops short when full. */
static void json_string(char *out, size_t cap, size_t *len, const char *s)
{
    size_t n = *len;
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s);
    if (n + 1 < cap)
        out[n++] = '"';
    while (left > 0 && n + 8 < cap) {
        unsigned char c = *p;
        size_t u;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
            p++, left--;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
            p++, left--;
        } else if (c < 0x80) {
            out[n++] = (char)c;
            p++, left--;
        } else if ((u = utf8_len(p, left)) > 0) {
            memcpy(out + n, p, u);
            n += u;
            p += u, left -= u;
        } else {
            n += (size_t)snprintf(out + n, cap - n, "\\ufffd");
            p++, left--;
        }
    }
    if (n + 1 < cap)
        out[n++] = '"';
    out[n] = '\0';
    *len = n;
}

static void write_json(olm_log_level level, const char *when, const char *key, const char *value, const char *msg)
{
    char line[LINE_MAX_BYTES * 2];
    size_t n = (size_t)snprintf(line, sizeof line, "{\"ts\":\"%s\",\"level\":\"%s\",", when, level_names[level]);
    if (key && value && *value) {
        json_string(line, sizeof line - 16, &n, key);
        line[n++] = ':';
        json_string(line, sizeof line - 16, &n, value);
        line[n++] = ',';
    }
    memcpy(line + n, "\"msg\":", 6);
    n += 6;
    json_string(line, sizeof line - 4, &n, msg);
    memcpy(line + n, "}\n", 3);
    fputs(line, stderr);
}

void olm_vlog(olm_log_level level, const char *key, const char *value, const char *fmt, va_list ap)
{
    if (level < min_level)
        return;
    struct timespec now = olm_time_now();
    char when[OLM_TIME_RFC3339_MILLI_SIZE];
    olm_time_rfc3339_milli(&now, when);
    char line[LINE_MAX_BYTES];
    if (log_format == OLM_LOG_JSON) {
        vsnprintf(line, sizeof line, fmt, ap);
        write_json(level, when, key, value, line);
        return;
    }
    int n = snprintf(line, sizeof line, "%s %s %s=%s ", when, level_upper(level), key ? key : "-",
                     value && *value ? value : "-");
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* Keep it one line: messages quoting files, registries or apiserver errors may hold newlines. */
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len] = '\n';
        line[len + 1] = '\0';
    } else {
        line[sizeof line - 2] = '\n';
    }
    fputs(line, stderr);
}

void olm_log(olm_log_level level, const char *key, const char *value, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    olm_vlog(level, key, value, fmt, ap);
    va_end(ap);
}

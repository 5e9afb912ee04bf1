/* olm_log: timestamped, levelled, one-line log records on stderr. */
#include "olm_log.h"

#include <stdio.h>
#include <string.h>

#include "olm_time.h"

/* Written once in main before threads exist, read-only afterwards. */
static olm_log_level min_level = OLM_LOG_INFO;

void olm_log_set_level(olm_log_level min)
{
    min_level = min;
}

static const char *level_name(olm_log_level l)
{
    switch (l) {
    case OLM_LOG_DEBUG: return "DEBUG";
    case OLM_LOG_INFO: return "INFO";
    case OLM_LOG_WARN: return "WARN";
    case OLM_LOG_ERROR: return "ERROR";
    }
    return "INFO";
}

void olm_vlog(olm_log_level level, const char *key, const char *value, const char *fmt, va_list ap)
{
    if (level < min_level)
        return;
    struct timespec now = olm_time_now();
    char when[OLM_TIME_RFC3339_MILLI_SIZE];
    olm_time_rfc3339_milli(&now, when);
    char line[4096];
    int n = snprintf(line, sizeof line, "%s %s %s=%s ", when, level_name(level), key ? key : "-",
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

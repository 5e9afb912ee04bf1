/* olm_log: timestamped, levelled, one-line log records on stderr. */
#include "olm_log.h"

#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

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
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char line[4096];
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s=%s ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000),
                     level_name(level), key ? key : "-", value && *value ? value : "-");
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

#include "catalogd_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* Written once in main before threads exist, read-only afterwards. */
static catalogd_log_level min_level = CATALOGD_LOG_INFO;

void catalogd_log_set_level(catalogd_log_level min)
{
    min_level = min;
}

static const char *level_name(catalogd_log_level l)
{
    switch (l) {
    case CATALOGD_LOG_DEBUG: return "DEBUG";
    case CATALOGD_LOG_INFO: return "INFO";
    case CATALOGD_LOG_WARN: return "WARN";
    case CATALOGD_LOG_ERROR: return "ERROR";
    }
    return "INFO";
}

void catalogd_log(catalogd_log_level level, const char *catalog, const char *fmt, ...)
{
    if (level < min_level)
        return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char line[4096];
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s catalog=%s ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000),
                     level_name(level), catalog && *catalog ? catalog : "-");
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    /* Keep it one line: messages quoting files or registries may hold newlines. */
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

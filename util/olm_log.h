/* olm_log: the daemons' log lines on stderr, one event a line, in one of two formats:
 *   text  "<RFC 3339 UTC time, ms> <LEVEL> <key>=<value> <message>", e.g.
 *         "2026-11-21T15:28:04.513Z INFO clusterExtension=argocd installed bundle argocd.v0.6.0"
 *   json  {"ts":"2026-11-21T15:28:04.513Z","level":"info","clusterExtension":"argocd",
 *          "msg":"installed bundle argocd.v0.6.0"}  (the subject only when there is one;
 *         strings escaped as JSON, bytes that are not UTF-8 as U+FFFD)
 *
 * Any thread: each line is formatted into a local buffer and written with one fputs, and
 * stdio locks the stream per call, so lines from the loop thread and the threadpool never
 * interleave.  Newlines inside a message become spaces: one event, one line. */
#ifndef OLMV1_OLM_LOG_H
#define OLMV1_OLM_LOG_H

#include <stdarg.h>

typedef enum olm_log_level {
    OLM_LOG_DEBUG,
    OLM_LOG_INFO,
    OLM_LOG_WARN,
    OLM_LOG_ERROR,
} olm_log_level;

typedef enum olm_log_format {
    OLM_LOG_TEXT,
    OLM_LOG_JSON,
} olm_log_format;

/* Set once by main before any thread starts; lines below the level are dropped. */
void olm_log_set_level(olm_log_level min);
void olm_log_set_format(olm_log_format format);
/* Whether a line of `level` would be written (to skip work for debug lines). */
int olm_log_enabled(olm_log_level level);

/* --log-level error|warn|info|debug (any case; "warning" too) and --log-format text|json;
 * 0, or -1 when the word is none of those. */
int olm_log_parse_level(const char *word, olm_log_level *out);
int olm_log_parse_format(const char *word, olm_log_format *out);

/* key: what the line is about, e.g. "catalog" or "clusterExtension"; value NULL or "" prints "-". */
void olm_log(olm_log_level level, const char *key, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void olm_vlog(olm_log_level level, const char *key, const char *value, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif

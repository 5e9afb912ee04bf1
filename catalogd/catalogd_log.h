/* catalogd_log: one line per event on stderr: "<RFC 3339 UTC time> <LEVEL> catalog=<name> <message>".
 *
 * Any thread: each line is formatted into a local buffer and written with a single
 * fputs, and stdio locks the stream per call, so lines from the loop thread and the
 * threadpool never interleave.  `catalog` may be NULL for process-wide events. */
#ifndef OLM_CATALOGD_LOG_H
#define OLM_CATALOGD_LOG_H

typedef enum catalogd_log_level {
    CATALOGD_LOG_DEBUG,
    CATALOGD_LOG_INFO,
    CATALOGD_LOG_WARN,
    CATALOGD_LOG_ERROR,
} catalogd_log_level;

/* Set once by main before any thread starts; lines below it are dropped. */
void catalogd_log_set_level(catalogd_log_level min);

void catalogd_log(catalogd_log_level level, const char *catalog, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

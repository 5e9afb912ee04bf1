/* name_log: the names a (const char *name, void *data) callback was given, in order: what the
 * tests of a workqueue's or a watch's callers check was queued. */
#ifndef OLM_TEST_NAME_LOG_H
#define OLM_TEST_NAME_LOG_H

#define NAME_LOG_MAX 16

typedef struct name_log {
    char names[NAME_LOG_MAX][128];
    int n; /* names recorded (those past NAME_LOG_MAX are counted, not kept) */
} name_log;

/* The callback: data is the name_log. */
void name_log_record(const char *name, void *data);
void name_log_clear(name_log *log);

#endif

/* name_log: see name_log.h. */
#include "name_log.h"

#include <stdio.h>
#include <string.h>

void name_log_record(const char *name, void *data)
{
    name_log *log = data;
    if (log->n < NAME_LOG_MAX)
        snprintf(log->names[log->n], sizeof log->names[0], "%s", name);
    log->n++;
}

void name_log_clear(name_log *log)
{
    memset(log, 0, sizeof *log);
}

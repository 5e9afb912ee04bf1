/* catalogd_log: catalogd's log lines, olm_log with the key "catalog":
 *   "<RFC 3339 UTC time> <LEVEL> catalog=<name> <message>"
 * `catalog` may be NULL for process-wide events (printed as "-"). */
#ifndef OLM_CATALOGD_LOG_H
#define OLM_CATALOGD_LOG_H

#include "olm_log.h"

typedef olm_log_level catalogd_log_level;
#define CATALOGD_LOG_DEBUG OLM_LOG_DEBUG
#define CATALOGD_LOG_INFO OLM_LOG_INFO
#define CATALOGD_LOG_WARN OLM_LOG_WARN
#define CATALOGD_LOG_ERROR OLM_LOG_ERROR

/* Set once by main before any thread starts; lines below it are dropped. */
#define catalogd_log_set_level olm_log_set_level

#define catalogd_log(level, catalog, ...) olm_log((level), "catalog", (catalog), __VA_ARGS__)

#endif

/* olm_process_metrics: the Prometheus Go client's process collector, from /proc (Linux):
 * process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_open_fds, process_max_fds, process_start_time_seconds, so that upstream's
 * dashboards find them under the same names.  Plus `<prefix>_build_info{version} 1`.
 *
 * Any thread.  A value that cannot be read (no /proc) is left out, not faked. */
#ifndef OLMV1_OLM_PROCESS_METRICS_H
#define OLMV1_OLM_PROCESS_METRICS_H

#include "strbuf.h"

/* 0, or -1 when out of memory. */
int olm_process_metrics_render(strbuf *out);

/* "<prefix>_build_info{version=\"<OLMV1_VERSION>\"} 1", e.g. prefix "catalogd". */
int olm_build_info_render(strbuf *out, const char *prefix);

#endif

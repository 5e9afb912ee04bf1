/* olm_time: RFC 3339 timestamps in UTC, the layouts Kubernetes objects and our logs use.
 *
 *   olm_time_rfc3339        "2006-01-02T15:04:05Z"         metav1.Time (conditions, records)
 *   olm_time_rfc3339_milli  "2006-01-02T15:04:05.000Z"     log lines
 *   olm_time_rfc3339_micro  "2006-01-02T15:04:05.000000Z"  metav1.MicroTime (Leases)
 *
 * Fractions are truncated, not rounded, as Go's time.Format does.  A time gmtime cannot
 * represent returns -1 and writes the Unix epoch in the same layout, so a caller that
 * ignores the result still writes a well-formed timestamp. */
#ifndef OLMV1_OLM_TIME_H
#define OLMV1_OLM_TIME_H

#include <time.h>

/* Buffer sizes, the NUL included. */
#define OLM_TIME_RFC3339_SIZE 21
#define OLM_TIME_RFC3339_MILLI_SIZE 25
#define OLM_TIME_RFC3339_MICRO_SIZE 28

int olm_time_rfc3339(time_t t, char buf[static OLM_TIME_RFC3339_SIZE]);
int olm_time_rfc3339_milli(const struct timespec *t, char buf[static OLM_TIME_RFC3339_MILLI_SIZE]);
int olm_time_rfc3339_micro(const struct timespec *t, char buf[static OLM_TIME_RFC3339_MICRO_SIZE]);

/* The wall clock (CLOCK_REALTIME). */
struct timespec olm_time_now(void);

/* Milliseconds on the monotonic clock: for how long a step took (debug lines), never a date. */
double olm_time_mono_ms(void);

#endif

/* olm_time: see olm_time.h. */
#include "olm_time.h"

#include <stdio.h>
#include <string.h>

/* "YYYY-MM-DDTHH:MM:SS" + ".<digits>" (when digits > 0) + "Z" into buf of `size`. */
static int format(time_t sec, long nsec, int digits, char *buf, size_t size)
{
    struct tm tm;
    int rc = 0;
    if (!gmtime_r(&sec, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) {
        /* Four digits of year is all the layout has room for. */
        memset(&tm, 0, sizeof tm);
        tm.tm_year = 70;
        tm.tm_mday = 1;
        nsec = 0;
        rc = -1;
    }
    int n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (digits == 3)
        snprintf(buf + n, size - (size_t)n, ".%03ldZ", nsec / 1000000);
    else if (digits == 6)
        snprintf(buf + n, size - (size_t)n, ".%06ldZ", nsec / 1000);
    else
        snprintf(buf + n, size - (size_t)n, "Z");
    return rc;
}

int olm_time_rfc3339(time_t t, char buf[static OLM_TIME_RFC3339_SIZE])
{
    return format(t, 0, 0, buf, OLM_TIME_RFC3339_SIZE);
}

int olm_time_rfc3339_milli(const struct timespec *t, char buf[static OLM_TIME_RFC3339_MILLI_SIZE])
{
    return format(t->tv_sec, t->tv_nsec, 3, buf, OLM_TIME_RFC3339_MILLI_SIZE);
}

int olm_time_rfc3339_micro(const struct timespec *t, char buf[static OLM_TIME_RFC3339_MICRO_SIZE])
{
    return format(t->tv_sec, t->tv_nsec, 6, buf, OLM_TIME_RFC3339_MICRO_SIZE);
}

struct timespec olm_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts;
}

double olm_time_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

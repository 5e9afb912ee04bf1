/* olm_malloc_tune: glibc malloc settings of the daemons.
 *
 * glibc keeps a per-thread cache (tcache) of up to 7 freed blocks of each small size in every
 * thread.  After a burst of reconciles on the pool threads those cached blocks sit scattered
 * over the heap, and malloc_trim cannot give back the pages they lie on (they are not free as
 * far as the arena knows): an idle operator-controller after installing and uninstalling 100
 * extensions held 23.4 MiB RSS with the cache, 18.8 MiB without (anon 12.2 -> 7.7 MiB).  The
 * cache can only be turned off by the GLIBC_TUNABLES variable, which the dynamic loader reads
 * when the process starts; mallopt has no setting for it. */
#ifndef OLMV1_OLM_MALLOC_TUNE_H
#define OLMV1_OLM_MALLOC_TUNE_H

#include <stddef.h>

#define OLM_TUNABLE_TCACHE_COUNT "glibc.malloc.tcache_count="

/* The GLIBC_TUNABLES value with the per-thread cache off, given the current value (NULL:
 * unset) into out: 1 when it differs from cur (other tunables are kept), 0 when cur already
 * sets tcache_count (whatever the operator chose stands; out is not written), -1 when out is
 * too small. */
int olm_malloc_tunables_tcache_off(const char *cur, char *out, size_t outsz);

/* Called first thing in main: unless GLIBC_TUNABLES already sets tcache_count (or the process
 * runs set-uid, where glibc ignores the variable), sets it and re-executes /proc/self/exe with
 * the same argv, so the process (same PID) starts again with the cache off.  Returns when it
 * did not re-execute; if the exec fails the daemon simply runs with glibc's defaults. */
void olm_malloc_reexec_tcache_off(char **argv);

/* Both of glibc's thresholds, fixed at this many bytes by olm_malloc_fixed_thresholds. */
#define OLM_MALLOC_THRESHOLD (128 * 1024)

/* glibc raises its mmap threshold to the largest mmapped block freed and its trim threshold
 * to twice that (up to 32 MiB and 64 MiB).  The trim threshold is how much free memory the
 * top of a thread arena (not the main one) keeps: malloc_trim gives back free pages inside
 * an arena but never the top of a thread arena, which only shrinks when a free reaches it and
 * it exceeds the threshold.  operator-controller freed one 260 KiB block during 100 installs,
 * and its second arena then kept ~520 KiB after everything was uninstalled (43 KiB in use);
 * catalogd's 18 MiB jsonl buffer made every freed heap top stay.  Fixed thresholds (mallopt
 * turns the adjustment off) keep big blocks in their own mappings, gone on free, and give
 * freed arena tops back.  Call once, early in main. */
void olm_malloc_fixed_thresholds(void);

#endif

/* olm_malloc_tune: a glibc malloc setting a daemon can only get from its environment.
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

#endif

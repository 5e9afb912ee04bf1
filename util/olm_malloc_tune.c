#include "olm_malloc_tune.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

int olm_malloc_tunables_tcache_off(const char *cur, char *out, size_t outsz)
{
    if (cur && strstr(cur, OLM_TUNABLE_TCACHE_COUNT))
        return 0;
    int n = cur && *cur ? snprintf(out, outsz, "%s:%s0", cur, OLM_TUNABLE_TCACHE_COUNT)
                        : snprintf(out, outsz, "%s0", OLM_TUNABLE_TCACHE_COUNT);
    return n < 0 || (size_t)n >= outsz ? -1 : 1;
}

void olm_malloc_reexec_tcache_off(char **argv)
{
    /* Set-uid: the loader drops GLIBC_TUNABLES, and re-executing would never end. */
    if (getauxval(AT_SECURE))
        return;
    char value[1024];
    if (olm_malloc_tunables_tcache_off(getenv("GLIBC_TUNABLES"), value, sizeof value) != 1)
        return;
    if (setenv("GLIBC_TUNABLES", value, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* No /proc (or no exec right on it): run as we are, with glibc's defaults.  The variable
     * stays set, which is harmless: nothing else reads it in this process. */
}

void olm_malloc_fixed_thresholds(void)
{
    mallopt(M_MMAP_THRESHOLD, OLM_MALLOC_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, OLM_MALLOC_THRESHOLD);
}

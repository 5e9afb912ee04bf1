/* deprecation: the four deprecation conditions of a ClusterExtension
 * (olmv1-behaviour.md §2.4): Deprecated (roll-up), PackageDeprecated,
 * ChannelDeprecated and BundleDeprecated. */
#ifndef OLM_DEPRECATION_H
#define OLM_DEPRECATION_H

#include <stdbool.h>
#include <stddef.h>

#include "fbc.h"
#include "olm_error.h"

enum {
    DEPRECATION_ROLLUP = 0,
    DEPRECATION_PACKAGE,
    DEPRECATION_CHANNEL,
    DEPRECATION_BUNDLE,
    DEPRECATION_NCONDITIONS
};

typedef struct deprecation_condition {
    const char *type;   /* static: "Deprecated", "PackageDeprecated", ... */
    const char *status; /* static: "True", "False" or "Unknown" */
    const char *reason; /* static */
    char *message;      /* owned */
} deprecation_condition;

typedef struct deprecation_input {
    const char *installed_bundle;        /* NULL or "" when nothing is installed */
    const fbc_deprecation *deprecation;  /* the package's olm.deprecations, or NULL */
    bool has_catalog_data;               /* resolution succeeded, or a deprecation blob is known */
    const char *const *channels;         /* spec.source.catalog.channels */
    size_t nchannels;
} deprecation_input;

/* Fills out[DEPRECATION_NCONDITIONS].  Returns -1 on out of memory. */
int deprecation_conditions(const deprecation_input *in, deprecation_condition out[DEPRECATION_NCONDITIONS],
                           olm_error *err);
void deprecation_conditions_free(deprecation_condition out[DEPRECATION_NCONDITIONS]);

#endif

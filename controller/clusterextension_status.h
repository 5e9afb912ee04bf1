/* clusterextension_status: the status a ClusterExtension reconcile writes, computed
 * from what the steps found (olmv1-behaviour.md §1.1, §2.2, §2.3, §2.4).
 *
 * Pure: no I/O, no clock (the caller passes `now`), so every rule is unit-tested.
 *  - Installed: True/Succeeded "Installed bundle <image> successfully" when something is
 *    installed, False/Failed "No bundle installed" when not, Unknown/Failed with the
 *    error when the installed state could not be read;
 *  - Progressing: True/Succeeded "Desired state reached", True/Retrying (error), or
 *    False/Blocked | False/InvalidConfiguration (terminal errors);
 *  - the four deprecation conditions when given (else left as they are);
 *  - status.install.bundle {name, version} (removed when nothing is installed);
 *  - observedGeneration on every condition set; lastTransitionTime kept while the
 *    condition's status is unchanged; messages cleaned of ephemeral socket addresses
 *    and truncated at 32768 bytes.
 * Conditions keep their order; new types are appended (apimeta.SetStatusCondition). */
#ifndef OLM_CLUSTEREXTENSION_STATUS_H
#define OLM_CLUSTEREXTENSION_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "deprecation.h"
#include "olm_error.h"

#define CE_MESSAGE_MAX 32768
#define CE_TRUNCATED_SUFFIX "\n\n... [message truncated]"

typedef enum ce_progress {
    CE_PROGRESS_SUCCEEDED = 0,  /* True/Succeeded "Desired state reached" */
    CE_PROGRESS_RETRYING,       /* True/Retrying: a retryable error */
    CE_PROGRESS_BLOCKED,        /* False/Blocked: terminal */
    CE_PROGRESS_INVALID_CONFIG, /* False/InvalidConfiguration: terminal config error */
} ce_progress;

typedef struct ce_installed_bundle {
    const char *name, *version, *image;
} ce_installed_bundle;

typedef struct ce_status_input {
    int64_t generation;       /* metadata.generation */
    const char *now;          /* RFC 3339, used for lastTransitionTime of changed conditions */
    /* What is installed after this reconcile; NULL when nothing is. */
    const ce_installed_bundle *installed;
    /* Non-NULL when the installed state could not be read: Installed=Unknown/Failed with
     * this message, status.install removed. */
    const char *installed_error;
    ce_progress progress;
    const char *progress_message; /* the error text for non-Succeeded progress */
    /* The four conditions (deprecation.h order), or NULL to leave them unchanged. */
    const deprecation_condition *deprecation;
} ce_status_input;

/* Builds the new status object from `old_status` (borrowed, may be NULL) and `in`.
 * Fields other than conditions and install are carried over.  New reference, or NULL
 * with err on out of memory. */
json_t *ce_status_compute(const json_t *old_status, const ce_status_input *in, olm_error *err);

/* Sets one condition in `conditions` (a JSON array, modified) with apimeta semantics.
 * The message is cleaned and truncated here.  -1 on out of memory. */
int ce_condition_set(json_t *conditions, const char *type, const char *status, const char *reason,
                     const char *message, int64_t generation, const char *now);

/* The message as written: "(read|write) (tcp|udp) <addr>-><addr>(: )?" removed
 * (upstream's regex), then cut to CE_MESSAGE_MAX bytes with CE_TRUNCATED_SUFFIX.
 * Caller frees; NULL on out of memory. */
char *ce_message_clean(const char *message);

/* Formats `when` as RFC 3339 UTC into buf (at least 21 bytes). */
void ce_format_time(time_t when, char *buf, size_t size);

#endif

/* oci_registries_follow: a registries.conf that a long-running daemon follows.  An
 * administrator who adds a mirror or blocks a registry (on OpenShift the machine config
 * rewrites /etc/containers/registries.conf when an ImageDigestMirrorSet changes) expects
 * the next pull to use it, without restarting catalogd or operator-controller.
 *
 * Each pull's sources are computed after a stat of the file and of its drop-ins
 * (identity, size, modification and change times, and which *.conf files there are):
 * when any differs from what was read last, the whole configuration is read again.  A
 * change that does not read (malformed, unreadable, a required file removed) keeps the
 * last good configuration for the pulls, and is reported once through the notice
 * callback, as a good re-read is.  Safe to use from several threads. */
#ifndef OLM_OCI_REGISTRIES_FOLLOW_H
#define OLM_OCI_REGISTRIES_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "oci_registries_conf.h"

typedef struct oci_registries_follow oci_registries_follow;

/* After a changed configuration was read again: `problem` NULL and the number of
 * [[registry]] entries now in effect; or why it could not be read (the old one stays). */
typedef void (*oci_registries_notice)(const char *path, const char *problem, size_t entries, void *data);

/* Reads `path` (NULL: the default) as oci_registries_conf_load does, with the same
 * errors (a daemon stops on them).  `notice` may be NULL. */
oci_registries_follow *oci_registries_follow_new(const char *path, bool required, oci_registries_notice notice,
                                                 void *data, olm_error *err);
void oci_registries_follow_free(oci_registries_follow *f);

/* The [[registry]] entries in effect. */
size_t oci_registries_follow_count(oci_registries_follow *f);

/* oci_registries_conf_sources with the configuration as it is on disk now (or the last
 * good one). */
int oci_registries_follow_sources(oci_registries_follow *f, const oci_ref *ref, oci_pull_sources *out,
                                  olm_error *err);

#endif

/* Private to the oci library: accessors the push (and later pull) code needs. */
#ifndef OLM_OCI_INTERNAL_H
#define OLM_OCI_INTERNAL_H

#include "oci.h"

/* Effective chunk size for uploads (opts.chunk_size or the default). */
uint64_t oci_registry_chunk_size(const oci_registry *reg);
/* The registry as named in references ("127.0.0.1:5000").  Borrowed. */
const char *oci_registry_host(const oci_registry *reg);
/* Reports a human progress line through opts.progress, if set (printf-style). */
void oci_registry_progress(const oci_registry *reg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

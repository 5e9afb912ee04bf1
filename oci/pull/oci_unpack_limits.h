/* oci_unpack_limits: how much an image unpack may write, read and skip.  Apart from
 * oci_unpack.h so that the unpacker's low-level helpers (entry path rules, tree removal)
 * can know the limits without depending on the unpacker itself. */
#ifndef OLM_OCI_UNPACK_LIMITS_H
#define OLM_OCI_UNPACK_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#define OCI_UNPACK_DEFAULT_MAX_BYTES ((uint64_t)2 * 1024 * 1024 * 1024)
#define OCI_UNPACK_DEFAULT_MAX_FILES ((uint64_t)200000)
#define OCI_UNPACK_DEFAULT_MAX_PATH ((size_t)4096)
#define OCI_UNPACK_DEFAULT_MAX_SKIPPED_BYTES ((uint64_t)4 * 1024 * 1024 * 1024)

/* Zero fields mean the defaults above. */
typedef struct oci_unpack_limits {
    uint64_t max_bytes; /* regular-file bytes written, all layers together;
                           also bounds each compressed layer download */
    uint64_t max_files; /* tar entries read plus the parent directories they make
                           implicitly, all layers together */
    size_t max_path;    /* bytes of an entry path (or link target) */
    uint64_t max_skipped_bytes; /* data bytes of entries read but not extracted (outside
                           the prefix, devices...): decompressed only to be skipped */
} oci_unpack_limits;

#endif

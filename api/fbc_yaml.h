/* fbc_yaml: YAML scalar resolution shared by the YAML decoder and its tests. */
#ifndef OLM_FBC_YAML_H
#define OLM_FBC_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum fbc_yaml_kind {
    FBC_Y_STRING,
    FBC_Y_NULL,
    FBC_Y_BOOL,
    FBC_Y_INT,   /* fits int64 */
    FBC_Y_UINT,  /* above INT64_MAX, fits uint64 */
    FBC_Y_FLOAT, /* may be NaN or +-Inf (the .nan/.inf spellings) */
    FBC_Y_MERGE, /* the merge key "<<" */
} fbc_yaml_kind;

typedef struct fbc_yaml_scalar {
    fbc_yaml_kind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double f;
} fbc_yaml_scalar;

/* Resolves an untagged plain scalar `v` (NUL-terminated, `len` bytes).  Fills `out`;
 * -1 only on out of memory. */
int fbc_yaml_resolve_plain(const char *v, size_t len, fbc_yaml_scalar *out);

#endif

/* fbc_yaml: the old name of gocompat's YAML scalar resolution, kept only until
 * controller/upgradeable_props.c calls gocompat itself. */
#ifndef OLM_FBC_YAML_H
#define OLM_FBC_YAML_H

#include "gocompat.h"

typedef gocompat_yaml_scalar fbc_yaml_scalar;
#define FBC_Y_STRING GOCOMPAT_YAML_STRING
#define FBC_Y_NULL GOCOMPAT_YAML_NULL
#define FBC_Y_BOOL GOCOMPAT_YAML_BOOL
#define FBC_Y_INT GOCOMPAT_YAML_INT
#define FBC_Y_UINT GOCOMPAT_YAML_UINT
#define FBC_Y_FLOAT GOCOMPAT_YAML_FLOAT
#define FBC_Y_MERGE GOCOMPAT_YAML_MERGE

static inline int fbc_yaml_resolve_plain(const char *v, size_t len, fbc_yaml_scalar *out)
{
    return gocompat_yaml_resolve_plain(v, len, out);
}

#endif

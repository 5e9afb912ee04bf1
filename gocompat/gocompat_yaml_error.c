/* gocompat_yaml_error: the FBC loader's wording of YAML problems,
 * "<name>:<line>: <what>".  Other callers word the codes themselves (their
 * messages predate this library and must not change). */
#include "gocompat.h"

int gocompat_yaml_strerror(const gocompat_yaml_error *e, const char *name, olm_error *err)
{
    int line = e->line;
    switch (e->code) {
    case GOCOMPAT_YAML_OK:
    case GOCOMPAT_YAML_ECALLBACK: return -1; /* the callback said what went wrong */
    case GOCOMPAT_YAML_ENOMEM:
    case GOCOMPAT_YAML_ESCALAR: return olm_error_set(err, "%s: out of memory", name);
    case GOCOMPAT_YAML_ESYNTAX:
        if (e->context)
            return olm_error_set(err, "%s:%d: invalid YAML: %s %s", name, line,
                                 e->problem ? e->problem : "unknown error", e->context);
        return olm_error_set(err, "%s:%d: invalid YAML: %s", name, line,
                             e->problem ? e->problem : "unknown error");
    case GOCOMPAT_YAML_EDEPTH:
        return olm_error_set(err, "%s:%d: document nested deeper than %d levels", name, line,
                             (int)e->value);
    case GOCOMPAT_YAML_EALIASING:
        return olm_error_set(err, "%s:%d: document contains excessive aliasing", name, line);
    case GOCOMPAT_YAML_ETOOBIG:
        return olm_error_set(err, "%s: YAML expands to more than %.0f bytes of JSON", name, e->value);
    case GOCOMPAT_YAML_EANCHOR:
        return olm_error_set(err, "%s:%d: unknown anchor '%s' referenced", name, line, e->text);
    case GOCOMPAT_YAML_EALIAS:
        return olm_error_set(err, "%s:%d: YAML aliases are not supported", name, line);
    case GOCOMPAT_YAML_ENONFINITE:
        return olm_error_set(err, "%s:%d: value %s cannot be represented in JSON", name, line,
                             e->text);
    case GOCOMPAT_YAML_EKEY:
        return olm_error_set(err, "%s:%d: unsupported map key %s", name, line, e->text);
    case GOCOMPAT_YAML_EKEY_ALIAS:
        return olm_error_set(err, "%s:%d: invalid map key (alias to a %s)", name, line, e->text);
    case GOCOMPAT_YAML_EKEY_COLLECTION:
        return olm_error_set(err, "%s:%d: invalid map key: a mapping or sequence cannot be a key",
                             name, line);
    case GOCOMPAT_YAML_EMERGE:
        return olm_error_set(err, "%s:%d: map merge requires map or sequence of maps as the value",
                             name, line);
    case GOCOMPAT_YAML_EEVENT:
        return olm_error_set(err, "%s:%d: unexpected YAML event", name, line);
    }
    return olm_error_set(err, "%s: YAML error", name);
}

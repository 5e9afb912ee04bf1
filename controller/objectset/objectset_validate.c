/* objectset_validate: boxcutter's revision validation that can be done without the apiserver:
 * an object (same group, version, kind, namespace and name) may be in one phase only.  The
 * message is boxcutter's RevisionValidationError:
 *   revision "<name>" (<n>): phase "a": /v1, Kind=ConfigMap ns/x: duplicate object found in
 *   phases: a, b, phase "b": /v1, Kind=ConfigMap ns/x: duplicate object found in phases: a, b
 * (upstream lists a phase's duplicates in Go map order; here in the phase's order).
 * Not done: boxcutter's metadata checks and its server-side dry run of every object. */
#include <stdlib.h>
#include <string.h>

#include "kube_object.h"
#include "objectset_internal.h"

static bool same_object(const json_t *a, const json_t *b)
{
    const char *keys[] = {"apiVersion", "kind", "metadata.namespace", "metadata.name"};
    for (size_t i = 0; i < 4; i++) {
        const char *x = kube_object_string(a, keys[i]), *y = kube_object_string(b, keys[i]);
        if (strcmp(x ? x : "", y ? y : "") != 0)
            return false;
    }
    return true;
}

/* The names of the phases holding `o`, sorted, ", "-joined, when more than one; else NULL. */
static char *phases_holding(const objectset_phases *ph, const json_t *o)
{
    const char **names = calloc(ph->n + 1, sizeof *names);
    size_t n = 0;
    for (size_t i = 0; names && i < ph->n; i++) {
        size_t j;
        const json_t *x;
        json_array_foreach(ph->items[i].objects, j, x) {
            if (same_object(o, x)) {
                names[n++] = ph->items[i].name;
                break;
            }
        }
    }
    char *out = NULL;
    if (n > 1) {
        for (size_t i = 1; i < n; i++) /* insertion sort: a handful of names */
            for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
                const char *t = names[k];
                names[k] = names[k - 1];
                names[k - 1] = t;
            }
        strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < n; i++)
            strbuf_printf(&sb, "%s%s", i ? ", " : "", names[i]);
        out = strbuf_detach(&sb);
    }
    free(names);
    return out;
}

char *objectset_validate(const char *name, json_int_t revision, const objectset_phases *ph)
{
    strbuf msg = STRBUF_INIT;
    size_t nphases = 0;
    for (size_t i = 0; i < ph->n; i++) {
        size_t nobj = 0, j;
        const json_t *o;
        json_array_foreach(ph->items[i].objects, j, o) {
            char *dup = phases_holding(ph, o);
            if (!dup)
                continue;
            if (!nobj)
                strbuf_printf(&msg, "%sphase \"%s\": ", nphases++ ? ", " : "", ph->items[i].name);
            else
                strbuf_puts(&msg, ", ");
            objectset_object_ref(&msg, o);
            strbuf_printf(&msg, ": duplicate object found in phases: %s", dup);
            free(dup);
            nobj++;
        }
    }
    if (!nphases) {
        strbuf_free(&msg);
        return NULL;
    }
    strbuf out = STRBUF_INIT;
    strbuf_printf(&out, "revision \"%s\" (%lld): %s", name, (long long)revision, strbuf_str(&msg));
    strbuf_free(&msg);
    return strbuf_detach(&out);
}

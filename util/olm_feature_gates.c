/* olm_feature_gates: see olm_feature_gates.h. */
#include "olm_feature_gates.h"

#include <string.h>

/* Go's strconv.ParseBool: 1 true, 0 false, -1 neither. */
static int parse_bool(const char *s, size_t n)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strlen(yes[i]) == n && strncmp(s, yes[i], n) == 0)
            return 1;
        if (strlen(no[i]) == n && strncmp(s, no[i], n) == 0)
            return 0;
    }
    return -1;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static const olm_feature_gate *find(const olm_feature_gate *gates, size_t ngates, const char *name, size_t n)
{
    for (size_t i = 0; i < ngates; i++)
        if (strlen(gates[i].name) == n && strncmp(gates[i].name, name, n) == 0)
            return &gates[i];
    return NULL;
}

/* Lists the known names after an unknown one, so the message says what would work. */
static void unknown_gate(const olm_feature_gate *gates, size_t ngates, const char *name, size_t n, char *msg,
                         size_t msgsz)
{
    int used = snprintf(msg, msgsz, "--feature-gates: unrecognized feature gate \"%.*s\" (%s", (int)n, name,
                        ngates ? "known: " : "this build has none");
    for (size_t i = 0; i < ngates && used >= 0 && (size_t)used < msgsz; i++)
        used += snprintf(msg + used, msgsz - (size_t)used, "%s%s", i ? ", " : "", gates[i].name);
    if (used >= 0 && (size_t)used < msgsz)
        snprintf(msg + used, msgsz - (size_t)used, ")");
}

/* One "Name=value" item of n bytes. */
static int apply_item(const olm_feature_gate *gates, size_t ngates, const char *item, size_t n, char *msg,
                      size_t msgsz)
{
    const char *eq = memchr(item, '=', n);
    if (!eq) {
        snprintf(msg, msgsz, "--feature-gates: want Name=true|false, got \"%.*s\"", (int)n, item);
        return -1;
    }
    const char *name = item, *value = eq + 1;
    size_t nl = (size_t)(eq - item), vl = n - nl - 1;
    trim(&name, &nl);
    trim(&value, &vl);
    const olm_feature_gate *g = find(gates, ngates, name, nl);
    if (!g) {
        unknown_gate(gates, ngates, name, nl, msg, msgsz);
        return -1;
    }
    int b = parse_bool(value, vl);
    if (b < 0) {
        snprintf(msg, msgsz, "--feature-gates: invalid value of %s: \"%.*s\" (want true or false)", g->name, (int)vl,
                 value);
        return -1;
    }
    *g->value = b == 1;
    return 0;
}

int olm_feature_gates_parse(const olm_feature_gate *gates, size_t ngates, const char *list, char *msg,
                            size_t msgsz)
{
    for (size_t i = 0; i < ngates; i++)
        *gates[i].value = gates[i].def;
    if (!list)
        return 0;
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *item = p;
        size_t in = n;
        trim(&item, &in);
        /* An empty item ("--feature-gates=", a trailing comma) sets nothing. */
        if (in && apply_item(gates, ngates, item, in, msg, msgsz) != 0)
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

void olm_feature_gates_usage(FILE *out, const olm_feature_gate *gates, size_t ngates, const char *indent)
{
    if (!ngates)
        fprintf(out, "%s(none in this build)\n", indent);
    for (size_t i = 0; i < ngates; i++)
        fprintf(out, "%s%s=true|false (default %s): %s\n", indent, gates[i].name, gates[i].def ? "true" : "false",
                gates[i].about);
}

/* olm_flags: see olm_flags.h.
 *
 * getopt_long splits "--name=value" / "--name value" and steps over values.  What it does
 * not do the way the daemons always behaved is checked before each argument reaches it:
 * names must match exactly (it would take "--cache" for "--cache-dir"), a word that is not
 * a flag is an error (it would stop there, or permute it away), and a boolean takes only
 * "true" or "false".  So each argument is looked up here first, and getopt_long only ever
 * sees arguments it will accept. */
#include "olm_flags.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "olm_parse.h"

/* getopt_long's return value for row i; above every character. */
#define ROW_VAL(i) (256 + (int)(i))

/* Fills msg from a template in which the first "%s" stands for `arg`. */
static int say(char *msg, size_t msgsz, const char *tmpl, const char *arg)
{
    const char *at = strstr(tmpl, "%s");
    if (at)
        snprintf(msg, msgsz, "%.*s%s%s", (int)(at - tmpl), tmpl, arg, at + 2);
    else
        snprintf(msg, msgsz, "%s", tmpl);
    return -1;
}

static int bad_value(const olm_flag *f, const char *value, char *msg, size_t msgsz)
{
    if (f->bad)
        return say(msg, msgsz, f->bad, value);
    snprintf(msg, msgsz, "%s: bad value \"%s\"", f->name, value);
    return -1;
}

/* Stores `value` (NULL: the flag was given without one) into the row's destination.
 * `given` is false for defaults, which skip the range checks (0 often means "unset"). */
static int set_value(const olm_flag *f, const char *value, bool given, char *msg, size_t msgsz)
{
    switch (f->type) {
    case OLM_FLAG_TYPE_STRING:
        *f->dst.str = value;
        return 0;
    case OLM_FLAG_TYPE_BOOL:
        /* Only "true"/"false" get here from argv (lookup() refuses the rest). */
        *f->dst.b = given ? !value || strcmp(value, "true") == 0 : value && strcmp(value, "true") == 0;
        return 0;
    case OLM_FLAG_TYPE_NO:
        *f->dst.b = !given;
        return 0;
    case OLM_FLAG_TYPE_DURATION: {
        uint64_t ms = 0;
        if (value && (olm_parse_duration(value, &ms) != 0 || (given && ms < f->min)))
            return bad_value(f, value, msg, msgsz);
        *f->dst.ms = ms;
        return 0;
    }
    case OLM_FLAG_TYPE_APPEND: {
        if (!given) {
            snprintf(f->dst.buf, f->max, "%s", value ? value : "");
            return 0;
        }
        size_t used = strlen(f->dst.buf), n = value ? strlen(value) : 0;
        if (used + (used ? 1 : 0) + n >= f->max) {
            snprintf(msg, msgsz, "%s: the values given add up to more than %zu bytes", f->name, (size_t)f->max - 1);
            return -1;
        }
        snprintf(f->dst.buf + used, f->max - used, "%s%s", used && n ? "," : "", value ? value : "");
        return 0;
    }
    case OLM_FLAG_TYPE_UINT: {
        long n = 0;
        if (value) {
            char *end;
            n = strtol(value, &end, 10);
            if (end == value || *end || n < 0 || (unsigned long)n > UINT_MAX ||
                (given && ((uint64_t)n < f->min || (uint64_t)n > f->max)))
                return bad_value(f, value, msg, msgsz);
        }
        *f->dst.u = (unsigned)n;
        return 0;
    }
    }
    return bad_value(f, value ? value : "", msg, msgsz);
}

/* A row spelt with one dash ("-v", klog's verbosity): Go's flag package takes it as "-v N",
 * "-v=N", "--v N" and "--v=N".  The row when `arg` is one of those, else NULL; *value is what
 * follows "=", or NULL. */
static const olm_flag *lookup_short(const olm_flag *flags, size_t nflags, const char *arg, const char **value)
{
    const char *name = arg[0] == '-' ? arg + 1 + (arg[1] == '-') : NULL;
    if (!name || !*name || *name == '-')
        return NULL;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t i = 0; i < nflags; i++) {
        const char *n = flags[i].name;
        if (n[0] == '-' && n[1] != '-' && strlen(n + 1) == len && strncmp(n + 1, name, len) == 0) {
            *value = eq ? eq + 1 : NULL;
            return &flags[i];
        }
    }
    return NULL;
}

/* The row `arg` names, or NULL when it is not a flag of the table (or not spelt as one).
 * *help is set for -h / --help. */
static const olm_flag *lookup(const olm_flag *flags, size_t nflags, const char *arg, bool *help)
{
    *help = strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
    if (*help || strncmp(arg, "--", 2) != 0)
        return NULL;
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t i = 0; i < nflags; i++) {
        const olm_flag *f = &flags[i];
        if (strncmp(f->name, "--", 2) != 0 || strlen(f->name + 2) != len || strncmp(f->name + 2, name, len) != 0)
            continue;
        if (eq && f->type == OLM_FLAG_TYPE_NO)
            return NULL;
        if (eq && f->type == OLM_FLAG_TYPE_BOOL && strcmp(eq + 1, "true") != 0 && strcmp(eq + 1, "false") != 0)
            return NULL;
        return f;
    }
    return NULL;
}

int olm_flags_parse(const olm_flag *flags, size_t nflags, const char *unknown, int argc, char **argv, char *msg,
                    size_t msgsz)
{
    for (size_t i = 0; i < nflags; i++)
        if (set_value(&flags[i], flags[i].def, false, msg, msgsz) != 0)
            return -1;
    struct option *longopts = calloc(nflags + 2, sizeof *longopts);
    if (!longopts) {
        snprintf(msg, msgsz, "out of memory");
        return -1;
    }
    size_t nlong = 0;
    for (size_t i = 0; i < nflags; i++) {
        const olm_flag *f = &flags[i];
        if (strncmp(f->name, "--", 2) != 0)
            continue; /* one-dash rows are handled here, never by getopt_long */
        int has_arg = f->type == OLM_FLAG_TYPE_BOOL ? optional_argument
                      : f->type == OLM_FLAG_TYPE_NO ? no_argument
                                                    : required_argument;
        longopts[nlong++] = (struct option){f->name + 2, has_arg, NULL, ROW_VAL(i)};
    }
    longopts[nlong] = (struct option){"help", no_argument, NULL, 'h'};
    /* "+": stop at the first non-flag instead of permuting argv; ":": report a missing
     * value as ':'.  optind = 0 re-initialises glibc's getopt for a second parse. */
    opterr = 0;
    optind = 0;
    int rc = 0;
    for (;;) {
        int next = optind ? optind : 1;
        if (next >= argc)
            break;
        const char *sval;
        const olm_flag *sf = lookup_short(flags, nflags, argv[next], &sval);
        if (sf) {
            if (!sval && next + 1 >= argc) {
                rc = say(msg, msgsz, "%s needs a value", sf->name);
                break;
            }
            if ((rc = set_value(sf, sval ? sval : argv[next + 1], true, msg, msgsz)) != 0)
                break;
            optind = next + (sval ? 1 : 2); /* getopt_long is between arguments: it resumes there */
            continue;
        }
        bool help;
        const olm_flag *f = lookup(flags, nflags, argv[next], &help);
        if (!f && !help) {
            rc = say(msg, msgsz, unknown, argv[next]);
            break;
        }
        int c = getopt_long(argc, argv, "+:h", longopts, NULL);
        if (c == 'h') {
            rc = 1;
            break;
        }
        if (c == ':') {
            rc = say(msg, msgsz, "%s needs a value", f ? f->name : argv[next]);
            break;
        }
        if (c < ROW_VAL(0) || c >= ROW_VAL(nflags)) { /* not expected after lookup() */
            rc = say(msg, msgsz, unknown, argv[next]);
            break;
        }
        if ((rc = set_value(&flags[c - ROW_VAL(0)], optarg, true, msg, msgsz)) != 0)
            break;
    }
    free(longopts);
    return rc;
}

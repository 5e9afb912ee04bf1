/* olm_flags: the daemons' command lines, on getopt_long.
 *
 * A daemon lists its flags in one table, one row per flag: its spelling, where the value
 * goes, its default and how a bad value is reported.  Adding a flag is adding a row (and
 * the field it fills):
 *
 *     const olm_flag flags[] = {
 *         OLM_FLAG_STRING("--cache-dir", &f->cache_dir, "/var/cache/catalogd"),
 *         OLM_FLAG_BOOL("--leader-elect", &f->leader_elect, "false"),
 *         OLM_FLAG_DURATION("--gc-interval", &f->gc_interval_ms, "12h", 1, NULL),
 *         OLM_FLAG_UINT("--max-concurrent-reconciles", &f->concurrency, "2", 1, 64, NULL),
 *     };
 *     rc = olm_flags_parse(flags, OLM_FLAGS_COUNT(flags), "unknown flag %s", argc, argv, msg, sizeof msg);
 *
 * An alias (an older spelling kept working) is a second row with the same destination and
 * the same default: defaults are set row by row, so a different one would win.
 *
 * Syntax, as the Go daemons upstream accept it: "--name VALUE" and "--name=VALUE" for
 * flags with a value (the word after the flag is its value even when it starts with "-");
 * "--name", "--name=true" and "--name=false" for booleans; "-h" and "--help" for help.
 * Names match exactly (getopt_long's unique-prefix abbreviations are refused), and every
 * other argument (a positional word, "-x", "--") is an unknown flag.  A row named with one
 * dash ("-v", klog's verbosity) takes a value and is matched as "-v N", "-v=N", "--v N" and
 * "--v=N", the spellings Go's flag package accepts.
 *
 * Messages: `unknown`, a row's `bad` and the missing-value message are templates in which
 * "%s" stands for the argument, the value or the flag name; nothing else is interpreted.
 *
 * Not thread-safe (getopt keeps its state in globals): call it from main. */
#ifndef OLMV1_OLM_FLAGS_H
#define OLMV1_OLM_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum olm_flag_type {
    OLM_FLAG_TYPE_STRING,   /* value kept as is: *str points into argv (or at the default) */
    OLM_FLAG_TYPE_BOOL,     /* "--name" or "--name=true" sets *b, "--name=false" clears it */
    OLM_FLAG_TYPE_NO,       /* "--name" (no value) clears *b, which defaults to true: "--no-access-log" */
    OLM_FLAG_TYPE_DURATION, /* olm_parse_duration into *ms; under `min` milliseconds is bad */
    OLM_FLAG_TYPE_UINT,     /* decimal into *u, in min..max */
    OLM_FLAG_TYPE_APPEND,   /* every occurrence joined with ',' into buf[max] (Go's repeated
                             * map flags: "--feature-gates=A=true --feature-gates=B=false") */
} olm_flag_type;

typedef struct olm_flag {
    const char *name; /* with its dashes: "--cache-dir" */
    olm_flag_type type;
    union {
        const char **str;
        bool *b;
        uint64_t *ms;
        unsigned *u;
        char *buf;
    } dst;
    const char *def;   /* default, spelt like a value (NULL: NULL, false or 0); not range-checked */
    uint64_t min, max; /* DURATION: min; UINT: min..max */
    const char *bad;   /* message for a bad value, "%s" = the value; NULL: "<name>: bad value \"%s\"" */
} olm_flag;

/* One row each; the typed union member makes a wrong destination a compile error. */
#define OLM_FLAG_STRING(n, p, d) {.name = (n), .type = OLM_FLAG_TYPE_STRING, .dst.str = (p), .def = (d)}
#define OLM_FLAG_BOOL(n, p, d) {.name = (n), .type = OLM_FLAG_TYPE_BOOL, .dst.b = (p), .def = (d)}
#define OLM_FLAG_NO(n, p) {.name = (n), .type = OLM_FLAG_TYPE_NO, .dst.b = (p), .def = "true"}
#define OLM_FLAG_DURATION(n, p, d, min_ms, bad_msg)                                                              \
    {.name = (n), .type = OLM_FLAG_TYPE_DURATION, .dst.ms = (p), .def = (d), .min = (min_ms), .bad = (bad_msg)}
#define OLM_FLAG_UINT(n, p, d, lo, hi, bad_msg)                                                                  \
    {.name = (n), .type = OLM_FLAG_TYPE_UINT, .dst.u = (p), .def = (d), .min = (lo), .max = (hi), .bad = (bad_msg)}

#define OLM_FLAG_APPEND(n, array)                                                                                \
    {.name = (n), .type = OLM_FLAG_TYPE_APPEND, .dst.buf = (array), .max = sizeof(array)}

#define OLM_FLAGS_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* Sets every row's default, then parses argv[1..argc-1] in order.  Returns 0; 1 for
 * -h/--help (the caller prints its usage); -1 with msg set at the first bad argument
 * (`unknown` for an unknown one, e.g. "unknown flag %s"; "<name> needs a value"; the
 * row's `bad`).  Strings stored point into argv or at the defaults. */
int olm_flags_parse(const olm_flag *flags, size_t nflags, const char *unknown, int argc, char **argv, char *msg,
                    size_t msgsz);

#endif

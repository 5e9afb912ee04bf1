/* `olmv1 semver match` and `olmv1 semver compare`.
 *
 * Two syntaxes, matching where OLM uses each library:
 *   masterminds (default): Masterminds v3 constraints, versions parsed leniently (NewVersion);
 *   blang: blang v4 ranges (skipRange), versions parsed strictly (Parse).
 * Exit codes: 0 answered, 2 bad usage or invalid range, 3 invalid version.
 * --batch reads TAB-separated lines from stdin and answers one word per line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "semver.h"

enum syntax { SYNTAX_MASTERMINDS, SYNTAX_BLANG };

struct semver_args {
    enum syntax syntax;
    bool batch;
    bool help;
    int npos;
    const char *pos[2];
};

static void match_usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: olmv1 %s [--syntax masterminds|blang] RANGE VERSION\n"
            "       olmv1 %s [--syntax masterminds|blang] --batch < LINES\n"
            "\n"
            "Prints true or false: does VERSION satisfy RANGE?\n"
            "\n"
            "  --syntax masterminds  Masterminds v3 constraint, as in ClusterExtension\n"
            "                        spec.source.catalog.version; VERSION parsed leniently\n"
            "                        (default)\n"
            "  --syntax blang        blang v4 range, as in a channel entry's skipRange;\n"
            "                        VERSION must be strict MAJOR.MINOR.PATCH[-pre][+build]\n"
            "  --batch               read RANGE<TAB>VERSION lines from stdin and print one of\n"
            "                        true, false, error (invalid range) or badversion per line\n"
            "\n"
            "Exit status: 0 answered, 2 invalid range or bad usage, 3 invalid version.\n",
            argv0, argv0);
}

static void compare_usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: olmv1 %s [--syntax masterminds|blang] V1 V2\n"
            "       olmv1 %s [--syntax masterminds|blang] --batch < LINES\n"
            "\n"
            "Prints -1, 0 or 1 as V1 sorts below, equal to or above V2 (semver precedence;\n"
            "build metadata ignored).\n"
            "\n"
            "  --syntax masterminds  parse versions leniently (v prefix, 1-3 parts) (default)\n"
            "  --syntax blang        parse versions strictly (MAJOR.MINOR.PATCH[-pre][+build])\n"
            "  --batch               read V1<TAB>V2 lines from stdin and print -1, 0, 1 or\n"
            "                        badversion per line\n"
            "\n"
            "Exit status: 0 answered, 2 bad usage, 3 invalid version.\n",
            argv0, argv0);
}

/* Returns 0 when the arguments are usable, -1 (after a message on stderr) when not. */
static int parse_args(int argc, char **argv, struct semver_args *a)
{
    memset(a, 0, sizeof *a);
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            const char *value = NULL;
            if (strcmp(arg, "--") == 0) {
                options_done = true;
            } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
                a->help = true;
            } else if (strcmp(arg, "--batch") == 0) {
                a->batch = true;
            } else if (strcmp(arg, "--syntax") == 0) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "olmv1 %s: --syntax needs a value (masterminds or blang)\n",
                            argv[0]);
                    return -1;
                }
                value = argv[++i];
            } else if (strncmp(arg, "--syntax=", 9) == 0) {
                value = arg + 9;
            } else {
                fprintf(stderr, "olmv1 %s: unknown option \"%s\"\n", argv[0], arg);
                return -1;
            }
            if (value) {
                if (strcmp(value, "masterminds") == 0) {
                    a->syntax = SYNTAX_MASTERMINDS;
                } else if (strcmp(value, "blang") == 0) {
                    a->syntax = SYNTAX_BLANG;
                } else {
                    fprintf(stderr,
                            "olmv1 %s: unknown syntax \"%s\" (expected masterminds or blang)\n",
                            argv[0], value);
                    return -1;
                }
            }
            continue;
        }
        if (a->npos == 2) {
            fprintf(stderr, "olmv1 %s: too many arguments (unexpected \"%s\")\n", argv[0], arg);
            return -1;
        }
        a->pos[a->npos++] = arg;
    }
    if (a->help)
        return 0;
    if (a->batch && a->npos != 0) {
        fprintf(stderr, "olmv1 %s: --batch takes its input from stdin, not arguments\n", argv[0]);
        return -1;
    }
    if (!a->batch && a->npos != 2) {
        fprintf(stderr, "olmv1 %s: expected 2 arguments, got %d\n", argv[0], a->npos);
        return -1;
    }
    return 0;
}

static int parse_version(enum syntax syntax, const char *s, semver_version *v, olm_error *err)
{
    return syntax == SYNTAX_BLANG ? semver_parse_strict(s, v, err)
                                  : semver_parse_lenient(s, v, err);
}

/* A parsed range of either syntax. */
struct any_range {
    enum syntax syntax;
    semver_constraint *constraint; /* owned, masterminds */
    semver_range *range;           /* owned, blang */
};

static int any_range_parse(struct any_range *r, enum syntax syntax, const char *s, olm_error *err)
{
    r->syntax = syntax;
    r->constraint = NULL;
    r->range = NULL;
    if (syntax == SYNTAX_BLANG)
        r->range = semver_range_parse(s, err);
    else
        r->constraint = semver_constraint_parse(s, err);
    return r->range || r->constraint ? 0 : -1;
}

static bool any_range_match(const struct any_range *r, const semver_version *v)
{
    return r->syntax == SYNTAX_BLANG ? semver_range_match(r->range, v)
                                     : semver_constraint_check(r->constraint, v);
}

static void any_range_free(struct any_range *r)
{
    semver_constraint_free(r->constraint);
    semver_range_free(r->range);
    r->constraint = NULL;
    r->range = NULL;
}

/* Splits a batch line in place at its first TAB, after dropping the line end
 * ("\n" or "\r\n").  A line without TAB has an empty second field. */
static void split_line(char *line, ssize_t len, char **first, char **second)
{
    if (len > 0 && line[len - 1] == '\n')
        line[--len] = '\0';
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    char *tab = strchr(line, '\t');
    *first = line;
    if (tab) {
        *tab = '\0';
        *second = tab + 1;
    } else {
        *second = line + len; /* "" */
    }
}

/* The answer word for one match line. */
static const char *match_line(enum syntax syntax, const char *range_text, const char *version_text)
{
    struct any_range r;
    if (any_range_parse(&r, syntax, range_text, NULL) < 0)
        return "error";
    semver_version v;
    const char *word = "badversion";
    if (parse_version(syntax, version_text, &v, NULL) == 0) {
        word = any_range_match(&r, &v) ? "true" : "false";
        semver_version_free(&v);
    }
    any_range_free(&r);
    return word;
}

static const char *compare_line(enum syntax syntax, const char *a_text, const char *b_text)
{
    semver_version a, b;
    if (parse_version(syntax, a_text, &a, NULL) < 0)
        return "badversion";
    if (parse_version(syntax, b_text, &b, NULL) < 0) {
        semver_version_free(&a);
        return "badversion";
    }
    int c = semver_compare(&a, &b);
    semver_version_free(&a);
    semver_version_free(&b);
    return c < 0 ? "-1" : c > 0 ? "1" : "0";
}

/* Reads stdin line by line, answering each with `answer`.  Exit code. */
static int run_batch(const char *argv0, enum syntax syntax,
                     const char *(*answer)(enum syntax, const char *, const char *))
{
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    char *line = NULL; /* owned; grown by getline */
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        char *first, *second;
        split_line(line, len, &first, &second);
        fputs(answer(syntax, first, second), stdout);
        fputc('\n', stdout);
    }
    free(line);
    if (ferror(stdin)) {
        fprintf(stderr, "olmv1 %s: reading stdin failed\n", argv0);
        return 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_stdout_failed(argv0);
    return 0;
}

int cmd_semver_match(int argc, char **argv)
{
    struct semver_args a;
    if (parse_args(argc, argv, &a) < 0) {
        match_usage(stderr, argv[0]);
        return 2;
    }
    if (a.help) {
        match_usage(stdout, argv[0]);
        return 0;
    }
    if (a.batch)
        return run_batch(argv[0], a.syntax, match_line);

    olm_error err;
    struct any_range r;
    if (any_range_parse(&r, a.syntax, a.pos[0], &err) < 0) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        return 2;
    }
    semver_version v;
    if (parse_version(a.syntax, a.pos[1], &v, &err) < 0) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        any_range_free(&r);
        return 3;
    }
    puts(any_range_match(&r, &v) ? "true" : "false");
    semver_version_free(&v);
    any_range_free(&r);
    return 0;
}

int cmd_semver_compare(int argc, char **argv)
{
    struct semver_args a;
    if (parse_args(argc, argv, &a) < 0) {
        compare_usage(stderr, argv[0]);
        return 2;
    }
    if (a.help) {
        compare_usage(stdout, argv[0]);
        return 0;
    }
    if (a.batch)
        return run_batch(argv[0], a.syntax, compare_line);

    olm_error err;
    semver_version v1, v2;
    if (parse_version(a.syntax, a.pos[0], &v1, &err) < 0) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        return 3;
    }
    if (parse_version(a.syntax, a.pos[1], &v2, &err) < 0) {
        fprintf(stderr, "olmv1 %s: %s\n", argv[0], err.msg);
        semver_version_free(&v1);
        return 3;
    }
    int c = semver_compare(&v1, &v2);
    puts(c < 0 ? "-1" : c > 0 ? "1" : "0");
    semver_version_free(&v1);
    semver_version_free(&v2);
    return 0;
}

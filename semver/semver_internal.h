/* Helpers shared by the semver sources; not part of the public API. */
#ifndef OLM_SEMVER_INTERNAL_H
#define OLM_SEMVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Go's regexp `\s`: space, \t, \n, \f, \r (not \v). Masterminds uses it. */
static inline bool semver_is_go_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static inline bool semver_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* [0-9A-Za-z-]: the characters of a prerelease or build identifier. */
static inline bool semver_is_ident_char(char c)
{
    return semver_is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

/* Parses n ASCII digits (n >= 1) into *out; false if a non-digit is present or
 * the value does not fit uint64. */
bool semver_parse_u64(const char *s, size_t n, uint64_t *out);

/* True if [s, s+n) is non-empty and all ASCII digits. */
bool semver_all_digits(const char *s, size_t n);

#endif

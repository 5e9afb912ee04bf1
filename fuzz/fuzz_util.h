/* fuzz_util: what every target needs.  libFuzzer's input is not NUL-terminated, and most
 * parsers take C strings, so targets copy it first (an embedded NUL then simply ends the
 * string, as it would for a header or a flag value).  A failed check aborts, which libFuzzer
 * reports as a crash with the input saved. */
#ifndef OLM_FUZZ_UTIL_H
#define OLM_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data[0..size); NULL only when out of memory. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);                  \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

#endif

/* olm_error: the error convention of every library in this project.
 *
 * A function that can fail returns an int (0 = success, -1 = failure) or a
 * pointer (NULL = failure) and fills a caller-supplied olm_error with a message
 * a user can act on.  The error is a fixed-size value so that filling it never
 * allocates and can never fail itself.  Passing NULL for the error is allowed
 * when the caller does not care about the message. */
#ifndef OLM_ERROR_H
#define OLM_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define OLM_ERROR_MAX 2048

typedef struct olm_error {
    char msg[OLM_ERROR_MAX];
} olm_error;

/* Sets the message (printf-style); returns -1 so callers can `return olm_error_set(...)`. */
int olm_error_set(olm_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int olm_error_setv(olm_error *err, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Prepends "<prefix>: " to an existing message (wrapping, like Go's fmt.Errorf("...: %w")). */
int olm_error_wrap(olm_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void olm_error_clear(olm_error *err);

#endif

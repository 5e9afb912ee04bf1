/* stderr_capture: what the code under test writes to stderr (its log lines), for the tests
 * that check them.  begin points fd 2 at a temporary file; end puts fd 2 back and returns the
 * text (at most `max` bytes kept; the caller frees it).  Not thread-safe: nothing else may
 * move fd 2 meanwhile. */
#ifndef OLM_TESTSUPPORT_STDERR_CAPTURE_H
#define OLM_TESTSUPPORT_STDERR_CAPTURE_H

#include <stddef.h>

typedef struct stderr_capture {
    int fd, saved;
} stderr_capture;

void stderr_capture_begin(stderr_capture *c);
char *stderr_capture_end(stderr_capture *c, size_t max);

#endif

/* stderr_capture: see the header. */
#include "stderr_capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void stderr_capture_begin(stderr_capture *c)
{
    char path[] = "/tmp/olm-stderr-XXXXXX";
    c->fd = mkstemp(path);
    if (c->fd < 0) {
        perror("stderr_capture: mkstemp");
        abort();
    }
    unlink(path); /* the open fd keeps it */
    fflush(stderr);
    c->saved = dup(2);
    dup2(c->fd, 2);
}

char *stderr_capture_end(stderr_capture *c, size_t max)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *out = malloc(max + 1);
    if (!out)
        abort();
    ssize_t n = pread(c->fd, out, max, 0);
    close(c->fd);
    out[n > 0 ? n : 0] = '\0';
    return out;
}

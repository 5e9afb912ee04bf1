/* olm_read_file: see olm_read_file.h. */
#include "olm_read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fails with the message already set: frees buf, keeps errno. */
static char *fail(char *buf, int e)
{
    free(buf);
    errno = e;
    return NULL;
}

char *olm_read_file(const char *path, size_t max_size, size_t *len, olm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        olm_error_set(err, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = olm_read_fd(fd, path, max_size, len, err);
    int e = errno;
    close(fd);
    errno = e;
    return buf;
}

char *olm_read_fd(int fd, const char *name, size_t max_size, size_t *len, olm_error *err)
{
    /* The size of a regular file is a good first guess; pipes and /proc files say 0. */
    struct stat st;
    size_t cap = 8192;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size < SIZE_MAX - 1)
        cap = (size_t)st.st_size + 1;
    if (max_size && max_size < SIZE_MAX - 1 && cap > max_size + 1)
        cap = max_size + 1; /* one more byte tells "bigger than max_size" apart */
    char *buf = malloc(cap + 1);
    if (!buf) {
        olm_error_set(err, "out of memory reading %s", name);
        return fail(NULL, ENOMEM);
    }
    size_t n = 0;
    for (;;) {
        if (n == cap) {
            size_t grown = cap > SIZE_MAX / 2 - 1 ? 0 : cap * 2;
            char *nb = grown ? realloc(buf, grown + 1) : NULL;
            if (!nb) {
                olm_error_set(err, "out of memory reading %s", name);
                return fail(buf, ENOMEM);
            }
            buf = nb;
            cap = grown;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            olm_error_set(err, "cannot read %s: %s", name, strerror(e));
            return fail(buf, e);
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (max_size && n > max_size) {
            olm_error_set(err, "%s is larger than %zu bytes", name, max_size);
            return fail(buf, EFBIG);
        }
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

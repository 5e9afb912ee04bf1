/* Fetching a layer and unpacking it at once.
 *
 * A pull used to download each layer into a temp file, check its digest, then unpack it:
 * the download and the decompression took turns.  Here the download writes into a pipe
 * whose other end a second thread unpacks, so gunzip + untar run while the bytes arrive.
 * The digest is still checked over every byte (the verifying sink hashes as it writes);
 * what changes is that the unpacker reads bytes before that check ends.  That is safe
 * because the unpacker writes only inside the pull's temp tree, under its usual limits
 * (oci_unpack.c), and that tree is used (renamed into place) only when the whole pull
 * succeeded, digest included; a mismatch fails the pull with the fetch's error and the
 * temp tree is removed as on any other failure.
 *
 * When the unpack fails before the layer has all arrived (a refused entry, a path out of the
 * tree, a file over the limits, a bad gzip header), the rest of the download is useless: the
 * layer is refused whatever its remaining bytes say.  The unpack thread then raises
 * `unpack_failed`, and the next write of the download into the pipe (the pipe's FILE is ours,
 * fopencookie) refuses its bytes, which makes the verifying sink, and so curl, stop the
 * transfer at once instead of fetching and hashing up to the layer's declared size.
 *
 * Which error is reported:
 *   - the fetch failed on its own (refused status, short read, a stall, the deadline, more
 *     bytes than declared, a digest mismatch): the fetch's error.  Such a fetch also makes
 *     the unpacker fail (at the early EOF, or on the bad bytes) and the fetch says why.
 *   - the fetch failed only because we stopped it: the unpacker's error, which names the
 *     entry that was refused.  The layer's digest was not checked then (not all of it came);
 *     a layer corrupted in transit that the unpacker refuses reads as refused, not as a
 *     mismatch, and is rejected just the same.
 *   - the fetch succeeded and the unpack failed (it failed after the last byte was written,
 *     or on the tar's end): the unpacker's error. */
#include "oci_internal.h"
#include "oci_pull_internal.h"
#include "oci_fetch.h"
#include "oci_unpack.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A bigger pipe than the 64 KiB default: fewer wake-ups between the two threads. */
#define LAYER_PIPE_BYTES (1024 * 1024)

typedef struct applier {
    oci_unpacker *u;
    int fd; /* the pipe's read end, owned by the thread */
    const char *label;
    olm_error err;
    int rc;
    atomic_bool unpack_failed; /* raised before the thread drains the pipe */
} applier;

static void *apply_thread(void *arg)
{
    applier *a = arg;
    a->rc = oci_unpacker_apply_fd(a->u, a->fd, a->label, &a->err);
    if (a->rc != 0)
        atomic_store(&a->unpack_failed, true); /* the writer stops at its next write */
    /* Read to the end whatever the unpacker left (a failure, or bytes past the tar's end):
     * the writer must never block on a full pipe nor get EPIPE.  After a failure that is at
     * most what the pipe holds plus the write in progress: the writer sees the flag at its
     * next write and closes its end. */
    char buf[65536];
    for (;;) {
        ssize_t n = read(a->fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    close(a->fd);
    return NULL;
}

/* The download's end of the pipe, as a FILE for the verifying sink. */
typedef struct pipe_writer {
    int fd;                           /* owned: closed by fclose */
    const atomic_bool *unpack_failed; /* the applier's */
    bool stopped;                     /* a write was refused because the unpack had failed */
} pipe_writer;

/* Returns what it wrote; short (0) on failure with errno set.  Never -1: glibc's fwrite takes
 * a cookie write's -1 (EOF) for complete success. */
static ssize_t pipe_write(void *cookie, const char *buf, size_t len)
{
    pipe_writer *w = cookie;
    if (atomic_load(w->unpack_failed)) {
        w->stopped = true;
        errno = ECANCELED;
        return 0; /* fwrite comes up short, the sink fails, curl aborts the transfer */
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(w->fd, buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static int pipe_close(void *cookie)
{
    pipe_writer *w = cookie;
    return close(w->fd); /* EOF for the unpacker */
}

int oci_layer_fetch_apply(oci_registry *reg, const char *repository, const oci_descriptor *d,
                          uint64_t max, oci_unpacker *u, const char *label, olm_error *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return olm_error_set(err, "%s: pipe: %s", label, strerror(errno));
    (void)fcntl(p[1], F_SETPIPE_SZ, LAYER_PIPE_BYTES); /* best effort: the default works too */
    applier a = {.u = u, .fd = p[0], .label = label};
    atomic_init(&a.unpack_failed, false);
    pthread_t tid;
    int perr = pthread_create(&tid, NULL, apply_thread, &a);
    if (perr != 0) {
        close(p[0]);
        close(p[1]);
        return olm_error_set(err, "%s: starting the unpack thread: %s", label, strerror(perr));
    }
    pipe_writer w = {.fd = p[1], .unpack_failed = &a.unpack_failed};
    FILE *f = fopencookie(&w, "w", (cookie_io_functions_t){.write = pipe_write, .close = pipe_close});
    int rc;
    if (!f) {
        close(p[1]);
        rc = olm_error_set(err, "%s: fopencookie: %s", label, strerror(errno));
    } else {
        setvbuf(f, NULL, _IONBF, 0); /* the sink writes curl's chunks: no second copy */
        rc = oci_blob_fetch_file(reg, repository, d, max, f, err);
        if (fclose(f) != 0 && rc == 0) /* EOF for the unpacker */
            rc = olm_error_set(err, "%s: closing the pipe: %s", label, strerror(errno));
    }
    pthread_join(tid, NULL);
    /* The fetch's error first (see the top of the file), unless we stopped the fetch
     * ourselves: then the unpacker's error says why. */
    if (rc != 0 && !w.stopped)
        return rc;
    if (a.rc != 0) {
        *err = a.err;
        return -1;
    }
    return rc;
}

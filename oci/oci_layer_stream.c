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
 * temp tree is removed as on any other failure. */
#include "oci_internal.h"
#include "oci_pull_internal.h"
#include "oci_fetch.h"
#include "oci_unpack.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
} applier;

static void *apply_thread(void *arg)
{
    applier *a = arg;
    a->rc = oci_unpacker_apply_fd(a->u, a->fd, a->label, &a->err);
    /* Read to the end whatever the unpacker left (a failure, or bytes past the tar's end):
     * the writer must never block on a full pipe nor get EPIPE. */
    char buf[65536];
    for (;;) {
        ssize_t n = read(a->fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    close(a->fd);
    return NULL;
}

int oci_layer_fetch_apply(oci_registry *reg, const char *repository, const oci_descriptor *d,
                          uint64_t max, oci_unpacker *u, const char *label, olm_error *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return olm_error_set(err, "%s: pipe: %s", label, strerror(errno));
    (void)fcntl(p[1], F_SETPIPE_SZ, LAYER_PIPE_BYTES); /* best effort: the default works too */
    applier a = {.u = u, .fd = p[0], .label = label};
    pthread_t tid;
    int perr = pthread_create(&tid, NULL, apply_thread, &a);
    if (perr != 0) {
        close(p[0]);
        close(p[1]);
        return olm_error_set(err, "%s: starting the unpack thread: %s", label, strerror(perr));
    }
    FILE *f = fdopen(p[1], "w");
    int rc;
    if (!f) {
        close(p[1]);
        rc = olm_error_set(err, "%s: fdopen: %s", label, strerror(errno));
    } else {
        setvbuf(f, NULL, _IONBF, 0); /* the sink writes curl's chunks: no second copy */
        rc = oci_blob_fetch_file(reg, repository, d, max, f, err);
        if (fclose(f) != 0 && rc == 0) /* EOF for the unpacker */
            rc = olm_error_set(err, "%s: closing the pipe: %s", label, strerror(errno));
    }
    pthread_join(tid, NULL);
    /* The fetch's error first: a short or corrupt download makes the unpacker fail too,
     * and the fetch says why. */
    if (rc != 0)
        return rc;
    if (a.rc != 0) {
        *err = a.err;
        return -1;
    }
    return 0;
}

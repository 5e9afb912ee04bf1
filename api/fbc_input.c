/* fbc_input: one catalog file's bytes for the loader, given back as it goes.
 *
 * A catalog may be a single file as big as its rendered output.  Read into the
 * heap, it would double the load's peak; so a big file is mapped read-only instead,
 * and once the decoders have moved past a part of it (blobs are handed over in file
 * order, and neither decoder looks back), those pages are dropped from the process
 * with MADV_DONTNEED.  They are clean file pages: dropping them loses nothing, and a
 * stray later read would simply fault them in again.
 *
 * Files from MAP_MIN_SIZE (128 KiB) up are mapped too, not only the big ones: read, each
 * went into a buffer of its own that, in the daemons, is an mmap of its own (malloc's
 * fixed threshold, olm_malloc_tune.h), so every page faulted in anew and the bytes were
 * copied once more (certified-operators, 55 files of 14 KB-4 MB: ~4800 of the load's
 * ~12000 page faults; mapped, the page cache's pages are mapped 16 at a fault).  Smaller
 * files are read: they come from the heap, and mapping them saves nothing.  A mapped
 * file that another process truncates during the load would raise SIGBUS; catalogd loads
 * its own unpacked copy and the CLI the user's directory, so that is not guarded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fbc_internal.h"

#define MAP_MIN_SIZE (128u << 10)   /* smaller files are read */
#define RELEASE_STEP (4u << 20)     /* give pages back in slices at least this big */

int fbc_input_open(fbc_input *in, const char *path, olm_error *err)
{
    memset(in, 0, sizeof *in);
    in->scan_line = 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)MAP_MIN_SIZE) {
            void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                close(fd);
                in->data = p;
                in->len = (size_t)st.st_size;
                in->mapped = true;
                return 0;
            }
        }
        close(fd);
    }
    /* Not mappable (small, special, or mmap refused): read it, which also gives the
     * usual error messages. */
    char *data = NULL;
    if (fbc_read_file(path, &data, &in->len, err) < 0)
        return -1;
    in->data = data;
    return 0;
}

void fbc_input_consumed_before_line(fbc_input *in, int lineno)
{
    if (!in->mapped || in->len < RELEASE_STEP)
        return; /* nothing to give back before the end: no need to follow the lines */
    while (in->scan_line < lineno && in->scan_pos < in->len) {
        const char *nl = memchr(in->data + in->scan_pos, '\n', in->len - in->scan_pos);
        if (!nl)
            break;
        in->scan_pos = (size_t)(nl - in->data) + 1;
        in->scan_line++;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t upto = in->scan_pos / page * page;
    if (upto < in->released + RELEASE_STEP)
        return;
    /* Best effort: if the kernel refuses, the pages just stay until unmapped. */
    if (madvise((char *)in->data + in->released, upto - in->released, MADV_DONTNEED) == 0)
        in->released = upto;
}

void fbc_input_close(fbc_input *in)
{
    if (in->mapped)
        munmap((void *)in->data, in->len);
    else
        free((void *)in->data);
    memset(in, 0, sizeof *in);
}

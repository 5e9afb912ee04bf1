/* olm_read_file: a whole file into memory. */
#ifndef OLMV1_OLM_READ_FILE_H
#define OLMV1_OLM_READ_FILE_H

#include <stddef.h>

#include "olm_error.h"

/* Reads the file at `path` into a malloc'd buffer (caller frees) holding *len bytes
 * (len may be NULL) followed by a NUL, so text files can be used as C strings.
 * max_size > 0 refuses a bigger file; 0 means no limit.  Returns NULL with err naming the
 * path: "cannot open <path>: <why>", "cannot read <path>: <why>", "<path> is larger than
 * <max_size> bytes" or "out of memory reading <path>". */
char *olm_read_file(const char *path, size_t max_size, size_t *len, olm_error *err);

/* The same for an open descriptor (e.g. one from openat): reads the rest of `fd`, which it
 * leaves open; `name` stands for the path in the messages.  On failure errno says why
 * (ENOMEM, EFBIG for max_size, or read's). */
char *olm_read_fd(int fd, const char *name, size_t max_size, size_t *len, olm_error *err);

#endif

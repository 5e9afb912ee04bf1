/* Tree removal relative to a directory fd, never following symlinks.
 *
 * Used when a later layer replaces a directory, for whiteouts, and to drop old
 * cache entries and failed pulls.  Recursion holds one fd per level; unpacked
 * trees are at most OCI_UNPACK_MAX_DEPTH deep, far below the fd limit. */
#include "oci_unpack_rules.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_children(int dfd, const char *name, int depth, olm_error *err);

static int remove_at(int dirfd, const char *name, int depth, olm_error *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return 0;
        return olm_error_set(err, "removing \"%s\": %s", name, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        if (depth > OCI_UNPACK_MAX_DEPTH + 8)
            return olm_error_set(err, "removing \"%s\": tree too deep", name);
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return olm_error_set(err, "removing \"%s\": %s", name, strerror(errno));
        /* a read-only directory cannot be emptied; it is ours, so make it writable */
        if ((st.st_mode & 0700) != 0700 && fchmod(fd, (st.st_mode & 07777) | 0700) != 0) {
            int e = errno;
            close(fd);
            return olm_error_set(err, "removing \"%s\": %s", name, strerror(e));
        }
        if (remove_children(fd, name, depth, err) != 0) /* closes fd */
            return -1;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
            return olm_error_set(err, "removing \"%s\": %s", name, strerror(errno));
        return 0;
    }
    if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT)
        return olm_error_set(err, "removing \"%s\": %s", name, strerror(errno));
    return 0;
}

/* Removes everything inside the directory open as `dfd`, then closes it. */
static int remove_children(int dfd, const char *name, int depth, olm_error *err)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return olm_error_set(err, "removing \"%s\": %s", name, strerror(e));
    }
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        /* removing while reading is fine: readdir may skip or repeat nothing
         * we still need, and a repeat of a removed name is ENOENT → ignored */
        rc = remove_at(dirfd(d), e->d_name, depth + 1, err);
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = olm_error_set(err, "reading \"%s\": %s", name, strerror(errno));
    closedir(d);
    return rc;
}

int oci_remove_tree_at(int dirfd, const char *name, olm_error *err)
{
    return remove_at(dirfd, name, 0, err);
}

int oci_empty_dir_at(int dfd, const char *name, olm_error *err)
{
    int fd = dup(dfd);
    if (fd < 0)
        return olm_error_set(err, "emptying \"%s\": %s", name, strerror(errno));
    /* rewind: the fd may have been read before */
    if (lseek(fd, 0, SEEK_SET) != 0) {
        int e = errno;
        close(fd);
        return olm_error_set(err, "emptying \"%s\": %s", name, strerror(e));
    }
    return remove_children(fd, name, 0, err);
}

/* olm_fs: file-system helpers shared by the daemons. */
#include "olm_fs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int olm_mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0)
        return errno = ENOENT, -1;
    if (n >= sizeof buf)
        return errno = ENAMETOOLONG, -1;
    memcpy(buf, path, n + 1);
    /* Each prefix ending at a '/' (and the whole path) in turn; an existing one is fine. */
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        buf[i] = c;
    }
    /* EEXIST above also covers a file where the directory should be. */
    struct stat st;
    if (stat(path, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return errno = ENOTDIR, -1;
    return 0;
}

/* fbc_walk: list the files of a catalog directory in the order opm walks them.
 *
 * Go's fs.WalkDir reads each directory, sorts its entries by name (bytewise) and
 * descends depth first, so "a/x" comes before "a.txt" ("a" < "a.txt") although a
 * plain sort of full paths would put it after.  Directories are walked even when
 * ignored: a deeper .indexignore may re-include files, and that costs little. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "olm_array.h"
#include "fbc_internal.h"

#define INDEXIGNORE ".indexignore"

void fbc_file_list_free(fbc_file_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l->sizes);
    l->paths = NULL;
    l->sizes = NULL;
    l->n = l->cap = 0;
}

static int list_push(fbc_file_list *l, char *path, off_t size)
{
    /* Two arrays side by side: each grows to the same capacity; l->cap moves once both did. */
    size_t paths_cap = l->cap, sizes_cap = l->cap;
    if (OLM_ARRAY_RESERVE(l->paths, paths_cap, l->n + 1) < 0 ||
        OLM_ARRAY_RESERVE(l->sizes, sizes_cap, l->n + 1) < 0)
        return -1;
    l->cap = paths_cap;
    l->sizes[l->n] = size;
    l->paths[l->n++] = path;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *a, const char *b)
{
    char *s;
    if (!a[0])
        return strdup(b);
    return asprintf(&s, "%s/%s", a, b) < 0 ? NULL : s;
}

int fbc_read_file(const char *path, char **data, size_t *len, olm_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return olm_error_set(err, "open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        return olm_error_set(err, "read %s: %s", path, strerror(e));
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return olm_error_set(err, "read %s: out of memory", path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = cap > ((size_t)-1) / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                close(fd);
                return olm_error_set(err, "read %s: out of memory", path);
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return olm_error_set(err, "read %s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

/* Walks `rel` (relative to root; "" = root) whose absolute path is `abs`. */
static int walk(const char *abs, const char *rel, fbc_ignore *ig, fbc_file_list *out,
                olm_error *err)
{
    DIR *d = opendir(abs);
    if (!d)
        return olm_error_set(err, "open directory %s: %s", abs, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (OLM_ARRAY_RESERVE(names, cap, n + 1) < 0) {
            rc = olm_error_set(err, "walk %s: out of memory", abs);
            goto done;
        }
        if (!(names[n] = strdup(de->d_name))) {
            rc = olm_error_set(err, "walk %s: out of memory", abs);
            goto done;
        }
        n++;
    }
    if (errno)
        rc = olm_error_set(err, "read directory %s: %s", abs, strerror(errno));
    if (rc < 0)
        goto done;
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);

    /* The directory's own .indexignore applies to everything below it, including
     * entries that sort before it, so read it first. */
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], INDEXIGNORE) != 0)
            continue;
        char *p = join(abs, names[i]), *text = NULL;
        size_t len = 0;
        if (!p) {
            rc = olm_error_set(err, "walk %s: out of memory", abs);
            goto done;
        }
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            free(p);
            break; /* a directory named .indexignore is just walked */
        }
        rc = fbc_read_file(p, &text, &len, err);
        free(p);
        if (rc == 0 && fbc_ignore_add(ig, rel, text, len) < 0)
            rc = olm_error_set(err, "walk %s: out of memory", abs);
        free(text);
        if (rc < 0)
            goto done;
        break;
    }

    for (size_t i = 0; i < n && rc == 0; i++) {
        char *cabs = join(abs, names[i]), *crel = join(rel, names[i]);
        struct stat st;
        if (!cabs || !crel) {
            rc = olm_error_set(err, "walk %s: out of memory", abs);
        } else if (lstat(cabs, &st) < 0) {
            rc = olm_error_set(err, "stat %s: %s", cabs, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            rc = walk(cabs, crel, ig, out, err);
        } else if (strcmp(names[i], INDEXIGNORE) != 0) {
            int m = fbc_ignore_match(ig, crel);
            if (m < 0) {
                rc = olm_error_set(err, "walk %s: out of memory", abs);
            } else if (m == 0) {
                if (list_push(out, crel, st.st_size) < 0)
                    rc = olm_error_set(err, "walk %s: out of memory", abs);
                else
                    crel = NULL; /* owned by the list now */
            }
        }
        free(cabs);
        free(crel);
    }
done:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
    return rc;
}

int fbc_walk_dir(const char *root, fbc_file_list *out, olm_error *err)
{
    struct stat st;
    if (stat(root, &st) < 0)
        return olm_error_set(err, "%s: %s", root, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return olm_error_set(err, "%s: not a directory", root);
    fbc_ignore *ig = fbc_ignore_new();
    if (!ig)
        return olm_error_set(err, "walk %s: out of memory", root);
    int rc = walk(root, "", ig, out, err);
    fbc_ignore_free(ig);
    if (rc < 0)
        fbc_file_list_free(out);
    return rc;
}

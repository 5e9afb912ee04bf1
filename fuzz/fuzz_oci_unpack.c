/* fuzz_oci_unpack: image layers (tar, gzip or zstd) from a hostile registry through the
 * unpacker, into a fresh root per input.  Input: one flags byte (bit 0: only the "configs"
 * prefix, as catalogd unpacks; bit 1: strip it), then the layers, separated by LAYER_SEP.
 *
 * Whatever a layer says, nothing may escape the root (checked after every input, whether the
 * unpack succeeded or failed half-way):
 *   - the root sits three directories deep in a sandbox: "../x" would land in one of them, so
 *     each must still hold exactly what it held; nor may a name appear in the working directory
 *     (a path used without the root's fd);
 *   - no symlink under the root is absolute or climbs above the root (lexically), and none
 *     resolves (realpath) outside it;
 *   - every link of a multiply-linked file is under the root (no hard link to a file outside);
 *   - no file or directory is setuid/setgid or group/world-writable (README, "Modes"), and
 *     there are no devices, fifos or sockets (the unpacker skips them).
 * Small limits keep each run short and its disk use small. */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "oci_unpack.h"

#define LAYER_SEP "OLMFUZZL"
#define GUARD_LEVELS 3

static char sandbox[PATH_MAX];   /* <tmp>/olmv1-fuzz-unpack.XXXXXX */
static char guards[GUARD_LEVELS][PATH_MAX]; /* sandbox/g, sandbox/g/g, sandbox/g/g/g */
static char root[PATH_MAX];      /* guards[last]/root */
static char root_real[PATH_MAX];

static void remove_sandbox(void)
{
    olm_error err;
    (void)oci_remove_tree_at(AT_FDCWD, sandbox, &err);
}

/* The names in the working directory, sorted, one per line; the caller frees. */
static char *list_cwd(void)
{
    struct dirent **names;
    int n = scandir(".", &names, NULL, alphasort);
    FUZZ_CHECK(n >= 0, "scandir .");
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(names[i]->d_name) + 1;
    char *out = malloc(len), *p = out;
    FUZZ_CHECK(out != NULL, "out of memory");
    for (int i = 0; i < n; i++) {
        p += sprintf(p, "%s\n", names[i]->d_name);
        free(names[i]);
    }
    *p = '\0';
    free(names);
    return out;
}

static char *cwd_before;

/* Once: the sandbox, the guard directories, what the working directory holds; the sandbox
 * goes at exit.  (libFuzzer reads its corpus relative to the working directory, so the
 * target must not change it.) */
static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(sandbox, sizeof sandbox, "%s/olmv1-fuzz-unpack.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    FUZZ_CHECK(mkdtemp(sandbox) != NULL, "mkdtemp %s", sandbox);
    const char *parent = sandbox;
    for (int i = 0; i < GUARD_LEVELS; i++) {
        snprintf(guards[i], sizeof guards[i], "%s/g", parent);
        FUZZ_CHECK(mkdir(guards[i], 0700) == 0, "mkdir %s", guards[i]);
        parent = guards[i];
    }
    snprintf(root, sizeof root, "%s/root", parent);
    cwd_before = list_cwd();
    atexit(remove_sandbox);
}

/* Every name in `dir` (but . and ..) is `a` or `b` (either may be NULL). */
static void check_holds(const char *dir, const char *a, const char *b)
{
    DIR *d = opendir(dir);
    FUZZ_CHECK(d != NULL, "opendir %s", dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        FUZZ_CHECK((a && strcmp(n, a) == 0) || (b && strcmp(n, b) == 0), "escaped the root: %s/%s", dir, n);
    }
    closedir(d);
}

/* Multiply-linked files seen under the root: each must be seen st_nlink times. */
static struct { dev_t dev; ino_t ino; nlink_t nlink, seen; } links[4096];
static size_t nlinks;

static void note_link(const struct stat *st)
{
    for (size_t i = 0; i < nlinks; i++)
        if (links[i].dev == st->st_dev && links[i].ino == st->st_ino) {
            links[i].seen++;
            return;
        }
    FUZZ_CHECK(nlinks < sizeof links / sizeof links[0], "too many linked files");
    links[nlinks].dev = st->st_dev;
    links[nlinks].ino = st->st_ino;
    links[nlinks].nlink = st->st_nlink;
    links[nlinks++].seen = 1;
}

/* A symlink at `rel` (under the root) pointing at `target` stays inside, lexically. */
static void check_symlink_text(const char *rel, const char *target)
{
    FUZZ_CHECK(target[0] != '/', "absolute symlink %s -> %s", rel, target);
    int depth = 0; /* directories of rel's parent below the root */
    for (const char *p = rel; *p; p++)
        depth += *p == '/';
    for (const char *c = target; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.')
            depth--;
        else if (n > 0 && !(n == 1 && c[0] == '.'))
            depth++;
        FUZZ_CHECK(depth >= 0, "symlink %s -> %s climbs above the root", rel, target);
        c += n + (c[n] == '/');
    }
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    const char *rel = path + strlen(root) + (path[strlen(root)] == '/');
    /* A symlink's own mode is always 0777 and never used. */
    FUZZ_CHECK(type == FTW_SL || (st->st_mode & (S_ISUID | S_ISGID | S_IWGRP | S_IWOTH)) == 0, "%s has mode %o",
               rel, (unsigned)st->st_mode);
    FUZZ_CHECK(S_ISREG(st->st_mode) || S_ISDIR(st->st_mode) || S_ISLNK(st->st_mode), "%s is a special file (mode %o)",
               rel, (unsigned)st->st_mode);
    if (type == FTW_SL) {
        char target[PATH_MAX + 1];
        ssize_t n = readlink(path, target, PATH_MAX);
        FUZZ_CHECK(n >= 0, "readlink %s", path);
        target[n] = '\0';
        check_symlink_text(rel, target);
        char real[PATH_MAX];
        if (realpath(path, real)) {
            size_t rl = strlen(root_real);
            FUZZ_CHECK(strncmp(real, root_real, rl) == 0 && (real[rl] == '\0' || real[rl] == '/'),
                       "symlink %s resolves to %s, outside %s", rel, real, root_real);
        }
    } else if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
        note_link(st);
    }
    return 0;
}

static void check_nothing_escaped(void)
{
    char *cwd_now = list_cwd();
    FUZZ_CHECK(strcmp(cwd_now, cwd_before) == 0, "the working directory changed:\n%s\nwas\n%s", cwd_now,
               cwd_before);
    free(cwd_now);
    check_holds(sandbox, "g", NULL);
    nlinks = 0;
    FUZZ_CHECK(nftw(root, visit, 32, FTW_PHYS) == 0, "walking %s", root);
    for (size_t i = 0; i < nlinks; i++)
        FUZZ_CHECK(links[i].seen == links[i].nlink, "a file under the root has %lu links, %lu of them inside",
                   (unsigned long)links[i].nlink, (unsigned long)links[i].seen);
    for (int i = 0; i < GUARD_LEVELS; i++)
        check_holds(guards[i], i + 1 < GUARD_LEVELS ? "g" : "root", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sandbox[0])
        setup();
    if (size == 0)
        return 0;
    FUZZ_CHECK(mkdir(root, 0700) == 0, "mkdir %s", root);
    FUZZ_CHECK(realpath(root, root_real) != NULL, "realpath %s", root);
    oci_unpack_limits lim = {.max_bytes = 1 << 20, .max_files = 2000, .max_skipped_bytes = 1 << 20};
    olm_error err;
    oci_unpacker *u = oci_unpacker_new(root, (data[0] & 1) ? "configs" : NULL, (data[0] & 2) != 0, &lim, &err);
    FUZZ_CHECK(u != NULL, "oci_unpacker_new: %s", err.msg);
    const uint8_t *p = data + 1, *end = data + size;
    for (int layer = 0; p < end; layer++) {
        const uint8_t *sep = memmem(p, (size_t)(end - p), LAYER_SEP, strlen(LAYER_SEP));
        const uint8_t *stop = sep ? sep : end;
        char label[32];
        snprintf(label, sizeof label, "layer %d", layer);
        if (oci_unpacker_apply_mem(u, p, (size_t)(stop - p), label, &err) != 0) {
            if (getenv("FUZZ_VERBOSE")) /* to see why a seed stops where it does */
                fprintf(stderr, "%s\n", err.msg);
            break; /* the puller throws the whole tree away then; it must still be contained */
        }
        p = sep ? sep + strlen(LAYER_SEP) : end;
    }
    oci_unpacker_free(u);
    check_nothing_escaped();
    int gfd = open(guards[GUARD_LEVELS - 1], O_RDONLY | O_DIRECTORY);
    FUZZ_CHECK(gfd >= 0 && oci_remove_tree_at(gfd, "root", &err) == 0, "removing the root: %s", err.msg);
    close(gfd);
    return 0;
}

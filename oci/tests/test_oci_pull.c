/* Unit tests for the pull side of oci/: the safe unpacker against hostile
 * layers written here with libarchive, whiteouts, permissions, limits, prefix
 * filtering, digest verification of streamed bodies, manifest parsing and
 * platform selection.  No network.
 *
 * Every unpack goes into <tmp>/a/root; after each test the whole <tmp> tree is
 * scanned and anything that is not <tmp>/a or under <tmp>/a/root fails the
 * test (no write may escape the root). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "oci_internal.h"
#include "oci_pull_internal.h"
#include "oci_unpack_rules.h"

#define LABEL "layer sha256:ab12cd34ef56"

/* ---------------------------------------------------------------- layer writer */

typedef struct tarw {
    struct archive *a;
    unsigned char *buf;
    size_t cap, used;
} tarw;

enum { PLAIN, GZIP, ZSTD };

static tarw *tw_new(int compression)
{
    tarw *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->cap = 8 * 1024 * 1024;
    t->buf = malloc(t->cap);
    assert_non_null(t->buf);
    t->a = archive_write_new();
    assert_non_null(t->a);
    assert_int_equal(archive_write_set_format_pax_restricted(t->a), ARCHIVE_OK);
    if (compression == GZIP)
        assert_int_equal(archive_write_add_filter_gzip(t->a), ARCHIVE_OK);
    else if (compression == ZSTD)
        assert_int_equal(archive_write_add_filter_zstd(t->a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_memory(t->a, t->buf, t->cap, &t->used), ARCHIVE_OK);
    return t;
}

static void tw_entry(tarw *t, const char *path, mode_t type, mode_t perm, const char *data,
                     const char *link, int hard)
{
    struct archive_entry *e = archive_entry_new();
    assert_non_null(e);
    archive_entry_set_pathname(e, path);
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_uid(e, 12345);
    archive_entry_set_gid(e, 23456);
    size_t len = data ? strlen(data) : 0;
    archive_entry_set_size(e, (la_int64_t)len);
    if (link && hard)
        archive_entry_set_hardlink(e, link);
    else if (link)
        archive_entry_set_symlink(e, link);
    if (type == AE_IFCHR || type == AE_IFBLK)
        archive_entry_set_rdev(e, makedev(1, 3));
    assert_true(archive_write_header(t->a, e) >= ARCHIVE_WARN);
    if (len)
        assert_int_equal(archive_write_data(t->a, data, len), (la_ssize_t)len);
    archive_entry_free(e);
}

static void tw_file(tarw *t, const char *path, const char *data) { tw_entry(t, path, AE_IFREG, 0644, data, NULL, 0); }
static void tw_dir(tarw *t, const char *path) { tw_entry(t, path, AE_IFDIR, 0755, NULL, NULL, 0); }
static void tw_symlink(tarw *t, const char *path, const char *target) { tw_entry(t, path, AE_IFLNK, 0777, NULL, target, 0); }
static void tw_hardlink(tarw *t, const char *path, const char *target) { tw_entry(t, path, AE_IFREG, 0644, NULL, target, 1); }

static void tw_close(tarw *t)
{
    assert_int_equal(archive_write_close(t->a), ARCHIVE_OK);
    archive_write_free(t->a);
    t->a = NULL;
}

static void tw_free(tarw *t)
{
    if (t->a)
        archive_write_free(t->a);
    free(t->buf);
    free(t);
}

/* A bare ustar header (libarchive would pad a huge entry with real zeros). */
static void raw_header(unsigned char h[512], const char *name, unsigned long long size)
{
    memset(h, 0, 512);
    snprintf((char *)h, 100, "%s", name);
    snprintf((char *)h + 100, 8, "%07o", 0644);
    snprintf((char *)h + 108, 8, "%07o", 0);
    snprintf((char *)h + 116, 8, "%07o", 0);
    snprintf((char *)h + 124, 12, "%011llo", size);
    snprintf((char *)h + 136, 12, "%011o", 0);
    memset(h + 148, ' ', 8);
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
}

/* ---------------------------------------------------------------- fixture */

typedef struct env {
    char parent[PATH_MAX];
    char root[PATH_MAX + 16];
    olm_error err;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    snprintf(e->parent, sizeof e->parent, "/tmp/oci-pull-test-XXXXXX");
    if (!mkdtemp(e->parent))
        return -1;
    char a[PATH_MAX + 8];
    snprintf(a, sizeof a, "%s/a", e->parent);
    snprintf(e->root, sizeof e->root, "%s/a/root", e->parent);
    if (mkdir(a, 0755) != 0 || mkdir(e->root, 0755) != 0)
        return -1;
    *state = e;
    return 0;
}

static const env *scan_env;
static int scan_bad;

static int scan_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    size_t rl = strlen(scan_env->root);
    char a[PATH_MAX + 8];
    snprintf(a, sizeof a, "%s/a", scan_env->parent);
    if (strcmp(path, scan_env->parent) == 0 || strcmp(path, a) == 0)
        return 0;
    if (strncmp(path, scan_env->root, rl) == 0 && (path[rl] == '\0' || path[rl] == '/'))
        return 0;
    fprintf(stderr, "ESCAPED: %s\n", path);
    scan_bad = 1;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    scan_env = e;
    scan_bad = 0;
    int rc = nftw(e->parent, scan_one, 16, FTW_PHYS);
    oci_remove_path(e->parent);
    free(e);
    /* a teardown failure fails the test */
    return rc == 0 && !scan_bad ? 0 : -1;
}

/* Unpacks the given layers in order; returns what the last apply returned. */
/* What an oci_unpacker_observe observer was told, one line per call: "rel <- path", or
 * "forget" for (NULL, NULL). */
static char told[4096];
static const char *told_root; /* path is told relative to this, to keep lines short */

static void tell(void *ctx, const char *path, const char *rel)
{
    (void)ctx;
    size_t n = strlen(told);
    if (!path || !rel) {
        snprintf(told + n, sizeof told - n, "forget\n");
        return;
    }
    size_t rl = strlen(told_root);
    assert_memory_equal(path, told_root, rl);
    snprintf(told + n, sizeof told - n, "%s <- %s\n", rel, path + rl);
}

static bool observe_next; /* the next unpack() tells tell() */

static int unpack(env *e, const char *prefix, int strip, const oci_unpack_limits *lim,
                  tarw **layers, size_t n, uint64_t *skipped)
{
    oci_unpacker *u = oci_unpacker_new(e->root, prefix, strip, lim, &e->err);
    assert_non_null(u);
    if (observe_next) {
        told[0] = '\0';
        told_root = e->root;
        oci_unpacker_observe(u, tell, NULL);
        observe_next = false;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (layers[i]->a)
            tw_close(layers[i]);
        rc = oci_unpacker_apply_mem(u, layers[i]->buf, layers[i]->used, LABEL, &e->err);
    }
    if (skipped)
        *skipped = oci_unpacker_skipped(u);
    oci_unpacker_free(u);
    for (size_t i = 0; i < n; i++)
        tw_free(layers[i]);
    return rc;
}

static int unpack1(env *e, tarw *t) { return unpack(e, NULL, 0, NULL, &t, 1, NULL); }

static void expect_fail(env *e, tarw *t, const char *part)
{
    assert_int_equal(unpack1(e, t), -1);
    if (!strstr(e->err.msg, part))
        fail_msg("error \"%s\" does not contain \"%s\"", e->err.msg, part);
}

static struct stat lstat_in(const env *e, const char *rel, int *exists)
{
    char p[PATH_MAX * 2];
    struct stat st;
    memset(&st, 0, sizeof st);
    snprintf(p, sizeof p, "%s/%s", e->root, rel);
    *exists = lstat(p, &st) == 0;
    return st;
}

static int exists_in(const env *e, const char *rel)
{
    int ex;
    lstat_in(e, rel, &ex);
    return ex;
}

static void assert_content(const env *e, const char *rel, const char *want)
{
    char p[PATH_MAX * 2], buf[256];
    snprintf(p, sizeof p, "%s/%s", e->root, rel);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, want);
}

/* ---------------------------------------------------------------- hostile paths */

static void test_dotdot(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "../x", "evil");
    assert_int_equal(unpack1(e, t), -1);
    assert_string_equal(e->err.msg, LABEL ": entry \"../x\": path escapes the unpack root");
}

static void test_dotdot_etc_passwd_gzip(void **state)
{
    env *e = *state;
    tarw *t = tw_new(GZIP);
    tw_file(t, "ok.txt", "fine");
    tw_file(t, "../etc/passwd", "evil");
    expect_fail(e, t, "entry \"../etc/passwd\": path escapes the unpack root");
}

static void test_absolute(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "/abs", "evil");
    expect_fail(e, t, "entry \"/abs\": absolute path");
}

static void test_inner_dotdot(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "a/../../x", "evil");
    expect_fail(e, t, "entry \"a/../../x\": path escapes the unpack root");
    t = tw_new(PLAIN);
    tw_file(t, "a/../b", "evil");
    expect_fail(e, t, "has a \"..\" component");
}

static void test_symlink_absolute_then_through(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_symlink(t, "s", "/etc");
    tw_file(t, "s/passwd", "evil");
    expect_fail(e, t, "entry \"s\": symlink target is absolute");
    assert_false(exists_in(e, "s"));
}

static void test_symlink_escaping_then_through(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_symlink(t, "s", "../..");
    tw_file(t, "s/x", "evil");
    expect_fail(e, t, "entry \"s\": symlink target escapes the unpack root");
    t = tw_new(PLAIN);
    tw_symlink(t, "d/s", "x/../..");
    expect_fail(e, t, "\"..\" after a path component");
}

static void test_through_inner_symlink(void **state)
{
    env *e = *state;
    /* the link itself is fine; writing through it is not, even inside the root */
    tarw *l1 = tw_new(PLAIN);
    tw_dir(l1, "sub");
    tw_symlink(l1, "s", "sub");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "s/passwd", "evil");
    tarw *layers[] = {l1, l2};
    assert_int_equal(unpack(e, NULL, 0, NULL, layers, 2, NULL), -1);
    assert_string_equal(e->err.msg,
                        LABEL ": entry \"s/passwd\": path passes through the symlink \"s\"");
    assert_false(exists_in(e, "sub/passwd"));
}

static void test_parent_is_file(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "f", "x");
    tw_file(t, "f/g", "y");
    expect_fail(e, t, "parent \"f\" is not a directory");
}

static void test_hardlinks(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_hardlink(t, "h", "/etc/passwd");
    expect_fail(e, t, "entry \"h\": hardlink target \"/etc/passwd\": absolute path");
    t = tw_new(PLAIN);
    tw_hardlink(t, "h", "../x");
    expect_fail(e, t, "hardlink target \"../x\": path escapes the unpack root");
    t = tw_new(PLAIN);
    tw_hardlink(t, "h", "missing");
    expect_fail(e, t, "does not exist");
    t = tw_new(PLAIN);
    tw_symlink(t, "l", "target");
    tw_hardlink(t, "h", "l");
    expect_fail(e, t, "is not a regular file");
    t = tw_new(PLAIN);
    tw_dir(t, "sub");
    tw_symlink(t, "s", "sub");
    tw_file(t, "sub/f", "data");
    tw_hardlink(t, "h", "s/f");
    expect_fail(e, t, "hardlink target passes through the symlink \"s\"");
}

static void test_hardlink_ok(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "d/f", "shared");
    tw_hardlink(t, "h", "d/f");
    assert_int_equal(unpack1(e, t), 0);
    int ex1, ex2;
    struct stat a = lstat_in(e, "d/f", &ex1), b = lstat_in(e, "h", &ex2);
    assert_true(ex1 && ex2);
    assert_int_equal(a.st_ino, b.st_ino);
    assert_content(e, "h", "shared");
}

static void test_devices_skipped(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_entry(t, "null", AE_IFCHR, 0666, NULL, NULL, 0);
    tw_entry(t, "blk", AE_IFBLK, 0666, NULL, NULL, 0);
    tw_entry(t, "fifo", AE_IFIFO, 0644, NULL, NULL, 0);
    tw_file(t, "after", "ok");
    uint64_t skipped = 0;
    assert_int_equal(unpack(e, NULL, 0, NULL, &t, 1, &skipped), 0);
    assert_int_equal(skipped, 3);
    assert_false(exists_in(e, "null"));
    assert_false(exists_in(e, "blk"));
    assert_false(exists_in(e, "fifo"));
    assert_content(e, "after", "ok");
}

/* ---------------------------------------------------------------- limits */

static void test_huge_declared_size(void **state)
{
    env *e = *state;
    unsigned char buf[512 * 3];
    memset(buf, 0, sizeof buf);
    raw_header(buf, "big", 077777777777ULL); /* 8 GiB - 1, no data follows */
    oci_unpacker *u = oci_unpacker_new(e->root, NULL, 0, NULL, &e->err);
    assert_non_null(u);
    assert_int_equal(oci_unpacker_apply_mem(u, buf, sizeof buf, LABEL, &e->err), -1);
    oci_unpacker_free(u);
    assert_non_null(strstr(e->err.msg, "entry \"big\": size 8589934591 bytes exceeds the unpack "
                                       "limit of 2147483648 bytes"));
    assert_false(exists_in(e, "big"));
}

static void test_total_size_cap(void **state)
{
    env *e = *state;
    oci_unpack_limits lim = {.max_bytes = 10};
    tarw *t = tw_new(GZIP);
    tw_file(t, "a", "123456");
    tw_file(t, "b", "123456"); /* 12 bytes in all */
    assert_int_equal(unpack(e, NULL, 0, &lim, &t, 1, NULL), -1);
    assert_non_null(strstr(e->err.msg, "entry \"b\": size 6 bytes exceeds the unpack limit of 10 "
                                       "bytes (6 already written)"));
}

static void test_too_many_files(void **state)
{
    env *e = *state;
    oci_unpack_limits lim = {.max_files = 10};
    tarw *t = tw_new(PLAIN);
    for (int i = 0; i < 11; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        tw_file(t, name, "x");
    }
    assert_int_equal(unpack(e, NULL, 0, &lim, &t, 1, NULL), -1);
    assert_string_equal(e->err.msg, LABEL ": more than 10 entries in the image (the limit)");
}

/* Parent directories an entry implies are entries too: 3 files 30 directories deep make
 * 93 entries, over a limit of 50 (before, 3 entries: a 20 KB layer made 256,000 dirs). */
static void test_implicit_dirs_counted(void **state)
{
    env *e = *state;
    oci_unpack_limits lim = {.max_files = 50};
    tarw *t = tw_new(GZIP);
    for (int i = 0; i < 3; i++) {
        char p[200];
        int n = snprintf(p, sizeof p, "u%d", i);
        for (int d = 0; d < 30; d++)
            n += snprintf(p + n, sizeof p - (size_t)n, "/d");
        snprintf(p + n, sizeof p - (size_t)n, "/f");
        tw_file(t, p, "x");
    }
    assert_int_equal(unpack(e, NULL, 0, &lim, &t, 1, NULL), -1);
    if (!strstr(e->err.msg, "more than 50 entries in the image (the limit; parent directories an entry implies "
                            "count too)"))
        fail_msg("unexpected error: %s", e->err.msg);
    /* The same layer under the default limit unpacks. */
    t = tw_new(GZIP);
    tw_file(t, "u/d/d/d/f", "x");
    assert_int_equal(unpack(e, NULL, 0, NULL, &t, 1, NULL), 0);
    assert_content(e, "u/d/d/d/f", "x");
}

/* The path set holds each component once: 100 paths 200 components deep take memory in
 * proportion to their 20,000 components, not to every parent prefix again (34 MB). */
static void test_pathset_linear(void **state)
{
    (void)state;
    oci_pathset set = {0};
    char *p = malloc(200 * 17 + 16);
    assert_non_null(p);
    for (int i = 0; i < 100; i++) {
        int n = sprintf(p, "u%03d", i);
        for (int d = 1; d < 200; d++)
            n += sprintf(p + n, "/dddddddddddddddd");
        assert_int_equal(oci_pathset_add_with_parents(&set, p), 0);
    }
    assert_true(oci_pathset_bytes(&set) < 2 * 1024 * 1024);
    assert_true(oci_pathset_has(&set, p));
    assert_true(oci_pathset_has(&set, "u042"));
    assert_true(oci_pathset_has(&set, "u042/dddddddddddddddd/dddddddddddddddd"));
    assert_false(oci_pathset_has(&set, "u100"));
    assert_false(oci_pathset_has(&set, "u042/d"));
    assert_false(oci_pathset_has(&set, "dddddddddddddddd"));
    strcat(p, "/x");
    assert_false(oci_pathset_has(&set, p));
    free(p);
    oci_pathset_clear(&set);
    assert_false(oci_pathset_has(&set, "u000"));
}

/* Entries outside the prefix are decompressed only to be skipped: their bytes count
 * against max_skipped_bytes before libarchive reads them. */
static void test_skipped_bytes(void **state)
{
    env *e = *state;
    size_t n = 1024 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'z', n);
    big[n] = '\0';
    oci_unpack_limits lim = {.max_skipped_bytes = 512 * 1024};
    tarw *t = tw_new(ZSTD);
    tw_file(t, "usr/lib/big", big);
    tw_file(t, "configs/pkg/catalog.json", "{}");
    assert_int_equal(unpack(e, "/configs", 0, &lim, &t, 1, NULL), -1);
    if (!strstr(e->err.msg, LABEL ": entry \"usr/lib/big\": 1048576 bytes that are not extracted (outside "
                            "\"configs\") would pass the limit of 524288 bytes read only to be skipped (0 so far)"))
        fail_msg("unexpected error: %s", e->err.msg);
    /* Under the default limit the same layer unpacks and the skipped bytes are counted. */
    t = tw_new(ZSTD);
    tw_file(t, "usr/lib/big", big);
    tw_file(t, "configs/pkg/catalog.json", "{}");
    tw_close(t);
    oci_unpacker *u = oci_unpacker_new(e->root, "/configs", 0, NULL, &e->err);
    assert_non_null(u);
    assert_int_equal(oci_unpacker_apply_mem(u, t->buf, t->used, LABEL, &e->err), 0);
    assert_int_equal(oci_unpacker_skipped_bytes(u), n);
    oci_unpacker_free(u);
    tw_free(t);
    assert_content(e, "configs/pkg/catalog.json", "{}");
    assert_false(exists_in(e, "usr"));
    free(big);
}

/* Temp dirs of pulls killed with their process: removed by the start-up sweep, and
 * nothing else (entries, sidecars, other dot-names). */
static void test_cache_sweep(void **state)
{
    env *e = *state;
    char p[PATH_MAX * 4];
    const char *made[] = {"c1/.sha256:aaaa.pull-Ab12Cd/rootfs/configs/x.json", "c1/.sha256:bbbb.pull-zzzzzz/",
                          "c2/.sha256:cccc.pull-000000/rootfs/", "c1/sha256:dddd/keep.json", "c1/.hidden/keep",
                          "c1/.sha256:eeee.pull-toolong1/keep", "c1/sha256:dddd.json", NULL};
    for (size_t i = 0; made[i]; i++) {
        snprintf(p, sizeof p, "mkdir -p \"$(dirname '%s/%s')\" && touch '%s/%s'", e->root, made[i], e->root, made[i]);
        if (made[i][strlen(made[i]) - 1] == '/')
            snprintf(p, sizeof p, "mkdir -p '%s/%s'", e->root, made[i]);
        assert_int_equal(system(p), 0);
    }
    assert_int_equal(oci_pull_cache_sweep(e->root, &e->err), 3);
    assert_false(exists_in(e, "c1/.sha256:aaaa.pull-Ab12Cd"));
    assert_false(exists_in(e, "c1/.sha256:bbbb.pull-zzzzzz"));
    assert_false(exists_in(e, "c2/.sha256:cccc.pull-000000"));
    assert_true(exists_in(e, "c1/sha256:dddd/keep.json"));
    assert_true(exists_in(e, "c1/sha256:dddd.json"));
    assert_true(exists_in(e, "c1/.hidden/keep"));
    assert_true(exists_in(e, "c1/.sha256:eeee.pull-toolong1/keep"));
    assert_int_equal(oci_pull_cache_sweep(e->root, &e->err), 0);
    char missing[PATH_MAX * 2];
    snprintf(missing, sizeof missing, "%s/nope", e->root);
    assert_int_equal(oci_pull_cache_sweep(missing, &e->err), 0);
}

/* A pax path over 1 MB: libarchive drops it with a warning and falls back to the ustar
 * name, which would unpack the entry under a name the layer did not mean.  Refused, as
 * Go's archive/tar refuses it.  A non-ASCII name (a charset warning) still unpacks. */
static void test_pax_header_warning_refused(void **state)
{
    env *e = *state;
    size_t n = 1010000; /* over the attribute limit (1,000,000), under the header limit (1 MiB) */
    char *p = malloc(n + 16);
    assert_non_null(p);
    memcpy(p, "configs/", 8);
    memset(p + 8, 'c', n);
    strcpy(p + 8 + n, ".json");
    tarw *t = tw_new(PLAIN);
    tw_file(t, p, "{}");
    free(p);
    expect_fail(e, t, "its header could only be read in part (Rejecting pax extended attribute > 1MB)");
    assert_false(exists_in(e, "configs"));
    t = tw_new(PLAIN);
    tw_file(t, "configs/\xc3\xa9t\xc3\xa9.json", "{}");
    assert_int_equal(unpack1(e, t), 0);
    assert_content(e, "configs/\xc3\xa9t\xc3\xa9.json", "{}");
}

static void test_long_path(void **state)
{
    env *e = *state;
    char *p = malloc(5001);
    assert_non_null(p);
    for (int i = 0; i < 5000; i++)
        p[i] = (i % 100 == 99) ? '/' : 'a';
    p[4999] = 'z';
    p[5000] = '\0';
    tarw *t = tw_new(PLAIN);
    tw_file(t, p, "x");
    free(p);
    expect_fail(e, t, "path longer than 4096 bytes");
    /* the message shows a bounded prefix of the name */
    assert_true(strlen(e->err.msg) < 300);
    t = tw_new(PLAIN);
    char comp[300];
    memset(comp, 'c', 299);
    comp[299] = '\0';
    tw_file(t, comp, "x");
    expect_fail(e, t, "path component longer than 255 bytes");
}

/* ---------------------------------------------------------------- layering */

static void test_whiteouts(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(GZIP);
    tw_file(l1, "a/f1", "1");
    tw_file(l1, "a/f2", "2");
    tw_file(l1, "b/sub/x", "x");
    tw_file(l1, "c/old", "old");
    tw_file(l1, "c/sub/old", "old");
    tw_file(l1, "d/old", "old");
    tw_file(l1, "e", "file");
    tarw *l2 = tw_new(ZSTD);
    tw_file(l2, "a/.wh.f1", "");
    tw_file(l2, ".wh.b", "");
    tw_file(l2, "c/.wh..wh..opq", "");
    tw_file(l2, "c/new", "new");
    tw_file(l2, "c/sub/new", "new");
    tw_file(l2, "d/new", "new");
    tw_file(l2, "d/.wh..wh..opq", ""); /* after a sibling of the same layer: it stays */
    tw_file(l2, ".wh.nothing", "");    /* whiteout of something absent: fine */
    tw_dir(l2, "e");                   /* a dir replaces a file */
    tarw *layers[] = {l1, l2};
    assert_int_equal(unpack(e, NULL, 0, NULL, layers, 2, NULL), 0);
    assert_false(exists_in(e, "a/f1"));
    assert_content(e, "a/f2", "2");
    assert_false(exists_in(e, "b"));
    assert_false(exists_in(e, "c/old"));
    assert_false(exists_in(e, "c/sub/old"));
    assert_content(e, "c/new", "new");
    assert_content(e, "c/sub/new", "new");
    assert_false(exists_in(e, "d/old"));
    assert_content(e, "d/new", "new");
    assert_false(exists_in(e, "a/.wh.f1"));
    assert_false(exists_in(e, "c/.wh..wh..opq"));
    int ex;
    struct stat st = lstat_in(e, "e", &ex);
    assert_true(ex && S_ISDIR(st.st_mode));
}

static void test_replace_across_layers(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(PLAIN);
    tw_file(l1, "x/inner", "i");
    tw_file(l1, "y", "y1");
    tw_dir(l1, "z");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "x", "now a file");   /* a file replaces a dir */
    tw_symlink(l2, "y", "x");          /* a symlink replaces a file */
    tw_file(l2, "y2", "second");
    tw_symlink(l2, "z", "y2");         /* a symlink replaces a dir */
    tarw *layers[] = {l1, l2};
    assert_int_equal(unpack(e, NULL, 0, NULL, layers, 2, NULL), 0);
    assert_content(e, "x", "now a file");
    int ex;
    struct stat st = lstat_in(e, "y", &ex);
    assert_true(ex && S_ISLNK(st.st_mode));
    st = lstat_in(e, "z", &ex);
    assert_true(ex && S_ISLNK(st.st_mode));
}

static void test_whiteout_through_symlink(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(PLAIN);
    tw_dir(l1, "sub");
    tw_file(l1, "sub/keep", "k");
    tw_symlink(l1, "s", "sub");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "s/.wh.keep", "");
    tarw *layers[] = {l1, l2};
    assert_int_equal(unpack(e, NULL, 0, NULL, layers, 2, NULL), -1);
    assert_non_null(strstr(e->err.msg, "passes through the symlink \"s\""));
    assert_content(e, "sub/keep", "k");
}

static void test_permissions(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_entry(t, "d0", AE_IFDIR, 0000, NULL, NULL, 0);
    tw_entry(t, "d5", AE_IFDIR, 0555, NULL, NULL, 0);
    tw_entry(t, "dsticky", AE_IFDIR, 01777, NULL, NULL, 0);
    tw_entry(t, "f0", AE_IFREG, 0000, "x", NULL, 0);
    tw_entry(t, "fsuid", AE_IFREG, 04755, "x", NULL, 0);
    tw_entry(t, "f644", AE_IFREG, 0644, "x", NULL, 0);
    tw_entry(t, "f400", AE_IFREG, 0400, "x", NULL, 0);
    tw_entry(t, "implicit/f", AE_IFREG, 0640, "x", NULL, 0);
    /* nothing group- or world-writable, whatever the layer says */
    tw_entry(t, "dw", AE_IFDIR, 0777, NULL, NULL, 0);
    tw_entry(t, "f666", AE_IFREG, 0666, "x", NULL, 0);
    tw_entry(t, "f777", AE_IFREG, 0777, "x", NULL, 0);
    assert_int_equal(unpack1(e, t), 0);
    struct {
        const char *name;
        mode_t mode;
    } want[] = {{"d0", 0700}, {"d5", 0755}, {"dsticky", 0755}, {"dw", 0755}, {"f0", 0600}, {"fsuid", 0755},
                {"f644", 0644}, {"f400", 0600}, {"implicit/f", 0640}, {"f666", 0644}, {"f777", 0755}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int ex;
        struct stat st = lstat_in(e, want[i].name, &ex);
        assert_true(ex);
        if ((st.st_mode & 07777) != want[i].mode)
            fail_msg("%s: mode %o, want %o", want[i].name, st.st_mode & 07777, want[i].mode);
        /* owners are the process's, whatever the tar said (12345:23456) */
        assert_int_equal(st.st_uid, getuid());
        assert_int_equal(st.st_gid, getgid());
    }
    int ex;
    struct stat st = lstat_in(e, "implicit", &ex);
    assert_true(ex && S_ISDIR(st.st_mode) && (st.st_mode & 0700) == 0700);
}

static void test_prefix_filter(void **state)
{
    env *e = *state;
    tarw *t = tw_new(GZIP);
    tw_file(t, "top.txt", "no");
    tw_dir(t, "configs");
    tw_file(t, "configs/a.json", "{}");
    tw_file(t, "configs/sub/b.yaml", "b: 1");
    tw_file(t, "configsx/no", "no");
    tw_file(t, "other/x", "no");
    tw_symlink(t, "other/abs", "/etc/passwd"); /* outside the filter: never looked at */
    assert_int_equal(unpack(e, "/configs", 0, NULL, &t, 1, NULL), 0);
    assert_content(e, "configs/a.json", "{}");
    assert_content(e, "configs/sub/b.yaml", "b: 1");
    assert_false(exists_in(e, "top.txt"));
    assert_false(exists_in(e, "configsx"));
    assert_false(exists_in(e, "other"));
}

static void test_prefix_strip(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(PLAIN);
    tw_file(l1, "configs/a.json", "{}");
    tw_file(l1, "configs/old/x", "x");
    tw_file(l1, "configs/sub/b.yaml", "b: 1");
    tw_hardlink(l1, "configs/h", "configs/a.json");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "configs/.wh.old", "");
    tw_hardlink(l2, "configs/bad", "top"); /* a link out of the filter */
    tarw *layers[] = {l1, l2};
    assert_int_equal(unpack(e, "configs/", 1, NULL, layers, 2, NULL), -1);
    assert_non_null(strstr(e->err.msg, "entry \"configs/bad\": hardlink target \"top\" is outside "
                                       "the extracted directory"));
    assert_content(e, "a.json", "{}");
    assert_content(e, "h", "{}");
    assert_content(e, "sub/b.yaml", "b: 1");
    assert_false(exists_in(e, "old"));
    assert_false(exists_in(e, "configs"));
}

static void test_prefix_strip_symlink_escape(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "configs/a.json", "{}");
    tw_symlink(t, "configs/sub/ok", "../a.json"); /* stays inside after stripping */
    tw_symlink(t, "configs/up", "../top.txt");    /* fine in the image, escapes once stripped */
    assert_int_equal(unpack(e, "configs", 1, NULL, &t, 1, NULL), -1);
    assert_string_equal(e->err.msg, LABEL ": entry \"configs/up\": symlink target escapes the "
                                    "unpack root (\"../top.txt\")");
    assert_true(exists_in(e, "sub/ok"));
    assert_false(exists_in(e, "up"));
}

static void test_bad_prefix(void **state)
{
    env *e = *state;
    assert_null(oci_unpacker_new(e->root, "../configs", 0, NULL, &e->err));
    assert_non_null(strstr(e->err.msg, "unpack prefix \"../configs\""));
}

static void test_not_a_tar(void **state)
{
    env *e = *state;
    static const char junk[] = "this is not a tar archive at all, just some text............";
    oci_unpacker *u = oci_unpacker_new(e->root, NULL, 0, NULL, &e->err);
    assert_non_null(u);
    assert_int_equal(oci_unpacker_apply_mem(u, junk, sizeof junk, LABEL, &e->err), -1);
    assert_non_null(strstr(e->err.msg, LABEL));
    /* an empty layer is a valid, empty tar */
    assert_int_equal(oci_unpacker_apply_mem(u, "", 0, LABEL, &e->err), 0);
    oci_unpacker_free(u);
}

/* ---------------------------------------------------------------- paths (pure) */

static void test_path_rules(void **state)
{
    (void)state;
    char out[OCI_UNPACK_PATH_BUFSZ];
    assert_null(oci_path_normalize("./a//b/./c/", 4096, out, sizeof out));
    assert_string_equal(out, "a/b/c");
    assert_null(oci_path_normalize("./", 4096, out, sizeof out));
    assert_string_equal(out, "");
    assert_non_null(oci_path_normalize("", 4096, out, sizeof out));
    assert_non_null(oci_path_normalize("a/..", 4096, out, sizeof out));
    assert_null(oci_symlink_target_check("a/b/l", "../../x/y", 4096));
    assert_non_null(oci_symlink_target_check("a/l", "../../x", 4096));
    assert_null(oci_symlink_target_check("l", "x/./y", 4096));
    assert_non_null(oci_symlink_target_check("l", "", 4096));
    const char *mapped;
    assert_int_equal(oci_prefix_map("a/b", 0, "a", &mapped), OCI_PREFIX_ANCESTOR);
    assert_int_equal(oci_prefix_map("a/b", 1, "a/b/c", &mapped), OCI_PREFIX_INSIDE);
    assert_string_equal(mapped, "c");
    assert_int_equal(oci_prefix_map("a/b", 0, "a/bc", &mapped), OCI_PREFIX_OUTSIDE);
    assert_int_equal(oci_prefix_map("", 0, "x", &mapped), OCI_PREFIX_INSIDE);
}

/* ---------------------------------------------------------------- verification */

static void test_digest_mismatch(void **state)
{
    (void)state;
    olm_error err;
    char got[OCI_DIGEST_BUFSZ], want[OCI_DIGEST_BUFSZ];
    assert_int_equal(oci_sha256_buf("good", 4, want), 0);
    oci_verify_sink s;
    assert_int_equal(oci_verify_sink_init(&s, NULL, 4, &err), 0);
    assert_int_equal(oci_verify_sink_write("evil", 4, &s), 4);
    assert_int_equal(oci_verify_sink_finish(&s, "blob x", want, 4, got, &err), -1);
    assert_non_null(strstr(err.msg, "blob x: digest mismatch: the content has digest sha256:"));
    assert_non_null(strstr(err.msg, want));
    oci_verify_sink_free(&s);

    /* more than declared: the transfer is cut short */
    assert_int_equal(oci_verify_sink_init(&s, NULL, 4, &err), 0);
    assert_int_equal(oci_verify_sink_write("good", 4, &s), 4);
    assert_int_equal(oci_verify_sink_write("!", 1, &s), 0);
    assert_int_equal(oci_verify_sink_finish(&s, "blob x", want, 4, got, &err), -1);
    assert_non_null(strstr(err.msg, "more than 4 bytes"));
    oci_verify_sink_free(&s);

    /* fewer than declared */
    assert_int_equal(oci_verify_sink_init(&s, NULL, 4, &err), 0);
    assert_int_equal(oci_verify_sink_write("goo", 3, &s), 3);
    assert_int_equal(oci_verify_sink_finish(&s, "blob x", want, 4, got, &err), -1);
    assert_non_null(strstr(err.msg, "size mismatch"));
    oci_verify_sink_free(&s);

    /* and the good case, into a file */
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(oci_verify_sink_init(&s, f, 4, &err), 0);
    assert_int_equal(oci_verify_sink_write("go", 2, &s), 2);
    assert_int_equal(oci_verify_sink_write("od", 2, &s), 2);
    assert_int_equal(oci_verify_sink_finish(&s, "blob x", want, 4, got, &err), 0);
    assert_string_equal(got, want);
    oci_verify_sink_free(&s);
    assert_int_equal(ftell(f), 4);
    fclose(f);
}

/* ---------------------------------------------------------------- manifests */

#define DA "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DB "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define DC "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define DD "sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define DE "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"

static const char sample_index[] =
    "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.index.v1+json\","
    "\"manifests\":["
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DA "\","
    "\"size\":100,\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}},"
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DB "\","
    "\"size\":100,\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\"}},"
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DC "\","
    "\"size\":100,\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":\"v6\"}},"
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DD "\","
    "\"size\":100,\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":\"v7\"}},"
    "{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"" DE "\","
    "\"size\":100,\"platform\":{\"architecture\":\"unknown\",\"os\":\"unknown\"}}]}";

static const char *pick(const char *json, const char *platform, olm_error *err)
{
    static char digest[OCI_DIGEST_BUFSZ];
    oci_platform p;
    assert_int_equal(oci_platform_parse(platform, &p, err), 0);
    oci_descriptor d;
    if (oci_index_select(json, strlen(json), &p, &d, err) != 0)
        return NULL;
    snprintf(digest, sizeof digest, "%s", d.digest);
    free(d.media_type);
    return digest;
}

static void test_platform_selection(void **state)
{
    (void)state;
    olm_error err;
    assert_string_equal(pick(sample_index, "linux/amd64", &err), DA);
    assert_string_equal(pick(sample_index, "linux/arm64", &err), DB);
    assert_string_equal(pick(sample_index, "linux/arm64/v8", &err), DB);
    assert_string_equal(pick(sample_index, "linux/arm/v7", &err), DD); /* exact beats v6 */
    assert_string_equal(pick(sample_index, "linux/arm/v6", &err), DC);
    assert_null(pick(sample_index, "linux/arm/v5", &err));
    assert_null(pick(sample_index, "linux/s390x", &err));
    assert_string_equal(err.msg, "no image for platform linux/s390x in the index; available: "
                                 "linux/amd64, linux/arm64/v8, linux/arm/v6, linux/arm/v7");
    assert_null(pick(sample_index, "windows/amd64", &err));

    /* a v7 CPU runs a v6-only image */
    static const char v6_only[] =
        "{\"manifests\":[{\"digest\":\"" DC "\",\"size\":1,"
        "\"platform\":{\"architecture\":\"arm\",\"os\":\"linux\",\"variant\":\"v6\"}}]}";
    assert_string_equal(pick(v6_only, "linux/arm/v7", &err), DC);

    oci_platform host;
    assert_int_equal(oci_platform_host(&host, &err), 0);
    assert_string_equal(host.os, "linux");
    assert_true(host.arch[0] != '\0');

    oci_platform bad;
    assert_int_equal(oci_platform_parse("linux", &bad, &err), -1);
    assert_int_equal(oci_platform_parse("linux/arm/v7/x", &bad, &err), -1);
}

static void test_manifest_parse(void **state)
{
    (void)state;
    olm_error err;
    oci_manifest_kind k;
    assert_int_equal(oci_manifest_kind_of(sample_index, strlen(sample_index), NULL, &k, &err), 0);
    assert_int_equal(k, OCI_KIND_INDEX);
    static const char docker[] =
        "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
        "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\","
        "\"digest\":\"" DA "\",\"size\":10},"
        "\"layers\":[{\"mediaType\":\"application/vnd.docker.image.rootfs.diff.tar.gzip\","
        "\"digest\":\"" DB "\",\"size\":20},"
        "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+zstd\","
        "\"digest\":\"" DC "\",\"size\":30}]}";
    assert_int_equal(oci_manifest_kind_of(docker, strlen(docker), NULL, &k, &err), 0);
    assert_int_equal(k, OCI_KIND_MANIFEST);
    oci_manifest m;
    assert_int_equal(oci_manifest_parse(docker, strlen(docker), &m, &err), 0);
    assert_int_equal(m.nlayers, 2);
    assert_string_equal(m.config.digest, DA);
    assert_string_equal(m.layers[1].digest, DC);
    assert_int_equal(m.layers[1].size, 30);
    oci_manifest_free(&m);

    static const char helm[] =
        "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"" DA "\",\"size\":1},"
        "\"layers\":[{\"mediaType\":\"application/vnd.cncf.helm.chart.content.v1.tar+gzip\","
        "\"digest\":\"" DB "\",\"size\":2}]}";
    assert_int_equal(oci_manifest_parse(helm, strlen(helm), &m, &err), -1);
    assert_non_null(strstr(err.msg, "unsupported media type"));

    static const char bad_digest[] =
        "{\"config\":{\"digest\":\"sha256:abc\",\"size\":1},\"layers\":[]}";
    assert_int_equal(oci_manifest_parse(bad_digest, strlen(bad_digest), &m, &err), -1);

    static const char v1[] = "{\"schemaVersion\":1,\"fsLayers\":[]}";
    assert_int_equal(oci_manifest_kind_of(v1, strlen(v1), NULL, &k, &err), -1);
    assert_non_null(strstr(err.msg, "schema 1"));
    /* Content-Type decides when the body does not say */
    static const char bare[] = "{\"schemaVersion\":2}";
    assert_int_equal(oci_manifest_kind_of(bare, strlen(bare),
                                          "application/vnd.oci.image.index.v1+json; charset=x", &k,
                                          &err),
                     0);
    assert_int_equal(k, OCI_KIND_INDEX);
}

/* The observer is told of each regular file once complete, relative to the prefix, and told
 * to forget everything whenever an entry replaces or removes one already in the tree. */
static void test_observer(void **state)
{
    env *e = *state;
    tarw *t = tw_new(GZIP);
    tw_file(t, "top.txt", "no");
    tw_dir(t, "configs");
    tw_file(t, "configs/a.json", "{}");
    tw_file(t, "configs/sub/b.yaml", "b: 1");
    tw_symlink(t, "configs/link", "a.json");
    tw_hardlink(t, "configs/hard", "configs/a.json");
    observe_next = true;
    assert_int_equal(unpack(e, "/configs", 0, NULL, &t, 1, NULL), 0);
    assert_string_equal(told, "a.json <- /configs/a.json\nsub/b.yaml <- /configs/sub/b.yaml\n");
}

static void test_observer_strip(void **state)
{
    env *e = *state;
    tarw *t = tw_new(PLAIN);
    tw_file(t, "configs/a.json", "{}");
    observe_next = true;
    assert_int_equal(unpack(e, "configs", 1, NULL, &t, 1, NULL), 0);
    assert_string_equal(told, "a.json <- /a.json\n");
}

static void test_observer_forgets_on_replace(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(PLAIN);
    tw_file(l1, "a", "1");
    tw_file(l1, "d/x", "x");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "b", "2");
    tw_file(l2, "a", "3"); /* replaces a file told of */
    tarw *layers[] = {l1, l2};
    observe_next = true;
    assert_int_equal(unpack(e, NULL, 0, NULL, layers, 2, NULL), 0);
    assert_string_equal(told, "a <- /a\nd/x <- /d/x\nb <- /b\nforget\na <- /a\n");
}

static void test_observer_forgets_on_whiteout(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(PLAIN);
    tw_file(l1, "d/x", "x");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "d/.wh.x", "");
    tarw *layers[] = {l1, l2};
    observe_next = true;
    assert_int_equal(unpack(e, NULL, 0, NULL, layers, 2, NULL), 0);
    assert_string_equal(told, "d/x <- /d/x\nforget\n");
}


/* A whiteout that can touch no file told of says nothing: one outside the prefix (a base
 * image's `RUN rm`), and one before any file was told. */
static void test_observer_ignores_whiteouts_that_touch_nothing_told(void **state)
{
    env *e = *state;
    tarw *l1 = tw_new(PLAIN);
    tw_file(l1, "etc/old", "o");
    tarw *l2 = tw_new(PLAIN);
    tw_file(l2, "etc/.wh.old", "");
    tw_file(l2, "configs/a.json", "{}");
    tarw *l3 = tw_new(PLAIN);
    tw_file(l3, "etc/.wh.gone", "");
    tarw *layers[] = {l1, l2, l3};
    observe_next = true;
    assert_int_equal(unpack(e, "/configs", 0, NULL, layers, 3, NULL), 0);
    assert_string_equal(told, "a.json <- /configs/a.json\n");

    tarw *m1 = tw_new(PLAIN);
    tw_file(m1, ".wh.nothing", "");
    tw_file(m1, "a", "1");
    observe_next = true;
    assert_int_equal(unpack(e, NULL, 0, NULL, &m1, 1, NULL), 0);
    assert_string_equal(told, "a <- /a\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_dotdot),
        T(test_dotdot_etc_passwd_gzip),
        T(test_absolute),
        T(test_inner_dotdot),
        T(test_symlink_absolute_then_through),
        T(test_symlink_escaping_then_through),
        T(test_through_inner_symlink),
        T(test_parent_is_file),
        T(test_hardlinks),
        T(test_hardlink_ok),
        T(test_devices_skipped),
        T(test_huge_declared_size),
        T(test_total_size_cap),
        T(test_too_many_files),
        T(test_implicit_dirs_counted),
        cmocka_unit_test(test_pathset_linear),
        T(test_skipped_bytes),
        T(test_cache_sweep),
        T(test_pax_header_warning_refused),
        T(test_long_path),
        T(test_whiteouts),
        T(test_replace_across_layers),
        T(test_whiteout_through_symlink),
        T(test_permissions),
        T(test_prefix_filter),
        T(test_observer),
        T(test_observer_strip),
        T(test_observer_forgets_on_replace),
        T(test_observer_forgets_on_whiteout),
        T(test_observer_ignores_whiteouts_that_touch_nothing_told),
        T(test_prefix_strip),
        T(test_prefix_strip_symlink_escape),
        T(test_bad_prefix),
        T(test_not_a_tar),
        cmocka_unit_test(test_path_rules),
        cmocka_unit_test(test_digest_mismatch),
        cmocka_unit_test(test_platform_selection),
        cmocka_unit_test(test_manifest_parse),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

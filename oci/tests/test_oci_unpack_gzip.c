/* Unit tests for gzip layers, which the unpacker gunzips itself with ISA-L before libarchive
 * (oci_unpack_source.c): concatenated members (also split at every byte, headers with
 * name/extra/comment), corrupt, truncated and mis-checksummed data, trailing bytes, the
 * unpack limits against gzip bombs, decompression on demand, and zstd/plain layers still
 * passed through.  Layers are read from memory (apply_mem) and from a socket that hands them
 * over in chunks of a chosen size (apply_fd, as the streaming pull reads its pipe). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "oci_pull_internal.h"
#include "oci_unpack.h"
#include "oci_unpack_source.h"

#define LABEL "layer sha256:ab12cd34ef56"

/* ---------------------------------------------------------------- byte buffers */

typedef struct buf {
    unsigned char *p;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const void *data, size_t len)
{
    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2 + 1024;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

/* A tar (pax) of the given files, NULL-terminated name/content pairs. */
static buf tar_of(const char *const *files)
{
    buf b = {.cap = 1024 * 1024};
    for (size_t i = 0; files[i]; i += 2)
        b.cap += strlen(files[i + 1]) + 4096;
    b.p = malloc(b.cap);
    assert_non_null(b.p);
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_memory(a, b.p, b.cap, &b.len), ARCHIVE_OK);
    for (size_t i = 0; files[i]; i += 2) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, files[i]);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        size_t len = strlen(files[i + 1]);
        archive_entry_set_size(e, (la_int64_t)len);
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, files[i + 1], len), (la_ssize_t)len);
        archive_entry_free(e);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    return b;
}

/* Appends one gzip member of data[0..len) to `out` (zlib); with `fields`, its header has a
 * name, an extra field, a comment and a header CRC, which the reader must skip. */
static void gz_member(buf *out, const void *data, size_t len, int fields)
{
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    gz_header h = {0};
    if (fields) {
        h.name = (Bytef *)"layer.tar";
        h.comment = (Bytef *)"a comment";
        h.extra = (Bytef *)"XYZW\x04\x00" "abcd";
        h.extra_len = 10;
        h.hcrc = 1;
        assert_int_equal(deflateSetHeader(&z, &h), Z_OK);
    }
    size_t cap = deflateBound(&z, len) + 256;
    unsigned char *tmp = malloc(cap);
    assert_non_null(tmp);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = tmp;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    buf_add(out, tmp, z.total_out);
    deflateEnd(&z);
    free(tmp);
}

/* ---------------------------------------------------------------- fixture */

typedef struct env {
    char root[PATH_MAX];
    olm_error err;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    snprintf(e->root, sizeof e->root, "/tmp/oci-gzip-test-XXXXXX");
    if (!mkdtemp(e->root))
        return -1;
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    oci_remove_path(e->root);
    free(e);
    return 0;
}

/* A fresh, empty root. */
static void reset_root(env *e)
{
    oci_remove_path(e->root);
    assert_int_equal(mkdir(e->root, 0755), 0);
}

static void assert_content(const env *e, const char *rel, const char *want)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s", e->root, rel);
    FILE *f = fopen(p, "rb");
    if (!f)
        fail_msg("%s missing", rel);
    char got[4096];
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    assert_string_equal(got, want);
}

static int exists(const env *e, const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s", e->root, rel);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Hands `b` over a SOCK_SEQPACKET socket in packets of `chunk` bytes (each read() of the
 * reader returns one packet: the chunking is exact), then closes its end. */
typedef struct feeder {
    int fd;
    const buf *b;
    size_t chunk;
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    for (size_t off = 0; off < f->b->len;) {
        size_t n = f->b->len - off < f->chunk ? f->b->len - off : f->chunk;
        if (send(f->fd, f->b->p + off, n, MSG_NOSIGNAL) != (ssize_t)n)
            break; /* the reader stopped early (a refused layer) */
        off += n;
    }
    close(f->fd);
    return NULL;
}

/* Applies `b` with the limits and prefix given; chunk 0: from memory, else from a socket in
 * chunks of that size.  Returns what the apply returned (error in e->err). */
static int apply(env *e, const buf *b, size_t chunk, const char *prefix, const oci_unpack_limits *lim)
{
    reset_root(e);
    oci_unpacker *u = oci_unpacker_new(e->root, prefix, 0, lim, &e->err);
    assert_non_null(u);
    int rc;
    if (!chunk) {
        rc = oci_unpacker_apply_mem(u, b->p, b->len, LABEL, &e->err);
    } else {
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        feeder f = {.fd = sv[1], .b = b, .chunk = chunk};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
        rc = oci_unpacker_apply_fd(u, sv[0], LABEL, &e->err);
        close(sv[0]); /* a feeder still sending gets EPIPE */
        pthread_join(t, NULL);
    }
    oci_unpacker_free(u);
    return rc;
}

/* Every way of reading a layer the tests below use: memory, and a socket handing over 1, 2,
 * 7, 509 and 64 Ki bytes at a time (headers, deflate blocks and trailers split anywhere). */
static const size_t chunks[] = {0, 1, 2, 7, 509, 65536};
#define NCHUNKS (sizeof chunks / sizeof chunks[0])

static void expect_error(env *e, const buf *b, size_t chunk, const oci_unpack_limits *lim, const char *part)
{
    assert_int_equal(apply(e, b, chunk, NULL, lim), -1);
    if (!strstr(e->err.msg, LABEL) || !strstr(e->err.msg, part))
        fail_msg("chunk %zu: error \"%s\" does not name the layer or does not contain \"%s\"", chunk,
                 e->err.msg, part);
}

static const char *const FILES[] = {"configs/a/catalog.yaml", "schema: olm.package\nname: a\n",
                                    "configs/b/catalog.json", "{\"schema\":\"olm.package\",\"name\":\"b\"}",
                                    "configs/c/catalog.yaml", "schema: olm.package\nname: c\n", NULL};

static void assert_files(const env *e)
{
    for (size_t i = 0; FILES[i]; i += 2)
        assert_content(e, FILES[i], FILES[i + 1]);
}

/* ---------------------------------------------------------------- tests */

/* One member, and the same tar cut into members at odd places (inside a tar header, inside
 * file data), with an empty member and a member whose header carries every optional field:
 * one stream, the same files, whichever way the bytes arrive. */
static void test_members(void **state)
{
    env *e = *state;
    buf tar = tar_of(FILES);
    buf one = {0}, many = {0};
    gz_member(&one, tar.p, tar.len, 0);
    size_t cuts[] = {0, 100, 513, 1500, tar.len};
    for (size_t i = 0; i + 1 < sizeof cuts / sizeof cuts[0]; i++) {
        gz_member(&many, tar.p + cuts[i], cuts[i + 1] - cuts[i], i == 2);
        if (i == 1)
            gz_member(&many, "", 0, 0);
    }
    for (size_t c = 0; c < NCHUNKS; c++) {
        assert_int_equal(apply(e, &one, chunks[c], NULL, NULL), 0);
        assert_files(e);
        if (apply(e, &many, chunks[c], NULL, NULL) != 0)
            fail_msg("chunk %zu: %s", chunks[c], e->err.msg);
        assert_files(e);
    }
    free(tar.p), free(one.p), free(many.p);
}

/* A bigger layer (2 MiB of catalog-like text in 40 files) in 3 members: many deflate blocks
 * and many reads, each member ending inside a buffer handed to libarchive. */
static void test_members_large(void **state)
{
    env *e = *state;
    const char *files[81];
    char *data[40];
    for (int i = 0; i < 40; i++) {
        char *name = malloc(64);
        snprintf(name, 64, "configs/p%02d/catalog.yaml", i);
        size_t n = 50 * 1024 + (size_t)i * 37;
        data[i] = malloc(n + 1);
        for (size_t j = 0; j < n; j++)
            data[i][j] = "abcdefghij klmnop: qrstu\n"[(j * 7 + (size_t)i + j / 97) % 25];
        data[i][n] = '\0';
        files[2 * i] = name;
        files[2 * i + 1] = data[i];
    }
    files[80] = NULL;
    buf tar = tar_of(files);
    buf gz = {0};
    gz_member(&gz, tar.p, 700000, 0);
    gz_member(&gz, tar.p + 700000, 1000001, 0);
    gz_member(&gz, tar.p + 1700001, tar.len - 1700001, 1);
    const size_t big_chunks[] = {0, 4093, 65536};
    for (size_t c = 0; c < 3; c++) {
        if (apply(e, &gz, big_chunks[c], NULL, NULL) != 0)
            fail_msg("chunk %zu: %s", big_chunks[c], e->err.msg);
        char p[PATH_MAX * 2];
        for (int i = 0; i < 40; i += 13) {
            snprintf(p, sizeof p, "%s/%s", e->root, files[2 * i]);
            struct stat st;
            assert_int_equal(stat(p, &st), 0);
            assert_int_equal((size_t)st.st_size, strlen(data[i]));
        }
        snprintf(p, sizeof p, "%s/%s", e->root, files[78]);
        FILE *f = fopen(p, "rb");
        assert_non_null(f);
        size_t n = strlen(data[39]);
        char *got = malloc(n);
        assert_int_equal(fread(got, 1, n, f), n);
        fclose(f);
        assert_memory_equal(got, data[39], n);
        free(got);
    }
    for (int i = 0; i < 40; i++)
        free((char *)files[2 * i]), free(data[i]);
    free(tar.p), free(gz.p);
}

/* A flipped byte in the deflate data, a wrong CRC-32 in a member's trailer (the reader needs
 * the member after it), and a second member with a bad header: a clear error naming the layer. */
static void test_corrupt(void **state)
{
    env *e = *state;
    buf tar = tar_of(FILES);
    buf gz = {0};
    gz_member(&gz, tar.p, tar.len, 0);
    for (size_t c = 0; c < NCHUNKS; c++) {
        /* bytes 10..: deflate data; garbage there is an invalid block or code, a bad
         * distance or, at worst, other bytes whose CRC-32 does not match */
        buf bad = {0};
        buf_add(&bad, gz.p, gz.len);
        for (size_t i = 12; i < 40; i++)
            bad.p[i] ^= 0x5a;
        expect_error(e, &bad, chunks[c], NULL, "corrupt gzip data in member 1");
        free(bad.p);

        buf crc = {0};
        gz_member(&crc, tar.p, 1024, 0);
        crc.p[crc.len - 8] ^= 1; /* the first member's CRC-32 */
        gz_member(&crc, tar.p + 1024, tar.len - 1024, 0);
        expect_error(e, &crc, chunks[c], NULL, "gzip checksum mismatch");
        free(crc.p);

        buf last = {0}; /* the only member's CRC-32: read after the tar's end */
        buf_add(&last, gz.p, gz.len);
        last.p[last.len - 8] ^= 1;
        expect_error(e, &last, chunks[c], NULL, "gzip checksum mismatch");
        assert_int_equal(last.p[last.len - 4], tar.len & 0xff);
        last.p[last.len - 8] ^= 1;
        last.p[last.len - 4] ^= 1; /* its length */
        expect_error(e, &last, chunks[c], NULL, "gzip checksum mismatch");
        free(last.p);

        buf hdr = {0};
        gz_member(&hdr, tar.p, 1024, 0);
        size_t second = hdr.len;
        gz_member(&hdr, tar.p + 1024, tar.len - 1024, 0);
        hdr.p[second + 2] = 9; /* compression method 9 */
        expect_error(e, &hdr, chunks[c], NULL, "member 2");
        free(hdr.p);
    }
    free(tar.p), free(gz.p);
}

/* A layer cut short anywhere inside the gzip stream is an error, never a shorter tree taken
 * for the layer: inside the header, inside the deflate data, inside the trailer. */
static void test_truncated(void **state)
{
    env *e = *state;
    buf tar = tar_of(FILES);
    buf gz = {0};
    gz_member(&gz, tar.p, tar.len, 0);
    size_t cuts[] = {5, 11, gz.len / 2, gz.len - 4, gz.len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        buf cut = {.p = gz.p, .len = cuts[i]};
        for (size_t c = 0; c < NCHUNKS; c++) {
            assert_int_equal(apply(e, &cut, chunks[c], NULL, NULL), -1);
            if (!strstr(e->err.msg, LABEL) ||
                (!strstr(e->err.msg, "gzip data ends inside member 1") && !strstr(e->err.msg, "truncated")))
                fail_msg("cut at %zu, chunk %zu: %s", cuts[i], chunks[c], e->err.msg);
        }
    }
    free(tar.p), free(gz.p);
}

/* Bytes after the last member that do not start another one end the stream, as libarchive's
 * own gzip reader had it: the layer unpacks. */
static void test_trailing_bytes(void **state)
{
    env *e = *state;
    buf tar = tar_of(FILES);
    buf gz = {0};
    gz_member(&gz, tar.p, tar.len, 0);
    static const char zeros[1024];
    buf_add(&gz, zeros, sizeof zeros);
    for (size_t c = 0; c < NCHUNKS; c++) {
        if (apply(e, &gz, chunks[c], NULL, NULL) != 0)
            fail_msg("chunk %zu: %s", chunks[c], e->err.msg);
        assert_files(e);
    }
    free(tar.p), free(gz.p);
}

/* Gzip bombs: 32 MiB of '0' (32 KB of gzip) as one file over max_bytes, or outside the
 * prefix over max_skipped_bytes, fail on the tar header, before the data is decompressed. */
static void test_bomb_limits(void **state)
{
    env *e = *state;
    size_t n = 32 * 1024 * 1024;
    char *zeros = calloc(1, n + 1);
    assert_non_null(zeros);
    memset(zeros, '0', n);
    const char *files[] = {"usr/share/bomb", zeros, "configs/a/catalog.yaml", "schema: olm.package\n", NULL};
    buf tar = tar_of(files);
    buf gz = {0};
    gz_member(&gz, tar.p, tar.len, 0);
    free(tar.p);
    assert_true(gz.len < 1024 * 1024);
    oci_unpack_limits small = {.max_bytes = 1024 * 1024};
    for (size_t c = 0; c < NCHUNKS; c += 2) {
        expect_error(e, &gz, chunks[c] ? 65536 : 0, &small,
                     "entry \"usr/share/bomb\": size 33554432 bytes exceeds the unpack limit of 1048576 bytes");
        assert_false(exists(e, "usr/share/bomb"));
    }
    oci_unpack_limits skip = {.max_skipped_bytes = 1024 * 1024};
    assert_int_equal(apply(e, &gz, 0, "/configs", &skip), -1);
    if (!strstr(e->err.msg, LABEL ": entry \"usr/share/bomb\": 33554432 bytes that are not extracted"))
        fail_msg("unexpected error: %s", e->err.msg);
    assert_false(exists(e, "configs/a/catalog.yaml"));
    /* after the tar's end, a member of 32 MiB: read only to be skipped, so counted too */
    buf tail = {0};
    buf small_tar = tar_of(FILES);
    gz_member(&tail, small_tar.p, small_tar.len, 0);
    gz_member(&tail, zeros, n, 0);
    for (size_t c = 0; c < NCHUNKS; c += 5) {
        expect_error(e, &tail, chunks[c], &skip, "gzip data after the tar's end would pass the limit of 1048576 "
                                                  "bytes read only to be skipped");
    }
    assert_int_equal(apply(e, &tail, 0, NULL, NULL), 0);
    assert_files(e);
    free(tail.p), free(small_tar.p);
    /* under the default limits it unpacks */
    assert_int_equal(apply(e, &gz, 65536, "/configs", NULL), 0);
    assert_content(e, "configs/a/catalog.yaml", "schema: olm.package\n");
    free(zeros), free(gz.p);
}

/* The source decompresses on demand: each read hands libarchive one buffer (at most 256 KiB),
 * never the whole stream, so what a bomb costs is what the unpacker asks for. */
static void test_on_demand(void **state)
{
    (void)state;
    size_t n = 16 * 1024 * 1024;
    char *zeros = calloc(1, n);
    assert_non_null(zeros);
    buf gz = {0};
    gz_member(&gz, zeros, n, 0);
    free(zeros);
    oci_unpack_source *s = oci_unpack_source_new(-1, gz.p, gz.len);
    assert_non_null(s);
    struct archive *a = archive_read_new();
    size_t total = 0, reads = 0;
    for (;;) {
        const void *b;
        ssize_t got = oci_unpack_source_read(a, s, &b);
        assert_true(got >= 0);
        if (got == 0)
            break;
        assert_true(got <= 256 * 1024);
        total += (size_t)got, reads++;
    }
    assert_int_equal(total, n);
    assert_true(reads >= n / (256 * 1024));
    assert_null(oci_unpack_source_error(s));
    archive_read_free(a);
    oci_unpack_source_free(s);
    free(gz.p);
}

/* Layers that are not gzip go to libarchive untouched, however the bytes arrive (the first
 * read may bring a single byte): zstd and plain tar unpack, an empty layer is an empty tar,
 * junk and a lone 0x1f are refused as not a tar. */
static void test_not_gzip(void **state)
{
    env *e = *state;
    buf tar = tar_of(FILES);
    buf zst = {.cap = tar.len + 65536};
    zst.p = malloc(zst.cap);
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
    assert_int_equal(archive_write_add_filter_zstd(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_memory(a, zst.p, zst.cap, &zst.len), ARCHIVE_OK);
    for (size_t i = 0; FILES[i]; i += 2) {
        struct archive_entry *en = archive_entry_new();
        archive_entry_set_pathname(en, FILES[i]);
        archive_entry_set_filetype(en, AE_IFREG);
        archive_entry_set_perm(en, 0644);
        archive_entry_set_size(en, (la_int64_t)strlen(FILES[i + 1]));
        assert_int_equal(archive_write_header(a, en), ARCHIVE_OK);
        archive_write_data(a, FILES[i + 1], strlen(FILES[i + 1]));
        archive_entry_free(en);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    assert_true(zst.p[0] == 0x28 && zst.p[1] == 0xb5); /* zstd magic */
    buf empty = {.p = (unsigned char *)"", .len = 0};
    buf junk = {.p = (unsigned char *)"this is not a tar archive at all", .len = 32};
    buf lone = {.p = (unsigned char *)"\x1f", .len = 1};
    for (size_t c = 0; c < NCHUNKS; c++) {
        assert_int_equal(apply(e, &tar, chunks[c], NULL, NULL), 0);
        assert_files(e);
        assert_int_equal(apply(e, &zst, chunks[c], NULL, NULL), 0);
        assert_files(e);
        assert_int_equal(apply(e, &empty, chunks[c], NULL, NULL), 0);
        expect_error(e, &junk, chunks[c], NULL, "not a tar layer");
        expect_error(e, &lone, chunks[c], NULL, "not a tar layer");
    }
    free(tar.p), free(zst.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_members_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trailing_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bomb_limits, setup, teardown),
        cmocka_unit_test(test_on_demand),
        cmocka_unit_test_setup_teardown(test_not_gzip, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

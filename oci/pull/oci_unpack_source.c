/* What libarchive reads of a layer: gzip layers gunzipped with ISA-L, the rest as is.
 *
 * Why: a catalog pull spends most of its unpack thread's CPU in zlib's inflate (perf on
 * `olmv1 image pull` of certified-operators-v4.18: ~60% of that thread, ~25 ms of a 50 ms
 * pull); ISA-L's isal_inflate does the same work in about 40% of the time.  libarchive has
 * no ISA-L filter, so we decompress before it and hand it the tar.
 *
 * What stays as it was with libarchive's own gzip filter:
 *   - the first two bytes decide: 1f 8b is gzip, anything else is passed through untouched
 *     and libarchive recognises it (zstd, plain tar, empty, or refuses it);
 *   - concatenated gzip members are one stream; after a member, bytes that do not start
 *     another (1f 8b) end the stream and are not read (libarchive ignored them too);
 *   - decompression happens only as libarchive asks for bytes, one buffer at a time, so the
 *     unpacker's limits (bytes written, bytes skipped, entries) bound what a gzip bomb costs
 *     exactly as before.
 * Stricter than libarchive: each member's CRC-32 and length are checked (libarchive left
 * that "TODO"); after the tar's end the stream is read to its last member's end
 * (oci_unpack_source_finish), so a truncated or corrupt end is refused too; an error says
 * what is wrong, in which member and near which compressed byte.
 *
 * isa-l may step back a few bytes in its input when a member ends (bits it had loaded
 * ahead); our position is therefore always taken from its next_in, and the fd buffer keeps
 * the last KEEP_BYTES consumed bytes when it is compacted so that such a step back stays
 * inside it. */
#include "oci_unpack_source.h"

#include <archive.h>
#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IN_BYTES (128 * 1024)  /* one read of the pipe */
#define OUT_BYTES (256 * 1024) /* one buffer handed to libarchive */
#define KEEP_BYTES 16          /* > the 8 bytes isa-l may step back */
#define FEED_MAX (1u << 30)    /* isa-l counts input in 32 bits */

enum mode { SNIFF, RAW, GZIP, DONE, FAILED };

struct oci_unpack_source {
    int fd;                   /* < 0: memory */
    uint8_t *inbuf;           /* fd only: IN_BYTES + KEEP_BYTES */
    const uint8_t *in;        /* input not consumed yet... */
    size_t in_len;            /* ...and how much of it */
    int eof;                  /* nothing more to read than in/in_len */
    enum mode mode;
    struct inflate_state *st; /* GZIP */
    struct isal_gzip_header hdr; /* the current member's, while in_header */
    int in_header;
    uint8_t *out;             /* GZIP: OUT_BYTES */
    uint64_t consumed;        /* compressed bytes consumed, for messages */
    unsigned member;          /* 1-based number of the current gzip member */
    char why[256];            /* FAILED */
};

oci_unpack_source *oci_unpack_source_new(int fd, const void *data, size_t len)
{
    oci_unpack_source *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fd = fd;
    if (fd < 0) {
        s->in = data;
        s->in_len = len;
        s->eof = 1;
    } else if (!(s->inbuf = malloc(IN_BYTES + KEEP_BYTES))) {
        free(s);
        return NULL;
    } else {
        s->in = s->inbuf;
    }
    return s;
}

void oci_unpack_source_free(oci_unpack_source *s)
{
    if (!s)
        return;
    free(s->inbuf);
    free(s->st);
    free(s->out);
    free(s);
}

const char *oci_unpack_source_error(const oci_unpack_source *s)
{
    return s->mode == FAILED ? s->why : NULL;
}

static ssize_t fail(struct archive *a, oci_unpack_source *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ssize_t fail(struct archive *a, oci_unpack_source *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    s->mode = FAILED;
    archive_set_error(a, EIO, "%s", s->why);
    return -1;
}

/* Reads until at least `want` bytes are unconsumed or the input ends.  The buffer is
 * compacted first, keeping up to KEEP_BYTES already consumed bytes before `in`. */
static int fill(struct archive *a, oci_unpack_source *s, size_t want)
{
    while (!s->eof && s->in_len < want) {
        size_t keep = (size_t)(s->in - s->inbuf);
        if (keep > KEEP_BYTES)
            keep = KEEP_BYTES;
        memmove(s->inbuf, s->in - keep, keep + s->in_len);
        s->in = s->inbuf + keep;
        size_t end = keep + s->in_len;
        ssize_t n = read(s->fd, s->inbuf + end, IN_BYTES + KEEP_BYTES - end);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return (int)fail(a, s, "reading the layer: %s", strerror(errno));
        if (n == 0)
            s->eof = 1;
        s->in_len += (size_t)n;
    }
    return 0;
}

static int is_gzip_magic(const oci_unpack_source *s)
{
    return s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b;
}

static const char *isal_why(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate code";
    case ISAL_INVALID_LOOKBACK: return "a back-reference before the start of the data";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "gzip compression method other than deflate";
    case ISAL_INCORRECT_CHECKSUM: return "gzip checksum mismatch (CRC-32 or length of the data)";
    default: return "undecodable gzip data";
    }
}

static void start_member(oci_unpack_source *s)
{
    isal_gzip_header_init(&s->hdr); /* no name/extra/comment buffers: those fields are skipped */
    s->in_header = 1;
}

static int start_gzip(struct archive *a, oci_unpack_source *s)
{
    s->st = malloc(sizeof *s->st);
    s->out = malloc(OUT_BYTES);
    if (!s->st || !s->out)
        return (int)fail(a, s, "out of memory");
    isal_inflate_init(s->st);
    s->st->crc_flag = ISAL_GZIP; /* check each member's CRC-32 and length */
    start_member(s);
    s->member = 1;
    s->mode = GZIP;
    return 0;
}

/* Offers isa-l the unconsumed input (at most FEED_MAX), runs `step`, and takes the new
 * position from isa-l's next_in. */
static int step(oci_unpack_source *s, int header)
{
    struct inflate_state *st = s->st;
    const uint8_t *before = s->in;
    uint32_t fed = s->in_len > FEED_MAX ? FEED_MAX : (uint32_t)s->in_len;
    st->next_in = (uint8_t *)(uintptr_t)s->in; /* isa-l only reads it */
    st->avail_in = fed;
    int rc = header ? isal_read_gzip_header(st, &s->hdr) : isal_inflate(st);
    size_t unfed = s->in_len - fed;
    s->consumed += (uint64_t)(st->next_in - before); /* may step back: see the top */
    s->in = st->next_in;
    s->in_len = st->avail_in + unfed;
    return rc;
}

static ssize_t corrupt(struct archive *a, oci_unpack_source *s, int rc)
{
    return fail(a, s, "corrupt gzip data in member %u near compressed byte %llu: %s", s->member,
                (unsigned long long)s->consumed, isal_why(rc));
}

static ssize_t truncated(struct archive *a, oci_unpack_source *s)
{
    return fail(a, s, "gzip data ends inside member %u after %llu compressed bytes (a truncated layer)",
                s->member, (unsigned long long)s->consumed);
}

/* One buffer of tar, or 0 at the end of the gzip stream. */
static ssize_t read_gzip(struct archive *a, oci_unpack_source *s, const void **buf)
{
    struct inflate_state *st = s->st;
    for (;;) {
        if (st->block_state == ISAL_BLOCK_FINISH) {
            /* a member ended: another one, or the end of the stream */
            if (fill(a, s, 2) != 0)
                return -1;
            if (!is_gzip_magic(s)) {
                s->mode = DONE;
                return 0;
            }
            isal_inflate_reset(st); /* keeps crc_flag */
            start_member(s);
            s->member++;
        }
        if (s->in_len == 0 && fill(a, s, 1) != 0)
            return -1;
        if (s->in_header) {
            /* The header apart, with a header struct that lives as long as the member:
             * isal_inflate would parse it with a fresh one on each call and lose its flags
             * when the header (name, comment...) is split between two reads. */
            const uint8_t *was = s->in;
            int rc = step(s, 1);
            if (rc < 0)
                return corrupt(a, s, rc);
            if (rc == 0)
                s->in_header = 0; /* the deflate data follows */
            else if (s->in_len == 0 && s->eof)
                return truncated(a, s);
            else if (s->in == was && s->in_len) /* never loops without progress */
                return corrupt(a, s, ISAL_INVALID_WRAPPER);
            continue;
        }
        const uint8_t *before = s->in;
        st->next_out = s->out;
        st->avail_out = OUT_BYTES;
        int rc = step(s, 0);
        size_t produced = (size_t)(st->next_out - s->out);
        if (rc < 0)
            return corrupt(a, s, rc);
        if (produced) {
            *buf = s->out;
            return (ssize_t)produced;
        }
        if (st->block_state == ISAL_BLOCK_FINISH)
            continue;
        if (s->in == before && s->in_len) /* input offered, nothing done: never loops */
            return fail(a, s, "undecodable gzip data in member %u near compressed byte %llu",
                        s->member, (unsigned long long)s->consumed);
        if (s->in_len == 0 && s->eof)
            return truncated(a, s);
    }
}

ssize_t oci_unpack_source_read(struct archive *a, void *source, const void **buf)
{
    oci_unpack_source *s = source;
    *buf = NULL;
    switch (s->mode) {
    case SNIFF:
        if (s->fd >= 0 && fill(a, s, 2) != 0)
            return -1;
        if (is_gzip_magic(s)) {
            if (start_gzip(a, s) != 0)
                return -1;
            return read_gzip(a, s, buf);
        }
        s->mode = RAW;
        __attribute__((fallthrough)); /* what was read so far goes first */
    case RAW:
        if (s->in_len == 0 && fill(a, s, 1) != 0)
            return -1;
        if (s->in_len == 0)
            return 0;
        *buf = s->in;
        size_t n = s->in_len;
        s->in += n;
        s->in_len = 0;
        return (ssize_t)n;
    case GZIP:
        return read_gzip(a, s, buf);
    case DONE:
        return 0;
    case FAILED:
    default:
        archive_set_error(a, EIO, "%s", s->why);
        return -1;
    }
}

int oci_unpack_source_finish(struct archive *a, oci_unpack_source *s, uint64_t limit, uint64_t *read)
{
    *read = 0;
    if (s->mode != GZIP)
        return s->mode == FAILED ? -1 : 0;
    for (;;) {
        const void *b;
        ssize_t n = read_gzip(a, s, &b);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        *read += (uint64_t)n;
        if (*read > limit)
            return 1;
    }
}

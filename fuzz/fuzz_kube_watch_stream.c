/* fuzz_kube_watch_stream: an API server's watch response body.  TCP and HTTP chunking cut it
 * anywhere, so the bytes are fed once whole and once in pieces (sizes drawn from the input):
 * both must report the same events in the same order and fail, if at all, the same way. */
#include "fuzz_util.h"
#include "kube_watch_stream.h"

/* Each event as "type\tcompact sorted JSON\n". */
static int record(const char *type, json_t *object, void *data)
{
    strbuf *log = data;
    char *text = json_dumps(object, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    FUZZ_CHECK(text != NULL, "out of memory");
    int rc = strbuf_puts(log, type) | strbuf_putc(log, '\t') | strbuf_puts(log, text) | strbuf_putc(log, '\n');
    FUZZ_CHECK(rc == 0, "out of memory");
    free(text);
    return 0;
}

/* Feeds data in pieces of 1..64 bytes (a tiny LCG seeded by the input); returns the first
 * non-zero feed result, or 0. */
static int feed(const uint8_t *data, size_t size, int whole, strbuf *log)
{
    kube_watch_stream s;
    kube_watch_stream_init(&s, record, log);
    olm_error err;
    int rc = 0;
    uint32_t seed = size ? data[0] : 0;
    for (size_t pos = 0; pos < size && rc == 0;) {
        seed = seed * 1103515245u + 12345u;
        size_t n = whole ? size : 1 + (seed >> 16) % 64;
        if (n > size - pos)
            n = size - pos;
        rc = kube_watch_stream_feed(&s, (const char *)data + pos, n, &err);
        pos += n;
    }
    kube_watch_stream_free(&s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    int ra = feed(data, size, 1, &a);
    int rb = feed(data, size, 0, &b);
    FUZZ_CHECK(ra == rb, "whole: %d, in pieces: %d", ra, rb);
    FUZZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0),
               "whole:\n%s\nin pieces:\n%s", a.data ? a.data : "", b.data ? b.data : "");
    strbuf_free(&a);
    strbuf_free(&b);
    return 0;
}

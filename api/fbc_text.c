/* fbc_text: a catalog's text in a private mapping of its own, so that a parallel load can
 * join its parts by moving their pages (fbc_model_join.c) rather than copying them.
 *
 * On the virtual machines this runs on, a fresh anonymous page costs 1.3-1.8 us to fault
 * in, and copying the parts of certified-operators (18 MB) into a new buffer faulted 4,400
 * of them: a parallel load touched 11,500 pages against a serial load's 6,500.  A part
 * whose text sits in a mapping of its own, page aligned, hands its pages over with mremap,
 * after a shift in place by less than a page (see fbc_model_concat).
 *
 * The mapping is address space only (MAP_NORESERVE): pages are backed as they are written.
 * It is sized so that no file's text can outgrow it: aliases expand a document to at most
 * max(64 MiB, 4 x the file) (fbc_decode_yaml.c) and JSON escaping writes at most 6 bytes a
 * byte; should it all the same, the append fails like an allocation (the strbuf is fixed)
 * and the load says it ran out of memory.  Where such a mapping is refused (strict
 * overcommit, an address-space limit) the text is an ordinary strbuf, copied at the join.
 *
 * Only files of TEXT_MAP_MIN_INPUT bytes or more get a mapping (a smaller text is copied
 * for about what moving it costs), and at most TEXT_MAX_MAPPINGS at once in the process:
 * a catalog image may hold 200,000 files (oci_unpack_limits.h), and as many mappings
 * would take every address and every map slot (vm.max_map_count) the process has. */
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fbc_internal.h"

#define TEXT_MIN_RESERVE ((size_t)1 << 30)
#define TEXT_RESERVE_PER_INPUT_BYTE 32
#define TEXT_MAP_MIN_INPUT ((size_t)64 * 1024)
#define TEXT_MAX_MAPPINGS 1024

static atomic_int live_mappings;

static size_t page_size(void)
{
    static size_t page;
    if (!page) {
        long n = sysconf(_SC_PAGESIZE);
        page = n > 0 ? (size_t)n : 4096;
    }
    return page;
}

size_t fbc_text_page(void)
{
    return page_size();
}

size_t fbc_text_round(size_t n)
{
    size_t page = page_size();
    return (n + page - 1) / page * page;
}

int fbc_text_map_bytes(strbuf *sb, size_t bytes)
{
    if (sb->data)
        return -1;
    if (atomic_fetch_add(&live_mappings, 1) >= TEXT_MAX_MAPPINGS) {
        atomic_fetch_sub(&live_mappings, 1);
        return -1;
    }
    size_t size = fbc_text_round(bytes);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        atomic_fetch_sub(&live_mappings, 1);
        return -1;
    }
    *sb = (strbuf){.data = p, .len = 0, .cap = size, .fixed = 1};
    sb->data[0] = '\0';
    return 0;
}

int fbc_text_map(strbuf *sb, size_t input_len)
{
    if (input_len < TEXT_MAP_MIN_INPUT)
        return -1;
    size_t want = TEXT_MIN_RESERVE;
    if (input_len < SIZE_MAX / TEXT_RESERVE_PER_INPUT_BYTE && input_len * TEXT_RESERVE_PER_INPUT_BYTE > want)
        want = input_len * TEXT_RESERVE_PER_INPUT_BYTE;
    return fbc_text_map_bytes(sb, want);
}

void fbc_text_free(strbuf *sb)
{
    if (sb->fixed && sb->data)
        munmap(sb->data, sb->cap);
    fbc_text_forget(sb);
}

void fbc_text_forget(strbuf *sb)
{
    if (sb->fixed && sb->data)
        atomic_fetch_sub(&live_mappings, 1);
    strbuf_free(sb);
}

int fbc_text_mappings(void)
{
    return atomic_load(&live_mappings);
}

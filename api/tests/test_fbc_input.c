/* Catalog files from 128 KiB up are mapped, and big ones given back as the load moves on
 * (fbc_input.c): the result must be the same as loading the same bytes from a buffer, for
 * JSON and YAML, big and mid-sized, including a file whose size is an exact number of
 * pages (nothing may read past it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fbc.h"
#include "fbc_internal.h"
#include "strbuf.h"

/* `blobs` blobs of ~270 bytes: 30000 are about 8 MB, well above the size from which
 * pages are given back early; 1000 about 270 KB, mapped but never given back early. */
static void make_catalog(strbuf *sb, bool yaml, int blobs)
{
    const char *pad = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz";
    for (int i = 0; i < blobs; i++) {
        int rc = yaml ? strbuf_printf(sb, "---\nschema: my.schema\npackage: p\nname: n%d\nv: %d\ntext: \"%s%s%s\"\n",
                                      i, i, pad, pad, pad)
                      : strbuf_printf(sb, "{\"schema\":\"my.schema\",\"package\":\"p\",\"name\":\"n%d\",\"v\":%d,"
                                          "\"text\":\"%s%s%s\"}\n",
                                      i, i, pad, pad, pad);
        assert_int_equal(rc, 0);
    }
    /* Pad with newlines to a whole number of pages. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    while (sb->len % page)
        assert_int_equal(strbuf_putc(sb, '\n'), 0);
}

static void check_mapped_equals_buffer(bool yaml, int blobs)
{
    char dir[] = "/tmp/fbc-input-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/catalog.%s", dir, yaml ? "yaml" : "json");
    strbuf sb = STRBUF_INIT;
    make_catalog(&sb, yaml, blobs);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(sb.data, 1, sb.len, f), sb.len);
    assert_int_equal(fclose(f), 0);

    olm_error err;
    fbc_catalog *from_dir = fbc_load_dir(dir, &err);
    if (!from_dir)
        fail_msg("%s", err.msg);
    fbc_catalog *from_buf = fbc_load_buffer(sb.data, sb.len, "buf", &err);
    assert_non_null(from_buf);
    assert_int_equal(from_dir->nmetas, (size_t)blobs);
    assert_int_equal(from_dir->nmetas, from_buf->nmetas);
    assert_int_equal(from_dir->jsonl_len, from_buf->jsonl_len);
    assert_memory_equal(from_dir->jsonl, from_buf->jsonl, from_buf->jsonl_len);
    for (size_t i = 0; i < from_dir->nmetas; i++)
        assert_int_equal(from_dir->metas[i].lineno, from_buf->metas[i].lineno);
    fbc_catalog_free(from_dir);
    fbc_catalog_free(from_buf);
    strbuf_free(&sb);
    unlink(path);
    rmdir(dir);
}

static void test_big_json_file(void **state)
{
    (void)state;
    check_mapped_equals_buffer(false, 30000);
}

static void test_big_yaml_file(void **state)
{
    (void)state;
    check_mapped_equals_buffer(true, 30000);
}

static void test_mid_sized_files(void **state)
{
    (void)state;
    check_mapped_equals_buffer(false, 1000);
    check_mapped_equals_buffer(true, 1000);
}

/* Errors in a mapped file keep their file:line. */
static void test_big_file_error_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/fbc-input-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/catalog.json", dir);
    strbuf sb = STRBUF_INIT;
    make_catalog(&sb, false, 30000);
    assert_int_equal(strbuf_puts(&sb, "{\"schema\":\"a\",}\n"), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(sb.data, 1, sb.len, f), sb.len);
    assert_int_equal(fclose(f), 0);
    size_t lines = 0;
    for (size_t i = 0; i < sb.len; i++)
        lines += sb.data[i] == '\n';
    olm_error err;
    assert_null(fbc_load_dir(dir, &err));
    char want[512];
    snprintf(want, sizeof want, "%s:%zu: invalid JSON", path, lines);
    if (!strstr(err.msg, want))
        fail_msg("got \"%s\", want \"%s\"", err.msg, want);
    strbuf_free(&sb);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_json_file),
        cmocka_unit_test(test_big_yaml_file),
        cmocka_unit_test(test_mid_sized_files),
        cmocka_unit_test(test_big_file_error_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

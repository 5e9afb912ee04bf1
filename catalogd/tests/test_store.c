/* catalog_store: index contents, atomic swap with an old view kept valid, reopen after a
 * restart, gc, delete, temp-dir hygiene and the /metas selection. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#include "catalog_store.h"
#include "strbuf.h"

static const char SMALL[] =
    "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"foo\",\"name\":\"stable\",\"entries\":[{\"name\":\"foo.v1\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"foo\",\"name\":\"foo.v1\",\"image\":\"x\",\"properties\":[]}\n"
    "{\"schema\":\"olm.package\",\"name\":\"bar\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"bar\",\"name\":\"stable\",\"image\":\"y\",\"properties\":[]}\n";

static const char OTHER[] = "{\"name\":\"baz\",\"schema\":\"olm.package\"}\n"; /* already normalised */

typedef struct fixture {
    char root[256];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/catalogd-store-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_remove_tree(f->root);
    free(f);
    return 0;
}

static fbc_catalog *load(const char *text)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(text, strlen(text), "test", &err);
    if (!c)
        fail_msg("load: %s", err.msg);
    return c;
}

static void write_catalog(const char *root, const char *name, const char *text)
{
    fbc_catalog *c = load(text);
    olm_error err;
    if (store_write(root, name, c, NULL, &err) < 0)
        fail_msg("store_write: %s", err.msg);
    if (store_add_gzip(root, name, &err) < 0)
        fail_msg("store_add_gzip: %s", err.msg);
    fbc_catalog_free(c);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static int exists(const char *root, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    struct stat st;
    return lstat(p, &st) == 0;
}

static void test_index_contents(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "small", SMALL);
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs/small/catalog.jsonl", f->root);
    char *jsonl = slurp(p);
    /* The blobs are normalised (keys sorted), one per line, in load order. */
    fbc_catalog *c = load(SMALL);
    size_t off = 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        assert_memory_equal(jsonl + off, c->metas[i].line, c->metas[i].line_len);
        off += c->metas[i].line_len;
    }
    assert_int_equal(off, strlen(jsonl));

    snprintf(p, sizeof p, "%s/catalogs/small/index.json", f->root);
    char *idx = slurp(p);
    /* Offsets of the five lines. */
    size_t o[6] = {0};
    for (size_t i = 0; i < 5; i++)
        o[i + 1] = o[i] + c->metas[i].line_len;
    char want[1024];
    snprintf(want, sizeof want,
             "{\"by_schema\":{\"olm.bundle\":[[%zu,%zu],[%zu,%zu]],\"olm.channel\":[[%zu,%zu]],"
             "\"olm.package\":[[%zu,%zu],[%zu,%zu]]},"
             "\"by_package\":{\"bar\":[[%zu,%zu]],\"foo\":[[%zu,%zu],[%zu,%zu]]},"
             "\"by_name\":{\"bar\":[[%zu,%zu]],\"foo\":[[%zu,%zu]],\"foo.v1\":[[%zu,%zu]],"
             "\"stable\":[[%zu,%zu],[%zu,%zu]]}}\n",
             o[2], o[3] - o[2], o[4], o[5] - o[4], o[1], o[2] - o[1], o[0], o[1] - o[0], o[3], o[4] - o[3],
             o[4], o[5] - o[4], o[1], o[2] - o[1], o[2], o[3] - o[2], o[3], o[4] - o[3], o[0], o[1] - o[0],
             o[2], o[3] - o[2], o[1], o[2] - o[1], o[4], o[5] - o[4]);
    assert_string_equal(idx, want);
    /* No "" key: the olm.package blobs have no package. */
    assert_null(strstr(idx, "\"\":"));

    olm_error err;
    store_view *v = store_open(f->root, "small", &err);
    assert_non_null(v);
    assert_int_equal(store_view_size(v), strlen(jsonl));
    assert_memory_equal(store_view_data(v), jsonl, strlen(jsonl));
    size_t n;
    const store_range *r = store_view_lookup(v, STORE_BY_NAME, "stable", &n);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].off, o[1]);
    assert_int_equal(r[1].off, o[4]);
    assert_null(store_view_lookup(v, STORE_BY_PACKAGE, "", &n));
    assert_int_equal(n, 0);
    store_view_release(v);
    fbc_catalog_free(c);
    free(jsonl);
    free(idx);
}

/* catalog.jsonl.gz: the gzip of catalog.jsonl, added after the write (store_add_gzip); a view
 * maps it only when it matches (a store without it, or a damaged one, is served plain). */
static void test_gzip_form(void **state)
{
    fixture *f = *state;
    /* big enough to take several deflate rounds */
    strbuf text = STRBUF_INIT;
    for (int i = 0; i < 20000; i++)
        strbuf_printf(&text, "{\"schema\":\"olm.package\",\"name\":\"p%d\"}\n", i);
    write_catalog(f->root, "big", strbuf_str(&text));
    strbuf_free(&text);
    olm_error err;
    store_view *v = store_open(f->root, "big", &err);
    assert_non_null(v);
    size_t gzlen;
    const char *gz = store_view_gzip(v, &gzlen);
    assert_non_null(gz);
    assert_true(gzlen < store_view_size(v) / 4);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    char *out = malloc(store_view_size(v) + 1);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)store_view_size(v) + 1;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, store_view_size(v));
    assert_int_equal(z.avail_in, 0);
    assert_memory_equal(out, store_view_data(v), store_view_size(v));
    inflateEnd(&z);
    free(out);
    store_view_release(v);

    /* An empty catalog has a gzip form too (an empty member). */
    write_catalog(f->root, "empty", "");
    v = store_open(f->root, "empty", &err);
    assert_non_null(v);
    assert_non_null(store_view_gzip(v, &gzlen));
    store_view_release(v);

    /* A store of an older catalogd (no .gz), and a .gz that is not this jsonl's: none. */
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs/big/catalog.jsonl.gz", f->root);
    assert_int_equal(truncate(p, 100), 0);
    v = store_open(f->root, "big", &err);
    assert_non_null(v);
    assert_null(store_view_gzip(v, &gzlen));
    store_view_release(v);
    assert_int_equal(unlink(p), 0);
    v = store_open(f->root, "big", &err);
    assert_non_null(v);
    assert_null(store_view_gzip(v, &gzlen));
    assert_true(store_view_size(v) > 0);
    store_view_release(v);

    /* store_add_gzip writes it back once; a matching one is left alone. */
    assert_int_equal(store_add_gzip(f->root, "big", &err), 1);
    assert_int_equal(store_add_gzip(f->root, "big", &err), 0);
    v = store_open(f->root, "big", &err);
    assert_non_null(v);
    assert_non_null(store_view_gzip(v, &gzlen));
    store_view_release(v);
    /* ... also over a damaged one and a temp file a crash left behind */
    assert_int_equal(truncate(p, 100), 0);
    snprintf(p, sizeof p, "%s/catalogs/big/.catalog.jsonl.gz.tmp", f->root);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs("junk", fp);
    fclose(fp);
    assert_int_equal(store_add_gzip(f->root, "big", &err), 1);
    assert_int_equal(access(p, F_OK), -1);
    v = store_open(f->root, "big", &err);
    assert_non_null(v);
    assert_non_null(store_view_gzip(v, &gzlen));
    store_view_release(v);
    /* no store: an error naming it */
    assert_int_equal(store_add_gzip(f->root, "absent", &err), -1);
    assert_non_null(strstr(err.msg, "absent"));
}

/* The source ref goes into the store with its content, and leaves with it. */
static void test_source_ref(void **state)
{
    fixture *f = *state;
    olm_error err;
    assert_null(store_read_source(f->root, "src"));
    fbc_catalog *c = load("{\"schema\":\"olm.package\",\"name\":\"p\"}\n");
    assert_int_equal(store_write(f->root, "src", c, "reg/x@sha256:0123", &err), 0);
    char *s = store_read_source(f->root, "src");
    assert_non_null(s);
    assert_string_equal(s, "reg/x@sha256:0123");
    free(s);
    /* a write without one (serve-only tools) leaves none behind */
    assert_int_equal(store_write(f->root, "src", c, NULL, &err), 0);
    assert_null(store_read_source(f->root, "src"));
    assert_int_equal(store_write(f->root, "src", c, "reg/x@sha256:4567", &err), 0);
    assert_int_equal(store_delete(f->root, "src", &err), 0);
    assert_null(store_read_source(f->root, "src"));
    assert_null(store_read_source(f->root, "Bad_Name"));
    fbc_catalog_free(c);
}

static bool store_has_file(const char *root, const char *name, const char *file)
{
    char p[600];
    snprintf(p, sizeof p, "%s/catalogs/%s/%s", root, name, file);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* A new store is served before it is durable: it carries the not-durable marker until
 * store_sync has fsynced it, and a later write starts over with a new marker. */
static void test_durability(void **state)
{
    fixture *f = *state;
    olm_error err;
    assert_true(store_is_durable(f->root, "d")); /* nothing stored: nothing torn */
    fbc_catalog *c = load(SMALL);
    assert_int_equal(store_write(f->root, "d", c, "reg/x@sha256:0123", &err), 0);
    assert_true(store_has_file(f->root, "d", STORE_NOT_DURABLE_FILE));
    assert_false(store_is_durable(f->root, "d"));
    store_view *v = store_open(f->root, "d", &err); /* served all the same */
    assert_non_null(v);
    assert_int_equal(store_view_size(v), c->jsonl_len);
    assert_memory_equal(store_view_data(v), c->jsonl, c->jsonl_len);
    store_view_release(v);

    assert_int_equal(store_sync(f->root, "d", &err), 0);
    assert_false(store_has_file(f->root, "d", STORE_NOT_DURABLE_FILE));
    assert_true(store_is_durable(f->root, "d"));
    assert_true(store_has_file(f->root, "d", "catalog.jsonl") && store_has_file(f->root, "d", "index.json") &&
                store_has_file(f->root, "d", STORE_SOURCE_FILE));
    assert_int_equal(store_sync(f->root, "d", &err), 0); /* durable already: nothing to do */

    assert_int_equal(store_write(f->root, "d", c, NULL, &err), 0); /* no source file to sync */
    assert_false(store_is_durable(f->root, "d"));
    assert_int_equal(store_sync(f->root, "d", &err), 0);
    assert_true(store_is_durable(f->root, "d"));

    /* A store that is not there, or a bad name, is an error naming it. */
    assert_int_equal(store_sync(f->root, "gone", &err), -1);
    assert_non_null(strstr(err.msg, "gone"));
    assert_int_equal(store_sync(f->root, "Bad_Name", &err), -1);
    fbc_catalog_free(c);
}

/* One package whose description makes its line `n` bytes long or so. */
static fbc_catalog *load_big(size_t n)
{
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"schema\":\"olm.package\",\"name\":\"big\",\"description\":\"");
    for (size_t i = 0; i < n; i++)
        strbuf_putc(&sb, (char)('a' + i % 26));
    strbuf_puts(&sb, "\"}\n");
    fbc_catalog *c = load(sb.data);
    strbuf_free(&sb);
    return c;
}

static size_t count_temp_dirs(const char *root)
{
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs", root);
    DIR *d = opendir(p);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* A draft serves the new catalog from memory while the old store stays current; its commit
 * puts the same bytes (and mtime) in place; its view, which adopted the catalog, outlives it. */
static void test_draft_serves_from_memory_then_commits(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "c", SMALL);
    fbc_catalog *big = load_big(100000);
    char *want = malloc(big->jsonl_len);
    memcpy(want, big->jsonl, big->jsonl_len);
    size_t want_len = big->jsonl_len;
    olm_error err;
    store_draft *d = store_draft_new(f->root, "c", big, true, "reg/x@sha256:0123", &err);
    assert_non_null(d);
    store_view *mem = store_draft_view(d);
    assert_int_equal(store_view_size(mem), want_len);
    assert_memory_equal(store_view_data(mem), want, want_len);
    size_t n;
    const store_range *r = store_view_lookup(mem, STORE_BY_NAME, "big", &n);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].len, want_len);
    /* Large slices of a memory view are never dropped (DONTNEED on the heap zeroes it). */
    store_view_drop_pages(mem, store_view_data(mem), want_len);
    assert_memory_equal(store_view_data(mem), want, want_len);

    store_view *cur = store_open(f->root, "c", &err); /* not committed: the old store */
    assert_non_null(cur);
    assert_int_equal(store_view_size(cur), strlen(SMALL));
    store_view_release(cur);
    assert_int_equal(count_temp_dirs(f->root), 1);

    assert_int_equal(store_draft_commit(d, &err), 0);
    assert_int_equal(store_draft_commit(d, &err), 0); /* once */
    cur = store_open(f->root, "c", &err);
    assert_non_null(cur);
    assert_int_equal(store_view_size(cur), want_len);
    assert_memory_equal(store_view_data(cur), want, want_len);
    assert_int_equal(store_view_mtime(cur), store_view_mtime(mem));
    store_view_release(cur);
    assert_false(store_is_durable(f->root, "c"));
    char *src = store_read_source(f->root, "c");
    assert_string_equal(src, "reg/x@sha256:0123");
    free(src);
    store_draft_free(d);
    assert_int_equal(count_temp_dirs(f->root), 0);
    assert_memory_equal(store_view_data(mem), want, want_len); /* the adopted catalog lives on */
    store_view_release(mem); /* frees it (LeakSanitizer otherwise) */
    free(want);
}

/* A draft dropped before its commit leaves the old store current and no temp dir. */
static void test_draft_dropped(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "c", SMALL);
    fbc_catalog *c = load(OTHER);
    olm_error err;
    store_draft *d = store_draft_new(f->root, "c", c, false, NULL, &err);
    assert_non_null(d);
    store_draft_free(d);
    fbc_catalog_free(c); /* not adopted: still ours */
    assert_int_equal(count_temp_dirs(f->root), 0);
    store_view *cur = store_open(f->root, "c", &err);
    assert_non_null(cur);
    assert_int_equal(store_view_size(cur), strlen(SMALL));
    store_view_release(cur);
}

/* No room for the jsonl is the draft's error, before anything is served: the old store stays
 * current, and nothing is adopted. */
static void test_draft_reserves_room(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "c", SMALL);
    fbc_catalog *big = load_big(100000);
    struct rlimit old_lim, lim = {.rlim_cur = 4096};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    lim.rlim_max = old_lim.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    olm_error err;
    store_draft *d = store_draft_new(f->root, "c", big, true, NULL, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_lim), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_null(d);
    if (!strstr(err.msg, "catalog.jsonl of the new store of c in ") || !strstr(err.msg, strerror(EFBIG)))
        fail_msg("unexpected error: %s", err.msg);
    fbc_catalog_free(big); /* not adopted on failure */
    assert_int_equal(count_temp_dirs(f->root), 0);
    store_view *cur = store_open(f->root, "c", &err);
    assert_non_null(cur);
    assert_int_equal(store_view_size(cur), strlen(SMALL));
    store_view_release(cur);
}

static void test_select(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "small", SMALL);
    olm_error err;
    store_view *v = store_open(f->root, "small", &err);
    assert_non_null(v);
    const char *d = store_view_data(v);
    store_range *r;
    size_t n;
    uint64_t total;

    /* ?package=foo: channel and bundle (adjacent, merged), not the olm.package blob. */
    assert_int_equal(store_view_select(v, NULL, "foo", NULL, &r, &n, &total), 0);
    assert_int_equal(n, 1);
    assert_true(strncmp(d + r[0].off, "{\"entries\"", 10) == 0);
    assert_int_equal(r[0].len, total);
    assert_non_null(memmem(d + r[0].off, r[0].len, "foo.v1\",\"package", 15));
    free(r);

    /* ?name=stable: the channel (line 2) and bar's bundle (line 5), in file order, not merged. */
    assert_int_equal(store_view_select(v, "", "", "stable", &r, &n, &total), 0);
    assert_int_equal(n, 2);
    assert_true(r[0].off < r[1].off);
    assert_non_null(memmem(d + r[0].off, r[0].len, "olm.channel", 11));
    assert_non_null(memmem(d + r[1].off, r[1].len, "olm.bundle", 10));
    free(r);

    /* schema ∩ name */
    assert_int_equal(store_view_select(v, "olm.bundle", NULL, "stable", &r, &n, &total), 0);
    assert_int_equal(n, 1);
    assert_non_null(memmem(d + r[0].off, r[0].len, "\"package\":\"bar\"", 15));
    free(r);

    /* ?schema=olm.package&name=foo is how the package blob is fetched. */
    assert_int_equal(store_view_select(v, "olm.package", NULL, "foo", &r, &n, &total), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].off, 0);
    free(r);

    /* No match. */
    assert_int_equal(store_view_select(v, "olm.bundle", "nope", NULL, &r, &n, &total), 0);
    assert_int_equal(n, 0);
    assert_null(r);
    assert_int_equal(total, 0);
    store_view_release(v);
}

static void test_swap_keeps_old_view(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "c", SMALL);
    olm_error err;
    store_view *old = store_open(f->root, "c", &err);
    assert_non_null(old);
    char *copy = malloc(store_view_size(old));
    memcpy(copy, store_view_data(old), store_view_size(old));
    size_t oldsize = store_view_size(old);

    write_catalog(f->root, "c", OTHER);
    store_view *cur = store_open(f->root, "c", &err);
    assert_non_null(cur);
    assert_int_equal(store_view_size(cur), strlen(OTHER));
    assert_memory_equal(store_view_data(cur), OTHER, strlen(OTHER));
    /* The old view still reads the old bytes and index, though its files are gone. */
    assert_int_equal(store_view_size(old), oldsize);
    assert_memory_equal(store_view_data(old), copy, oldsize);
    size_t n;
    assert_non_null(store_view_lookup(old, STORE_BY_PACKAGE, "foo", &n));
    assert_null(store_view_lookup(cur, STORE_BY_PACKAGE, "foo", &n));
    /* No temp dir or old dir is left behind. */
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs", f->root);
    DIR *d = opendir(p);
    struct dirent *e;
    int entries = 0;
    while ((e = readdir(d)) != NULL)
        entries += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    closedir(d);
    assert_int_equal(entries, 1);
    store_view_retain(old);
    store_view_release(old);
    store_view_release(old);
    store_view_release(cur);
    free(copy);
}

/* A store write that fails on the disk (here the file size limit, as a full disk would) keeps
 * the old store whole and leaves no temp dir, and says the same thing on every attempt: the
 * message is catalogd's Progressing message, and one naming the random temp dir differed on
 * each retry, so each was a status write whose update event reran the reconcile at once,
 * bypassing the back-off (a full load and write per round while the disk stays full). */
static void test_write_failure_stable_and_harmless(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "c", SMALL);
    fbc_catalog *c = load(OTHER);
    struct rlimit old_lim, lim = {.rlim_cur = 16, .rlim_max = RLIM_INFINITY};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    lim.rlim_max = old_lim.rlim_max;
    signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG instead of killing us */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    olm_error e1, e2;
    int rc1 = store_write(f->root, "c", c, NULL, &e1);
    int rc2 = store_write(f->root, "c", c, NULL, &e2);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_lim), 0);
    signal(SIGXFSZ, SIG_DFL);
    fbc_catalog_free(c);
    assert_int_equal(rc1, -1);
    assert_int_equal(rc2, -1);
    if (!strstr(e1.msg, "of the new store of c in ") || !strstr(e1.msg, strerror(EFBIG)))
        fail_msg("unexpected error: %s", e1.msg);
    assert_string_equal(e1.msg, e2.msg);
    olm_error err;
    store_view *v = store_open(f->root, "c", &err); /* the old store, whole */
    assert_non_null(v);
    assert_int_equal(store_view_size(v), strlen(SMALL));
    store_view_release(v);
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs", f->root);
    DIR *d = opendir(p);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            fail_msg("temp dir left behind: %s", e->d_name);
    closedir(d);
}

static void test_reopen_after_restart(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "persist", SMALL);
    olm_error err;
    store_view *a = store_open(f->root, "persist", &err);
    assert_non_null(a);
    time_t mtime = store_view_mtime(a);
    store_view_release(a);
    /* A new process has only the directory: no FBC, no in-memory state. */
    store_view *b = store_open(f->root, "persist", &err);
    assert_non_null(b);
    assert_int_equal(store_view_mtime(b), mtime);
    size_t n;
    assert_non_null(store_view_lookup(b, STORE_BY_SCHEMA, "olm.bundle", &n));
    assert_int_equal(n, 2);
    store_view_release(b);
}

static void test_open_missing_and_invalid(void **state)
{
    fixture *f = *state;
    olm_error err;
    errno = 0;
    assert_null(store_open(f->root, "absent", &err));
    assert_int_equal(errno, ENOENT);
    assert_null(store_open(f->root, "../etc", &err));
    assert_non_null(strstr(err.msg, "invalid catalog name"));
    fbc_catalog *c = load(SMALL);
    assert_int_equal(store_write(f->root, "Bad_Name", c, NULL, &err), -1);
    assert_non_null(strstr(err.msg, "RFC 1123"));
    fbc_catalog_free(c);
    assert_false(exists(f->root, "catalogs/Bad_Name"));
}

static void test_corrupt_index_rejected(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "c", OTHER);
    char p[512];
    snprintf(p, sizeof p, "%s/catalogs/c/index.json", f->root);
    FILE *fp = fopen(p, "w");
    fputs("{\"by_schema\":{\"x\":[[0,999999]]},\"by_package\":{},\"by_name\":{}}", fp);
    fclose(fp);
    olm_error err;
    assert_null(store_open(f->root, "c", &err));
    assert_non_null(strstr(err.msg, "inside catalog.jsonl"));
}

static void test_empty_catalog(void **state)
{
    fixture *f = *state;
    fbc_catalog *c = load("");
    olm_error err;
    assert_int_equal(store_write(f->root, "empty", c, NULL, &err), 0);
    fbc_catalog_free(c);
    store_view *v = store_open(f->root, "empty", &err);
    assert_non_null(v);
    assert_int_equal(store_view_size(v), 0);
    store_range *r;
    size_t n;
    uint64_t total;
    assert_int_equal(store_view_select(v, NULL, "x", NULL, &r, &n, &total), 0);
    assert_int_equal(n, 0);
    store_view_release(v);
}

static void mk(const char *root, const char *rel, int dir)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (dir)
        assert_int_equal(mkdir(p, 0755), 0);
    else
        close(open(p, O_CREAT | O_WRONLY, 0644));
}

static void test_temp_dirs(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "a", OTHER);
    mk(f->root, "catalogs/.a-abc123", 1);   /* an orphan of "a" */
    mk(f->root, "catalogs/.a-abc123/junk", 0);
    mk(f->root, "catalogs/.a-b-xyz789", 1); /* an in-progress write of "a-b": not ours */
    write_catalog(f->root, "a", SMALL);
    assert_false(exists(f->root, "catalogs/.a-abc123"));
    assert_true(exists(f->root, "catalogs/.a-b-xyz789"));
    olm_error err;
    assert_int_equal(store_delete(f->root, "a", &err), 0);
    assert_false(exists(f->root, "catalogs/a"));
    assert_int_equal(store_delete(f->root, "a", &err), 0); /* already gone: fine */
}

static void test_gc(void **state)
{
    fixture *f = *state;
    write_catalog(f->root, "keep", OTHER);
    write_catalog(f->root, "drop", OTHER);
    mk(f->root, "catalogs/stray-file", 0);
    mk(f->root, "catalogs/.keep-tmp123", 1);
    mk(f->root, "unpack", 1);
    mk(f->root, "unpack/keep", 1);
    mk(f->root, "unpack/gone", 1);
    mk(f->root, "unpack/gone/layer", 0);
    mk(f->root, "unpack/keepfile", 0);
    const char *keep[] = {"keep", "keepfile"}; /* a file named like a catalog still goes */
    olm_error err;
    assert_int_equal(store_gc(f->root, keep, 2, &err), 0);
    assert_true(exists(f->root, "catalogs/keep/catalog.jsonl"));
    assert_false(exists(f->root, "catalogs/drop"));
    assert_false(exists(f->root, "catalogs/stray-file"));
    assert_false(exists(f->root, "catalogs/.keep-tmp123"));
    assert_true(exists(f->root, "unpack/keep"));
    assert_false(exists(f->root, "unpack/gone"));
    assert_false(exists(f->root, "unpack/keepfile"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_index_contents, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gzip_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_ref, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swap_keeps_old_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure_stable_and_harmless, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_after_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_missing_and_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_index_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_catalog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_temp_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_durability, setup, teardown),
        cmocka_unit_test_setup_teardown(test_draft_serves_from_memory_then_commits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_draft_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_draft_reserves_room, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

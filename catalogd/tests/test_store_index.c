/* catalog_store_index: the index built straight from a catalog's metas.
 *   - index.json's text is byte for byte what catalogd wrote when it built the index with
 *     jansson (the reference builder below is that old code), for a real catalog and for keys
 *     that need escaping or sort in byte order;
 *   - the view served from memory (built maps, moved in) answers every lookup and selection
 *     like the view opened from the written store (index.json parsed back), and like the
 *     metas themselves. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog_store.h"
#include "catalog_store_index.h"
#include "strbuf.h"

/* Keys that jansson escapes (quote, backslash, every kind of control character), that it
 * leaves alone ('/', DEL, 2-, 3- and 4-byte UTF-8), that sort differently in byte order
 * than in a locale or case-folded order (upper case, prefixes, UTF-8 after ASCII), empty
 * packages and names (not indexed; one between two metas of package "ab"), a blob without a
 * schema (in no by_schema entry, so not in `all`), and keys repeated across the file, next
 * to each other or not (ranges must stay in offset order). */
static const char TRICKY[] =
    "{\"schema\":\"olm.package\",\"name\":\"a\\\"quote\"}\n"
    "{\"schema\":\"olm.package\",\"name\":\"back\\\\slash\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"p/x\",\"name\":\"ctl\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"caf\\u00e9\",\"name\":\"\\u65e5\\u672c\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"\",\"name\":\"emoji\\ud83d\\ude00\"}\n"
    "{\"schema\":\"olm.package\",\"name\":\"Zed\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"ab\",\"name\":\"dup\"}\n"
    "{\"schema\":\"my.schema/v1\",\"package\":\"abc\",\"name\":\"dup\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p/x\",\"name\":\"a\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"caf\\u00e9\",\"name\":\"dup\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"ab\",\"name\":\"a\\\"quote\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"\",\"name\":\"\"}\n"
    "{\"package\":\"ab\",\"name\":\"no-schema\"}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p/x\",\"name\":\"dup\"}\n";

typedef struct fixture {
    char root[256];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/catalogd-store-index-XXXXXX");
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

static const char *shared_dir(void)
{
    const char *s = getenv("OLMV1_SHARED");
    return s && *s ? s : "../../../shared";
}

static fbc_catalog *load_text(const char *text)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(text, strlen(text), "tricky", &err);
    if (!c)
        fail_msg("load: %s", err.msg);
    return c;
}

/* certified-operators-v4.18 from the shared data, or NULL when it is not there. */
static fbc_catalog *load_certified(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs/certified-operators-v4.18", shared_dir());
    struct stat st;
    if (stat(dir, &st) < 0)
        return NULL;
    olm_error err;
    fbc_catalog *c = fbc_load_dir(dir, &err);
    if (!c)
        fail_msg("load %s: %s", dir, err.msg);
    return c;
}

/* ---- the reference: index.json as catalogd built it with jansson ------------------------ */

static int ref_add(json_t *map, const char *key, size_t off, size_t len)
{
    if (!key || !*key)
        return 0;
    json_t *arr = json_object_get(map, key);
    if (!arr) {
        arr = json_array();
        if (!arr || json_object_set_new(map, key, arr) < 0)
            return -1;
    }
    json_t *pair = json_pack("[II]", (json_int_t)off, (json_int_t)len);
    return pair ? json_array_append_new(arr, pair) : -1;
}

static char *ref_index(const fbc_catalog *cat)
{
    json_t *maps[3] = {json_object(), json_object(), json_object()};
    for (size_t i = 0; i < cat->nmetas; i++) {
        const fbc_meta *m = &cat->metas[i];
        assert_int_equal(ref_add(maps[0], m->schema, m->offset, m->line_len), 0);
        assert_int_equal(ref_add(maps[1], m->package, m->offset, m->line_len), 0);
        assert_int_equal(ref_add(maps[2], m->name, m->offset, m->line_len), 0);
    }
    static const char *const names[3] = {"by_schema", "by_package", "by_name"};
    strbuf sb = STRBUF_INIT;
    for (int k = 0; k < 3; k++) {
        char *s = json_dumps(maps[k], JSON_COMPACT | JSON_SORT_KEYS);
        assert_non_null(s);
        assert_int_equal(strbuf_printf(&sb, "%s\"%s\":%s", k ? "," : "{", names[k], s), 0);
        free(s);
        json_decref(maps[k]);
    }
    assert_int_equal(strbuf_puts(&sb, "}\n"), 0);
    return strbuf_detach(&sb);
}

static char *new_index(const fbc_catalog *cat)
{
    store_index idx;
    assert_int_equal(store_index_build(cat, &idx), 0);
    strbuf sb = STRBUF_INIT;
    assert_int_equal(store_index_write_json(&idx, &sb), 0);
    store_index_free(&idx);
    return strbuf_detach(&sb);
}

/* Byte for byte, with the first difference shown when they differ. */
static void assert_same_text(const char *got, const char *want)
{
    size_t i = 0;
    while (got[i] && got[i] == want[i])
        i++;
    if (got[i] || want[i])
        fail_msg("index.json differs at byte %zu (lengths %zu / %zu):\n got  ...%.80s\n want ...%.80s", i,
                 strlen(got), strlen(want), got + (i > 20 ? i - 20 : 0), want + (i > 20 ? i - 20 : 0));
}

static void check_text(const fbc_catalog *cat)
{
    char *got = new_index(cat), *want = ref_index(cat);
    assert_same_text(got, want);
    free(got);
    free(want);
}

static void test_text_tricky_keys(void **state)
{
    (void)state;
    fbc_catalog *c = load_text(TRICKY);
    check_text(c);
    char *got = new_index(c);
    /* The escapes themselves, spelled out, so a change in jansson cannot hide a change here. */
    assert_non_null(strstr(got, "\"a\\\"quote\":"));
    assert_non_null(strstr(got, "\"back\\\\slash\":"));
    assert_non_null(strstr(got, "\"ctl\\b\\f\\n\\r\\t\\u0001\\u001F\x7f\":"));
    assert_non_null(strstr(got, "\"p/x\":"));
    assert_non_null(strstr(got, "\"caf\xc3\xa9\":"));
    assert_non_null(strstr(got, "\"\xe6\x97\xa5\xe6\x9c\xac\":"));
    assert_non_null(strstr(got, "\"emoji\xf0\x9f\x98\x80\":"));
    assert_null(strstr(got, "\"\":")); /* empty package and name: not indexed */
    free(got);
    fbc_catalog_free(c);
}

static void test_text_empty_catalog(void **state)
{
    (void)state;
    fbc_catalog *c = load_text("");
    char *got = new_index(c);
    assert_string_equal(got, "{\"by_schema\":{},\"by_package\":{},\"by_name\":{}}\n");
    free(got);
    check_text(c);
    fbc_catalog_free(c);
}

static void test_text_certified(void **state)
{
    (void)state;
    fbc_catalog *c = load_certified();
    if (!c)
        skip();
    print_message("certified-operators-v4.18: %zu metas\n", c->nmetas);
    assert_true(c->nmetas > 500);
    check_text(c);
    fbc_catalog_free(c);
}

/* ---- the memory view against the stored one -------------------------------------------- */

static void assert_same_ranges(const store_range *a, size_t na, const store_range *b, size_t nb, const char *what)
{
    if (na != nb)
        fail_msg("%s: %zu ranges vs %zu", what, na, nb);
    for (size_t i = 0; i < na; i++)
        if (a[i].off != b[i].off || a[i].len != b[i].len)
            fail_msg("%s: range %zu is [%llu,%llu] vs [%llu,%llu]", what, i, (unsigned long long)a[i].off,
                     (unsigned long long)a[i].len, (unsigned long long)b[i].off, (unsigned long long)b[i].len);
}

static const char *meta_key(const fbc_meta *m, store_key k)
{
    return k == STORE_BY_SCHEMA ? m->schema : k == STORE_BY_PACKAGE ? m->package : m->name;
}

/* The ranges of the metas whose key `which` is `key`, in file order: what a lookup must give. */
static store_range *expected(const fbc_catalog *cat, store_key which, const char *key, size_t *n)
{
    store_range *r = malloc((cat->nmetas ? cat->nmetas : 1) * sizeof *r);
    assert_non_null(r);
    *n = 0;
    for (size_t i = 0; i < cat->nmetas; i++)
        if (strcmp(meta_key(&cat->metas[i], which), key) == 0)
            r[(*n)++] = (store_range){cat->metas[i].offset, cat->metas[i].line_len};
    return r;
}

static void assert_same_select(const store_view *a, const store_view *b, const char *schema, const char *package,
                               const char *name)
{
    store_range *ra, *rb;
    size_t na, nb;
    uint64_t ta, tb;
    assert_int_equal(store_view_select(a, schema, package, name, &ra, &na, &ta), 0);
    assert_int_equal(store_view_select(b, schema, package, name, &rb, &nb, &tb), 0);
    assert_int_equal(ta, tb);
    assert_same_ranges(ra, na, rb, nb, "select");
    free(ra);
    free(rb);
}

static void check_views(fixture *f, const char *name, fbc_catalog *cat)
{
    olm_error err;
    store_draft *d = store_draft_new(f->root, name, cat, false, NULL, &err);
    if (!d)
        fail_msg("store_draft_new: %s", err.msg);
    store_view *mem = store_draft_view(d);
    if (store_draft_commit(d, &err) < 0)
        fail_msg("store_draft_commit: %s", err.msg);
    store_draft_free(d);
    store_view *disk = store_open(f->root, name, &err);
    if (!disk)
        fail_msg("store_open: %s", err.msg);
    assert_int_equal(store_view_size(mem), store_view_size(disk));

    /* Every key of every map (each meta's keys: those are the maps' keys), looked up in both. */
    size_t checked = 0;
    for (size_t i = 0; i < cat->nmetas; i++) {
        for (store_key k = STORE_BY_SCHEMA; k <= STORE_BY_NAME; k++) {
            const char *key = meta_key(&cat->metas[i], k);
            size_t nm, nd;
            const store_range *rm = store_view_lookup(mem, k, key, &nm);
            const store_range *rd = store_view_lookup(disk, k, key, &nd);
            assert_same_ranges(rm, nm, rd, nd, key);
            if (!*key) {
                assert_int_equal(nm, 0); /* §4.3: not indexed */
                continue;
            }
            size_t ne; /* and against the metas themselves */
            store_range *re = expected(cat, k, key, &ne);
            assert_same_ranges(rm, nm, re, ne, key);
            free(re);
            checked++;
        }
    }
    assert_true(checked > 0);
    size_t n;
    assert_null(store_view_lookup(mem, STORE_BY_NAME, "no-such-key", &n));

    /* `all` (every schema), and selections through each map. */
    assert_same_select(mem, disk, NULL, NULL, NULL);
    uint64_t total = 0;
    for (size_t i = 0; i < cat->nmetas; i++)
        total += *cat->metas[i].schema ? cat->metas[i].line_len : 0;
    store_range *r;
    uint64_t t;
    assert_int_equal(store_view_select(mem, NULL, NULL, NULL, &r, &n, &t), 0);
    assert_int_equal(t, total);
    free(r);
    for (size_t i = 0; i < cat->nmetas; i++) {
        const fbc_meta *m = &cat->metas[i];
        assert_same_select(mem, disk, m->schema, NULL, NULL);
        assert_same_select(mem, disk, NULL, m->package, NULL);
        assert_same_select(mem, disk, NULL, NULL, m->name);
        assert_same_select(mem, disk, m->schema, m->package, m->name);
    }
    store_view_release(mem);
    store_view_release(disk);
}

static void test_views_tricky_keys(void **state)
{
    fbc_catalog *c = load_text(TRICKY);
    check_views(*state, "tricky", c);
    fbc_catalog_free(c);
}

static void test_views_certified(void **state)
{
    fbc_catalog *c = load_certified();
    if (!c)
        skip();
    check_views(*state, "certified", c);
    fbc_catalog_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_tricky_keys),
        cmocka_unit_test(test_text_empty_catalog),
        cmocka_unit_test(test_text_certified),
        cmocka_unit_test_setup_teardown(test_views_tricky_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_views_certified, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

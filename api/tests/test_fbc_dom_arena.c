/* fbc_dom_arena: inside a scope this thread's jansson values come from the arena and their
 * frees do nothing; outside it, and on other threads, jansson allocates as before; a reset
 * keeps one chunk, the end none (LeakSanitizer checks that in the ASan build, and reports a
 * free() of arena memory or a leaked malloc'ed value as errors).  And the loader's decode
 * through the arena (fbc_decode_stream_consumed) gives the very blobs, lines and errors of
 * the plain one.  Scopes nest.  Between keep begin and end a thread's chunks go from one
 * scope to the next instead of back to malloc, and keep end frees them (LeakSanitizer
 * again); the loader keeps none after a load. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fbc_internal.h"
#include "strbuf.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static void test_values_come_from_the_arena_and_frees_do_nothing(void **state)
{
    (void)state;
    json_t *before = json_pack("{s:[i,s]}", "kept", 1, "made before the scope"); /* malloc'ed */
    fbc_dom_arena a;
    fbc_dom_arena_begin(&a);
    assert_int_equal(fbc_dom_arena_chunks(&a), 0);
    json_t *doc = json_object();
    for (int i = 0; i < 5000; i++) { /* a few hundred KiB of values: several chunks */
        char key[32];
        snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(json_object_set_new(doc, key, json_pack("{s:s,s:i}", "v", key, "n", i)), 0);
    }
    assert_true(fbc_dom_arena_chunks(&a) > 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "key-4321"), "n")), 4321);
    json_decref(doc);    /* frees into the arena: nothing */
    json_decref(before); /* made by malloc: really freed (else LeakSanitizer reports it) */
    fbc_dom_arena_reset(&a);
    assert_int_equal(fbc_dom_arena_chunks(&a), 1); /* the newest chunk stays for the next document */
    json_t *again = json_string("reuses the kept chunk");
    assert_string_equal(json_string_value(again), "reuses the kept chunk");
    assert_int_equal(fbc_dom_arena_chunks(&a), 1);
    json_decref(again);
    fbc_dom_arena_end(&a);
    assert_int_equal(fbc_dom_arena_chunks(&a), 0);
    /* After the end: plain malloc again (LeakSanitizer: freed by the decref) */
    json_t *after = json_string("after the scope");
    json_decref(after);
}

static void test_a_value_bigger_than_a_chunk(void **state)
{
    (void)state;
    size_t n = 9 * 1024 * 1024; /* over the 4 MiB chunk cap */
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    fbc_dom_arena a;
    fbc_dom_arena_begin(&a);
    json_t *s = json_stringn(big, n);
    assert_non_null(s);
    assert_int_equal(json_string_length(s), n);
    json_t *small = json_integer(7); /* after it: a normal chunk */
    assert_int_equal(json_integer_value(small), 7);
    json_decref(s);
    json_decref(small);
    fbc_dom_arena_end(&a);
    free(big);
}

static void *other_thread(void *arg)
{
    (void)arg;
    /* No scope on this thread: malloc and free, even while the main thread has one. */
    for (int i = 0; i < 1000; i++)
        json_decref(json_pack("{s:i}", "other", i));
    return json_string("handed back across threads");
}

static void test_other_threads_allocate_as_before(void **state)
{
    (void)state;
    fbc_dom_arena a;
    fbc_dom_arena_begin(&a);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    void *ret = NULL;
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_int_equal(fbc_dom_arena_chunks(&a), 0); /* the other thread used none of it */
    json_decref(ret); /* malloc'ed there: freed here, scope or not */
    fbc_dom_arena_end(&a);
}

static void test_nested_scopes(void **state)
{
    (void)state;
    fbc_dom_arena outer, inner;
    fbc_dom_arena_begin(&outer);
    json_t *o = json_pack("{s:s}", "made", "in the outer scope");
    fbc_dom_arena_begin(&inner);
    json_t *i = json_pack("{s:s}", "made", "in the inner scope");
    assert_true(fbc_dom_arena_chunks(&inner) > 0);
    json_decref(o); /* the outer arena's: nothing to free (free() would be an ASan error) */
    json_decref(i);
    fbc_dom_arena_end(&inner);
    json_t *again = json_string("the outer scope again");
    assert_string_equal(json_string_value(again), "the outer scope again");
    json_decref(again);
    fbc_dom_arena_end(&outer);
}

/* Fills a scope with `n` small objects (a few hundred KiB for thousands) and returns the
 * first value made in it. */
static json_t *fill(json_t **doc, int n)
{
    *doc = json_object();
    for (int i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "key-%d", i);
        assert_int_equal(json_object_set_new(*doc, key, json_pack("{s:s,s:i}", "v", key, "n", i)), 0);
    }
    return *doc;
}

static void test_kept_chunks_go_to_the_next_scope_and_keep_end_frees_them(void **state)
{
    (void)state;
    fbc_dom_arena_keep_begin();
    assert_int_equal(fbc_dom_arena_kept_chunks(), 0);
    fbc_dom_arena a, b;
    fbc_dom_arena_begin(&a);
    json_t *doc;
    json_t *first = fill(&doc, 5000); /* several chunks: 64 KiB, 128 KiB, ... */
    size_t chunks = fbc_dom_arena_chunks(&a);
    assert_true(chunks > 2);
    json_decref(doc);
    fbc_dom_arena_end(&a);
    /* Not freed: the two biggest wait for this thread's next scope. */
    assert_int_equal(fbc_dom_arena_kept_chunks(), 2);
    fbc_dom_arena_begin(&b);
    json_t *again = json_object();
    /* The new scope starts in the biggest kept chunk, not in a fresh 64 KiB one. */
    assert_int_equal(fbc_dom_arena_kept_chunks(), 1);
    assert_int_equal(fbc_dom_arena_chunks(&b), 1);
    assert_ptr_not_equal(again, first); /* first was in the smallest chunk, freed */
    json_t *doc2;
    fill(&doc2, 5000);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc2, "key-4999"), "n")), 4999);
    json_decref(doc2);
    json_decref(again);
    /* A reset gives the older chunk back to the keep, not to malloc. */
    size_t before_reset = fbc_dom_arena_chunks(&b);
    fbc_dom_arena_reset(&b);
    assert_int_equal(fbc_dom_arena_chunks(&b), 1);
    if (before_reset > 1)
        assert_true(fbc_dom_arena_kept_chunks() >= 1);
    fbc_dom_arena_end(&b);
    assert_true(fbc_dom_arena_kept_chunks() >= 1 && fbc_dom_arena_kept_chunks() <= 2);
    fbc_dom_arena_keep_end();
    assert_int_equal(fbc_dom_arena_kept_chunks(), 0); /* freed: LeakSanitizer checks */
    /* With no keep running, an end frees its chunks again. */
    fbc_dom_arena_begin(&a);
    json_decref(json_string("no keep"));
    fbc_dom_arena_end(&a);
    assert_int_equal(fbc_dom_arena_kept_chunks(), 0);
}

static void test_the_same_chunk_serves_scope_after_scope(void **state)
{
    (void)state;
    fbc_dom_arena_keep_begin();
    fbc_dom_arena a;
    void *first = NULL;
    for (int round = 0; round < 3; round++) {
        fbc_dom_arena_begin(&a);
        json_t *v = json_string("one small document");
        if (round == 0)
            first = v;
        else
            assert_ptr_equal(v, first); /* the kept chunk, from its start */
        json_decref(v);
        fbc_dom_arena_end(&a);
        assert_int_equal(fbc_dom_arena_kept_chunks(), 1);
    }
    fbc_dom_arena_keep_end();
    assert_int_equal(fbc_dom_arena_kept_chunks(), 0);
}

static void test_keeps_nest_and_stay_per_thread(void **state)
{
    (void)state;
    fbc_dom_arena a;
    fbc_dom_arena_keep_begin();
    fbc_dom_arena_keep_begin();
    fbc_dom_arena_begin(&a);
    json_decref(json_string("inner keep"));
    fbc_dom_arena_end(&a);
    fbc_dom_arena_keep_end(); /* the outer keep still runs */
    assert_int_equal(fbc_dom_arena_kept_chunks(), 1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    void *ret = NULL;
    assert_int_equal(pthread_join(t, &ret), 0);
    json_decref(ret);
    assert_int_equal(fbc_dom_arena_kept_chunks(), 1); /* the other thread neither took nor added */
    fbc_dom_arena_keep_end();
    assert_int_equal(fbc_dom_arena_kept_chunks(), 0);
    fbc_dom_arena_keep_end(); /* unbalanced: does nothing */
    assert_int_equal(fbc_dom_arena_kept_chunks(), 0);
}

static void test_a_huge_values_chunk_is_not_kept(void **state)
{
    (void)state;
    size_t n = 9 * 1024 * 1024; /* over the 4 MiB chunk cap: a chunk of its own */
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'y', n);
    big[n] = '\0';
    fbc_dom_arena_keep_begin();
    fbc_dom_arena a;
    fbc_dom_arena_begin(&a);
    json_decref(json_stringn(big, n)); /* the json_t in a 64 KiB chunk, the text in its own */
    assert_int_equal(fbc_dom_arena_chunks(&a), 2);
    fbc_dom_arena_end(&a);
    assert_int_equal(fbc_dom_arena_kept_chunks(), 1); /* the 64 KiB one: the 9 MiB one was freed */
    fbc_dom_arena_keep_end();
    free(big);
}

#ifdef TEST_ASAN
/* In the ASan build, arena bytes not handed out, or handed out before the last reset, are
 * poisoned: a value used after its document was reset is reported. */
static void test_reset_poisons_the_documents_values(void **state)
{
    (void)state;
    fbc_dom_arena_keep_begin();
    fbc_dom_arena a;
    fbc_dom_arena_begin(&a);
    json_t *v = json_string("escapes its document");
    const char *text = json_string_value(v);
    assert_int_equal(__asan_address_is_poisoned(text), 0);
    assert_int_equal(__asan_address_is_poisoned((const char *)v + 4096), 1); /* not handed out */
    fbc_dom_arena_reset(&a);
    assert_int_equal(__asan_address_is_poisoned(text), 1);
    fbc_dom_arena_end(&a); /* to the keep: still poisoned */
    assert_int_equal(__asan_address_is_poisoned(text), 1);
    fbc_dom_arena_keep_end();
}
#endif

/* ---- the loader keeps nothing after a load ---- */

static void test_a_load_keeps_no_chunks_after_it(void **state)
{
    (void)state;
    olm_error err;
    for (unsigned threads = 1; threads <= 2; threads++) {
        fbc_catalog *c = fbc_load_dir_parallel("fixtures/valid/basic", threads, &err);
        if (!c)
            fail_msg("%s", err.msg);
        assert_int_equal(fbc_dom_arena_kept_chunks(), 0);
        fbc_catalog_free(c);
    }
}

/* ---- the loader's decode through the arena equals the plain decode ---- */

typedef struct lines {
    strbuf text; /* normalised blobs with their line numbers */
} lines;

static int collect(void *ud, json_t *obj, int lineno, olm_error *err)
{
    lines *l = ud;
    int rc = strbuf_printf(&l->text, "%d:", lineno) < 0 || fbc_encode_json(obj, &l->text, NULL) < 0 ||
             strbuf_putc(&l->text, '\n') < 0;
    json_decref(obj);
    return rc ? olm_error_set(err, "out of memory") : 0;
}

static void same_decode(const char *input)
{
    lines plain = {STRBUF_INIT}, arena = {STRBUF_INIT};
    olm_error e1 = {0}, e2 = {0};
    int r1 = fbc_decode_stream(input, strlen(input), "in.yaml", collect, &plain, &e1);
    int r2 = fbc_decode_stream_consumed(input, strlen(input), "in.yaml", collect, &arena, &e2);
    assert_int_equal(r1, r2);
    assert_string_equal(strbuf_str(&plain.text), strbuf_str(&arena.text));
    if (r1 < 0)
        assert_string_equal(e1.msg, e2.msg);
    strbuf_free(&plain.text);
    strbuf_free(&arena.text);
}

static void test_consumed_decode_equals_plain_decode(void **state)
{
    (void)state;
    /* documents, anchors and aliases (shared values), merge keys, typed scalars */
    same_decode("schema: olm.package\nname: a\nicon: {base64data: abc, mediatype: image/svg+xml}\n"
                "---\n"
                "base: &b {x: 1, y: [true, no, 0x1f, 1e3, ~]}\n"
                "schema: olm.bundle\nname: a.v1\nuse: *b\nmerged: {<<: *b, y: override}\n"
                "---\n# only a comment\n---\n"
                "schema: olm.channel\nname: stable\npackage: a\nentries: [{name: a.v1}]\n");
    /* JSON lines */
    same_decode("{\"schema\":\"olm.package\",\"name\":\"b\"}\n{\"schema\":\"olm.bundle\",\"name\":\"b.v1\","
                "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"b\",\"version\":\"1.0.0\"}}]}\n");
    /* an error after a good document: same blobs before it, same message */
    same_decode("schema: olm.package\nname: c\n---\nschema: [unclosed\n");
    same_decode("schema: olm.package\nname: c\n---\n- a sequence\n");
    same_decode("{\"schema\":\"olm.package\",\"name\":\"d\"}\n{\"schema\": }\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_come_from_the_arena_and_frees_do_nothing),
        cmocka_unit_test(test_a_value_bigger_than_a_chunk),
        cmocka_unit_test(test_other_threads_allocate_as_before),
        cmocka_unit_test(test_nested_scopes),
        cmocka_unit_test(test_consumed_decode_equals_plain_decode),
        cmocka_unit_test(test_kept_chunks_go_to_the_next_scope_and_keep_end_frees_them),
        cmocka_unit_test(test_the_same_chunk_serves_scope_after_scope),
        cmocka_unit_test(test_keeps_nest_and_stay_per_thread),
        cmocka_unit_test(test_a_huge_values_chunk_is_not_kept),
#ifdef TEST_ASAN
        cmocka_unit_test(test_reset_poisons_the_documents_values),
#endif
        cmocka_unit_test(test_a_load_keeps_no_chunks_after_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

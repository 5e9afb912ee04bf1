/* fbc_dom_arena: inside a scope this thread's jansson values come from the arena and their
 * frees do nothing; outside it, and on other threads, jansson allocates as before; a reset
 * keeps one chunk, the end none (LeakSanitizer checks that in the ASan build, and reports a
 * free() of arena memory or a leaked malloc'ed value as errors).  And the loader's decode
 * through the arena (fbc_decode_stream_consumed) gives the very blobs, lines and errors of
 * the plain one.  Scopes nest. */
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

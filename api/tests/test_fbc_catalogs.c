/* The real catalogs in shared/data: exact counts from the stats files in shared/data/stats,
 * zero validation problems, and a render whose every line is a JSON object. */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <jansson.h>

#include "fbc.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *shared(void)
{
    const char *s = getenv("OLMV1_SHARED");
    return s && *s ? s : "../../../shared";
}

static json_t *load_stats(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data/stats/%s", shared(), name);
    json_error_t jerr;
    json_t *st = json_load_file(path, 0, &jerr);
    if (!st)
        fail_msg("%s: %s", path, jerr.text);
    return st;
}

static size_t stat_int(json_t *st, const char *section, const char *key)
{
    json_t *v = json_object_get(json_object_get(st, section), key);
    if (!json_is_integer(v))
        fail_msg("stats has no %s.%s", section, key);
    return (size_t)json_integer_value(v);
}

static size_t count_property(const fbc_catalog *c, const char *type)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nbundles; i++)
        for (size_t k = 0; k < c->bundles[i].nproperties; k++)
            n += strcmp(c->bundles[i].properties[k].type, type) == 0;
    return n;
}

/* Loads, checks counts against the stats file, validates and renders. */
static void check_catalog(const char *rel, const char *stats_name, size_t render_lines)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/%s", shared(), rel);
    json_t *st = load_stats(stats_name);
    olm_error err;
    olm_error_clear(&err);
    double t0 = now();
    fbc_catalog *c = fbc_load_dir(dir, &err);
    if (!c)
        fail_msg("load %s: %s", dir, err.msg);
    double t1 = now();

    assert_int_equal(c->npackages, json_integer_value(json_object_get(st, "packages")));
    assert_int_equal(c->npackages, stat_int(st, "schemas", "olm.package"));
    assert_int_equal(c->nchannels, stat_int(st, "schemas", "olm.channel"));
    assert_int_equal(c->nbundles, stat_int(st, "schemas", "olm.bundle"));
    assert_int_equal(c->ndeprecations, 0);
    assert_int_equal(c->nmetas, render_lines);
    size_t entries = 0, replaces = 0, skips = 0, skip_range = 0, related = 0;
    for (size_t i = 0; i < c->nchannels; i++) {
        entries += c->channels[i].nentries;
        for (size_t k = 0; k < c->channels[i].nentries; k++) {
            const fbc_channel_entry *e = &c->channels[i].entries[k];
            replaces += e->replaces != NULL;
            skips += e->nskips;
            skip_range += e->skip_range != NULL;
        }
    }
    for (size_t i = 0; i < c->nbundles; i++) {
        /* The catalog keeps no DOM: read the line back, and check on the way that each
         * property's value slice is that value's text inside the line. */
        const fbc_bundle *b = &c->bundles[i];
        json_t *obj = json_loadb(b->meta->line, b->meta->line_len, 0, NULL);
        assert_non_null(obj);
        related += json_array_size(json_object_get(obj, "relatedImages"));
        json_t *props = json_object_get(obj, "properties");
        assert_int_equal(json_array_size(props), b->nproperties);
        for (size_t k = 0; k < b->nproperties; k++) {
            const fbc_property *p = &b->properties[k];
            assert_non_null(p->value);
            assert_true(p->value > b->meta->line &&
                        p->value + p->value_len < b->meta->line + b->meta->line_len);
            json_t *v = json_loadb(p->value, p->value_len, JSON_DECODE_ANY, NULL);
            assert_true(json_equal(v, json_object_get(json_array_get(props, k), "value")));
            json_decref(v);
        }
        json_decref(obj);
    }
    assert_int_equal(entries, stat_int(st, "stats", "channel_entries"));
    assert_int_equal(replaces, stat_int(st, "stats", "entries_with_replaces"));
    assert_int_equal(skips, stat_int(st, "stats", "skips_edges"));
    assert_int_equal(skip_range, stat_int(st, "stats", "entries_with_skipRange"));
    assert_int_equal(related, stat_int(st, "stats", "relatedImages"));
    assert_int_equal(count_property(c, "olm.package"),
                     stat_int(st, "property_types_count", "olm.package"));
    assert_int_equal(count_property(c, "olm.gvk"), stat_int(st, "property_types_count", "olm.gvk"));
    assert_int_equal(count_property(c, "olm.csv.metadata"),
                     stat_int(st, "property_types_count", "olm.csv.metadata"));

    /* Every bundle has a version, and lookups find every blob. */
    for (size_t i = 0; i < c->nbundles; i++) {
        const fbc_bundle *b = &c->bundles[i];
        assert_non_null(b->version);
        assert_ptr_equal(fbc_find_bundle(c, b->package, b->name), b);
        assert_non_null(fbc_find_package(c, b->package));
    }
    for (size_t i = 0; i < c->nchannels; i++)
        assert_ptr_equal(fbc_find_channel(c, c->channels[i].package, c->channels[i].name),
                         &c->channels[i]);
    assert_null(fbc_find_bundle(c, "no-such-package", "x"));
    assert_null(fbc_find_deprecation(c, c->packages[0].name));

    fbc_problems probs;
    int n = fbc_validate(c, &probs);
    for (size_t i = 0; i < probs.n && i < 10; i++)
        print_message("problem: %s\n", probs.items[i]);
    assert_int_equal(n, 0);
    fbc_problems_free(&probs);
    double t2 = now();

    size_t bytes = 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        const fbc_meta *m = &c->metas[i];
        /* The lines are back to back in the catalog's jsonl buffer. */
        assert_int_equal(m->offset, bytes);
        assert_ptr_equal(m->line, c->jsonl + m->offset);
        assert_true(m->line_len > 2 && m->line[m->line_len - 1] == '\n');
        assert_null(memchr(m->line, '\n', m->line_len - 1));
        json_error_t jerr;
        json_t *back = json_loadb(m->line, m->line_len, 0, &jerr);
        if (!back)
            fail_msg("line %zu does not parse: %s", i, jerr.text);
        assert_true(json_is_object(back));
        json_decref(back);
        bytes += m->line_len;
    }
    /* json_bytes in the stats is the length of every blob as compact JSON, without
     * the newlines. */
    assert_int_equal(bytes - c->nmetas, stat_int(st, "stats", "json_bytes"));
    assert_int_equal(bytes, c->jsonl_len);
    print_message("%s: load %.3fs, validate %.3fs, %zu bytes rendered\n", rel, t1 - t0, t2 - t1,
                  bytes);
    fbc_catalog_free(c);
    json_decref(st);
}

static void test_sample20(void **state)
{
    (void)state;
    check_catalog("catalogs-small/sample20", "sample20.json", 20 + 101 + 593);
}

static void test_certified_v418(void **state)
{
    (void)state;
    check_catalog("catalogs/certified-operators-v4.18", "catalog-certified-operators-v4.18.json",
                  55 + 183 + 628);
}

/* rabbitmq-cluster-operator has unquoted `createdAt: 2025-06-24T14:07:09`: they must
 * stay strings with their original text (stats: yaml_implicit_timestamps_kept_as_string). */
static void test_timestamps_stay_strings(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs-small/sample20", shared());
    json_t *st = load_stats("sample20.json");
    olm_error err;
    fbc_catalog *c = fbc_load_dir(dir, &err);
    assert_non_null(c);
    regex_t re;
    assert_int_equal(regcomp(&re, "\"createdAt\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\"",
                             REG_EXTENDED | REG_NOSUB), 0);
    size_t n = 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        char *line = strndup(c->metas[i].line, c->metas[i].line_len); /* lines are not NUL-terminated */
        assert_non_null(line);
        n += regexec(&re, line, 0, NULL, 0) == 0;
        free(line);
    }
    regfree(&re);
    assert_int_equal(n, stat_int(st, "stats", "yaml_implicit_timestamps_kept_as_string"));
    const fbc_bundle *b = NULL;
    for (size_t i = 0; i < c->nbundles && !b; i++)
        if (!strcmp(c->bundles[i].package, "rabbitmq-cluster-operator"))
            b = &c->bundles[i];
    assert_non_null(b);
    assert_ptr_equal(fbc_find_package(c, "rabbitmq-cluster-operator")->meta->file,
                     b->meta->file);
    assert_string_equal(b->meta->file, "rabbitmq-cluster-operator/catalog.yaml");
    fbc_catalog_free(c);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample20),
        cmocka_unit_test(test_certified_v418),
        cmocka_unit_test(test_timestamps_stay_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

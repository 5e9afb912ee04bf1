/* fuzz_fbc_load: a catalog buffer through the whole loader (JSON or YAML, sniffed as catalogd
 * does), the typed views and the validator.  Beyond "no crash, no leak" it checks what the
 * rest of the product relies on: every meta's line lies inside jsonl and ends in '\n', every
 * property value lies inside its bundle's line, lookups find what was loaded, and the
 * normalised text is a fixed point (decoding a line and normalising it again gives the same
 * bytes), since catalogd serves that text and operator-controller parses it back.  The load
 * runs as a load's thread does (fbc_dom_arena_keep_begin): chunks a document is done with go
 * to the keep and come back for the next ones, and keep_end must free them all. */
#include "fbc.h"
#include "fbc_internal.h"
#include "fuzz_util.h"

static void check_fixed_point(const fbc_meta *m)
{
    json_error_t jerr;
    json_t *v = json_loadb(m->line, m->line_len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
    FUZZ_CHECK(v != NULL, "normalised line does not parse (%s): %.*s", jerr.text, (int)m->line_len,
               m->line);
    strbuf again = STRBUF_INIT;
    FUZZ_CHECK(fbc_encode_json(v, &again, NULL) == 0, "out of memory");
    FUZZ_CHECK(again.len + 1 == m->line_len && memcmp(again.data, m->line, again.len) == 0,
               "normalising twice changed\n%.*s\ninto\n%.*s", (int)m->line_len, m->line, (int)again.len,
               again.data);
    strbuf_free(&again);
    json_decref(v);
}

static bool inside(const char *p, size_t n, const char *base, size_t base_len)
{
    return p >= base && p + n <= base + base_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    olm_error err;
    fbc_dom_arena_keep_begin();
    fbc_catalog *c = fbc_load_buffer((const char *)data, size, "fuzz.yaml", &err);
    fbc_dom_arena_keep_end();
    FUZZ_CHECK(fbc_dom_arena_kept_chunks() == 0, "keep_end left chunks kept");
    if (!c)
        return 0;
    for (size_t i = 0; i < c->nmetas; i++) {
        const fbc_meta *m = &c->metas[i];
        FUZZ_CHECK(m->line_len > 0 && inside(m->line, m->line_len, c->jsonl, c->jsonl_len) &&
                       m->line[m->line_len - 1] == '\n',
                   "meta %zu's line is not a line of jsonl", i);
        check_fixed_point(m);
    }
    for (size_t i = 0; i < c->npackages; i++)
        FUZZ_CHECK(fbc_find_package(c, c->packages[i].name) != NULL, "package %s not found",
                   c->packages[i].name);
    for (size_t i = 0; i < c->nbundles; i++) {
        const fbc_bundle *b = &c->bundles[i];
        FUZZ_CHECK(fbc_find_bundle(c, b->package, b->name) != NULL, "bundle %s not found", b->name);
        for (size_t j = 0; j < b->nproperties; j++)
            FUZZ_CHECK(!b->properties[j].value ||
                           inside(b->properties[j].value, b->properties[j].value_len, b->meta->line,
                                  b->meta->line_len),
                       "property %zu of %s is not inside its line", j, b->name);
    }
    for (size_t i = 0; i < c->nchannels; i++)
        FUZZ_CHECK(fbc_find_channel(c, c->channels[i].package, c->channels[i].name) != NULL,
                   "channel %s not found", c->channels[i].name);
    fbc_problems probs = {0};
    FUZZ_CHECK(fbc_validate(c, &probs) >= 0, "validator out of memory");
    fbc_problems_free(&probs);
    fbc_catalog_free(c);
    return 0;
}

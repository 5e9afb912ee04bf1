/* upgrade_graph: edges, heads and deprecations from FBC; the SVG's simplifications; what
 * the DOT, Mermaid and SVG writers put on the page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strbuf.h"
#include "upgrade_graph.h"

/* stable: 1.0.0 <- 1.1.0 <- 1.2.0 (replaces; 1.2.0 also skipRange >=1.0.0 <1.2.0) and
 * 2.0.0 skips 1.2.0; fast: 1.2.0 <- 2.0.0 <- 2.1.0 (replaces).  1.0.0 and fast deprecated. */
static const char *const SAMPLE =
    "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"stable\"}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"stable\",\"entries\":["
    "{\"name\":\"p.v1.0.0\"},{\"name\":\"p.v1.1.0\",\"replaces\":\"p.v1.0.0\"},"
    "{\"name\":\"p.v1.2.0\",\"replaces\":\"p.v1.1.0\",\"skipRange\":\">=1.0.0 <1.2.0\"},"
    "{\"name\":\"p.v2.0.0\",\"skips\":[\"p.v1.2.0\"]}]}\n"
    "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"fast\",\"entries\":["
    "{\"name\":\"p.v1.2.0\"},{\"name\":\"p.v2.0.0\",\"replaces\":\"p.v1.2.0\"},"
    "{\"name\":\"p.v2.1.0\",\"replaces\":\"p.v2.0.0\"}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1.0.0\",\"image\":\"r/p:1.0.0\",\"properties\":["
    "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1.1.0\",\"image\":\"r/p:1.1.0\",\"properties\":["
    "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.1.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1.2.0\",\"image\":\"r/p:1.2.0\",\"properties\":["
    "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.2.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v2.0.0\",\"image\":\"r/p:2.0.0\",\"properties\":["
    "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"2.0.0\"}}]}\n"
    "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v2.1.0\",\"image\":\"r/p:2.1.0\",\"properties\":["
    "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"2.1.0\"}}]}\n"
    "{\"schema\":\"olm.deprecations\",\"package\":\"p\",\"entries\":["
    "{\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"p.v1.0.0\"},\"message\":\"use 1.1\"},"
    "{\"reference\":{\"schema\":\"olm.channel\",\"name\":\"fast\"},\"message\":\"fast goes away\"}]}\n";

static fbc_catalog *load(const char *text)
{
    olm_error err;
    fbc_catalog *c = fbc_load_buffer(text, strlen(text), "test", &err);
    if (!c)
        fail_msg("%s", err.msg);
    return c;
}

static const ug_edge *edge(const upgrade_graph *g, const char *from, const char *to)
{
    size_t f = upgrade_graph_find(g, NULL, from), t = upgrade_graph_find(g, NULL, to);
    for (size_t i = 0; i < g->nedges; i++)
        if (g->edges[i].from == f && g->edges[i].to == t)
            return &g->edges[i];
    return NULL;
}

static void build(const fbc_catalog *c, const char *const *channels, size_t n, upgrade_graph *g)
{
    olm_error err;
    upgrade_graph_init(g);
    assert_true(upgrade_graph_add_catalog(g, c, "cat", "p", channels, n, &err) >= 0);
}

static void test_edges_heads_deprecations(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g;
    build(c, NULL, 0, &g);
    assert_int_equal(g.nnodes, 5);
    assert_string_equal(g.nodes[0].version, "2.1.0"); /* newest first */
    assert_string_equal(g.nodes[4].version, "1.0.0");
    assert_int_equal(g.nedges, 5);
    const ug_edge *e = edge(&g, "p.v1.0.0", "p.v1.1.0");
    assert_non_null(e);
    assert_int_equal(e->kinds, UG_EDGE_REPLACES);
    assert_string_equal(e->channels, "stable");
    e = edge(&g, "p.v1.1.0", "p.v1.2.0");
    assert_int_equal(e->kinds, UG_EDGE_REPLACES | UG_EDGE_SKIP_RANGE);
    e = edge(&g, "p.v1.0.0", "p.v1.2.0");
    assert_int_equal(e->kinds, UG_EDGE_SKIP_RANGE);
    e = edge(&g, "p.v1.2.0", "p.v2.0.0");
    assert_int_equal(e->kinds, UG_EDGE_REPLACES | UG_EDGE_SKIPS);
    assert_string_equal(e->channels, "stable,fast");
    assert_non_null(edge(&g, "p.v2.0.0", "p.v2.1.0"));
    assert_null(edge(&g, "p.v2.1.0", "p.v2.0.0")); /* upgrades only point up */

    assert_int_equal(g.nchannels, 2);
    assert_string_equal(g.channels[0].name, "stable");
    assert_true(g.channels[0].is_default);
    assert_null(g.channels[0].deprecation);
    assert_int_equal(g.channels[0].head, upgrade_graph_find(&g, NULL, "p.v2.0.0"));
    assert_string_equal(g.channels[1].deprecation, "fast goes away");
    assert_int_equal(g.channels[1].head, upgrade_graph_find(&g, NULL, "p.v2.1.0"));
    assert_string_equal(g.nodes[4].deprecation, "use 1.1");
    assert_null(g.nodes[3].deprecation);
    assert_string_equal(g.nodes[2].skip_range, ">=1.0.0 <1.2.0");
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

static void test_channel_filter(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g;
    const char *fast[] = {"fast"};
    build(c, fast, 1, &g);
    assert_int_equal(g.nnodes, 3);
    assert_int_equal(g.nedges, 2);
    assert_int_equal(g.nchannels, 1);
    assert_int_equal(upgrade_graph_find(&g, NULL, "p.v1.0.0"), SIZE_MAX);
    assert_string_equal(edge(&g, "p.v1.2.0", "p.v2.0.0")->channels, "fast");
    assert_int_equal(edge(&g, "p.v1.2.0", "p.v2.0.0")->kinds, UG_EDGE_REPLACES); /* stable's skips left out */
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

static void test_reachable(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g;
    build(c, NULL, 0, &g);
    const char *fast[] = {"fast"};
    upgrade_graph_mark_reachable(&g, upgrade_graph_find(&g, NULL, "p.v1.1.0"), fast, 1);
    assert_false(g.nodes[upgrade_graph_find(&g, NULL, "p.v1.2.0")].marks & UG_MARK_REACHABLE); /* a stable edge */
    upgrade_graph_mark_reachable(&g, upgrade_graph_find(&g, NULL, "p.v1.1.0"), NULL, 0);
    assert_false(g.nodes[upgrade_graph_find(&g, NULL, "p.v1.0.0")].marks & UG_MARK_REACHABLE);
    assert_false(g.nodes[upgrade_graph_find(&g, NULL, "p.v1.1.0")].marks & UG_MARK_REACHABLE);
    assert_true(g.nodes[upgrade_graph_find(&g, NULL, "p.v1.2.0")].marks & UG_MARK_REACHABLE);
    assert_true(g.nodes[upgrade_graph_find(&g, NULL, "p.v2.1.0")].marks & UG_MARK_REACHABLE);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

static void test_simplify_folds_implied_skiprange(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g, s;
    olm_error err;
    build(c, NULL, 0, &g);
    assert_int_equal(upgrade_graph_simplify(&g, 0, &s, &err), 0);
    assert_int_equal(s.folded_edges, 1); /* 1.0.0 -> 1.2.0: implied by 1.0.0 -> 1.1.0 -> 1.2.0 */
    assert_int_equal(s.nedges, 4);
    assert_null(edge(&s, "p.v1.0.0", "p.v1.2.0"));
    assert_int_equal(s.nnodes, 5);
    upgrade_graph_free(&s);
    /* Out of the installed bundle every edge stays: they are the upgrades asked about. */
    upgrade_graph_mark(&g, upgrade_graph_find(&g, NULL, "p.v1.0.0"), UG_MARK_INSTALLED, NULL);
    assert_int_equal(upgrade_graph_simplify(&g, 0, &s, &err), 0);
    assert_int_equal(s.folded_edges, 0);
    assert_non_null(edge(&s, "p.v1.0.0", "p.v1.2.0"));
    upgrade_graph_free(&s);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

/* A channel of n bundles, each replacing the one before. */
static char *chain(size_t n)
{
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"s\"}\n"
                     "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"s\",\"entries\":[");
    for (size_t i = 0; i < n; i++) {
        strbuf_printf(&sb, "%s{\"name\":\"p.v1.0.%zu\"", i ? "," : "", i);
        if (i)
            strbuf_printf(&sb, ",\"replaces\":\"p.v1.0.%zu\"", i - 1);
        strbuf_putc(&sb, '}');
    }
    strbuf_puts(&sb, "]}\n");
    for (size_t i = 0; i < n; i++)
        strbuf_printf(&sb,
                      "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1.0.%zu\",\"properties\":[{\"type\":"
                      "\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.%zu\"}}]}\n",
                      i, i);
    return strbuf_detach(&sb);
}

static void test_simplify_collapses_runs(void **state)
{
    char *text = chain(20);
    fbc_catalog *c = load(text);
    upgrade_graph g, s;
    olm_error err;
    build(c, NULL, 0, &g);
    assert_int_equal(g.nnodes, 20);
    assert_int_equal(upgrade_graph_simplify(&g, 4, &s, &err), 0);
    /* 1.0.0 (no edge in) and the head 1.0.19 stay; 1.0.1 ... 1.0.18 become one node. */
    assert_int_equal(s.nnodes, 3);
    assert_int_equal(s.nedges, 2);
    size_t run = SIZE_MAX;
    for (size_t i = 0; i < s.nnodes; i++)
        if (s.nodes[i].run_len)
            run = i;
    assert_int_not_equal(run, SIZE_MAX);
    assert_int_equal(s.nodes[run].run_len, 18);
    assert_string_equal(s.nodes[run].version, "1.0.1");
    assert_string_equal(s.nodes[run].run_last, "1.0.18");
    assert_int_equal(s.channels[0].head, upgrade_graph_find(&s, NULL, "p.v1.0.19"));
    upgrade_graph_free(&s);

    /* A marked bundle splits the run and stays visible. */
    upgrade_graph_mark(&g, upgrade_graph_find(&g, NULL, "p.v1.0.10"), UG_MARK_INSTALLED, NULL);
    assert_int_equal(upgrade_graph_simplify(&g, 4, &s, &err), 0);
    assert_int_equal(s.nnodes, 5);
    assert_int_not_equal(upgrade_graph_find(&s, NULL, "p.v1.0.10"), SIZE_MAX);
    upgrade_graph_free(&s);
    /* Short runs stay whole. */
    assert_int_equal(upgrade_graph_simplify(&g, 30, &s, &err), 0);
    assert_int_equal(s.nnodes, 20);
    assert_int_equal(s.nedges, 19);
    upgrade_graph_free(&s);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
    free(text);
}

/* One head that skips every older bundle (scaleops-operator's shape). */
static void test_simplify_collapses_fans(void **state)
{
    strbuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":\"s\"}\n"
                     "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"s\",\"entries\":[");
    for (size_t i = 0; i < 12; i++)
        strbuf_printf(&sb, "{\"name\":\"p.v1.0.%zu\"},", i);
    strbuf_puts(&sb, "{\"name\":\"p.v2.0.0\",\"skips\":[");
    for (size_t i = 0; i < 12; i++)
        strbuf_printf(&sb, "%s\"p.v1.0.%zu\"", i ? "," : "", i);
    strbuf_puts(&sb, "]}]}\n");
    for (size_t i = 0; i < 12; i++)
        strbuf_printf(&sb,
                      "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1.0.%zu\",\"properties\":[{\"type\":"
                      "\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.%zu\"}}]}\n",
                      i, i);
    char *text = strbuf_detach(&sb);
    fbc_catalog *c = load(text);
    upgrade_graph g, s;
    olm_error err;
    build(c, NULL, 0, &g);
    assert_int_equal(g.nedges, 12);
    assert_int_equal(upgrade_graph_simplify(&g, 5, &s, &err), 0);
    assert_int_equal(s.nnodes, 2); /* the head, and one node for the 12 it skips */
    assert_int_equal(s.nedges, 1);
    size_t fan = s.nodes[0].run_len ? 0 : 1;
    assert_int_equal(s.nodes[fan].run_len, 12);
    assert_string_equal(s.nodes[fan].version, "1.0.0");
    assert_string_equal(s.nodes[fan].run_last, "1.0.11");
    assert_int_equal(s.edges[0].kinds, UG_EDGE_SKIPS);
    upgrade_graph_free(&s);
    /* An installed leaf stays out of the fan. */
    upgrade_graph_mark(&g, upgrade_graph_find(&g, NULL, "p.v1.0.3"), UG_MARK_INSTALLED, NULL);
    assert_int_equal(upgrade_graph_simplify(&g, 5, &s, &err), 0);
    assert_int_equal(s.nnodes, 3);
    assert_int_equal(s.nedges, 2);
    upgrade_graph_free(&s);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
    free(text);
}

typedef int (*writer_fn)(const upgrade_graph *, FILE *, olm_error *);

static char *write_to_string(const upgrade_graph *g, writer_fn w)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    olm_error err;
    int rc = w(g, mem, &err);
    fclose(mem);
    if (rc != 0)
        fail_msg("%s", err.msg);
    return text;
}

static void test_dot_carries_every_edge(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g;
    build(c, NULL, 0, &g);
    upgrade_graph_mark(&g, upgrade_graph_find(&g, NULL, "p.v1.1.0"), UG_MARK_INSTALLED, NULL);
    upgrade_graph_mark(&g, upgrade_graph_find(&g, NULL, "p.v2.1.0"), UG_MARK_OUT, "not in range <2.1.0");
    char *dot = write_to_string(&g, upgrade_graph_write_dot);
    size_t b100 = upgrade_graph_find(&g, NULL, "p.v1.0.0"), b120 = upgrade_graph_find(&g, NULL, "p.v1.2.0");
    char want[128];
    snprintf(want, sizeof want, "b%zu -> b%zu [style=dotted", b100, b120);
    assert_non_null(strstr(dot, want)); /* the implied skipRange edge is in the DOT */
    assert_non_null(strstr(dot, "kinds=\"replaces,skips\", channels=\"stable,fast\"];")); /* solid: no label */
    assert_non_null(strstr(dot, "kinds=\"skipRange\", channels=\"stable\", label=\"skipRange\""));
    assert_non_null(strstr(dot, "skipRange &gt;=1.0.0 &lt;1.2.0"));
    assert_non_null(strstr(dot, "<FONT COLOR=\"#b91c1c\">use 1.1</FONT>"));
    assert_non_null(strstr(dot, "<I>out: not in range &lt;2.1.0</I>"));
    assert_non_null(strstr(dot, "peripheries=2")); /* the installed bundle */
    assert_non_null(strstr(dot, "channel <B>stable</B> (default)"));
    assert_non_null(strstr(dot, "deprecated: fast goes away"));
    free(dot);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

static void test_mermaid(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g;
    build(c, NULL, 0, &g);
    char *m = write_to_string(&g, upgrade_graph_write_mermaid);
    size_t b100 = upgrade_graph_find(&g, NULL, "p.v1.0.0"), b110 = upgrade_graph_find(&g, NULL, "p.v1.1.0"),
           b120 = upgrade_graph_find(&g, NULL, "p.v1.2.0"), b200 = upgrade_graph_find(&g, NULL, "p.v2.0.0");
    char want[128];
    assert_true(strncmp(m, "flowchart BT\n", 13) == 0);
    snprintf(want, sizeof want, "  b%zu --> b%zu\n", b100, b110);
    assert_non_null(strstr(m, want));
    snprintf(want, sizeof want, "  b%zu -.->|skipRange| b%zu\n", b100, b120);
    assert_non_null(strstr(m, want));
    snprintf(want, sizeof want, "  b%zu -->|replaces, skips| b%zu\n", b120, b200);
    assert_non_null(strstr(m, want));
    assert_non_null(strstr(m, "skipRange #62;=1.0.0 #60;1.2.0")); /* no raw < or > in a label */
    snprintf(want, sizeof want, "  class b%zu deprecated\n", b100);
    assert_non_null(strstr(m, want));
    free(m);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

static void test_svg_is_laid_out(void **state)
{
    fbc_catalog *c = load(SAMPLE);
    upgrade_graph g;
    build(c, NULL, 0, &g);
    char *svg = write_to_string(&g, upgrade_graph_write_svg);
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, ">2.1.0</text>"));
    assert_non_null(strstr(svg, ">p.v1.0.0</text>"));
    assert_non_null(strstr(svg, "stroke-dasharray")); /* skips / skipRange edges are drawn apart */
    free(svg);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

/* A cycle (an invalid catalog) and names full of markup still make valid pictures. */
static void test_hostile_names_and_cycles(void **state)
{
    const char *text =
        "{\"schema\":\"olm.package\",\"name\":\"p\"}\n"
        "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"s\\\"<x>&\",\"entries\":["
        "{\"name\":\"a\\\"<b>\",\"replaces\":\"c#1\",\"skipRange\":\"<9.0.0\"},{\"name\":\"c#1\",\"replaces\":\"a\\\"<b>\"}]}\n";
    fbc_catalog *c = load(text);
    upgrade_graph g, s;
    olm_error err;
    build(c, NULL, 0, &g);
    assert_int_equal(g.nnodes, 2);
    assert_int_equal(g.nedges, 2);
    assert_null(g.nodes[0].version);
    assert_int_equal(upgrade_graph_simplify(&g, 1, &s, &err), 0);
    assert_int_equal(s.nedges, 2); /* nothing folded in a cycle */
    char *svg = write_to_string(&s, upgrade_graph_write_svg);
    assert_non_null(strstr(svg, "a&quot;&lt;b&gt;"));
    char *m = write_to_string(&g, upgrade_graph_write_mermaid);
    assert_null(strstr(m, "<b>\"")); /* the name's markup is text, not markup */
    assert_non_null(strstr(m, "a#34;#60;b#62;"));
    assert_non_null(strstr(m, "c#35;1"));
    free(m);
    free(svg);
    upgrade_graph_free(&s);
    upgrade_graph_free(&g);
    fbc_catalog_free(c);
}

/* The package from two catalogs: one box each, nodes kept apart by catalog. */
static void test_two_catalogs(void **state)
{
    fbc_catalog *a = load(SAMPLE), *b = load(SAMPLE);
    upgrade_graph g;
    olm_error err;
    upgrade_graph_init(&g);
    assert_int_equal(upgrade_graph_add_catalog(&g, a, "first", "p", NULL, 0, &err), 5);
    assert_int_equal(upgrade_graph_add_catalog(&g, b, "second", "p", NULL, 0, &err), 5);
    assert_int_equal(g.ncatalogs, 2);
    assert_int_equal(g.nedges, 10); /* no edge crosses catalogs */
    assert_int_not_equal(upgrade_graph_find(&g, "second", "p.v1.0.0"), upgrade_graph_find(&g, "first", "p.v1.0.0"));
    char *dot = write_to_string(&g, upgrade_graph_write_dot);
    assert_non_null(strstr(dot, "subgraph cluster_0 {\n  label=<catalog <B>first</B>>;"));
    assert_non_null(strstr(dot, "subgraph cluster_1 {\n  label=<catalog <B>second</B>>;"));
    char *m = write_to_string(&g, upgrade_graph_write_mermaid);
    assert_non_null(strstr(m, "  subgraph k1[\"catalog second\"]\n"));
    assert_non_null(strstr(m, "  end\n"));
    free(m);
    free(dot);
    upgrade_graph_free(&g);
    fbc_catalog_free(b);
    fbc_catalog_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges_heads_deprecations),
        cmocka_unit_test(test_channel_filter),
        cmocka_unit_test(test_reachable),
        cmocka_unit_test(test_simplify_folds_implied_skiprange),
        cmocka_unit_test(test_simplify_collapses_runs),
        cmocka_unit_test(test_simplify_collapses_fans),
        cmocka_unit_test(test_dot_carries_every_edge),
        cmocka_unit_test(test_mermaid),
        cmocka_unit_test(test_svg_is_laid_out),
        cmocka_unit_test(test_hostile_names_and_cycles),
        cmocka_unit_test(test_two_catalogs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

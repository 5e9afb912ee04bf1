#include "olm_array.h"
#include "catalog_metrics.h"

#include "olm_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* internal/catalogd/metrics/metrics.go */
static const double http_buckets[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
                                      1.2, 1.6, 2, 2.4, 2.8, 3.2, 3.6, 4, 10};
/* Ours: an unpack of a real catalog takes from under a second to minutes. */
static const double unpack_buckets[] = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
#define NHTTP (sizeof http_buckets / sizeof http_buckets[0])
#define NUNPACK (sizeof unpack_buckets / sizeof unpack_buckets[0])

typedef struct series {
    char label[256]; /* the label value: status code or catalog name */
    olm_histogram h;
    unsigned long long failures;
    bool has_problems; /* unpack: model_problems was set */
    unsigned model_problems;
} series;

typedef struct family {
    series *s;
    size_t n, cap;
    const double *bounds;
    size_t nbounds;
} family;

struct catalog_metrics {
    family http;   /* label code */
    family unpack; /* label catalog */
};

catalog_metrics *catalog_metrics_new(void)
{
    catalog_metrics *m = calloc(1, sizeof(catalog_metrics));
    if (m) {
        m->http = (family){.bounds = http_buckets, .nbounds = NHTTP};
        m->unpack = (family){.bounds = unpack_buckets, .nbounds = NUNPACK};
    }
    return m;
}

void catalog_metrics_free(catalog_metrics *m)
{
    if (!m)
        return;
    free(m->http.s);
    free(m->unpack.s);
    free(m);
}

static series *get_series(family *f, const char *label)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->s[i].label, label) == 0)
            return &f->s[i];
    if (OLM_ARRAY_RESERVE(f->s, f->cap, f->n + 1) < 0)
        return NULL;
    series *s = &f->s[f->n++];
    memset(s, 0, sizeof *s);
    strncpy(s->label, label, sizeof s->label - 1);
    olm_histogram_init(&s->h, f->bounds, f->nbounds);
    return s;
}

int catalog_metrics_observe_http(catalog_metrics *m, int code, double seconds)
{
    char label[16];
    snprintf(label, sizeof label, "%d", code);
    series *s = get_series(&m->http, label);
    if (!s)
        return -1;
    olm_histogram_observe(&s->h, seconds);
    return 0;
}

int catalog_metrics_observe_unpack(catalog_metrics *m, const char *catalog, double seconds, bool ok)
{
    series *s = get_series(&m->unpack, catalog);
    if (!s)
        return -1;
    if (ok)
        olm_histogram_observe(&s->h, seconds);
    else
        s->failures++;
    return 0;
}

int catalog_metrics_set_model_problems(catalog_metrics *m, const char *catalog, unsigned problems)
{
    series *s = get_series(&m->unpack, catalog);
    if (!s)
        return -1;
    s->has_problems = true;
    s->model_problems = problems;
    return 0;
}

static int render_histogram(strbuf *out, const char *name, const char *help, const char *label,
                            const family *f, bool only_observed)
{
    int rc = olm_metrics_header(out, name, help, "histogram");
    for (size_t i = 0; i < f->n && rc == 0; i++)
        if (!only_observed || f->s[i].h.count > 0)
            rc = olm_histogram_render(out, name, label, f->s[i].label, &f->s[i].h);
    return rc;
}

int catalog_metrics_render(const catalog_metrics *m, size_t catalogs_served, strbuf *out)
{
    int rc = render_histogram(out, "catalogd_http_request_duration_seconds",
                              "Distribution of HTTP request durations in seconds, by status code.", "code",
                              &m->http, false);
    rc |= strbuf_printf(out,
                        "# HELP catalogd_catalogs_served Number of catalogs currently served.\n"
                        "# TYPE catalogd_catalogs_served gauge\ncatalogd_catalogs_served %zu\n",
                        catalogs_served);
    bool any_ok = false, any_fail = false, any_problems = false;
    for (size_t i = 0; i < m->unpack.n; i++) {
        any_ok |= m->unpack.s[i].h.count > 0;
        any_fail |= m->unpack.s[i].failures > 0;
        any_problems |= m->unpack.s[i].has_problems;
    }
    if (any_problems) {
        rc |= olm_metrics_header(out, "catalogd_catalog_model_problems",
                                 "opm invariants (defaultChannel, channel heads, replaces, ...) the last stored "
                                 "content breaks; served anyway.",
                                 "gauge");
        for (size_t i = 0; i < m->unpack.n; i++) {
            if (!m->unpack.s[i].has_problems)
                continue;
            rc |= strbuf_puts(out, "catalogd_catalog_model_problems{catalog=\"");
            rc |= olm_metrics_label_value(out, m->unpack.s[i].label);
            rc |= strbuf_printf(out, "\"} %u\n", m->unpack.s[i].model_problems);
        }
    }
    if (any_ok)
        rc |= render_histogram(out, "catalogd_unpack_duration_seconds",
                               "Duration of successful catalog unpack and store runs in seconds.", "catalog",
                               &m->unpack, true);
    if (any_fail) {
        rc |= strbuf_puts(out, "# HELP catalogd_unpack_failures_total Failed catalog unpack and store runs.\n"
                               "# TYPE catalogd_unpack_failures_total counter\n");
        for (size_t i = 0; i < m->unpack.n; i++) {
            if (!m->unpack.s[i].failures)
                continue;
            rc |= strbuf_puts(out, "catalogd_unpack_failures_total{catalog=\"");
            rc |= olm_metrics_label_value(out, m->unpack.s[i].label);
            rc |= strbuf_printf(out, "\"} %llu\n", m->unpack.s[i].failures);
        }
    }
    return rc ? -1 : 0;
}

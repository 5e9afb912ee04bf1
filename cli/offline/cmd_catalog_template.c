/* olmv1 catalog template basic|semver FILE: opm's catalog templates rendered into a
 * File-Based Catalog.  Every `- image: REF` bundle entry is pulled and turned into its
 * olm.bundle blob (bundle_blob.h); the semver template also generates the package,
 * its channels and their upgrade edges from the bundles' versions. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_blob.h"
#include "cli_output.h"
#include "cluster.h"
#include "commands.h"
#include "fbc.h"
#include "fbc_stream.h"
#include "olm_array.h"
#include "resolve.h"
#include "strbuf.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_PULL = 5, EXIT_INVALID = 8 };

static void template_usage(FILE *out)
{
    fprintf(out,
            "Usage: olmv1 catalog template basic|semver FILE [-o jsonl|json|yaml]\n"
            "\n"
            "Renders one of opm's catalog templates (FILE: YAML or JSON; - for stdin) into a\n"
            "File-Based Catalog on stdout, then validates it like `olmv1 catalog validate`.\n"
            "\n"
            "basic   schema: olm.template.basic, entries: [FBC blobs].  Every olm.bundle entry\n"
            "        that gives only an image is replaced by the bundle's olm.bundle blob (pulled\n"
            "        from here: $REGISTRY_AUTH_FILE, loopback registries over http); the other\n"
            "        blobs are kept as they are.\n"
            "semver  schema: olm.semver, generateMajorChannels (default true when neither is set),\n"
            "        generateMinorChannels, defaultChannelTypePreference (minor|major, default minor),\n"
            "        and candidate/fast/stable: {bundles: [{image: REF}]}.  Generates the package,\n"
            "        the channels <archetype>-v<major> and/or <archetype>-v<major>.<minor> (a stable\n"
            "        bundle is in the fast and candidate channels too, a fast one in candidate), and\n"
            "        their edges: in each channel the highest patch of every minor skips that\n"
            "        minor's other patches and replaces the previous minor's highest patch.  The\n"
            "        default channel is the preferred kind's channel with the highest version of\n"
            "        the most stable archetype.\n"
            "\n"
            "  -o jsonl|json|yaml   output as `olmv1 catalog render` (default jsonl)\n"
            "\n"
            "Exit status: 0 rendered; 1 FILE unreadable; 2 bad usage; 5 a bundle image cannot be\n"
            "pulled; 8 invalid template (unknown schema, a bad entry) or invalid resulting catalog.\n");
}

/* ------------------------------------------------------------ input */

typedef struct docs {
    json_t *items;
} docs;

static int take_doc(void *ud, json_t *obj, int lineno, olm_error *err)
{
    (void)lineno, (void)err;
    docs *d = ud;
    return json_array_append_new(d->items, obj) < 0 ? olm_error_set(err, "out of memory") : 0;
}

/* The one template document of FILE; returns an exit code with err set. */
static int read_template(const char *path, const char *want_schema, json_t **out, olm_error *err)
{
    char *data = NULL;
    size_t len = 0;
    strbuf in = STRBUF_INIT;
    if (strcmp(path, "-") == 0) {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
            if (strbuf_append(&in, buf, n) < 0)
                return cluster_error(err, EXIT_FAILED, "out of memory");
        data = strbuf_detach(&in);
        len = data ? strlen(data) : 0;
        if (!data)
            return cluster_error(err, EXIT_FAILED, "out of memory");
    } else if (fbc_read_file(path, &data, &len, err) < 0) {
        return EXIT_FAILED;
    }
    docs d = {json_array()};
    int rc = d.items ? fbc_decode_stream(data, len, path, take_doc, &d, err) : olm_error_set(err, "out of memory");
    free(data);
    if (rc < 0) {
        json_decref(d.items);
        return EXIT_INVALID;
    }
    if (json_array_size(d.items) != 1) {
        json_decref(d.items);
        return cluster_error(err, EXIT_INVALID, "%s: a template is one document, found %zu", path, json_array_size(d.items));
    }
    const char *schema = json_string_value(json_object_get(json_array_get(d.items, 0), "schema"));
    if (!schema || (strcmp(schema, "olm.template.basic") != 0 && strcmp(schema, "olm.semver") != 0)) {
        olm_error_set(err, "%s: unknown template schema \"%s\" (olm.template.basic or olm.semver)", path,
                      schema ? schema : "");
        json_decref(d.items);
        return EXIT_INVALID;
    }
    if (strcmp(schema, want_schema) != 0) {
        olm_error_set(err, "%s: schema \"%s\" is not a %s template", path, schema,
                      strcmp(want_schema, "olm.semver") == 0 ? "semver" : "basic");
        json_decref(d.items);
        return EXIT_INVALID;
    }
    *out = json_incref(json_array_get(d.items, 0));
    json_decref(d.items);
    return EXIT_OK;
}

/* ------------------------------------------------------------ basic */

static int basic(const json_t *tmpl, json_t *blobs, olm_error *err)
{
    const json_t *entries = json_object_get(tmpl, "entries");
    if (!json_is_array(entries))
        return cluster_error(err, EXIT_INVALID, "olm.template.basic needs an entries list");
    size_t i;
    const json_t *e;
    json_array_foreach(entries, i, e) {
        const char *schema = json_string_value(json_object_get(e, "schema"));
        const char *image = json_string_value(json_object_get(e, "image"));
        if (!json_is_object(e) || !schema)
            return cluster_error(err, EXIT_INVALID, "entry %zu has no schema", i + 1);
        json_t *out;
        if (strcmp(schema, "olm.bundle") == 0 && !json_object_get(e, "name")) {
            if (!image || !*image)
                return cluster_error(err, EXIT_INVALID, "olm.bundle entry %zu has neither a name nor an image", i + 1);
            int code;
            if (!(out = bundle_blob_from_image(image, &code, err)))
                return code;
        } else {
            out = json_incref((json_t *)e);
        }
        if (json_array_append_new(blobs, out) < 0)
            return cluster_error(err, EXIT_FAILED, "out of memory");
    }
    return EXIT_OK;
}

/* ------------------------------------------------------------ semver */

static const char *const ARCHETYPES[] = {"candidate", "fast", "stable"}; /* least to most stable */

typedef struct sv_bundle {
    json_t *blob;          /* owned */
    const char *name, *package;
    bundle_version version; /* owned */
    int rank;              /* 0 candidate, 1 fast, 2 stable: the most stable archetype listing it */
} sv_bundle;

static int by_version(const void *a, const void *b)
{
    return bundle_version_compare(&((const sv_bundle *)a)->version, &((const sv_bundle *)b)->version);
}

static const char *package_version(const json_t *blob)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(blob, "properties"), i, p) {
        const char *type = json_string_value(json_object_get(p, "type"));
        if (type && strcmp(type, "olm.package") == 0)
            return json_string_value(json_object_get(json_object_get(p, "value"), "version"));
    }
    return NULL;
}

/* The bundles of the template, each pulled once, sorted by version. */
static int semver_bundles(const json_t *tmpl, sv_bundle **out, size_t *n, olm_error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    for (int a = 0; a < 3; a++) {
        const json_t *arch = json_object_get(tmpl, ARCHETYPES[a]);
        if (!arch)
            continue;
        const json_t *list = json_object_get(arch, "bundles");
        if (!json_is_array(list))
            return cluster_error(err, EXIT_INVALID, "%s needs a bundles list", ARCHETYPES[a]);
        size_t i;
        const json_t *e;
        json_array_foreach(list, i, e) {
            const char *image = json_string_value(json_object_get(e, "image"));
            if (!image || !*image)
                return cluster_error(err, EXIT_INVALID, "%s bundle %zu has no image", ARCHETYPES[a], i + 1);
            bool seen = false;
            for (size_t k = 0; k < *n && !seen; k++)
                if (strcmp(json_string_value(json_object_get((*out)[k].blob, "image")), image) == 0) {
                    seen = true;
                    (*out)[k].rank = a > (*out)[k].rank ? a : (*out)[k].rank;
                }
            if (seen)
                continue;
            if (OLM_ARRAY_RESERVE(*out, cap, *n + 1) < 0)
                return cluster_error(err, EXIT_FAILED, "out of memory");
            int code;
            json_t *blob = bundle_blob_from_image(image, &code, err);
            if (!blob)
                return code;
            sv_bundle *b = &(*out)[*n];
            *b = (sv_bundle){.blob = blob, .rank = a};
            (*n)++;
            b->name = json_string_value(json_object_get(blob, "name"));
            b->package = json_string_value(json_object_get(blob, "package"));
            const char *v = package_version(blob);
            olm_error verr;
            if (!v || bundle_version_parse(v, &b->version, &verr) < 0) {
                (*n)--;
                json_decref(blob);
                return cluster_error(err, EXIT_INVALID, "bundle %s: version \"%s\" is not semver", image, v ? v : "");
            }
            if (strcmp(b->package, (*out)[0].package) != 0)
                return cluster_error(err, EXIT_INVALID, "bundles of two packages, %s and %s: a semver template holds one",
                                     (*out)[0].package, b->package);
        }
    }
    if (*n == 0)
        return cluster_error(err, EXIT_INVALID, "olm.semver lists no bundles (candidate, fast, stable)");
    qsort(*out, *n, sizeof **out, by_version);
    return EXIT_OK;
}

/* The channel of bundles[members] (sorted ascending) with the y-stream edges. */
static json_t *semver_channel(const char *name, const char *package, const sv_bundle *bs, const size_t *members,
                              size_t n)
{
    json_t *entries = json_array();
    const char *prev_max = NULL;
    size_t ystart = 0;
    for (size_t i = 0; entries && i < n; i++) {
        const sv_bundle *b = &bs[members[i]];
        json_t *e = json_pack("{s:s}", "name", b->name);
        bool last_of_y = i + 1 == n || bs[members[i + 1]].version.version.major != b->version.version.major ||
                         bs[members[i + 1]].version.version.minor != b->version.version.minor;
        if (e && last_of_y) {
            if (prev_max)
                json_object_set_new(e, "replaces", json_string(prev_max));
            if (i > ystart) {
                json_t *skips = json_array();
                for (size_t k = ystart; skips && k < i; k++)
                    json_array_append_new(skips, json_string(bs[members[k]].name));
                json_object_set_new(e, "skips", skips);
            }
            prev_max = b->name;
            ystart = i + 1;
        }
        if (!e || json_array_append_new(entries, e) < 0) {
            json_decref(entries);
            return NULL;
        }
    }
    return entries ? json_pack("{s:s, s:s, s:s, s:o}", "schema", "olm.channel", "name", name, "package", package,
                               "entries", entries)
                   : NULL;
}

static int semver(const json_t *tmpl, json_t *blobs, olm_error *err)
{
    const json_t *gmaj = json_object_get(tmpl, "generateMajorChannels"), *gmin = json_object_get(tmpl, "generateMinorChannels");
    bool major = json_is_true(gmaj) || (!gmaj && !gmin), minor = json_is_true(gmin);
    if (!major && !minor)
        return cluster_error(err, EXIT_INVALID, "generateMajorChannels and generateMinorChannels are both false: no channels");
    const char *pref = json_string_value(json_object_get(tmpl, "defaultChannelTypePreference"));
    if (pref && strcmp(pref, "minor") != 0 && strcmp(pref, "major") != 0)
        return cluster_error(err, EXIT_INVALID, "defaultChannelTypePreference must be minor or major, got \"%s\"", pref);
    bool prefer_minor = minor && (!major || !pref || strcmp(pref, "minor") == 0);

    sv_bundle *bs = NULL;
    size_t n = 0;
    int rc = semver_bundles(tmpl, &bs, &n, err);
    size_t *members = rc == 0 ? calloc(n, sizeof *members) : NULL;
    if (rc == 0 && !members)
        rc = cluster_error(err, EXIT_FAILED, "out of memory");
    const char *package = rc == 0 ? bs[0].package : NULL;
    json_t *channels = json_array();
    char default_channel[256] = "";
    int default_rank = -1;
    /* Channels: archetype x kind (major, minor) x stream, in that order. */
    for (int a = 0; rc == 0 && a < 3; a++) {
        if (!json_object_get(tmpl, ARCHETYPES[a]))
            continue;
        for (int kind = 0; rc == 0 && kind < 2; kind++) {
            bool is_minor = kind == 1;
            if ((is_minor && !minor) || (!is_minor && !major))
                continue;
            /* Streams in ascending order: walk the sorted bundles. */
            for (size_t i = 0; rc == 0 && i < n;) {
                const semver_version *v = &bs[i].version.version;
                size_t m = 0, j = i;
                for (; j < n && bs[j].version.version.major == v->major &&
                       (!is_minor || bs[j].version.version.minor == v->minor);
                     j++)
                    if (bs[j].rank >= a)
                        members[m++] = j;
                char name[256];
                if (is_minor)
                    snprintf(name, sizeof name, "%s-v%llu.%llu", ARCHETYPES[a], (unsigned long long)v->major,
                             (unsigned long long)v->minor);
                else
                    snprintf(name, sizeof name, "%s-v%llu", ARCHETYPES[a], (unsigned long long)v->major);
                if (m > 0) {
                    json_t *ch = semver_channel(name, package, bs, members, m);
                    if (!ch || json_array_append_new(channels, ch) < 0)
                        rc = cluster_error(err, EXIT_FAILED, "out of memory");
                    /* Later streams are higher: the last of the preferred kind of the most stable wins. */
                    if (is_minor == prefer_minor && a >= default_rank) {
                        snprintf(default_channel, sizeof default_channel, "%s", name);
                        default_rank = a;
                    }
                }
                i = j;
            }
        }
    }
    json_t *pkg = rc == 0 ? json_pack("{s:s, s:s, s:s}", "schema", "olm.package", "name", package, "defaultChannel",
                                      default_channel)
                          : NULL;
    if (rc == 0 && (!pkg || !channels || json_array_append_new(blobs, pkg) < 0 || json_array_extend(blobs, channels) < 0))
        rc = cluster_error(err, EXIT_FAILED, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (json_array_append(blobs, bs[i].blob) < 0)
            rc = cluster_error(err, EXIT_FAILED, "out of memory");
    json_decref(channels);
    for (size_t i = 0; i < n; i++) {
        json_decref(bs[i].blob);
        bundle_version_free(&bs[i].version);
    }
    free(bs);
    free(members);
    return rc;
}

/* ------------------------------------------------------------ output */

/* The blobs as a catalog: normalised through the FBC loader, validated, printed. */
static int emit(const json_t *blobs, const char *format, olm_error *err)
{
    strbuf text = STRBUF_INIT;
    size_t i;
    const json_t *b;
    int rc = 0;
    json_array_foreach(blobs, i, b) {
        char *line = json_dumps(b, JSON_COMPACT);
        if (!line || strbuf_puts(&text, line) < 0 || strbuf_putc(&text, '\n') < 0)
            rc = -1;
        free(line);
        if (rc)
            break;
    }
    if (rc) {
        strbuf_free(&text);
        return cluster_error(err, EXIT_FAILED, "out of memory");
    }
    fbc_catalog *c = fbc_load_buffer(text.data ? text.data : "", text.len, "template", err);
    strbuf_free(&text);
    if (!c)
        return EXIT_INVALID;
    fbc_problems probs;
    int np = fbc_validate(c, &probs);
    if (np != 0) {
        if (np > 0) {
            olm_error_set(err, "the rendered catalog is invalid: %s%s", probs.items[0],
                          np > 1 ? " (and more: olmv1 catalog validate shows all)" : "");
            fbc_problems_free(&probs);
        } else {
            olm_error_set(err, "out of memory");
        }
        fbc_catalog_free(c);
        return np > 0 ? EXIT_INVALID : EXIT_FAILED;
    }
    fbc_problems_free(&probs);
    json_t *all = strcmp(format, "jsonl") == 0 ? NULL : json_array();
    for (size_t k = 0; rc == 0 && k < c->nmetas; k++) {
        if (!all) {
            if (fwrite(c->metas[k].line, 1, c->metas[k].line_len, stdout) != c->metas[k].line_len)
                rc = -1;
            continue;
        }
        json_t *blob = json_loadb(c->metas[k].line, c->metas[k].line_len, 0, NULL);
        rc = blob && json_array_append_new(all, blob) == 0 ? 0 : -1;
    }
    if (rc == 0 && all && strcmp(format, "yaml") == 0)
        rc = cli_write_yaml_docs(all, stdout);
    for (size_t k = 0; rc == 0 && all && strcmp(format, "json") == 0 && k < json_array_size(all); k++)
        rc = cli_write_json(json_array_get(all, k), stdout);
    json_decref(all);
    fbc_catalog_free(c);
    if (rc != 0 || fflush(stdout) != 0)
        return cluster_error(err, EXIT_FAILED, "write error");
    return EXIT_OK;
}

int cmd_catalog_template(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = "jsonl";
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (opt) {
        case 'o': format = optarg; break;
        case 'h': template_usage(stdout); return EXIT_OK;
        default: template_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind + 2 != argc || (strcmp(argv[optind], "basic") != 0 && strcmp(argv[optind], "semver") != 0)) {
        fprintf(stderr, "olmv1 catalog template: expected basic or semver, then FILE\n");
        return EXIT_USAGE;
    }
    if (strcmp(format, "jsonl") != 0 && strcmp(format, "json") != 0 && strcmp(format, "yaml") != 0) {
        fprintf(stderr, "olmv1 catalog template: -o must be jsonl, json or yaml, got \"%s\"\n", format);
        return EXIT_USAGE;
    }
    bool is_basic = strcmp(argv[optind], "basic") == 0;
    olm_error err;
    json_t *tmpl = NULL, *blobs = json_array();
    int rc = blobs ? read_template(argv[optind + 1], is_basic ? "olm.template.basic" : "olm.semver", &tmpl, &err)
                   : (olm_error_set(&err, "out of memory"), EXIT_FAILED);
    if (rc == EXIT_OK)
        rc = is_basic ? basic(tmpl, blobs, &err) : semver(tmpl, blobs, &err);
    if (rc == EXIT_OK)
        rc = emit(blobs, format, &err);
    json_decref(tmpl);
    json_decref(blobs);
    if (rc != EXIT_OK)
        fprintf(stderr, "olmv1 catalog template: %s\n", err.msg);
    return rc;
}

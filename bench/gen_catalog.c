/* gen_catalog: a deterministic, larger catalog made from a real one.
 *
 * Usage: gen_catalog SRC_DIR OUT_DIR COPIES
 * Writes COPIES renamed copies of every package of SRC_DIR (package "p" becomes
 * "p-g<k>", bundle "b" becomes "b-g<k>", with every reference rewritten) as JSON
 * lines, one file per package.  The result is a valid catalog COPIES times the
 * source with the same graph shapes, so benchmarks scale on realistic content. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fbc.h"

static json_t *suffixed(const char *s, int k)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s-g%d", s, k);
    return json_string(buf);
}

/* Replaces obj[key] (a string) by its suffixed form, if present. */
static void rename_key(json_t *obj, const char *key, int k)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_string(v))
        json_object_set_new(obj, key, suffixed(json_string_value(v), k));
}

static void rename_blob(json_t *blob, int k)
{
    const char *schema = json_string_value(json_object_get(blob, "schema"));
    if (!schema)
        return;
    rename_key(blob, "package", k);
    /* Package and bundle names are renamed; channel names stay (defaultChannel). */
    if (strcmp(schema, "olm.package") == 0 || strcmp(schema, "olm.bundle") == 0)
        rename_key(blob, "name", k);
    if (strcmp(schema, "olm.channel") == 0) {
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(blob, "entries"), i, e) {
            rename_key(e, "name", k);
            rename_key(e, "replaces", k);
            json_t *skips = json_object_get(e, "skips");
            for (size_t s = 0; s < json_array_size(skips); s++)
                json_array_set_new(skips, s, suffixed(json_string_value(json_array_get(skips, s)), k));
        }
    } else if (strcmp(schema, "olm.bundle") == 0) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(blob, "properties"), i, p) {
            const char *type = json_string_value(json_object_get(p, "type"));
            if (type && strcmp(type, "olm.package") == 0)
                rename_key(json_object_get(p, "value"), "packageName", k);
        }
    } else if (strcmp(schema, "olm.deprecations") == 0) {
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(blob, "entries"), i, e) {
            json_t *ref = json_object_get(e, "reference");
            const char *rs = json_string_value(json_object_get(ref, "schema"));
            if (rs && strcmp(rs, "olm.bundle") == 0)
                rename_key(ref, "name", k);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gen_catalog SRC_DIR OUT_DIR COPIES\n");
        return 2;
    }
    int copies = atoi(argv[3]);
    olm_error err;
    fbc_catalog *c = fbc_load_dir(argv[1], &err);
    if (!c) {
        fprintf(stderr, "gen_catalog: %s\n", err.msg);
        return 1;
    }
    if (mkdir(argv[2], 0755) < 0 && errno != EEXIST) {
        perror(argv[2]);
        return 1;
    }
    size_t bytes = 0;
    for (int k = 1; k <= copies; k++) {
        for (size_t p = 0; p < c->npackages; p++) {
            const char *pkg = c->packages[p].name;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s-g%d.json", argv[2], pkg, k);
            FILE *f = fopen(path, "w");
            if (!f) {
                perror(path);
                return 1;
            }
            for (size_t m = 0; m < c->nmetas; m++) {
                const fbc_meta *meta = &c->metas[m];
                int mine = strcmp(meta->package, pkg) == 0 ||
                           (strcmp(meta->schema, "olm.package") == 0 && strcmp(meta->name, pkg) == 0);
                if (!mine)
                    continue;
                /* The catalog keeps no DOM: re-read the normalised line, numbers as
                 * float64 like the loader decodes them. */
                json_error_t jerr;
                json_t *copy = json_loadb(meta->line, meta->line_len,
                                          JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
                if (!copy) {
                    fprintf(stderr, "gen_catalog: %s:%d: %s\n", meta->file, meta->lineno, jerr.text);
                    return 1;
                }
                rename_blob(copy, k);
                char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
                fprintf(f, "%s\n", text);
                bytes += strlen(text) + 1;
                free(text);
                json_decref(copy);
            }
            if (fclose(f) != 0) {
                perror(path);
                return 1;
            }
        }
    }
    printf("gen_catalog: %d copies of %zu packages, %.1f MB in %s\n", copies, c->npackages, bytes / 1e6, argv[2]);
    fbc_catalog_free(c);
    return 0;
}

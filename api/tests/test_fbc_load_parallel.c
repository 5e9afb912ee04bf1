/* fbc_load_dir_parallel gives exactly fbc_load_dir's catalog (same lines, metas, views,
 * validation problems) and exactly its error, whatever the number of threads; and so does
 * fbc_load_dir_prefetched, whatever was decoded early, from where, and in which order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "fbc.h"
#include "fbc_internal.h"

static const char *shared(void)
{
    const char *s = getenv("OLMV1_SHARED");
    return s && *s ? s : "../../../shared";
}

static void same_str(const char *a, const char *b, const char *what, size_t i)
{
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
        fail_msg("%s %zu: \"%s\" vs \"%s\"", what, i, a ? a : "(null)", b ? b : "(null)");
}

/* Same slice of each catalog's own jsonl (value slices are checked by offset too). */
static void same_slice(const fbc_catalog *a, const char *pa, size_t la, const fbc_catalog *b, const char *pb,
                       size_t lb, const char *what, size_t i)
{
    if ((pa == NULL) != (pb == NULL) || la != lb)
        fail_msg("%s %zu: slices differ", what, i);
    if (pa && (pa - a->jsonl != pb - b->jsonl || memcmp(pa, pb, la) != 0))
        fail_msg("%s %zu: slices differ", what, i);
}

static void same_catalog(const fbc_catalog *a, const fbc_catalog *b)
{
    assert_int_equal(a->jsonl_len, b->jsonl_len);
    assert_true(a->jsonl_len == 0 || memcmp(a->jsonl, b->jsonl, a->jsonl_len) == 0);
    assert_int_equal(a->nmetas, b->nmetas);
    for (size_t i = 0; i < a->nmetas; i++) {
        const fbc_meta *x = &a->metas[i], *y = &b->metas[i];
        same_str(x->schema, y->schema, "schema", i);
        same_str(x->package, y->package, "package", i);
        same_str(x->name, y->name, "name", i);
        same_str(x->file, y->file, "file", i);
        assert_int_equal(x->lineno, y->lineno);
        assert_int_equal(x->offset, y->offset);
        same_slice(a, x->line, x->line_len, b, y->line, y->line_len, "line", i);
    }
    assert_int_equal(a->npackages, b->npackages);
    for (size_t i = 0; i < a->npackages; i++) {
        same_str(a->packages[i].name, b->packages[i].name, "package", i);
        same_str(a->packages[i].default_channel, b->packages[i].default_channel, "defaultChannel", i);
        assert_int_equal(a->packages[i].meta - a->metas, b->packages[i].meta - b->metas);
    }
    assert_int_equal(a->nchannels, b->nchannels);
    for (size_t i = 0; i < a->nchannels; i++) {
        const fbc_channel *x = &a->channels[i], *y = &b->channels[i];
        same_str(x->name, y->name, "channel", i);
        assert_int_equal(x->meta - a->metas, y->meta - b->metas);
        assert_int_equal(x->nentries, y->nentries);
        for (size_t k = 0; k < x->nentries; k++) {
            same_str(x->entries[k].name, y->entries[k].name, "entry", k);
            same_str(x->entries[k].replaces, y->entries[k].replaces, "replaces", k);
            same_str(x->entries[k].skip_range, y->entries[k].skip_range, "skipRange", k);
            assert_int_equal(x->entries[k].nskips, y->entries[k].nskips);
            for (size_t s = 0; s < x->entries[k].nskips; s++)
                same_str(x->entries[k].skips[s], y->entries[k].skips[s], "skip", s);
        }
    }
    assert_int_equal(a->nbundles, b->nbundles);
    for (size_t i = 0; i < a->nbundles; i++) {
        const fbc_bundle *x = &a->bundles[i], *y = &b->bundles[i];
        same_str(x->name, y->name, "bundle", i);
        same_str(x->image, y->image, "image", i);
        same_str(x->version, y->version, "version", i);
        same_str(x->release, y->release, "release", i);
        same_str(x->package_name, y->package_name, "packageName", i);
        assert_int_equal(x->meta - a->metas, y->meta - b->metas);
        assert_int_equal(x->nproperties, y->nproperties);
        for (size_t k = 0; k < x->nproperties; k++) {
            same_str(x->properties[k].type, y->properties[k].type, "property", k);
            same_slice(a, x->properties[k].value, x->properties[k].value_len, b, y->properties[k].value,
                       y->properties[k].value_len, "value", k);
        }
    }
    assert_int_equal(a->ndeprecations, b->ndeprecations);
    for (size_t i = 0; i < a->ndeprecations; i++) {
        assert_int_equal(a->deprecations[i].nentries, b->deprecations[i].nentries);
        for (size_t k = 0; k < a->deprecations[i].nentries; k++)
            same_str(a->deprecations[i].entries[k].message, b->deprecations[i].entries[k].message, "message", k);
    }
    fbc_problems pa = {0}, pb = {0};
    int na = fbc_validate(a, &pa), nb = fbc_validate(b, &pb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < pa.n; i++)
        same_str(pa.items[i], pb.items[i], "problem", i);
    fbc_problems_free(&pa);
    fbc_problems_free(&pb);
}

/* Serial, 2, 3 and 16 threads (more threads than files, for most catalogs here): the same
 * catalog, or the same error (want_ok: which). */
static void check_dir(const char *dir, bool want_ok)
{
    olm_error e1;
    olm_error_clear(&e1);
    fbc_catalog *serial = fbc_load_dir(dir, &e1);
    if ((serial != NULL) != want_ok)
        fail_msg("%s: serial load %s: %s", dir, serial ? "worked" : "failed", e1.msg);
    static const unsigned thread_counts[] = {2, 3, 16};
    for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
        unsigned threads = thread_counts[t];
        olm_error e2;
        olm_error_clear(&e2);
        fbc_catalog *par = fbc_load_dir_parallel(dir, threads, &e2);
        if (!serial) {
            if (par)
                fail_msg("%s: serial load failed (%s), %u threads loaded", dir, e1.msg, threads);
            if (strcmp(e1.msg, e2.msg) != 0)
                fail_msg("%s (%u threads):\n got  %s\n want %s", dir, threads, e2.msg, e1.msg);
            continue;
        }
        if (!par)
            fail_msg("%s: %u threads failed: %s", dir, threads, e2.msg);
        same_catalog(serial, par);
        fbc_catalog_free(par);
    }
    fbc_catalog_free(serial);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[4096];
    assert_true(snprintf(p, sizeof p, "%s/%s", dir, name) < (int)sizeof p);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Many packages, one file each, some with wrong-typed fields, in subdirectories. */
static void make_catalog(char *dir, size_t dirsz)
{
    snprintf(dir, dirsz, "/tmp/fbc-parallel-XXXXXX");
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 12; i++) {
        char sub[4096], text[8192];
        snprintf(sub, sizeof sub, "%s/p%02d", dir, i);
        assert_int_equal(mkdir(sub, 0755), 0);
        int n = snprintf(text, sizeof text,
                         "schema: olm.package\nname: p%02d\ndefaultChannel: %s\n---\n"
                         "schema: olm.channel\npackage: p%02d\nname: stable\nentries:\n",
                         i, i == 3 ? "[not, a, string]" : "stable", i);
        /* Sizes differ so that the biggest-first order is not the walk order. */
        for (int v = 0; v < 1 + (i * 7) % 11; v++)
            n += snprintf(text + n, sizeof text - (size_t)n, "  - name: p%02d.v%d.0.0%s\n", i, v,
                          v ? "" : "\n    skips: [a, 1]");
        for (int v = 0; v < 1 + (i * 7) % 11; v++)
            n += snprintf(text + n, sizeof text - (size_t)n,
                          "---\nschema: olm.bundle\npackage: p%02d\nname: p%02d.v%d.0.0\nimage: img/p%02d:%d\n"
                          "properties:\n- type: olm.package\n  value: {packageName: p%02d, version: %d.0.0}\n"
                          "- type: olm.gvk\n  value: {group: g, kind: K%d, version: v1}\n",
                          i, i, v, i, v, i, v, v);
        write_file(sub, "catalog.yaml", text);
    }
    write_file(dir, "loose.json", "{\"schema\":\"olm.package\",\"name\":\"loose\"}\n{\"schema\":\"x.other\",\"a\":[1,2]}\n");
}

static void remove_catalog(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_same_catalog_generated(void **state)
{
    (void)state;
    char dir[64];
    make_catalog(dir, sizeof dir);
    check_dir(dir, true);
    /* The shape problems of several files come in walk order, the same as serial. */
    olm_error err;
    fbc_catalog *c = fbc_load_dir_parallel(dir, 2, &err);
    assert_non_null(c);
    assert_int_equal(c->npackages, 13);
    fbc_problems probs = {0};
    assert_true(fbc_validate(c, &probs) >= 3);
    assert_non_null(strstr(probs.items[0], "p00/catalog.yaml:"));
    assert_non_null(strstr(probs.items[0], "invalid-field"));
    fbc_problems_free(&probs);
    fbc_catalog_free(c);
    remove_catalog(dir);
}

/* A few big files and an empty one: the parts' texts are over a MiB, so several threads
 * copy them into the joined catalog, with fewer parts than threads at 16. */
static void test_same_catalog_few_big_files(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/fbc-parallel-XXXXXX");
    assert_non_null(mkdtemp(dir));
    for (int f = 0; f < 3; f++) {
        char name[32], path[4200];
        snprintf(name, sizeof name, "%c.yaml", 'a' + f);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *out = fopen(path, "w");
        assert_non_null(out);
        if (f != 1) { /* b.yaml stays empty: a part with no text between two big ones */
            fprintf(out, "schema: olm.package\nname: big%d\ndefaultChannel: stable\n", f);
            for (int v = 0; v < 1500 + 700 * f; v++)
                fprintf(out, "---\nschema: olm.bundle\npackage: big%d\nname: big%d.v%d.0.0\nimage: img/big%d:%d\n"
                             "properties:\n- type: olm.package\n  value: {packageName: big%d, version: %d.0.0}\n"
                             "- type: olm.bundle.object\n  value: {data: x%0240d}\n",
                        f, f, v, f, v, f, v, v);
        }
        fclose(out);
    }
    check_dir(dir, true);
    remove_catalog(dir);
}

static bool page_aligned(const void *p)
{
    return ((uintptr_t)p % (uintptr_t)sysconf(_SC_PAGESIZE)) == 0;
}

/* A parallel load's parts hand their pages to the joined text: it is a mapping of its own
 * (counted by fbc_text_mappings, and page aligned), not a copy.  Whether a text is mapped is
 * read from that count: a malloc'd block is page aligned now and then (glibc aligns to 16
 * bytes; one in 256 lands on a page), which made the alignment alone a flaky witness. */
static void test_joined_text_is_moved_pages(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs/certified-operators-v4.18", shared());
    olm_error err;
    fbc_catalog *c = fbc_load_dir_parallel(dir, 2, &err);
    assert_non_null(c);
    assert_true(page_aligned(c->jsonl));
    assert_int_equal(fbc_text_mappings(), 1);
    fbc_catalog_free(c);
    c = fbc_load_dir(dir, &err); /* a serial load writes one growing buffer: malloc'd */
    assert_non_null(c);
    assert_int_equal(fbc_text_mappings(), 0);
    fbc_catalog_free(c);
}

/* This test binary's mmap: refuses the loader's text mappings (MAP_NORESERVE) from this
 * size on, as strict overcommit or an address-space limit would; glibc's own mappings
 * (malloc) do not come through here. */
static size_t refuse_text_maps_from = SIZE_MAX;
static atomic_int part_maps, moves; /* parts' text mappings made (1 GiB or more); mremaps done */

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if ((flags & MAP_NORESERVE) && len >= refuse_text_maps_from) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_NORESERVE) && len >= ((size_t)1 << 30))
        atomic_fetch_add(&part_maps, 1);
    return p;
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    void *to = (flags & MREMAP_FIXED) ? va_arg(ap, void *) : NULL;
    va_end(ap);
    void *p = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, to);
    if (p != MAP_FAILED)
        atomic_fetch_add(&moves, 1);
    return p;
}

/* Files of the catalog at dir (not below it) of at least `min` bytes. */
static int files_at_least(const char *dir, off_t min)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "find '%s' -type f -size +%lldc | wc -l", dir, (long long)min - 1);
    FILE *f = popen(cmd, "r");
    int n = -1;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &n), 1);
    pclose(f);
    return n;
}

/* Only a file of 64 KiB or more gets a text mapping of its own, whose pages the join moves
 * (one mremap each); smaller ones are copied.  Every mapping is gone once the catalog is. */
static void test_big_files_moved_small_copied(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs/certified-operators-v4.18", shared());
    int big = files_at_least(dir, 64 * 1024);
    assert_true(big > 0 && big < 55); /* certified has files on both sides */
    atomic_store(&part_maps, 0);
    atomic_store(&moves, 0);
    olm_error err;
    fbc_catalog *c = fbc_load_dir_parallel(dir, 2, &err);
    assert_non_null(c);
    assert_int_equal(atomic_load(&part_maps), big);
    assert_int_equal(atomic_load(&moves), big);
    assert_int_equal(fbc_text_mappings(), 1); /* the joined text */
    fbc_catalog_free(c);
    assert_int_equal(fbc_text_mappings(), 0);
}

/* Where the parts' mappings are refused, their texts are ordinary buffers, copied into the
 * joined one (mapped, or malloc'd when that is refused too): the same catalog. */
static void test_same_catalog_without_mappings(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs/certified-operators-v4.18", shared());
    static const struct {
        size_t from;
        bool joined_mapped;
    } cases[] = {{(size_t)1 << 30, true}, {0, false}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        refuse_text_maps_from = cases[k].from;
        check_dir(dir, true);
        olm_error err;
        fbc_catalog *c = fbc_load_dir_parallel(dir, 2, &err);
        refuse_text_maps_from = SIZE_MAX;
        assert_non_null(c);
        assert_int_equal(fbc_text_mappings(), cases[k].joined_mapped ? 1 : 0);
        fbc_catalog_free(c);
    }
}

static void test_same_catalog_fixtures(void **state)
{
    (void)state;
    static const char *const dirs[] = {
        "fixtures/valid/basic", "fixtures/indexignore", "fixtures/invalid/invalid-field",
        "fixtures/invalid/duplicate-bundle", "fixtures/invalid/replaces-cycle",
    };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        check_dir(dirs[i], true);
}

static void test_same_catalog_certified(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/data/catalogs/certified-operators-v4.18", shared());
    check_dir(dir, true);
}

/* Two broken files: the error is the first one's in walk order, even though the later,
 * bigger one is decoded first; malformed fixtures give their usual error. */
static void test_same_error(void **state)
{
    (void)state;
    char dir[64];
    make_catalog(dir, sizeof dir);
    char p[4096];
    snprintf(p, sizeof p, "%s/p02", dir);
    write_file(p, "zz-broken.yaml", "schema: olm.package\nname: [unclosed\n");
    snprintf(p, sizeof p, "%s/p10", dir);
    write_file(p, "broken.json", "{\"schema\":\"olm.package\",\"name\":\"p10b\"}\n{\"schema\":\"x\",}\n");
    olm_error err;
    olm_error_clear(&err);
    fbc_catalog *c = fbc_load_dir_parallel(dir, 2, &err);
    assert_null(c);
    char want[4200];
    snprintf(want, sizeof want, "%s/p02/zz-broken.yaml:", dir);
    if (strncmp(err.msg, want, strlen(want)) != 0)
        fail_msg("got %s, want %s...", err.msg, want);
    check_dir(dir, false);
    remove_catalog(dir);

    static const char *const malformed[] = {
        "fixtures/malformed/broken-yaml", "fixtures/malformed/broken-json", "fixtures/malformed/non-object",
        "fixtures/malformed/yaml-list-doc", "fixtures/malformed/dup-schema", "fixtures/does-not-exist",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        check_dir(malformed[i], false);
}

/* ---------------------------------------------------------------- fbc_prefetch */

/* The files under `dir`, relative, sorted (reversed: `reverse`), into `rels` (NULL-ended). */
static size_t list_files(const char *dir, bool reverse, char **rels, size_t max)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f | sed 's,^\\./,,' | LC_ALL=C sort %s", dir, reverse ? "-r" : "");
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = 0;
    char line[4096];
    while (n + 1 < max && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        rels[n++] = strdup(line);
    }
    rels[n] = NULL;
    assert_int_equal(pclose(f), 0);
    return n;
}

/* Offers every file of `offer_dir` (in reverse walk order: not the load's), then `extra`
 * (rel, or NULL to say "forget"; skipped when !with_extra), then loads `dir` with what was
 * decoded: it must be fbc_load_dir(dir), catalog or error. */
static void check_prefetched(const char *dir, const char *offer_dir, bool with_extra, const char *extra)
{
    olm_error e1, e2;
    olm_error_clear(&e1);
    olm_error_clear(&e2);
    fbc_catalog *serial = fbc_load_dir(dir, &e1);
    char *rels[512];
    size_t n = list_files(offer_dir, true, rels, 512);
    assert_true(n > 0);
    for (unsigned threads = 1; threads <= 2; threads++) {
        fbc_prefetch *p = fbc_prefetch_new();
        assert_non_null(p);
        for (size_t i = 0; i < n; i++) {
            char path[8200];
            snprintf(path, sizeof path, "%s/%s", offer_dir, rels[i]);
            fbc_prefetch_offer(p, path, rels[i]);
        }
        if (with_extra) {
            char path[8200];
            snprintf(path, sizeof path, "%s/%s", offer_dir, extra ? extra : "");
            fbc_prefetch_offer(p, extra ? path : NULL, extra);
        }
        fbc_catalog *pre = fbc_load_dir_prefetched(dir, threads, p, &e2);
        if (!serial) {
            if (pre)
                fail_msg("%s: serial load failed (%s), prefetched loaded", dir, e1.msg);
            if (strcmp(e1.msg, e2.msg) != 0)
                fail_msg("%s (prefetched, %u threads):\n got  %s\n want %s", dir, threads, e2.msg, e1.msg);
        } else {
            if (!pre)
                fail_msg("%s: prefetched failed: %s", dir, e2.msg);
            same_catalog(serial, pre);
        }
        fbc_catalog_free(pre);
        fbc_prefetch_free(p);
    }
    for (size_t i = 0; i < n; i++)
        free(rels[i]);
    fbc_catalog_free(serial);
}

static void copy_tree(const char *from, char *to, size_t tosz)
{
    snprintf(to, tosz, "/tmp/fbc-prefetch-XXXXXX");
    assert_non_null(mkdtemp(to));
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cp -a '%s'/. '%s'/", from, to);
    assert_int_equal(system(cmd), 0);
}

/* Decoded where it is loaded from, and from a copy elsewhere (catalogd decodes in the pull's
 * temp tree, then loads the tree renamed into place): the same catalog; files the walk
 * ignores are decoded for nothing and left out, as the walk leaves them out. */
static void test_prefetch_same_catalog(void **state)
{
    (void)state;
    char dir[64], copy[64];
    make_catalog(dir, sizeof dir);
    check_prefetched(dir, dir, false, NULL);
    copy_tree(dir, copy, sizeof copy);
    check_prefetched(dir, copy, false, NULL);
    remove_catalog(copy);
    remove_catalog(dir);
    check_prefetched("fixtures/indexignore", "fixtures/indexignore", false, NULL);
    char cert[4096];
    snprintf(cert, sizeof cert, "%s/data/catalogs/certified-operators-v4.18", shared());
    check_prefetched(cert, cert, false, NULL);
    /* no prefetch at all: the parallel load */
    olm_error err;
    fbc_catalog *a = fbc_load_dir_prefetched("fixtures/valid/basic", 2, NULL, &err);
    fbc_catalog *b = fbc_load_dir("fixtures/valid/basic", &err);
    assert_non_null(a);
    assert_non_null(b);
    same_catalog(a, b);
    fbc_catalog_free(a);
    fbc_catalog_free(b);
}

/* A file that failed to decode early is decoded again by the load: its error names the file
 * where the load reads it (not the copy it was first decoded from), and it is the first in
 * walk order, as ever. */
static void test_prefetch_same_error(void **state)
{
    (void)state;
    char dir[64], copy[64];
    make_catalog(dir, sizeof dir);
    char p[4096];
    snprintf(p, sizeof p, "%s/p02", dir);
    write_file(p, "zz-broken.yaml", "schema: olm.package\nname: [unclosed\n");
    snprintf(p, sizeof p, "%s/p10", dir);
    write_file(p, "broken.json", "{\"schema\":\"olm.package\",\"name\":\"p10b\"}\n{\"schema\":\"x\",}\n");
    copy_tree(dir, copy, sizeof copy);
    check_prefetched(dir, copy, false, NULL);
    check_prefetched(dir, dir, false, NULL);
    remove_catalog(copy);
    remove_catalog(dir);
    check_prefetched("fixtures/malformed/broken-yaml", "fixtures/malformed/broken-yaml", false, NULL);
}

/* Decoded from other bytes than the load's (a later layer replaced files): after a "forget",
 * or when the same path is offered twice, nothing decoded early is used. */
static void test_prefetch_forget(void **state)
{
    (void)state;
    char dir[64], copy[64];
    make_catalog(dir, sizeof dir);
    copy_tree(dir, copy, sizeof copy);
    char p[4096];
    snprintf(p, sizeof p, "%s/p05", copy);
    write_file(p, "catalog.yaml", "schema: olm.package\nname: not-what-the-load-reads\n");
    write_file(copy, "loose.json", "{\"schema\":\"olm.package\",\"name\":[broken\n");
    check_prefetched(dir, copy, true, NULL);
    check_prefetched(dir, copy, true, "p05/catalog.yaml");
    remove_catalog(copy);
    remove_catalog(dir);
}


/* A prefetch that is never offered a file (catalogd's reconcile of an image already stored)
 * starts no thread, and a load through it is the plain load. */
static void test_prefetch_without_offers(void **state)
{
    (void)state;
    char dir[64];
    make_catalog(dir, sizeof dir);
    olm_error e1, e2;
    fbc_catalog *serial = fbc_load_dir(dir, &e1);
    assert_non_null(serial);
    fbc_prefetch *p = fbc_prefetch_new();
    assert_non_null(p);
    fbc_catalog *pre = fbc_load_dir_prefetched(dir, 2, p, &e2);
    assert_non_null(pre);
    same_catalog(serial, pre);
    fbc_prefetch_free(p);
    fbc_catalog_free(pre);
    fbc_catalog_free(serial);
    remove_catalog(dir);

    p = fbc_prefetch_new(); /* and one that is only stopped and freed */
    assert_non_null(p);
    fbc_prefetch_stop(p);
    fbc_prefetch_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_catalog_generated),
        cmocka_unit_test(test_same_catalog_fixtures),
        cmocka_unit_test(test_same_catalog_certified),
        cmocka_unit_test(test_same_catalog_few_big_files),
        cmocka_unit_test(test_joined_text_is_moved_pages),
        cmocka_unit_test(test_big_files_moved_small_copied),
        cmocka_unit_test(test_same_catalog_without_mappings),
        cmocka_unit_test(test_same_error),
        cmocka_unit_test(test_prefetch_same_catalog),
        cmocka_unit_test(test_prefetch_same_error),
        cmocka_unit_test(test_prefetch_forget),
        cmocka_unit_test(test_prefetch_without_offers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the oci library: no network; the layer tests build trees in
 * a temporary directory and read the produced layers back with libarchive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci.h"

/* ---------------------------------------------------------------- references */

struct ref_case {
    const char *in;
    const char *registry, *repository, *tag, *digest; /* NULL registry = must fail */
    const char *err_part;
};

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct ref_case ref_cases[] = {
    {"busybox", "docker.io", "library/busybox", "latest", NULL, NULL},
    {"busybox:1.36", "docker.io", "library/busybox", "1.36", NULL, NULL},
    {"library/busybox", "docker.io", "library/busybox", "latest", NULL, NULL},
    {"docker.io/busybox", "docker.io", "library/busybox", "latest", NULL, NULL},
    {"index.docker.io/foo/bar:v1", "docker.io", "foo/bar", "v1", NULL, NULL},
    {"ns/app", "docker.io", "ns/app", "latest", NULL, NULL},
    {"quay.io/operator-framework/catalogd:v1.0.0", "quay.io", "operator-framework/catalogd",
     "v1.0.0", NULL, NULL},
    {"localhost/foo", "localhost", "foo", "latest", NULL, NULL},
    {"localhost:5000/foo/bar:dev", "localhost:5000", "foo/bar", "dev", NULL, NULL},
    {"127.0.0.1:5000/catalogs/sample:latest", "127.0.0.1:5000", "catalogs/sample", "latest", NULL,
     NULL},
    {"[::1]:5000/x", "[::1]:5000", "x", "latest", NULL, NULL},
    {"myhost:5000/x", "myhost:5000", "x", "latest", NULL, NULL},
    {"Example.COM/x", "Example.COM", "x", "latest", NULL, NULL},
    {"a/b/c/d:e", "docker.io", "a/b/c/d", "e", NULL, NULL},
    {"foo_bar/a__b/c--d/e.f:1", "docker.io", "foo_bar/a__b/c--d/e.f", "1", NULL, NULL},
    {"quay.io/x/y@sha256:" D64, "quay.io", "x/y", NULL, "sha256:" D64, NULL},
    {"quay.io/x/y:v1@sha256:" D64, "quay.io", "x/y", "v1", "sha256:" D64, NULL},
    {"busybox@sha256:" D64, "docker.io", "library/busybox", NULL, "sha256:" D64, NULL},
    /* invalid */
    {"", NULL, NULL, NULL, NULL, "empty"},
    {"Busybox", NULL, NULL, NULL, NULL, "lowercase"},
    {"docker.io/Foo/bar", NULL, NULL, NULL, NULL, "lowercase"},
    {"https://quay.io/x", NULL, NULL, NULL, NULL, "URL scheme"},
    {"quay.io/x:", NULL, NULL, NULL, NULL, "bad tag"},
    {"quay.io/x:-v1", NULL, NULL, NULL, NULL, "bad tag"},
    {"quay.io/x:v1:v2", NULL, NULL, NULL, NULL, "path component"},
    {"quay.io/x@sha256:abc", NULL, NULL, NULL, NULL, "64 hex"},
    {"quay.io/x@md5:" D64, NULL, NULL, NULL, NULL, "sha256"},
    {"quay.io/x@sha256:" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", NULL,
     NULL, NULL, NULL, "lowercase hex"},
    {"quay.io/", NULL, NULL, NULL, NULL, "missing"},
    {"quay.io//x", NULL, NULL, NULL, NULL, "path component"},
    {"a/-b", NULL, NULL, NULL, NULL, "path component"},
    {"a/b_", NULL, NULL, NULL, NULL, "path component"},
    {"a/b___c", NULL, NULL, NULL, NULL, "path component"},
    {"host:99999/x", NULL, NULL, NULL, NULL, "registry host"},
    {"-host.io/x", NULL, NULL, NULL, NULL, "registry host"},
    {"quay.io/x y", NULL, NULL, NULL, NULL, "whitespace"},
    {":tag", NULL, NULL, NULL, NULL, "missing"},
    {"@sha256:" D64, NULL, NULL, NULL, NULL, "missing"},
};

static void assert_str_or_null(const char *got, const char *want, const char *in)
{
    if (!want) {
        if (got)
            fail_msg("%s: expected NULL, got \"%s\"", in, got);
        return;
    }
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: expected \"%s\", got \"%s\"", in, want, got ? got : "(null)");
}

static void test_ref_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ref_cases / sizeof ref_cases[0]; i++) {
        const struct ref_case *c = &ref_cases[i];
        oci_ref r;
        olm_error err = {{0}};
        int rc = oci_ref_parse(c->in, &r, &err);
        if (!c->registry) {
            if (rc == 0)
                fail_msg("\"%s\" should not parse", c->in);
            if (!strstr(err.msg, c->err_part))
                fail_msg("\"%s\": error \"%s\" does not mention \"%s\"", c->in, err.msg, c->err_part);
            assert_null(r.registry);
            continue;
        }
        if (rc != 0)
            fail_msg("\"%s\" should parse: %s", c->in, err.msg);
        assert_str_or_null(r.registry, c->registry, c->in);
        assert_str_or_null(r.repository, c->repository, c->in);
        assert_str_or_null(r.tag, c->tag, c->in);
        assert_str_or_null(r.digest, c->digest, c->in);
        oci_ref_free(&r);
    }
}

static void test_ref_format(void **state)
{
    (void)state;
    oci_ref r;
    olm_error err;
    assert_int_equal(oci_ref_parse("busybox", &r, &err), 0);
    char *s = oci_ref_string(&r);
    assert_string_equal(s, "docker.io/library/busybox:latest");
    free(s);
    s = oci_ref_name(&r);
    assert_string_equal(s, "docker.io/library/busybox");
    free(s);
    s = oci_ref_with_digest(&r, "sha256:" D64);
    assert_string_equal(s, "docker.io/library/busybox@sha256:" D64);
    free(s);
    assert_string_equal(oci_ref_manifest_id(&r), "latest");
    oci_ref_free(&r);
    assert_int_equal(oci_ref_parse("127.0.0.1:5000/a:v1@sha256:" D64, &r, &err), 0);
    assert_string_equal(oci_ref_manifest_id(&r), "sha256:" D64);
    s = oci_ref_string(&r);
    assert_string_equal(s, "127.0.0.1:5000/a:v1@sha256:" D64);
    free(s);
    oci_ref_free(&r);
    oci_ref_free(&r); /* idempotent */
}

static void test_loopback(void **state)
{
    (void)state;
    assert_true(oci_registry_is_loopback("localhost"));
    assert_true(oci_registry_is_loopback("localhost:5000"));
    assert_true(oci_registry_is_loopback("127.0.0.1:5000"));
    assert_true(oci_registry_is_loopback("127.1.2.3"));
    assert_true(oci_registry_is_loopback("[::1]:5000"));
    assert_true(oci_registry_is_loopback("[::1]"));
    assert_false(oci_registry_is_loopback("127.example.com"));
    assert_false(oci_registry_is_loopback("quay.io"));
    assert_false(oci_registry_is_loopback("localhost.example.com"));
    assert_false(oci_registry_is_loopback("[::2]:5000"));
    assert_false(oci_registry_is_loopback("10.0.0.1:5000"));
}

/* ---------------------------------------------------------------- digests */

static void test_digest_vectors(void **state)
{
    (void)state;
    char d[OCI_DIGEST_BUFSZ];
    assert_int_equal(oci_sha256_buf("", 0, d), 0);
    assert_string_equal(d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_int_equal(oci_sha256_buf("abc", 3, d), 0);
    assert_string_equal(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* streaming in pieces gives the same as one buffer */
    const char *msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    oci_sha256 *h = oci_sha256_new();
    assert_non_null(h);
    for (size_t i = 0; i < strlen(msg); i += 5)
        assert_int_equal(oci_sha256_update(h, msg + i, strlen(msg + i) < 5 ? strlen(msg + i) : 5), 0);
    assert_int_equal(oci_sha256_final(h, d), 0);
    assert_int_equal(oci_sha256_final(h, d), -1); /* only once */
    oci_sha256_free(h);
    assert_string_equal(d, "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    char path[] = "/tmp/oci-digest-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc", 3), 3);
    close(fd);
    uint64_t size = 0;
    olm_error err;
    assert_int_equal(oci_sha256_file(path, d, &size, &err), 0);
    assert_string_equal(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(size, 3);
    unlink(path);
    assert_int_equal(oci_sha256_file(path, d, &size, &err), -1);
    assert_non_null(strstr(err.msg, path));
}

static void test_digest_validate(void **state)
{
    (void)state;
    olm_error err;
    assert_int_equal(oci_digest_validate("sha256:" D64, &err), 0);
    assert_int_equal(oci_digest_validate("sha256:" D64 "0", &err), -1);
    assert_int_equal(oci_digest_validate("sha512:" D64, &err), -1);
    assert_int_equal(oci_digest_validate("sha256:zz", &err), -1);
    assert_int_equal(oci_digest_validate(NULL, &err), -1);
}

/* ---------------------------------------------------------------- layers */

struct tree {
    char root[64];
};

static void put_file(const char *root, const char *rel, const char *content, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    assert_int_equal(chmod(p, mode), 0);
}

static int make_tree(void **state)
{
    struct tree *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    strcpy(t->root, "/tmp/oci-tree-XXXXXX");
    if (!mkdtemp(t->root))
        return -1;
    char p[512];
    snprintf(p, sizeof p, "%s/pkg", t->root);
    mkdir(p, 0700); /* odd mode on purpose: the layer normalises it */
    snprintf(p, sizeof p, "%s/pkg/sub", t->root);
    mkdir(p, 0755);
    put_file(t->root, "b.json", "{\"schema\":\"olm.package\"}\n", 0600);
    put_file(t->root, "pkg/catalog.yaml", "schema: olm.package\nname: pkg\n", 0664);
    put_file(t->root, "pkg/sub/run.sh", "#!/bin/sh\n", 0700);
    put_file(t->root, "a.txt", "hello\n", 0644);
    snprintf(p, sizeof p, "%s/link", t->root);
    if (symlink("a.txt", p) != 0)
        return -1;
    *state = t;
    return 0;
}

static int remove_tree(void **state)
{
    struct tree *t = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
    int rc = system(cmd);
    free(t);
    return rc == 0 ? 0 : -1;
}

struct listed {
    char name[128];
    mode_t type, perm;
    int64_t uid, gid, mtime, size;
    char link[64];
    int has_xattr;
};

/* Reads the gzip'd tar from the layer's file; returns the number of entries. */
static size_t list_layer(oci_layer *l, struct listed *out, size_t max)
{
    assert_int_equal(fseek(l->blob.file, 0, SEEK_SET), 0);
    unsigned char *buf = malloc(l->blob.size);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, l->blob.size, l->blob.file), l->blob.size);
    /* the blob digest is over exactly these bytes */
    char d[OCI_DIGEST_BUFSZ];
    assert_int_equal(oci_sha256_buf(buf, l->blob.size, d), 0);
    assert_string_equal(d, l->blob.digest);
    /* and the gzip member carries no timestamp (bytes 4..7 of the header) */
    assert_int_equal(buf[0], 0x1f);
    assert_int_equal(buf[1], 0x8b);
    assert_int_equal(buf[4] | buf[5] | buf[6] | buf[7], 0);

    struct archive *a = archive_read_new();
    assert_non_null(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    assert_int_equal(archive_read_open_memory(a, buf, l->blob.size), ARCHIVE_OK);
    struct archive_entry *e;
    size_t n = 0;
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
        assert_true(n < max);
        struct listed *x = &out[n++];
        snprintf(x->name, sizeof x->name, "%s", archive_entry_pathname(e));
        x->type = archive_entry_filetype(e);
        x->perm = archive_entry_perm(e);
        x->uid = archive_entry_uid(e);
        x->gid = archive_entry_gid(e);
        x->mtime = archive_entry_mtime(e);
        x->size = archive_entry_size(e);
        x->has_xattr = archive_entry_xattr_count(e) > 0;
        snprintf(x->link, sizeof x->link, "%s",
                 archive_entry_symlink(e) ? archive_entry_symlink(e) : "");
    }
    assert_int_equal(archive_read_free(a), ARCHIVE_OK);
    free(buf);
    return n;
}

static void test_layer_deterministic(void **state)
{
    struct tree *t = *state;
    oci_layer l1, l2;
    olm_error err;
    assert_int_equal(oci_layer_from_dir(t->root, NULL, &l1, &err), 0);
    assert_int_equal(oci_layer_from_dir(t->root, NULL, &l2, &err), 0);
    assert_string_equal(l1.blob.digest, l2.blob.digest);
    assert_string_equal(l1.diff_id, l2.diff_id);
    assert_string_not_equal(l1.blob.digest, l1.diff_id);
    assert_string_equal(l1.blob.media_type, OCI_MT_LAYER_GZIP);
    assert_int_equal(l1.entries, 7);
    assert_true(l1.tar_size > l1.blob.size);
    /* touching a file's mtime changes nothing */
    oci_layer_free(&l2);
    assert_int_equal(system("sleep 1"), 0);
    put_file(t->root, "a.txt", "hello\n", 0644);
    assert_int_equal(oci_layer_from_dir(t->root, NULL, &l2, &err), 0);
    assert_string_equal(l1.blob.digest, l2.blob.digest);
    oci_layer_free(&l2);
    /* changing content does */
    put_file(t->root, "a.txt", "hello!\n", 0644);
    assert_int_equal(oci_layer_from_dir(t->root, NULL, &l2, &err), 0);
    assert_string_not_equal(l1.blob.digest, l2.blob.digest);
    put_file(t->root, "a.txt", "hello\n", 0644);
    oci_layer_free(&l1);
    oci_layer_free(&l2);
}

static void test_layer_entries(void **state)
{
    struct tree *t = *state;
    oci_layer l;
    olm_error err;
    assert_int_equal(oci_layer_from_dir(t->root, NULL, &l, &err), 0);
    struct listed e[16];
    size_t n = list_layer(&l, e, 16);
    static const char *names[] = {"a.txt", "b.json", "link", "pkg/", "pkg/catalog.yaml",
                                  "pkg/sub/", "pkg/sub/run.sh"};
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(e[i].name, names[i]);
        assert_int_equal(e[i].uid, 0);
        assert_int_equal(e[i].gid, 0);
        assert_int_equal(e[i].mtime, 0);
        assert_false(e[i].has_xattr);
    }
    assert_int_equal(e[0].type, AE_IFREG);
    assert_int_equal(e[0].perm, 0644);
    assert_int_equal(e[0].size, 6);
    assert_int_equal(e[1].perm, 0644); /* was 0600 */
    assert_int_equal(e[2].type, AE_IFLNK);
    assert_string_equal(e[2].link, "a.txt");
    assert_int_equal(e[3].type, AE_IFDIR);
    assert_int_equal(e[3].perm, 0755); /* was 0700 */
    assert_int_equal(e[6].perm, 0755); /* executable */
    oci_layer_free(&l);
}

static void test_layer_prefix(void **state)
{
    struct tree *t = *state;
    oci_layer l;
    olm_error err;
    assert_int_equal(oci_layer_from_dir(t->root, "/configs/", &l, &err), 0);
    struct listed e[16];
    size_t n = list_layer(&l, e, 16);
    assert_int_equal(n, 8);
    assert_string_equal(e[0].name, "configs/");
    assert_int_equal(e[0].type, AE_IFDIR);
    assert_string_equal(e[1].name, "configs/a.txt");
    assert_string_equal(e[7].name, "configs/pkg/sub/run.sh");
    oci_layer_free(&l);

    assert_int_equal(oci_layer_from_dir(t->root, "a/b", &l, &err), 0);
    n = list_layer(&l, e, 16);
    assert_int_equal(n, 9);
    assert_string_equal(e[0].name, "a/");
    assert_string_equal(e[1].name, "a/b/");
    assert_string_equal(e[2].name, "a/b/a.txt");
    oci_layer_free(&l);

    assert_int_equal(oci_layer_from_dir(t->root, "../x", &l, &err), -1);
    assert_non_null(strstr(err.msg, ".."));
}

static void test_layer_errors(void **state)
{
    struct tree *t = *state;
    oci_layer l;
    olm_error err;
    assert_int_equal(oci_layer_from_dir("/nonexistent/dir", NULL, &l, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/dir"));
    char p[512];
    snprintf(p, sizeof p, "%s/a.txt", t->root);
    assert_int_equal(oci_layer_from_dir(p, NULL, &l, &err), -1);
    assert_non_null(strstr(err.msg, "not a directory"));
    /* a fifo cannot go into a layer */
    snprintf(p, sizeof p, "%s/fifo", t->root);
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(oci_layer_from_dir(t->root, NULL, &l, &err), -1);
    assert_non_null(strstr(err.msg, "fifo"));
    assert_null(l.blob.file);
    unlink(p);
}

/* ---------------------------------------------------------------- config and manifest */

static void test_config_json(void **state)
{
    (void)state;
    oci_label labels[] = {{"b", "2"}, {"a", "1"}, {"b", "3"}};
    olm_error err;
    char *s = oci_image_config_json(labels, 3, NULL, "sha256:" D64, "olmv1 test", &err);
    assert_non_null(s);
    json_t *j = json_loads(s, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "architecture")), "amd64");
    assert_string_equal(json_string_value(json_object_get(j, "os")), "linux");
    json_t *lb = json_object_get(json_object_get(j, "config"), "Labels");
    assert_string_equal(json_string_value(json_object_get(lb, "a")), "1");
    assert_string_equal(json_string_value(json_object_get(lb, "b")), "3"); /* later wins */
    json_t *rootfs = json_object_get(j, "rootfs");
    assert_string_equal(json_string_value(json_object_get(rootfs, "type")), "layers");
    assert_string_equal(json_string_value(json_array_get(json_object_get(rootfs, "diff_ids"), 0)),
                        "sha256:" D64);
    json_t *hist = json_array_get(json_object_get(j, "history"), 0);
    assert_string_equal(json_string_value(json_object_get(hist, "created_by")), "olmv1 test");
    json_decref(j);
    /* compact, sorted keys: stable bytes */
    const char *head = "{\"architecture\":\"amd64\",\"config\":{\"Labels\":{\"a\":\"1\",\"b\":\"3\"}}";
    assert_int_equal(strncmp(s, head, strlen(head)), 0);
    char *s2 = oci_image_config_json(labels, 3, NULL, "sha256:" D64, "olmv1 test", &err);
    assert_string_equal(s, s2);
    free(s);
    free(s2);
}

/* User, Entrypoint and Env land in config.config; without them the bytes are as before. */
static void test_config_json_run(void **state)
{
    (void)state;
    oci_label label = {"a", "1"};
    const char *ep[] = {"/usr/local/bin/catalogd", "--x"};
    const char *env[] = {"PATH=/usr/local/bin"};
    oci_run_config run = {.user = "65532:65532", .entrypoint = ep, .nentrypoint = 2, .env = env, .nenv = 1};
    olm_error err;
    char *s = oci_image_config_json(&label, 1, &run, "sha256:" D64, "t", &err);
    assert_non_null(s);
    const char *head = "{\"architecture\":\"amd64\",\"config\":{\"Entrypoint\":[\"/usr/local/bin/catalogd\","
                       "\"--x\"],\"Env\":[\"PATH=/usr/local/bin\"],\"Labels\":{\"a\":\"1\"},\"User\":\"65532:65532\"}";
    assert_int_equal(strncmp(s, head, strlen(head)), 0);
    oci_run_config empty = {0};
    char *a = oci_image_config_json(&label, 1, &empty, "sha256:" D64, "t", &err);
    char *b = oci_image_config_json(&label, 1, NULL, "sha256:" D64, "t", &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    assert_non_null(strstr(b, "\"config\":{\"Labels\":{\"a\":\"1\"}}"));
    free(s);
    free(a);
    free(b);
}

static void test_manifest_json(void **state)
{
    (void)state;
    oci_blob cfg = {.media_type = OCI_MT_CONFIG, .digest = "sha256:" D64, .size = 123};
    oci_blob layer = {.media_type = OCI_MT_LAYER_GZIP,
                      .digest = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                      .size = 4567};
    const oci_blob *layers[] = {&layer};
    olm_error err;
    char *s = oci_image_manifest_json(&cfg, layers, 1, &err);
    assert_non_null(s);
    json_t *j = json_loads(s, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "schemaVersion")), 2);
    assert_string_equal(json_string_value(json_object_get(j, "mediaType")), OCI_MT_MANIFEST);
    json_t *c = json_object_get(j, "config");
    assert_string_equal(json_string_value(json_object_get(c, "mediaType")),
                        "application/vnd.oci.image.config.v1+json");
    assert_string_equal(json_string_value(json_object_get(c, "digest")), "sha256:" D64);
    assert_int_equal(json_integer_value(json_object_get(c, "size")), 123);
    json_t *l = json_array_get(json_object_get(j, "layers"), 0);
    assert_string_equal(json_string_value(json_object_get(l, "mediaType")),
                        "application/vnd.oci.image.layer.v1.tar+gzip");
    assert_int_equal(json_integer_value(json_object_get(l, "size")), 4567);
    assert_int_equal(json_array_size(json_object_get(j, "layers")), 1);
    json_decref(j);
    free(s);
}

static void test_image_build(void **state)
{
    struct tree *t = *state;
    oci_label labels[] = {{OCI_LABEL_CATALOG_CONFIGS, "/configs"}};
    oci_image img, img2;
    olm_error err;
    assert_int_equal(oci_image_build(t->root, "configs", labels, 1, NULL, "x", &img, &err), 0);
    assert_int_equal(oci_image_build(t->root, "configs", labels, 1, NULL, "x", &img2, &err), 0);
    assert_string_equal(img.manifest_digest, img2.manifest_digest);
    char d[OCI_DIGEST_BUFSZ];
    assert_int_equal(oci_sha256_buf(img.config.data, img.config.size, d), 0);
    assert_string_equal(d, img.config.digest);
    assert_non_null(strstr(img.config_json, img.layer.diff_id));
    assert_non_null(strstr(img.manifest_json, img.config.digest));
    assert_non_null(strstr(img.manifest_json, img.layer.blob.digest));
    assert_non_null(strstr(img.config_json, "\"operators.operatorframework.io.index.configs.v1\":\"/configs\""));
    oci_image_free(&img);
    oci_image_free(&img2);
}

/* ---------------------------------------------------------------- bundles and labels */

static void test_bundle_labels(void **state)
{
    struct tree *t = *state;
    char p[512];
    oci_labels labels = {0};
    olm_error err;
    assert_int_equal(oci_bundle_labels(t->root, &labels, &err), -1);
    assert_non_null(strstr(err.msg, "manifests/"));
    snprintf(p, sizeof p, "%s/manifests", t->root);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(oci_bundle_labels(t->root, &labels, &err), -1);
    assert_non_null(strstr(err.msg, "metadata/annotations.yaml"));
    snprintf(p, sizeof p, "%s/metadata", t->root);
    assert_int_equal(mkdir(p, 0755), 0);
    put_file(t->root, "metadata/annotations.yaml",
             "annotations:\n"
             "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n"
             "  operators.operatorframework.io.bundle.package.v1: \"my-op\"\n"
             "  operators.operatorframework.io.bundle.channels.v1: stable,fast\n"
             "  operators.operatorframework.io.bundle.channel.default.v1: stable\n",
             0644);
    oci_labels_free(&labels);
    assert_int_equal(oci_bundle_labels(t->root, &labels, &err), 0);
    assert_string_equal(oci_labels_get(&labels, OCI_LABEL_BUNDLE_MEDIATYPE), "registry+v1");
    assert_string_equal(oci_labels_get(&labels, OCI_LABEL_BUNDLE_MANIFESTS), "manifests/");
    assert_string_equal(oci_labels_get(&labels, OCI_LABEL_BUNDLE_METADATA), "metadata/");
    assert_string_equal(oci_labels_get(&labels, OCI_LABEL_BUNDLE_PACKAGE), "my-op");
    assert_string_equal(oci_labels_get(&labels, OCI_LABEL_BUNDLE_CHANNELS), "stable,fast");
    assert_string_equal(oci_labels_get(&labels, OCI_LABEL_BUNDLE_DEFAULT_CHANNEL), "stable");
    assert_int_equal(labels.len, 6);
    oci_labels_free(&labels);

    put_file(t->root, "metadata/annotations.yaml",
             "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: plain+v0\n", 0644);
    assert_int_equal(oci_bundle_labels(t->root, &labels, &err), -1);
    assert_non_null(strstr(err.msg, "plain+v0"));
    oci_labels_free(&labels);
    put_file(t->root, "metadata/annotations.yaml", "foo: [\n", 0644);
    assert_int_equal(oci_bundle_labels(t->root, &labels, &err), -1);
    assert_non_null(strstr(err.msg, "annotations.yaml"));
    oci_labels_free(&labels);
    put_file(t->root, "metadata/annotations.yaml", "other: 1\n", 0644);
    assert_int_equal(oci_bundle_labels(t->root, &labels, &err), -1);
    assert_non_null(strstr(err.msg, "annotations:"));
    oci_labels_free(&labels);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/manifests' '%s/metadata'", t->root, t->root);
    assert_int_equal(system(cmd), 0);
}

static void test_labels_kv(void **state)
{
    (void)state;
    oci_labels l = {0};
    olm_error err;
    assert_int_equal(oci_labels_set_kv(&l, "a=b=c", &err), 0);
    assert_string_equal(oci_labels_get(&l, "a"), "b=c");
    assert_int_equal(oci_labels_set_kv(&l, "e=", &err), 0);
    assert_string_equal(oci_labels_get(&l, "e"), "");
    assert_int_equal(oci_labels_set_kv(&l, "a=x", &err), 0);
    assert_string_equal(oci_labels_get(&l, "a"), "x");
    assert_int_equal(l.len, 2);
    assert_int_equal(oci_labels_set_kv(&l, "=x", &err), -1);
    assert_int_equal(oci_labels_set_kv(&l, "novalue", &err), -1);
    assert_non_null(strstr(err.msg, "KEY=VALUE"));
    for (int i = 0; i < 40; i++) {
        char kv[32];
        snprintf(kv, sizeof kv, "k%d=v", i);
        assert_int_equal(oci_labels_set_kv(&l, kv, &err), 0);
    }
    assert_int_equal(l.len, 42);
    oci_labels_free(&l);
}

/* ---------------------------------------------------------------- auth */

static void test_challenge_bearer(void **state)
{
    (void)state;
    oci_auth_challenge c;
    olm_error err;
    assert_int_equal(oci_auth_parse_challenge(
                         "Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
                         "scope=\"repository:samalba/my-app:pull,push\"",
                         &c, &err),
                     0);
    assert_string_equal(c.scheme, "bearer");
    assert_string_equal(c.realm, "https://auth.docker.io/token");
    assert_string_equal(c.service, "registry.docker.io");
    assert_string_equal(c.scope, "repository:samalba/my-app:pull,push");
    oci_auth_challenge_free(&c);

    /* spaces, case, an escaped quote, an unknown param, no scope */
    assert_int_equal(oci_auth_parse_challenge(
                         "bearer  Realm = \"https://q.io/auth?x=\\\"1\\\"\" , error=\"invalid_token\", "
                         "service=quay.io",
                         &c, &err),
                     0);
    assert_string_equal(c.scheme, "bearer");
    assert_string_equal(c.realm, "https://q.io/auth?x=\"1\"");
    assert_string_equal(c.service, "quay.io");
    assert_null(c.scope);
    oci_auth_challenge_free(&c);
}

static void test_challenge_multi_and_basic(void **state)
{
    (void)state;
    oci_auth_challenge c;
    olm_error err;
    assert_int_equal(oci_auth_parse_challenge("Basic realm=\"Registry Realm\"", &c, &err), 0);
    assert_string_equal(c.scheme, "basic");
    assert_string_equal(c.realm, "Registry Realm");
    oci_auth_challenge_free(&c);
    /* several challenges: Bearer is preferred wherever it is */
    assert_int_equal(oci_auth_parse_challenge("Basic realm=\"r\", Bearer realm=\"https://t/x\",service=\"s\"",
                                              &c, &err),
                     0);
    assert_string_equal(c.scheme, "bearer");
    assert_string_equal(c.realm, "https://t/x");
    assert_string_equal(c.service, "s");
    oci_auth_challenge_free(&c);
    assert_int_equal(oci_auth_parse_challenge("Negotiate, Basic realm=\"r\"", &c, &err), 0);
    assert_string_equal(c.scheme, "basic");
    oci_auth_challenge_free(&c);
    assert_int_equal(oci_auth_parse_challenge("Basic YWJjOmRlZg==", &c, &err), 0);
    assert_string_equal(c.scheme, "basic");
    oci_auth_challenge_free(&c);
    /* errors */
    assert_int_equal(oci_auth_parse_challenge("", &c, &err), -1);
    assert_int_equal(oci_auth_parse_challenge("Bearer service=\"x\"", &c, &err), -1);
    assert_non_null(strstr(err.msg, "realm"));
    assert_int_equal(oci_auth_parse_challenge("\"quoted\"", &c, &err), -1);
    assert_null(c.realm);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_credentials(void **state)
{
    (void)state;
    char path[] = "/tmp/oci-auth-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    /* "dXNlcjpwYTpzcw==" is "user:pa:ss" (the password keeps its colon) */
    write_text(path, "{\"auths\":{"
                     "\"https://index.docker.io/v1/\":{\"auth\":\"ZDpk\"},"
                     "\"quay.io\":{\"auth\":\"dXNlcjpwYTpzcw==\"},"
                     "\"http://127.0.0.1:5000\":{\"username\":\"u\",\"password\":\"p\"}}}");
    oci_credentials c;
    olm_error err;
    assert_int_equal(oci_credentials_from_file(path, "quay.io", &c, &err), 0);
    assert_string_equal(c.username, "user");
    assert_string_equal(c.password, "pa:ss");
    oci_credentials_free(&c);
    assert_int_equal(oci_credentials_from_file(path, "docker.io", &c, &err), 0);
    assert_string_equal(c.username, "d");
    assert_string_equal(c.password, "d");
    oci_credentials_free(&c);
    assert_int_equal(oci_credentials_from_file(path, "127.0.0.1:5000", &c, &err), 0);
    assert_string_equal(c.username, "u");
    oci_credentials_free(&c);
    assert_int_equal(oci_credentials_from_file(path, "ghcr.io", &c, &err), 0);
    assert_null(c.username);
    assert_int_equal(oci_credentials_from_file(NULL, "ghcr.io", &c, &err), 0);
    assert_null(c.username);

    write_text(path, "{\"auths\":{\"quay.io\":{\"auth\":\"bm9jb2xvbg==\"}}}"); /* "nocolon" */
    assert_int_equal(oci_credentials_from_file(path, "quay.io", &c, &err), -1);
    assert_non_null(strstr(err.msg, "username:password"));
    write_text(path, "{not json");
    assert_int_equal(oci_credentials_from_file(path, "quay.io", &c, &err), -1);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
    assert_int_equal(oci_credentials_from_file(path, "quay.io", &c, &err), -1);
}

/* containers-auth.json keys scoped to a namespace or repository: the most specific key that
 * covers the repository wins; a URL key is the host alone. */
static void test_credentials_scoped_to_a_repository(void **state)
{
    (void)state;
    char path[] = "/tmp/oci-auth-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_text(path, "{\"auths\":{"
                     "\"mirror.local:5000\":{\"username\":\"host\",\"password\":\"p\"},"
                     "\"mirror.local:5000/ocp/release\":{\"username\":\"repo\",\"password\":\"p\"},"
                     "\"mirror.local:5000/ocp\":{\"username\":\"ns\",\"password\":\"p\"},"
                     "\"only.local/team\":{\"username\":\"team\",\"password\":\"p\"},"
                     "\"https://url.local/v1/\":{\"username\":\"url\",\"password\":\"p\"}}}");
    struct {
        const char *name, *user; /* NULL: no credentials */
    } cases[] = {
        {"mirror.local:5000", "host"},
        {"mirror.local:5000/other/app", "host"},
        {"mirror.local:5000/ocp/operators", "ns"},
        {"mirror.local:5000/ocp", "ns"},
        {"mirror.local:5000/ocp/release", "repo"},
        {"mirror.local:5000/ocp/release/sub", "repo"},
        {"mirror.local:5000/ocpx/app", "host"}, /* a path boundary, not a string prefix */
        {"only.local/team/app", "team"},
        {"only.local/other", NULL},
        {"only.local", NULL},
        {"url.local/any/repo", "url"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        oci_credentials c;
        olm_error err;
        assert_int_equal(oci_credentials_from_file(path, cases[i].name, &c, &err), 0);
        const char *got = c.username;
        if ((got == NULL) != (cases[i].user == NULL) || (got && strcmp(got, cases[i].user) != 0))
            fail_msg("%s: expected %s, got %s", cases[i].name, cases[i].user ? cases[i].user : "(none)",
                     got ? got : "(none)");
        oci_credentials_free(&c);
    }
    unlink(path);
}

/* ---------------------------------------------------------------- registry errors */

static void test_registry_error_format(void **state)
{
    (void)state;
    char out[256];
    const char *body = "{\"errors\":[{\"code\":\"NAME_UNKNOWN\",\"message\":\"repository name not known "
                       "to registry\",\"detail\":{\"name\":\"foo\"}}]}\n";
    oci_format_registry_error(404, body, strlen(body), out, sizeof out);
    assert_string_equal(out, "404 NAME_UNKNOWN: repository name not known to registry");
    body = "{\"errors\":[{\"code\":\"DENIED\",\"message\":\"no\"},{\"code\":\"UNAUTHORIZED\"}]}";
    oci_format_registry_error(403, body, strlen(body), out, sizeof out);
    assert_string_equal(out, "403 DENIED: no; UNAUTHORIZED");
    body = "<html>\r\n<body>Bad gateway</body></html>";
    oci_format_registry_error(502, body, strlen(body), out, sizeof out);
    assert_string_equal(out, "502 <html>");
    oci_format_registry_error(404, NULL, 0, out, sizeof out);
    assert_string_equal(out, "404 Not Found");
    oci_format_registry_error(418, "", 0, out, sizeof out);
    assert_string_equal(out, "418 unexpected status");
    /* never overflows */
    char tiny[8];
    oci_format_registry_error(404, "{\"errors\":[{\"code\":\"NAME_UNKNOWN\",\"message\":\"x\"}]}", 46,
                              tiny, sizeof tiny);
    assert_true(strlen(tiny) < sizeof tiny);
}

static void test_registry_scheme(void **state)
{
    (void)state;
    olm_error err;
    oci_registry_opts opts = {.insecure_hosts = "myreg.local:5000, other.io"};
    struct {
        const char *host;
        const char *scheme;
    } cases[] = {{"127.0.0.1:5000", "http"},    {"localhost:5000", "http"},
                 {"[::1]:5000", "http"},        {"quay.io", "https"},
                 /* insecure: TLS first (unverified); plain HTTP only once TLS fails to
                  * connect (test_oci_registry_hostile) */
                 {"myreg.local:5000", "https"}, {"myreg.local:5001", "https"},
                 {"other.io:443", "https"},     {"docker.io", "https"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        oci_registry *r = oci_registry_new(cases[i].host, &opts, &err);
        assert_non_null(r);
        if (strcmp(oci_registry_scheme(r), cases[i].scheme) != 0)
            fail_msg("%s: expected %s", cases[i].host, cases[i].scheme);
        oci_registry_free(r);
    }
    opts.insecure = 1;
    oci_registry *r = oci_registry_new("quay.io", &opts, &err);
    assert_string_equal(oci_registry_scheme(r), "https");
    oci_registry_free(r);
}

/* A registry that is not listening gives a transport error naming the URL. */
static void test_registry_unreachable(void **state)
{
    (void)state;
    olm_error err;
    oci_registry *r = oci_registry_new("127.0.0.1:1", NULL, &err);
    assert_non_null(r);
    assert_int_equal(oci_blob_exists(r, "x", "sha256:" D64, &err), -1);
    assert_non_null(strstr(err.msg, "http://127.0.0.1:1/v2/x/blobs/sha256:" D64));
    oci_registry_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ref_table),
        cmocka_unit_test(test_ref_format),
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_digest_vectors),
        cmocka_unit_test(test_digest_validate),
        cmocka_unit_test_setup_teardown(test_layer_deterministic, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(test_layer_entries, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(test_layer_prefix, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(test_layer_errors, make_tree, remove_tree),
        cmocka_unit_test(test_config_json),
        cmocka_unit_test(test_config_json_run),
        cmocka_unit_test(test_manifest_json),
        cmocka_unit_test_setup_teardown(test_image_build, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(test_bundle_labels, make_tree, remove_tree),
        cmocka_unit_test(test_labels_kv),
        cmocka_unit_test(test_challenge_bearer),
        cmocka_unit_test(test_challenge_multi_and_basic),
        cmocka_unit_test(test_credentials),
        cmocka_unit_test(test_credentials_scoped_to_a_repository),
        cmocka_unit_test(test_registry_error_format),
        cmocka_unit_test(test_registry_scheme),
        cmocka_unit_test(test_registry_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

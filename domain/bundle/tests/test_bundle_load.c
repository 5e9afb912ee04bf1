/* bundle_load: a registry+v1 bundle directory read into memory (bundle.h).  Each test writes
 * the bundle it needs into a temporary directory: which files are read and in what order,
 * which objects land where, the metadata/properties.yaml merge into the CSV's olm.properties
 * (encoded as upstream's encoding/json does), and the error of every refused layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"

static const char CSV[] = "apiVersion: operators.coreos.com/v1alpha1\n"
                          "kind: ClusterServiceVersion\n"
                          "metadata:\n"
                          "  name: pkg.v1.0.0\n"
                          "spec:\n"
                          "  installModes:\n"
                          "  - {type: AllNamespaces, supported: true}\n";
static const char ANNOTATIONS[] = "annotations:\n  operators.operatorframework.io.bundle.package.v1: pkg\n";

/* ------------------------------------------------------------ a bundle on disk */

typedef struct dir {
    char path[64];
} dir;

static void put(dir *d, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", d->path, rel);
    for (char *s = strchr(p + strlen(d->path) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    dir *d = calloc(1, sizeof *d);
    assert_non_null(d);
    snprintf(d->path, sizeof d->path, "/tmp/olm-bundle-test-XXXXXX");
    assert_non_null(mkdtemp(d->path));
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    dir *d = *state;
    nftw(d->path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
    return 0;
}

/* A minimal valid bundle: annotations and the CSV. */
static void minimal(dir *d)
{
    put(d, "metadata/annotations.yaml", ANNOTATIONS);
    put(d, "manifests/csv.yaml", CSV);
}

static const char *load_error(dir *d)
{
    static olm_error err;
    bundle b = {0};
    if (bundle_load_dir(d->path, &b, &err) == 0) {
        bundle_free(&b);
        return "ok";
    }
    assert_null(b.csv); /* a failure leaves nothing behind */
    return err.msg;
}

static const char *olm_properties(const bundle *b)
{
    /* a key with a dot: not reachable by bundle_json_str's path */
    const char *v = json_string_value(json_object_get(bundle_json_path(b->csv, "metadata.annotations"), "olm.properties"));
    return v ? v : "";
}

/* ------------------------------------------------------------ what is read, and where it goes */

static void test_objects_sorted_by_file_and_split_by_kind(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "manifests/b.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: second}\n---\n"
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.x.io}\n");
    put(d, "manifests/a.json", "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"first\"}}");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_string_equal(b.package_name, "pkg");
    assert_string_equal(bundle_json_str(b.csv, "metadata.name"), "pkg.v1.0.0");
    assert_int_equal(json_array_size(b.crds), 1);
    assert_string_equal(bundle_json_str(json_array_get(b.crds, 0), "metadata.name"), "ws.x.io");
    /* fs.ReadDir order: a.json before b.yaml, each file in document order. */
    assert_int_equal(json_array_size(b.others), 2);
    assert_string_equal(bundle_json_str(json_array_get(b.others, 0), "metadata.name"), "first");
    assert_string_equal(bundle_json_str(json_array_get(b.others, 1), "metadata.name"), "second");
    bundle_free(&b);
    assert_null(b.csv);
    assert_null(b.package_name);
}

static void test_last_csv_wins(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "manifests/z.yaml", "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n"
                               "metadata: {name: pkg.v2.0.0}\n");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_string_equal(bundle_json_str(b.csv, "metadata.name"), "pkg.v2.0.0");
    assert_int_equal(json_array_size(b.others), 0); /* the first CSV is dropped, not kept as an object */
    bundle_free(&b);
}

static void test_lists_are_flattened(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "manifests/lists.yaml",
        "kind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
        "- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: c.x.io}}\n"
        "---\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"
        "---\napiVersion: x.io/v1\nkind: ShoppingList\nmetadata: {name: not-a-list}\nitems: none\n");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_int_equal(json_array_size(b.crds), 1);
    assert_int_equal(json_array_size(b.others), 3);
    assert_string_equal(bundle_json_str(json_array_get(b.others, 0), "metadata.name"), "a");
    assert_string_equal(bundle_json_str(json_array_get(b.others, 1), "metadata.name"), "b");
    /* A kind ending in "List" without an items array is an object like any other. */
    assert_string_equal(bundle_json_str(json_array_get(b.others, 2), "kind"), "ShoppingList");
    bundle_free(&b);
}

/* ------------------------------------------------------------ refused layouts */

static void test_list_item_not_an_object(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "manifests/l.yaml", "kind: List\nitems:\n- {kind: ConfigMap, metadata: {name: a}}\n- 7\n");
    assert_string_equal(load_error(d), "manifests/l.yaml: list item 1 is not an object");
}

static void test_object_without_kind(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "manifests/x.yaml", "apiVersion: v1\nmetadata: {name: nameless-kind}\n");
    assert_string_equal(load_error(d), "manifests/x.yaml: object \"nameless-kind\" is missing \"kind\"");
}

static void test_subdirectory_refused(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "manifests/nested/cm.yaml", "kind: ConfigMap\n");
    assert_string_equal(load_error(d), "subdirectories are not allowed within the \"manifests\" directory of the "
                                       "bundle image filesystem: found \"manifests/nested\"");
}

static void test_no_csv(void **state)
{
    dir *d = *state;
    put(d, "metadata/annotations.yaml", ANNOTATIONS);
    put(d, "manifests/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
    assert_string_equal(load_error(d), "no ClusterServiceVersion found in \"manifests\"");
}

static void test_no_manifests_dir(void **state)
{
    dir *d = *state;
    put(d, "metadata/annotations.yaml", ANNOTATIONS);
    const char *e = load_error(d);
    if (strncmp(e, "open manifests: ", 16) != 0)
        fail_msg("%s", e);
}

static void test_annotations(void **state)
{
    dir *d = *state;
    put(d, "manifests/csv.yaml", CSV);
    const char *e = load_error(d); /* missing */
    if (strncmp(e, "error reading bundle annotations: ", 34) != 0)
        fail_msg("%s", e);
    put(d, "metadata/annotations.yaml", "annotations: [a, b]\n");
    assert_string_equal(load_error(d),
                        "error reading bundle annotations: metadata/annotations.yaml: annotations must be a map");
    /* No package annotation: loaded, the package unnamed. */
    put(d, "metadata/annotations.yaml", "annotations:\n  other: x\n");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_string_equal(b.package_name, "");
    bundle_free(&b);
}

/* ------------------------------------------------------------ metadata/properties.yaml */

static void test_properties_appended_as_encoding_json_writes_them(void **state)
{
    dir *d = *state;
    put(d, "metadata/annotations.yaml", ANNOTATIONS);
    put(d, "manifests/csv.yaml", "kind: ClusterServiceVersion\nmetadata:\n  name: x\n  annotations:\n"
                                 "    olm.properties: '[{\"value\":1,\"type\":\"a\"}]'\n");
    put(d, "metadata/properties.yaml", "properties:\n- type: b\n  value: {z: 1, a: \"<x>\"}\n- type: c\n");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    /* Existing entries first, then these; keys sorted, HTML escaped, a missing value null. */
    assert_string_equal(olm_properties(&b), "[{\"type\":\"a\",\"value\":1},{\"type\":\"b\",\"value\":{\"a\":\"\\u003cx\\u003e\","
                                            "\"z\":1}},{\"type\":\"c\",\"value\":null}]");
    bundle_free(&b);
}

static void test_properties_into_a_csv_without_metadata(void **state)
{
    dir *d = *state;
    put(d, "metadata/annotations.yaml", ANNOTATIONS);
    put(d, "manifests/csv.yaml", "kind: ClusterServiceVersion\n");
    put(d, "metadata/properties.yaml", "properties:\n- {type: t, value: v}\n");
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_string_equal(olm_properties(&b), "[{\"type\":\"t\",\"value\":\"v\"}]");
    bundle_free(&b);
}

static void test_properties_absent_or_empty_change_nothing(void **state)
{
    dir *d = *state;
    minimal(d);
    bundle b = {0};
    olm_error err;
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_null(bundle_json_path(b.csv, "metadata.annotations"));
    bundle_free(&b);
    put(d, "metadata/properties.yaml", "properties: []\n");
    assert_int_equal(bundle_load_dir(d->path, &b, &err), 0);
    assert_null(bundle_json_path(b.csv, "metadata.annotations"));
    bundle_free(&b);
}

static void test_properties_refused(void **state)
{
    dir *d = *state;
    minimal(d);
    put(d, "metadata/properties.yaml", "properties: {type: x}\n");
    assert_string_equal(load_error(d), "error reading metadata/properties.yaml: properties must be a list");
    put(d, "metadata/properties.yaml", "properties:\n- {type: t}\n");
    put(d, "manifests/csv.yaml", "kind: ClusterServiceVersion\nmetadata:\n  annotations:\n    olm.properties: '{}'\n");
    assert_string_equal(load_error(d), "error merging metadata/properties.yaml: the CSV annotation olm.properties "
                                       "is not a JSON list: not a list");
}

/* ------------------------------------------------------------ the small readers */

static void test_install_modes(void **state)
{
    (void)state;
    json_t *csv = json_loads("{\"spec\":{\"installModes\":[{\"type\":\"OwnNamespace\",\"supported\":true},"
                             "{\"type\":\"SingleNamespace\",\"supported\":false},"
                             "{\"type\":\"AllNamespaces\",\"supported\":true},"
                             "{\"type\":\"Everywhere\",\"supported\":true},{\"supported\":true}]}}",
                             0, NULL);
    assert_non_null(csv);
    unsigned m = bundle_install_modes(csv);
    assert_int_equal(m, INSTALL_MODE_ALL | INSTALL_MODE_OWN);
    char buf[64];
    bundle_install_modes_format(m, buf, sizeof buf);
    assert_string_equal(buf, "[AllNamespaces OwnNamespace]");
    bundle_install_modes_format(0, buf, sizeof buf);
    assert_string_equal(buf, "[]");
    bundle_install_modes_format(INSTALL_MODE_ALL | INSTALL_MODE_MULTI | INSTALL_MODE_OWN | INSTALL_MODE_SINGLE, buf,
                                sizeof buf);
    assert_string_equal(buf, "[AllNamespaces MultiNamespace OwnNamespace SingleNamespace]");
    char small[8];
    bundle_install_modes_format(m, small, sizeof small); /* cut, never overrun */
    assert_string_equal(small, "[AllNam");
    assert_int_equal(bundle_install_modes(NULL), 0);
    json_decref(csv);
}

static void test_json_path(void **state)
{
    (void)state;
    json_t *o = json_loads("{\"a\":{\"b\":{\"c\":\"x\",\"n\":1}},\"s\":\"top\"}", 0, NULL);
    assert_non_null(o);
    assert_string_equal(bundle_json_str(o, "a.b.c"), "x");
    assert_string_equal(bundle_json_str(o, "s"), "top");
    assert_string_equal(bundle_json_str(o, "a.b.n"), ""); /* not a string */
    assert_string_equal(bundle_json_str(o, "a.b.c.d"), ""); /* through a string */
    assert_null(bundle_json_path(o, "a.x.c"));
    assert_ptr_equal(bundle_json_path(o, "a.b"), json_object_get(json_object_get(o, "a"), "b"));
    assert_string_equal(bundle_json_str(NULL, "a"), "");
    json_decref(o);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_objects_sorted_by_file_and_split_by_kind),
        T(test_last_csv_wins),
        T(test_lists_are_flattened),
        T(test_list_item_not_an_object),
        T(test_object_without_kind),
        T(test_subdirectory_refused),
        T(test_no_csv),
        T(test_no_manifests_dir),
        T(test_annotations),
        T(test_properties_appended_as_encoding_json_writes_them),
        T(test_properties_into_a_csv_without_metadata),
        T(test_properties_absent_or_empty_change_nothing),
        T(test_properties_refused),
        cmocka_unit_test(test_install_modes),
        cmocka_unit_test(test_json_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

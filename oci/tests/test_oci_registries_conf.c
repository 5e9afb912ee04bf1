/* Unit tests for registries.conf v2 (oci_registries_conf) and the TOML reader under it
 * (oci_toml, white-box), and the in-memory pull-secret credentials (oci_auth_store). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci.h"
#include "oci_toml.h"
#include "olm_base64.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static oci_registries_conf *conf_of(const char *text)
{
    olm_error err;
    oci_registries_conf *c = oci_registries_conf_new(&err);
    assert_non_null(c);
    if (oci_registries_conf_add_text(c, text, strlen(text), "test.conf", true, &err) != 0)
        fail_msg("%s", err.msg);
    return c;
}

/* The sources of `ref` as "ref[,insecure][,mirror] | ..." */
static char *sources_of(const oci_registries_conf *c, const char *ref, olm_error *err)
{
    oci_ref r;
    assert_int_equal(oci_ref_parse(ref, &r, err), 0);
    oci_pull_sources s;
    int rc = oci_registries_conf_sources(c, &r, &s, err);
    oci_ref_free(&r);
    if (rc != 0)
        return NULL;
    static char out[2048];
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s.n; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s%s%s", i ? " | " : "", s.v[i].ref,
                              s.v[i].insecure ? ",insecure" : "", s.v[i].mirror ? ",mirror" : "");
    oci_pull_sources_free(&s);
    return out;
}

static void expect_sources(const oci_registries_conf *c, const char *ref, const char *want)
{
    olm_error err;
    char *got = sources_of(c, ref, &err);
    if (!got)
        fail_msg("%s: %s", ref, err.msg);
    assert_string_equal(got, want);
}

static void test_no_config(void **state)
{
    (void)state;
    expect_sources(NULL, "quay.io/ns/app:v1", "quay.io/ns/app:v1");
    oci_registries_conf *c = conf_of("unqualified-search-registries = [\"docker.io\"]\nshort-name-mode = \"enforcing\"\n"
                                     "[aliases]\n\"fedora\" = \"registry.fedoraproject.org/fedora\"\n");
    assert_int_equal(oci_registries_conf_count(c), 0);
    expect_sources(c, "quay.io/ns/app:v1", "quay.io/ns/app:v1");
    oci_registries_conf_free(c);
}

static void test_prefix_matching(void **state)
{
    (void)state;
    oci_registries_conf *c = conf_of("[[registry]]\n"
                                     "prefix = \"example.com/foo\"\n"
                                     "location = \"internal.example.com/bar\"\n"
                                     "[[registry]]\n"
                                     "prefix = \"example.com\"\n"
                                     "location = \"other.example.com\"\n"
                                     "[[registry]]\n"
                                     "location = \"plain.example.com:5000\"\n"
                                     "insecure = true\n");
    /* the longest prefix wins and the rest of the reference follows the location */
    expect_sources(c, "example.com/foo/app:v1", "internal.example.com/bar/app:v1");
    expect_sources(c, "example.com/foo:v1", "internal.example.com/bar:v1");
    expect_sources(c, "example.com/baz/app:v1", "other.example.com/baz/app:v1");
    /* a prefix ends at a boundary: example.com/foobar is not under example.com/foo */
    expect_sources(c, "example.com/foobar/app:v1", "other.example.com/foobar/app:v1");
    expect_sources(c, "example.community/app:v1", "example.community/app:v1");
    /* no prefix: the location is the prefix */
    expect_sources(c, "plain.example.com:5000/app@sha256:" D64, "plain.example.com:5000/app@sha256:" D64 ",insecure");
    oci_registries_conf_free(c);
}

static void test_wildcard(void **state)
{
    (void)state;
    oci_registries_conf *c = conf_of("[[registry]]\n"
                                     "prefix = \"*.example.com\"\n"
                                     "blocked = true\n"
                                     "[[registry]]\n"
                                     "prefix = \"*.ok.example.com\"\n"
                                     "[[registry.mirror]]\n"
                                     "location = \"mirror.local:5000/ok\"\n");
    olm_error err;
    assert_null(sources_of(c, "a.example.com/app:v1", &err));
    assert_non_null(strstr(err.msg, "blocked"));
    assert_non_null(strstr(err.msg, "*.example.com"));
    assert_non_null(strstr(err.msg, "test.conf"));
    /* the longer wildcard wins; without a location the primary is the reference itself */
    expect_sources(c, "x.ok.example.com/ns/app:v1", "mirror.local:5000/ok/ns/app:v1,mirror | x.ok.example.com/ns/app:v1");
    /* the bare domain is not a subdomain of itself */
    expect_sources(c, "example.com/app:v1", "example.com/app:v1");
    oci_registries_conf_free(c);
    /* a wildcard takes no port or path */
    c = oci_registries_conf_new(&err);
    const char *bad = "[[registry]]\nprefix = \"*.example.com/ns\"\n";
    assert_int_equal(oci_registries_conf_add_text(c, bad, strlen(bad), "w.conf", true, &err), -1);
    assert_non_null(strstr(err.msg, "*.example.com"));
    oci_registries_conf_free(c);
}

static void test_mirror_order_and_modes(void **state)
{
    (void)state;
    oci_registries_conf *c = conf_of("[[registry]]\n"
                                     "prefix = \"registry.redhat.io\"\n"
                                     "location = \"registry.redhat.io\"\n"
                                     "[[registry.mirror]]\n"
                                     "location = \"m1.local:5000/rh\"\n"
                                     "[[registry.mirror]]\n"
                                     "location = \"m2.local/rh\"\n"
                                     "insecure = true\n"
                                     "pull-from-mirror = \"digest-only\"\n"
                                     "[[registry.mirror]]\n"
                                     "location = \"m3.local/rh\"\n"
                                     "pull-from-mirror = \"tag-only\"\n"
                                     "[[registry]]\n"
                                     "location = \"quay.io/legacy\"\n"
                                     "mirror-by-digest-only = true\n"
                                     "mirror = [{location = \"m4.local/q\"}]\n");
    expect_sources(c, "registry.redhat.io/ns/op@sha256:" D64,
                   "m1.local:5000/rh/ns/op@sha256:" D64 ",mirror | m2.local/rh/ns/op@sha256:" D64
                   ",insecure,mirror | registry.redhat.io/ns/op@sha256:" D64);
    /* a tag reference skips digest-only mirrors and uses tag-only ones */
    expect_sources(c, "registry.redhat.io/ns/op:v4",
                   "m1.local:5000/rh/ns/op:v4,mirror | m3.local/rh/ns/op:v4,mirror | registry.redhat.io/ns/op:v4");
    /* the legacy registry-wide mirror-by-digest-only */
    expect_sources(c, "quay.io/legacy/app:v1", "quay.io/legacy/app:v1");
    expect_sources(c, "quay.io/legacy/app@sha256:" D64,
                   "m4.local/q/app@sha256:" D64 ",mirror | quay.io/legacy/app@sha256:" D64);
    oci_registries_conf_free(c);
}

static void expect_bad(const char *text, const char *part)
{
    olm_error err;
    oci_registries_conf *c = oci_registries_conf_new(&err);
    int rc = oci_registries_conf_add_text(c, text, strlen(text), "bad.conf", false, &err);
    if (rc == 0)
        fail_msg("accepted: %s", text);
    if (!strstr(err.msg, part) || !strstr(err.msg, "bad.conf"))
        fail_msg("error \"%s\" does not say \"%s\"", err.msg, part);
    assert_int_equal(oci_registries_conf_count(c), 0);
    oci_registries_conf_free(c);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("[[registry]]\nlocation = \"a.io\"\nprefix = \n", "line 3");
    expect_bad("[[registry]]\nlocation = \"a.io\n", "line 2: newline in a single-line string");
    expect_bad("\n\n[[registry]\n", "line 3");
    expect_bad("[[registry]]\nlocation = \"a.io\"\nlocation = \"b.io\"\n", "defined twice");
    expect_bad("[[registry]]\nlocation = 5\n", "\"location\" must be a string");
    expect_bad("[[registry]]\nlocation = \"a.io\"\ninsecure = \"yes\"\n", "true or false");
    expect_bad("[[registry]]\nlocation = \"https://a.io\"\n", "URI schemes");
    expect_bad("[[registry]]\ninsecure = true\n", "needs a location or a prefix");
    expect_bad("[[registry]]\nprefix = \"a.io\"\n", "needs a location");
    expect_bad("[[registry]]\nlocation = \"a.io\"\n[[registry.mirror]]\nlocation = \"m.io\"\npull-from-mirror = \"some\"\n",
               "pull-from-mirror");
    expect_bad("[[registry]]\nlocation = \"a.io\"\nmirror-by-digest-only = true\n[[registry.mirror]]\n"
               "location = \"m.io\"\npull-from-mirror = \"all\"\n",
               "cannot both be set");
    expect_bad("[[registry]]\nlocation = \"a.io\"\n[[registry.mirror]]\ninsecure = true\n", "needs a location");
    expect_bad("[registries.insecure]\nregistries = [\"a.io\"]\n", "version 2");
    expect_bad("[[registry]]\nlocation = \"a.io\"\ninsecure = true\n[[registry]]\nprefix = \"a.io/x\"\nlocation = \"a.io\"\n",
               "conflicting");
    expect_bad("x = 1979-05-27T07:32:00Z\n", "dates");
    expect_bad("a = [1, 2\n", "line 2");
    expect_bad("a = \"\\q\"\n", "unknown escape");
    expect_bad("a = 1 b = 2\n", "line 1");
    expect_bad("a = {x = 1,\n y = 2}\n", "fit on one line");
    /* a mirror location that is not a registry host is caught when it is used */
    olm_error err;
    oci_registries_conf *c = conf_of("[[registry]]\nlocation = \"a.io\"\n[[registry.mirror]]\nlocation = \"mirror\"\n");
    assert_null(sources_of(c, "a.io/app:v1", &err));
    assert_non_null(strstr(err.msg, "registry host"));
    oci_registries_conf_free(c);
}

static void test_v1_format(void **state)
{
    (void)state;
    oci_registries_conf *c = conf_of("[registries.search]\nregistries = [\"docker.io\"]\n"
                                     "[registries.insecure]\nregistries = [\"plain.local:5000\"]\n"
                                     "[registries.block]\nregistries = [\"evil.io\"]\n");
    expect_sources(c, "plain.local:5000/a:v1", "plain.local:5000/a:v1,insecure");
    olm_error err;
    assert_null(sources_of(c, "evil.io/a:v1", &err));
    assert_non_null(strstr(err.msg, "blocked"));
    oci_registries_conf_free(c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_load_and_drop_ins(void **state)
{
    (void)state;
    char dir[] = "/tmp/oci-regconf-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char main_path[256], d[256], p[300];
    snprintf(main_path, sizeof main_path, "%s/registries.conf", dir);
    snprintf(d, sizeof d, "%s/registries.conf.d", dir);
    olm_error err;
    /* missing: empty when not required, an error naming the file when required */
    oci_registries_conf *c = oci_registries_conf_load(main_path, false, &err);
    assert_non_null(c);
    assert_int_equal(oci_registries_conf_count(c), 0);
    oci_registries_conf_free(c);
    assert_null(oci_registries_conf_load(main_path, true, &err));
    assert_non_null(strstr(err.msg, main_path));

    write_file(main_path, "[[registry]]\nprefix = \"a.io\"\nlocation = \"a.io\"\n"
                          "[[registry.mirror]]\nlocation = \"main-mirror.local\"\n"
                          "[[registry]]\nlocation = \"b.io\"\n");
    assert_int_equal(mkdir(d, 0755), 0);
    /* later drop-ins replace a prefix's whole entry; the lexical order decides */
    snprintf(p, sizeof p, "%s/20-second.conf", d);
    write_file(p, "[[registry]]\nprefix = \"a.io\"\nlocation = \"a.io\"\nblocked = true\n");
    snprintf(p, sizeof p, "%s/10-first.conf", d);
    write_file(p, "[[registry]]\nprefix = \"a.io\"\nlocation = \"a.io\"\n"
                  "[[registry.mirror]]\nlocation = \"dropin-mirror.local\"\n");
    snprintf(p, sizeof p, "%s/30-third.conf", d);
    write_file(p, "[[registry]]\nprefix = \"b.io\"\nlocation = \"b.io\"\n"
                  "[[registry.mirror]]\nlocation = \"b-mirror.local\"\n");
    snprintf(p, sizeof p, "%s/ignored.txt", d);
    write_file(p, "this is not toml [[[");
    c = oci_registries_conf_load(main_path, true, &err);
    if (!c)
        fail_msg("%s", err.msg);
    assert_int_equal(oci_registries_conf_count(c), 2);
    assert_null(sources_of(c, "a.io/app:v1", &err));
    assert_non_null(strstr(err.msg, "20-second.conf"));
    expect_sources(c, "b.io/app:v1", "b-mirror.local/app:v1,mirror | b.io/app:v1");
    oci_registries_conf_free(c);

    /* a malformed drop-in is an error naming it and its line */
    snprintf(p, sizeof p, "%s/40-bad.conf", d);
    write_file(p, "[[registry]]\n\nlocation = nope\n");
    assert_null(oci_registries_conf_load(main_path, true, &err));
    assert_non_null(strstr(err.msg, "40-bad.conf: line 3"));
    unlink(p);
    /* drop-ins must be v2 */
    write_file(p, "[registries.block]\nregistries = [\"x.io\"]\n");
    assert_null(oci_registries_conf_load(main_path, true, &err));
    assert_non_null(strstr(err.msg, "version 2"));
    unlink(p);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- a followed configuration: re-read when the files change ---- */

struct notices {
    int good, bad;
    size_t entries;
    char problem[512];
};

static void on_notice(const char *path, const char *problem, size_t entries, void *data)
{
    struct notices *n = data;
    assert_non_null(strstr(path, "registries.conf"));
    if (problem) {
        n->bad++;
        snprintf(n->problem, sizeof n->problem, "%s", problem);
    } else {
        n->good++;
    }
    n->entries = entries;
}

static char *follow_sources(oci_registries_follow *f, const char *ref, olm_error *err)
{
    oci_ref r;
    assert_int_equal(oci_ref_parse(ref, &r, err), 0);
    oci_pull_sources s;
    int rc = oci_registries_follow_sources(f, &r, &s, err);
    oci_ref_free(&r);
    if (rc != 0)
        return NULL;
    static char out[1024];
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s.n; i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", i ? " | " : "", s.v[i].ref);
    oci_pull_sources_free(&s);
    return out;
}

static void expect_follow(oci_registries_follow *f, const char *ref, const char *want)
{
    olm_error err;
    char *got = follow_sources(f, ref, &err);
    if (!got)
        fail_msg("%s: %s", ref, err.msg);
    assert_string_equal(got, want);
}

/* Rewrites `path` with `text` and moves its modification time on by `bump` seconds, so
 * that an edit of the same size within one clock tick is still a change. */
static void rewrite(const char *path, const char *text, int bump)
{
    write_file(path, text);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    struct timespec t[2] = {st.st_atim, {st.st_mtim.tv_sec + bump, st.st_mtim.tv_nsec}};
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

#define MIRROR_OF_A(m) "[[registry]]\nprefix = \"a.io\"\nlocation = \"a.io\"\n[[registry.mirror]]\nlocation = \"" m "\"\n"

static void test_follow_changes(void **state)
{
    (void)state;
    char dir[] = "/tmp/oci-regfollow-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char main_path[256], d[256], p[300];
    snprintf(main_path, sizeof main_path, "%s/registries.conf", dir);
    snprintf(d, sizeof d, "%s/registries.conf.d", dir);
    olm_error err;
    struct notices n = {0};

    /* a required file that is missing stops the start, as oci_registries_conf_load */
    assert_null(oci_registries_follow_new(main_path, true, on_notice, &n, &err));
    assert_non_null(strstr(err.msg, main_path));

    write_file(main_path, MIRROR_OF_A("m1.local"));
    oci_registries_follow *f = oci_registries_follow_new(main_path, true, on_notice, &n, &err);
    if (!f)
        fail_msg("%s", err.msg);
    assert_int_equal(oci_registries_follow_count(f), 1);
    expect_follow(f, "a.io/app:v1", "m1.local/app:v1 | a.io/app:v1");
    assert_int_equal(n.good + n.bad, 0); /* nothing changed: no notice */

    /* an edit of the same size: the next pull takes it */
    rewrite(main_path, MIRROR_OF_A("m2.local"), 1);
    expect_follow(f, "a.io/app:v1", "m2.local/app:v1 | a.io/app:v1");
    assert_int_equal(n.good, 1);
    expect_follow(f, "a.io/app:v1", "m2.local/app:v1 | a.io/app:v1");
    assert_int_equal(n.good, 1); /* once per change */

    /* a new drop-in blocks b.io: the pull is refused naming it */
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(p, sizeof p, "%s/50-block.conf", d);
    write_file(p, "[[registry]]\nlocation = \"b.io\"\nblocked = true\n");
    assert_null(follow_sources(f, "b.io/app:v1", &err));
    assert_non_null(strstr(err.msg, "50-block.conf"));
    assert_int_equal(n.good, 2);
    assert_int_equal(n.entries, 2);

    /* a malformed edit: reported once, the last good configuration stays */
    rewrite(main_path, "[[registry]]\nlocation = nope\n", 2);
    expect_follow(f, "a.io/app:v1", "m2.local/app:v1 | a.io/app:v1");
    assert_int_equal(n.bad, 1);
    assert_non_null(strstr(n.problem, "registries.conf: line 2"));
    assert_null(follow_sources(f, "b.io/app:v1", &err)); /* still blocked */
    assert_int_equal(n.bad, 1);
    /* the same malformed text written again (a new stat, the same problem): not reported again */
    rewrite(main_path, "[[registry]]\nlocation = nope\n", 4);
    expect_follow(f, "a.io/app:v1", "m2.local/app:v1 | a.io/app:v1");
    assert_int_equal(n.bad, 1);

    /* fixed: taken again; the drop-in removed: b.io is allowed again */
    rewrite(main_path, MIRROR_OF_A("m3.local"), 3);
    assert_int_equal(unlink(p), 0);
    expect_follow(f, "a.io/app:v1", "m3.local/app:v1 | a.io/app:v1");
    expect_follow(f, "b.io/app:v1", "b.io/app:v1");
    assert_int_equal(n.good, 3);
    assert_int_equal(oci_registries_follow_count(f), 1);

    /* the required file removed: reported, the pulls keep the last good one */
    assert_int_equal(unlink(main_path), 0);
    expect_follow(f, "a.io/app:v1", "m3.local/app:v1 | a.io/app:v1");
    assert_int_equal(n.bad, 2);
    assert_non_null(strstr(n.problem, "No such file"));
    oci_registries_follow_free(f);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_toml_values(void **state)
{
    (void)state;
    const char *t = "# comment\n"
                    "title = \"a \\\"quoted\\\" \\u00e9 \\n\" # trailing\n"
                    "lit = 'C:\\path'\n"
                    "multi = \"\"\"\nline1\nline2 \\\n   joined\"\"\"\n"
                    "rawmulti = '''\nx\\y'''\n"
                    "n = 1_000\nneg = -5\nhex = 0xff\nf = 1.5e3\nyes = true\n"
                    "arr = [\n  \"a\", # c\n  \"b\",\n]\n"
                    "\"quoted key\".dotted = 1\n"
                    "[t.sub]\nk = {x = 1, y.z = \"w\"}\n"
                    "[[aot]]\nn = 1\n[[aot]]\nn = 2\n[aot.inner]\nv = 3\n";
    olm_error err;
    json_t *j = oci_toml_parse(t, strlen(t), &err);
    if (!j)
        fail_msg("%s", err.msg);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"aot\":[{\"n\":1},{\"inner\":{\"v\":3},\"n\":2}],\"arr\":[\"a\",\"b\"],\"f\":1500.0,"
                           "\"hex\":255,\"lit\":\"C:\\\\path\",\"multi\":\"line1\\nline2 joined\",\"n\":1000,\"neg\":-5,"
                           "\"quoted key\":{\"dotted\":1},\"rawmulti\":\"x\\\\y\",\"t\":{\"sub\":{\"k\":{\"x\":1,\"y\":{\"z\":\"w\"}}}},"
                           "\"title\":\"a \\\"quoted\\\" \u00e9 \\n\",\"yes\":true}");
    free(s);
    json_decref(j);
    /* a table defined twice; a NUL byte; deep nesting */
    assert_null(oci_toml_parse("[a]\n[a]\n", 8, &err));
    assert_non_null(strstr(err.msg, "line 2"));
    assert_null(oci_toml_parse("a = 1\0", 6, &err));
    char deep[400];
    memset(deep, '[', sizeof deep);
    memcpy(deep, "a = ", 4);
    assert_null(oci_toml_parse(deep, sizeof deep, &err));
    assert_non_null(strstr(err.msg, "nested"));
}

static void test_auth_store(void **state)
{
    (void)state;
    olm_error err;
    oci_auth_store *s = oci_auth_store_new(&err);
    assert_non_null(s);
    oci_credentials c;
    assert_false(oci_auth_store_loaded(s));
    assert_int_equal(oci_auth_store_lookup(s, "reg.local:5000", &c, &err), 0);
    assert_null(c.username);
    const char *cfg = "{\"auths\":{\"reg.local:5000\":{\"auth\":\"dXNlcjpwYXNz\"}}}"; /* user:pass */
    assert_int_equal(oci_auth_store_set(s, cfg, strlen(cfg), false, "pull secret ns/x", &err), 0);
    assert_int_equal(oci_auth_store_lookup(s, "reg.local:5000", &c, &err), 0);
    assert_string_equal(c.username, "user");
    assert_string_equal(c.password, "pass");
    oci_credentials_free(&c);
    /* a malformed replacement keeps the old content */
    assert_int_equal(oci_auth_store_set(s, "{\"auths\":[]}", 12, false, "pull secret ns/x", &err), -1);
    assert_non_null(strstr(err.msg, "pull secret ns/x"));
    assert_int_equal(oci_auth_store_lookup(s, "reg.local:5000", &c, &err), 0);
    assert_string_equal(c.username, "user");
    oci_credentials_free(&c);

    /* a Secret: dockerconfigjson, then the legacy dockercfg, then a wrong type */
    const char *rotated = "{\"auths\":{\"https://reg.local:5000/v1/\":{\"username\":\"u2\",\"password\":\"p2\"}}}";
    char *b64 = olm_base64_encode(rotated, strlen(rotated), NULL, &err);
    json_t *secret = json_pack("{s:s, s:{s:s}}", "type", "kubernetes.io/dockerconfigjson", "data", ".dockerconfigjson", b64);
    free(b64);
    assert_int_equal(oci_auth_store_set_secret(s, secret, "pull secret ns/x", &err), 0);
    json_decref(secret);
    assert_int_equal(oci_auth_store_lookup(s, "reg.local:5000", &c, &err), 0);
    assert_string_equal(c.username, "u2");
    oci_credentials_free(&c);
    const char *legacy = "{\"reg.local:5000\":{\"auth\":\"dXNlcjpwYXNz\"}}";
    b64 = olm_base64_encode(legacy, strlen(legacy), NULL, &err);
    secret = json_pack("{s:s, s:{s:s}}", "type", "kubernetes.io/dockercfg", "data", ".dockercfg", b64);
    free(b64);
    assert_int_equal(oci_auth_store_set_secret(s, secret, "pull secret ns/x", &err), 0);
    json_decref(secret);
    assert_int_equal(oci_auth_store_lookup(s, "reg.local:5000", &c, &err), 0);
    assert_string_equal(c.username, "user");
    oci_credentials_free(&c);
    secret = json_pack("{s:s, s:{}}", "type", "Opaque", "data");
    assert_int_equal(oci_auth_store_set_secret(s, secret, "pull secret ns/x", &err), -1);
    assert_non_null(strstr(err.msg, "kubernetes.io/dockerconfigjson"));
    json_decref(secret);
    /* deleted: anonymous again */
    oci_auth_store_clear(s);
    assert_false(oci_auth_store_loaded(s));
    assert_int_equal(oci_auth_store_lookup(s, "reg.local:5000", &c, &err), 0);
    assert_null(c.username);
    oci_auth_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_config),
        cmocka_unit_test(test_prefix_matching),
        cmocka_unit_test(test_wildcard),
        cmocka_unit_test(test_mirror_order_and_modes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_v1_format),
        cmocka_unit_test(test_load_and_drop_ins),
        cmocka_unit_test(test_follow_changes),
        cmocka_unit_test(test_toml_values),
        cmocka_unit_test(test_auth_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

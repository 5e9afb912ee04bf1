#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "olm_error.h"
#include "olm_fs.h"
#include "olm_log.h"
#include "olm_metrics.h"
#include "olm_parse.h"
#include "olm_process_metrics.h"
#include "olm_version.h"
#include "strbuf.h"
#include "stderr_capture.h"

static void test_error_set_and_wrap(void **state)
{
    (void)state;
    olm_error err;
    assert_int_equal(olm_error_set(&err, "bad %s at %d", "token", 3), -1);
    assert_string_equal(err.msg, "bad token at 3");
    olm_error_wrap(&err, "parsing %s", "x");
    assert_string_equal(err.msg, "parsing x: bad token at 3");
    assert_int_equal(olm_error_set(NULL, "ignored"), -1);
}

static void test_strbuf_grows(void **state)
{
    (void)state;
    strbuf sb = STRBUF_INIT;
    assert_string_equal(strbuf_str(&sb), "");
    for (int i = 0; i < 1000; i++)
        assert_int_equal(strbuf_printf(&sb, "%d,", i % 10), 0);
    assert_int_equal(sb.len, 2000);
    assert_memory_equal(sb.data, "0,1,2,", 6);
    char *s = strbuf_detach(&sb);
    assert_null(sb.data);
    assert_int_equal(strlen(s), 2000);
    free(s);
    s = strbuf_detach(&sb);
    assert_string_equal(s, "");
    free(s);
}

/* A fixed strbuf writes into its owner's memory, never past cap, and never frees it. */
static void test_strbuf_fixed(void **state)
{
    (void)state;
    char mem[8] = "zzzzzzz";
    strbuf sb = {.data = mem, .cap = sizeof mem, .fixed = 1};
    assert_int_equal(strbuf_puts(&sb, "abcd"), 0);
    assert_string_equal(mem, "abcd");
    assert_int_equal(strbuf_puts(&sb, "efg"), 0); /* 7 bytes and the NUL: exactly cap */
    assert_string_equal(mem, "abcdefg");
    assert_int_equal(strbuf_putc(&sb, 'h'), -1); /* no realloc of memory it does not own */
    assert_ptr_equal(sb.data, mem);
    assert_int_equal(sb.len, 7);
    assert_int_equal(strbuf_printf(&sb, "%d", 1), -1);
    assert_string_equal(mem, "abcdefg");
    strbuf_free(&sb); /* forgets it (free() of a stack buffer would abort) */
    assert_null(sb.data);
    assert_false(sb.fixed);
    assert_int_equal(strbuf_puts(&sb, "now malloc'd"), 0); /* an ordinary strbuf again */
    assert_string_equal(strbuf_str(&sb), "now malloc'd");
    strbuf_free(&sb);
}

static void test_parse_duration(void **state)
{
    (void)state;
    uint64_t ms = 7;
    assert_int_equal(olm_parse_duration("12h", &ms), 0);
    assert_int_equal(ms, 43200000);
    assert_int_equal(olm_parse_duration("5m", &ms), 0);
    assert_int_equal(ms, 300000);
    assert_int_equal(olm_parse_duration("250ms", &ms), 0);
    assert_int_equal(ms, 250);
    assert_int_equal(olm_parse_duration("5", &ms), 0);
    assert_int_equal(ms, 5000);
    assert_int_equal(olm_parse_duration("1.5s", &ms), 0);
    assert_int_equal(ms, 1500);
    assert_int_equal(olm_parse_duration("0", &ms), 0);
    assert_int_equal(ms, 0);
    ms = 7;
    assert_int_equal(olm_parse_duration("5d", &ms), -1);
    assert_int_equal(olm_parse_duration("-1s", &ms), -1);
    assert_int_equal(olm_parse_duration("", &ms), -1);
    assert_int_equal(olm_parse_duration("s", &ms), -1);
    assert_int_equal(olm_parse_duration(NULL, &ms), -1);
    assert_int_equal(olm_parse_duration("inf", &ms), -1);
    assert_int_equal(olm_parse_duration("nan", &ms), -1);
    assert_int_equal(olm_parse_duration("1e300h", &ms), -1);
    assert_int_equal(olm_parse_duration("1e-9", &ms), -1);
    assert_int_equal(ms, 7);
}

static void test_parse_host_port(void **state)
{
    (void)state;
    char host[16];
    int port = -1;
    assert_int_equal(olm_parse_host_port(":8443", "0.0.0.0", host, sizeof host, &port), 0);
    assert_string_equal(host, "0.0.0.0");
    assert_int_equal(port, 8443);
    assert_int_equal(olm_parse_host_port(":1", "127.0.0.1", host, sizeof host, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(olm_parse_host_port("[::1]:9", "x", host, sizeof host, &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9);
    assert_int_equal(olm_parse_host_port("localhost:0", "x", host, sizeof host, &port), 0);
    assert_string_equal(host, "localhost");
    assert_int_equal(port, 0);
    assert_int_equal(olm_parse_host_port("nope", "x", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_host_port("h:", "x", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_host_port("h:65536", "x", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_host_port("h:80x", "x", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_host_port("a-very-long-host-name:1", "x", host, sizeof host, &port), -1);
    assert_int_equal(olm_parse_host_port(NULL, "x", host, sizeof host, &port), -1);
}

static void test_mkdir_p(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/olm-util-XXXXXX", path[128], file[160];
    assert_non_null(mkdtemp(tmpl));
    snprintf(path, sizeof path, "%s/a/b/c", tmpl);
    assert_int_equal(olm_mkdir_p(path), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(olm_mkdir_p(path), 0); /* exists: fine */
    snprintf(file, sizeof file, "%s/a/f", tmpl);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/a/f/g", tmpl); /* a file in the way */
    assert_int_equal(olm_mkdir_p(path), -1);
    assert_int_equal(errno, ENOTDIR);
    errno = 0;
    assert_int_equal(olm_mkdir_p(file), -1); /* the path itself is a file */
    assert_int_equal(errno, ENOTDIR);
    char longp[5000];
    memset(longp, 'x', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    assert_int_equal(olm_mkdir_p(longp), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    unlink(file);
    const char *dirs[] = {"a/b/c", "a/b", "a"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpl, dirs[i]);
        assert_int_equal(rmdir(path), 0);
    }
    assert_int_equal(rmdir(tmpl), 0);
}

static void test_histogram(void **state)
{
    (void)state;
    static const double bounds[] = {0.5, 1, 5};
    olm_histogram h;
    olm_histogram_init(&h, bounds, 3);
    olm_histogram_observe(&h, 0.25);
    olm_histogram_observe(&h, 0.5); /* on a bound: counts in that bucket (le) */
    olm_histogram_observe(&h, 3);
    olm_histogram_observe(&h, 60); /* above every bound: only +Inf */
    strbuf out = STRBUF_INIT;
    assert_int_equal(olm_metrics_header(&out, "x_seconds", "X.", "histogram"), 0);
    assert_int_equal(olm_histogram_render(&out, "x_seconds", NULL, NULL, &h), 0);
    assert_string_equal(strbuf_str(&out), "# HELP x_seconds X.\n# TYPE x_seconds histogram\n"
                                          "x_seconds_bucket{le=\"0.5\"} 2\n"
                                          "x_seconds_bucket{le=\"1\"} 2\n"
                                          "x_seconds_bucket{le=\"5\"} 3\n"
                                          "x_seconds_bucket{le=\"+Inf\"} 4\n"
                                          "x_seconds_sum 63.75\n"
                                          "x_seconds_count 4\n");
    strbuf_reset(&out);
    olm_histogram_init(&h, bounds, 1);
    olm_histogram_observe(&h, 2);
    assert_int_equal(olm_histogram_render(&out, "y", "catalog", "a\"b\\c\nd", &h), 0);
    assert_string_equal(strbuf_str(&out), "y_bucket{catalog=\"a\\\"b\\\\c\\nd\",le=\"0.5\"} 0\n"
                                          "y_bucket{catalog=\"a\\\"b\\\\c\\nd\",le=\"+Inf\"} 1\n"
                                          "y_sum{catalog=\"a\\\"b\\\\c\\nd\"} 2\n"
                                          "y_count{catalog=\"a\\\"b\\\\c\\nd\"} 1\n");
    strbuf_free(&out);
}

static void test_samples_and_process_metrics(void **state)
{
    (void)state;
    strbuf out = STRBUF_INIT;
    assert_int_equal(olm_metrics_sample(&out, "a_total", NULL, NULL, 3), 0);
    assert_int_equal(olm_metrics_sample(&out, "b", "name", "x\"y", 0.5), 0);
    assert_string_equal(strbuf_str(&out), "a_total 3\nb{name=\"x\\\"y\"} 0.5\n");
    strbuf_reset(&out);
    assert_int_equal(olm_process_metrics_render(&out), 0);
    const char *t = strbuf_str(&out);
    const char *names[] = {"\nprocess_cpu_seconds_total ", "\nprocess_resident_memory_bytes ",
                           "\nprocess_virtual_memory_bytes ", "\nprocess_start_time_seconds ",
                           "\nprocess_open_fds ", "\nprocess_max_fds "};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strstr(t, names[i]))
            fail_msg("no%s in:\n%s", names[i], t);
    /* The start time is this process's: within a day of now. */
    double start = strtod(strstr(t, "\nprocess_start_time_seconds ") + 28, NULL);
    assert_true(start > (double)time(NULL) - 86400 && start <= (double)time(NULL) + 1);
    double rss = strtod(strstr(t, "\nprocess_resident_memory_bytes ") + 31, NULL);
    assert_true(rss > 100000);
    strbuf_reset(&out);
    assert_int_equal(olm_build_info_render(&out, "catalogd"), 0);
    assert_string_equal(strbuf_str(&out), "# HELP catalogd_build_info The version this binary was built from.\n"
                                          "# TYPE catalogd_build_info gauge\n"
                                          "catalogd_build_info{version=\"" OLMV1_VERSION "\"} 1\n");
    strbuf_free(&out);
}

/* Runs fn with stderr sent to a temporary file and returns what it wrote (static buffer). */
/* What stderr receives while fn runs (the caller frees it). */
static char *capture_stderr(void (*fn)(void))
{
    stderr_capture c;
    stderr_capture_begin(&c);
    fn();
    return stderr_capture_end(&c, 8192);
}

static void log_some(void)
{
    olm_log(OLM_LOG_INFO, "clusterExtension", "argocd", "installed %s", "argocd.v0.6.0");
    olm_log(OLM_LOG_DEBUG, "catalog", "c", "dropped below the level");
    olm_log(OLM_LOG_ERROR, "catalog", NULL, "two\nlines");
}

static void test_log_lines(void **state)
{
    (void)state;
    char *out = capture_stderr(log_some);
    const char *second = strchr(out, '\n');
    assert_non_null(second);
    /* "2026-11-21T15:28:04.513Z " is 25 characters */
    assert_true(strlen(out) > 25 && out[4] == '-' && out[10] == 'T' && out[23] == 'Z' && out[24] == ' ');
    assert_memory_equal(out + 25, "INFO clusterExtension=argocd installed argocd.v0.6.0\n", 53);
    second++;
    assert_string_equal(second + 25, "ERROR catalog=- two lines\n");
    assert_null(strstr(out, "dropped"));
    free(out);
}

static void log_json(void)
{
    olm_log_set_format(OLM_LOG_JSON);
    olm_log_set_level(OLM_LOG_DEBUG);
    olm_log(OLM_LOG_DEBUG, "clusterExtension", "argocd", "resolve took 1.5 ms: \"x\"\tback\\slash");
    olm_log(OLM_LOG_WARN, "catalog", NULL, "no subject \xff\xc3\xa9 \x01");
    olm_log_set_format(OLM_LOG_TEXT);
    olm_log_set_level(OLM_LOG_INFO);
}

static void test_log_json_and_levels(void **state)
{
    (void)state;
    char *out = capture_stderr(log_json);
    /* {"ts":"2026-11-21T15:28:04.513Z" is 32 characters */
    assert_memory_equal(out, "{\"ts\":\"", 7);
    assert_true(out[7 + 23] == 'Z' && out[31] == '"');
    const char *first = ",\"level\":\"debug\",\"clusterExtension\":\"argocd\","
                        "\"msg\":\"resolve took 1.5 ms: \\\"x\\\"\\u0009back\\\\slash\"}\n";
    assert_memory_equal(out + 32, first, strlen(first));
    const char *second = strchr(out, '\n') + 1;
    /* No subject: no field; bytes that are not UTF-8 become U+FFFD, UTF-8 stays. */
    assert_string_equal(second + 32, ",\"level\":\"warn\",\"msg\":\"no subject \\ufffd\xc3\xa9 \\u0001\"}\n");
    olm_log_level l;
    olm_log_format f;
    assert_int_equal(olm_log_parse_level("Debug", &l), 0);
    assert_int_equal(l, OLM_LOG_DEBUG);
    assert_int_equal(olm_log_parse_level("warning", &l), 0);
    assert_int_equal(l, OLM_LOG_WARN);
    assert_int_equal(olm_log_parse_level("trace", &l), -1);
    assert_int_equal(olm_log_parse_format("JSON", &f), 0);
    assert_int_equal(f, OLM_LOG_JSON);
    assert_int_equal(olm_log_parse_format("logfmt", &f), -1);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_set_and_wrap),
        cmocka_unit_test(test_strbuf_grows),
        cmocka_unit_test(test_strbuf_fixed),
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_parse_host_port),
        cmocka_unit_test(test_mkdir_p),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_samples_and_process_metrics),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_log_json_and_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

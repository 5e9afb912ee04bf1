#include "server_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

struct srv_fixture {
    uv_loop_t loop;
    uv_thread_t thread;
    uv_async_t async;
    uv_mutex_t mu;
    uv_cond_t cv;
    catalog_server *srv;
    const char *cert, *key;
    FILE *access_log;
    char err[2048];
    int started; /* 1 ok, -1 failed */
    void (*fn)(catalog_server *, void *);
    void *arg;
    int pending, stopped_clean;
};

static void signal_locked(srv_fixture *f)
{
    uv_cond_broadcast(&f->cv);
    uv_mutex_unlock(&f->mu);
}

static void on_async(uv_async_t *a)
{
    srv_fixture *f = a->data;
    uv_mutex_lock(&f->mu);
    if (f->pending && f->fn) {
        f->fn(f->srv, f->arg);
        f->pending = 0;
        uv_cond_broadcast(&f->cv);
    }
    uv_mutex_unlock(&f->mu);
}

static void thread_main(void *arg)
{
    srv_fixture *f = arg;
    catalog_server_opts o = {.host = "127.0.0.1", .port = 0, .tls_cert = f->cert, .tls_key = f->key,
                             .access_log = f->access_log};
    olm_error err;
    uv_mutex_lock(&f->mu);
    f->srv = catalog_server_start(&f->loop, &o, &err);
    if (!f->srv) {
        snprintf(f->err, sizeof f->err, "%s", err.msg);
        f->started = -1;
        signal_locked(f);
        uv_close((uv_handle_t *)&f->async, NULL);
        uv_run(&f->loop, UV_RUN_DEFAULT);
        return;
    }
    f->started = 1;
    signal_locked(f);
    uv_run(&f->loop, UV_RUN_DEFAULT);
}

srv_fixture *fixture_start(const char *cert, const char *key, FILE *access_log)
{
    srv_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->cert = cert;
    f->key = key;
    f->access_log = access_log;
    assert_int_equal(uv_loop_init(&f->loop), 0);
    uv_mutex_init(&f->mu);
    uv_cond_init(&f->cv);
    uv_async_init(&f->loop, &f->async, on_async);
    f->async.data = f;
    assert_int_equal(uv_thread_create(&f->thread, thread_main, f), 0);
    uv_mutex_lock(&f->mu);
    while (!f->started)
        uv_cond_wait(&f->cv, &f->mu);
    uv_mutex_unlock(&f->mu);
    if (f->started < 0)
        fail_msg("catalog_server_start: %s", f->err);
    return f;
}

int fixture_port(const srv_fixture *f) { return catalog_server_port(f->srv); }

catalog_server *fixture_server(srv_fixture *f) { return f->srv; }

void fixture_call(srv_fixture *f, void (*fn)(catalog_server *, void *), void *arg)
{
    uv_mutex_lock(&f->mu);
    f->fn = fn;
    f->arg = arg;
    f->pending = 1;
    uv_async_send(&f->async);
    while (f->pending)
        uv_cond_wait(&f->cv, &f->mu);
    uv_mutex_unlock(&f->mu);
}

static void on_stopped(void *arg, bool clean)
{
    srv_fixture *f = arg;
    f->stopped_clean = clean;
    uv_close((uv_handle_t *)&f->async, NULL);
}

static void do_stop(catalog_server *srv, void *arg)
{
    catalog_server_stop(srv, 5000, on_stopped, arg);
}

void fixture_stop(srv_fixture *f)
{
    fixture_call(f, do_stop, f);
    uv_thread_join(&f->thread);
    assert_true(f->stopped_clean);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    uv_mutex_destroy(&f->mu);
    uv_cond_destroy(&f->cv);
    free(f);
}

/* catalog_publish: see catalog_publish.h. */
#include <stdlib.h>
#include <string.h>

#include "catalog_publish.h"
#include "catalogd_log.h"

struct catalog_publish_item {
    catalog_publish_item *next;
    clustercatalog_publish_kind kind;
    char *name;
    store_view *view;
    bool ok;
    double seconds;
    int model_problems;
};

void catalog_publisher_publish(const clustercatalog_publish_event *ev, void *data)
{
    catalog_publisher *p = data;
    catalog_publish_item *it = calloc(1, sizeof *it);
    char *nm = it ? strdup(ev->name) : NULL;
    if (!nm) {
        free(it);
        store_view_release(ev->view);
        catalogd_log(CATALOGD_LOG_ERROR, ev->name, "out of memory: server update dropped");
        return;
    }
    *it = (catalog_publish_item){.kind = ev->kind, .name = nm, .view = ev->view, .ok = ev->ok,
                                 .seconds = ev->seconds, .model_problems = ev->model_problems};
    uv_mutex_lock(&p->lock);
    if (p->tail)
        p->tail->next = it;
    else
        p->head = it;
    p->tail = it;
    uv_mutex_unlock(&p->lock);
    uv_async_send(&p->async);
}

static void apply(catalog_server *srv, const catalog_publish_item *it)
{
    switch (it->kind) {
    case CC_PUBLISH_SERVE:
        if (catalog_server_set_catalog(srv, it->name, it->view) != 0)
            catalogd_log(CATALOGD_LOG_ERROR, it->name, "out of memory: new content not served");
        else
            catalogd_log(CATALOGD_LOG_INFO, it->name, "serving new content (%zu bytes)", store_view_size(it->view));
        break;
    case CC_PUBLISH_STORED:
        if (catalog_server_set_catalog(srv, it->name, it->view) == 0)
            catalogd_log(CATALOGD_LOG_DEBUG, it->name, "serving it from the store now, not from memory");
        break;
    case CC_PUBLISH_GZIP:
        if (catalog_server_set_catalog(srv, it->name, it->view) == 0)
            catalogd_log(CATALOGD_LOG_DEBUG, it->name, "serving the gzip form too (%zu bytes)",
                         store_view_size(it->view));
        break;
    case CC_PUBLISH_REMOVE:
        catalog_server_remove_catalog(srv, it->name);
        break;
    case CC_PUBLISH_UNPACK:
        catalog_metrics_observe_unpack(catalog_server_metrics(srv), it->name, it->seconds, it->ok);
        if (it->ok && it->model_problems >= 0)
            catalog_metrics_set_model_problems(catalog_server_metrics(srv), it->name, (unsigned)it->model_problems);
        break;
    }
}

/* Loop thread: applies queued updates in the order they were published. */
static void drain(catalog_publisher *p)
{
    uv_mutex_lock(&p->lock);
    catalog_publish_item *it = p->head;
    p->head = p->tail = NULL;
    uv_mutex_unlock(&p->lock);
    while (it) {
        catalog_publish_item *next = it->next;
        if (*p->srv)
            apply(*p->srv, it);
        store_view_release(it->view);
        free(it->name);
        free(it);
        it = next;
    }
}

static void on_wake(uv_async_t *h)
{
    drain(h->data);
}

int catalog_publisher_init(catalog_publisher *p, uv_loop_t *loop, catalog_server **srv, olm_error *err)
{
    memset(p, 0, sizeof *p);
    p->srv = srv;
    if (uv_mutex_init(&p->lock) != 0)
        return olm_error_set(err, "cannot create the publish queue's lock");
    if (uv_async_init(loop, &p->async, on_wake) != 0) {
        uv_mutex_destroy(&p->lock);
        return olm_error_set(err, "cannot create the publish queue's wake-up");
    }
    p->async.data = p;
    return 0;
}

void catalog_publisher_close(catalog_publisher *p)
{
    drain(p);
    uv_close((uv_handle_t *)&p->async, NULL);
}

void catalog_publisher_destroy(catalog_publisher *p)
{
    drain(p); /* nothing can publish any more: whatever is left is released */
    uv_mutex_destroy(&p->lock);
}

/* catalogd's request handling: routing, the /all and /metas semantics of §4.4, health,
 * metrics and the access log.  Runs on the loop thread, inside h2o callbacks. */
#include "catalog_server_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "catalog_http_util.h"
#include "catalogd_http_api.h"
#include "catalog_name.h"
#include "strbuf.h"

#define GZIP_MIN_SIZE 1024  /* see GZIP_QUALITY in catalog_server.c */
#define CHUNK_BYTES (256 * 1024) /* per h2o_send: bounds the work of one loop turn */
#define CHUNK_SEGS 64
#define MAX_RANGES 64       /* more ranges than this are served as one full 200 */

#define CT_JSONL "application/jsonl"
#define CT_TEXT "text/plain; charset=utf-8"

/* A response body made of slices of a store view (and, for multipart, pool strings). */
typedef struct body_gen {
    h2o_generator_t super;
    catalog_server *srv;
    store_view *view; /* one reference, dropped when the request's pool is cleared */
    h2o_iovec_t *segs; /* pool memory */
    size_t nsegs, seg, seg_off;
    h2o_iovec_t sent[CHUNK_SEGS]; /* the last chunk handed to h2o_send, done at the next proceed */
    size_t nsent;
} body_gen;

/* The pages of a chunk h2o has sent go out of the process's page tables (they stay in the page
 * cache): serving /api/v1/all of a 180 MB catalog would otherwise leave RSS 180 MB higher. */
static void drop_sent(body_gen *b)
{
    for (size_t i = 0; i < b->nsent; i++)
        store_view_drop_pages(b->view, b->sent[i].base, b->sent[i].len);
    b->nsent = 0;
}

static void add_hdr(h2o_req_t *req, const h2o_token_t *t, const char *v, size_t len)
{
    h2o_add_header(&req->pool, &req->res.headers, t, NULL, v, len);
}
#define ADD_HDR(req, t, lit) add_hdr((req), (t), H2O_STRLIT(lit))

static void set_hdr(h2o_req_t *req, const h2o_token_t *t, const char *v, size_t len)
{
    h2o_set_header(&req->pool, &req->res.headers, t, v, len, 1);
}

static void drop_hdr(h2o_req_t *req, const h2o_token_t *t)
{
    ssize_t i;
    while ((i = h2o_find_header(&req->res.headers, t, -1)) != -1)
        h2o_delete_header(&req->res.headers, i);
}

/* gzhttp compresses a body only from about 1 KiB on; h2o's filter decides with this hint. */
static void set_compress(h2o_req_t *req, uint64_t body_len)
{
    req->compress_hint = body_len >= GZIP_MIN_SIZE ? H2O_COMPRESS_HINT_ENABLE : H2O_COMPRESS_HINT_DISABLE;
}

static int is_head(h2o_req_t *req) { return h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD")); }

/* A complete small response (http.Error and friends).  `body` may be NULL. */
static int send_small(h2o_req_t *req, int status, const char *reason, const char *ctype, const char *body, size_t len)
{
    req->res.status = status;
    req->res.reason = reason;
    if (ctype)
        set_hdr(req, H2O_TOKEN_CONTENT_TYPE, ctype, strlen(ctype));
    req->res.content_length = len;
    set_compress(req, len);
    h2o_send_inline(req, body, len);
    return 0;
}

/* net/http.Error: text/plain, nosniff, the message plus "\n". */
static int send_error(h2o_req_t *req, int status, const char *reason, const char *msg)
{
    size_t n = strlen(msg);
    char *body = h2o_mem_alloc_pool(&req->pool, n + 2);
    memcpy(body, msg, n);
    body[n] = '\n';
    body[n + 1] = '\0';
    drop_hdr(req, H2O_TOKEN_CONTENT_LENGTH);
    h2o_set_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-content-type-options"), 0,
                          H2O_STRLIT("nosniff"), 1);
    return send_small(req, status, reason, CT_TEXT, body, n + 1);
}

/* 304: net/http's writeNotModified drops the entity headers but keeps Last-Modified. */
static int send_not_modified(h2o_req_t *req)
{
    drop_hdr(req, H2O_TOKEN_CONTENT_TYPE);
    drop_hdr(req, H2O_TOKEN_CONTENT_ENCODING);
    req->res.status = 304;
    req->res.reason = "Not Modified";
    req->compress_hint = H2O_COMPRESS_HINT_DISABLE;
    h2o_send_inline(req, NULL, 0);
    return 0;
}

static int send_precondition_failed(h2o_req_t *req)
{
    return send_small(req, 412, "Precondition Failed", NULL, NULL, 0);
}

static void gen_proceed(h2o_generator_t *g, h2o_req_t *req)
{
    body_gen *b = (body_gen *)g;
    h2o_iovec_t *out = b->sent;
    size_t n = 0, bytes = 0;
    drop_sent(b);
    while (b->seg < b->nsegs && n < CHUNK_SEGS && bytes < CHUNK_BYTES) {
        h2o_iovec_t s = b->segs[b->seg];
        size_t take = s.len - b->seg_off;
        if (take > CHUNK_BYTES - bytes)
            take = CHUNK_BYTES - bytes;
        if (take)
            out[n++] = h2o_iovec_init(s.base + b->seg_off, take);
        bytes += take;
        b->seg_off += take;
        if (b->seg_off == s.len) {
            b->seg++;
            b->seg_off = 0;
        }
    }
    b->nsent = n;
    h2o_send(req, out, n, b->seg == b->nsegs ? H2O_SEND_STATE_FINAL : H2O_SEND_STATE_IN_PROGRESS);
}

/* h2o stops a generator only when the request ends before its last byte was sent: the
 * client closed the connection (or it failed) mid-response.  h2o_dispose_request stops the
 * generator and then calls the loggers, so the access log of this very request is next. */
static void gen_stop(h2o_generator_t *g, h2o_req_t *req)
{
    body_gen *b = (body_gen *)g;
    b->srv->aborted_req = req; /* the view reference goes with the pool (gen_dispose) */
}

static void gen_dispose(void *p)
{
    body_gen *b = p;
    drop_sent(b);
    store_view_release(b->view);
}

/* Starts a streamed 200/206 response over `nsegs` slices (pool array) of `view`.  The
 * status, headers and content_length must already be set. */
static int send_body(h2o_req_t *req, catalog_server *s, store_view *view, h2o_iovec_t *segs, size_t nsegs)
{
    body_gen *b = h2o_mem_alloc_shared(&req->pool, sizeof *b, gen_dispose);
    memset(b, 0, sizeof *b);
    b->super.proceed = gen_proceed;
    b->super.stop = gen_stop;
    b->srv = s;
    b->view = store_view_retain(view);
    b->segs = segs;
    b->nsegs = is_head(req) ? 0 : nsegs; /* HEAD: headers only */
    h2o_start_response(req, &b->super);
    gen_proceed(&b->super, req);
    return 0;
}

static h2o_iovec_t hdr_value(h2o_req_t *req, const h2o_token_t *t, int *present)
{
    ssize_t i = h2o_find_header(&req->headers, t, -1);
    *present = i != -1;
    return *present ? req->headers.entries[i].value : h2o_iovec_init(NULL, 0);
}

/* RFC 7232 preconditions.  `metas` selects upstream's custom check for /metas (any
 * If-None-Match is 304; a malformed If-Modified-Since is a 500) instead of
 * http.ServeContent's.  Returns 1 when a response was sent, 0 to go on. */
static int check_preconditions(h2o_req_t *req, time_t mtime, int metas)
{
    int has;
    h2o_iovec_t v = hdr_value(req, H2O_TOKEN_IF_MATCH, &has);
    catalog_http_cond c = HTTP_COND_NONE;
    if (has && v.len)
        c = catalog_http_etag_list_has_star(v.base, v.len) ? HTTP_COND_TRUE : HTTP_COND_FALSE;
    time_t t;
    if (c == HTTP_COND_NONE) {
        v = hdr_value(req, H2O_TOKEN_IF_UNMODIFIED_SINCE, &has);
        if (has && v.len && catalog_http_parse_time(v.base, v.len, &t) == 0)
            c = mtime <= t ? HTTP_COND_TRUE : HTTP_COND_FALSE;
    }
    if (c == HTTP_COND_FALSE)
        return send_precondition_failed(req), 1;

    v = hdr_value(req, H2O_TOKEN_IF_NONE_MATCH, &has);
    if (has && v.len) {
        /* No ETag is ever set, so only "*" matches in ServeContent; /metas treats any value as a match. */
        if (metas || catalog_http_etag_list_has_star(v.base, v.len))
            return send_not_modified(req), 1; /* only GET and HEAD reach here */
        return 0;
    }
    v = hdr_value(req, H2O_TOKEN_IF_MODIFIED_SINCE, &has);
    if (!has || !v.len)
        return 0;
    if (catalog_http_parse_time(v.base, v.len, &t) < 0) {
        if (metas)
            return send_error(req, 500, "Internal Server Error", "500 Internal Server Error"), 1;
        return 0;
    }
    if (mtime <= t)
        return send_not_modified(req), 1;
    return 0;
}

/* The digest ref the served content came from (catalogd_http_api.h): a client that expects
 * another one knows this replica has not caught up yet. */
static void set_resolved_ref(h2o_req_t *req, const store_view *view)
{
    const char *src = store_view_source(view);
    if (src && *src)
        h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT(CATALOGD_RESOLVED_REF_HEADER), 0, NULL, src,
                              strlen(src));
}

static void set_last_modified(h2o_req_t *req, time_t mtime)
{
    char *buf = h2o_mem_alloc_pool(&req->pool, H2O_TIMESTR_RFC1123_LEN + 1);
    catalog_http_format_time(mtime, buf);
    add_hdr(req, H2O_TOKEN_LAST_MODIFIED, buf, H2O_TIMESTR_RFC1123_LEN);
}

/* multipart/byteranges in the exact shape of net/http (mime/multipart writer). */
static int send_multipart(h2o_req_t *req, catalog_server *s, store_view *view, const catalog_http_range *r, size_t n)
{
    unsigned char rnd[30];
    char boundary[61];
    arc4random_buf(rnd, sizeof rnd);
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(boundary + 2 * i, 3, "%02x", rnd[i]);
    uint64_t size = store_view_size(view), total = 0;
    h2o_iovec_t *segs = h2o_mem_alloc_pool(&req->pool, (2 * n + 1) * sizeof *segs);
    for (size_t i = 0; i < n; i++) {
        char *h = h2o_mem_alloc_pool(&req->pool, 256);
        int len = snprintf(h, 256,
                           "%s--%s\r\nContent-Range: bytes %llu-%llu/%llu\r\nContent-Type: " CT_JSONL "\r\n\r\n",
                           i ? "\r\n" : "", boundary, (unsigned long long)r[i].start,
                           (unsigned long long)(r[i].start + r[i].length - 1), (unsigned long long)size);
        segs[2 * i] = h2o_iovec_init(h, (size_t)len);
        segs[2 * i + 1] = h2o_iovec_init(store_view_data(view) + r[i].start, r[i].length);
        total += (uint64_t)len + r[i].length;
    }
    char *tail = h2o_mem_alloc_pool(&req->pool, 80);
    int tl = snprintf(tail, 80, "\r\n--%s--\r\n", boundary);
    segs[2 * n] = h2o_iovec_init(tail, (size_t)tl);
    total += (uint64_t)tl;
    char *ct = h2o_mem_alloc_pool(&req->pool, 128);
    int cl = snprintf(ct, 128, "multipart/byteranges; boundary=%s", boundary);
    set_hdr(req, H2O_TOKEN_CONTENT_TYPE, ct, (size_t)cl);
    req->res.status = 206;
    req->res.reason = "Partial Content";
    req->res.content_length = total;
    return send_body(req, s, view, segs, 2 * n + 1);
}

/* For a response that is the whole catalog: the gzip form stored beside it when h2o's
 * compress filter would have compressed this response (a GET over HTTP/1.1 or later, a
 * client that accepts gzip, a body of at least GZIP_MIN_SIZE), with the headers the filter
 * set (Content-Encoding: gzip, Accept-Ranges: none).  NULL to send the plain bytes.  The
 * filter is turned off either way: the loop never compresses a catalog (0.39 s of loop
 * per request for certified-operators), and a store without the gzip form (written by an
 * older catalogd) is sent plain until its next write. */
static const char *precompressed(h2o_req_t *req, store_view *view, size_t *len)
{
    req->compress_hint = H2O_COMPRESS_HINT_DISABLE;
    if (is_head(req) || req->version < 0x101 || store_view_size(view) < GZIP_MIN_SIZE ||
        !(h2o_get_compressible_types(&req->headers) & H2O_COMPRESSIBLE_GZIP))
        return NULL;
    const char *gz = store_view_gzip(view, len);
    if (!gz)
        return NULL;
    set_hdr(req, H2O_TOKEN_CONTENT_ENCODING, H2O_STRLIT("gzip"));
    set_hdr(req, H2O_TOKEN_ACCEPT_RANGES, H2O_STRLIT("none"));
    return gz;
}

/* If-Range with no ETag: only a date equal to the modtime keeps the Range. */
static int range_applies(h2o_req_t *req, time_t mtime)
{
    int has;
    h2o_iovec_t v = hdr_value(req, H2O_TOKEN_IF_RANGE, &has);
    if (!has || !v.len)
        return 1;
    time_t t;
    if (v.base[0] == '"' || (v.len > 1 && v.base[0] == 'W' && v.base[1] == '/'))
        return 0;
    return catalog_http_parse_time(v.base, v.len, &t) == 0 && t == mtime;
}

/* GET|HEAD /catalogs/{name}/api/v1/all: http.ServeContent over catalog.jsonl. */
static int serve_all(h2o_req_t *req, catalog_server *s, store_view *view)
{
    time_t mtime = store_view_mtime(view);
    uint64_t size = store_view_size(view);
    ADD_HDR(req, H2O_TOKEN_CONTENT_TYPE, CT_JSONL);
    set_last_modified(req, mtime);
    set_resolved_ref(req, view);
    if (check_preconditions(req, mtime, 0))
        return 0;

    catalog_http_range r[MAX_RANGES];
    size_t n = 0;
    int has;
    h2o_iovec_t rh = hdr_value(req, H2O_TOKEN_RANGE, &has);
    if (has && rh.len && range_applies(req, mtime)) {
        int rc = catalog_http_parse_range(rh.base, rh.len, size, r, MAX_RANGES, &n);
        if (rc == HTTP_RANGE_NO_OVERLAP) {
            char *cr = h2o_mem_alloc_pool(&req->pool, 48);
            int l = snprintf(cr, 48, "bytes */%llu", (unsigned long long)size);
            add_hdr(req, H2O_TOKEN_CONTENT_RANGE, cr, (size_t)l);
        }
        if (rc < 0 && !(rc == HTTP_RANGE_INVALID && n == MAX_RANGES))
            return send_error(req, 416, "Requested Range Not Satisfiable",
                              rc == HTTP_RANGE_NO_OVERLAP ? "invalid range: failed to overlap" : "invalid range");
        if (rc < 0)
            n = 0; /* too many ranges for us: serve the whole body */
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += r[i].length;
        if (sum > size) /* net/http: ranges that add up to more than the body are ignored */
            n = 0;
    }
    ADD_HDR(req, H2O_TOKEN_ACCEPT_RANGES, "bytes");
    if (n > 1)
        return send_multipart(req, s, view, r, n);
    h2o_iovec_t *seg = h2o_mem_alloc_pool(&req->pool, sizeof *seg);
    if (n == 1) {
        char *cr = h2o_mem_alloc_pool(&req->pool, 80);
        int l = snprintf(cr, 80, "bytes %llu-%llu/%llu", (unsigned long long)r[0].start,
                         (unsigned long long)(r[0].start + r[0].length - 1), (unsigned long long)size);
        add_hdr(req, H2O_TOKEN_CONTENT_RANGE, cr, (size_t)l);
        req->res.status = 206;
        req->res.reason = "Partial Content";
        *seg = h2o_iovec_init(store_view_data(view) + r[0].start, r[0].length);
    } else {
        req->res.status = 200;
        req->res.reason = "OK";
        size_t gzlen;
        const char *gz = precompressed(req, view, &gzlen);
        *seg = gz ? h2o_iovec_init(gz, gzlen) : h2o_iovec_init(store_view_data(view), size);
        req->res.content_length = seg->len;
        return send_body(req, s, view, seg, 1);
    }
    req->res.content_length = seg->len;
    set_compress(req, seg->len);
    return send_body(req, s, view, seg, 1);
}

typedef struct metas_query {
    char *param[3]; /* schema, package, name: first value of each, pool memory; NULL if absent */
    int unknown;    /* a parameter other than those three was given */
} metas_query;

/* url.ParseQuery as upstream uses it: pairs split on '&'; a pair holding ';' or a bad
 * escape is dropped; the first value of a key wins. */
static void parse_query(h2o_req_t *req, const char *q, size_t len, metas_query *out)
{
    static const char *const names[3] = {"schema", "package", "name"};
    memset(out, 0, sizeof *out);
    const char *p = q, *end = q + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *pe = amp ? amp : end;
        const char *pair = p;
        p = amp ? amp + 1 : end;
        if (pe == pair || memchr(pair, ';', (size_t)(pe - pair)))
            continue;
        const char *eq = memchr(pair, '=', (size_t)(pe - pair));
        const char *ke = eq ? eq : pe, *vs = eq ? eq + 1 : pe;
        char *k = h2o_mem_alloc_pool(&req->pool, (size_t)(ke - pair) + 1);
        char *v = h2o_mem_alloc_pool(&req->pool, (size_t)(pe - vs) + 1);
        long kl = catalog_http_pct_decode(pair, (size_t)(ke - pair), k, true);
        long vl = catalog_http_pct_decode(vs, (size_t)(pe - vs), v, true);
        if (kl < 0 || vl < 0)
            continue;
        k[kl] = '\0';
        v[vl] = '\0';
        int known = 0;
        for (int i = 0; i < 3; i++) {
            if ((size_t)kl == strlen(names[i]) && memcmp(k, names[i], (size_t)kl) == 0) {
                known = 1;
                if (!out->param[i])
                    out->param[i] = v;
            }
        }
        out->unknown |= !known;
    }
}

/* GET|HEAD /catalogs/{name}/api/v1/metas: the index selection, streamed, no Content-Length. */
static int serve_metas(h2o_req_t *req, catalog_server *s, store_view *view, const metas_query *q)
{
    time_t mtime = store_view_mtime(view);
    set_last_modified(req, mtime);
    set_resolved_ref(req, view);
    if (check_preconditions(req, mtime, 1))
        return 0;
    ADD_HDR(req, H2O_TOKEN_CONTENT_TYPE, CT_JSONL);
    req->res.status = 200;
    req->res.reason = "OK";
    const char *schema = q->param[0], *package = q->param[1], *name = q->param[2];
    int filtered = (schema && *schema) || (package && *package) || (name && *name);
    if (!filtered) { /* the whole catalog, streamed without a Content-Length like any /metas */
        h2o_iovec_t *seg = h2o_mem_alloc_pool(&req->pool, sizeof *seg);
        size_t gzlen;
        const char *gz = precompressed(req, view, &gzlen);
        *seg = gz ? h2o_iovec_init(gz, gzlen) : h2o_iovec_init(store_view_data(view), store_view_size(view));
        return send_body(req, s, view, seg, 1);
    }
    store_range *r;
    size_t n;
    uint64_t total;
    if (store_view_select(view, schema, package, name, &r, &n, &total) < 0)
        return send_error(req, 500, "Internal Server Error", "500 Internal Server Error");
    h2o_iovec_t *segs = h2o_mem_alloc_pool(&req->pool, (n ? n : 1) * sizeof *segs);
    for (size_t i = 0; i < n; i++)
        segs[i] = h2o_iovec_init(store_view_data(view) + r[i].off, r[i].len);
    free(r);
    set_compress(req, total);
    return send_body(req, s, view, segs, n);
}

static int serve_metrics(h2o_req_t *req, catalog_server *s)
{
    strbuf sb = STRBUF_INIT;
    if (s->metrics_cb && s->metrics_cb(&sb, s->metrics_arg) < 0) {
        strbuf_free(&sb);
        return send_error(req, 503, "Service Unavailable", "503 Service Unavailable");
    }
    if (!s->metrics_cb && catalog_server_render_metrics(s, &sb) < 0) {
        strbuf_free(&sb);
        return send_error(req, 500, "Internal Server Error", "500 Internal Server Error");
    }
    /* h2o_send_inline copies into the request pool */
    send_small(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", strbuf_str(&sb), sb.len);
    strbuf_free(&sb);
    return 0;
}

/* Splits the raw path into segments, percent-decoding each into pool memory.  Returns the
 * segment count, -1 on a malformed escape, -2 when there are more than `max`. */
static int split_path(h2o_req_t *req, const char *p, size_t len, h2o_iovec_t *seg, int max)
{
    int n = 0;
    size_t i = 0;
    if (len == 0 || p[0] != '/')
        return -2;
    while (i < len) {
        size_t j = ++i; /* skip the '/' */
        while (j < len && p[j] != '/')
            j++;
        if (n == max)
            return -2;
        char *d = h2o_mem_alloc_pool(&req->pool, j - i + 1);
        long dl = catalog_http_pct_decode(p + i, j - i, d, false);
        if (dl < 0)
            return -1;
        d[dl] = '\0';
        seg[n++] = h2o_iovec_init(d, (size_t)dl);
        i = j;
    }
    return n;
}

static int seg_is(h2o_iovec_t s, const char *lit) { return h2o_memis(s.base, s.len, lit, strlen(lit)); }

/* /readyz as the daemon decides (catalogd: the current content of every Serving catalog). */
static int serve_readyz(h2o_req_t *req, catalog_server *s)
{
    strbuf why = STRBUF_INIT;
    bool ready = s->ready_cb(s->ready_arg, &why);
    int rc;
    if (ready) {
        rc = send_small(req, 200, "OK", CT_TEXT, H2O_STRLIT("ok"));
    } else {
        const char *text = why.len ? strbuf_str(&why) : "not ready";
        size_t len = strlen(text);
        char *body = h2o_mem_alloc_pool(&req->pool, len + 1);
        memcpy(body, text, len + 1);
        rc = send_small(req, 503, "Service Unavailable", CT_TEXT, body, len);
    }
    strbuf_free(&why);
    return rc;
}

/* Every path: /healthz, /readyz, /metrics and the catalogs. */
static int route(h2o_req_t *req, catalog_server *s)
{
    size_t plen = req->query_at != SIZE_MAX ? req->query_at : req->path.len;
    h2o_iovec_t seg[6];
    int n = split_path(req, req->path.base, plen, seg, 6);
    if (n == -1) /* Go rejects such a request line before routing */
        return send_small(req, 400, "Bad Request", CT_TEXT, H2O_STRLIT("400 Bad Request"));
    if (n == 1 && seg_is(seg[0], "readyz") && s->ready_cb)
        return serve_readyz(req, s);
    if (n == 1 && (seg_is(seg[0], "healthz") || seg_is(seg[0], "readyz")))
        return send_small(req, 200, "OK", CT_TEXT, H2O_STRLIT("ok"));
    if (n == 1 && seg_is(seg[0], "metrics") && !s->no_metrics)
        return serve_metrics(req, s);
    int all = n == 5 && seg_is(seg[4], "all"), metas = n == 5 && seg_is(seg[4], "metas") && !s->no_metas;
    if (n == 5 && seg_is(seg[4], "graphql") && s->graphql_501 && seg_is(seg[0], "catalogs") && seg_is(seg[2], "api") &&
        seg_is(seg[3], "v1"))
        return send_error(req, 501, "Not Implemented",
                          "GraphQL catalog queries (--feature-gates GraphQLCatalogQueries) are not built in this "
                          "catalogd: use /api/v1/all or /api/v1/metas");
    if (!(all || metas) || !seg_is(seg[0], "catalogs") || seg[1].len == 0 || !seg_is(seg[2], "api") ||
        !seg_is(seg[3], "v1"))
        return send_error(req, 404, "Not Found", "404 page not found");
    if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")) && !is_head(req)) {
        ADD_HDR(req, H2O_TOKEN_ALLOW, "GET, HEAD");
        return send_error(req, 405, "Method Not Allowed", "Method Not Allowed");
    }
    metas_query q;
    if (metas) {
        const char *qs = req->query_at != SIZE_MAX ? req->path.base + req->query_at + 1 : "";
        size_t ql = req->query_at != SIZE_MAX ? req->path.len - req->query_at - 1 : 0;
        parse_query(req, qs, ql, &q);
        if (q.unknown)
            return send_error(req, 400, "Bad Request", "400 Bad Request");
    }
    char msg[1024];
    if (catalog_name_check(seg[1].base, seg[1].len, msg, sizeof msg) < 0) {
        char *body = h2o_mem_alloc_pool(&req->pool, sizeof msg + 32);
        snprintf(body, sizeof msg + 32, "invalid catalog name: %s", msg);
        return send_error(req, 400, "Bad Request", body);
    }
    store_view *view = catalog_server_find(s, seg[1].base);
    if (!view)
        return send_error(req, 404, "Not Found", "404 Not Found");
    return all ? serve_all(req, s, view) : serve_metas(req, s, view, &q);
}

static int route_cb(h2o_req_t *req, void *arg) { return route(req, arg); }

int catalog_http_on_req(h2o_handler_t *self, h2o_req_t *req)
{
    catalog_server *s = ((server_handler *)self)->srv;
    /* gzhttp sets Vary on every response it wraps, compressed or not. */
    ADD_HDR(req, H2O_TOKEN_VARY, "Accept-Encoding");

    /* net/http refuses an HTTP/1.1 request that names no Host (RFC 7230 §5.4), and closes.
     * h2o fills a missing Host in with the host context's own authority: that very buffer. */
    if (req->version >= 0x101 && req->input.authority.base == req->hostconf->authority.hostport.base) {
        req->http1_is_persistent = 0;
        return send_small(req, 400, "Bad Request", CT_TEXT, H2O_STRLIT("400 Bad Request: missing required Host header"));
    }
    /* /metrics passes the metrics filter first, when one is set. */
    return olm_http_server_guard(s->http, req, route_cb, s);
}

/* A request's bytes as the access log shows them: printable ASCII as is, a backslash as
 * "\\", anything else (control bytes, non-ASCII, bytes that are not UTF-8) as "\xNN", so a
 * log line is one line of ASCII whatever the client sent. */
static void log_bytes(FILE *out, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\\')
            fputs("\\\\", out);
        else if (c > 0x20 && c < 0x7f)
            fputc(c, out);
        else
            fprintf(out, "\\x%02x", c);
    }
}

void catalog_http_on_log(h2o_logger_t *self, h2o_req_t *req)
{
    catalog_server *s = ((server_logger *)self)->srv;
    bool aborted = s->aborted_req == req;
    s->aborted_req = NULL;
    /* From the request's start to now: h2o calls the loggers when the response is done (sent,
     * or cut off).  Not response_end_at: h2o's timestamps are the loop's cached time, equal to
     * request_begin_at for a response sent within one loop turn (every small /metas). */
    double secs = 0;
    struct timeval now;
    gettimeofday(&now, NULL);
    if (!h2o_timeval_is_null(&req->timestamps.request_begin_at))
        secs = (double)h2o_timeval_subtract(&req->timestamps.request_begin_at, &now) / 1e6;
    if (secs < 0)
        secs = 0;
    catalog_metrics_observe_http(s->metrics, req->res.status, secs); /* a lost sample is harmless */
    if (!s->access_log)
        return;
    char host[NI_MAXHOST] = "-";
    struct sockaddr_storage ss;
    socklen_t sl = req->conn->callbacks->get_peername(req->conn, (struct sockaddr *)&ss);
    if (sl == 0 || h2o_socket_getnumerichost((struct sockaddr *)&ss, sl, host) == SIZE_MAX)
        strcpy(host, "-");
    /* One line in several calls: held under the stream's lock, so that a log line another
     * thread writes to the same stream (stderr) cannot land inside it. */
    flockfile(s->access_log);
    fprintf(s->access_log, "access host=%s user=- method=", host);
    log_bytes(s->access_log, req->method.base, req->method.len);
    fputs(" uri=", s->access_log);
    log_bytes(s->access_log, req->path.base, req->path.len);
    fprintf(s->access_log, " proto=HTTP/%d.%d status=%d size=%zu duration=%.6f%s\n", req->version >> 8,
            req->version & 0xff, req->res.status, req->bytes_sent, secs, aborted ? " aborted=true" : "");
    funlockfile(s->access_log);
}

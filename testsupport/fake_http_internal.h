/* Shared by fake_http_server.c (request/response mode) and fake_http_stream.c (streaming
 * mode): the listening socket, reading a request off a connection, writing to it. */
#ifndef OLM_TESTSUPPORT_FAKE_HTTP_INTERNAL_H
#define OLM_TESTSUPPORT_FAKE_HTTP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "fake_http_server.h"

/* Zeroes *s, listens on 127.0.0.1:<ephemeral> and sets fd, port, url ("http://...").
 * 0 or -1. */
int fake_http_listen(fake_http_server *s);
/* Reads one request off `c` into *req (headers and body malloc'd, freed with
 * fake_http_request_free); seq is the server's count of requests so far.  0, or -1 when
 * the client went away or sent no request line. */
int fake_http_read_request(fake_http_conn *c, fake_http_request *req);
void fake_http_request_free(fake_http_request *req);
/* Writes all of buf; false when the client went away. */
bool fake_http_send(fake_http_conn *c, const void *buf, size_t len);
/* Joins the streaming mode's connection threads (fake_http_stop). */
void fake_http_stream_join(fake_http_server *s);

#endif

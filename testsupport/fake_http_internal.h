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
/* A server context for the PEM chain and key, at most `max_version` (0: any); NULL when they
 * do not load.  An SSL_CTX *. */
void *fake_http_tls_context(const char *cert_file, const char *key_file, int max_version);
void fake_http_tls_free(void *ctx);
/* Sets the server's TLS context (taken over) and its https URL, before any client connects. */
void fake_http_use_tls(fake_http_server *s, void *ctx);
/* The TLS handshake of an accepted connection when the server speaks TLS (c->ssl set); false
 * when it failed (the client did not trust us): nothing to answer. */
bool fake_http_accept_tls(fake_http_conn *c);
/* Ends a connection: TLS shut down and freed, the socket closed. */
void fake_http_close(fake_http_conn *c);

#endif

/* A catalog_server running on its own libuv loop in a thread, for tests that make real
 * HTTP requests.  All registry changes go through fixture_call, which runs a function on
 * the loop thread (the server's thread affinity) and waits for it. */
#ifndef CATALOGD_SERVER_FIXTURE_H
#define CATALOGD_SERVER_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>

#include "catalog_server.h"

typedef struct srv_fixture srv_fixture;

/* Starts a server on 127.0.0.1:0 (TLS when cert and key are set), writing its access log to
 * `access_log` (NULL: none); fails the test on error. */
srv_fixture *fixture_start(const char *cert, const char *key, FILE *access_log);
int fixture_port(const srv_fixture *f);
catalog_server *fixture_server(srv_fixture *f); /* use only inside fixture_call */
void fixture_call(srv_fixture *f, void (*fn)(catalog_server *srv, void *arg), void *arg);
/* Stops the server (clients must have closed their connections), joins the thread and
 * checks that the loop closes with no handle left. */
void fixture_stop(srv_fixture *f);

#endif

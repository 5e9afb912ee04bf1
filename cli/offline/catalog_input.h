/* catalog_input: a File-Based Catalog named on the command line, either a directory or
 * a catalog image reference (pulled into a temporary directory: the configs label says
 * where the FBC is; $REGISTRY_AUTH_FILE for credentials, loopback registries and
 * $OLMV1_INSECURE_REGISTRIES over http). */
#ifndef OLMV1_CLI_CATALOG_INPUT_H
#define OLMV1_CLI_CATALOG_INPUT_H

#include "fbc.h"
#include "olm_error.h"

/* Loads `arg`: an existing directory, else an image reference.  *out is freed with
 * fbc_catalog_free.  Returns 0; 1 when the catalog does not load (err "<file>:<line>:
 * <reason>", or the directory is missing); 5 when the image cannot be pulled.  An
 * argument that is no directory is an image reference only when it names its registry
 * (registry.example.com/..., host:port/..., localhost/...). */
int catalog_input_load(const char *arg, fbc_catalog **out, olm_error *err);

#endif

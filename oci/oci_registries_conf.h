/* oci_registries_conf: containers-registries.conf(5) version 2 — where an image is pulled
 * from.  This is how a disconnected cluster reaches its mirrors (OpenShift writes its
 * ImageDigestMirrorSet / ImageTagMirrorSet objects into this file on every node).
 *
 * Read: /etc/containers/registries.conf (or the file --registries-conf names) and then the
 * drop-ins "<that path>.d/" "*.conf" in lexical order.  Understood, as containers/image's
 * pkg/sysregistriesv2 does:
 *   [[registry]]  prefix, location, insecure, blocked, mirror-by-digest-only
 *   [[registry.mirror]]  location, insecure, pull-from-mirror = "all"|"digest-only"|"tag-only"
 * A reference matches the [[registry]] with the longest matching prefix; a prefix matches
 * at a boundary (':', '/', '@' or the end) and "*.example.com" matches any subdomain of
 * example.com.  The sources of a pull are the usable mirrors in order, then the primary
 * location (prefix rewritten to location).  Within a file the first entry of a prefix
 * wins; a drop-in's entry replaces the earlier one with the same prefix.  The version 1
 * format ([registries.insecure] / [registries.block] lists) is converted as containers/image
 * does, in the main file only.  Other top-level keys (unqualified-search-registries,
 * short-name-mode, aliases, ...) are accepted and ignored: references here are always
 * fully qualified.
 *
 * "insecure" means, as in containers/image, TLS without certificate verification for that
 * endpoint and plain HTTP if TLS does not connect (as $OLMV1_INSECURE_REGISTRIES does).
 * A loaded configuration is immutable and may be shared by threads. */
#ifndef OLM_OCI_REGISTRIES_CONF_H
#define OLM_OCI_REGISTRIES_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "oci_ref.h"
#include "olm_error.h"

#define OCI_REGISTRIES_CONF_DEFAULT "/etc/containers/registries.conf"

typedef struct oci_registries_conf oci_registries_conf;

/* An empty configuration (every reference pulls from itself). */
oci_registries_conf *oci_registries_conf_new(olm_error *err);
void oci_registries_conf_free(oci_registries_conf *conf);

/* Loads `path` and its drop-in directory "<path>.d".  A missing `path` is an error when
 * `required` (a path the user named), else an empty configuration (the default path on a
 * host without one); a missing drop-in directory is never an error.  Errors name the file
 * and, for syntax errors, the line: "<file>: line 3: expected '=' after the key". */
oci_registries_conf *oci_registries_conf_load(const char *path, bool required, olm_error *err);

/* What a command-line tool pulls with, as podman and skopeo do: the file named by
 * $CONTAINERS_REGISTRIES_CONF (required to exist), else the default path when it
 * exists.  Errors as oci_registries_conf_load's. */
oci_registries_conf *oci_registries_conf_from_env(olm_error *err);

/* Merges one file's text over `conf`, as a drop-in would be (`origin` names it in
 * errors and in "blocked" messages; `allow_v1`: the main file may use the v1 format).
 * On error `conf` is unchanged. */
int oci_registries_conf_add_text(oci_registries_conf *conf, const char *text, size_t len, const char *origin,
                                 bool allow_v1, olm_error *err);

/* How many [[registry]] entries are in effect. */
size_t oci_registries_conf_count(const oci_registries_conf *conf);

/* One place to try a pull from. */
typedef struct oci_pull_source {
    char *ref;    /* the reference to pull there, e.g. "mirror.local:5000/ns/app@sha256:..." */
    bool insecure; /* TLS unverified, else plain HTTP */
    bool mirror;   /* false: the primary location */
} oci_pull_source;

typedef struct oci_pull_sources {
    oci_pull_source *v;
    size_t n, cap;
} oci_pull_sources;
void oci_pull_sources_free(oci_pull_sources *s);

/* The sources for `ref`, in the order to try them.  `conf` may be NULL, and no matching
 * entry means one source: the reference itself.  A blocked registry is -1 with err
 * "<ref>: registry \"<prefix>\" is blocked (blocked = true in <file>)". */
int oci_registries_conf_sources(const oci_registries_conf *conf, const oci_ref *ref, oci_pull_sources *out,
                                olm_error *err);

#endif

/* gocompat_internal: what the library's own files share and its users do not
 * see (the folder is private; gocompat.h is the public header). */
#ifndef OLM_GOCOMPAT_INTERNAL_H
#define OLM_GOCOMPAT_INTERNAL_H

#include "gocompat.h"

/* ---- gocompat_json_encode.c: limits for text built from YAML ---- */

enum {
    GOCOMPAT_JSON_ETOOBIG = -2, /* the output passed max_len bytes */
    GOCOMPAT_JSON_EDEPTH = -3,  /* a value deeper than max_depth */
};

typedef struct gocompat_json_limits {
    size_t max_len; /* checked as each value starts; 0: none */
    int max_depth;  /* the top value is at depth 0; 0: none */
    /* When set, asked first for every number: returns 1 when it wrote `v`
     * itself, 0 for the usual text, -1 on out of memory.  YAMLToJSON keeps
     * uint64 values above INT64_MAX, which a jansson integer cannot hold. */
    int (*number)(void *ud, const json_t *v, strbuf *out);
    void *ud;
} gocompat_json_limits;

/* gocompat_json_encode with limits: 0, -1 out of memory, or one of the codes
 * above. */
int gocompat_json_encode_limited(strbuf *out, const json_t *v, unsigned flags,
                                 const gocompat_json_limits *lim);

/* ---- gocompat_yaml.c, gocompat_yaml_text.c ---- */

#define GOCOMPAT_YAML_DEFAULT_MAX_DEPTH 1000
#define GOCOMPAT_YAML_DEFAULT_MAX_NODES 5000000u
#define GOCOMPAT_YAML_DEFAULT_MAX_BYTES ((size_t)64 * 1024 * 1024) /* or 4 x the input */


/* A jansson integer is an int64, so the text API keeps each uint64 value above
 * INT64_MAX beside the tree: the node (a JSON real standing for it) and the
 * exact value, for the encoder's number hook. */
typedef struct gocompat_yaml_big {
    const json_t *node;
    uint64_t u;
} gocompat_yaml_big;

typedef struct gocompat_yaml_bigs {
    gocompat_yaml_big *items; /* owned */
    size_t n, cap;
} gocompat_yaml_bigs;

/* -1 on out of memory. */
int gocompat_yaml_bigs_add(gocompat_yaml_bigs *b, const json_t *node, uint64_t u);

/* gocompat_yaml_decode; with `bigs` non-NULL integers stay JSON integers and
 * big unsigned ones are listed there (what YAMLToJSON's text keeps). */
int gocompat_yaml_decode_ex(const char *data, size_t len, const gocompat_yaml_opts *opts,
                            gocompat_yaml_bigs *bigs, gocompat_yaml_doc_fn fn, void *ud,
                            gocompat_yaml_error *e);

#endif

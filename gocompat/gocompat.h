/* gocompat: the few Go functions whose exact bytes this project must reproduce.
 *
 * Upstream OLM is written in Go, and some of its output is observable byte for
 * byte: catalogd's normalised catalog.jsonl, the hashes that name rendered RBAC
 * objects, the texts of condition messages, what a kubeconfig or a bundle's
 * properties.yaml means.  Those come from encoding/json, strconv and
 * sigs.k8s.io/yaml, whose choices (key order, escaping, shortest float digits,
 * YAML 1.1 booleans, error wording) no C library shares.  This library is the
 * one place that reproduces them; everything else calls it.
 *
 * Where callers need different flavours of one Go function (HTML escaping on or
 * off, integers kept or turned into float64, float32 keys), that is a flag here,
 * not a second copy.  Functions that append to a strbuf return 0, or -1 when
 * memory runs out (the buffer then keeps what it had, see strbuf.h). */
#ifndef OLM_GOCOMPAT_H
#define OLM_GOCOMPAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "olm_error.h"
#include "strbuf.h"

/* ==== gocompat_quote.c: unicode/utf8 and strconv.Quote ==== */

/* utf8.DecodeRune: the length (1..4) of the UTF-8 sequence at s[0..n) (n >= 1)
 * and its code point in *cp.  0 when the sequence is invalid (overlong,
 * surrogate, above U+10FFFF, truncated, stray continuation byte), where Go
 * returns (RuneError, 1): the same rules as jansson's input check. */
size_t gocompat_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

enum {
    /* Escape ASCII only and copy every byte >= 0x80 as it is.  Go escapes
     * invalid UTF-8 (\x..) and non-printable runes (\u..); the CRD
     * upgrade-safety messages have always been written this way and keep it. */
    GOCOMPAT_QUOTE_ASCII_ONLY = 1,
};

/* Appends strconv.Quote(s[0..len)), what %q prints for a string.  IsPrint is
 * approximated for rare non-ASCII code points (see gocompat_quote.c). */
int gocompat_quote(strbuf *sb, const char *s, size_t len, unsigned flags);

/* ==== gocompat_float.c: strconv.FormatFloat with the shortest digits ==== */

/* Big enough for every text below ("-1.2345678901234567e-308" and the like). */
#define GOCOMPAT_FLOAT_BUF 32

/* strconv.FormatFloat(f, 'g', -1, bits) for bits 32 or 64, which is what %v
 * prints: "NaN", "+Inf", "-Inf", "-0", exponent form below 1e-4 and from 1e21
 * (1e+21, 1e-05).  With bits 32 the value is first rounded to a float32. */
void gocompat_format_float_g(double f, int bits, char buf[GOCOMPAT_FLOAT_BUF]);

/* encoding/json's text for a float64 (f finite): plain notation for
 * 1e-6 <= |f| < 1e21 and otherwise exponent form with Go's cleanup ("1e-7",
 * "1e+21"); -0 stays "-0". */
void gocompat_json_float(double f, char buf[GOCOMPAT_FLOAT_BUF]);

/* ==== gocompat_json_encode.c: encoding/json's encoder ==== */

enum {
    /* map[string]any order: keys sorted bytewise.  Without it the object's own
     * order is kept, which is how a Go struct's fields come out. */
    GOCOMPAT_JSON_SORT_KEYS = 1 << 0,
    /* json.Marshal's default (and json.Encoder's unless SetEscapeHTML(false)):
     * <, > and & as \u003c, \u003e, \u0026. */
    GOCOMPAT_JSON_ESCAPE_HTML = 1 << 1,
    /* Integers are float64 too, as after json.Unmarshal into interface{}:
     * 12345678901234567890 comes out as 12345678901234567000. */
    GOCOMPAT_JSON_FLOAT64_NUMBERS = 1 << 2,
    /* \b and \f as \u0008 and \u000c, as encoding/json did before Go 1.22;
     * the upgradeable properties text has always been written this way. */
    GOCOMPAT_JSON_LEGACY_BF = 1 << 3,
    /* A zero float is "0" whatever its sign (Go writes "-0" for -0); the CRD
     * upgrade-safety messages have always been written this way. */
    GOCOMPAT_JSON_LEGACY_ZERO = 1 << 4,
};

/* Appends the JSON string literal of s[0..n): \" \\ \n \r \t \b \f, other
 * control bytes as \u00XX (lowercase hex), U+2028 and U+2029 always escaped,
 * each byte of invalid UTF-8 as \ufffd.  Uses the ESCAPE_HTML and LEGACY_BF
 * flags. */
int gocompat_json_string(strbuf *out, const char *s, size_t n, unsigned flags);

/* Appends `v` compactly, as Go's encoding/json writes it, without a trailing
 * newline.  Integers are printed in decimal unless FLOAT64_NUMBERS.  -1 on out
 * of memory (NaN and Inf cannot be in a jansson value). */
int gocompat_json_encode(strbuf *out, const json_t *v, unsigned flags);

/* Asks the encoder where it wrote given values: the FBC loader keeps a bundle
 * property's value as a slice of the normalised line instead of a DOM.  Nodes
 * are matched in the order listed, one pointer comparison per encoded value
 * (a node aliased elsewhere may be matched at another place: it encodes to the
 * very same bytes). */
typedef struct gocompat_json_mark {
    const json_t *node;
    size_t start, len; /* offsets into the output; start == SIZE_MAX: not met */
} gocompat_json_mark;

typedef struct gocompat_json_marks {
    gocompat_json_mark *items; /* owned by the caller */
    size_t n, cap, next;       /* next: the first item not matched yet */
} gocompat_json_marks;

/* gocompat_json_encode that also fills `marks` (may be NULL). */
int gocompat_json_encode_marked(strbuf *out, const json_t *v, unsigned flags,
                                gocompat_json_marks *marks);

/* The length of the run at s[0..n) of bytes that the encoder copies as they
 * are and a JSON scanner passes over: printable ASCII other than '"' and '\\'.
 * Catalog blobs are mostly long such runs (base64 manifests, descriptions), so
 * this looks at eight bytes per step. */
static inline size_t gocompat_json_plain_run(const unsigned char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        /* "Has a byte < k": (w - k*ones) & ~w & highs, with no false negative; a
         * false positive can only sit above a true one, and either way the byte
         * loop below settles the word. */
        uint64_t special = w & highs;              /* >= 0x80 */
        special |= (w - ones * 0x20) & ~w & highs; /* < 0x20 */
        special |= (q - ones) & ~q & highs;        /* == '"' */
        special |= (b - ones) & ~b & highs;        /* == '\\' */
        if (special)
            break;
    }
    while (i < n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

/* ==== gocompat_json_scan.c: encoding/json's scanner and string decoding ==== */

/* checkValid: 0 when text[0..len) is one valid JSON value; -1 with Go's
 * SyntaxError text in `msg` ("invalid character 'a' looking for beginning of
 * value", "unexpected end of JSON input"); -2 on out of memory. */
int gocompat_json_check(const char *text, size_t len, strbuf *msg);

/* For valid JSON: the offset just past the value that starts at s[pos] or
 * after the whitespace there. */
size_t gocompat_json_value_end(const char *s, size_t len, size_t pos);

/* For valid JSON: appends the Go string of the literal whose opening quote is
 * at s[pos], with invalid UTF-8 and lone surrogates as U+FFFD.  -1 on out of
 * memory. */
int gocompat_json_unquote(const char *s, size_t len, size_t pos, strbuf *out);

/* Appends valid JSON raw[0..len) as json.Marshal writes a json.RawMessage:
 * insignificant whitespace removed, and <, >, &, U+2028 and U+2029 escaped. */
int gocompat_json_compact(strbuf *out, const char *raw, size_t len);

/* ==== gocompat_yaml_scalar.c: what a plain YAML scalar means ==== */

typedef enum gocompat_yaml_kind {
    GOCOMPAT_YAML_STRING,
    GOCOMPAT_YAML_NULL,
    GOCOMPAT_YAML_BOOL,
    GOCOMPAT_YAML_INT,   /* fits int64 */
    GOCOMPAT_YAML_UINT,  /* above INT64_MAX, fits uint64 */
    GOCOMPAT_YAML_FLOAT, /* may be NaN or +-Inf (the .nan/.inf spellings) */
    GOCOMPAT_YAML_MERGE, /* the merge key "<<" */
} gocompat_yaml_kind;

typedef struct gocompat_yaml_scalar {
    gocompat_yaml_kind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double f;
} gocompat_yaml_scalar;

/* Resolves an untagged plain scalar `v` (NUL-terminated, `len` bytes) the way
 * sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 booleans) does.  -1 only on out of
 * memory. */
int gocompat_yaml_resolve_plain(const char *v, size_t len, gocompat_yaml_scalar *out);

/* ==== gocompat_yaml.c, gocompat_yaml_text.c: sigs.k8s.io/yaml ==== */

typedef enum gocompat_yaml_errcode {
    GOCOMPAT_YAML_OK,
    GOCOMPAT_YAML_ENOMEM,
    GOCOMPAT_YAML_ESYNTAX,         /* libyaml's problem (and context) */
    GOCOMPAT_YAML_EDEPTH,          /* nested deeper than opts.max_depth */
    GOCOMPAT_YAML_EALIASING,       /* aliases expand past opts.max_nodes or max_bytes */
    GOCOMPAT_YAML_ETOOBIG,         /* the JSON text would pass max_len bytes */
    GOCOMPAT_YAML_EANCHOR,         /* alias to an unknown anchor (text: its name) */
    GOCOMPAT_YAML_EALIAS,          /* an alias, with GOCOMPAT_YAML_NO_ALIASES */
    GOCOMPAT_YAML_ENONFINITE,      /* .nan/.inf value (text: the scalar; value) */
    GOCOMPAT_YAML_EKEY,            /* null or uint64 map key (text: "null" or the key) */
    GOCOMPAT_YAML_EKEY_ALIAS,      /* alias key to a "null" or "collection" (text) */
    GOCOMPAT_YAML_EKEY_COLLECTION, /* a mapping or sequence as a key */
    GOCOMPAT_YAML_EMERGE,          /* << of something that is not a map (list) */
    GOCOMPAT_YAML_ESCALAR,         /* jansson refused a scalar (out of memory, bad UTF-8) */
    GOCOMPAT_YAML_EEVENT,          /* an event libyaml should not produce here (value: type) */
    GOCOMPAT_YAML_ECALLBACK,       /* the document callback failed */
} gocompat_yaml_errcode;

/* What went wrong, for the caller to word: each caller keeps its own messages. */
typedef struct gocompat_yaml_error {
    gocompat_yaml_errcode code;
    int line;                     /* 1-based line of the problem */
    const char *problem, *context; /* ESYNTAX: libyaml's static texts (context may be NULL) */
    double value;                 /* ENONFINITE: the value; EDEPTH: the limit; EEVENT: the type */
    char text[OLM_ERROR_MAX];     /* see the codes */
} gocompat_yaml_error;

enum {
    /* Every scalar is a string, except a plain null, ~, Null or NULL: all that a
     * kubeconfig reader needs (it reads booleans itself). */
    GOCOMPAT_YAML_STRINGS = 1 << 0,
    /* An alias is an error (GOCOMPAT_YAML_EALIAS). */
    GOCOMPAT_YAML_NO_ALIASES = 1 << 1,
    /* Stop as soon as the first document's root node is built: what follows
     * it is not even parsed. */
    GOCOMPAT_YAML_FIRST_ROOT = 1 << 2,
};

typedef struct gocompat_yaml_opts {
    unsigned flags;
    int max_depth;    /* deepest node (the root is 0); 0 means 1000 */
    size_t max_nodes; /* nodes once aliases are expanded; 0 means 5,000,000 */
    size_t max_bytes; /* bytes of the document's text once aliases are expanded (scalars
                         plus a little per node, about its JSON text); 0 means
                         max(64 MiB, 4 x the input).  A document without aliases stays
                         under 2 x its input. */
} gocompat_yaml_opts;

/* Receives each document's root (owned; JSON null for an empty document) and
 * the line it starts on.  Returns 0 to go on, 1 to stop, -1 to fail (then
 * gocompat_yaml_decode fails with GOCOMPAT_YAML_ECALLBACK). */
typedef int (*gocompat_yaml_doc_fn)(void *ud, json_t *root, int line);

/* sigs.k8s.io/yaml.YAMLToJSON followed by json.Unmarshal into interface{}, for
 * each document of a YAML stream: numbers become float64 (JSON reals), map
 * keys become strings (ints in decimal, booleans as true/false, floats by
 * FormatFloat 'g' at 32 bits; null and uint64 keys are errors), `<<` merges,
 * anchors are per document.  Object keys keep their order of appearance.  0, or
 * -1 with `e` filled. */
int gocompat_yaml_decode(const char *data, size_t len, const gocompat_yaml_opts *opts,
                         gocompat_yaml_doc_fn fn, void *ud, gocompat_yaml_error *e);

/* sigs.k8s.io/yaml.YAMLToJSON of the first document, appended to `out` as
 * JSON text: json.Marshal's output, so integers stay exact (int64 and uint64)
 * and floats are float64 text; an empty stream is "null".  `json_flags` are
 * the encoder flags (json.Marshal: SORT_KEYS | ESCAPE_HTML).  The text may not
 * grow past `max_len` bytes (0: no limit; aliases can make a small file
 * expand, "billion laughs"), and opts->max_depth also bounds the depth once
 * aliases are expanded.  As in go-yaml, a syntax error or an unknown anchor
 * anywhere in the document is reported before a bad key, merge or value.  0,
 * or -1 with `e` filled (`out` may then hold part of the text). */
int gocompat_yaml_to_json(const char *data, size_t len, const gocompat_yaml_opts *opts,
                          unsigned json_flags, size_t max_len, strbuf *out,
                          gocompat_yaml_error *e);

/* Words `e` the way the FBC loader reports YAML problems, "<name>:<line>: ..."
 * ("<name>: out of memory").  Returns -1. */
int gocompat_yaml_strerror(const gocompat_yaml_error *e, const char *name, olm_error *err);

#endif

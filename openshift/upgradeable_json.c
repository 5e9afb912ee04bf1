/* upgradeable_json: json.Unmarshal of the olm.properties annotation into
 * []property.Property, and of a property value into interface{}, with Go's
 * error texts, which end up verbatim in the condition message.  jansson cannot
 * be used here: it turns the number 4.10 into the double 4.1 (the spec keeps
 * the raw text, so 4.10 is 4.10), and its error texts are not Go's.
 *
 * The syntax check (Go's scanner and its SyntaxError texts) and the string
 * decoding are gocompat's; decoding then runs over text known to be valid, so
 * it never needs to report syntax errors itself. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gocompat.h"
#include "olm_array.h"
#include "upgradeable_internal.h"

static int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static size_t ws_end(const char *s, size_t len, size_t pos)
{
    while (pos < len && is_ws((unsigned char)s[pos]))
        pos++;
    return pos;
}

static const char *kind_word(char c)
{
    switch (c) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't':
    case 'f': return "bool";
    default: return "number";
    }
}

void upgradeable_prop_list_free(upgradeable_prop_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].type);
        free(l->items[i].value);
    }
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

/* Saves Go's first UnmarshalTypeError only, as decodeState.saveError does. */
static int save_error(strbuf *msg, int *have, const char *word, const char *into)
{
    if (*have)
        return 0;
    *have = 1;
    strbuf_reset(msg);
    return strbuf_printf(msg, "json: cannot unmarshal %s into %s", word, into);
}

static bool key_is(const strbuf *key, const char *name)
{
    return key->len == strlen(name) && strncasecmp(strbuf_str(key), name, key->len) == 0;
}

/* Decodes the object at s[pos] into *p (Go struct decoding: case-insensitive
 * keys, the last duplicate wins, unknown keys ignored). */
static int decode_prop(const char *s, size_t len, size_t pos, upgradeable_prop *p, strbuf *msg, int *have_err)
{
    pos = ws_end(s, len, pos + 1);
    strbuf key = STRBUF_INIT;
    int rc = 0;
    while (rc == 0 && s[pos] != '}') {
        strbuf_reset(&key);
        if (gocompat_json_unquote(s, len, pos, &key) < 0) {
            rc = -2;
            break;
        }
        pos = ws_end(s, len, gocompat_json_value_end(s, len, pos));
        pos = ws_end(s, len, pos + 1); /* ':' */
        size_t end = gocompat_json_value_end(s, len, pos);
        if (key_is(&key, "type")) {
            if (s[pos] == '"') {
                strbuf v = STRBUF_INIT;
                if (gocompat_json_unquote(s, len, pos, &v) < 0 || strbuf_reserve(&v, 0) < 0) {
                    strbuf_free(&v);
                    rc = -2;
                    break;
                }
                free(p->type);
                p->type_len = v.len;
                p->type = strbuf_detach(&v);
                if (!p->type)
                    rc = -2;
            } else if (s[pos] != 'n') {
                if (save_error(msg, have_err, kind_word(s[pos]),
                               "Go struct field Property.type of type string") < 0)
                    rc = -2;
            }
        } else if (key_is(&key, "value")) {
            char *raw = strndup(s + pos, end - pos);
            if (!raw) {
                rc = -2;
                break;
            }
            free(p->value);
            p->value = raw;
            p->value_len = end - pos;
        }
        pos = ws_end(s, len, end);
        if (s[pos] == ',')
            pos = ws_end(s, len, pos + 1);
    }
    strbuf_free(&key);
    return rc;
}

static int new_prop(upgradeable_prop_list *out, upgradeable_prop **p)
{
    if (OLM_ARRAY_RESERVE(out->items, out->cap, out->n + 1) < 0)
        return -2;
    *p = &out->items[out->n];
    memset(*p, 0, sizeof **p);
    (*p)->type = strdup("");
    if (!(*p)->type)
        return -2;
    out->n++;
    return 0;
}

/* Decodes the array (or null) at s[pos] as []property.Property. */
static int decode_list_at(const char *s, size_t len, size_t pos, upgradeable_prop_list *out, strbuf *msg, int *have_err)
{
    char c = s[pos];
    if (c == 'n')
        return 0;
    if (c != '[')
        return save_error(msg, have_err, kind_word(c), "Go value of type []property.Property") < 0 ? -2 : 0;
    pos = ws_end(s, len, pos + 1);
    while (s[pos] != ']') {
        upgradeable_prop *p;
        if (new_prop(out, &p) < 0)
            return -2;
        if (s[pos] == '{') {
            if (decode_prop(s, len, pos, p, msg, have_err) < 0)
                return -2;
        } else if (s[pos] != 'n') {
            if (save_error(msg, have_err, kind_word(s[pos]), "Go value of type property.Property") < 0)
                return -2;
        }
        pos = ws_end(s, len, gocompat_json_value_end(s, len, pos));
        if (s[pos] == ',')
            pos = ws_end(s, len, pos + 1);
    }
    return 0;
}

static int finish(int rc, int have_err, upgradeable_prop_list *out)
{
    if (rc < 0 || have_err) {
        upgradeable_prop_list_free(out);
        return rc < 0 ? -2 : -1;
    }
    return 0;
}

int upgradeable_json_decode_props(const char *text, size_t len, upgradeable_prop_list *out, strbuf *msg)
{
    out->items = NULL;
    out->n = out->cap = 0;
    int rc = gocompat_json_check(text, len, msg);
    if (rc < 0)
        return rc;
    int have_err = 0;
    rc = decode_list_at(text, len, ws_end(text, len, 0), out, msg, &have_err);
    return finish(rc, have_err, out);
}

int upgradeable_json_decode_props_field(const char *text, size_t len, const char *field, upgradeable_prop_list *out,
                                strbuf *msg)
{
    out->items = NULL;
    out->n = out->cap = 0;
    int rc = gocompat_json_check(text, len, msg);
    if (rc < 0)
        return rc;
    size_t pos = ws_end(text, len, 0);
    if (text[pos] != '{')
        return 0; /* a document that is not a mapping holds no properties */
    int have_err = 0;
    strbuf key = STRBUF_INIT;
    pos = ws_end(text, len, pos + 1);
    size_t found = 0;
    bool have = false;
    rc = 0;
    while (text[pos] != '}') {
        strbuf_reset(&key);
        if (gocompat_json_unquote(text, len, pos, &key) < 0) {
            rc = -2;
            break;
        }
        pos = ws_end(text, len, gocompat_json_value_end(text, len, pos));
        pos = ws_end(text, len, pos + 1);
        if (key_is(&key, field))
            found = pos, have = true; /* the last duplicate wins */
        pos = ws_end(text, len, gocompat_json_value_end(text, len, pos));
        if (text[pos] == ',')
            pos = ws_end(text, len, pos + 1);
    }
    strbuf_free(&key);
    if (rc == 0 && have)
        rc = decode_list_at(text, len, found, out, msg, &have_err);
    return finish(rc, have_err, out);
}

int upgradeable_json_decode_any(const char *raw, size_t len, upgradeable_json_kind *kind, char **str, size_t *str_len,
                        strbuf *msg)
{
    *str = NULL;
    *str_len = 0;
    int rc = gocompat_json_check(raw, len, msg);
    if (rc < 0)
        return rc;
    size_t pos = ws_end(raw, len, 0);
    size_t end = gocompat_json_value_end(raw, len, pos);
    switch (raw[pos]) {
    case '"': {
        strbuf v = STRBUF_INIT;
        if (gocompat_json_unquote(raw, len, pos, &v) < 0 || strbuf_reserve(&v, 0) < 0) {
            strbuf_free(&v);
            return -2;
        }
        *str_len = v.len;
        *str = strbuf_detach(&v);
        if (!*str)
            return -2;
        *kind = UPG_J_STRING;
        return 0;
    }
    case '{': *kind = UPG_J_OBJECT; return 0;
    case '[': *kind = UPG_J_ARRAY; return 0;
    case 't':
    case 'f': *kind = UPG_J_BOOL; return 0;
    case 'n': *kind = UPG_J_NULL; return 0;
    default: break;
    }
    /* A number: interface{} gets a float64, and ParseFloat fails on overflow. */
    char *num = strndup(raw + pos, end - pos);
    if (!num)
        return -2;
    double d = strtod(num, NULL);
    if (isinf(d)) {
        strbuf_reset(msg);
        rc = strbuf_printf(msg, "json: cannot unmarshal number %s into Go value of type float64", num) < 0 ? -2 : -1;
        free(num);
        return rc;
    }
    free(num);
    *kind = UPG_J_NUMBER;
    return 0;
}

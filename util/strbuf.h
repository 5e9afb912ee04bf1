/* strbuf: a growable, always NUL-terminated byte buffer.
 *
 * The buffer owns `data`; strbuf_free releases it, strbuf_detach hands it to the
 * caller (who then frees it with free()).  Appends return 0, or -1 when memory
 * runs out; after a failed append the buffer keeps its previous content.
 *
 * A fixed strbuf writes into memory its owner gave it (data, cap) and never reallocates
 * it: an append beyond cap fails, strbuf_free only forgets the memory (its owner releases
 * it), and it must not be detached. */
#ifndef OLM_STRBUF_H
#define OLM_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
    _Bool fixed; /* data belongs to the owner, see above */
} strbuf;

#define STRBUF_INIT {NULL, 0, 0, 0}

int strbuf_reserve(strbuf *sb, size_t extra);
int strbuf_append(strbuf *sb, const char *s, size_t n);
int strbuf_puts(strbuf *sb, const char *s);
int strbuf_putc(strbuf *sb, char c);
int strbuf_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_reset(strbuf *sb);            /* length 0, keeps memory */
char *strbuf_detach(strbuf *sb);          /* caller owns result ("" if empty); sb is reset */
void strbuf_free(strbuf *sb);
/* Contents as a C string; "" if nothing was appended yet.  Borrowed. */
const char *strbuf_str(const strbuf *sb);

#endif

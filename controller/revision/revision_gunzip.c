/* revision_gunzip: the gzip'd object data of a ClusterObjectSet's Secret, read back (revision.h).
 * Shared by the ClusterObjectSet controller (objectset_resolve.c) and the comparison of another
 * writer's revision (revision_compare.c). */
#include <stdlib.h>
#include <zlib.h>

#include "revision.h"

#define MAX_DECOMPRESSED (10u * 1024u * 1024u) /* upstream's maxDecompressedSize, 10 MiB */

char *revision_gunzip(const unsigned char *in, size_t n, size_t *out_len, const char *what, olm_error *err)
{
    z_stream z = {0};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        olm_error_set(err, "creating gzip reader for %s: %s", what, z.msg ? z.msg : "zlib");
        return NULL;
    }
    size_t cap = n * 4 + 1024, len = 0;
    char *buf = malloc(cap);
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    int zr = Z_OK;
    while (buf && zr != Z_STREAM_END) {
        if (len == cap) {
            if (cap > MAX_DECOMPRESSED)
                break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        z.next_out = (unsigned char *)buf + len;
        z.avail_out = (uInt)(cap - len);
        zr = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
        if (zr != Z_OK && zr != Z_STREAM_END) {
            olm_error_set(err, "decompressing %s: %s", what, z.msg ? z.msg : "corrupt gzip data");
            free(buf);
            inflateEnd(&z);
            return NULL;
        }
    }
    inflateEnd(&z);
    if (!buf) {
        olm_error_set(err, "decompressing %s: out of memory", what);
        return NULL;
    }
    if (len > MAX_DECOMPRESSED) {
        olm_error_set(err, "decompressed data for %s exceeds maximum size (%u bytes)", what, MAX_DECOMPRESSED);
        free(buf);
        return NULL;
    }
    *out_len = len;
    return buf;
}

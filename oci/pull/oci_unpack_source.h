/* Private to the unpacker (oci_unpack.c), its tests and the fuzz target: what libarchive
 * reads of a layer.  A gzip layer is gunzipped here with ISA-L (isal_inflate, about 2.5x
 * zlib's speed on catalog layers), so libarchive sees its tar; anything else (zstd, plain
 * tar, an empty layer, junk) is passed through unchanged for libarchive to recognise. */
#ifndef OLM_OCI_UNPACK_SOURCE_H
#define OLM_OCI_UNPACK_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct archive;
typedef struct oci_unpack_source oci_unpack_source;

/* Reads `fd` (not closed) or `len` bytes at `data` (fd < 0; not copied: they must outlive
 * the source).  NULL when out of memory. */
oci_unpack_source *oci_unpack_source_new(int fd, const void *data, size_t len);
void oci_unpack_source_free(oci_unpack_source *s);
/* archive_read_open(a, s, NULL, oci_unpack_source_read, NULL).  A gzip error or a read
 * error is set on `a` (archive_set_error) and returned as -1: libarchive then fails with
 * that message. */
ssize_t oci_unpack_source_read(struct archive *a, void *source, const void **buf);
/* After libarchive saw the tar's end: reads a gzip layer to the end of its last member, so
 * that a truncated or corrupt end (CRC-32, length) is an error too, as it is anywhere else.
 * What is decompressed there is only skipped: at most `limit` bytes (the unpacker's
 * max_skipped_bytes left) are read, *read says how many.  0 done (or not gzip), -1 a gzip
 * or read error (oci_unpack_source_error), 1 over the limit. */
int oci_unpack_source_finish(struct archive *a, oci_unpack_source *s, uint64_t limit, uint64_t *read);
/* The message of the gzip or read error that failed the source, NULL if none did. */
const char *oci_unpack_source_error(const oci_unpack_source *s);

#endif

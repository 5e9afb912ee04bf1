/* fuzz_fbc_ignore: `.indexignore` files of a hostile catalog image.  Input: a directory line,
 * a file path line, then the patterns, added once for the catalog root and once for that
 * directory, and matched against the path.  Beyond memory errors this is about time: the
 * matcher must stay polynomial in (pattern components x path depth) whatever the `**`s
 * (issue 12: 60 levels and 8 `**` never finished), so the smoke run's -timeout fails a
 * slow input. */
#include "fbc_internal.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    char *path = strchr(s, '\n'), *pats = NULL;
    if (path) {
        *path++ = '\0';
        if ((pats = strchr(path, '\n')) != NULL)
            *pats++ = '\0';
    }
    fbc_ignore *ig = fbc_ignore_new();
    FUZZ_CHECK(ig != NULL, "out of memory");
    if (pats) {
        size_t len = size - (size_t)(pats - s);
        if (fbc_ignore_add(ig, "", pats, len) == 0 && fbc_ignore_add(ig, s, pats, len) == 0)
            FUZZ_CHECK(fbc_ignore_match(ig, path) >= 0, "out of memory");
    }
    fbc_ignore_free(ig);
    free(s);
    return 0;
}

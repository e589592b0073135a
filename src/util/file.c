/* file.c - atomic file writes (see file.h). */
#include "util/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

kb_status kb_write_atomic(const char *path, kb_emit_fn emit, const void *ctx, kb_err *e)
{
    kb_status st;
    char tmp[4096];
    if (strcmp(path, "-") == 0)
        return emit(stdout, ctx, e);
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return kb_fail(e, KB_EUSAGE, "output path is too long: '%.60s...'", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return kb_fail(e, KB_EENV, "cannot create '%s': %s", tmp, strerror(errno));
    st = emit(f, ctx, e);
    if (fflush(f) != 0 && st == KB_OK)
        st = kb_fail(e, KB_EENV, "cannot write '%s': %s", tmp, strerror(errno));
    if (fclose(f) != 0 && st == KB_OK)
        st = kb_fail(e, KB_EENV, "cannot write '%s': %s", tmp, strerror(errno));
    if (st == KB_OK && rename(tmp, path) != 0)
        st = kb_fail(e, KB_EENV, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (st != KB_OK)
        remove(tmp);
    return st;
}

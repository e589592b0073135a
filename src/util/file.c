/* file.c - atomic file writes (see file.h). */
#include "util/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

kb_status kb_check_writable(const char *path, const char *option, kb_err *e)
{
    char folder[4096];
    struct stat sb;
    if (strcmp(path, "-") == 0)
        return KB_OK;
    if (!*path)
        return kb_fail(e, KB_EUSAGE, "cannot write %s '': the path is empty", option);
    if (kb_strlcpy(folder, path, sizeof folder))
        return kb_fail(e, KB_EUSAGE, "cannot write %s '%.60s...': the path is too long", option,
                       path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return kb_fail(e, KB_EUSAGE, "cannot write %s '%s': it is a folder", option, path);
    char *slash = strrchr(folder, '/');
    if (!slash)
        kb_strlcpy(folder, ".", sizeof folder);
    else if (slash == folder)
        folder[1] = '\0'; /* "/name": the root */
    else
        *slash = '\0';
    if (stat(folder, &sb) != 0)
        return kb_fail(e, KB_EUSAGE, "cannot write %s '%s': folder '%s' does not exist", option,
                       path, folder);
    if (!S_ISDIR(sb.st_mode))
        return kb_fail(e, KB_EUSAGE, "cannot write %s '%s': '%s' is not a folder", option, path,
                       folder);
    if (access(folder, W_OK | X_OK) != 0)
        return kb_fail(e, KB_EUSAGE, "cannot write %s '%s': folder '%s' is not writable (%s)",
                       option, path, folder, strerror(errno));
    return KB_OK;
}

/* file.c - writing a report to the user's output path (see file.h). */
#include "util/file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs emit on f, then checks its flush and close (f is closed either way);
 * errors name the user's path. */
static kb_status emit_close(FILE *f, const char *path, kb_emit_fn emit, const void *ctx,
                            kb_err *e)
{
    kb_status st = emit(f, ctx, e);
    if (fflush(f) != 0 && st == KB_OK)
        st = kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
    if (fclose(f) != 0 && st == KB_OK)
        st = kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
    return st;
}

/* Something that is not a regular file (a device, a FIFO, a socket's path):
 * written in place, as the user named it. */
static kb_status write_in_place(const char *path, kb_emit_fn emit, const void *ctx, kb_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
    return emit_close(f, path, emit, ctx, e);
}

/* A regular file at target (the user's path with its links resolved), or none
 * yet: written to a fresh temporary file beside it that takes the old file's
 * mode (or the one a new file gets), then renamed over it. old: the existing
 * file's status, or NULL. */
static kb_status write_replace(const char *path, const char *target, const struct stat *old,
                               kb_emit_fn emit, const void *ctx, kb_err *e)
{
    kb_status st = KB_OK;
    char tmp[PATH_MAX + 16];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", target) >= sizeof tmp)
        return kb_fail(e, KB_EUSAGE, "output path is too long: '%.60s...'", path);
    const int fd = mkstemp(tmp);
    if (fd < 0)
        return kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
    mode_t mode;
    if (old) {
        mode = old->st_mode & 07777;
        /* Keeping the owner needs the right to; a file we may not give away
         * becomes ours, as any editor's save does. */
        if (fchown(fd, old->st_uid, old->st_gid) != 0)
            errno = 0;
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    FILE *f = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        st = kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        goto done;
    }
    KB_TRY(emit_close(f, path, emit, ctx, e));
    if (rename(tmp, target) != 0)
        st = kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
done:
    if (st != KB_OK)
        unlink(tmp);
    return st;
}

kb_status kb_write_atomic(const char *path, kb_emit_fn emit, const void *ctx, kb_err *e)
{
    struct stat sb;
    if (!path || !*path)
        return kb_fail(e, KB_EUSAGE, "empty output path (name a file, or '-' for standard output)");
    if (strcmp(path, "-") == 0)
        return emit(stdout, ctx, e);
    if (strlen(path) >= PATH_MAX)
        return kb_fail(e, KB_EUSAGE, "output path is too long: '%.60s...'", path);
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT)
            return kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
        struct stat lb;
        if (lstat(path, &lb) == 0) /* a link to nothing yet: create its target */
            return write_in_place(path, emit, ctx, e);
        return write_replace(path, path, NULL, emit, ctx, e);
    }
    if (S_ISDIR(sb.st_mode))
        return kb_fail(e, KB_EENV, "cannot write '%s': it is a directory", path);
    if (!S_ISREG(sb.st_mode))
        return write_in_place(path, emit, ctx, e);
    char target[PATH_MAX];
    if (!realpath(path, target))
        return kb_fail(e, KB_EENV, "cannot write '%s': %s", path, strerror(errno));
    return write_replace(path, target, &sb, emit, ctx, e);
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

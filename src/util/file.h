/* file.h - writing a report to the user's output path, so that no reader ever
 * sees half of a file. */
#ifndef KB_FILE_H
#define KB_FILE_H

#include <stdio.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Something that writes itself to a stream. */
typedef kb_status (*kb_emit_fn)(FILE *f, const void *ctx, kb_err *e);

/* Writes the output of emit(f, ctx) to the user's path:
 *   "-"               standard output (the caller flushes and checks stdout);
 *   a regular file, or none yet: a fresh temporary file beside it, flushed and
 *                     closed, then renamed over it, so a failed or interrupted
 *                     write never leaves a truncated file under the name; an
 *                     existing file keeps its mode (and owner where allowed);
 *   a symbolic link:  its target, replaced the same way;
 *   anything else (a device such as /dev/null, a FIFO): written in place.
 * Messages name path as given. KB_EUSAGE for an empty or too long path;
 * KB_EENV on I/O failure (a directory included); the emitter's own status
 * otherwise. */
kb_status kb_write_atomic(const char *path, kb_emit_fn emit, const void *ctx, kb_err *e);

/* KB_OK when a file can be written at path ("-": stdout, always): its folder
 * exists, is a folder, and may be written, and path itself is not a folder.
 * Otherwise KB_EUSAGE naming the option: "cannot write --json 'x/r.json':
 * folder 'x' does not exist". A command checks its output paths with this
 * before any long work, so that a typo costs nothing. */
kb_status kb_check_writable(const char *path, const char *option, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif

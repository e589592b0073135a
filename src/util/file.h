/* file.h - writing a file so that no reader ever sees half of it. */
#ifndef KB_FILE_H
#define KB_FILE_H

#include <stdio.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Something that writes itself to a stream. */
typedef kb_status (*kb_emit_fn)(FILE *f, const void *ctx, kb_err *e);

/* Runs emit(f, ctx) on stdout when path is "-" (the caller flushes and checks
 * stdout); otherwise on path.tmp, checking the flush and close, then renames it
 * over path, so a failed or interrupted write never leaves a truncated file
 * under the name. KB_EENV on I/O failure, KB_EUSAGE for a path too long; the
 * emitter's own status otherwise. */
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

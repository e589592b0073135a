/* writers.h - text, markdown and CSV reports of a run. Every writer reads the
 * same kb_run and computes no figure of its own, except each result's speed-up
 * over the `naive` variant of its case (same op, dtype and shape). JSON reports
 * are in json.h. */
#ifndef KB_WRITERS_H
#define KB_WRITERS_H

#include <stdio.h>

#include "report/result.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A header (run, device, copy-bandwidth ceiling, state, tag), then one aligned
 * table per case (op, dtype, shape) with a line per non-ok result giving its
 * full reason. Writes to f, which the caller flushes and closes. KB_EENV when
 * out of memory or when f reports a write error. */
kb_status kb_write_text(FILE *f, const kb_run *run, kb_err *e);

/* The same report as markdown: headings, bullet lists and pipe tables ('|' in
 * strings escaped). Errors as kb_write_text. */
kb_status kb_write_markdown(FILE *f, const kb_run *run, kb_err *e);

/* RFC 4180 CSV: a header row, then one row per result with every scalar field
 * (run and device fields repeated), CRLF line ends, fields quoted when they hold
 * a comma, quote or line break; unknown numbers are empty. Errors as
 * kb_write_text. */
kb_status kb_write_csv(FILE *f, const kb_run *run, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif

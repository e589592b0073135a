/* compare_view.h - the text, markdown and JSON views of a comparison of two
 * runs (results/compare.h); the HTML view is in html.h. */
#ifndef KB_COMPARE_VIEW_H
#define KB_COMPARE_VIEW_H

#include <stdio.h>

#include "report/writers.h"
#include "results/compare.h"
#include "util/status.h"

/* Why verdicts across GPUs weigh % of peak, for the views that say so. */
#define KB_CROSS_GPU_WHY                                                                \
    "Verdicts compare the share of each GPU's own calibrated ceiling (% peak), not raw " \
    "time, so a change of GPU is not reported as a code regression."

/* "BASE ran on <GPU>, NEW on <GPU>. " KB_CROSS_GPU_WHY, the GPU names written
 * through text (which escapes them for the view). */
void kb_compare_cross_gpu_note(FILE *f, const kb_compare *c, void (*text)(FILE *, const char *));

/* The source line of one side, "NAME · DEVICE (UUID) · git REV · STARTED[ · tag
 * TAG]", into b[n] (plain text: the caller escapes it for its format). */
void kb_compare_side_line(const char *name, const kb_run *r, char *b, size_t n);

/* "5 faster, 1 slower, 24 same, 0 uncertain, 0 only in BASE, 2 only in NEW":
 * the count of cases per verdict, into b[n]. */
void kb_compare_headline(const kb_compare *c, char *b, size_t n);

/* A header (BASE and NEW: source, device, git, time; the rule; a cross-GPU
 * warning when the GPUs differ), the headline "N faster, N slower, N same, N
 * uncertain, N only in BASE, N only in NEW", then one aligned table per
 * (operator, dtype, shape): variant, BASE and NEW median, (across GPUs: the
 * % peak of each side), ratio, interval, verdict, what moved; and under it why
 * each UNCERTAIN case is so. Lines stay within KB_TEXT_WIDTH (100) columns:
 * long lines wrap, "what moved" is cut to fit. Writes to f, which the caller
 * flushes and closes. KB_EENV when f reports a write error or out of memory. */
kb_status kb_compare_write_text(FILE *f, const kb_compare *c, kb_err *e);

/* kb_compare_write_text with layout l (a terminal's width, or --wide: no
 * limit, "what moved" whole). */
kb_status kb_compare_write_text_laid_out(FILE *f, const kb_compare *c, const kb_text_layout *l,
                                         kb_err *e);

/* The same as markdown for a CI job summary: the headline as a heading first,
 * then the sources and rule as a list and one pipe table per case group ('|'
 * escaped). Errors as kb_compare_write_text. */
kb_status kb_compare_write_markdown(FILE *f, const kb_compare *c, kb_err *e);

/* The comparison as JSON (docs/compare.md): threshold, rule, both sources,
 * the summary counts and one object per case with both sides' figures, the
 * ratios, the interval, the verdict and what moved. Errors as
 * kb_compare_write_text. */
kb_status kb_compare_write_json(FILE *f, const kb_compare *c, kb_err *e);

#endif

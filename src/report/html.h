/* html.h - one self-contained HTML page per report (`kbench report --format
 * html`) or comparison (`kbench compare --format html`): inline CSS and SVG,
 * no script, nothing fetched, so the file works offline and as a CI artifact.
 * Every string taken from the data is HTML-escaped. The elements a reader (or
 * a test) counts carry classes: tr.result (one per result), rect.bar (one per
 * timed result), circle.roof-point (one per result on the roofline),
 * rect.stall-bar (one per stall reason shown), tr.sweep-row,
 * polyline.sweep-line and circle.sweep-point (a sweep's table rows, lines and
 * points), tr.case and g.ci on the comparison page. */
#ifndef KB_HTML_H
#define KB_HTML_H

#include <stdio.h>

#include "results/compare.h"
#include "results/result.h"
#include "util/status.h"

/* Writes s to f with &, <, >, " and ' escaped, so that it is text in element
 * content and in quoted attribute values. */
void kb_html_escape(FILE *f, const char *s);

/* The report page of a run: its header (device, every known ceiling, state,
 * tag, command), per case (op, dtype, shape) the table of results with the
 * same columns as the text report and a bar chart of the median time per
 * variant (log scale when the slowest is over 20 times the fastest), a
 * roofline chart (arithmetic intensity = model flops / model bytes against
 * achieved TFLOP/s, with the calibrated copy bandwidth as the slanted roof and
 * the compute peaks that apply to the run's dtypes as flat roofs, one labelled
 * point per result), and where counters hold stall reasons, per result the
 * stall fractions of its longest kernel; and each sweep of the run
 * (results/sweep.h) as the text report's table and a chart of each variant's
 * GB/s (TFLOP/s) against the swept axis on a log scale, a line per variant
 * (polyline.sweep-line), a point per ok result (circle.sweep-point), a tick
 * at each value of the axis whose labels take up to three rows so that none
 * overlaps, and the calibrated ceiling dashed. Writes to f, which the caller
 * flushes and closes. KB_EENV when out of memory or f reports a write error. */
kb_status kb_html_write_run(FILE *f, const kb_run *run, kb_err *e);

/* The comparison page: both sources, the cross-GPU note when the GPUs differ,
 * the headline counts, and per case group a table of the cases (times, % peak
 * across GPUs, ratio, interval, verdict, what moved) and a chart of each
 * ratio with its interval against the threshold band. Errors as
 * kb_html_write_run. */
kb_status kb_html_write_compare(FILE *f, const kb_compare *c, kb_err *e);

#endif

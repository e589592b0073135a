/* writers.h - text, markdown and CSV reports of a run, and its per-kernel
 * detail. Every writer reads the same kb_run and computes no figure of its own:
 * the result model holds them all, the speed-up over naive and the per-result
 * figures taken from the kernels (registers, spills, theoretical occupancy,
 * top stalls) included. The JSON report is the store's (store/json.h). */
#ifndef KB_WRITERS_H
#define KB_WRITERS_H

#include <stdio.h>

#include "results/result.h"
#include "util/status.h"

/* A header (run, device, every known calibrated ceiling: "copy bw 4229 GB/s ·
 * bf16 mma 780 TFLOP/s · fp32 51 TFLOP/s", state, tag), then one aligned
 * table per case (op, dtype, shape) with a line per non-ok result giving its
 * full reason. Columns: variant, status, median, spread, GB/s, % copy (for a
 * compute-bound case, bound "compute": TFLOP/s and % peak), vs naive,
 * kernels, regs (result's registers), spills (result's local_bytes), extra
 * mem (extra_bytes, "4.3 GB", shown when a result of the case has some),
 * then, when a result of the case has counters, DRAM GB/s (dram_gbps), excess
 * (excess_traffic, "1.02x"), occupancy (achieved/theoretical, "61/75%") and,
 * when one has stall reasons, top stalls (top_stalls); then the note. A line
 * "counters: none (REASON)" under the table says why counters are missing.
 * Lines stay within KB_TEXT_WIDTH (100) columns: the compact column set (no
 * kernels, spill, extra mem or DRAM GB/s), the stalls and note cells cut to
 * fit (or the notes moved under the table, the stalls left to --kernels), long
 * header and note lines wrapped. After the cases, each sweep of the run
 * (results/sweep.h: one operator and dtype at several shapes along one axis)
 * as a table of each variant's GB/s (TFLOP/s) per value of the axis, the
 * fastest marked with '*' and its % of the ceiling; the variants that do not
 * fit the width continue in a second table. Writes to f, which the caller
 * flushes and closes. KB_EENV when out of memory or when f reports a write
 * error. */
kb_status kb_write_text(FILE *f, const kb_run *run, kb_err *e);

/* How a text report is laid out. */
typedef struct kb_text_layout {
    size_t width; /* the widest line in columns; 0: KB_TEXT_WIDTH */
    int wide;     /* every column, cells whole, lines as long as they need */
} kb_text_layout;

/* kb_write_text with layout l (a terminal's width, or --wide). */
kb_status kb_write_text_laid_out(FILE *f, const kb_run *run, const kb_text_layout *l,
                                 kb_err *e);

/* The same report as markdown: headings, bullet lists and pipe tables ('|' in
 * strings escaped), the same columns with the note always and cells never cut,
 * each sweep's table whole.
 * Errors as kb_write_text. */
kb_status kb_write_markdown(FILE *f, const kb_run *run, kb_err *e);

/* RFC 4180 CSV: a header row, then one row per result with every scalar field
 * (run and device fields repeated; then the counter fields: metric_set,
 * passes, counters_reason, dram_bytes, dram_gbps, excess_traffic,
 * achieved_occupancy, theoretical_occupancy, registers, local_bytes,
 * top_stalls; last mma_tflops, fp32_tflops, bound, extra_bytes), CRLF line
 * ends, fields quoted when they hold a comma, quote or
 * line break; unknown numbers are empty. Errors as kb_write_text. */
kb_status kb_write_csv(FILE *f, const kb_run *run, kb_err *e);

/* The per-kernel detail of each result (`kbench report --kernels`): the header,
 * then per result its counter pass (set and passes, or why there are none) and
 * per kernel its name, grid, block, registers, static and dynamic shared
 * memory, local memory, theoretical occupancy with blocks per SM and limiter,
 * and, when collected, every metric in set order and the stall reasons largest
 * first. Errors as kb_write_text. */
kb_status kb_write_kernels_text(FILE *f, const kb_run *run, kb_err *e);

/* The same detail as markdown: a kernel table per result, then a metrics table
 * and a stalls table per kernel that has them. Errors as kb_write_text. */
kb_status kb_write_kernels_markdown(FILE *f, const kb_run *run, kb_err *e);

#endif

/* table.h - the results table of a case, as the text, markdown and HTML
 * reports all show it: its columns and their headings, the cells of one
 * result, and which columns a case shows. Formatting only: every figure comes
 * from the result model. */
#ifndef KB_TABLE_H
#define KB_TABLE_H

#include <stddef.h>

#include "results/result.h"
#include "results/sweep.h"

/* The columns of a case table, in order. */
enum kb_col {
    KB_COL_VARIANT, KB_COL_STATUS, KB_COL_MEDIAN, KB_COL_SPREAD, KB_COL_GBPS, KB_COL_PCT,
    KB_COL_SPEEDUP, KB_COL_KERNELS, KB_COL_REGS, KB_COL_SPILLS, KB_COL_EXTRA, KB_COL_DRAM,
    KB_COL_EXCESS, KB_COL_OCC, KB_COL_STALLS, KB_COL_NOTE, KB_NCOL
};

/* Bytes of a cell. */
#define KB_CELL 96

/* The headings of a case's table. */
typedef struct kb_heads {
    const char *h[KB_NCOL];
} kb_heads;

/* The cells of one result. */
typedef struct kb_row {
    char c[KB_NCOL][KB_CELL];
} kb_row;

/* The headings; compute: the case is compute-bound (TFLOP/s and % peak in
 * place of GB/s and % copy); timing: which time heads the table. */
kb_heads kb_case_heads(int compute, kb_timing timing);

/* Whether column c is right-aligned (numbers). */
int kb_col_right(int c);

/* Whether the case idx[0..n) of run is compute-bound (a result of it says so). */
int kb_case_compute(const kb_run *run, const size_t *idx, size_t n);

/* Fills the cells of r (the note: a mismatch's errors, a short reason, or
 * "not checked" / "throttled" / "gpu shared" / "l2 resident"); compute as
 * kb_case_heads; the time and its figures in timing (kb_result_timed). */
void kb_result_cells(const kb_result *r, int compute, kb_timing timing, kb_row *w);

/* Sets vis[c] for the columns the case idx[0..n) shows, rows[0..n) filled:
 * the counter columns when a result has counters, top stalls when one has
 * stall reasons too, extra mem when one needs device memory beyond its inputs
 * and outputs, the note when note_always or a row has one; with compact, only
 * the columns of the compact set (text within 100 columns: no kernels, spill,
 * extra mem or DRAM GB/s). */
void kb_case_columns(const kb_run *run, const size_t *idx, size_t n, const kb_row *rows,
                     int note_always, int compact, int vis[KB_NCOL]);

/* The SM clocks a case's ok results left the GPU at (result.h: sm_clock_mhz,
 * read right after each one's cold samples): the lowest and the highest, and the
 * positions in idx of the results that left them. Under a power cap the GPU's
 * clock follows the load of the last moments, so results of one case can
 * leave clocks far apart: they met the cap differently. */
typedef struct kb_clock_spread {
    double lo, hi;     /* MHz */
    size_t at_lo, at_hi;
} kb_clock_spread;

/* Fills *s for the case idx[0..n) of run; 1 when two of its ok results left
 * clocks more than KB_CLOCKS_APART apart (kb_clocks_apart), else 0. */
int kb_case_clocks(const kb_run *run, const size_t *idx, size_t n, kb_clock_spread *s);

/* The words of the note a case with clocks apart gets, in three parts that
 * the two variants' names go between (each report escapes them its own way):
 * part 0 before the lowest clock's variant, 1 between it and the highest's, 2
 * after it. Written into b (n bytes, 96 enough), which is returned. */
const char *kb_clock_note_part(const kb_clock_spread *s, int part, char *b, size_t n);

/* The words before the per-clock note of a case whose clocks are apart: each
 * compute-bound ok result's flop per SM cycle (kb_result_flop_per_clock), so
 * that results which met different clocks compare per cycle. */
#define KB_PER_CLOCK_NOTE "flop per SM cycle at those clocks:"

/* The first position j >= from in the case idx[0..n) whose result has a
 * flop-per-cycle figure (kb_result_flop_per_clock with the run's SM count),
 * the figure in *fpc; n when none is left. The note's entries are those of
 * j = kb_case_per_clock(.., 0, ..), then from j + 1, until n. */
size_t kb_case_per_clock(const kb_run *run, const size_t *idx, size_t n, size_t from,
                         double *fpc);

/* ---- the table of a sweep (results/sweep.h) ---------------------------------------- */

/* A sweep's table: a row per point (the swept axis ascending), the columns the
 * swept axis, its partner when it has one ("rows"), one per variant (its GB/s,
 * or TFLOP/s when compute-bound; "*" after the fastest at the point; "-"
 * where it has no ok result) and last the fastest's share of the ceiling
 * ("% copy" or "% peak"). Every column is right-aligned. */

/* Its columns. */
size_t kb_sweep_ncols(const kb_sweep *s);
/* How many columns lead (the axis, and the partner when there is one). */
size_t kb_sweep_nlead(const kb_sweep *s);
/* The heading of column c (a variant's name made safe for a terminal). */
void kb_sweep_head(const kb_sweep *s, size_t c, char *b, size_t n);
/* The cell of point p, column c. */
void kb_sweep_cell(const kb_sweep *s, size_t p, size_t c, char *b, size_t n);
/* "softmax · fp32 · sweep over cols, rows × cols about constant". */
void kb_sweep_title(const kb_sweep *s, char *b, size_t n);
/* The line under the table saying what the cells are, in timing t. */
void kb_sweep_legend(const kb_sweep *s, kb_timing t, char *b, size_t n);

#endif

/* sweep.h - the shape sweeps of a run: the results of one operator and dtype
 * at several shapes that differ along one axis, gathered so that a report can
 * show, per value of that axis, each variant's throughput side by side (where
 * a variant falls off a cliff as a row grows or shrinks).
 *
 * The rule (kb_run_sweeps). The case groups (operator, dtype, shape) of one
 * operator and dtype form a sweep over axis A when there are at least
 * KB_SWEEP_MIN_POINTS of them with distinct values of A and either
 *   - every other axis holds the same value in all of them (one axis varies:
 *     rows=1024 with cols 1024, 2048, 4096), or
 *   - one other axis P varies too, every other axis is the same, and the
 *     product A x P (the tensor's elements, for rows and cols) is within
 *     KB_SWEEP_SIZE_TOL of the first shape's: cols 32 .. 1048576 with rows
 *     chosen as max(1, 512 MB / (cols x dtype size)), so that every point
 *     moves the same bytes. A shape outside that size (rows=3, cols=262144,
 *     or rows=4099, cols=3001 beside a 512 MB sweep) is no point of it.
 * The axes are tried last to first, so that of two axes whose product is kept
 * the swept one is the later: the operators list their axes outermost first,
 * and the later is the row length (cols for softmax and layernorm), the one a
 * kernel's mapping depends on. Each case group belongs to at most one sweep;
 * of two groups with the same value of A the first in the run is the point.
 *
 * Every figure a writer shows is here: the throughput of each variant at each
 * point in the run's timing (GB/s for a memory-bound operator, TFLOP/s for a
 * compute-bound one), which variant is fastest there, and its share of the
 * calibrated ceiling. */
#ifndef KB_SWEEP_H
#define KB_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "results/result.h"
#include "util/status.h"

/* The fewest shapes that make a sweep: with two, a line says nothing of a
 * cliff. */
#define KB_SWEEP_MIN_POINTS 3
/* How far (relative) the product of the swept and the compensating axis may
 * stray from the first shape's: rows are whole (at least one), so rounding
 * them down loses under a quarter of the size from 4 rows up; a shape of twice
 * the size is another sweep. */
#define KB_SWEEP_SIZE_TOL 0.25

typedef struct kb_sweep {
    char op[32];
    char dtype[8];
    char axis[16];    /* the swept axis: "cols" */
    char partner[16]; /* the axis that keeps the size ("rows"), "" when only axis varies */
    char fixed[160];  /* the axes every point shares, "gelu=0, stats=0, mean=0"; may be "" */
    int compute;      /* 1: compute-bound, figures are TFLOP/s and % of the compute peak;
                         0: GB/s and % of the copy bandwidth */
    double ceiling;   /* the calibrated ceiling best_pct is of, in the run's timing
                         (GB/s or TFLOP/s); NAN when not calibrated */
    size_t npoints;
    int64_t *value;         /* [p]: the swept axis at point p, ascending; owned */
    int64_t *partner_value; /* [p]: the partner axis at point p (0 without one); owned */
    size_t nvariants;       /* the variants with a figure at some point, in order of
                               their first result in the run */
    char (*variant)[48];    /* [v]; owned */
    long *cell;     /* [p * nvariants + v]: index in run->results of v's ok result at p,
                       or -1; owned */
    double *figure; /* [p * nvariants + v]: its GB/s or TFLOP/s in the run's timing, NAN
                       where there is none; owned */
    long *best;     /* [p]: the column (v) of the fastest variant at p, or -1; owned */
    double *best_pct; /* [p]: the fastest's % of the ceiling (NAN unknown); owned */
} kb_sweep;

typedef struct kb_sweeps {
    size_t n;
    kb_sweep *s; /* owned */
} kb_sweeps;

/* The sweeps of run, by the rule above, in order of their first case group,
 * with the figures of run->timing. On success the caller owns *out
 * (kb_sweeps_release); it may hold none. KB_EENV when out of memory, *out
 * then empty. */
kb_status kb_run_sweeps(const kb_run *run, kb_sweeps *out, kb_err *e);

/* Frees what *s owns; safe on a released or zeroed one. */
void kb_sweeps_release(kb_sweeps *s);

#endif

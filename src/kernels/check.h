/* check.h - helpers for operators' fp64 reference checks: row sampling, fetching
 * device data as doubles, and the tolerance accounting every operator shares. */
#ifndef KB_CHECK_H
#define KB_CHECK_H

#include <stdint.h>

#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Problems with at most this many rows (or row-like units) are checked whole. */
#define KB_CHECK_ALL_ROWS 4096
/* Otherwise this many rows are sampled, the first and last always among them. */
#define KB_CHECK_SAMPLE_ROWS 192

/* Chooses the rows to check: all rows when rows <= KB_CHECK_ALL_ROWS, else
 * KB_CHECK_SAMPLE_ROWS distinct rows in increasing order including 0 and rows-1,
 * drawn from seed. out must hold KB_CHECK_SAMPLE_ROWS entries when rows is large;
 * returns how many rows it wrote (for all rows it writes 0..rows-1, so out must
 * then hold rows entries). */
int64_t kb_sample_rows(int64_t rows, uint64_t seed, int64_t *out);

/* Chooses indices of an axis of length n: all of them (0..n-1) when
 * n <= want, else want distinct indices in increasing order including 0 and
 * n-1, drawn from seed (want >= 2). out must hold min(n, want) entries;
 * returns how many it wrote. kb_sample_rows is this with want =
 * KB_CHECK_SAMPLE_ROWS past KB_CHECK_ALL_ROWS rows. */
int64_t kb_sample_indices(int64_t n, int64_t want, uint64_t seed, int64_t *out);

/* Copies count elements of dtype d starting at element `first` of device buffer
 * dev into host doubles. KB_EENV with the CUDA error on failure. */
kb_status kb_fetch_doubles(const void *dev, kb_dtype d, size_t first, size_t count,
                           double *host, kb_err *e);

/* Default tolerances (absolute, relative) for outputs of order 1 in dtype d. */
void kb_default_tolerance(kb_dtype d, double *atol, double *rtol);

/* Starts a comparison with the given tolerances. */
void kb_check_begin(kb_check *c, double atol, double rtol);
/* Compares one element (row r, column col of the output); NaN/Inf always fails. */
void kb_check_elem(kb_check *c, double out, double ref, int64_t row, int64_t col);
/* Finishes the figures (rel_l2_err). */
void kb_check_end(kb_check *c);
/* 1 when every compared element was within tolerance. */
int kb_check_passed(const kb_check *c);

/* Row i (0 .. n-1 of kb_check_rows) compared into c, with `scratch` doubles of
 * its thread's own. */
typedef kb_status (*kb_check_row_fn)(const void *ctx, int64_t i, double *scratch, kb_check *c,
                                     kb_err *e);
/* Compares rows 0 .. n-1 by fn on kb_par_threads() host threads (each set to
 * the caller's CUDA device, so that fn may fetch from it), in KB_CHECK_CHUNKS
 * chunks of consecutive rows, each compared into a kb_check begun with c's
 * tolerances and added to c in order: c's figures do not depend on the
 * number of threads, and its first bad element is the lowest row's. Threads
 * are fewer where their scratch would pass KB_CHECK_SCRATCH_BYTES. c is not
 * ended. */
#define KB_CHECK_CHUNKS 64
#define KB_CHECK_SCRATCH_BYTES ((size_t)2 << 30)
kb_status kb_check_rows(int64_t n, size_t scratch, kb_check_row_fn fn, const void *ctx,
                        kb_check *c, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif

/* par.h - a loop over the fixed chunks of an index range on a few host
 * threads: the fp64 reference checks, which at 10^8 elements took most of a
 * `kbench run` (one core, ~20 ns an element, every variant checked apart). */
#ifndef KB_PAR_H
#define KB_PAR_H

#include <stdint.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads kb_par_run may use: KBENCH_THREADS when it is 1..256, else the
 * online CPUs, at most KB_PAR_MAX_THREADS. */
#define KB_PAR_MAX_THREADS 64
int kb_par_threads(void);

/* Chunk k, indices [begin, end), run by worker w (0 .. threads - 1; the
 * calling thread is worker 0). */
typedef kb_status (*kb_par_chunk_fn)(void *ctx, int k, int64_t begin, int64_t end, int w,
                                     kb_err *e);
/* Once on each worker before its first chunk (per-thread state such as the
 * CUDA device); NULL for none. */
typedef kb_status (*kb_par_init_fn)(void *ctx, int w, kb_err *e);

/* Splits 0 .. n-1 into `chunks` consecutive pieces (n / chunks indices each,
 * one more for the first n % chunks; the empty ones, when n < chunks, are not
 * run) and runs fn over them on at most `threads` threads, each taking the
 * next chunk nobody has taken. What chunks write apart the caller merges in
 * chunk order, so that its result does not depend on the number of threads.
 * A thread that cannot be started leaves its share to the others. Returns
 * KB_OK, or the status and message of the first failing worker's init, else
 * of the lowest-numbered failing chunk; after a failure the chunks not yet
 * taken are not run. */
kb_status kb_par_run(int64_t n, int chunks, int threads, kb_par_init_fn init, kb_par_chunk_fn fn,
                     void *ctx, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif

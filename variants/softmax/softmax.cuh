/* softmax.cuh - what the softmax variants share (each variant's kernel file
 * includes it): the axes of the shape, the three passes over a row that naive
 * and coalesced make, and the launch of a row kernel. Element loads, vectors,
 * reductions and the online normaliser come from kernels/device.cuh. */
#ifndef KB_SOFTMAX_CUH
#define KB_SOFTMAX_CUH

#include <stdint.h>

#include <type_traits>

#include "kernels/device.cuh"
#include "kernels/op.h"

/* Shape axes (the table order of src/kernels/softmax.c). */
enum { SM_ROWS = 0, SM_COLS = 1 };

/* Softmax of one row, xr into yr, in three passes over global memory by the
 * LANES threads that share the row (1: a thread per row; 32: a warp, whose 32
 * lanes must all call it): lane takes columns lane, lane + LANES, ... The max
 * m of x; the sum d of exp(x - m); then y = exp(x - m) / d, each exp as exp2
 * of (x - m) log2 e. After each of the first two passes the lanes' partials
 * meet in a butterfly (nothing to do for one lane). */
template <int LANES, typename T>
KB_DEV void sm_three_passes(const T *xr, T *yr, int64_t cols, int lane)
{
    float m = kb_neg_inf();
    for (int64_t c = lane; c < cols; c += LANES)
        m = fmaxf(m, kb_load(xr, c));
    m = kb_warp_max<LANES>(m);

    float d = 0.0f;
    for (int64_t c = lane; c < cols; c += LANES)
        d += kb_exp2((kb_load(xr, c) - m) * KB_LOG2E);
    d = kb_warp_sum<LANES>(d);

    const float inv = kb_rcp(d);
    for (int64_t c = lane; c < cols; c += LANES)
        kb_store(yr, c, kb_exp2((kb_load(xr, c) - m) * KB_LOG2E) * inv);
}

/* A kernel over rows of x into y: (x, y, rows, cols), or (x, y, cols) for one
 * that takes a row per block. */
template <typename T> using sm_rows_kernel = void (*)(const T *, T *, int64_t, int64_t);
template <typename T> using sm_row_kernel = void (*)(const T *, T *, int64_t);

/* Launches row kernel k over the rows of a->in[0] into a->out[0] on stream s:
 * blocks of `threads` threads, rows_per_block rows each (the last block takes
 * what is left), noted in the launch log as name. Nothing to do for an empty
 * shape. Returns the launch's error. */
template <typename T, typename K>
static cudaError_t sm_launch(const kb_args *a, cudaStream_t s, K k, const char *name, int threads,
                             int rows_per_block)
{
    const int64_t rows = a->shape[SM_ROWS], cols = a->shape[SM_COLS];
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    const kb_dim3 grid = {(unsigned)((rows + rows_per_block - 1) / rows_per_block), 1, 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    const T *x = (const T *)a->in[0];
    T *y = (T *)a->out[0];
    if constexpr (std::is_same<K, sm_row_kernel<T>>::value)
        return kb_launch(a, s, k, name, grid, block, 0, x, y, cols);
    else
        return kb_launch(a, s, k, name, grid, block, 0, x, y, rows, cols);
}

#endif

/* softmax.cuh - what the softmax variants share (each variant's kernel file
 * includes it): the axes of the shape and the launch of a row kernel. Element
 * loads, vectors, reductions and the online normaliser come from
 * kernels/device.cuh. */
#ifndef KB_SOFTMAX_CUH
#define KB_SOFTMAX_CUH

#include <stdint.h>

#include <type_traits>

#include "kernels/device.cuh"
#include "kernels/op.h"

/* Shape axes (the table order of src/kernels/softmax.c). */
enum { SM_ROWS = 0, SM_COLS = 1 };

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

/* naive.cu - softmax, the formula as written: one thread per row, three passes
 * over global memory (the max, the sum of exp(x - max), the write:
 * sm_three_passes in softmax.cuh, by a single lane).
 *
 * Idea: the baseline. Each thread walks its own row, so at any instant the 32
 * lanes of a warp touch 32 different rows, cols elements apart: every load is
 * its own 32-byte sector and the caches, not the coalescer, are what keep it
 * from being worse. Only rows threads exist (32768 rows = 1024 warps, under 8
 * per SM), far too few to hide memory latency, and a single long row is a
 * single thread.
 *
 * Budget: 64 threads per block (so that a few thousand rows still reach every
 * SM), 24 registers, no shared memory; occupancy is bounded by the grid,
 * not by resources.
 *
 * Bytes per element: x read three times, y written once, 4 * size against the
 * model's 2 * size. Each lane's access pulls a 32-byte sector of its own row;
 * the next 7 fp32 elements (15 for 16-bit) hit L1 only while it still holds
 * that sector.
 *
 * Prediction at 32768 x 4096 fp32: about 5% of the copy bandwidth (2-10%):
 * every warp-wide load touches 32 lines, so L1 serves 4 useful bytes per
 * cycle per SM at best, and 8 warps per SM hide little of the latency of the
 * one access in 8 that misses.
 *
 * Measured (H200, 2026-11-29, results/h200/softmax.json): 3.136 ms at 32768 x
 * 4096 fp32, 8.2% of the copy bandwidth (bf16 4.1%); the counters show 2.11x
 * the model's DRAM bytes (sectors fetched for one useful element and evicted
 * before the neighbours are read) and 12% achieved occupancy: 32768 threads
 * are 1024 warps, under 8 per SM, as predicted. At 8192 x 32768 it falls to
 * 4.9% (3% occupancy: 8192 threads on 132 SMs). */
#include "softmax.cuh"

#define NAIVE_THREADS 64

template <typename T>
__global__ void __launch_bounds__(NAIVE_THREADS)
    softmax_naive_rows(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols)
{
    const int64_t r = (int64_t)blockIdx.x * NAIVE_THREADS + threadIdx.x;
    if (r >= rows)
        return;
    sm_three_passes<1>(x + r * cols, y + r * cols, cols, 0);
}

template <typename T> static cudaError_t launch(const kb_args *a, cudaStream_t s)
{
    return sm_launch<T>(a, s, softmax_naive_rows<T>, "softmax_naive_rows", NAIVE_THREADS,
                        NAIVE_THREADS);
}

/* Launches the naive softmax of a->in[0] into a->out[0] on stream s. Returns the
 * launch's error, or cudaErrorInvalidValue for an unknown dtype. */
extern "C" cudaError_t kb_softmax_naive(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch, a, s)
}

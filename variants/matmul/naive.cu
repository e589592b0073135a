/* naive.cu - the product as the formula is written: one thread per output
 * element C[i][j] = sum_t A[i][t] B[j][t], the K loop reading both operands
 * straight from global memory.
 *
 * Idea: the baseline of the ladder. Consecutive threads take consecutive rows
 * i of one column j, as a loop nest written "for each row" maps onto threads:
 * at each step t a warp reads A[i..i+31][t], 32 elements K apart (32 cache
 * lines for 128 useful bytes), all lanes read the same B[j][t] (a broadcast),
 * and in the end the warp's 32 writes of C land N apart (32 lines again). The
 * lines of A a warp touched stay in L1 for the next steps of t, so DRAM is
 * not the limit: the L1's tag lookups are, 32 per load instruction.
 *
 * Budget: about 30 registers, no shared memory, 100% theoretical occupancy;
 * blocks of 256 threads down a column of C, blockIdx.y stepping over
 * columns. With epilogue=1 the epilogue kernel (epilogue.cu) runs after.
 *
 * Prediction (fp32 4096^3, 137 GFLOP): one FMA per 33 L1 wavefronts of a warp,
 * about 2 flops a clock per SM: about 0.5 TFLOP/s, 0.25 s. 16-bit inputs move
 * half the bytes but touch the same lines: about the same time.
 * Measured: not yet measured. */
#include "matmul.cuh"

#define NAIVE_THREADS 256
/* The grid's y dimension is at most 65535; columns past it are stepped over. */
#define NAIVE_MAX_Y 65535

template <typename T>
__global__ void __launch_bounds__(NAIVE_THREADS)
    mm_naive(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, mm_shape sh)
{
    const int i = blockIdx.x * NAIVE_THREADS + threadIdx.x;
    if (i >= sh.m)
        return;
    const T *a = A + (int64_t)i * sh.k;
    for (int j = blockIdx.y; j < sh.n; j += gridDim.y) {
        const T *b = B + (int64_t)j * sh.k;
        float acc = 0.0f;
        for (int t = 0; t < sh.k; t++)
            acc = fmaf(kb_to_float(a[t]), kb_to_float(b[t]), acc);
        kb_store(C, (int64_t)i * sh.n + j, acc);
    }
}

template <typename T> static cudaError_t launch_naive(const kb_args *a, cudaStream_t s)
{
    const mm_shape sh = mm_shape_of(a);
    const kb_dim3 grid = {(unsigned)mm_div_up(sh.m, NAIVE_THREADS),
                          (unsigned)(sh.n < NAIVE_MAX_Y ? sh.n : NAIVE_MAX_Y), 1};
    cudaError_t e = kb_launch(a, s, mm_naive<T>, "mm_naive", grid, kb_dim3{NAIVE_THREADS, 1, 1},
                              0, (const T *)a->in[0], (const T *)a->in[1], (T *)a->out[0], sh);
    return mm_then_epilogue(e, a, s);
}

/* Launches C = A B^T (+ the epilogue kernel when epilogue=1) of a->in[0..2]
 * into a->out[0] on stream s. */
extern "C" cudaError_t kb_matmul_naive(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_naive, a, s)
}

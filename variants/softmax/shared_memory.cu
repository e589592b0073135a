/* shared_memory.cu - softmax with a block per row and the two row reductions
 * (max, then sum of exp(x - max)) done the classic way: every thread puts its
 * partial into shared memory and a halving tree folds it, one __syncthreads()
 * per level. Still three passes over global memory, coalesced scalar loads.
 *
 * Idea: what a shared-memory reduction costs against warp shuffles. A tree
 * over 256 partials is 8 levels, each a barrier that stalls the whole block
 * while the lower half of the threads adds (and, below 32 active threads, most
 * warps of the block sit idle at the barrier). Two such trees per row, plus
 * the barriers that keep the buffer's reuse safe, against five shuffles per
 * warp in coalesced. A block per row also spreads a long row over 256 threads
 * instead of 32, so long rows gain from it while short rows lose: 100000 x 1
 * runs 100000 blocks of 256 threads for one element each.
 *
 * Budget: 256 threads per block, 1 KB of static shared memory, 26-28
 * registers: up to 8 blocks (2048 threads) per SM.
 *
 * Bytes per element: x read three times, y written once: 4 * size against the
 * model's 2 * size through L1/L2, but near 2 * size from DRAM at 32768 x 4096:
 * 8 rows per SM, 1056 rows (17 MB) in flight on the GPU, so the re-reads of a
 * row find it in L2 (often in L1). Against coalesced this is a lesson in
 * working sets as much as in reductions.
 *
 * Prediction at 32768 x 4096 fp32: about 55-70% of the copy bandwidth: DRAM
 * traffic near the model, but three passes of 4-byte loads through L1/L2,
 * and each row stalls at 20 barriers (two 8-level trees plus their entry and
 * exit) with no loads of its own in flight.
 *
 * Measured (H200, 2026-11-29): 292.2 us at 32768 x 4096 fp32, 87.6% of the
 * copy bandwidth, above the 55-70% predicted: the re-reads hit L1/L2 more than
 * expected (DRAM excess 1.01x) and 8 resident blocks hide much of the barrier
 * time. bf16 64.2%: half the bytes per element, the same barriers per row.
 * At 8192 x 32768 it drops to 49.2% with 2.00x excess: 1056 rows of 128 KB in
 * flight (135 MB) no longer fit in the L2, so the re-reads go to DRAM. */
#include "softmax.cuh"

#define SMEM_THREADS 256 /* a power of two: the tree halves it */

/* Reduces v over the block with a shared-memory tree; every thread gets the
 * result. IS_MAX picks max, otherwise sum. Every thread must call it. */
template <bool IS_MAX> static __device__ __forceinline__ float tree_reduce(float v, float *buf)
{
    const int tid = threadIdx.x;
    buf[tid] = v;
    __syncthreads();
#pragma unroll
    for (int half = SMEM_THREADS / 2; half > 0; half >>= 1) {
        if (tid < half)
            buf[tid] = IS_MAX ? fmaxf(buf[tid], buf[tid + half]) : buf[tid] + buf[tid + half];
        __syncthreads();
    }
    const float r = buf[0];
    /* Everyone has read buf[0] before anyone writes buf again. */
    __syncthreads();
    return r;
}

template <typename T>
__global__ void __launch_bounds__(SMEM_THREADS)
    softmax_shared_memory_rows(const T *__restrict__ x, T *__restrict__ y, int64_t cols)
{
    __shared__ float buf[SMEM_THREADS];
    const int tid = threadIdx.x;
    const T *xr = x + (int64_t)blockIdx.x * cols;
    T *yr = y + (int64_t)blockIdx.x * cols;

    float m = kb_neg_inf();
#pragma unroll 4
    for (int64_t c = tid; c < cols; c += SMEM_THREADS)
        m = fmaxf(m, kb_load(xr, c));
    m = tree_reduce<true>(m, buf);

    float d = 0.0f;
#pragma unroll 4
    for (int64_t c = tid; c < cols; c += SMEM_THREADS)
        d += kb_exp2((kb_load(xr, c) - m) * KB_LOG2E);
    d = tree_reduce<false>(d, buf);

    const float inv = kb_rcp(d);
#pragma unroll 4
    for (int64_t c = tid; c < cols; c += SMEM_THREADS)
        kb_store(yr, c, kb_exp2((kb_load(xr, c) - m) * KB_LOG2E) * inv);
}

/* A block per row: rows <= 2^31 - 1, the limit of gridDim.x. */
template <typename T> static cudaError_t launch(const kb_args *a, cudaStream_t s)
{
    return sm_launch<T>(a, s, softmax_shared_memory_rows<T>, "softmax_shared_memory_rows",
                        SMEM_THREADS, 1);
}

/* Launches the block-per-row, shared-memory-tree softmax of a->in[0] into
 * a->out[0] on stream s. Returns the launch's error, or cudaErrorInvalidValue
 * for an unknown dtype. */
extern "C" cudaError_t kb_softmax_shared_memory(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch, a, s)
}

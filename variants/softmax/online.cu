/* online.cu - softmax with a block per row in two passes over global memory:
 * pass one computes the max and the sum together with the online normaliser
 * (running max m and running sum d; a new element v makes
 * m' = max(m, v), d' = d * exp(m - m') + exp(v - m')), pass two writes.
 *
 * Idea: dropping one of the three reads of x. The (m, d) pairs of the threads
 * are merged the same way as elements are added (a pair with the smaller max
 * is rescaled to the larger), first by warp shuffles, then across the warps
 * through 8 pairs in shared memory: one block reduction per row instead of
 * shared_memory's two trees. The price is arithmetic: the rescale costs an
 * extra exp, paid once per group of 4 elements (each thread loads 4 elements,
 * takes their max, rescales d once, then adds their 4 exps).
 *
 * Budget: 256 threads per block, 64 bytes of static shared memory, 29-32
 * registers: 8 blocks (2048 threads) per SM.
 *
 * Bytes per element: x read twice, y written once: 3 * size through L1/L2,
 * near the model's 2 * size from DRAM: with 1056 rows (17 MB) in flight the
 * second read finds its row in L2.
 *
 * Prediction at 32768 x 4096 fp32: about 65-80% of the copy bandwidth: one
 * pass of loads fewer than shared_memory and one block reduction (2
 * barriers) instead of two trees (20); still 4-byte loads, 4 in flight per
 * thread, and no loads in flight while a row is being reduced.
 *
 * Measured (H200, 2026-11-29): 271.1 us at 32768 x 4096 fp32, 94.4% of the
 * copy bandwidth (prediction 65-80%; excess 1.03x). bf16 57.7%, below
 * shared_memory's 64.2%: the rescale exp per 4 elements costs twice as much
 * per byte in 16-bit. At 8192 x 32768, 64.7% with 1.50x excess: one of the two
 * reads of each 128 KB row comes back from DRAM. */
#include "softmax.cuh"

#define ONLINE_THREADS 256
#define ONLINE_UNROLL 4 /* elements each thread loads before using them */

template <typename T>
__global__ void __launch_bounds__(ONLINE_THREADS)
    softmax_online_rows(const T *__restrict__ x, T *__restrict__ y, int64_t cols)
{
    constexpr int64_t STEP = (int64_t)ONLINE_UNROLL * ONLINE_THREADS;
    __shared__ float2 red[ONLINE_THREADS / 32];
    const int tid = threadIdx.x;
    const T *xr = x + (int64_t)blockIdx.x * cols;
    T *yr = y + (int64_t)blockIdx.x * cols;

    /* Pass one: the thread's (m, d) over elements tid, tid + 256, ... */
    float2 s = kb_online_empty();
    for (int64_t c0 = tid; c0 < cols; c0 += STEP) {
        float v[ONLINE_UNROLL];
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            const int64_t c = c0 + (int64_t)u * ONLINE_THREADS;
            v[u] = c < cols ? kb_load(xr, c) : kb_neg_inf();
        }
        /* v[0] is in range, so gm is finite and no exp sees inf - inf. */
        float gm = v[0];
#pragma unroll
        for (int u = 1; u < ONLINE_UNROLL; u++)
            gm = fmaxf(gm, v[u]);
        const float m = fmaxf(s.x, gm);
        float d = s.y * kb_exp2((s.x - m) * KB_LOG2E);
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++)
            d += kb_exp2((v[u] - m) * KB_LOG2E);
        s = make_float2(m, d);
    }
    s = kb_block_online<ONLINE_THREADS>(s, red);

    /* Pass two: y = exp(x - m) / d. */
    const float m = s.x, inv = kb_rcp(s.y);
    for (int64_t c0 = tid; c0 < cols; c0 += STEP) {
        float v[ONLINE_UNROLL];
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            const int64_t c = c0 + (int64_t)u * ONLINE_THREADS;
            v[u] = c < cols ? kb_load(xr, c) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; u++) {
            const int64_t c = c0 + (int64_t)u * ONLINE_THREADS;
            if (c < cols)
                kb_store(yr, c, kb_exp2((v[u] - m) * KB_LOG2E) * inv);
        }
    }
}

/* A block per row: rows <= 2^31 - 1, the limit of gridDim.x. */
template <typename T> static cudaError_t launch(const kb_args *a, cudaStream_t s)
{
    return sm_launch<T>(a, s, softmax_online_rows<T>, "softmax_online_rows", ONLINE_THREADS, 1);
}

/* Launches the two-pass online-normaliser softmax of a->in[0] into a->out[0]
 * on stream s. Returns the launch's error, or cudaErrorInvalidValue for an
 * unknown dtype. */
extern "C" cudaError_t kb_softmax_online(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch, a, s)
}

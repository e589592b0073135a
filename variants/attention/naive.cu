/* naive.cu - attention as the formula is written: three kernels, one thread
 * per output element, the scores S and the weights P in global memory.
 *
 * Idea: the baseline of the ladder. S = scale * Q K^T (one thread per score,
 * a dot product of dim terms read straight from global memory), then a row
 * softmax in place (one thread per row, three passes: max, sum of exps,
 * write), then O = P V (one thread per output). Threads are numbered down the
 * columns - consecutive threads take consecutive query rows - so each warp's
 * Q (or P) reads and its S (or O) writes touch 32 different rows: 32 cache
 * lines per load instruction where one would do. Causal: masked scores are
 * neither written nor read. S is fp32 scratch, B*H*S^2*4 bytes (4.3 GB at the
 * default shape), written once, read and rewritten by the softmax, read once.
 *
 * Budget (ptxas -v, sm_90; no spills): scores 40 registers (6 blocks of 256
 * per SM, 75% theoretical occupancy, register-limited), softmax and P.V 32
 * (100%); no shared memory. The cost is the number of cache lines each
 * instruction touches, not the warps in flight.
 *
 * Prediction (default shape B=4 H=16 S=4096 D=128, 550 GFLOP): the score
 * kernel's 4.3G Q loads each touch 32 lines (about 32 L1 cycles per warp
 * instruction), 0.5 s; P.V the same with P; the softmax about 10 ms: about
 * 1 s, 0.5 TFLOP/s. Measured on the H200, 2026-11-29: bf16 1.128 s, 0.5
 * TFLOP/s. */
#include "attention.cuh"

#define NAIVE_THREADS 256

/* S[b][i][j] = scale * q_i . k_j, thread idx = ((b * s) + j) * s + i. */
template <typename T>
__global__ void __launch_bounds__(NAIVE_THREADS)
    att_naive_scores(const T *__restrict__ q, const T *__restrict__ k, float *__restrict__ S,
                     att_shape sh)
{
    const int64_t s = sh.s, n = sh.bh * s * s;
    for (int64_t idx = (int64_t)blockIdx.x * NAIVE_THREADS + threadIdx.x; idx < n;
         idx += (int64_t)gridDim.x * NAIVE_THREADS) {
        const int64_t i = idx % s, j = (idx / s) % s, b = idx / (s * s);
        if (j >= att_keys(sh, i))
            continue;
        const T *qi = q + (b * s + i) * sh.d, *kj = k + (b * s + j) * sh.d;
        float acc = 0.0f;
        for (int t = 0; t < sh.d; t++)
            acc += kb_to_float(qi[t]) * kb_to_float(kj[t]);
        S[(b * s + i) * s + j] = acc * sh.scale;
    }
}

/* One thread per row of S: max, sum of exps, then P = exp(S - max) / sum in
 * place over the row's keys. */
__global__ void __launch_bounds__(NAIVE_THREADS) att_naive_softmax(float *__restrict__ S,
                                                                   att_shape sh)
{
    const int64_t s = sh.s, rows = sh.bh * s;
    for (int64_t r = (int64_t)blockIdx.x * NAIVE_THREADS + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * NAIVE_THREADS) {
        float *x = S + r * s;
        const int64_t n = att_keys(sh, r % s);
        float m = kb_neg_inf(), sum = 0.0f;
        for (int64_t j = 0; j < n; j++)
            m = fmaxf(m, x[j]);
        for (int64_t j = 0; j < n; j++)
            sum += expf(x[j] - m);
        const float inv = 1.0f / sum;
        for (int64_t j = 0; j < n; j++)
            x[j] = expf(x[j] - m) * inv;
    }
}

/* O[b][i][t] = sum_j P[b][i][j] v[b][j][t], thread idx = ((b * d) + t) * s + i. */
template <typename T>
__global__ void __launch_bounds__(NAIVE_THREADS)
    att_naive_pv(const float *__restrict__ P, const T *__restrict__ v, T *__restrict__ o,
                 att_shape sh)
{
    const int64_t s = sh.s, d = sh.d, n = sh.bh * s * d;
    for (int64_t idx = (int64_t)blockIdx.x * NAIVE_THREADS + threadIdx.x; idx < n;
         idx += (int64_t)gridDim.x * NAIVE_THREADS) {
        const int64_t i = idx % s, t = (idx / s) % d, b = idx / (s * d);
        kb_store(o, (b * s + i) * d + t, att_pv_dot(P, v, sh, b, i, t));
    }
}

template <typename T> static cudaError_t launch_naive(const kb_args *a, cudaStream_t st)
{
    const att_shape sh = att_shape_of(a);
    const kb_dim3 block = {NAIVE_THREADS, 1, 1};
    const kb_dim3 g1 = {att_blocks(sh.bh * sh.s * sh.s, NAIVE_THREADS), 1, 1};
    const kb_dim3 g2 = {att_blocks(sh.bh * sh.s, NAIVE_THREADS), 1, 1};
    const kb_dim3 g3 = {att_blocks(sh.bh * sh.s * sh.d, NAIVE_THREADS), 1, 1};
    return att_launch_materialised<T>(a, st, sh,
                                      {att_naive_scores<T>, "att_naive_scores", g1, block},
                                      {att_naive_softmax, "att_naive_softmax", g2, block},
                                      {att_naive_pv<T>, "att_naive_pv", g3, block});
}

/* Launches the naive attention of a->in[0..2] into a->out[0] on stream s,
 * with the fp32 scores in a->scratch (B*H*S^2*4 bytes). */
extern "C" cudaError_t kb_attention_naive(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_naive, a, s)
}

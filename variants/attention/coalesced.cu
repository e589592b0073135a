/* coalesced.cu - the naive variant's three stages, S and P still in global
 * memory, with every global access warp-contiguous.
 *
 * Idea: the same work and the same scratch as naive, but a warp's 32 lanes
 * always read or write 32 neighbouring elements. Scores: a warp per (query
 * row, 32 keys); the lanes split the head dimension, so the query row (held
 * in registers, dim/32 values a lane) and each key row are read as whole
 * rows, a shuffle reduction makes each dot product, and lane j keeps the
 * score of key j so the 32 scores leave in one 128-byte store. Softmax: a
 * warp per row, three passes over contiguous scores with shuffle reductions.
 * P.V: a thread per output with the head dimension fastest, so a warp reads
 * a contiguous run of a V row and all its lanes share the P element (a
 * broadcast). Causal: masked key groups are skipped whole.
 *
 * Budget (ptxas -v, sm_90; no spills): scores 40 registers (75% theoretical
 * occupancy, register-limited; the query row is 8 floats a lane), softmax and
 * P.V 32 (100%); no shared memory.
 *
 * Prediction (default shape bf16, 550 GFLOP): 4.3G coalesced K loads plus
 * five shuffles per score, about 40 ms; the softmax streams 3 x 4.3 GB of S,
 * about 4 ms; P.V 8.6G load instructions (V coalesced, P a broadcast), 40-60
 * ms: 85-105 ms. Measured on the H200, 2026-11-29: bf16 137.9 ms, 4.0
 * TFLOP/s, 8.2x naive. */
#include "attention.cuh"

#define COAL_THREADS 256
#define COAL_WARPS (COAL_THREADS / 32)
#define COAL_DCHUNKS 8 /* dim <= 256 = 8 chunks of 32 lanes */

/* A warp per (slice b, query i, key group g of 32 keys). */
template <typename T>
__global__ void __launch_bounds__(COAL_THREADS)
    att_coal_scores(const T *__restrict__ q, const T *__restrict__ k, float *__restrict__ S,
                    att_shape sh)
{
    const int lane = threadIdx.x % 32;
    const int64_t s = sh.s, groups = (s + 31) / 32, nw = sh.bh * s * groups;
    for (int64_t w = (int64_t)blockIdx.x * COAL_WARPS + threadIdx.x / 32; w < nw;
         w += (int64_t)gridDim.x * COAL_WARPS) {
        const int64_t g = w % groups, i = (w / groups) % s, b = w / (groups * s);
        const int64_t j0 = g * 32, n = att_keys(sh, i);
        if (j0 >= n)
            continue; /* the whole group is masked */
        const int cnt = n - j0 < 32 ? (int)(n - j0) : 32;
        const T *qi = q + (b * s + i) * sh.d;
        float qv[COAL_DCHUNKS];
#pragma unroll
        for (int c = 0; c < COAL_DCHUNKS; c++)
            qv[c] = lane + 32 * c < sh.d ? kb_to_float(qi[lane + 32 * c]) : 0.0f;
        float mine = 0.0f;
        for (int jj = 0; jj < cnt; jj++) {
            const T *kj = k + (b * s + j0 + jj) * sh.d;
            float part = 0.0f;
#pragma unroll
            for (int c = 0; c < COAL_DCHUNKS; c++)
                if (lane + 32 * c < sh.d)
                    part += qv[c] * kb_to_float(kj[lane + 32 * c]);
            part = kb_warp_sum(part);
            if (lane == jj)
                mine = part;
        }
        if (lane < cnt)
            S[(b * s + i) * s + j0 + lane] = mine * sh.scale;
    }
}

/* A warp per row of S: max, sum of exps, then P in place. */
__global__ void __launch_bounds__(COAL_THREADS) att_coal_softmax(float *__restrict__ S,
                                                                 att_shape sh)
{
    const int lane = threadIdx.x % 32;
    const int64_t s = sh.s, rows = sh.bh * s;
    for (int64_t r = (int64_t)blockIdx.x * COAL_WARPS + threadIdx.x / 32; r < rows;
         r += (int64_t)gridDim.x * COAL_WARPS) {
        float *x = S + r * s;
        const int64_t n = att_keys(sh, r % s);
        float m = kb_neg_inf(), sum = 0.0f;
        for (int64_t j = lane; j < n; j += 32)
            m = fmaxf(m, x[j]);
        m = kb_warp_max(m);
        for (int64_t j = lane; j < n; j += 32)
            sum += expf(x[j] - m);
        const float inv = 1.0f / kb_warp_sum(sum);
        for (int64_t j = lane; j < n; j += 32)
            x[j] = expf(x[j] - m) * inv;
    }
}

/* O[b][i][t] = sum_j P[b][i][j] v[b][j][t], thread idx = (b * s + i) * d + t. */
template <typename T>
__global__ void __launch_bounds__(COAL_THREADS)
    att_coal_pv(const float *__restrict__ P, const T *__restrict__ v, T *__restrict__ o,
                att_shape sh)
{
    const int64_t s = sh.s, d = sh.d, n = sh.bh * s * d;
    for (int64_t idx = (int64_t)blockIdx.x * COAL_THREADS + threadIdx.x; idx < n;
         idx += (int64_t)gridDim.x * COAL_THREADS) {
        const int64_t t = idx % d, row = idx / d, i = row % s, b = row / s;
        kb_store(o, idx, att_pv_dot(P, v, sh, b, i, t));
    }
}

template <typename T> static cudaError_t launch_coal(const kb_args *a, cudaStream_t st)
{
    const att_shape sh = att_shape_of(a);
    const int64_t groups = (sh.s + 31) / 32;
    const kb_dim3 block = {COAL_THREADS, 1, 1};
    const kb_dim3 g1 = {att_blocks(sh.bh * sh.s * groups, COAL_WARPS), 1, 1};
    const kb_dim3 g2 = {att_blocks(sh.bh * sh.s, COAL_WARPS), 1, 1};
    const kb_dim3 g3 = {att_blocks(sh.bh * sh.s * sh.d, COAL_THREADS), 1, 1};
    return att_launch_materialised<T>(a, st, sh,
                                      {att_coal_scores<T>, "att_coal_scores", g1, block},
                                      {att_coal_softmax, "att_coal_softmax", g2, block},
                                      {att_coal_pv<T>, "att_coal_pv", g3, block});
}

/* Launches the coalesced attention of a->in[0..2] into a->out[0] on stream
 * s, with the fp32 scores in a->scratch (B*H*S^2*4 bytes). */
extern "C" cudaError_t kb_attention_coalesced(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_coal, a, s)
}

/* one_pass_variance.cu - a trap: fused's kernels with the variance taken in one
 * pass as E[x^2] - E[x]^2 in fp32, on unshifted x.
 *
 * Idea: one block reduction of the pair (sum x, sum x^2) instead of fused's two
 * (sum, then sum of squared deviations): one barrier less per row. It is wrong
 * by construction: the subtraction cancels, and the rounding of the fp32 sum of
 * squares, a few units of 2^-24 E[x^2] = 2^-24 (mean^2 + var), survives it
 * whole. With x = mean + U[-1, 1) (var 1/3) the relative error of var is about
 * 3 * 2^-24 * mean^2 times the rounding's growth along the sums: invisible at
 * mean 0, ~1e-3 at mean 100, and at mean 10000 (--shape mean=10000, fp32:
 * E[x^2] = 1e8, spacing 8) var is noise of order 1-10 against 1/3 and y is
 * garbage. kbench's check must fail it there while fused, with the same
 * registers and bytes, passes. Negative variances are clamped to 0 (the usual
 * patch, which turns NaN into merely wrong).
 *
 * Everything else is fused's: the same dispatch (the ladder in layernorm.cuh),
 * persistent groups, shared-memory stage and cp.async prefetch for 16-bit,
 * plain loads and stores, bytes moved; the streaming path (long or unaligned
 * rows) also takes one-pass sums. With one barrier a row the row kernel
 * alternates two partial buffers per group. The output folds the centring into
 * the scale: fma(x, rstd, -mean rstd).
 *
 * Resource budget (nvcc -Xptxas -v, sm_90): row kernels as fused's (fp32 32
 * floats 63-64 registers, 16-bit 32 elements 63-64, 16 elements 40), 512 B
 * static shared in the 16-bit groups; warp 32-64, stream 43-45; no spills, no
 * stack (fp32 keeps each vector's gamma/beta/b loads below the previous store,
 * as fused's tanh form does, to stay at 64 registers).
 *
 * Prediction: as fused, a barrier less per row hardly showing once the next
 * row's x flies across it - and wrong at a large mean. Measured on the H200,
 * 2026-11-29 (same run as fused's figures), before -> after:
 *   fp32 32768x4096  294.3 us 86.3% -> 276.9 us 92.1%   (fused 91.5%)
 *   bf16 32768x4096  161.2 us 78.8% -> 144.2 us 88.4%   (fused 87.8%)
 *   fp32 8192x16384  290.6 us 87.4% -> 272.7 us 93.5%   (fused 93.1%)
 *   bf16 8192x16384  161.6 us 78.6% -> 141.4 us 90.1%   (fused 89.6%)
 * and, as before, a mismatch at mean=10000 in fp32 (kbench's check and
 * test_gpu_ops). */
#include "layernorm.cuh"

/* The one pass: unpacks the NV vectors raw into v and adds every element to s
 * and its square to q, in element order. */
template <typename T, int NV, int V>
static __device__ __forceinline__ void one_pass_sums(const uint4 (&raw)[NV], float (&v)[NV][V],
                                                     float &s, float &q)
{
#pragma unroll
    for (int k = 0; k < NV; k++) {
        kb_unpack<T>(raw[k], v[k]);
#pragma unroll
        for (int i = 0; i < V; i++) {
            s += v[k][i];
            q = fmaf(v[k][i], v[k][i], q);
        }
    }
}

/* ---- the warp-per-row register kernel (cols <= 1024) ---------------------------- */

/* A warp per row (layernorm.cuh: ln_warp_start, ln_warp_store). */
template <typename T, int NV, bool TANH>
__global__ void __launch_bounds__(128, 8)
    layernorm_one_pass_variance_warp(LN_PATH_BUFFERS, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    int64_t row;
    uint4 raw[NV];
    if (!ln_warp_start<T>(x, rows, cols, row, raw))
        return;
    const int lane = threadIdx.x & 31;
    const int64_t base = row * cols;

    /* One pass: sum x and sum x^2 (zero-filled vectors add nothing). */
    float v[NV][V];
    float s = 0.0f, q = 0.0f;
    one_pass_sums<T>(raw, v, s, q);
    const float mean = kb_warp_sum(s) * inv_cols;
    const float var = fmaxf(fmaf(kb_warp_sum(q), inv_cols, -mean * mean), 0.0f);
    const float rstd = rsqrtf(var + LN_EPS);

    ln_warp_store<T, NV, TANH>(gamma, beta, bias, y, base, cols,
                               [&](int k, int i) { return (v[k][i] - mean) * rstd; });
    if (mean_out != nullptr && lane == 0) {
        mean_out[row] = mean;
        rstd_out[row] = rstd;
    }
}

/* Sums of a pair over the whole block (blockDim.x a multiple of 32) with one
 * barrier; every thread gets the same results. red: __shared__ float[2][32],
 * not written again before another barrier (the row loop alternates two). */
static __device__ __forceinline__ float2 block_sum2(float a, float b, float (*red)[32])
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    a = kb_warp_sum(a);
    b = kb_warp_sum(b);
    if (lane == 0) {
        red[0][warp] = a;
        red[1][warp] = b;
    }
    __syncthreads();
    const bool in = lane < (int)(blockDim.x >> 5);
    a = in ? red[0][lane] : 0.0f;
    b = in ? red[1][lane] : 0.0f;
    return make_float2(kb_warp_sum(a), kb_warp_sum(b));
}

/* ---- the persistent group-per-row register kernel ------------------------------- */

/* fused's row kernel (THREADS, NV, PF, MINB, G, EXACT as there, the same ladder,
 * fetch, stage, loop and end of row, ln_row_store) with one-pass sums: a single
 * group reduction of (sum x, sum x^2), so one barrier a row, the partial
 * buffers alternating by row. */
template <typename T, int THREADS, int NV, int PF, int MINB, int G, bool EXACT, bool TANH>
__global__ void __launch_bounds__(THREADS *G, MINB)
    layernorm_one_pass_variance_row(LN_PATH_BUFFERS, int rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr int NW = THREADS / 32;
    extern __shared__ uint4 ln_dyn[];
    /* Two buffers a group, alternating by row: with one barrier a row, a warp
     * may write row i+1's sums while another still reads row i's. */
    __shared__ float red[G][2][2][NW];
    const int tid = threadIdx.x % THREADS, gid = threadIdx.x / THREADS;
    const int nvec = EXACT ? THREADS * NV : cols / V;
    const int stride = gridDim.x * G;
    uint4 *xs = ln_dyn + (sizeof(T) == 2 ? 3 * nvec : 0) + gid * (THREADS * NV);

    int base = blockIdx.x * G, row = base + gid;
    bool ok = row < rows;
    uint4 raw[NV];
    ln_row_fetch<T, THREADS, NV, PF, EXACT>(x, row, ok, cols, nvec, tid, raw, xs, 0.0f);
    ln_stage_affine<T>(gamma, beta, bias, ln_dyn, nvec);
    const uint4 *stt = ln_dyn + tid;

    for (int parity = 0;; parity ^= 1) {
        ln_row_take<THREADS, NV, PF, EXACT>(ok, nvec, tid, raw, xs);

        /* One pass: sum x and sum x^2 (vectors past the row's end are zeros). */
        float v[NV][V];
        float s = 0.0f, q = 0.0f;
        one_pass_sums<T>(raw, v, s, q);

        const int nbase = base + stride, next = row + stride;
        const bool okn = next < rows;
        if (PF != 0 && nbase < rows)
            ln_row_fetch<T, THREADS, NV, PF, EXACT>(x, next, okn, cols, nvec, tid, raw, xs, s);

        s = kb_warp_sum(s);
        q = kb_warp_sum(q);
        if ((tid & 31) == 0) {
            red[gid][parity][0][tid >> 5] = s;
            red[gid][parity][1][tid >> 5] = q;
        }
        ln_group_sync<THREADS, G>(gid);
        s = kb_warp_sum<NW>(red[gid][parity][0][tid & (NW - 1)]);
        q = kb_warp_sum<NW>(red[gid][parity][1][tid & (NW - 1)]);
        const float mean = s * inv_cols;
        const float var = fmaxf(fmaf(q, inv_cols, -mean * mean), 0.0f);
        const float rstd = rsqrtf(var + LN_EPS);
        const float off = -mean * rstd;

        /* Output: y = GELU((x - mean) * rstd * gamma + (beta + b)). fp32 fences
         * each vector's store from the next vector's gamma/beta/b loads (fused
         * needs it for the tanh form only; here the alternating buffers'
         * address costs the register). */
        ln_row_store<T, THREADS, NV, EXACT, TANH, sizeof(T) == 4>(
            gamma, beta, bias, y, mean_out, rstd_out, row, ok, cols, nvec, tid, stt,
            [&] { return mean; }, rstd, [&](int k, int i) { return fmaf(v[k][i], rstd, off); });
        if (nbase >= rows)
            break;
        base = nbase;
        row = next;
        ok = okn;
        if constexpr (PF == 0)
            ln_row_fetch<T, THREADS, NV, PF, EXACT>(x, row, ok, cols, nvec, tid, raw, xs, 0.0f);
    }
}

/* ---- the streaming kernel (rows too long for registers, or unaligned) ------------ */

template <typename T, bool TANH>
__global__ void __launch_bounds__(1024, 1)
    layernorm_one_pass_variance_stream(LN_PATH_BUFFERS, int cols, float inv_cols)
{
    __shared__ float red[2][32];
    const int64_t base = (int64_t)blockIdx.x * cols;
    const T *xr = x + base;

    float s = 0.0f, q = 0.0f;
#pragma unroll 4
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        const float f = kb_load(xr, j);
        s += f;
        q = fmaf(f, f, q);
    }
    const float2 sq = block_sum2(s, q, red);
    const float mean = sq.x * inv_cols;
    const float var = fmaxf(fmaf(sq.y, inv_cols, -mean * mean), 0.0f);
    const float rstd = rsqrtf(var + LN_EPS);

    T *yr = y + base;
#pragma unroll 4
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        const float z = fmaf((kb_load(xr, j) - mean) * rstd, kb_load(gamma, j),
                             kb_load(beta, j) + kb_load(bias, j));
        kb_store(yr, j, ln_gelu<TANH>(z));
    }
    if (mean_out != nullptr && threadIdx.x == 0) {
        mean_out[blockIdx.x] = mean;
        rstd_out[blockIdx.x] = rstd;
    }
}

/* ---- launch: the shared dispatch (layernorm.cuh) over this variant's kernels ---- */

LN_REGISTER_PATH_VARIANT(one_pass_variance)

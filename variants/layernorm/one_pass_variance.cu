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
 * Everything else is fused's: the same dispatch, persistence, staging and bytes
 * moved; the streaming path (long or unaligned rows) also takes one-pass sums,
 * and with one barrier per row the persistent kernel alternates two reduction
 * buffers. Resource budget (nvcc -Xptxas -v, sm_90): within a few registers of
 * fused (row kernels 38-64, warp 32-64, stream 43-45), 512 B static shared; no
 * spills, no stack.
 *
 * Prediction at 32768x4096 fp32: as fused, ~90% of copy bandwidth (a barrier
 * less per row hardly shows in a memory-bound kernel) - and wrong at a large
 * mean. */
#include "layernorm.cuh"

/* ---- the warp-per-row register kernel (cols <= 1024) ---------------------------- */

/* A warp per row, 4 rows per 128-thread block; lane t owns vectors t + 32 k. */
template <typename T, int NV, bool TANH>
__global__ void __launch_bounds__(128, 8)
    layernorm_one_pass_variance_warp(const T *__restrict__ x, const T *__restrict__ gamma,
                                     const T *__restrict__ beta, const T *__restrict__ bias,
                                     T *__restrict__ y, float *__restrict__ mean_out,
                                     float *__restrict__ rstd_out, int64_t rows, int cols,
                                     float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows)
        return; /* the whole warp: no shuffle partner is left behind */
    const int nvec = cols / V;
    const int64_t base = row * cols;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);

    uint4 raw[NV];
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int j = lane + 32 * k;
        raw[k] = j < nvec ? __ldcs(xv + j) : make_uint4(0u, 0u, 0u, 0u);
    }

    /* One pass: sum x and sum x^2 (zero-filled vectors add nothing). */
    float v[NV][V];
    float s = 0.0f, q = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        kb_unpack<T>(raw[k], v[k]);
#pragma unroll
        for (int i = 0; i < V; i++) {
            s += v[k][i];
            q = fmaf(v[k][i], v[k][i], q);
        }
    }
    const float mean = kb_warp_sum(s) * inv_cols;
    const float var = fmaxf(fmaf(kb_warp_sum(q), inv_cols, -mean * mean), 0.0f);
    const float rstd = rsqrtf(var + LN_EPS);

    uint4 *yv = reinterpret_cast<uint4 *>(y + base);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int j = lane + 32 * k;
        if (j < nvec) {
            float g[V], b1[V], b2[V], o[V];
            kb_unpack<T>(kb_ld128(gamma + (int64_t)j * V), g);
            kb_unpack<T>(kb_ld128(beta + (int64_t)j * V), b1);
            kb_unpack<T>(kb_ld128(bias + (int64_t)j * V), b2);
#pragma unroll
            for (int i = 0; i < V; i++)
                o[i] = ln_gelu<TANH>(fmaf((v[k][i] - mean) * rstd, g[i], b1[i] + b2[i]));
            __stcs(yv + j, kb_pack<T>(o));
        }
    }
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

/* ---- the persistent block-per-row register kernel -------------------------------- */

/* Dynamic shared memory of the row kernel: 16-bit dtypes stage beta + b as two
 * fp32 planes (elements 0-3 and 4-7 of each vector, so that a warp's 16-byte
 * reads are conflict-free) and gamma as raw vectors; fp32 stages nothing. */
template <typename T> static size_t row_smem_bytes(int cols)
{
    return sizeof(T) == 2 ? (size_t)cols * (4 + sizeof(T)) : 0;
}

template <typename T, int NV, bool TANH>
__global__ void __launch_bounds__(LN_ROW_MAX_THREADS(T, NV), LN_ROW_MIN_BLOCKS(T, NV))
    layernorm_one_pass_variance_row(const T *__restrict__ x, const T *__restrict__ gamma,
                                    const T *__restrict__ beta, const T *__restrict__ bias,
                                    T *__restrict__ y, float *__restrict__ mean_out,
                                    float *__restrict__ rstd_out, int64_t rows, int cols,
                                    float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr bool STAGE = sizeof(T) == 2;
    extern __shared__ uint4 ln_dyn[];
    /* Two buffers, alternating by row: one barrier per row, so a warp may start
     * row i+1's sums while another still reads row i's. */
    __shared__ float red[2][2][32];
    const int tid = threadIdx.x, nthr = blockDim.x;
    const int nvec = cols / V;
    /* STAGE: ln_dyn[0, nvec) beta+b elements 0-3, [nvec, 2 nvec) elements 4-7,
     * [2 nvec, 3 nvec) gamma. */
    float4 *sbb = reinterpret_cast<float4 *>(ln_dyn);
    uint4 *sg = ln_dyn + 2 * nvec;

    if constexpr (STAGE) {
        for (int j = tid; j < nvec; j += nthr) {
            float b1[V], b2[V];
            kb_unpack<T>(kb_ld128(beta + (int64_t)j * V), b1);
            kb_unpack<T>(kb_ld128(bias + (int64_t)j * V), b2);
            sbb[j] = make_float4(b1[0] + b2[0], b1[1] + b2[1], b1[2] + b2[2], b1[3] + b2[3]);
            sbb[nvec + j] =
                make_float4(b1[4] + b2[4], b1[5] + b2[5], b1[6] + b2[6], b1[7] + b2[7]);
            sg[j] = kb_ld128(gamma + (int64_t)j * V);
        }
        __syncthreads();
    }

    int parity = 0;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x, parity ^= 1) {
        const int64_t base = row * cols;
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);

        uint4 raw[NV];
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int j = tid + k * nthr;
            raw[k] = j < nvec ? __ldcs(xv + j) : make_uint4(0u, 0u, 0u, 0u);
        }

        /* One pass: sum x and sum x^2 (zero-filled vectors add nothing). */
        float v[NV][V];
        float s = 0.0f, q = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            kb_unpack<T>(raw[k], v[k]);
#pragma unroll
            for (int i = 0; i < V; i++) {
                s += v[k][i];
                q = fmaf(v[k][i], v[k][i], q);
            }
        }
        const float2 sq = block_sum2(s, q, red[parity]);
        const float mean = sq.x * inv_cols;
        const float var = fmaxf(fmaf(sq.y, inv_cols, -mean * mean), 0.0f);
        const float rstd = rsqrtf(var + LN_EPS);

        /* Output: y = GELU(c * rstd * gamma + (beta + b)). */
        uint4 *yv = reinterpret_cast<uint4 *>(y + base);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int j = tid + k * nthr;
            if (j < nvec) {
                float g[V], bb[V], o[V];
                if constexpr (STAGE) {
                    kb_unpack<T>(sg[j], g);
                    const float4 lo = sbb[j], hi = sbb[nvec + j];
                    bb[0] = lo.x, bb[1] = lo.y, bb[2] = lo.z, bb[3] = lo.w;
                    bb[4] = hi.x, bb[5] = hi.y, bb[6] = hi.z, bb[7] = hi.w;
                } else {
                    float b2[V];
                    kb_unpack<T>(kb_ld128(gamma + (int64_t)j * V), g);
                    kb_unpack<T>(kb_ld128(beta + (int64_t)j * V), bb);
                    kb_unpack<T>(kb_ld128(bias + (int64_t)j * V), b2);
#pragma unroll
                    for (int i = 0; i < V; i++)
                        bb[i] += b2[i];
                }
#pragma unroll
                for (int i = 0; i < V; i++)
                    o[i] = ln_gelu<TANH>(fmaf((v[k][i] - mean) * rstd, g[i], bb[i]));
                __stcs(yv + j, kb_pack<T>(o));
            }
        }
        if (mean_out != nullptr && tid == 0) {
            mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
    }
}

/* ---- the streaming kernel (rows too long for registers, or unaligned) ------------ */

template <typename T, bool TANH>
__global__ void __launch_bounds__(1024, 1)
    layernorm_one_pass_variance_stream(const T *__restrict__ x, const T *__restrict__ gamma,
                                       const T *__restrict__ beta, const T *__restrict__ bias,
                                       T *__restrict__ y, float *__restrict__ mean_out,
                                       float *__restrict__ rstd_out, int cols, float inv_cols)
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

/* ---- launchers ----------------------------------------------------------------------- */

template <typename T> struct opv_ptrs {
    const T *x, *g, *b1, *b2;
    T *y;
    float *mo, *ro; /* NULL without stats */
    int64_t rows;
    int cols;
    float inv_cols;
};

template <typename T> static opv_ptrs<T> ptrs_of(const kb_args *a)
{
    const bool st = a->shape[LN_STATS] != 0;
    opv_ptrs<T> p = {(const T *)a->in[0], (const T *)a->in[1], (const T *)a->in[2],
                     (const T *)a->in[3], (T *)a->out[0],
                     st ? (float *)a->out[1] : nullptr, st ? (float *)a->out[2] : nullptr,
                     a->shape[LN_ROWS], (int)a->shape[LN_COLS],
                     1.0f / (float)a->shape[LN_COLS]};
    return p;
}

template <typename T, bool TANH, int NV>
static cudaError_t launch_warp(const kb_args *a, cudaStream_t s, int threads)
{
    const opv_ptrs<T> p = ptrs_of<T>(a);
    const int rpb = threads / 32;
    const kb_dim3 grid = {(unsigned)((p.rows + rpb - 1) / rpb), 1, 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    auto k = layernorm_one_pass_variance_warp<T, NV, TANH>;
    kb_note_launch(a->log, (const void *)k, "layernorm_one_pass_variance_warp", grid, block,
                   0);
    k<<<grid.x, block.x, 0, s>>>(p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, p.cols,
                                 p.inv_cols);
    return cudaGetLastError();
}

template <typename T, bool TANH, int NV>
static cudaError_t launch_row(const kb_args *a, cudaStream_t s, int threads)
{
    const opv_ptrs<T> p = ptrs_of<T>(a);
    const size_t smem = row_smem_bytes<T>(p.cols);
    auto k = layernorm_one_pass_variance_row<T, NV, TANH>;
    cudaError_t e = cudaSuccess;
    if (smem > 48 * 1024)
        e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    /* Persistent: no more blocks than can be resident at once. */
    int dev = 0, sms = 0, per_sm = 0;
    if (e == cudaSuccess)
        e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem);
    if (e != cudaSuccess)
        return e;
    /* At most that many blocks, each given the same number of rows (round
     * robin), so that none runs a last round alone. */
    const int64_t most = (int64_t)(per_sm > 0 ? per_sm : 1) * sms;
    const int64_t per_block = (p.rows + most - 1) / most;
    const int64_t blocks = (p.rows + per_block - 1) / per_block;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    kb_note_launch(a->log, (const void *)k, "layernorm_one_pass_variance_row", grid, block, smem);
    k<<<grid.x, block.x, smem, s>>>(p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, p.cols,
                                    p.inv_cols);
    return cudaGetLastError();
}

template <typename T, bool TANH>
static cudaError_t launch_stream(const kb_args *a, cudaStream_t s, int threads)
{
    const opv_ptrs<T> p = ptrs_of<T>(a);
    const kb_dim3 grid = {(unsigned)p.rows, 1, 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    auto k = layernorm_one_pass_variance_stream<T, TANH>;
    kb_note_launch(a->log, (const void *)k, "layernorm_one_pass_variance_stream", grid, block, 0);
    k<<<grid.x, block.x, 0, s>>>(p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.cols, p.inv_cols);
    return cudaGetLastError();
}

template <typename T, bool TANH> static cudaError_t launch_t(const kb_args *a, cudaStream_t s)
{
    const ln_plan p = ln_plan_regs(sizeof(T), a->shape[LN_COLS], ln_aligned16(a));
    constexpr bool WIDE = sizeof(T) == 4; /* NV 8 exists only for fp32 */
    constexpr int NV16 = WIDE ? 4 : 2;    /* 16 elements a thread */
    constexpr int NV32 = WIDE ? 8 : 4;    /* 32 elements a thread */
    if (p.path == LN_WARP) {
        if (p.nv == 1)
            return launch_warp<T, TANH, 1>(a, s, p.threads);
        if (p.nv == 2)
            return launch_warp<T, TANH, 2>(a, s, p.threads);
        if (p.nv == 4)
            return launch_warp<T, TANH, 4>(a, s, p.threads);
        return launch_warp<T, TANH, NV32>(a, s, p.threads);
    }
    if (p.path == LN_BLOCK)
        return p.nv == NV16 ? launch_row<T, TANH, NV16>(a, s, p.threads)
                            : launch_row<T, TANH, NV32>(a, s, p.threads);
    return launch_stream<T, TANH>(a, s, p.threads);
}

template <typename T> static cudaError_t launch_gelu(const kb_args *a, cudaStream_t s)
{
    return a->shape[LN_GELU] ? launch_t<T, true>(a, s) : launch_t<T, false>(a, s);
}

extern "C" cudaError_t kb_layernorm_one_pass_variance(const kb_args *a, cudaStream_t s)
{
    switch (a->dtype) {
    case KB_FP32: return launch_gelu<float>(a, s);
    case KB_FP16: return launch_gelu<__half>(a, s);
    case KB_BF16: return launch_gelu<__nv_bfloat16>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

/* fused.cu - layernorm + bias + GELU in one kernel: one read of x, one write of y.
 *
 * Idea: the row lives in registers between the statistics and the output, so x
 * crosses DRAM once and nothing else does but y (plus gamma/beta/b once and the
 * optional mean/rstd). Each thread issues its NV 16-byte loads (LDG.E.128)
 * before using any; the statistics are an exact two-pass over the registers
 * (sum -> mean, then sum of squared deviations -> var: two block sums, one
 * barrier each), fp32, on shifted data d = x - x[0] for fp32 inputs (exact
 * differences keep a large mean's spread; see layernorm.cuh; 16-bit inputs
 * skip the shift, their own spacing at a large mean being far coarser than the
 * fp32 sums' rounding); the output pass stores y with STG.E.128. Streaming
 * cache hints on x and y.
 *
 * The block-per-row kernel is persistent: at most as many blocks as fit on the
 * GPU at once (occupancy API x SMs), each looping over the same number of rows
 * r = blockIdx.x + i * gridDim.x, so no block runs a last round alone. For
 * 16-bit dtypes each block first stages gamma (raw) and beta + b (fp32, as two
 * bank-conflict-free 16-byte planes) in dynamic shared memory, 6 bytes a
 * column, which turns the output's three vector loads, three widenings and an
 * add per element into one widening: bf16 is near the issue limit at 4.3 TB/s
 * (~31 instructions per element available), fp32 is not (~62) and reads its
 * vectors from L1/L2.
 *
 * Dispatch (ln_plan_regs in layernorm.cuh), V = 4 (fp32) or 8 (16-bit):
 *   cols <= 1024, aligned    a warp per row, NV = pow2 >= cols / (32 V) vectors a
 *                            lane, 4 rows per 128-thread block, shuffles only;
 *   cols < 4096, aligned     a block per row, 16 elements a thread (NV = 4 fp32,
 *                            2 16-bit), 64-256 threads;
 *   4096 <= cols <= 32768,   a block per row, 32 elements a thread (NV = 8 fp32,
 *   aligned                  4 16-bit), 128-1024 threads: 4096 -> 128 threads,
 *                            16384 -> 512 threads, fp32 and 16-bit alike;
 *   otherwise (longer, or    the streaming path: a block per row (<= 1024
 *   cols % V != 0, or a      threads, ~8 elements each), Welford on shifted data
 *   pointer off 16 bytes)    merged with Chan's formula (shuffles, then 32
 *                            partials through shared memory), then a second
 *                            read of x (from L2 while the row is there).
 *
 * Resource budget (nvcc -Xptxas -v, sm_90, no spills, no stack anywhere):
 *   row, 32 elements    62-64 registers (cap 64), 256 B static shared + 6 cols
 *                       bytes dynamic for 16-bit: 4096 -> 8 blocks of 128 per SM
 *                       (1024 threads; bf16 uses 8 x 25 KB of shared memory),
 *                       16384 -> 2 blocks of 512 (bf16: 2 x 97 KB);
 *   row, 16 elements    39-40 registers (launch bounds 256 x 6), 6 blocks per SM;
 *   warp                31-64 registers (cap 64), 8 blocks of 128 per SM;
 *   stream              47-48 registers, 384 B static shared.
 * x in flight per SM when all resident blocks load: 8 x 16 KB (fp32 4096).
 *
 * Bytes moved: the model's (fp32 re-reads gamma/beta/b from L1/L2, not DRAM).
 * SASS instructions per element of the row loop, erf form (tanh ~3 fewer):
 * bf16 25.6 and fp32 28.0 with 32 elements a thread (statistics 5-6, affine 3,
 * GELU 10, 16-bit widening/narrowing 2.5, the rest loads, stores, addresses and
 * the two block sums).
 *
 * Prediction at 32768x4096 fp32 (1.07 GB model bytes, 250 us at 4.3 TB/s):
 * ~90% of copy bandwidth. It is memory-bound (28 of ~62 issue slots per
 * element); what is lost is the time a block spends in its two barriers before
 * its stores, hidden by the 7 other resident blocks' loads. bf16: ~85-90%: at
 * 25.6 instructions per element it needs ~75% of the issue slots at 90% of
 * copy bandwidth, so issue and DRAM are both near their limits. 8192x16384: 2
 * blocks of 512 per SM (32 rows each), less overlap between a block's phases;
 * ~85-90% for both. */
#include "layernorm.cuh"

/* ---- the warp-per-row register kernel (cols <= 1024) ---------------------------- */

/* A warp per row, 4 rows per 128-thread block; lane t owns vectors t + 32 k. */
template <typename T, int NV, bool TANH>
__global__ void __launch_bounds__(128, 8)
    layernorm_fused_warp(const T *__restrict__ x, const T *__restrict__ gamma,
                         const T *__restrict__ beta, const T *__restrict__ bias,
                         T *__restrict__ y, float *__restrict__ mean_out,
                         float *__restrict__ rstd_out, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr bool SHIFT = sizeof(T) == 4;
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
    const float K = SHIFT ? kb_load(x, base) : 0.0f;

    float v[NV][V];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        kb_unpack<T>(raw[k], v[k]);
        float sk = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++) {
            if constexpr (SHIFT)
                v[k][i] -= K;
            sk += v[k][i];
        }
        s += lane + 32 * k < nvec ? sk : 0.0f;
    }
    const float md = kb_warp_sum(s) * inv_cols;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        float qk = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++) {
            v[k][i] -= md;
            qk = fmaf(v[k][i], v[k][i], qk);
        }
        q += lane + 32 * k < nvec ? qk : 0.0f;
    }
    const float rstd = rsqrtf(fmaf(kb_warp_sum(q), inv_cols, LN_EPS));

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
                o[i] = ln_gelu<TANH>(fmaf(v[k][i] * rstd, g[i], b1[i] + b2[i]));
            __stcs(yv + j, kb_pack<T>(o));
        }
    }
    if (mean_out != nullptr && lane == 0) {
        mean_out[row] = K + md;
        rstd_out[row] = rstd;
    }
}

/* ---- the persistent block-per-row register kernel -------------------------------- */

/* THREADS threads a row (a power of two, 128-1024), NV 16-byte vectors a
 * thread, thread tid owning vectors tid + k THREADS; EXACT: the row is exactly
 * THREADS NV vectors (no range checks). PF: how the next row's x is fetched
 * (see ln_row_issue). MINB: launch bounds' blocks per SM (the register cap). */
template <typename T, int THREADS, int NV, int PF, int MINB, bool EXACT, bool TANH>
__global__ void __launch_bounds__(THREADS, MINB)
    layernorm_fused_row(const T *__restrict__ x, const T *__restrict__ gamma,
                        const T *__restrict__ beta, const T *__restrict__ bias,
                        T *__restrict__ y, float *__restrict__ mean_out,
                        float *__restrict__ rstd_out, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr int NW = THREADS / 32;
    constexpr bool SHIFT = sizeof(T) == 4;
    extern __shared__ uint4 ln_dyn[];
    __shared__ float red[2][NW];
    const int tid = threadIdx.x;
    const int nvec = EXACT ? THREADS * NV : cols / V;
    /* ln_dyn: the 16-bit affine stage (3 nvec vectors), then with PF 2 the x stage. */
    uint4 *xs = ln_dyn + (sizeof(T) == 2 ? 3 * nvec : 0);

    ln_stage_affine<T>(gamma, beta, bias, ln_dyn, nvec);
    /* This thread's first vector of gamma, beta, b and the stage. */
    const T *gt = gamma + tid * V, *b1t = beta + tid * V, *b2t = bias + tid * V;
    const uint4 *stt = ln_dyn + tid;

    /* The grid is at most rows blocks: every block has a first row. */
    int64_t row = blockIdx.x;
    uint4 raw[NV];
    ln_row_issue<T, THREADS, NV, PF, EXACT>(x, row, cols, nvec, raw, xs, 0.0f);
    float K = SHIFT ? kb_load(x, row * cols) : 0.0f;

    for (;;) {
        ln_row_take<THREADS, NV, PF>(raw, xs);

        /* Pass 1: the sum of d = x - K. Vectors past the row's end hold zeros
         * or garbage; only their partial sums are dropped. */
        float v[NV][V];
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            kb_unpack<T>(raw[k], v[k]);
            if constexpr (SHIFT) {
#pragma unroll
                for (int i = 0; i < V; i++)
                    v[k][i] -= K;
            }
            float sk = v[k][0];
#pragma unroll
            for (int i = 1; i < V; i++)
                sk += v[k][i];
            s += EXACT || tid + k * THREADS < nvec ? sk : 0.0f;
        }

        /* The next row's x starts on its way now, to fly during this row's
         * barriers and output (PF 1, 2). */
        const int64_t next = row + gridDim.x;
        float Kn = 0.0f;
        if (PF != 0 && next < rows) {
            ln_row_issue<T, THREADS, NV, PF, EXACT>(x, next, cols, nvec, raw, xs, s);
            if constexpr (SHIFT)
                Kn = kb_load(x, next * cols);
        }

        const float md = ln_block_sum_nw<NW>(s, red[0]) * inv_cols;

        /* Pass 2: c = d - mean_d, kept in v; the sum of c^2. red[0] is not
         * written again before the next row's first sum, which follows this
         * sum's barrier. */
        float q = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            float qk = 0.0f;
#pragma unroll
            for (int i = 0; i < V; i++) {
                v[k][i] -= md;
                qk = fmaf(v[k][i], v[k][i], qk);
            }
            q += EXACT || tid + k * THREADS < nvec ? qk : 0.0f;
        }
        const float rstd = rsqrtf(fmaf(ln_block_sum_nw<NW>(q, red[1]), inv_cols, LN_EPS));

        /* Output: y = GELU(c * rstd * gamma + (beta + b)). */
        uint4 *yv = reinterpret_cast<uint4 *>(y + row * cols) + tid;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (EXACT || tid + k * THREADS < nvec) {
                float g[V], bb[V], o[V];
                ln_affine_vec<T>(k * THREADS, nvec, stt, gt, b1t, b2t, g, bb);
#pragma unroll
                for (int i = 0; i < V; i++)
                    o[i] = ln_gelu<TANH>(fmaf(v[k][i] * rstd, g[i], bb[i]));
                __stcs(yv + k * THREADS, kb_pack<T>(o));
            }
        }
        if (mean_out != nullptr && tid == 0) {
            mean_out[row] = K + md;
            rstd_out[row] = rstd;
        }
        if (next >= rows)
            break;
        row = next;
        if constexpr (PF == 0) {
            ln_row_issue<T, THREADS, NV, PF, EXACT>(x, row, cols, nvec, raw, xs, 0.0f);
            if constexpr (SHIFT)
                K = kb_load(x, row * cols);
        } else {
            K = Kn;
        }
    }
}

/* ---- the streaming kernel (rows too long for registers, or unaligned) ------------ */

template <typename T, bool TANH>
__global__ void __launch_bounds__(1024, 1)
    layernorm_fused_stream(const T *__restrict__ x, const T *__restrict__ gamma,
                           const T *__restrict__ beta, const T *__restrict__ bias,
                           T *__restrict__ y, float *__restrict__ mean_out,
                           float *__restrict__ rstd_out, int cols, float inv_cols)
{
    __shared__ float red[3][32];
    const int64_t base = (int64_t)blockIdx.x * cols;
    const T *xr = x + base;
    const float K = kb_load(xr, 0);

    ln_wf w = {0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        ln_wf_push(w, kb_load(xr, j) - K);
    w = ln_block_wf(w, red);
    const float md = w.mean;
    const float rstd = rsqrtf(fmaf(w.m2, inv_cols, LN_EPS));

    T *yr = y + base;
#pragma unroll 4
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        const float c = (kb_load(xr, j) - K) - md;
        const float z = fmaf(c * rstd, kb_load(gamma, j), kb_load(beta, j) + kb_load(bias, j));
        kb_store(yr, j, ln_gelu<TANH>(z));
    }
    if (mean_out != nullptr && threadIdx.x == 0) {
        mean_out[blockIdx.x] = K + md;
        rstd_out[blockIdx.x] = rstd;
    }
}

/* ---- launchers ----------------------------------------------------------------------- */

template <typename T> struct fused_ptrs {
    const T *x, *g, *b1, *b2;
    T *y;
    float *mo, *ro; /* NULL without stats */
    int64_t rows;
    int cols;
    float inv_cols;
};

template <typename T> static fused_ptrs<T> ptrs_of(const kb_args *a)
{
    const bool st = a->shape[LN_STATS] != 0;
    fused_ptrs<T> p = {(const T *)a->in[0], (const T *)a->in[1], (const T *)a->in[2],
                       (const T *)a->in[3], (T *)a->out[0],
                       st ? (float *)a->out[1] : nullptr, st ? (float *)a->out[2] : nullptr,
                       a->shape[LN_ROWS], (int)a->shape[LN_COLS],
                       1.0f / (float)a->shape[LN_COLS]};
    return p;
}

template <typename T, bool TANH, int NV>
static cudaError_t launch_warp(const kb_args *a, cudaStream_t s, int threads)
{
    const fused_ptrs<T> p = ptrs_of<T>(a);
    const int rpb = threads / 32;
    const kb_dim3 grid = {(unsigned)((p.rows + rpb - 1) / rpb), 1, 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    auto k = layernorm_fused_warp<T, NV, TANH>;
    kb_note_launch(a->log, (const void *)k, "layernorm_fused_warp", grid, block, 0);
    k<<<grid.x, block.x, 0, s>>>(p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, p.cols,
                                 p.inv_cols);
    return cudaGetLastError();
}

template <typename T, bool TANH, int THREADS, int NV, int PF, int MINB, bool EXACT>
static cudaError_t launch_row(const kb_args *a, cudaStream_t s)
{
    const fused_ptrs<T> p = ptrs_of<T>(a);
    const size_t smem = ln_stage_bytes<T>(p.cols) + (PF == 2 ? (size_t)THREADS * NV * 16 : 0);
    auto k = layernorm_fused_row<T, THREADS, NV, PF, MINB, EXACT, TANH>;
    cudaError_t e = cudaSuccess;
    if (smem > 48 * 1024)
        e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    /* Persistent: as many blocks as can be resident at once (each SM gets the
     * same number), block b taking rows b, b + grid, ... */
    int dev = 0, sms = 0, per_sm = 0;
    if (e == cudaSuccess)
        e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, THREADS, smem);
    if (e != cudaSuccess)
        return e;
    const int64_t most = (int64_t)(per_sm > 0 ? per_sm : 1) * sms;
    const int64_t blocks = p.rows < most ? p.rows : most;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1};
    const kb_dim3 block = {(unsigned)THREADS, 1, 1};
    kb_note_launch(a->log, (const void *)k, "layernorm_fused_row", grid, block, smem);
    k<<<grid.x, block.x, smem, s>>>(p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, p.cols,
                                    p.inv_cols);
    return cudaGetLastError();
}

template <typename T, bool TANH>
static cudaError_t launch_stream(const kb_args *a, cudaStream_t s, int threads)
{
    const fused_ptrs<T> p = ptrs_of<T>(a);
    const kb_dim3 grid = {(unsigned)p.rows, 1, 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    auto k = layernorm_fused_stream<T, TANH>;
    kb_note_launch(a->log, (const void *)k, "layernorm_fused_stream", grid, block, 0);
    k<<<grid.x, block.x, 0, s>>>(p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.cols, p.inv_cols);
    return cudaGetLastError();
}

typedef cudaError_t (*row_launch_fn)(const kb_args *a, cudaStream_t s);

/* One block-per-row configuration: rows of up to THREADS NV vectors. */
struct row_cfg {
    int threads, nv, pf, minb;
    row_launch_fn exact, any; /* for rows of exactly threads nv vectors / of fewer */
};

#define ROW_CFG(TH, NV, PF, MB)                                                             \
    {                                                                                      \
        TH, NV, PF, MB, launch_row<T, TANH, TH, NV, PF, MB, true>,                         \
            launch_row<T, TANH, TH, NV, PF, MB, false>                                     \
    }
#define ROW_X(TH, NV, PF, MB)                                                               \
    {                                                                                      \
        TH, NV, PF, MB, launch_row<T, TANH, TH, NV, PF, MB, true>, nullptr                 \
    }

#include <stdio.h>
#include <stdlib.h>

template <typename T, bool TANH> static cudaError_t launch_t(const kb_args *a, cudaStream_t s)
{
    constexpr bool WIDE = sizeof(T) == 4;
    const int64_t cols = a->shape[LN_COLS];
    const int V = kb_vec_width<T>();
    const bool aligned = ln_aligned16(a) && cols % V == 0;
    const int64_t nvec = cols / V;
    const int nvwarp = WIDE ? 8 : 4; /* the warp kernel's most vectors a lane */
    if (aligned && nvec <= 32 * nvwarp) {
        int nv = 1;
        while (32 * nv < nvec)
            nv *= 2;
        if (nv == 1)
            return launch_warp<T, TANH, 1>(a, s, 128);
        if (nv == 2)
            return launch_warp<T, TANH, 2>(a, s, 128);
        if (nv == 4)
            return launch_warp<T, TANH, 4>(a, s, 128);
        return launch_warp<T, TANH, WIDE ? 8 : 4>(a, s, 128);
    }
    static const row_cfg ladder[] = {
        ROW_CFG(128, 4, 1, 4), ROW_CFG(256, 4, 1, 4), ROW_CFG(512, 4, 1, 2),
        ROW_CFG(1024, 4, 1, 1),
    };
    if (!TANH && (std::is_same<T, float>::value || std::is_same<T, __nv_bfloat16>::value)) {
        static const row_cfg xf[] = {
            ROW_X(128, 8, 0, 8), ROW_X(128, 8, 2, 8), ROW_X(256, 4, 1, 4), ROW_X(256, 4, 1, 5),
            ROW_X(256, 4, 2, 6), ROW_X(512, 2, 1, 4), ROW_X(512, 8, 2, 2), ROW_X(1024, 4, 1, 1),
            ROW_X(1024, 4, 2, 1), ROW_X(512, 8, 0, 2), ROW_X(256, 4, 0, 4), ROW_X(1024, 4, 0, 1),
        };
        static const row_cfg xb[] = {
            ROW_X(128, 4, 0, 8), ROW_X(128, 4, 1, 8), ROW_X(128, 4, 2, 8), ROW_X(256, 2, 1, 6),
            ROW_X(256, 2, 2, 6), ROW_X(512, 4, 1, 2), ROW_X(512, 4, 0, 2), ROW_X(1024, 2, 1, 1),
            ROW_X(1024, 2, 1, 2), ROW_X(256, 2, 0, 6), ROW_X(1024, 2, 2, 1),
        };
        const char *env = getenv("KB_LN_CFG");
        int th = 0, nv = 0, pf = 0, mb = 0;
        if (env != nullptr && sscanf(env, "%d,%d,%d,%d", &th, &nv, &pf, &mb) == 4) {
            const row_cfg *t = WIDE ? xf : xb;
            const int n = WIDE ? (int)(sizeof xf / sizeof xf[0]) : (int)(sizeof xb / sizeof xb[0]);
            for (int i = 0; i < n; i++)
                if (t[i].threads == th && t[i].nv == nv && t[i].pf == pf && t[i].minb == mb &&
                    nvec == (int64_t)th * nv && aligned)
                    return t[i].exact(a, s);
            return cudaErrorNotSupported;
        }
    }
    if (aligned)
        for (const row_cfg &c : ladder)
            if (nvec <= (int64_t)c.threads * c.nv)
                return nvec == (int64_t)c.threads * c.nv ? c.exact(a, s) : c.any(a, s);
    return launch_stream<T, TANH>(a, s, ln_stream_threads(cols));
}

template <typename T> static cudaError_t launch_gelu(const kb_args *a, cudaStream_t s)
{
    return a->shape[LN_GELU] ? launch_t<T, true>(a, s) : launch_t<T, false>(a, s);
}

extern "C" cudaError_t kb_layernorm_fused(const kb_args *a, cudaStream_t s)
{
    switch (a->dtype) {
    case KB_FP32: return launch_gelu<float>(a, s);
    case KB_FP16: return launch_gelu<__half>(a, s);
    case KB_BF16: return launch_gelu<__nv_bfloat16>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

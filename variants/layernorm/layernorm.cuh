/* layernorm.cuh - device helpers private to the layernorm variants (each
 * variant's kernel file includes it): the two GELU forms every variant
 * computes, Welford states with Chan's merge, block sums for any block size,
 * and the host-side plan of the register path that fused and one_pass_variance
 * share. Element loads, 16-byte vectors and warp sums come from
 * kernels/device.cuh.
 *
 * Shifted data. The correct variants take their fp32 statistics of d = x - K, K
 * the row's first element: for a row centred at 1e4 with spread 1 the
 * differences are exact in fp32 and their sums keep the spread's digits, where
 * sums of x itself round at the spacing of 1e4 * cols (fused skips it for
 * 16-bit inputs, whose own spacing at such a mean is coarser still). */
#ifndef KB_LAYERNORM_CUH
#define KB_LAYERNORM_CUH

#include <stdint.h>

#include "kernels/device.cuh"
#include "kernels/layernorm_ref.h"
#include "kernels/op.h"

#define LN_EPS ((float)KB_LN_EPS)

/* 1 / v with one MUFU.RCP (about 1 ulp); 1 / inf = 0. */
KB_DEV float ln_rcp(float v)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

/* Exact GELU 0.5 z (1 + erf(z / sqrt 2)) as max(z, 0) - |z| * 0.5 erfc(|z| / sqrt 2),
 * the erfc from exp2 of a polynomial (constants and error in layernorm_ref.h):
 * 10 instructions, no branch, one MUFU.EX2. */
KB_DEV float ln_gelu_erf(float z)
{
    const float a = fabsf(z);
    const float c = fminf(a, KB_LN_GELU_CLAMP);
    float p = fmaf(KB_LN_ERFC_Q5, c, KB_LN_ERFC_Q4);
    p = fmaf(p, c, KB_LN_ERFC_Q3);
    p = fmaf(p, c, KB_LN_ERFC_Q2);
    p = fmaf(p, c, KB_LN_ERFC_Q1);
    p = fmaf(p, c, KB_LN_ERFC_Q0);
    p = fmaf(p, c, -1.0f);
    return fmaf(-a, kb_exp2(p), fmaxf(z, 0.0f));
}

/* Tanh GELU as z / (1 + exp2(z (T1 + T3 z^2))): 7 instructions, one MUFU.EX2
 * and one MUFU.RCP; exp2 overflowing to inf gives -0, as it should. */
KB_DEV float ln_gelu_tanh(float z)
{
    const float p = fmaf(z * z, KB_LN_TANH_T3, KB_LN_TANH_T1);
    return z * ln_rcp(1.0f + kb_exp2(z * p));
}

template <bool TANH> KB_DEV float ln_gelu(float z)
{
    if constexpr (TANH)
        return ln_gelu_tanh(z);
    else
        return ln_gelu_erf(z);
}

/* ---- Welford states ------------------------------------------------------------ */

/* Count, mean and sum of squared deviations of a set of elements. */
struct ln_wf {
    float n, mean, m2;
};

/* Adds element v (Welford's update; the 1/n by MUFU.RCP). */
KB_DEV void ln_wf_push(ln_wf &w, float v)
{
    w.n += 1.0f;
    const float d = v - w.mean;
    w.mean = fmaf(d, ln_rcp(w.n), w.mean);
    w.m2 = fmaf(d, v - w.mean, w.m2);
}

/* The state of the union of two disjoint sets (Chan et al.):
 * mean = ma + d nb/n, m2 = m2a + m2b + d^2 na nb/n, d = mb - ma. Either side
 * may be empty; two empty sides give an empty state. */
KB_DEV ln_wf ln_wf_merge(ln_wf a, ln_wf b)
{
    const float n = a.n + b.n;
    const float f = n > 0.0f ? b.n * ln_rcp(n) : 0.0f;
    const float d = b.mean - a.mean;
    ln_wf r;
    r.n = n;
    r.mean = fmaf(d, f, a.mean);
    r.m2 = a.m2 + b.m2 + d * d * a.n * f;
    return r;
}

/* Merges the states of a warp's 32 lanes; every lane gets lane 0's result, so
 * all lanes hold bit-equal statistics. All 32 lanes must call it. */
KB_DEV ln_wf ln_warp_wf(ln_wf w)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        ln_wf t;
        t.n = __shfl_down_sync(KB_FULL_MASK, w.n, o);
        t.mean = __shfl_down_sync(KB_FULL_MASK, w.mean, o);
        t.m2 = __shfl_down_sync(KB_FULL_MASK, w.m2, o);
        w = ln_wf_merge(w, t); /* lanes >= 32 - o merge garbage; only lane 0 is kept */
    }
    w.n = __shfl_sync(KB_FULL_MASK, w.n, 0);
    w.mean = __shfl_sync(KB_FULL_MASK, w.mean, 0);
    w.m2 = __shfl_sync(KB_FULL_MASK, w.m2, 0);
    return w;
}

/* Merges the states of the whole block (blockDim.x a multiple of 32, 1-D);
 * every thread gets the same result. red: __shared__ float[3][32], not touched
 * again before another barrier. One barrier. */
KB_DEV ln_wf ln_block_wf(ln_wf w, float (*red)[32])
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    w = ln_warp_wf(w);
    if (lane == 0) {
        red[0][warp] = w.n;
        red[1][warp] = w.mean;
        red[2][warp] = w.m2;
    }
    __syncthreads();
    ln_wf t = {0.0f, 0.0f, 0.0f};
    if (lane < (int)(blockDim.x >> 5)) {
        t.n = red[0][lane];
        t.mean = red[1][lane];
        t.m2 = red[2][lane];
    }
    return ln_warp_wf(t);
}

/* Sum over the whole block (blockDim.x a multiple of 32, 1-D); every thread
 * gets the same result (the butterfly leaves all lanes bit-equal, and every
 * warp sums the same partials in the same order). red: __shared__ float[32],
 * not written again before another barrier. One barrier. */
KB_DEV float ln_block_sum(float v, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = kb_warp_sum(v);
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : 0.0f;
    return kb_warp_sum(v);
}

/* ---- pieces of the persistent row kernels (fused, one_pass_variance) ------------ */

/* Calls f(std::integral_constant<int, k>()) for k = 0 .. N-1: a loop whose index
 * is a compile-time constant (for immediates in inline assembly). */
template <int N, int K = 0, typename F> KB_DEV void kb_static_for(F &&f)
{
    if constexpr (K < N) {
        f(std::integral_constant<int, K>());
        kb_static_for<N, K + 1>(f);
    }
}

/* Sum over a 1-D block of NW warps, NW a power of two: shuffles, one partial per
 * warp in red (__shared__, >= NW floats, not written again before another
 * barrier), then every lane folds all NW partials with a butterfly of log2(NW)
 * steps, so every thread gets the same bits. One barrier. */
template <int NW> KB_DEV float ln_block_sum_nw(float v, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = kb_warp_sum(v);
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    return kb_warp_sum<NW>(red[lane & (NW - 1)]);
}

/* Starts an asynchronous copy of the 16 bytes at g + OFF (global, 16-byte
 * aligned) to shared address sa + OFF (16-byte aligned), bypassing registers
 * and L1 (LDGSTS; OFF an immediate, so a thread's copies share two base
 * registers). after: any value the copy must wait for (a sum of what was last
 * read from the slot, so that the read is done before the copy overwrites it). */
template <int OFF> KB_DEV void ln_cp_async16(unsigned sa, const void *g, float after)
{
    asm volatile("{ .reg .f32 dep; mov.f32 dep, %2; }\n\t"
                 "cp.async.cg.shared.global [%0+%3], [%1+%3], 16;" ::"r"(sa),
                 "l"(g), "f"(after), "n"(OFF)
                 : "memory");
}

/* Waits until every asynchronous copy this thread started has landed. */
KB_DEV void ln_cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;" ::: "memory");
}

/* A thread's slice of a row in the block-per-row kernels: vectors j = tid + k
 * THREADS, k < NV, of the row's nvec 16-byte vectors (all in range when EXACT).
 *   PF 0, 1   ln_row_issue loads them into raw (LDG.E.128, evict-first); with
 *             PF 1 the kernel issues the next row's loads as soon as the current
 *             row is unpacked, so they fly during its barriers and output.
 *   PF 2      ln_row_issue copies them asynchronously into this thread's slots
 *             of the block's stage xs (NV THREADS vectors, slot k THREADS + tid),
 *             ln_row_take waits for them and reads them into raw; each thread
 *             reads only its own slots, so no barrier guards the stage.
 * Vectors past the row's end read as zero (PF 0, 1) or garbage (PF 2) and are
 * masked by the caller. */
template <typename T, int THREADS, int NV, int PF, bool EXACT>
KB_DEV void ln_row_issue(const T *__restrict__ x, int64_t row, int cols, int nvec, uint4 *raw,
                         uint4 *xs, float after)
{
    const int tid = threadIdx.x;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x + row * cols) + tid;
    if constexpr (PF == 2) {
        const unsigned sa = (unsigned)__cvta_generic_to_shared(xs + tid);
        kb_static_for<NV>([&](auto kc) {
            constexpr int k = decltype(kc)::value;
            if (EXACT || tid + k * THREADS < nvec)
                ln_cp_async16<k * THREADS * 16>(sa, xv, after);
        });
    } else {
#pragma unroll
        for (int k = 0; k < NV; k++)
            raw[k] = EXACT || tid + k * THREADS < nvec ? __ldcs(xv + k * THREADS)
                                                      : make_uint4(0u, 0u, 0u, 0u);
    }
}

template <int THREADS, int NV, int PF> KB_DEV void ln_row_take(uint4 *raw, const uint4 *xs)
{
    if constexpr (PF == 2) {
        ln_cp_async_wait_all();
#pragma unroll
        for (int k = 0; k < NV; k++)
            raw[k] = xs[k * THREADS + threadIdx.x];
    }
}

/* Shared memory that stages gamma and beta + b for the 16-bit dtypes (6 bytes a
 * column; 0 for fp32, which reads its vectors from L1/L2): two fp32 planes of
 * beta + b (elements 0-3 and 4-7 of each vector, so that a warp's 16-byte reads
 * are conflict-free), then gamma as raw vectors. */
template <typename T> static size_t ln_stage_bytes(int cols)
{
    return sizeof(T) == 2 ? (size_t)cols * (4 + sizeof(T)) : 0;
}

/* Fills the stage st (3 nvec vectors) for 16-bit T, then a barrier; no-op for
 * fp32. Every thread of the block must call it. */
template <typename T>
KB_DEV void ln_stage_affine(const T *__restrict__ gamma, const T *__restrict__ beta,
                            const T *__restrict__ bias, uint4 *st, int nvec)
{
    if constexpr (sizeof(T) == 2) {
        constexpr int V = kb_vec_width<T>();
        float4 *sbb = reinterpret_cast<float4 *>(st);
        for (int j = threadIdx.x; j < nvec; j += blockDim.x) {
            float b1[V], b2[V];
            kb_unpack<T>(kb_ld128(beta + (int64_t)j * V), b1);
            kb_unpack<T>(kb_ld128(bias + (int64_t)j * V), b2);
            sbb[j] = make_float4(b1[0] + b2[0], b1[1] + b2[1], b1[2] + b2[2], b1[3] + b2[3]);
            sbb[nvec + j] =
                make_float4(b1[4] + b2[4], b1[5] + b2[5], b1[6] + b2[6], b1[7] + b2[7]);
            st[2 * nvec + j] = kb_ld128(gamma + (int64_t)j * V);
        }
        __syncthreads();
    }
}

/* gamma and beta + b of this thread's vector j = tid + off as floats: from the
 * stage (16-bit) or three 16-byte loads through L1 (fp32). The pointers are
 * already advanced to the thread's first vector (st + tid, gamma + tid V, ...),
 * so that off, a compile-time multiple of the block size in the unrolled loops,
 * becomes an immediate offset instead of an address register per vector. */
template <typename T>
KB_DEV void ln_affine_vec(int off, int nvec, const uint4 *st, const T *__restrict__ gamma,
                          const T *__restrict__ beta, const T *__restrict__ bias, float *g,
                          float *bb)
{
    constexpr int V = kb_vec_width<T>();
    if constexpr (sizeof(T) == 2) {
        const float4 *sbb = reinterpret_cast<const float4 *>(st);
        kb_unpack<T>(st[2 * nvec + off], g);
        const float4 lo = sbb[off], hi = sbb[nvec + off];
        bb[0] = lo.x, bb[1] = lo.y, bb[2] = lo.z, bb[3] = lo.w;
        bb[4] = hi.x, bb[5] = hi.y, bb[6] = hi.z, bb[7] = hi.w;
    } else {
        float b2[V];
        kb_unpack<T>(kb_ld128(gamma + off * V), g);
        kb_unpack<T>(kb_ld128(beta + off * V), bb);
        kb_unpack<T>(kb_ld128(bias + off * V), b2);
#pragma unroll
        for (int i = 0; i < V; i++)
            bb[i] += b2[i];
    }
}

/* ---- the register path's plan (host) ---------------------------------------------
 *
 * A row of cols elements is held in registers as nvec = cols / V 16-byte vectors
 * (V = 4 for fp32, 8 for 16-bit), NV per thread (a compile-time register array):
 *   nvec <= 32 NVMAX    one warp per row, NV the least power of two with
 *                       32 NV >= nvec, 4 rows per 128-thread block;
 *   nvec < 128 NVMAX    one block per row, 16 elements a thread (NV = NVMAX / 2),
 *                       65 to 256 threads;
 *   otherwise           one block per row, 32 elements a thread (NV = NVMAX), 128
 *                       to 1024 threads; over 1024: no fit.
 * NVMAX = 8 for fp32, 4 for 16-bit (32 elements). Threads are nvec / NV rounded
 * up to a warp. No fit, cols % V != 0 or a base pointer off 16 bytes: the
 * streaming path, ln_stream_threads(cols) threads per row. */
enum { LN_STREAM = 0, LN_WARP = 1, LN_BLOCK = 2 };

struct ln_plan {
    int path;    /* LN_STREAM, LN_WARP or LN_BLOCK */
    int nv;      /* 16-byte vectors per thread (register paths) */
    int threads; /* block size */
};

static inline int ln_stream_threads(int64_t cols)
{
    int64_t t = (cols + 7) / 8; /* about 8 elements a thread */
    t = (t + 31) / 32 * 32;
    return (int)(t < 32 ? 32 : t > 1024 ? 1024 : t);
}

static inline ln_plan ln_plan_regs(size_t elem_size, int64_t cols, int aligned16)
{
    const int64_t v = 16 / (int64_t)elem_size;
    const int nvmax = elem_size == 4 ? 8 : 4;
    ln_plan p = {LN_STREAM, 0, ln_stream_threads(cols)};
    if (!aligned16 || cols % v != 0)
        return p;
    const int64_t nvec = cols / v;
    if (nvec <= 32 * nvmax) {
        int nv = 1;
        while (32 * nv < nvec)
            nv *= 2;
        return ln_plan{LN_WARP, nv, 128};
    }
    /* 32 elements a thread once that still leaves 4 warps a row, else 16. */
    const int nv = nvec >= 128 * nvmax ? nvmax : nvmax / 2;
    const int64_t t = ((nvec + nv - 1) / nv + 31) / 32 * 32;
    if (t > 1024)
        return p;
    return ln_plan{LN_BLOCK, nv, (int)t};
}

/* Launch bounds of a block-per-row register kernel: with 16 elements a thread it
 * runs at most 256 threads and is held to 40 registers (6 blocks per SM); with
 * 32 it takes up to 1024 threads at 64 registers. */
#define LN_ROW_MAX_THREADS(T, NV) ((NV) == (int)sizeof(T) ? 256 : 1024)
#define LN_ROW_MIN_BLOCKS(T, NV) ((NV) == (int)sizeof(T) ? 6 : 1)

/* 1 when every buffer the register path reads or writes with 16-byte vectors
 * starts on a 16-byte boundary. */
static inline int ln_aligned16(const kb_args *a)
{
    uintptr_t u = (uintptr_t)a->in[0] | (uintptr_t)a->in[1] | (uintptr_t)a->in[2] |
                  (uintptr_t)a->in[3] | (uintptr_t)a->out[0];
    return (u & 15u) == 0;
}

/* Shape axes (the table order of src/kernels/layernorm.c). */
enum { LN_ROWS = 0, LN_COLS = 1, LN_GELU = 2, LN_STATS = 3, LN_MEAN = 4 };

#endif

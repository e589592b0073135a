/* layernorm.cuh - device helpers private to the layernorm variants (each
 * variant's kernel file includes it): the two GELU forms every variant
 * computes, Welford states with Chan's merge and their block merge,
 * the pieces of the persistent row kernels (group sums over named barriers,
 * the fetch of a row's slice with its cp.async prefetch, the shared-memory
 * stage of gamma and beta + b, the end of a row) and the host-side plan (the
 * ladder of row-kernel shapes, the persistent grid, the kernels' buffer
 * parameters) that fused and one_pass_variance share. Element loads, 16-byte
 * vectors and warp sums come from kernels/device.cuh.
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
 * the erfc from exp2 of a polynomial of degree GD (constants and errors in
 * layernorm_ref.h): 5 clamped at KB_LN_GELU_CLAMP, 10 instructions, no branch,
 * one MUFU.EX2; 4 or 3 clamped at KB_LN_GELU16_CLAMP, one or two FMAs fewer,
 * for 16-bit outputs. */
template <int GD> KB_DEV float ln_gelu_erf(float z)
{
    static_assert(GD >= 3 && GD <= 5, "degree 3, 4 or 5");
    const float a = fabsf(z);
    return fmaf(-a, kb_exp2(kb_ln_erfc_exponent(a, GD)), fmaxf(z, 0.0f));
}

/* Tanh GELU as z / (1 + exp2(z (T1 + T3 z^2))): 7 instructions, one MUFU.EX2
 * and one MUFU.RCP; exp2 overflowing to inf gives -0, as it should. */
KB_DEV float ln_gelu_tanh(float z)
{
    const float p = fmaf(z * z, KB_LN_TANH_T3, KB_LN_TANH_T1);
    return z * ln_rcp(1.0f + kb_exp2(z * p));
}

template <bool TANH, int GD = 5> KB_DEV float ln_gelu(float z)
{
    if constexpr (TANH)
        return ln_gelu_tanh(z);
    else
        return ln_gelu_erf<GD>(z);
}

/* ln_gelu for an output of type T: the erf form's polynomial of degree 5 for
 * fp32, 4 for fp16, 3 for bf16, each erring by less than half an ulp of the
 * output's type relative (layernorm_ref.h); the fused variant's kernels. */
template <typename T, bool TANH> KB_DEV float ln_gelu_out(float z)
{
    constexpr int GD = sizeof(T) == 4 ? 5 : std::is_same<T, __nv_bfloat16>::value ? 3 : 4;
    return ln_gelu<TANH, GD>(z);
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

/* The exact statistics (two passes over registers) of the n elements
 * f[0..n) minus K: a chunk's state, for ln_wf_merge. */
template <int N> KB_DEV ln_wf ln_chunk_stats(const float (&f)[N], int n, float K)
{
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; i++)
        s += i < n ? f[i] - K : 0.0f;
    const float mean = n > 0 ? s / (float)n : 0.0f;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const float c = f[i] - K - mean;
        q = i < n ? fmaf(c, c, q) : q;
    }
    ln_wf w = {(float)n, mean, q};
    return w;
}

/* gamma and beta + b of the W columns from col: one 16-byte load each when
 * vec (col on a 16-byte boundary of the parameters), else element by element. */
template <typename T>
KB_DEV void ln_affine_any(const T *__restrict__ gamma, const T *__restrict__ beta,
                          const T *__restrict__ bias, int64_t col, bool vec, float *g, float *bb)
{
    constexpr int W = kb_vec_width<T>();
    if (vec) {
        float b2[W];
        kb_unpack<T>(kb_ld128(gamma + col), g);
        kb_unpack<T>(kb_ld128(beta + col), bb);
        kb_unpack<T>(kb_ld128(bias + col), b2);
#pragma unroll
        for (int i = 0; i < W; i++)
            bb[i] += b2[i];
    } else {
#pragma unroll
        for (int i = 0; i < W; i++) {
            g[i] = kb_load(gamma, col + i);
            bb[i] = kb_load(beta, col + i) + kb_load(bias, col + i);
        }
    }
}

/* ---- pieces of the warp-per-row kernels (fused, one_pass_variance) ------------- *
 *
 * A warp per row, 4 rows per 128-thread block; lane t owns the row's 16-byte
 * vectors t + 32 k, k < NV. */

/* The start of a warp-per-row kernel: this warp's row, and lane's NV vectors
 * of it streamed into raw (zeros past the row's cols / V vectors; CS: with the
 * streaming hint, else plain loads, or with NA loads that take no line in L1,
 * kb_ld128_na). False when
 * the warp is past the last row: the whole warp then leaves together, so no
 * shuffle partner is left behind. */
template <typename T, int NV, bool CS = true, bool NA = false>
KB_DEV bool ln_warp_start(const T *__restrict__ x, int64_t rows, int cols, int64_t &row,
                          uint4 (&raw)[NV])
{
    constexpr int V = kb_vec_width<T>();
    row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows)
        return false;
    const int nvec = cols / V;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x + row * cols);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int j = lane + 32 * k;
        raw[k] = j >= nvec ? make_uint4(0u, 0u, 0u, 0u)
                 : NA      ? kb_ld128_na(xv + j)
                 : CS      ? __ldcs(xv + j)
                           : xv[j];
    }
    return true;
}

/* The end of a warp-per-row kernel: y = GELU(z(k, i) gamma + (beta + b)) for
 * lane's vectors of the row at element base, streamed out (CS: with the
 * streaming hint, else plain stores); z(k, i) is element
 * i of vector k normalised. */
template <typename T, int NV, bool TANH, bool CS = true, typename Z>
KB_DEV void ln_warp_store(const T *__restrict__ gamma, const T *__restrict__ beta,
                          const T *__restrict__ bias, T *__restrict__ y, int64_t base, int cols,
                          Z z)
{
    constexpr int V = kb_vec_width<T>();
    const int lane = threadIdx.x & 31, nvec = cols / V;
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
                o[i] = ln_gelu_out<T, TANH>(fmaf(z(k, i), g[i], b1[i] + b2[i]));
            if constexpr (CS)
                __stcs(yv + j, kb_pack<T>(o));
            else
                yv[j] = kb_pack<T>(o);
        }
    }
}

/* ---- pieces of the persistent row kernels (fused, one_pass_variance) ------------ *
 *
 * A row kernel's block is G groups of THREADS threads (THREADS = 32 NW, a power
 * of two); each group is one row's worth of threads and loops over its rows on
 * its own, meeting only its own warps at a named barrier (id 1 + group; 0 is
 * __syncthreads) - so the G groups of a block share one stage of gamma and
 * beta + b instead of G blocks holding G copies. */

/* Waits for the THREADS threads of group gid (one block-wide __syncthreads when
 * G = 1). */
template <int THREADS, int G> KB_DEV void ln_group_sync(int gid)
{
    if constexpr (G == 1)
        __syncthreads();
    else
        asm volatile("bar.sync %0, %1;" ::"r"(1 + gid), "n"(THREADS) : "memory");
}

/* Sum over group gid's NW warps: shuffles, one partial per warp in red
 * (__shared__, >= NW floats of this group, not written again before the group's
 * next barrier), then every lane folds the NW partials with a butterfly of
 * log2(NW) steps, so every thread of the group gets the same bits. One barrier. */
template <int NW, int G> KB_DEV float ln_group_sum(float v, float *red, int gid)
{
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & (NW - 1);
    v = kb_warp_sum(v);
    if constexpr (NW == 1)
        return v; /* a group of one warp: the shuffles were the whole sum */
    if (lane == 0)
        red[warp] = v;
    ln_group_sync<NW * 32, G>(gid);
    return kb_warp_sum<NW>(red[lane & (NW - 1)]);
}

/* ln_group_sum of two values at once, behind the one barrier; red: 2 NW floats. */
template <int NW, int G> KB_DEV float2 ln_group_sum2(float2 v, float *red, int gid)
{
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & (NW - 1);
    v.x = kb_warp_sum(v.x);
    v.y = kb_warp_sum(v.y);
    if constexpr (NW == 1)
        return v;
    if (lane == 0) {
        red[warp] = v.x;
        red[NW + warp] = v.y;
    }
    ln_group_sync<NW * 32, G>(gid);
    const int w = lane & (NW - 1);
    return make_float2(kb_warp_sum<NW>(red[w]), kb_warp_sum<NW>(red[NW + w]));
}

/* ln_group_sum of N values at once, in place, behind the one barrier; red: N NW
 * floats (ln_group_sum2 keeps its scalar form, the code its kernels were
 * measured with). */
template <int NW, int G, int N> KB_DEV void ln_group_sumv(float (&v)[N], float *red, int gid)
{
    const int lane = threadIdx.x & 31, warp = (threadIdx.x >> 5) & (NW - 1);
#pragma unroll
    for (int i = 0; i < N; i++)
        v[i] = kb_warp_sum(v[i]);
    if constexpr (NW > 1) {
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < N; i++)
                red[i * NW + warp] = v[i];
        }
        ln_group_sync<NW * 32, G>(gid);
        const int w = lane & (NW - 1);
#pragma unroll
        for (int i = 0; i < N; i++)
            v[i] = kb_warp_sum<NW>(red[i * NW + w]);
    }
}

/* Calls f(std::integral_constant<int, k>()) for k = 0 .. N-1: a loop whose index
 * is a compile-time constant (for immediates in inline assembly). */
template <int N, int K = 0, typename F> KB_DEV void ln_static_for(F &&f)
{
    if constexpr (K < N) {
        f(std::integral_constant<int, K>());
        ln_static_for<N, K + 1>(f);
    }
}

/* Starts an asynchronous copy of the 16 bytes at g + OFF (global, 16-byte
 * aligned) to shared address sa + OFF, bypassing registers and L1 (LDGSTS; OFF
 * an immediate, so a thread's copies share two base registers). after: a value
 * computed from what this thread last read from the slot, so that the read is
 * done before the copy overwrites it. */
template <int OFF> KB_DEV void ln_cp_async16(unsigned sa, const void *g, float after)
{
    asm volatile("{ .reg .f32 dep; mov.f32 dep, %2; }\n\t"
                 "cp.async.cg.shared.global [%0+%3], [%1+%3], 16;" ::"r"(sa),
                 "l"(g), "f"(after), "n"(OFF)
                 : "memory");
}

/* A thread's slice of a row: vectors tid + k THREADS, k < NV, of the row's nvec
 * 16-byte vectors (all in range when EXACT), NV independent 16-byte loads in
 * flight. ok false (a group past the last row) loads nothing.
 *   PF 0, 1   ln_row_fetch loads them into raw (LDG.E.128; past the end or !ok,
 *             zeros). Plain cached loads: the streaming hint (ld.global.cs,
 *             LDG.E.EF) measured 3-6% slower here.
 *   PF 2      ln_row_fetch copies them asynchronously into this thread's slots
 *             of its group's stage xs (slot k THREADS + tid); ln_row_take waits
 *             for them and reads them into raw (zeros past the end or !ok).
 *             Each thread reads only its own slots: no barrier guards them. */
template <typename T, int THREADS, int NV, int PF, bool EXACT>
KB_DEV void ln_row_fetch(const T *__restrict__ x, int row, bool ok, int cols, int nvec, int tid,
                         uint4 *raw, uint4 *xs, float after)
{
    const uint4 *xv = reinterpret_cast<const uint4 *>(x + (int64_t)(ok ? row : 0) * cols) + tid;
    if constexpr (PF == 2) {
        const unsigned sa = (unsigned)__cvta_generic_to_shared(xs + tid);
        ln_static_for<NV>([&](auto kc) {
            constexpr int k = decltype(kc)::value;
            if (ok && (EXACT || tid + k * THREADS < nvec))
                ln_cp_async16<k * THREADS * 16>(sa, xv, after);
        });
    } else {
#pragma unroll
        for (int k = 0; k < NV; k++)
            raw[k] = ok && (EXACT || tid + k * THREADS < nvec) ? __ldg(xv + k * THREADS)
                                                              : make_uint4(0u, 0u, 0u, 0u);
    }
}

template <int THREADS, int NV, int PF, bool EXACT>
KB_DEV void ln_row_take(bool ok, int nvec, int tid, uint4 *raw, const uint4 *xs)
{
    if constexpr (PF == 2) {
        asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
        for (int k = 0; k < NV; k++)
            raw[k] = ok && (EXACT || tid + k * THREADS < nvec) ? xs[k * THREADS + tid]
                                                              : make_uint4(0u, 0u, 0u, 0u);
    }
}

/* Shared memory that stages gamma and beta + b for the 16-bit dtypes (6 bytes a
 * column, once a block; 0 for fp32, which reads its vectors through L1, half
 * the instructions' worth at its half rate of elements): two fp32 planes of
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

/* The classes of rows of cols elements, V a vector, by where they start
 * against a 16-byte boundary (buffers aligned): row r starts (r cols) % V
 * elements past one, which repeats every V / gcd(cols, V) rows. */
static inline __host__ __device__ int ln_peel_classes(int cols, int V)
{
    int g = 1;
    while (g < V && cols % (2 * g) == 0)
        g *= 2;
    return V / g;
}

/* The rows a persistent row kernel's block walks: group g's first row is
 * first + step g, each group's next rows `stride` further on, until first
 * (advanced by stride each round) passes the last row. */
struct ln_row_walk {
    int first, step, stride;
};

/* The walk of a peeled row kernel's block of G groups: the rows of class c =
 * blockIdx.x mod p (ln_peel_classes) only, c + p m, whose m the class's bc
 * blocks share out as the plain kernel's blocks share out all rows (first m
 * (blockIdx.x / p) G, m + G bc a round). The grid has a block of each class
 * that holds rows (at least min(p, rows) blocks). */
template <int V> KB_DEV ln_row_walk ln_row_walk_peel(int cols, int G)
{
    const int p = ln_peel_classes(cols, V), b = (int)blockIdx.x, nb = (int)gridDim.x;
    const int c = b % p;
    const int bc = (nb - c + p - 1) / p; /* the blocks of class c */
    return ln_row_walk{c + p * (b / p * G), p, p * bc * G};
}

/* The stage of the peeled row kernel (rows off 16-byte boundaries; fused.cu),
 * fp32 too: beta + b (fp32) and gamma (raw) for the body's nvec vectors, at
 * most cols / V of them (8 bytes a column for fp32, 6 for 16-bit). */
template <typename T> static size_t ln_peel_stage_bytes(int cols)
{
    constexpr int V = kb_vec_width<T>();
    return (size_t)(cols / V) * (4 * V + 16);
}

/* Fills the stage st for the body of rows whose first 16-byte boundary is
 * head columns in: vector j holds columns head + j V .. head + j V + V - 1
 * (j < nvec), in ln_stage_affine's layout (V / 4 planes of beta + b as
 * float4s, then gamma as raw vectors), each thread taking aligned vectors of
 * the parameters (16-byte loads; element loads for one that ends past cols)
 * and scattering their elements; then a barrier. Every thread of the block
 * must call it. */
template <typename T>
KB_DEV void ln_stage_affine_peel(const T *__restrict__ gamma, const T *__restrict__ beta,
                                 const T *__restrict__ bias, uint4 *st, int nvec, int head,
                                 int cols)
{
    constexpr int V = kb_vec_width<T>(), Q = V / 4;
    float *sbb = reinterpret_cast<float *>(st);   /* [Q][nvec][4] */
    T *sg = reinterpret_cast<T *>(st + Q * nvec); /* [nvec][V] */
    const int na = (head + nvec * V + V - 1) / V; /* the aligned vectors the body touches */
    for (int a = threadIdx.x; a < na; a += blockDim.x) {
        uint4 gr;
        float bb[V], b2[V];
        if ((a + 1) * V <= cols) {
            gr = kb_ld128(gamma + a * V);
            kb_unpack<T>(kb_ld128(beta + a * V), bb);
            kb_unpack<T>(kb_ld128(bias + a * V), b2);
        } else {
            float g[V];
#pragma unroll
            for (int e = 0; e < V; e++) {
                const bool in = a * V + e < cols;
                g[e] = in ? kb_load(gamma, a * V + e) : 0.0f;
                bb[e] = in ? kb_load(beta, a * V + e) : 0.0f;
                b2[e] = in ? kb_load(bias, a * V + e) : 0.0f;
            }
            gr = kb_pack<T>(g);
        }
        const T *gt = reinterpret_cast<const T *>(&gr);
#pragma unroll
        for (int e = 0; e < V; e++) {
            const int i = a * V + e - head; /* the element's place in the body */
            if (i >= 0 && i < nvec * V) {
                sbb[((i % V / 4) * nvec + i / V) * 4 + i % 4] = bb[e] + b2[e];
                sg[i] = gt[e];
            }
        }
    }
    __syncthreads();
}

/* p, as a value the compiler cannot see through: an address computed from it
 * inside the row loop is not hoisted out of the loop (where, live across the
 * whole loop, the addresses of all a thread's vectors would cost registers). */
template <typename P> KB_DEV P *ln_opaque(P *p)
{
    asm volatile("mov.b64 %0, %0;" : "+l"(p));
    return p;
}

/* beta + b of vector off (of V elements) from b1t and b2t as floats: two
 * 16-byte loads through L1. */
template <typename T>
KB_DEV void ln_bias_global(int off, const T *__restrict__ b1t, const T *__restrict__ b2t,
                           float *bb)
{
    constexpr int V = kb_vec_width<T>();
    float b2[V];
    kb_unpack<T>(kb_ld128(b1t + off * V), bb);
    kb_unpack<T>(kb_ld128(b2t + off * V), b2);
#pragma unroll
    for (int i = 0; i < V; i++)
        bb[i] += b2[i];
}

/* gamma and beta + b of vector off (of V elements) from gt, b1t and b2t as
 * floats: three 16-byte loads through L1. */
template <typename T>
KB_DEV void ln_affine_global(int off, const T *__restrict__ gt, const T *__restrict__ b1t,
                             const T *__restrict__ b2t, float *g, float *bb)
{
    kb_unpack<T>(kb_ld128(gt + off * kb_vec_width<T>()), g);
    ln_bias_global<T>(off, b1t, b2t, bb);
}

/* gamma and beta + b of this thread's vector tid + off as floats: from the
 * stage (STAGED: 16-bit, and the peeled rows' fp32; ln_stage_affine's layout)
 * or three 16-byte loads through L1 (fp32). The pointers are advanced to the
 * thread's first vector (stt = stage + tid, gt = gamma + tid V, ...), so that
 * off, a compile-time multiple of the block size in the unrolled loops,
 * becomes an immediate offset. */
template <typename T, bool STAGED = sizeof(T) == 2>
KB_DEV void ln_affine_vec(int off, int nvec, const uint4 *stt, const T *__restrict__ gt,
                          const T *__restrict__ b1t, const T *__restrict__ b2t, float *g,
                          float *bb)
{
    constexpr int Q = kb_vec_width<T>() / 4; /* float4 planes of beta + b */
    if constexpr (STAGED) {
        const float4 *sbb = reinterpret_cast<const float4 *>(stt);
        kb_unpack<T>(stt[Q * nvec + off], g);
#pragma unroll
        for (int q = 0; q < Q; q++) {
            const float4 b = sbb[q * nvec + off];
            bb[4 * q] = b.x, bb[4 * q + 1] = b.y, bb[4 * q + 2] = b.z, bb[4 * q + 3] = b.w;
        }
    } else {
        ln_affine_global<T>(off, gt, b1t, b2t, g, bb);
    }
}

/* The end of a row kernel's row: y = GELU(z(k, i) gamma + (beta + b)) for this
 * thread's vectors of the row (none when !ok), plain 16-byte stores; then the
 * group's thread 0 writes the row's mean (mean(), worked out only there) and
 * rstd to mean_out and rstd_out (when not NULL). z(k, i) is element i of
 * vector k normalised. FENCE: a
 * compiler barrier after each vector, so that the next vector's gamma/beta/b
 * loads are not hoisted above this store (where, at 64 registers, they would
 * spill). STAGED: the parameters from the stage stt (ln_affine_vec). */
template <typename T, int THREADS, int NV, bool EXACT, bool TANH, bool FENCE,
          bool STAGED = sizeof(T) == 2, typename M, typename Z>
KB_DEV void ln_row_store(const T *__restrict__ gamma, const T *__restrict__ beta,
                         const T *__restrict__ bias, T *__restrict__ y,
                         float *__restrict__ mean_out, float *__restrict__ rstd_out, int row,
                         bool ok, int cols, int nvec, int tid, const uint4 *stt, M mean,
                         float rstd, Z z)
{
    constexpr int V = kb_vec_width<T>();
    uint4 *yv = reinterpret_cast<uint4 *>(y + (int64_t)(ok ? row : 0) * cols) + tid;
    const T *gt = ln_opaque(gamma) + tid * V, *b1t = ln_opaque(beta) + tid * V,
            *b2t = ln_opaque(bias) + tid * V;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (ok && (EXACT || tid + k * THREADS < nvec)) {
            float g[V], bb[V], o[V];
            ln_affine_vec<T, STAGED>(k * THREADS, nvec, stt, gt, b1t, b2t, g, bb);
#pragma unroll
            for (int i = 0; i < V; i++)
                o[i] = ln_gelu_out<T, TANH>(fmaf(z(k, i), g[i], bb[i]));
            kb_st128(yv + k * THREADS, kb_pack<T>(o));
        }
        if constexpr (FENCE)
            asm volatile("" ::: "memory");
    }
    if (mean_out != nullptr && ok && tid == 0) {
        mean_out[row] = mean();
        rstd_out[row] = rstd;
    }
}

/* ---- the register paths' plan (host) --------------------------------------------
 *
 * A row of cols elements is held in registers as nvec = cols / V 16-byte vectors
 * (V = 4 for fp32, 8 for 16-bit):
 *   nvec <= 32 NVW       a warp per row (layernorm_*_warp), NV the least power of
 *                        two with 32 NV >= nvec, 4 rows per 128-thread block;
 *                        NVW = 8 (fp32) or 1 (16-bit: its rows of 33-128
 *                        vectors take the ladder's first rung, 8 groups of a
 *                        warp holding 4 vectors a lane, 256-thread blocks);
 *   up to 8192 vectors   a group of threads per row, persistent (layernorm_*_row):
 *   (32768 fp32, 65536   the first rung of the ladder below that holds nvec
 *   16-bit columns)      vectors; 16-bit stops at 4096 vectors (its 1024 x 4);
 *   otherwise, or cols % V != 0, or a pointer off 16 bytes: the streaming path
 *   (fused's rows off 16-byte boundaries: its peeled row kernel, opt-in).
 * A rung X(THREADS, NV, PF, MINB, G): groups of THREADS threads holding NV
 * vectors a thread, G groups a block, MINB the launch bounds' blocks per SM (the
 * register cap is 64K / (G THREADS MINB)), PF the fetch of the next row
 * (ln_row_fetch; PF 1, into registers, is supported but no rung uses it: at 32
 * elements a thread it spills). fp32: one group a block, no prefetch (8 blocks
 * of 32 floats a thread per SM overlap one another's loads; prefetching
 * measured no faster). 16-bit: 1024-thread blocks (2 x 512 for 16 elements a
 * thread), so one stage of gamma and beta + b serves the SM, and the next row's
 * x copied into shared memory (PF 2) - except 32768 columns, whose 192 KB stage
 * leaves no room for it - and, for rows of up to 1024 columns, 256-thread
 * blocks of 8 one-warp groups, 4 blocks an SM. Figures in fused.cu. */
#define LN_ROW_LADDER_F32(X)                                                              \
    X(128, 4, 0, 8, 1) X(128, 8, 0, 8, 1) X(256, 8, 0, 4, 1) X(512, 8, 0, 2, 1)           \
        X(1024, 8, 0, 1, 1)
#define LN_ROW_LADDER_16(X)                                                               \
    X(32, 4, 2, 4, 8) X(128, 2, 2, 2, 4) X(128, 4, 2, 1, 8) X(256, 4, 2, 1, 4)             \
        X(512, 4, 2, 1, 2) X(1024, 4, 0, 1, 1)

/* A rung of the ladder as a variant instantiates it: its kernel's launchers for
 * rows of exactly threads nv vectors and of fewer. */
typedef cudaError_t (*ln_launch_fn)(const kb_args *a, cudaStream_t s);
struct ln_row_cfg {
    int threads, nv;
    ln_launch_fn exact, any;
};

/* The first rung of ladder l whose groups hold nvec vectors, or null. */
template <size_t N> static const ln_row_cfg *ln_rung_for(const ln_row_cfg (&l)[N], int64_t nvec)
{
    for (size_t i = 0; i < N; i++)
        if (nvec <= (int64_t)l[i].threads * l[i].nv)
            return &l[i];
    return nullptr;
}

/* Threads a row of the streaming path: about 8 elements a thread, 32-1024. */
static inline int ln_stream_threads(int64_t cols)
{
    int64_t t = (cols + 7) / 8;
    t = (t + 31) / 32 * 32;
    return (int)(t < 32 ? 32 : t > 1024 ? 1024 : t);
}

/* The persistent grid of row kernel k (threads a block, smem bytes of dynamic
 * shared memory, allowed first, static included): as many blocks as can be
 * resident at once, so every SM holds the same number, and no more than
 * need, blocks with g groups for rows rows. Group j of block b then takes
 * rows b g + j, b g + j + grid g, ... The runtime is asked once per kernel
 * and size (launchers call this inside the timed region). Returns the CUDA
 * error. */
static inline cudaError_t ln_row_grid(const void *k, int threads, int g, size_t smem,
                                      int64_t rows, unsigned *blocks)
{
    static const void *asked_k;
    static int asked_threads;
    static size_t asked_smem;
    static int64_t most;
    if (k != asked_k || threads != asked_threads || smem != asked_smem) {
        int sms = 0, per_sm = 0;
        cudaError_t e = kb_allow_smem_once(k, smem);
        if (e == cudaSuccess)
            e = kb_current_sms(&sms);
        if (e == cudaSuccess)
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem);
        if (e != cudaSuccess)
            return e;
        asked_k = k, asked_threads = threads, asked_smem = smem;
        most = (int64_t)(per_sm > 0 ? per_sm : 1) * sms;
    }
    const int64_t need = (rows + g - 1) / g;
    *blocks = (unsigned)(need < most ? need : most);
    return cudaSuccess;
}

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

/* The buffers of the stepwise variants (naive, coalesced): x, gamma, beta, b
 * and y; mean and rstd (the stats outputs when the shape asks for them, else
 * scratch, each padded to kb_ln_pad_rows) and the fp32 intermediate t (rows x
 * cols) in scratch after them, as src/kernels/layernorm.c sizes it. */
template <typename T> struct ln_steps {
    const T *x, *g, *b1, *b2;
    T *y;
    float *mean, *rstd, *t;
    int64_t rows;
    int cols;
    float inv_cols;
};

template <typename T> static ln_steps<T> ln_steps_of(const kb_args *a)
{
    ln_steps<T> p;
    p.rows = a->shape[LN_ROWS];
    p.cols = (int)a->shape[LN_COLS];
    p.inv_cols = 1.0f / (float)p.cols;
    p.x = (const T *)a->in[0];
    p.g = (const T *)a->in[1];
    p.b1 = (const T *)a->in[2];
    p.b2 = (const T *)a->in[3];
    p.y = (T *)a->out[0];
    p.mean = (float *)a->scratch;
    p.rstd = p.mean + kb_ln_pad_rows(p.rows);
    p.t = p.rstd + kb_ln_pad_rows(p.rows);
    if (a->shape[LN_STATS]) {
        p.mean = (float *)a->out[1];
        p.rstd = (float *)a->out[2];
    }
    return p;
}

template <typename T> struct ln_ptrs {
    const T *x, *g, *b1, *b2;
    T *y;
    float *mo, *ro; /* NULL without stats */
    int64_t rows;
    int cols;
    float inv_cols;
};

template <typename T> static ln_ptrs<T> ln_ptrs_of(const kb_args *a)
{
    const bool st = a->shape[LN_STATS] != 0;
    ln_ptrs<T> p = {(const T *)a->in[0], (const T *)a->in[1], (const T *)a->in[2],
                    (const T *)a->in[3], (T *)a->out[0],
                    st ? (float *)a->out[1] : nullptr, st ? (float *)a->out[2] : nullptr,
                    a->shape[LN_ROWS], (int)a->shape[LN_COLS],
                    1.0f / (float)a->shape[LN_COLS]};
    return p;
}

/* The buffers a register-path kernel takes first, in the order ln_launchers
 * passes them: x, gamma, beta and bias (read), y (written), mean_out and
 * rstd_out (the stats outputs, NULL when the shape asks for none); T is the
 * kernel's element type. The warp and row kernels follow them with rows, cols
 * and inv_cols (rows an int64_t and an int), the streaming kernel with cols and
 * inv_cols. */
#define LN_PATH_BUFFERS                                                                 \
    const T *__restrict__ x, const T *__restrict__ gamma, const T *__restrict__ beta,   \
        const T *__restrict__ bias, T *__restrict__ y, float *__restrict__ mean_out,    \
        float *__restrict__ rstd_out

/* The launchers of the register path's three kernels, K's (see ln_dispatch). */
template <typename K> struct ln_launchers {
    template <typename T, bool TANH, int NV>
    static cudaError_t warp(const kb_args *a, cudaStream_t s, int threads)
    {
        const ln_ptrs<T> p = ln_ptrs_of<T>(a);
        const int rpb = threads / 32;
        const kb_dim3 grid = {(unsigned)((p.rows + rpb - 1) / rpb), 1, 1};
        const kb_dim3 block = {(unsigned)threads, 1, 1};
        return kb_launch(a, s, K::template warp<T, NV, TANH>(), K::warp_name, grid, block, 0,
                         p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, p.cols, p.inv_cols);
    }

    template <typename T, bool TANH, int THREADS, int NV, int PF, int MINB, int G, bool EXACT>
    static cudaError_t row(const kb_args *a, cudaStream_t s)
    {
        const ln_ptrs<T> p = ln_ptrs_of<T>(a);
        const size_t smem =
            ln_stage_bytes<T>(p.cols) + (PF == 2 ? (size_t)G * THREADS * NV * 16 : 0);
        auto k = K::template row<T, THREADS, NV, PF, MINB, G, EXACT, TANH>();
        if (p.rows > INT32_MAX / 2) /* row + stride stays below 2^31 */
            return cudaErrorInvalidValue;
        unsigned blocks = 0;
        const cudaError_t e =
            ln_row_grid((const void *)k, THREADS * G, G, smem, p.rows, &blocks);
        if (e != cudaSuccess)
            return e;
        const kb_dim3 grid = {blocks, 1, 1};
        const kb_dim3 block = {(unsigned)(THREADS * G), 1, 1};
        return kb_launch(a, s, k, K::row_name, grid, block, smem, p.x, p.g, p.b1, p.b2, p.y, p.mo,
                         p.ro, (int)p.rows, p.cols, p.inv_cols);
    }

    template <typename T, bool TANH>
    static cudaError_t stream(const kb_args *a, cudaStream_t s, int threads)
    {
        const ln_ptrs<T> p = ln_ptrs_of<T>(a);
        const kb_dim3 grid = {(unsigned)p.rows, 1, 1};
        const kb_dim3 block = {(unsigned)threads, 1, 1};
        return kb_launch(a, s, K::template stream<T, TANH>(), K::stream_name, grid, block, 0,
                         p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.cols, p.inv_cols);
    }
};

/* The register path's dispatch, one for fused and one-pass-variance so that
 * their speeds compare: the warp kernel for rows of at most 32 x (8 | 1)
 * vectors, the ladder of row kernels for longer aligned rows, else the
 * streaming kernel. K names the variant's kernels: static member templates
 * warp<T, NV, TANH>(), row<T, THREADS, NV, PF, MINB, G, EXACT, TANH>() and
 * stream<T, TANH>() return them, warp_name, row_name and stream_name name
 * them for the launch log. */
#define LN_DISPATCH_ROW(TH, NV, PF, MB, G)                                                  \
    {TH, NV, ln_launchers<K>::template row<T, TANH, TH, NV, PF, MB, G, true>,              \
     ln_launchers<K>::template row<T, TANH, TH, NV, PF, MB, G, false>},

template <typename K, typename T, bool TANH>
static cudaError_t ln_dispatch(const kb_args *a, cudaStream_t s)
{
    constexpr bool WIDE = sizeof(T) == 4;
    constexpr int V = kb_vec_width<T>();
    const int64_t cols = a->shape[LN_COLS];
    const bool aligned = ln_aligned16(a) && cols % V == 0;
    const int64_t nvec = cols / V;
    /* 16-bit rows of more than 32 vectors go to the ladder's warp-sized
     * groups: gamma and beta + b staged once a block and x prefetched, where
     * the warp kernel reads the three parameter vectors again for every row
     * vector (16-bit is near the issue limit). */
    constexpr int WARP_NV = WIDE ? 8 : 1;
    if (aligned && nvec <= 32 * WARP_NV) {
        int nv = 1;
        while (32 * nv < nvec)
            nv *= 2;
        if (nv == 1)
            return ln_launchers<K>::template warp<T, TANH, 1>(a, s, 128);
        if (nv == 2)
            return ln_launchers<K>::template warp<T, TANH, 2>(a, s, 128);
        if (nv == 4)
            return ln_launchers<K>::template warp<T, TANH, 4>(a, s, 128);
        return ln_launchers<K>::template warp<T, TANH, WARP_NV>(a, s, 128);
    }
    if (aligned) {
        const ln_row_cfg *r;
        if constexpr (WIDE) {
            static const ln_row_cfg l[] = {LN_ROW_LADDER_F32(LN_DISPATCH_ROW)};
            r = ln_rung_for(l, nvec);
        } else {
            static const ln_row_cfg l[] = {LN_ROW_LADDER_16(LN_DISPATCH_ROW)};
            r = ln_rung_for(l, nvec);
        }
        if (r != nullptr)
            return nvec == (int64_t)r->threads * r->nv ? r->exact(a, s) : r->any(a, s);
    }
    return ln_launchers<K>::template stream<T, TANH>(a, s, ln_stream_threads(cols));
}

/* ln_dispatch for a->shape's GELU form. */
template <typename K, typename T>
static cudaError_t ln_dispatch_gelu(const kb_args *a, cudaStream_t s)
{
    return a->shape[LN_GELU] ? ln_dispatch<K, T, true>(a, s) : ln_dispatch<K, T, false>(a, s);
}

/* The launcher of a register-path variant NAME (fused, one_pass_variance): its
 * kernels layernorm_NAME_warp, layernorm_NAME_row and layernorm_NAME_stream,
 * named so in launch notes, through ln_dispatch, as
 *   extern "C" cudaError_t kb_layernorm_NAME(const kb_args *a, cudaStream_t s). */
#define LN_REGISTER_PATH_VARIANT(NAME)                                                   \
    struct NAME##_kernels {                                                              \
        static constexpr const char *warp_name = "layernorm_" #NAME "_warp";             \
        static constexpr const char *row_name = "layernorm_" #NAME "_row";               \
        static constexpr const char *stream_name = "layernorm_" #NAME "_stream";         \
        template <typename T, int NV, bool TANH> static constexpr auto warp()            \
        {                                                                                \
            return layernorm_##NAME##_warp<T, NV, TANH>;                                 \
        }                                                                                \
        template <typename T, int THREADS, int NV, int PF, int MINB, int G, bool EXACT,  \
                  bool TANH>                                                             \
        static constexpr auto row()                                                      \
        {                                                                                \
            return layernorm_##NAME##_row<T, THREADS, NV, PF, MINB, G, EXACT, TANH>;     \
        }                                                                                \
        template <typename T, bool TANH> static constexpr auto stream()                  \
        {                                                                                \
            return layernorm_##NAME##_stream<T, TANH>;                                   \
        }                                                                                \
    };                                                                                   \
    template <typename T> static cudaError_t NAME##_launch(const kb_args *a, cudaStream_t s) \
    {                                                                                    \
        return ln_dispatch_gelu<NAME##_kernels, T>(a, s);                                \
    }                                                                                    \
    extern "C" cudaError_t kb_layernorm_##NAME(const kb_args *a, cudaStream_t s)        \
    {                                                                                    \
        KB_LAUNCH_BY_DTYPE(NAME##_launch, a, s)                                          \
    }

#endif

/* device.cuh - helpers shared by the variant kernels: a noted launch; the
 * reader of the variants' A/B switches (environment); element loads and
 * stores of fp32/fp16/bf16 as float, 16-byte vector loads and stores with
 * their unpacking to floats, a fast exp2, warp and block reductions of a float
 * (max, sum), and the online softmax normaliser: a pair (m, d) = (running
 * max, sum of exp(x - m)) with its merge and its warp and block reductions.
 *
 * Everything here is inline (device code, and the launch on the host); a
 * kernel file includes it and instantiates what it uses. Arithmetic is fp32 whatever the element type.
 * Block reductions contain __syncthreads(): every thread of the block must
 * call them, never from inside a branch that only some threads take. */
#ifndef KB_DEVICE_CUH
#define KB_DEVICE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kernels/op.h"

#define KB_DEV __device__ __forceinline__

/* The body of an extern "C" launcher whose work is a template launch<T>(a, s)
 * over the element type: calls it with T for a->dtype, and returns
 * cudaErrorInvalidValue for a dtype it does not know. KB_LAUNCH_BY_DTYPE16 is
 * the same for a launcher of the 16-bit types only (the tensor-core rungs). */
#define KB_DTYPE16_CASES(launch, a, s)                                                \
    case KB_FP16:                                                                     \
        return launch<__half>((a), (s));                                              \
    case KB_BF16:                                                                     \
        return launch<__nv_bfloat16>((a), (s));
#define KB_LAUNCH_BY_DTYPE(launch, a, s)                                              \
    switch ((a)->dtype) {                                                             \
    case KB_FP32:                                                                     \
        return launch<float>((a), (s));                                               \
        KB_DTYPE16_CASES(launch, a, s)                                                \
    default:                                                                          \
        return cudaErrorInvalidValue;                                                 \
    }
#define KB_LAUNCH_BY_DTYPE16(launch, a, s)                                            \
    switch ((a)->dtype) {                                                             \
        KB_DTYPE16_CASES(launch, a, s)                                                \
    default:                                                                          \
        return cudaErrorInvalidValue;                                                 \
    }

/* Lets kernel k take smem bytes of dynamic shared memory (past 48 KB a kernel
 * must ask), asking the runtime once per kernel and size (kb_allow_smem_once:
 * launchers call it on every launch, inside the timed region). Returns the
 * runtime's error. */
template <typename... P> static cudaError_t kb_allow_smem(void (*k)(P...), size_t smem)
{
    return kb_allow_smem_once((const void *)k, smem);
}

/* Launches kernel k with grid and block and smem bytes of dynamic shared
 * memory on stream s, passing it args, after noting the launch in a->log as
 * name (kb_note_launch). Returns the launch's error (cudaGetLastError). */
template <typename... P, typename... A>
static cudaError_t kb_launch(const kb_args *a, cudaStream_t s, void (*k)(P...), const char *name,
                             kb_dim3 grid, kb_dim3 block, size_t smem, A... args)
{
    kb_note_launch(a->log, (const void *)k, name, grid, block, smem);
    k<<<dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), smem, s>>>(args...);
    return cudaGetLastError();
}

/* log2(e): exp(v) = exp2(v * KB_LOG2E). */
#define KB_LOG2E 1.4426950408889634f
#define KB_FULL_MASK 0xffffffffu

/* The global timer (ns) and the SM this thread runs on, for the trace tools'
 * stamps (softmax's grid_stamp, grid_pipe.cuh's kb_gpipe_stamp). */
KB_DEV unsigned long long kb_globaltimer(void)
{
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    return g;
}

KB_DEV unsigned kb_smid(void)
{
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm;
}

/* -infinity as a float, usable in device code without <math.h>'s INFINITY. */
KB_DEV float kb_neg_inf(void)
{
    return __int_as_float((int)0xff800000u);
}

/* 2^v with the special-function unit: one MUFU.EX2, relative error about 2 ulp;
 * results below 2^-126 flush to zero, exp2(-inf) = +0. */
KB_DEV float kb_exp2(float v)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

/* 1 / v with the special-function unit, inline (a plain 1.0f / v calls a
 * slow-path subroutine, which costs registers and a stack frame); about 1 ulp
 * for the normal v a softmax sum can take. */
KB_DEV float kb_rcp(float v)
{
    return __fdividef(1.0f, v);
}

/* ---- elements as float ------------------------------------------------------ */

/* v widened to float (exact). */
KB_DEV float kb_to_float(float v)
{
    return v;
}

KB_DEV float kb_to_float(__half v)
{
    return __half2float(v);
}

KB_DEV float kb_to_float(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

/* v rounded to T (round to nearest even). */
template <typename T> KB_DEV T kb_from_float(float v)
{
    if constexpr (std::is_same<T, float>::value)
        return v;
    else if constexpr (std::is_same<T, __half>::value)
        return __float2half_rn(v);
    else
        return __float2bfloat16_rn(v);
}

/* Element i of p (read-only for the kernel's lifetime), as float. */
template <typename T> KB_DEV float kb_load(const T *p, int64_t i)
{
    return kb_to_float(__ldg(p + i));
}

/* p[i] = v rounded to T. */
template <typename T> KB_DEV void kb_store(T *p, int64_t i, float v)
{
    p[i] = kb_from_float<T>(v);
}

/* ---- 16-byte vectors ---------------------------------------------------------- */

/* Elements of T in one 16-byte vector: 4 for fp32, 8 for fp16 and bf16. */
template <typename T> __host__ __device__ constexpr int kb_vec_width(void)
{
    return (int)(16 / sizeof(T));
}

/* The 16 bytes at p, which must be 16-byte aligned and read-only for the
 * kernel's lifetime (one LDG.E.128). */
KB_DEV uint4 kb_ld128(const void *p)
{
    return __ldg((const uint4 *)p);
}

/* kb_ld128 without a line in L1 (ld.global.nc.L1::no_allocate): for data read
 * once, so that it does not evict what the SM reads again. */
KB_DEV uint4 kb_ld128_na(const void *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

/* Stores 16 bytes at p, which must be 16-byte aligned (one STG.E.128). */
KB_DEV void kb_st128(void *p, uint4 v)
{
    *(uint4 *)p = v;
}

/* ---- a span of short rows through shared memory (the row operators' tile paths) --
 *
 * A block's rows of a short-row tile are one contiguous span [e0, e0 + n) of
 * the matrix (kb_span); the span sits in shared memory as it sits against 16-byte
 * boundaries in global memory, tile[0] being the element e0 - mis (mis = e0
 * mod W), so both copies are aligned 16-byte moves: nvec vectors from there,
 * the first and last of which may stick out of the span and move element by
 * element. MAXV: the most vectors a thread moves (nvec <= MAXV THREADS). */

/* The column that lane t of a G-lane group takes as its element i (of up to
 * 8) of the short row r of a tile (r: the row's index in the block's span).
 * SWZ: the element indices XOR-ed with r % 8, so that the rows a warp reads at
 * once, which a power-of-two row length starts in the same banks, read
 * different banks; a lane holds the same set of columns either way. */
template <int G, bool SWZ> KB_DEV int kb_tile_col(int t, int i, int r)
{
    return t + G * (SWZ ? i ^ (r & 7) : i);
}

/* 0, 1, 2, 3 for tile groups of 4, 8, 16, 32 lanes (the launchers' name tables). */
constexpr int kb_tile_group_index(int g)
{
    return g <= 4 ? 0 : g <= 8 ? 1 : g <= 16 ? 2 : 3;
}

/* Rows of cols elements in a span of at most elems elements: a multiple of
 * rpr (the rows a block's threads take at once), at least rpr (and rpr for
 * an empty row). */
__host__ __device__ constexpr int64_t kb_span_rows(int64_t elems, int rpr, int64_t cols)
{
    return cols > 0 && elems / cols / rpr * rpr > rpr ? elems / cols / rpr * rpr : rpr;
}

/* MAXV for spans of up to elems elements moved by threads threads: their
 * vectors and one either side. */
template <typename T> __host__ __device__ constexpr int kb_span_maxv(int threads, int elems)
{
    return (elems / kb_vec_width<T>() + 2 + threads - 1) / threads;
}

/* Block blockIdx.x's span: rows [r0, r0 + nrows) of cols elements (span_rows
 * a block), the elements [e0, e0 + n) of the matrix, moved as nvec vectors
 * from element e0 - mis. */
struct kb_span {
    int64_t r0, e0, n;
    int nrows, mis, nvec;
};
template <typename T> KB_DEV kb_span kb_span_of(int64_t rows, int64_t cols, int span_rows)
{
    constexpr int W = kb_vec_width<T>();
    kb_span s;
    s.r0 = (int64_t)blockIdx.x * span_rows;
    s.nrows = (int)(rows - s.r0 < span_rows ? rows - s.r0 : span_rows);
    s.e0 = s.r0 * cols;
    s.n = (int64_t)s.nrows * cols;
    s.mis = (int)(s.e0 % W);
    s.nvec = (int)((s.mis + s.n + W - 1) / W);
    return s;
}

/* The tile kernels' blocks (softmax's and layernorm's short-row paths):
 * KB_TILE_THREADS threads, G lanes a row, up to KB_TILE_PER_LANE elements a
 * lane (rows of up to 8 G elements), a block's span at most KB_TILE_ELEMS
 * elements: 4 rounds of the longest rows (32 KB of fp32), shorter rows fill
 * it with more rounds. */
#define KB_TILE_THREADS 256
#define KB_TILE_PER_LANE 8
#define KB_TILE_ELEMS (KB_TILE_THREADS * 4 * KB_TILE_PER_LANE)

/* The thread-row kernels' blocks (the short-row paths' rows of up to 40
 * elements off 16-byte boundaries, a thread a row): KB_TROW_THREADS rows a
 * block, a kernel for rows of NPL - KB_TROW_STEP + 1 .. NPL elements. */
#define KB_TROW_THREADS 256
#define KB_TROW_STEP 8

/* Whether slot i of a thread-row kernel's NPL is in a row of n elements: the
 * first NPL - KB_TROW_STEP always (a constant), the last KB_TROW_STEP by n
 * (the same for the whole block). */
template <int NPL> KB_DEV bool kb_trow_in(int i, int n)
{
    return i < NPL - KB_TROW_STEP || i < n;
}

/* Span sp of x into tile: every thread's loads are issued before the first is
 * stored, so MAXV of them fly at once. I is the type of the offsets within
 * the span: int64_t (the default kernels', as measured), or int (a span is at
 * most MAXV THREADS W elements): then a thread's vectors are addressed from
 * its first, THREADS W elements apart (an immediate offset each), and
 * checked in 32 bits (the 16-bit thread-row word kernel's). */
template <typename T, int THREADS, int MAXV, typename I = int64_t>
KB_DEV void kb_span_in(T *tile, const T *__restrict__ x, const kb_span &sp)
{
    constexpr int W = kb_vec_width<T>();
    constexpr bool NARROW = sizeof(I) == 4;
    const T *xs = x + (sp.e0 - sp.mis);
    const int nvec = sp.nvec, mis = sp.mis;
    const I n = (I)sp.n;
    const T *xt = xs + (NARROW ? (int64_t)threadIdx.x * W : 0);
    /* vector k of the thread: its index, its first element from e0, its address */
    const auto vec = [&](int k) { return (int)threadIdx.x + k * THREADS; };
    const auto first = [&](int k) { return (I)vec(k) * W - mis; };
    const auto at = [&](int k) {
        return NARROW ? xt + k * THREADS * W : xs + (int64_t)vec(k) * W;
    };
    uint4 r[MAXV];
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
        const I a = first(k);
        r[k] = vec(k) < nvec && a >= 0 && a + W <= n ? kb_ld128(at(k)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int k = 0; k < MAXV; k++) {
        const int v = vec(k);
        const I a = first(k);
        if (v >= nvec)
            continue;
        if (a >= 0 && a + W <= n) {
            *reinterpret_cast<uint4 *>(&tile[v * W]) = r[k];
        } else {
            for (int i = 0; i < W; i++)
                if (a + i >= 0 && a + i < n)
                    tile[v * W + i] = at(k)[i];
        }
    }
}

/* Span sp back from tile to y, as kb_span_in brought it (I as there). */
template <typename T, int THREADS, typename I = int64_t>
KB_DEV void kb_span_out(T *__restrict__ y, const T *tile, const kb_span &sp)
{
    constexpr int W = kb_vec_width<T>();
    T *ys = y + (sp.e0 - sp.mis);
    const int nvec = sp.nvec, mis = sp.mis;
    const I n = (I)sp.n;
    for (int v = (int)threadIdx.x; v < nvec; v += THREADS) {
        const I a = (I)v * W - mis;
        if (a >= 0 && a + W <= n) {
            kb_st128(ys + (int64_t)v * W, *reinterpret_cast<const uint4 *>(&tile[v * W]));
        } else {
            for (int i = 0; i < W; i++)
                if (a + i >= 0 && a + i < n)
                    ys[(int64_t)v * W + i] = tile[v * W + i];
        }
    }
}

/* A vector of kb_vec_width<T>() copies of -infinity in T. */
template <typename T> KB_DEV uint4 kb_vec_neg_inf(void)
{
    unsigned w;
    if constexpr (std::is_same<T, float>::value)
        w = 0xff800000u;
    else if constexpr (std::is_same<T, __half>::value)
        w = 0xfc00fc00u;
    else
        w = 0xff80ff80u;
    return make_uint4(w, w, w, w);
}

/* The two 16-bit elements of word w (low half first) as floats. */
template <typename T> KB_DEV float2 kb_unpack2(unsigned w)
{
    if constexpr (std::is_same<T, __half>::value) {
        __half2 h;
        memcpy(&h, &w, sizeof h);
        return __half22float2(h);
    } else {
        /* bf16 is the top half of an fp32: widening is a shift or a mask. */
        return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
    }
}

/* a, b rounded to T and packed into one word, a in the low half. */
template <typename T> KB_DEV unsigned kb_pack2(float a, float b)
{
    unsigned w;
    if constexpr (std::is_same<T, __half>::value) {
        __half2 h = __floats2half2_rn(a, b);
        memcpy(&w, &h, sizeof w);
    } else {
        __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
        memcpy(&w, &h, sizeof w);
    }
    return w;
}

/* f[0..W) = the elements of vector v, W = kb_vec_width<T>(). */
template <typename T> KB_DEV void kb_unpack(uint4 v, float *f)
{
    if constexpr (std::is_same<T, float>::value) {
        f[0] = __uint_as_float(v.x);
        f[1] = __uint_as_float(v.y);
        f[2] = __uint_as_float(v.z);
        f[3] = __uint_as_float(v.w);
    } else {
        float2 a = kb_unpack2<T>(v.x), b = kb_unpack2<T>(v.y);
        float2 c = kb_unpack2<T>(v.z), d = kb_unpack2<T>(v.w);
        f[0] = a.x;
        f[1] = a.y;
        f[2] = b.x;
        f[3] = b.y;
        f[4] = c.x;
        f[5] = c.y;
        f[6] = d.x;
        f[7] = d.y;
    }
}

/* The vector holding f[0..W) rounded to T, W = kb_vec_width<T>(). */
template <typename T> KB_DEV uint4 kb_pack(const float *f)
{
    if constexpr (std::is_same<T, float>::value)
        return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
                          __float_as_uint(f[3]));
    else
        return make_uint4(kb_pack2<T>(f[0], f[1]), kb_pack2<T>(f[2], f[3]),
                          kb_pack2<T>(f[4], f[5]), kb_pack2<T>(f[6], f[7]));
}

/* ---- reductions of a float ------------------------------------------------------ */

/* Max / sum over aligned groups of WIDTH lanes (a power of two <= 32): every
 * lane gets its group's result. All 32 lanes of the warp must call it. */
template <int WIDTH = 32> KB_DEV float kb_warp_max(float v)
{
#pragma unroll
    for (int o = WIDTH / 2; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(KB_FULL_MASK, v, o));
    return v;
}

template <int WIDTH = 32> KB_DEV float kb_warp_sum(float v)
{
#pragma unroll
    for (int o = WIDTH / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(KB_FULL_MASK, v, o);
    return v;
}

/* The warp reductions as function objects, for kb_block_reduce. */
struct kb_warp_max_op {
    KB_DEV float operator()(float v) const { return kb_warp_max(v); }
};
struct kb_warp_sum_op {
    KB_DEV float operator()(float v) const { return kb_warp_sum(v); }
};

/* Reduces v over a block of THREADS threads (a multiple of 32, <= 1024) with
 * the warp reduction WARP (a function object), empty warps contributing
 * `empty`; every thread gets the result. red: __shared__ V[THREADS / 32]. Two
 * barriers: red may be reused as soon as it returns. */
template <int THREADS, typename V, typename WARP>
KB_DEV V kb_block_reduce(V v, V *red, V empty, WARP warp)
{
    constexpr int NW = THREADS / 32;
    const int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    v = warp(v);
    if (lane == 0)
        red[wid] = v;
    __syncthreads();
    v = lane < NW ? red[lane] : empty;
    v = warp(v);
    __syncthreads();
    return v;
}

/* Max / sum over a block of THREADS threads (a multiple of 32, <= 1024);
 * every thread gets the result. red: __shared__ float[THREADS / 32]. Two
 * barriers: red may be reused as soon as it returns. */
template <int THREADS> KB_DEV float kb_block_max(float v, float *red)
{
    return kb_block_reduce<THREADS>(v, red, kb_neg_inf(), kb_warp_max_op());
}

template <int THREADS> KB_DEV float kb_block_sum(float v, float *red)
{
    return kb_block_reduce<THREADS>(v, red, 0.0f, kb_warp_sum_op());
}

/* ---- the online normaliser ------------------------------------------------------- */

/* A partial softmax state: x = m, the max of the elements seen (-inf when
 * none), y = d, the sum of exp(v - m) over them (0 when none). */
KB_DEV float2 kb_online_empty(void)
{
    return make_float2(kb_neg_inf(), 0.0f);
}

/* The state of the union of two disjoint sets of elements:
 * m = max(ma, mb), d = da * exp(ma - m) + db * exp(mb - m). An empty side
 * (m = -inf) contributes 0; two empty sides give an empty state, not NaN. */
KB_DEV float2 kb_online_merge(float2 a, float2 b)
{
    const float m = fmaxf(a.x, b.x);
    const float sa = a.x == m ? 1.0f : kb_exp2((a.x - m) * KB_LOG2E);
    const float sb = b.x == m ? 1.0f : kb_exp2((b.x - m) * KB_LOG2E);
    return make_float2(m, a.y * sa + b.y * sb);
}

/* Merges the states of aligned groups of WIDTH lanes; every lane gets its
 * group's state. All 32 lanes must call it. The merge order is the same in
 * every group, so equal inputs give bit-equal results. */
template <int WIDTH = 32> KB_DEV float2 kb_warp_online(float2 s)
{
#pragma unroll
    for (int o = WIDTH / 2; o > 0; o >>= 1) {
        float2 t;
        t.x = __shfl_xor_sync(KB_FULL_MASK, s.x, o);
        t.y = __shfl_xor_sync(KB_FULL_MASK, s.y, o);
        s = kb_online_merge(s, t);
    }
    return s;
}

/* kb_warp_online as a function object, for kb_block_reduce. */
struct kb_warp_online_op {
    KB_DEV float2 operator()(float2 s) const { return kb_warp_online(s); }
};

/* Merges the states of a block of THREADS threads; every thread gets the
 * block's state. red: __shared__ float2[THREADS / 32]. Two barriers: red may be
 * reused as soon as it returns. */
template <int THREADS> KB_DEV float2 kb_block_online(float2 s, float2 *red)
{
    return kb_block_reduce<THREADS>(s, red, kb_online_empty(), kb_warp_online_op());
}

/* Adds one finite element v to state s. */
KB_DEV float2 kb_online_add(float2 s, float v)
{
    const float m = fmaxf(s.x, v);
    /* s.x = -inf (empty) gives exp2(-inf) = 0. */
    return make_float2(m, s.y * kb_exp2((s.x - m) * KB_LOG2E) + kb_exp2((v - m) * KB_LOG2E));
}

#endif

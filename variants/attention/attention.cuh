/* attention.cuh - what the attention variants share: the shape as the
 * launchers read it from kb_args (axis order of src/kernels/attention.c), the
 * grid sizing of grid-stride kernels, the three launches of the rungs that
 * materialise S, one output of P V as those rungs' last stage computes it,
 * and the sum and max over a small group of lanes. Inline host and device
 * code only. */
#ifndef KB_ATTENTION_CUH
#define KB_ATTENTION_CUH

#include <math.h>

#include "kernels/device.cuh"
#include "kernels/op.h"

/* The operator's axes, in the order of src/kernels/attention.c. */
enum { ATT_BATCH, ATT_HEADS, ATT_SEQ, ATT_DIM, ATT_CAUSAL };

/* One attention problem: bh independent (batch, head) slices of seq x dim. */
typedef struct att_shape {
    int64_t bh;  /* batch * heads */
    int64_t s;   /* sequence length: query rows and keys per slice */
    int d;       /* head dimension */
    int causal;  /* 1: row i sees keys 0..i */
    float scale; /* 1 / sqrt(d) */
} att_shape;

static inline att_shape att_shape_of(const kb_args *a)
{
    att_shape sh;
    sh.bh = a->shape[ATT_BATCH] * a->shape[ATT_HEADS];
    sh.s = a->shape[ATT_SEQ];
    sh.d = (int)a->shape[ATT_DIM];
    sh.causal = (int)a->shape[ATT_CAUSAL];
    sh.scale = (float)(1.0 / sqrt((double)sh.d));
    return sh;
}

/* Keys query row i of a slice attends to. */
static __host__ __device__ __forceinline__ int64_t att_keys(const att_shape &sh, int64_t i)
{
    return sh.causal ? i + 1 : sh.s;
}

/* Output t of query row i of slice b in O = P V, P the fp32 weights in place
 * of S: the sum over the row's keys of P[b][i][j] v[b][j][t], one thread's
 * dot product down a column of V. */
template <typename T>
static __device__ __forceinline__ float att_pv_dot(const float *__restrict__ P,
                                                   const T *__restrict__ v, const att_shape &sh,
                                                   int64_t b, int64_t i, int64_t t)
{
    const int64_t s = sh.s, d = sh.d;
    const float *p = P + (b * s + i) * s;
    const T *vb = v + b * s * d + t;
    const int64_t keys = att_keys(sh, i);
    float acc = 0.0f;
    for (int64_t j = 0; j < keys; j++)
        acc += p[j] * kb_to_float(vb[j * d]);
    return acc;
}

/* v summed (or maxed) over the N consecutive lanes of an aligned group
 * (N = 4: the quad of lanes that holds one row of an mma.sync or wgmma
 * accumulator), every lane of the group getting the result; the partners are
 * lane ^ 1, then lane ^ 2, ... */
template <int N> static __device__ __forceinline__ float att_lanes_sum(float v)
{
#pragma unroll
    for (int o = 1; o < N; o *= 2)
        v += __shfl_xor_sync(KB_FULL_MASK, v, o);
    return v;
}

template <int N> static __device__ __forceinline__ float att_lanes_max(float v)
{
#pragma unroll
    for (int o = 1; o < N; o *= 2)
        v = fmaxf(v, __shfl_xor_sync(KB_FULL_MASK, v, o));
    return v;
}

/* Blocks for a grid-stride loop over n items with `threads` per block: enough
 * to cover n, at most 2^31 - 1. */
static inline unsigned att_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 0x7fffffff ? 0x7fffffff : b);
}

/* One launch of a stage: kernel, name in the launch log, grid and block. */
template <typename K> struct att_stage {
    K kern;
    const char *name;
    kb_dim3 grid, block;
};

/* The launches of a rung that materialises S (fp32, a->scratch) on stream
 * st: scores (S = scale Q K^T from a->in[0], a->in[1]), softmax (P in place
 * of S), pv (O = P V from a->in[2] into a->out[0]), each noted in a->log, no
 * dynamic shared memory. Returns the first launch's error, later stages not
 * launched. */
template <typename T>
static cudaError_t att_launch_materialised(
    const kb_args *a, cudaStream_t st, const att_shape &sh,
    const att_stage<void (*)(const T *, const T *, float *, att_shape)> &scores,
    const att_stage<void (*)(float *, att_shape)> &softmax,
    const att_stage<void (*)(const float *, const T *, T *, att_shape)> &pv)
{
    float *S = (float *)a->scratch;
    cudaError_t e = kb_launch(a, st, scores.kern, scores.name, scores.grid, scores.block, 0,
                              (const T *)a->in[0], (const T *)a->in[1], S, sh);
    if (e == cudaSuccess)
        e = kb_launch(a, st, softmax.kern, softmax.name, softmax.grid, softmax.block, 0, S, sh);
    if (e == cudaSuccess)
        e = kb_launch(a, st, pv.kern, pv.name, pv.grid, pv.block, 0, (const float *)S,
                      (const T *)a->in[2], (T *)a->out[0], sh);
    return e;
}

#endif

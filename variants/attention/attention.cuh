/* attention.cuh - what the attention variants share: the shape as the
 * launchers read it from kb_args (axis order of src/kernels/attention.c), the
 * dtype dispatch of an extern "C" launcher to its template, and the grid
 * sizing of grid-stride kernels. Inline host and device code only. */
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

/* Blocks for a grid-stride loop over n items with `threads` per block: enough
 * to cover n, at most 2^31 - 1. */
static inline unsigned att_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 0x7fffffff ? 0x7fffffff : b);
}

#endif

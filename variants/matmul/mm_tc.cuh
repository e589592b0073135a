/* mm_tc.cuh - what the tensor-core rungs of matmul share: the shape as a
 * launcher reads it, the fused epilogue (bias + tanh GELU) and the store of an
 * accumulator pair into C.
 *
 * Axis order (src/kernels/matmul.c): m, n, k, epilogue. Buffers: in[0] = A,
 * M x K row-major; in[1] = B as N x K row-major (K-major: the layout both
 * tensor-core instructions read without a transpose); in[2] = bias, N
 * elements; out[0] = C, M x N row-major. */
#ifndef MM_TC_CUH
#define MM_TC_CUH

#include "kernels/device.cuh"

enum { MM_M, MM_N, MM_K, MM_EPILOGUE };

typedef struct mm_shape {
    int64_t m, n, k;
    int epilogue; /* 1: C = GELU(A B + bias) */
} mm_shape;

static inline mm_shape mm_shape_of(const kb_args *a)
{
    mm_shape sh;
    sh.m = a->shape[MM_M];
    sh.n = a->shape[MM_N];
    sh.k = a->shape[MM_K];
    sh.epilogue = (int)a->shape[MM_EPILOGUE];
    return sh;
}

/* sqrt(2 / pi) and 0.044715 sqrt(2 / pi): GELU(z) ~ 0.5 z (1 + tanh(z (G1 + G3 z^2))). */
#define MM_GELU_G1 0.7978845608f
#define MM_GELU_G3 0.0356774081f

/* Tanh GELU with the special-function unit's tanh.approx.f32 (relative error
 * ~2^-11, below bf16's and at fp16's rounding): 4 FMA-pipe instructions and one
 * MUFU.TANH per element, half the MUFU work of the exp2 + reciprocal form, since
 * in the fused epilogue of a product the MUFU is the cost. */
KB_DEV float mm_gelu(float z)
{
    const float u = z * fmaf(z * z, MM_GELU_G3, MM_GELU_G1);
    float th;
    asm("tanh.approx.f32 %0, %1;" : "=f"(th) : "f"(u));
    const float hz = 0.5f * z;
    return fmaf(hz, th, hz);
}

/* The bias of columns col and col + 1 (0 past n): one 4-byte load when both
 * exist and the pair is 4-byte aligned (n even, col even). */
template <typename T> KB_DEV float2 mm_bias2(const T *__restrict__ bias, int64_t col, int64_t n)
{
    if (col + 1 < n && !(n & 1))
        return kb_unpack2<T>(__ldg((const unsigned *)(bias + col)));
    return make_float2(col < n ? kb_to_float(bias[col]) : 0.0f,
                       col + 1 < n ? kb_to_float(bias[col + 1]) : 0.0f);
}

/* Stores the accumulator pair (v0, v1) at columns col, col + 1 of row crow
 * (n columns), as GELU(v + b) when EPI: one 4-byte store when both columns
 * exist and the pair is 4-byte aligned (n even), else element by element. */
template <typename T, bool EPI>
KB_DEV void mm_store2(T *__restrict__ crow, int64_t col, int64_t n, float v0, float v1, float2 b)
{
    if (EPI) {
        v0 = mm_gelu(v0 + b.x);
        v1 = mm_gelu(v1 + b.y);
    }
    if (col + 1 < n && !(n & 1)) {
        *(unsigned *)(crow + col) = kb_pack2<T>(v0, v1);
    } else {
        if (col < n)
            crow[col] = kb_from_float<T>(v0);
        if (col + 1 < n)
            crow[col + 1] = kb_from_float<T>(v1);
    }
}

#endif

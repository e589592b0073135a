/* matmul.cuh - what the matmul variants share: the shape as the launchers read
 * it from kb_args (axis order of src/kernels/matmul.c), the tanh GELU of the
 * epilogue as the kernels compute it, the tensor-core rungs' bias and pair
 * stores from the accumulator layout, the epilogue kernel that the CUDA-core
 * rungs run after their product, and the k check of the rungs that move rows
 * of A and B in 16-byte units. Inline host and device code, plus
 * the declaration of the epilogue's launcher (variants/matmul/epilogue.cu). */
#ifndef KB_MATMUL_CUH
#define KB_MATMUL_CUH

#include <stdio.h>

#include "kernels/device.cuh"
#include "kernels/op.h"

/* The operator's axes, in the order of src/kernels/matmul.c. */
enum { MM_M, MM_N, MM_K, MM_EPILOGUE };

/* One product: C (m x n) = A (m x k) B^T, B the n x k buffer. */
typedef struct mm_shape {
    int m, n, k;  /* each at most 2^24 (the axes' maximum) */
    int epilogue; /* 1: C = GELU(A B + bias) */
} mm_shape;

static inline mm_shape mm_shape_of(const kb_args *a)
{
    mm_shape sh;
    sh.m = (int)a->shape[MM_M];
    sh.n = (int)a->shape[MM_N];
    sh.k = (int)a->shape[MM_K];
    sh.epilogue = (int)a->shape[MM_EPILOGUE];
    return sh;
}

/* ceil(x / y) for positive x, y. */
static inline int64_t mm_div_up(int64_t x, int64_t y)
{
    return (x + y - 1) / y;
}

/* sqrt(2 / pi) and 0.044715 sqrt(2 / pi): GELU(z) ~ 0.5 z (1 + tanh(z (G1 + G3 z^2))). */
#define MM_GELU_G1 0.7978845608f
#define MM_GELU_G3 0.0356774081f

/* Tanh GELU 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) in fp32 with the
 * special-function unit's tanh.approx.f32 (relative error about 2^-11, the
 * allowance the check gives a hardware tanh): four FMA-pipe instructions and
 * one MUFU.TANH, half the MUFU work of the exp2 + reciprocal form. Every rung
 * computes it so. */
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
 * exist and the pair is 4-byte aligned (n even), else element by element
 * (the tensor-core rungs' stores from the accumulator layout). */
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

/* The epilogue as a kernel of its own: C = GELU(C + bias) in place, C read
 * back from global memory and written again (the DRAM round trip fusion
 * saves). The CUDA-core rungs call it after their product when
 * a->shape[MM_EPILOGUE] is 1; it notes its launch. Returns the launch's
 * error. */
extern "C" cudaError_t kb_matmul_epilogue(const kb_args *a, cudaStream_t s);

/* The launcher's tail for the CUDA-core rungs: e (the product's launch
 * error), or the epilogue's launch when the shape asks for it. */
static inline cudaError_t mm_then_epilogue(cudaError_t e, const kb_args *a, cudaStream_t s)
{
    if (e != cudaSuccess || !a->shape[MM_EPILOGUE])
        return e;
    return kb_matmul_epilogue(a, s);
}

/* The unsupported hook's check for a rung that moves rows of A and B (16-bit
 * elements) in 16-byte units: 0 when k is a multiple of 8, else 1 with
 * "<how>: k=<k> is not a multiple of 8" in why. */
static inline int mm_unsupported_k8(const int64_t *shape, const char *how, char *why,
                                    size_t why_size)
{
    if (shape[MM_K] % 8 == 0)
        return 0;
    snprintf(why, why_size, "%s: k=%lld is not a multiple of 8", how, (long long)shape[MM_K]);
    return 1;
}

#endif

/* matmul.cuh - what the matmul variants share: the shape as the launchers read
 * it from kb_args (axis order of src/kernels/matmul.c), the tanh GELU of the
 * epilogue as the kernels compute it, and the epilogue kernel that the
 * CUDA-core rungs run after their product. Inline host and device code, plus
 * the declaration of the epilogue's launcher (variants/matmul/epilogue.cu). */
#ifndef KB_MATMUL_CUH
#define KB_MATMUL_CUH

#include "kernels/device.cuh"
#include "kernels/layernorm_ref.h"
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

/* Tanh GELU 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) in fp32, as
 * z / (1 + 2^(z (T1 + T3 z^2))) (layernorm_ref.h has the derivation): one
 * MUFU.EX2 and a division; relative accuracy kept in the negative tail. */
KB_DEV float mm_gelu(float z)
{
    const float p = fmaf(z * z, KB_LN_TANH_T3, KB_LN_TANH_T1);
    return __fdividef(z, 1.0f + kb_exp2(z * p));
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

#endif

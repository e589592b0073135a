/* kbench/variant.h - the public, versioned C ABI of a kbench variant kept in a
 * file of its own (`kbench run softmax --variants fused,./mine.cu`).
 *
 * kbench compiles such a file with the CUDA toolkit's nvcc into a shared
 * object (cached by a hash of the source, this header, the flags and the nvcc
 * version), loads it in each case's child process and runs it exactly like a
 * built-in variant: the check against the fp64 reference, the timed samples,
 * the counters, the store. The result's variant name is the file's stem
 * (mine.cu -> "mine"). kbench carries this header inside its binary and puts
 * it on nvcc's include path itself: `#include <kbench/variant.h>` needs no
 * kbench source tree. `kbench new OP NAME` writes a correct starting file.
 *
 * What the file exports (C linkage; the declarations below give it, so define
 * each after including this header):
 *
 *   const int kbench_variant_abi = KBENCH_VARIANT_ABI;     required
 *       the ABI version the file was written against; kbench refuses a
 *       version it does not know.
 *   const char kbench_operator[] = "softmax";              required
 *       the operator the file implements: softmax, layernorm, attention or
 *       matmul (see "Operators" below).
 *   const char kbench_summary[] = "one line: the idea";    required
 *   const unsigned kbench_dtypes = KBENCH_DT(KBENCH_FP32) | ...;   required
 *       the element types the launcher handles; kbench skips the others,
 *       saying so.
 *   cudaError_t kbench_launch(const kbench_args *a, cudaStream_t s);  required
 *       launches the kernels on stream s and returns cudaGetLastError();
 *       nothing else: no allocation, no synchronisation, no host copies
 *       (it is called between the timing events, and again for the checked
 *       launch, the warm-up and the counter pass).
 *   int kbench_unsupported(const int64_t *shape, int naxes, kbench_dtype d,
 *                          char *why, size_t why_size);   optional
 *       nonzero when the launcher cannot run this shape, with the reason
 *       written into why (the case is recorded as skipped with it).
 *   size_t kbench_scratch_bytes(const int64_t *shape, int naxes, kbench_dtype d);
 *       optional: device scratch the launcher needs beyond the operator's
 *       buffers; kbench allocates it once per case and passes it in
 *       a->scratch (a->scratch_bytes bytes). Without it a->scratch is NULL.
 *
 * Inputs are fresh random data every case and outputs are poisoned before
 * the checked launch, so an output element the kernels do not write fails the
 * check. A kernel that crashes, hangs or reads out of bounds fails its case
 * only (each case runs in a child process of its own).
 *
 * Operators: the axes in a->shape[] order, and the buffers. Element type is
 * a->dtype unless said; every tensor is contiguous, row-major.
 *
 *   softmax    axes rows, cols.
 *              in[0] = x (rows x cols); out[0] = y (rows x cols):
 *              y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r).
 *   layernorm  axes rows, cols, gelu, stats, mean.
 *              in[0] = x (rows x cols), in[1] = gamma, in[2] = beta,
 *              in[3] = b (cols each); out[0] = y (rows x cols);
 *              out[1] = mean, out[2] = rstd (rows floats each, always fp32;
 *              NULL when stats = 0):
 *              y = GELU((x - mean) * rstd * gamma + beta + b) per row, mean
 *              and the biased variance var of the row, rstd =
 *              1 / sqrt(var + 1e-5); gelu = 0: exact, 0.5 z (1 + erf(z / sqrt 2));
 *              gelu = 1: 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))).
 *              The mean axis only centres the generated inputs (x = mean +
 *              U[-1, 1)): a one-pass variance fails there in fp32.
 *   attention  axes batch, heads, seq, dim, causal.
 *              in[0] = Q, in[1] = K, in[2] = V; out[0] = O, each
 *              [batch][heads][seq][dim]:
 *              O = softmax(Q K^T / sqrt(dim)) V per (batch, head); with
 *              causal = 1 query row i sees keys 0..i only.
 *   matmul     axes m, n, k, epilogue.
 *              in[0] = A (m x k), in[1] = B stored n x k (each row of B is a
 *              column of the product's right operand), in[2] = bias (n);
 *              out[0] = C (m x n):
 *              C = A B^T (epilogue = 0), or GELU(A B^T + bias) with the exact
 *              GELU (epilogue = 1).
 *
 * Arithmetic: accumulate in fp32 whatever the element type; the check's
 * tolerances are those of the built-in variants.
 *
 * Changing this ABI: any change to kbench_args, the exported symbols or the
 * operators' buffers raises KBENCH_VARIANT_ABI. */
#ifndef KBENCH_VARIANT_H
#define KBENCH_VARIANT_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

/* The version of this ABI. */
#define KBENCH_VARIANT_ABI 1

/* Element types (the values are part of the ABI). */
typedef enum kbench_dtype {
    KBENCH_FP32 = 0,
    KBENCH_FP16 = 1, /* IEEE binary16, __half */
    KBENCH_BF16 = 2, /* bfloat16, __nv_bfloat16 */
} kbench_dtype;

/* A dtype's bit in kbench_dtypes. */
#define KBENCH_DT(d) (1u << (d))
#define KBENCH_DT_ALL (KBENCH_DT(KBENCH_FP32) | KBENCH_DT(KBENCH_FP16) | KBENCH_DT(KBENCH_BF16))

/* Room in kbench_args' arrays. */
#define KBENCH_MAX_AXES 6
#define KBENCH_MAX_BUFS 4

/* Everything a launcher gets; owned by kbench, valid during the call. */
typedef struct kbench_args {
    int abi;                         /* the KBENCH_VARIANT_ABI kbench speaks */
    kbench_dtype dtype;              /* element type of the tensors */
    int naxes;                       /* the operator's axes */
    const int64_t *shape;            /* shape[0 .. naxes), in the operator's order */
    const void *in[KBENCH_MAX_BUFS]; /* device inputs (see "Operators") */
    void *out[KBENCH_MAX_BUFS];      /* device outputs */
    void *scratch;                   /* device scratch of kbench_scratch_bytes, or NULL */
    size_t scratch_bytes;
} kbench_args;

typedef cudaError_t (*kbench_launch_fn)(const kbench_args *a, cudaStream_t s);
typedef int (*kbench_unsupported_fn)(const int64_t *shape, int naxes, kbench_dtype d, char *why,
                                     size_t why_size);
typedef size_t (*kbench_scratch_fn)(const int64_t *shape, int naxes, kbench_dtype d);

#ifdef __cplusplus
extern "C" {
#endif

/* The file's exports (see above). */
extern const int kbench_variant_abi;
extern const char kbench_operator[];
extern const char kbench_summary[];
extern const unsigned kbench_dtypes;
cudaError_t kbench_launch(const kbench_args *a, cudaStream_t s);
int kbench_unsupported(const int64_t *shape, int naxes, kbench_dtype d, char *why,
                       size_t why_size);
size_t kbench_scratch_bytes(const int64_t *shape, int naxes, kbench_dtype d);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* Element i of a tensor of dtype d as a float, and a float stored into one:
 * for kernels that take the dtype at run time (a template per element type is
 * faster). */
static __device__ __forceinline__ float kbench_load(const void *p, kbench_dtype d, int64_t i)
{
    switch (d) {
    case KBENCH_FP16:
        return __half2float(((const __half *)p)[i]);
    case KBENCH_BF16:
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default:
        return ((const float *)p)[i];
    }
}

static __device__ __forceinline__ void kbench_store(void *p, kbench_dtype d, int64_t i, float v)
{
    switch (d) {
    case KBENCH_FP16:
        ((__half *)p)[i] = __float2half_rn(v);
        break;
    case KBENCH_BF16:
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
        break;
    default:
        ((float *)p)[i] = v;
    }
}
#endif

#endif

/* cublas.cu - the vendor row: cuBLASLt's matrix product, checked, timed and
 * profiled like every other rung.
 *
 * Idea: the ladder's rungs are kernels a reader can follow; this row is the
 * library a user would call instead, measured by the same harness on the same
 * inputs, so that each rung's figure has the number it competes with beside it.
 *
 * The call: cuBLASLt is column-major. kbench's C (M x N row-major) is the
 * column-major N x M matrix C^T, and C^T = B A^T: the buffer B (N x K
 * row-major) is the column-major K x N matrix B^T, taken transposed
 * (op = T) to give N x K; the buffer A (M x K row-major) is the column-major
 * K x M matrix A^T, taken as it is (op = N). So cublasLtMatmul runs the "TN"
 * product with m = N, n = M, k = K, lda = ldb = K, ldc = N, the B buffer as
 * its first operand and the A buffer as its second. Compute type
 * CUBLAS_COMPUTE_32F with fp32 scale (no TF32: fp32 products are fp32 FMAs),
 * inputs and output in the operator's dtype. With epilogue=1 the epilogue is
 * CUBLASLT_EPILOGUE_GELU_BIAS with the bias in the dtype: a bias per row of
 * the column-major result, which is per column n of kbench's C.
 *
 * prepare (in the case's child, once per case) creates the handle (once per
 * process), the operation and layout descriptors, and asks the heuristics for
 * the best algorithm within the workspace; when they offer none, the case is
 * skipped with that reason. The workspace is the variant's scratch
 * (MM_CUBLAS_WORKSPACE bytes). The launcher calls cublasLtMatmul and nothing
 * else; cuBLAS's kernels are not kbench's, so it notes no launches (the
 * harness traces them). What prepare built is released at exit.
 *
 * Expected on the H200 (cuBLAS through PyTorch, GPU.md): bf16 about 718
 * TFLOP/s at 4096^3, 680-775 at 8192^3; fp32 about 51 TFLOP/s.
 * Measured on the H200 (results/h200/matmul.json, kbench d7d3a0e,
 * 2026-12-01): bf16 723.3 TFLOP/s at 4096^3 and 744.7 at 8192^3 (under the
 * power cap: 1680 and 1515 MHz), 756.6 and 707.3 in an earlier run of the
 * day; fp32 50.8 and 51.2 (no TF32). epilogue=1 (GELU_BIAS) costs it 1.5-3%.
 * At m=4095, n=4097, k=1000 it runs 96.8 TFLOP/s, 0.43x wgmma: rows of odd
 * length are not 16-byte aligned, and the heuristic falls back to a
 * Turing-generation kernel (cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_
 * tn_align1). At 4096^3 it runs nvjet_sm90_tst_256x128_64x4_1x2 (256 x 128
 * tiles, four stages, clusters of two). At m=16 it is the fastest row (35.2
 * us, 3.8 TB/s of B). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "matmul.cuh"

/* The workspace handed to cuBLASLt: 32 MiB, what NVIDIA recommends for
 * Hopper. */
#define MM_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* What the last failed launch said (a cudaError_t cannot carry cuBLAS's
 * status); "" when it has nothing to add. */
static char last_failure[256];

extern "C" const char *kb_matmul_cublas_last_error(void)
{
    return last_failure;
}

extern "C" size_t kb_matmul_cublas_scratch(const int64_t *shape, kb_dtype d)
{
    (void)shape;
    (void)d;
    return MM_CUBLAS_WORKSPACE;
}

/* Everything prepare builds for the case; lives until the next prepare or
 * the end of the process. */
typedef struct lt_case {
    cublasLtHandle_t handle;
    int device; /* the CUDA device the handle belongs to */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc; /* the B buffer, the A buffer, C */
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulAlgo_t algo;
    void *workspace;
    size_t workspace_bytes;
    kb_case_key key; /* the case the algorithm is for (zero: none) */
} lt_case;

static lt_case L;

/* Writes "<what> failed: <status name>: <status text>" into why. */
static void lt_explain(cublasStatus_t st, const char *what, char *why, size_t n)
{
    snprintf(why, n, "%s failed: %s: %s", what, cublasLtGetStatusName(st),
             cublasLtGetStatusString(st));
}

/* Destroys the case's descriptors; keeps the handle. */
static void case_release(void)
{
    /* nothing to do about a failure to destroy a descriptor */
    if (L.pref)
        cublasLtMatmulPreferenceDestroy(L.pref);
    if (L.lc)
        cublasLtMatrixLayoutDestroy(L.lc);
    if (L.lb)
        cublasLtMatrixLayoutDestroy(L.lb);
    if (L.la)
        cublasLtMatrixLayoutDestroy(L.la);
    if (L.op)
        cublasLtMatmulDescDestroy(L.op);
    L.pref = NULL;
    L.lc = L.lb = L.la = NULL;
    L.op = NULL;
    memset(&L.key, 0, sizeof L.key);
}

/* At exit, the last case's descriptors and the handle go, so that a process
 * that ran cases ends with nothing of cuBLASLt's allocated. Registered after
 * the CUDA runtime's own exit handler, so it runs first. */
static void case_at_exit(void)
{
    case_release();
    if (L.handle)
        cublasLtDestroy(L.handle);
    L.handle = NULL;
}

/* The handle for the current device, created once. Returns 0, or -1 with
 * why. */
static int case_handle(char *why, size_t n)
{
    int dev = 0;
    if (kb_current_device(&dev, why, n) != 0)
        return -1;
    if (L.handle && L.device == dev)
        return 0;
    if (L.handle)
        cublasLtDestroy(L.handle); /* another device's: nothing to do about a failure here */
    L.handle = NULL;
    cublasStatus_t st = cublasLtCreate(&L.handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        L.handle = NULL;
        lt_explain(st, "cublasLtCreate", why, n);
        return -1;
    }
    L.device = dev;
    static int at_exit;
    if (!at_exit && atexit(case_at_exit) == 0)
        at_exit = 1;
    return 0;
}

static cudaDataType_t lt_type(kb_dtype d)
{
    return d == KB_FP32 ? CUDA_R_32F : d == KB_FP16 ? CUDA_R_16F : CUDA_R_16BF;
}

/* One cuBLASLt call of prepare: on failure writes why and returns the
 * status. */
#define LT_TRY(call)                                                                     \
    do {                                                                                 \
        cublasStatus_t st_ = (call);                                                     \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                              \
            lt_explain(st_, #call, why, why_size);                                       \
            return st_ == CUBLAS_STATUS_NOT_SUPPORTED ? 1 : -1;                          \
        }                                                                                \
    } while (0)

/* The descriptors of the case: the TN product and its epilogue. */
static int build(const kb_args *a, char *why, size_t why_size)
{
    const mm_shape sh = mm_shape_of(a);
    const cudaDataType_t t = lt_type(a->dtype);
    const cublasOperation_t trans = CUBLAS_OP_T, notrans = CUBLAS_OP_N;
    LT_TRY(cublasLtMatmulDescCreate(&L.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_TRY(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans,
                                          sizeof trans));
    LT_TRY(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_TRANSB, &notrans,
                                          sizeof notrans));
    if (sh.epilogue) {
        const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
        const void *bias = a->in[2];
        const cudaDataType_t bias_type = t;
        LT_TRY(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                              sizeof epi));
        LT_TRY(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                              sizeof bias));
        LT_TRY(cublasLtMatmulDescSetAttribute(L.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                              &bias_type, sizeof bias_type));
    }
    /* column-major: the B buffer is K x N (ld K), the A buffer K x M (ld K),
     * C is N x M (ld N) */
    LT_TRY(cublasLtMatrixLayoutCreate(&L.la, t, (uint64_t)sh.k, (uint64_t)sh.n, sh.k));
    LT_TRY(cublasLtMatrixLayoutCreate(&L.lb, t, (uint64_t)sh.k, (uint64_t)sh.m, sh.k));
    LT_TRY(cublasLtMatrixLayoutCreate(&L.lc, t, (uint64_t)sh.n, (uint64_t)sh.m, sh.n));
    LT_TRY(cublasLtMatmulPreferenceCreate(&L.pref));
    LT_TRY(cublasLtMatmulPreferenceSetAttribute(L.pref,
                                                CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &L.workspace_bytes, sizeof L.workspace_bytes));
    cublasLtMatmulHeuristicResult_t best;
    int found = 0;
    memset(&best, 0, sizeof best);
    LT_TRY(cublasLtMatmulAlgoGetHeuristic(L.handle, L.op, L.la, L.lb, L.lc, L.lc, L.pref, 1,
                                          &best, &found));
    if (found < 1) {
        snprintf(why, why_size,
                 "cuBLASLt's heuristics offer no algorithm for m=%d n=%d k=%d %s%s", sh.m, sh.n,
                 sh.k, kb_dtype_name(a->dtype), sh.epilogue ? " with the GELU_BIAS epilogue" : "");
        return 1;
    }
    L.algo = best.algo;
    return 0;
}

extern "C" int kb_matmul_cublas_prepare(const kb_args *a, char *why, size_t why_size)
{
    case_release();
    int rc = case_handle(why, why_size);
    if (rc != 0)
        return rc;
    L.workspace = a->scratch;
    L.workspace_bytes = a->scratch ? a->scratch_bytes : 0;
    if ((rc = build(a, why, why_size)) != 0)
        return rc;
    kb_case_key_of(a, MM_EPILOGUE + 1, &L.key);
    return 0;
}

/* Runs the product prepare planned, on stream s. The plan is bound to the
 * case's buffers, shape and dtype: a call with others is refused
 * (cudaErrorInvalidValue), as is a call before prepare. A cuBLAS failure
 * returns the pending CUDA error, or cudaErrorUnknown, with cuBLAS's status in
 * kb_matmul_cublas_last_error(). */
extern "C" cudaError_t kb_matmul_cublas(const kb_args *a, cudaStream_t s)
{
    last_failure[0] = '\0';
    cudaError_t ce = kb_case_key_check(&L.key, a, "cublas", last_failure, sizeof last_failure);
    if (ce != cudaSuccess)
        return ce;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st =
        cublasLtMatmul(L.handle, L.op, &one, a->in[1], L.la, a->in[0], L.lb, &zero, a->out[0],
                       L.lc, a->out[0], L.lc, &L.algo, L.workspace, L.workspace_bytes, s);
    if (st != CUBLAS_STATUS_SUCCESS) {
        lt_explain(st, "cublas: cublasLtMatmul", last_failure, sizeof last_failure);
        return kb_library_error();
    }
    return cudaGetLastError();
}

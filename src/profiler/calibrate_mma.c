/* calibrate_mma.c - the matrix-unit and fp32 ceilings (see calibrate_mma.h):
 * two 8192^3 products through cuBLAS, timed with events. */
#include "calibrate_mma.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/fill.h"
#include "profiler/device.h"

#define MMA_N 8192
#define MMA_WARMUP 3
#define MMA_REPS 10

/* Records a cuBLAS failure with its status string and ends the function. */
#define KB_CUBLAS(call)                                                                 \
    do {                                                                                \
        cublasStatus_t cs_ = (call);                                                    \
        if (cs_ != CUBLAS_STATUS_SUCCESS) {                                             \
            st = kb_fail(e, KB_EENV, "%s failed: %s at %s:%d", #call,                   \
                         cublasGetStatusString(cs_), __FILE__, __LINE__);               \
            goto done;                                                                  \
        }                                                                               \
    } while (0)

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median of n event-timed runs, in ms. */
static float median_ms(float *ms, int n)
{
    qsort(ms, (size_t)n, sizeof ms[0], cmp_float);
    return n % 2 ? ms[n / 2] : 0.5f * (ms[n / 2 - 1] + ms[n / 2]);
}

/* Times MMA_WARMUP + MMA_REPS runs of one product (bf16: cublasGemmEx; else
 * cublasSgemm) on stream s; *tflops from the median. */
static kb_status time_gemm(cublasHandle_t h, int bf16, const void *a, const void *b, void *c,
                           cudaEvent_t t0, cudaEvent_t t1, double *tflops, kb_err *e)
{
    kb_status st = KB_OK;
    const int n = MMA_N;
    const float one = 1.0f, zero = 0.0f;
    float ms[MMA_REPS];
    for (int rep = -MMA_WARMUP; rep < MMA_REPS; rep++) {
        KB_CUDA(cudaEventRecord(t0, 0));
        if (bf16)
            KB_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n,
                                   b, CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        else
            KB_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (const float *)a,
                                  n, (const float *)b, n, &zero, (float *)c, n));
        KB_CUDA(cudaEventRecord(t1, 0));
        KB_CUDA(cudaEventSynchronize(t1));
        if (rep >= 0)
            KB_CUDA(cudaEventElapsedTime(&ms[rep], t0, t1));
    }
    *tflops = 2.0 * (double)n * n * n / ((double)median_ms(ms, MMA_REPS) * 1e-3) / 1e12;
done:
    return st;
}

kb_status kb_calibrate_mma(double *bf16_tflops, double *fp32_tflops, kb_err *e)
{
    kb_status st = KB_OK;
    const size_t elems = (size_t)MMA_N * MMA_N;
    cublasHandle_t h = NULL;
    void *buf[3] = {NULL, NULL, NULL}; /* A, B, C: fp32-sized, the bf16 run uses the front */
    cudaEvent_t t0 = NULL, t1 = NULL;
    double bf = NAN, sp = NAN;
    *bf16_tflops = NAN;
    *fp32_tflops = NAN;
    for (int i = 0; i < 3; i++)
        KB_CUDA(cudaMalloc(&buf[i], elems * sizeof(float)));
    KB_CUDA(cudaEventCreate(&t0));
    KB_CUDA(cudaEventCreate(&t1));
    KB_CUBLAS(cublasCreate(&h));
    KB_CUBLAS(cublasSetStream(h, 0));

    /* bf16 in and out, fp32 accumulation: the tensor cores */
    KB_CUDA(kb_fill_uniform(buf[0], elems, KB_BF16, 0x6d6d61ull, 0.0f, 1.0f, 0));
    KB_CUDA(kb_fill_uniform(buf[1], elems, KB_BF16, 0x6d6d62ull, 0.0f, 1.0f, 0));
    KB_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    if ((st = time_gemm(h, 1, buf[0], buf[1], buf[2], t0, t1, &bf, e)) != KB_OK)
        goto done;

    /* fp32 with TF32 and other reduced-precision paths forbidden: the FMA units */
    KB_CUDA(kb_fill_uniform(buf[0], elems, KB_FP32, 0x6d6d63ull, 0.0f, 1.0f, 0));
    KB_CUDA(kb_fill_uniform(buf[1], elems, KB_FP32, 0x6d6d64ull, 0.0f, 1.0f, 0));
    KB_CUBLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    if ((st = time_gemm(h, 0, buf[0], buf[1], buf[2], t0, t1, &sp, e)) != KB_OK)
        goto done;
    KB_CUDA(cudaDeviceSynchronize());
    *bf16_tflops = bf;
    *fp32_tflops = sp;
done:
    if (h)
        cublasDestroy(h);
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    for (int i = 0; i < 3; i++)
        cudaFree(buf[i]);
    return st;
}

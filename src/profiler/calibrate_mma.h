/* calibrate_mma.h - the compute ceilings of the current GPU, measured through
 * cuBLAS: the matrix-unit (tensor core) rate of a large bf16 GEMM with fp32
 * accumulation, and the plain fp32 rate of a large SGEMM with tensor-core
 * math (TF32) forbidden. Compute-bound operators report their % of peak
 * against these. */
#ifndef KB_CALIBRATE_MMA_H
#define KB_CALIBRATE_MMA_H

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Measures, on the current CUDA device, the median TFLOP/s (2 M N K flops per
 * product) of ten 8192^3 products after warm-up, inputs uniform random from
 * kb_fill_uniform:
 *   *bf16_tflops: cublasGemmEx, A, B and C bf16, CUBLAS_COMPUTE_32F;
 *   *fp32_tflops: cublasSgemm under CUBLAS_PEDANTIC_MATH (no TF32).
 * Allocates and frees about 1.2 GB of device memory. Returns KB_OK, or
 * KB_EENV with the CUDA or cuBLAS error (cublasGetStatusString) in e; the
 * outputs are NAN unless KB_OK. */
kb_status kb_calibrate_mma(double *bf16_tflops, double *fp32_tflops, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif

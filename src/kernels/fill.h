/* fill.h - device-side input generators and output poisoning. Inputs are a pure
 * function of (seed, element index), drawn on the device so that multi-GB inputs
 * cost milliseconds; the checks copy back the rows they compare. */
#ifndef KB_FILL_H
#define KB_FILL_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* buf[i] = center + spread * u(seed, i), u uniform in [-1, 1), rounded to dtype d. */
cudaError_t kb_fill_uniform(void *buf, size_t n, kb_dtype d, uint64_t seed, float center,
                            float spread, cudaStream_t s);

/* Row-shifted data for row-wise operators: element (r, c) of a rows x cols
 * matrix is shift * u(seed ^ K, r) + spread * u(seed, r * cols + c): each row gets
 * its own offset in [-shift, shift), so kernels that skip the max subtraction or
 * use a cancelling variance formula are caught. */
cudaError_t kb_fill_rows(void *buf, int64_t rows, int64_t cols, kb_dtype d, uint64_t seed,
                         float spread, float shift, cudaStream_t s);

/* Sets every byte of n bytes to 0xFF: NaN in fp32, fp16 and bf16, so unwritten
 * outputs fail the check. */
cudaError_t kb_poison(void *buf, size_t nbytes, cudaStream_t s);

/* The generator's uniform draw, host side (same bits as the device's). */
float kb_uniform_host(uint64_t seed, uint64_t i);

#ifdef __cplusplus
}
#endif
#endif

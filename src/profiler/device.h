/* device.h - what the CUDA runtime says about the GPUs, and the one macro through
 * which profiler code checks CUDA runtime calls. */
#ifndef KB_DEVICE_H
#define KB_DEVICE_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "results/result.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks a CUDA runtime call; on failure records file, line, the call and the
 * CUDA error in e, sets st = KB_EENV and jumps to done. */
#define KB_CUDA(call)                                                                   \
    do {                                                                                \
        cudaError_t ce_ = (call);                                                       \
        if (ce_ != cudaSuccess) {                                                       \
            st = kb_fail(e, KB_EENV, "%s failed: %s (%s) at %s:%d", #call,              \
                         cudaGetErrorString(ce_), cudaGetErrorName(ce_), __FILE__,      \
                         __LINE__);                                                     \
            goto done;                                                                  \
        }                                                                               \
    } while (0)

/* Makes the current device's primary context current and returns it with the
 * device's ordinal, through the runtime's driver entry point (no link against
 * libcuda): for the CUPTI calls that take a context. */
kb_status kb_current_context(CUcontext *ctx, int *device, kb_err *e);

/* Number of visible GPUs; KB_EENV "no NVIDIA driver found (libcuda.so.1 is not
 * installed)" without the driver, "no CUDA GPU available (...)" when none. */
kb_status kb_device_count(int *n, kb_err *e);

/* Fills d (copy_gbps stays NAN) for GPU `ordinal`. */
kb_status kb_device_query(int ordinal, kb_device *d, kb_err *e);

/* Measures the device-to-device copy bandwidth (bytes read + bytes written per
 * second, in GB/s) on the current GPU, the best median of a 16-byte-vector copy
 * kernel and cudaMemcpyAsync over 2 x 1 GiB buffers, both ways a case is
 * timed: *cold_gbps of copies each timed alone after an L2 flush,
 * *batch_gbps of copies back to back (a sample of several, divided). */
kb_status kb_calibrate_copy(double *cold_gbps, double *batch_gbps, kb_err *e);

/* Evicts the L2 by reading a buffer of `bytes` (several times the L2 size,
 * zero-filled once by the caller) on stream s; leaves only clean lines. */
cudaError_t kb_flush_l2(void *buf, size_t bytes, cudaStream_t s);

/* The SM clock in MHz measured by a spinning kernel (clock64 cycles over
 * globaltimer nanoseconds), or NAN if it could not be measured. */
double kb_measure_sm_clock(cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif

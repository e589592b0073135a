/* tma.h - tensor maps for the copy engine (TMA) of Hopper GPUs, made on the
 * host: a CUtensorMap describes a tensor in global memory (dimensions,
 * strides) and the box one copy moves, with the 128-byte shared-memory
 * swizzle the wgmma rungs read. cuTensorMapEncodeTiled is a driver function:
 * it is found through the runtime (cudaGetDriverEntryPointByVersion), so
 * kbench does not link libcuda. */
#ifndef KB_TMA_H
#define KB_TMA_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Encodes into *map the 3-D tensor at base of 16-bit elements of dtype d:
 * dims[0] elements contiguous (the innermost), then dims[1] rows of stride
 * strides[0] bytes, then dims[2] slices of stride strides[1] bytes; a copy
 * moves box[0] x box[1] x box[2] elements, rows of box[0] * 2 = 128 bytes at
 * most, swizzled in 128-byte rows. Loads past the tensor's edges read zeros;
 * stores there are dropped. Returns cudaErrorInvalidValue for a dtype other
 * than fp16/bf16, cudaErrorNotSupported when the driver lacks the function,
 * and cudaErrorInvalidValue when the driver refuses the map. */
cudaError_t kb_tma_map_3d(CUtensorMap *map, const void *base, kb_dtype d, const uint64_t dims[3],
                          const uint64_t strides[2], const uint32_t box[3]);

/* *major, *minor = the current GPU's compute capability. Returns 0, or -1
 * with the runtime's error in why, naming `variant` (whose prepare asks). */
int kb_device_cc(const char *variant, int *major, int *minor, char *why, size_t why_size);

/* Whether the current GPU runs the sm_90a rungs (wgmma, setmaxnreg): 0 when it
 * is a Hopper GPU (compute capability 9.0); 1 when it is another, with the
 * reason naming `variant` in why (the case is skipped); -1 when asking the
 * runtime failed, with its error in why. */
int kb_require_sm90a(const char *variant, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif
#endif

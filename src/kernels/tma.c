/* tma.c - tensor maps for the copy engine (see tma.h). */
#include "tma.h"

#include <pthread.h>
#include <stdio.h>

/* The driver version whose cuTensorMapEncodeTiled signature is used here. */
#define KB_TMA_DRIVER_API 12000

typedef CUresult (*encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                    const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                    const cuuint32_t *, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion,
                                    CUtensorMapFloatOOBfill);

static encode_tiled_fn encode_tiled;
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;

static void find_encode_tiled(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, KB_TMA_DRIVER_API,
                                         cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        encode_tiled = (encode_tiled_fn)fn;
}

cudaError_t kb_tma_map_3d(CUtensorMap *map, const void *base, kb_dtype d, const uint64_t dims[3],
                          const uint64_t strides[2], const uint32_t box[3])
{
    CUtensorMapDataType t;
    if (d == KB_BF16)
        t = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    else if (d == KB_FP16)
        t = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    else
        return cudaErrorInvalidValue;
    if (pthread_once(&encode_once, find_encode_tiled) != 0 || !encode_tiled)
        return cudaErrorNotSupported;
    const cuuint64_t gdim[3] = {dims[0], dims[1], dims[2]};
    const cuuint64_t gstride[2] = {strides[0], strides[1]};
    const cuuint32_t bdim[3] = {box[0], box[1], box[2]};
    const cuuint32_t estride[3] = {1, 1, 1};
    CUresult r = encode_tiled(map, t, 3, (void *)base, gdim, gstride, bdim, estride,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

int kb_device_cc(const char *variant, int *major, int *minor, char *why, size_t why_size)
{
    int dev;
    *major = *minor = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (e != cudaSuccess) {
        snprintf(why, why_size, "asking the GPU's compute capability for %s failed: %s", variant,
                 cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

int kb_require_sm90a(const char *variant, char *why, size_t why_size)
{
    int major, minor;
    if (kb_device_cc(variant, &major, &minor, why, why_size) != 0)
        return -1;
    if (major == 9 && minor == 0)
        return 0;
    snprintf(why, why_size,
             "%s is built for Hopper (sm_90a: wgmma, setmaxnreg), this GPU is compute "
             "capability %d.%d",
             variant, major, minor);
    return 1;
}

/* gpu_test.h - what the GPU test programs share. */
#ifndef KB_GPU_TEST_H
#define KB_GPU_TEST_H

#include <stdio.h>

#include <cuda_runtime_api.h>

#include "profiler/device.h"

/* A GPU test program's setup: *gpu = whether this machine has a GPU, and when
 * it has, *dev = GPU 0's facts. Without one it says that `what` is skipped and
 * succeeds (the tests skip themselves). Returns 0, or -1 when GPU 0 could not
 * be queried. */
static inline int kbt_gpu_setup(int *gpu, kb_device *dev, const char *what)
{
    int n = 0;
    kb_err e = {{0}};
    *gpu = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    if (!*gpu) {
        fprintf(stderr, "no GPU: skipping %s\n", what);
        return 0;
    }
    return kb_device_query(0, dev, &e) == KB_OK ? 0 : -1;
}

#endif

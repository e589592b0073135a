/* cluster_fit.cu - how many thread-block clusters of each size this GPU
 * places at once, and how many of its SMs they hold: the occupancy
 * calculator's answer (cudaOccupancyMaxActiveClusters) for clusters of 1-16
 * blocks, at the block shapes the cluster kernels use:
 *   1024 threads, one an SM (200 KB of shared memory: layernorm_fused_srow2,
 *   the persistent clusters), 512 threads two an SM (96 KB each: softmax's
 *   cluster kernels, srow2's 512-thread form) and 512 threads one an SM.
 * (kernels/cluster.cuh's kb_cluster_capacity, as the cluster kernels'
 * launchers ask it). A cluster's blocks run on the SMs of one GPC, so a GPC
 * of g free SMs holds floor(g / c) clusters of c one-SM blocks and the rest
 * of its SMs idle (the H200 held 30 clusters of 4 on 120 of its 132 SMs and
 * 7 of 16 on 112 in the counters runs of layernorm's fused.cu): which
 * cluster sizes leave SMs idle, and whether blocks two an SM change that, is
 * what a cluster kernel's placement is planned from.
 *
 *   build/bench/cluster_fit
 *
 * Output: the device and its SMs, then a line a block shape with, for each
 * cluster size c, the clusters placed and (in parentheses) the SMs they
 * hold, c times the clusters over the blocks an SM. `make tests` builds it;
 * run it on the GPU machine (about a second). */
#include <stdio.h>

#include "check.cuh"
#include "kernels/cluster.cuh"

#define CHECK(call) kb_tool_check("cluster_fit", (call), #call)

/* A kernel that does nothing the calculator sees: its resources are the
 * block's threads and the dynamic shared memory asked for. */
__global__ void fit_kernel(int *flag)
{
    if (flag != nullptr && threadIdx.x == 0)
        flag[blockIdx.x] = 1;
}

struct shape {
    int threads, per_sm;
    size_t smem;
};

int main(void)
{
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    printf("%s, %d SMs, compute capability %d.%d\n", prop.name, sms, prop.major, prop.minor);
    if (prop.major < 9) {
        printf("no thread-block clusters before compute capability 9.0\n");
        return 0;
    }
    const shape shapes[] = {
        {1024, 1, (size_t)200 << 10}, {512, 2, (size_t)96 << 10}, {512, 1, (size_t)200 << 10}};
    for (const shape &sh : shapes) {
        CHECK(cudaFuncSetAttribute(fit_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)sh.smem));
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fit_kernel, sh.threads,
                                                            sh.smem));
        printf("%4d threads, %3zu KB, %d a SM (%d wanted):", sh.threads, sh.smem >> 10, per_sm,
               sh.per_sm);
        for (int c = 1; c <= KB_CLUSTER_MAX; c++) {
            /* 0 where the GPU places none (or refuses the size) */
            const int n = kb_cluster_capacity((const void *)fit_kernel, sh.threads, c, sh.smem);
            printf(" %d: %d (%d)", c, n, per_sm > 0 ? c * n / per_sm : 0);
        }
        printf("\n");
    }
    return 0;
}

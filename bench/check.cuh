/* check.cuh - the bench tools' CUDA error check (bench/mma_peak.cu,
 * bench/fw_trace.cu, bench/grid_trace.cu, bench/gpipe_trace.cu, l2_reuse.cu,
 * cluster_fit.cu, chunk_copy.cu and their timing, median_time.cuh,
 * row_trace.cuh and stream_bufs.cuh;
 * pc_stalls.c, C, too): a failed call is said as "tool: call: error" and the
 * tool exits 1. */
#ifndef KB_BENCH_CHECK_CUH
#define KB_BENCH_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static inline void kb_tool_check(const char *tool, cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s: %s\n", tool, what, cudaGetErrorString(e));
        exit(1);
    }
}

#endif

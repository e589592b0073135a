/* median_time.cuh - the trace tools' plain timing (bench/fw_trace.cu, and
 * grid_trace.cu and gpipe_trace.cu through row_trace.cuh): the median of 20
 * launches' event times after 5 warm-ups, so that a traced build's own cost
 * is known beside it. */
#ifndef KB_BENCH_MEDIAN_TIME_CUH
#define KB_BENCH_MEDIAN_TIME_CUH

#include <cuda_runtime.h>

#include "check.cuh"

/* The median time in microseconds of launch() (which returns the launch's
 * error) on the default stream; on a CUDA error, says so as `tool` and
 * exits 1. */
template <typename F> static float kb_median_launch_us(const char *tool, F launch)
{
    enum { WARM = 5, N = 20 };
    float ms[N];
    cudaEvent_t e0, e1;
    kb_tool_check(tool, cudaEventCreate(&e0), "cudaEventCreate");
    kb_tool_check(tool, cudaEventCreate(&e1), "cudaEventCreate");
    for (int i = 0; i < WARM + N; i++) {
        kb_tool_check(tool, cudaEventRecord(e0, 0), "cudaEventRecord");
        kb_tool_check(tool, launch(), "launch");
        kb_tool_check(tool, cudaEventRecord(e1, 0), "cudaEventRecord");
        kb_tool_check(tool, cudaEventSynchronize(e1), "cudaEventSynchronize");
        if (i >= WARM)
            kb_tool_check(tool, cudaEventElapsedTime(&ms[i - WARM], e0, e1),
                          "cudaEventElapsedTime");
    }
    kb_tool_check(tool, cudaEventDestroy(e0), "cudaEventDestroy");
    kb_tool_check(tool, cudaEventDestroy(e1), "cudaEventDestroy");
    for (int i = 1; i < N; i++) /* insertion sort */
        for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
            const float t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    return 1000.0f * ms[N / 2];
}

#endif

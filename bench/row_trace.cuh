/* row_trace.cuh - what the row-grid trace tools share (bench/grid_trace.cu,
 * bench/gpipe_trace.cu): their command line, [fp32|bf16 rows cols], and the
 * run itself: the launch timed without stamps and with them (median_time.cuh),
 * then once more into a zeroed trace buffer, whose words come back to the
 * host under a comment line with both times. */
#ifndef KB_BENCH_ROW_TRACE_CUH
#define KB_BENCH_ROW_TRACE_CUH

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.cuh"
#include "kernels/dtype.h"
#include "median_time.cuh"

/* Parses [fp32|bf16 rows cols] (none: *dt and shape[0..1] stay as given)
 * into *dt and shape[0], shape[1]. Returns 0, or 2 having said what is wrong
 * as `tool`. */
static int kb_row_trace_args(const char *tool, int argc, char **argv, kb_dtype *dt,
                             int64_t *shape)
{
    if (argc != 1 && argc != 4) {
        fprintf(stderr, "usage: %s [fp32|bf16 rows cols]\n", tool);
        return 2;
    }
    if (argc == 1)
        return 0;
    if (strcmp(argv[1], "fp32") && strcmp(argv[1], "bf16")) {
        fprintf(stderr, "%s: bad dtype '%s': fp32 or bf16\n", tool, argv[1]);
        return 2;
    }
    *dt = strcmp(argv[1], "fp32") ? KB_BF16 : KB_FP32;
    for (int i = 0; i < 2; i++) {
        char *end;
        shape[i] = strtoll(argv[2 + i], &end, 10);
        if (*end || shape[i] < 1 || shape[i] > (1 << 24)) {
            fprintf(stderr, "%s: bad %s '%s'\n", tool, i ? "cols" : "rows", argv[2 + i]);
            return 2;
        }
    }
    return 0;
}

/* Runs launch() (which returns the launch's error) plain and with a trace
 * buffer of `words` 64-bit words, handed to the kernels by arm(buffer), and
 * prints the comment line: dt, rows x cols, both median times and the
 * bandwidths of a read and a write of `bytes`. Returns the host copy of the
 * buffer after one more launch into it zeroed (free() it). On a CUDA error
 * or without host memory, says so as `tool` and exits 1. */
template <typename F, typename A>
static unsigned long long *kb_row_trace_run(const char *tool, F launch, A arm, size_t words,
                                            kb_dtype dt, int64_t rows, int64_t cols,
                                            size_t bytes)
{
    unsigned long long *buf = NULL;
    kb_tool_check(tool, cudaMalloc(&buf, words * 8), "cudaMalloc(trace)");
    const float plain = kb_median_launch_us(tool, launch);
    kb_tool_check(tool, arm(buf), "setting the trace buffer");
    const float traced = kb_median_launch_us(tool, launch);
    kb_tool_check(tool, cudaMemset(buf, 0, words * 8), "cudaMemset(trace)");
    kb_tool_check(tool, launch(), "launch");
    kb_tool_check(tool, cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    unsigned long long *h = (unsigned long long *)malloc(words * 8);
    if (!h) {
        fprintf(stderr, "%s: out of host memory for %zu trace words\n", tool, words);
        exit(1);
    }
    kb_tool_check(tool, cudaMemcpy(h, buf, words * 8, cudaMemcpyDeviceToHost),
                  "cudaMemcpy(trace)");
    kb_tool_check(tool, cudaFree(buf), "cudaFree(trace)");
    printf("# %s %lld x %lld: plain %.1f us (%.1f GB/s), traced %.1f us (%.1f GB/s)\n",
           dt == KB_FP32 ? "fp32" : "bf16", (long long)rows, (long long)cols, plain,
           2.0 * (double)bytes / plain / 1e3, traced, 2.0 * (double)bytes / traced / 1e3);
    return h;
}

#endif

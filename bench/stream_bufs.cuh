/* stream_bufs.cuh - the streaming probes' setup (bench/l2_reuse.cu,
 * bench/chunk_copy.cu): x and y of x_MB each on the current GPU, x_MB from
 * the command line, and the GPU's properties for the probe's header line. */
#ifndef KB_BENCH_STREAM_BUFS_CUH
#define KB_BENCH_STREAM_BUFS_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.cuh"

struct kb_stream_bufs {
    cudaDeviceProp prop;
    int sms;
    long x_mb;    /* MB of x, and of y */
    size_t bytes; /* x_mb << 20 */
    uint4 *x, *y; /* x's bytes all 0x5A */
};

/* Fills b for tool's command line `tool [x_MB]` (64-8192, default def_mb):
 * true, or false after a usage line on stderr. A CUDA error is said and
 * exits 1 (kb_tool_check). */
static inline bool kb_stream_bufs_init(kb_stream_bufs *b, const char *tool, int argc,
                                       char **argv, long def_mb)
{
    b->x_mb = def_mb;
    if (argc > 2 ||
        (argc == 2 && ((b->x_mb = strtol(argv[1], NULL, 10)) < 64 || b->x_mb > 8192))) {
        fprintf(stderr, "usage: %s [x_MB, 64-8192]\n", tool);
        return false;
    }
    int dev = 0;
    kb_tool_check(tool, cudaGetDevice(&dev), "cudaGetDevice");
    kb_tool_check(tool, cudaDeviceGetAttribute(&b->sms, cudaDevAttrMultiProcessorCount, dev),
                  "cudaDeviceGetAttribute");
    kb_tool_check(tool, cudaGetDeviceProperties(&b->prop, dev), "cudaGetDeviceProperties");
    b->bytes = (size_t)b->x_mb << 20;
    kb_tool_check(tool, cudaMalloc((void **)&b->x, b->bytes), "cudaMalloc(x)");
    kb_tool_check(tool, cudaMalloc((void **)&b->y, b->bytes), "cudaMalloc(y)");
    kb_tool_check(tool, cudaMemset(b->x, 0x5A, b->bytes), "cudaMemset(x)");
    return true;
}

/* Frees what kb_stream_bufs_init allocated. */
static inline void kb_stream_bufs_free(kb_stream_bufs *b, const char *tool)
{
    kb_tool_check(tool, cudaFree(b->x), "cudaFree(x)");
    kb_tool_check(tool, cudaFree(b->y), "cudaFree(y)");
}

#endif

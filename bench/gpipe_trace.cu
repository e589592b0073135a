/* gpipe_trace.cu - a timeline of layernorm's pipelined grid (rows of 65536-
 * 1048576 columns split over one block an SM, each row's statistics met
 * through the L2 L rows late; src/kernels/grid_pipe.cuh): when each block
 * has a row's bytes, publishes its partial, sees the row's last partial and
 * waits for the merged statistics, so that a row's wait can be told apart
 * into the blocks' spread (the slowest block's partial) and the exchange's
 * own round trips, which the stall samples cannot do.
 *
 * It builds the fused variant with KB_GPIPE_TRACE (grid_pipe.cuh's stamps:
 * nine edges a block and row, the global timer), launches it on random
 * inputs and prints one line a block and row. The launch without stamps is
 * timed beside it (events, median of 20 after 5 warm-ups), so the stamps'
 * own cost is known.
 *
 *   build/bench/gpipe_trace [fp32|bf16 rows cols]    (default fp32 128 1048576)
 *
 * Output, after a comment line with both times:
 *   row rank sm t0 ... t8
 * t: the global timer (ns) at grid_pipe.cuh's edges k = 0..8. Shapes that
 * do not take the pipelined grid print no records (exit 1). `make tests`
 * builds it as build/bench/gpipe_trace; run it on the GPU machine and read
 * it with bench/gpipe_trace.py. */
#include <stdlib.h>
#include <string.h>

#define KB_GPIPE_TRACE /* grid_pipe.cuh's stamps (kb_gpipe_stamp) */
#include "../variants/layernorm/fused.cu"
#include "kernels/fill.h"
#include "row_trace.cuh"

#define CHECK(call) kb_tool_check("gpipe_trace", (call), #call)

int main(int argc, char **argv)
{
    kb_dtype dt = KB_FP32;
    int64_t shape[KB_MAX_AXES] = {128, 1048576, 0, 0, 0};
    const int bad = kb_row_trace_args("gpipe_trace", argc, argv, &dt, shape);
    if (bad)
        return bad;
    const int64_t rows = shape[LN_ROWS], cols = shape[LN_COLS];
    const size_t es = dt == KB_FP32 ? 4 : 2, bytes = (size_t)(rows * cols) * es;
    void *x = NULL, *y = NULL, *par[3] = {NULL, NULL, NULL}, *scratch = NULL;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&y, bytes));
    for (int i = 0; i < 3; i++)
        CHECK(cudaMalloc(&par[i], (size_t)cols * es));
    CHECK(cudaMalloc(&scratch, (size_t)cols * sizeof(float)));
    CHECK(kb_fill_rows(x, rows, cols, dt, 12345, 1.0f, 2.0f, 0));
    for (int i = 0; i < 3; i++) /* gamma about 1, beta and b about 0 */
        CHECK(kb_fill_uniform(par[i], (size_t)cols, dt, 777 + (uint64_t)i, i ? 0.0f : 1.0f,
                              0.5f, 0));
    kb_args a;
    memset(&a, 0, sizeof a);
    a.dtype = dt;
    a.shape = shape;
    a.in[0] = x;
    for (int i = 0; i < 3; i++)
        a.in[1 + i] = par[i];
    a.out[0] = y;
    a.scratch = scratch;
    a.scratch_bytes = (size_t)cols * sizeof(float);
    const size_t recs = (size_t)rows * KB_GRID_MAXB, words = recs * 16;
    unsigned long long *h = kb_row_trace_run(
        "gpipe_trace", [&a] { return kb_layernorm_fused(&a, 0); },
        [](unsigned long long *buf) {
            return cudaMemcpyToSymbol(kb_gpipe_trace, &buf, sizeof buf);
        },
        words, dt, rows, cols, bytes);
    size_t n = 0;
    for (size_t i = 0; i < recs; i++) {
        const unsigned long long *t = h + i * 16;
        if (t[0] == 0)
            continue;
        n++;
        printf("%zu %zu %llu", i / KB_GRID_MAXB, i % KB_GRID_MAXB, t[15]);
        for (int k = 0; k < 9; k++)
            printf(" %llu", t[k]);
        printf("\n");
    }
    free(h);
    CHECK(cudaFree(scratch));
    for (int i = 0; i < 3; i++)
        CHECK(cudaFree(par[i]));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    if (n == 0) {
        fprintf(stderr, "gpipe_trace: no records: %s %lld x %lld does not take the pipelined "
                        "grid\n",
                dt == KB_FP32 ? "fp32" : "bf16", (long long)rows, (long long)cols);
        return 1;
    }
    return 0;
}

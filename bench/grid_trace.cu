/* grid_trace.cu - a timeline of softmax's grid path (rows past the clusters,
 * split over ordinary blocks whose (max, sum) pairs meet in the L2): where a
 * block's time goes between taking its item and leaving, and how a row's
 * blocks wait for one another, which the counters (averages over the launch)
 * cannot show.
 *
 * It builds the fused variant with SOFTMAX_GRID_TRACE (thread 0 of every
 * block stamps the global timer and the SM's clock at six edges of its item:
 * taken, its loads landed and its max known, block reduced, the row's pairs
 * in, the pairs merged, its stores issued), launches it on random inputs and
 * prints one line per item. The launch without stamps is timed beside it
 * (events, median of 20 after 5 warm-ups), so the stamps' own cost is known.
 *
 *   build/bench/grid_trace [fp32|bf16 rows cols]     (default fp32 128 1048576)
 *
 * Output, after a comment line with both times:
 *   item sm row g0 g1 g2 g3 g4 g5 c0 c1 c2 c3 c4 c5
 * g: the global timer (ns), c: the SM's clock, at the six edges.
 * `make tests` builds it as build/bench/grid_trace; run it on the GPU machine
 * and read it with bench/grid_trace.py. */
#include <stdlib.h>
#include <string.h>

#define SOFTMAX_GRID_TRACE /* the variant's stamps (its grid_stamp) */
#include "../variants/softmax/fused.cu"
#include "kernels/fill.h"
#include "row_trace.cuh"

#define CHECK(call) kb_tool_check("grid_trace", (call), #call)

int main(int argc, char **argv)
{
    kb_dtype dt = KB_FP32;
    int64_t shape[KB_MAX_AXES] = {128, 1048576};
    const int bad = kb_row_trace_args("grid_trace", argc, argv, &dt, shape);
    if (bad)
        return bad;
    /* 16-bit rows of up to 1048576 go to one cluster by default; this tool
     * follows the grid */
    if (setenv("KBENCH_SOFTMAX_CREG_NS", "0", 1)) {
        perror("grid_trace: setenv");
        return 1;
    }
    const int64_t rows = shape[0], cols = shape[1];
    const size_t es = dt == KB_FP32 ? 4 : 2, bytes = (size_t)(rows * cols) * es;
    void *x = NULL, *y = NULL;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&y, bytes));
    CHECK(kb_fill_rows(x, rows, cols, dt, 12345, 4.0f, 2.0f, 0));
    kb_args a;
    memset(&a, 0, sizeof a);
    a.dtype = dt;
    a.shape = shape;
    a.in[0] = x;
    a.out[0] = y;
    const size_t items = (size_t)rows * KB_GRID_MAXB, words = items * 16;
    unsigned long long *h = kb_row_trace_run(
        "grid_trace", [&a] { return kb_softmax_fused(&a, 0); },
        [](unsigned long long *buf) { return cudaMemcpyToSymbol(grid_trace, &buf, sizeof buf); },
        words, dt, rows, cols, bytes);
    for (size_t i = 0; i < items; i++) {
        const unsigned long long *t = h + i * 16;
        if (t[0] == 0)
            continue;
        printf("%zu %llu %llu", i, t[6], t[7]);
        for (int j = 0; j < 6; j++)
            printf(" %llu", t[j]);
        for (int j = 0; j < 6; j++)
            printf(" %llu", t[8 + j]);
        printf("\n");
    }
    free(h);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    return 0;
}

/* chunk_copy.cu - whether blocks that stream their own chunks in step lose
 * DRAM bandwidth to the order of their addresses: the question behind the
 * long rows' kernels, whose blocks each walk a slice of a row (layernorm's
 * pipelined grid: slices of 16-32 KB, the same offset in every slice at
 * about the same time) or a whole row (srow2: rows of 128 KB), against a
 * copy whose blocks' reads at any moment make one contiguous range.
 *
 * Two 512-thread blocks an SM copy x to y (ld.global / st.global, 16-byte
 * vectors, U = 4 in flight a thread: 32 KB a block a step). x is cut into
 * chunks of C bytes; block b copies chunks b, b + grid, b + 2 grid, ...
 * each from its start to its end in steps of 32 KB. At C = 32 KB a step is
 * a whole chunk, so the grid's reads at a step are one range (the copy);
 * at C > 32 KB they are the grid's blocks' windows of 32 KB, C apart, all at
 * the same offset of their chunks (`aligned`), or, `rotated`, each block
 * starting its walk at its own offset (b x 4 KB mod C, wrapping to the
 * chunk's start), so that the windows' low address bits differ.
 *
 *   build/bench/chunk_copy [x_MB]     (default 1024 MB of x and of y; each
 *                                     chunk size copies the whole chunks a
 *                                     block of the grid each, of them)
 *
 * Output, one line a configuration after a header: the chunk in KB, the
 * walk, the MB of x copied, the median time (events, 20 launches after 5
 * warm-ups), GB/s (read plus written) and the ratio of that to the 32 KB
 * copy's.
 * Measured (H100 80GB HBM3, 2026-12-06 22:52 UTC, x and y 1024 MB): 2811
 * GB/s for the copy (32 KB chunks); 64 KB to 1 MB chunks, aligned and
 * rotated alike, 0.998-1.014 of it: no loss to the walk on the H100, where
 * the long rows' kernels lose nothing to it either (93% of the copy for the
 * 16-bit grid). The H200, where those kernels hold 82-84%, is still to run.
 * `make tests` builds it as build/bench/chunk_copy; run it on the GPU
 * machine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.cuh"
#include "median_time.cuh"
#include "stream_bufs.cuh"

#define THREADS 512
#define U 4
#define STEP (THREADS * U) /* vectors a block a step: 32 KB */

/* Copies chunks of cv vectors (a multiple of STEP), block b starting each
 * of its chunks at vector (b rot) mod cv. */
__global__ void __launch_bounds__(THREADS, 2)
    chunk_copy(const uint4 *__restrict__ x, uint4 *__restrict__ y, int64_t chunks, int cv,
               int rot)
{
    const int start = (int)(((int64_t)blockIdx.x * rot) % cv);
    for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
        const uint4 *xc = x + c * cv;
        uint4 *yc = y + c * cv;
        for (int s = 0; s < cv; s += STEP) {
            uint4 a[U];
            int v[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                v[u] = start + s + u * THREADS + (int)threadIdx.x;
                v[u] -= v[u] >= cv ? cv : 0;
                a[u] = xc[v[u]];
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                yc[v[u]] = a[u];
        }
    }
}

int main(int argc, char **argv)
{
    kb_stream_bufs b;
    if (!kb_stream_bufs_init(&b, "chunk_copy", argc, argv, 1024))
        return 2;
    const int blocks = 2 * b.sms;
    printf("# %s, %d SMs, %d blocks of %d threads, x and y %ld MB each\n", b.prop.name, b.sms,
           blocks, THREADS, b.x_mb);
    printf("chunk_KB walk MB us GBps vs_copy\n");
    static const int chunk_kb[] = {32, 64, 128, 256, 512, 1024};
    float copy_us = 0.0f;
    double copy_moved = 0.0;
    for (size_t i = 0; i < sizeof chunk_kb / sizeof chunk_kb[0]; i++)
        for (int r = 0; r < (chunk_kb[i] > 32 ? 2 : 1); r++) {
            const int cv = chunk_kb[i] * 64; /* 16-byte vectors */
            /* whole chunks for every block: the blocks' shares equal */
            const int64_t chunks = (int64_t)(b.bytes / 16) / cv / blocks * blocks;
            const int rot = r ? 256 : 0; /* 4 KB */
            const float us = kb_median_launch_us("chunk_copy", [&]() {
                chunk_copy<<<blocks, THREADS>>>(b.x, b.y, chunks, cv, rot);
                return cudaGetLastError();
            });
            const double moved = 2.0 * (double)chunks * cv * 16;
            if (i == 0) {
                copy_us = us;
                copy_moved = moved;
            }
            printf("%d %s %.0f %.1f %.1f %.3f\n", chunk_kb[i], r ? "rotated" : "aligned",
                   moved / 2 / 1048576.0, us, moved / (us * 1e3),
                   (moved / us) / (copy_moved / copy_us));
        }
    kb_stream_bufs_free(&b, "chunk_copy");
    return 0;
}

/* wave_rows.cuh - rows too long for a cluster, read twice: once from DRAM for
 * the statistics, once more from the L2 for the output, a row's second read
 * lagging its first by a few MB of other rows (rows in waves sized to the L2),
 * so that DRAM still sees x once.
 *
 * grid_rows.cuh keeps a row's share in a block's registers and shared memory
 * while the block waits for the row's other blocks; the SM's storage then
 * sits idle for that wait (barrier 32-36% of the stall samples at fp32 128 x
 * 1048576). Here no block holds anything across a wait. A row is nb chunks
 * of `per` 16-byte vectors, and the launch is a list of items, two a chunk:
 *   stats (row, c): read chunk c, reduce it and publish its partial in the
 *     row's slot (a release add on the row's arrival count it does not wait
 *     for);
 *   out (row, c): read chunk c again (from the L2 by then), wait for the
 *     row's nb partials (acquire; each warp by itself, after its loads are
 *     issued), merge them in one fixed order and write the chunk of y.
 * Items are taken from a ticket in the order: stats of rows 0 .. lag - 1,
 * then for r = lag, lag + 1, ... the stats of row r interleaved chunk by
 * chunk with the out items of row r - lag, then the out items of the last
 * lag rows. An out item's stats items all have smaller tickets, and a stats
 * item waits only for the out items of the row that held its slot
 * KB_WAVE_RING rows before (smaller tickets again), so the smallest ticket
 * not yet done never waits on anything unfinished: blocks may be persistent
 * (taking the next ticket while they work on this one) and their number is
 * free. A wait that outlasts ~2^26 polls traps (grid_rows.cuh).
 *
 * The lag is the L2's: between a chunk's two reads the L2 takes lag rows of
 * first reads and as many of y; lag x (row bytes) is chosen by the launcher
 * (a few MB past what the resident blocks have in flight, well inside the
 * L2). The counters of a slot only grow within a launch (generation g =
 * row / KB_WAVE_RING); the last block to leave zeroes them. One state a
 * translation unit: two launches of the same operator must not run at once. */
#ifndef KB_WAVE_ROWS_CUH
#define KB_WAVE_ROWS_CUH

#include <stdint.h>

#include "kernels/grid_rows.cuh"

#define KB_WAVE_RING 1024
#define KB_WAVE_MAXB 256 /* chunks a row at most */

struct kb_wave_state {
    unsigned ticket, left;
    unsigned arrive[KB_WAVE_RING];
    unsigned done[KB_WAVE_RING];
    float4 part[KB_WAVE_RING][KB_WAVE_MAXB];
};

static __device__ kb_wave_state kb_wave;

/* An item: a chunk of a row, to reduce (stats) or to write (out). */
struct kb_wave_item {
    int64_t row;
    int chunk;
    bool out;
};

/* Item t of a launch of `rows` rows of nb chunks, out items lagging by lag
 * rows (1 <= lag <= rows); t < 2 rows nb. */
static __device__ __forceinline__ kb_wave_item kb_wave_decode(int64_t t, int64_t rows, int nb,
                                                              int64_t lag)
{
    const int64_t head = lag * nb, body = (rows - lag) * 2 * nb;
    if (t < head)
        return {t / nb, (int)(t % nb), false};
    t -= head;
    if (t < body) {
        const int64_t step = t / (2 * nb);
        const int k = (int)(t % (2 * nb));
        return (k & 1) ? kb_wave_item{step, k >> 1, true}
                       : kb_wave_item{step + lag, k >> 1, false};
    }
    t -= body;
    return {rows - lag + t / nb, (int)(t % nb), true};
}

/* Thread 0 publishes `mine` as chunk c of row `row` (after the out items of
 * the row before in the slot, WARPS warps each, are done with it). */
static __device__ __forceinline__ void kb_wave_publish(int64_t row, int c, int nb, int warps,
                                                       float4 mine)
{
    const unsigned slot = (unsigned)(row % KB_WAVE_RING);
    const unsigned gen = (unsigned)(row / KB_WAVE_RING);
    if (gen > 0)
        kb_grid_until(&kb_wave.done[slot], gen * (unsigned)nb * (unsigned)warps);
    __stcg(&kb_wave.part[slot][c], mine);
    kb_red_release(&kb_wave.arrive[slot], 1u);
}

/* Lane 0 waits until row `row`'s nb partials are in; the warp may then read
 * them (kb_wave_get). All 32 lanes call it. */
static __device__ __forceinline__ void kb_wave_wait(int64_t row, int nb, int lane)
{
    if (lane == 0)
        kb_grid_until(&kb_wave.arrive[row % KB_WAVE_RING],
                      (unsigned)(row / KB_WAVE_RING + 1) * (unsigned)nb);
    __syncwarp();
}

/* Chunk c's partial of row `row` (after kb_wave_wait). */
static __device__ __forceinline__ float4 kb_wave_get(int64_t row, int c)
{
    return __ldcg(&kb_wave.part[row % KB_WAVE_RING][c]);
}

/* The warp is done with row `row`'s partials (every lane past its gets). */
static __device__ __forceinline__ void kb_wave_done(int64_t row, int lane)
{
    __syncwarp();
    if (lane == 0)
        kb_red_release(&kb_wave.done[row % KB_WAVE_RING], 1u);
}

/* The next ticket (thread 0's atomic). */
static __device__ __forceinline__ unsigned kb_wave_ticket(void)
{
    return atomicAdd(&kb_wave.ticket, 1u);
}

/* The block leaves a launch of `rows` rows; the last to leave zeroes the
 * counters. Every thread calls it; one block barrier. */
static __device__ __forceinline__ void kb_wave_leave(int64_t rows)
{
    if (__syncthreads_or(threadIdx.x == 0 &&
                         kb_add_acq_rel(&kb_wave.left, 1u) == gridDim.x - 1)) {
        const int64_t n = rows < KB_WAVE_RING ? rows : KB_WAVE_RING;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            kb_wave.arrive[i] = 0;
            kb_wave.done[i] = 0;
        }
        if (threadIdx.x == 0) {
            kb_wave.ticket = 0;
            kb_wave.left = 0;
        }
    }
}

/* The lag in rows for rows of row_bytes: lag_bytes of them, at least 1, at
 * most rows and KB_WAVE_RING - 1. */
static inline int64_t kb_wave_lag(int64_t rows, int64_t row_bytes, int64_t lag_bytes)
{
    int64_t lag = (lag_bytes + row_bytes - 1) / row_bytes;
    lag = lag < 1 ? 1 : lag;
    lag = lag < rows ? lag : rows;
    return lag < KB_WAVE_RING - 1 ? lag : KB_WAVE_RING - 1;
}

#endif

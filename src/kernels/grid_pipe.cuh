/* grid_pipe.cuh - a row split over a persistent grid whose blocks publish a
 * row's partial statistics at once and wait for the row's other blocks only
 * L rows later (the pipelined grid of softmax and layernorm).
 *
 * grid_rows.cuh's split waits, every row, for the slowest of the row's
 * blocks; with one block an SM the SM then has nothing to do. Here blocks of
 * THREADS threads, as many groups of S as the GPU holds at once, stay for the
 * launch: block `rank` of group g owns vectors tv + k stride (tv = rank
 * THREADS + tid, stride = S THREADS, k < NV) of rows g, g + G, ..., and keeps
 * a ring of D row slices in shared memory, filled by cp.async P = D - L rows
 * ahead (each thread copies and reads only its own vectors, so no barrier
 * guards a slot). For the block's i-th row the driver (kb_gpipe_run):
 *   1. waits for row i's copies and calls stats(i), which reduces the slice
 *      over the block; thread 0 publishes the block's partial (release add,
 *      no wait);
 *   2. for row j = i - L: thread 0 waits for its S partials (acquire), warp
 *      0 merges them by merge(row), in one fixed order, and hands the result
 *      to the block through shared memory; out(j, result) writes the row;
 *   3. copies row i + P into the slot row j left.
 * A block waits only when a block of its row is more than L rows behind.
 * Progress needs the G S blocks resident at once: the launcher asks the
 * occupancy calculator (kb_grid_capacity) and launches no more. */
#ifndef KB_GRID_PIPE_CUH
#define KB_GRID_PIPE_CUH

#include "kernels/grid_rows.cuh"
#include "kernels/mma.cuh"

/* A block's place in the pipelined grid and its ring of row slices. */
template <int NV, int THREADS, int D> struct kb_gpipe {
    uint4 *ring; /* [D][NV][THREADS] */
    int tid, rank, G, first, stride, tv, nvec, nr, S;

    __device__ __forceinline__ kb_gpipe(uint4 *ring_, int rows, int nvec_, int S_)
        : ring(ring_), tid((int)threadIdx.x), rank((int)blockIdx.x % S_),
          G((int)gridDim.x / S_), first((int)blockIdx.x / S_), stride(S_ * THREADS),
          tv(rank * THREADS + tid), nvec(nvec_),
          nr(first < rows ? (rows - first + G - 1) / G : 0), S(S_)
    {
    }
    /* Whether this thread's vector k is in the row. */
    __device__ __forceinline__ bool in(int k) const { return tv + k * stride < nvec; }
    /* The block's i-th row. */
    __device__ __forceinline__ int64_t row_of(int i) const
    {
        return (int64_t)first + (int64_t)i * G;
    }
    /* This thread's vector k of the block's i-th row, in the ring. */
    __device__ __forceinline__ uint4 &slot(int i, int k) const
    {
        return ring[((i % D) * NV + k) * THREADS + tid];
    }
    /* The copies of the block's i-th row (rows of nvec vectors from xv) into
     * its slot, zero-filled past the block's rows or the row's end (those
     * vectors are not read); one group a call. */
    __device__ __forceinline__ void prefetch(const uint4 *xv, int i) const
    {
        const bool ok_row = i < nr;
        const uint4 *src = xv + (ok_row ? row_of(i) : 0) * nvec + tv;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const bool ok = ok_row && in(k);
            kb_cp_async16(kb_smem_u32(&slot(i, k)), ok ? (const void *)(src + k * stride) : xv,
                          ok ? 16 : 0);
        }
        kb_cp_async_commit();
    }
};

/* Runs the pipeline over p's rows of xv (see the header): stats(i) returns
 * the block's partial of its i-th row (every thread calls it; it may hold
 * block barriers), merge(row) the row's merged statistics (warp 0 calls it,
 * lane 0's result is kept), out(j, merged) writes the block's j-th row (every
 * thread). Ends with the kernel's kb_grid_leave(rows). */
template <int L, int P, typename PIPE, typename STATS, typename MERGE, typename OUT>
static __device__ __forceinline__ void kb_gpipe_run(const PIPE &p, const uint4 *xv, int rows,
                                                    STATS stats, MERGE merge, OUT out)
{
    __shared__ float4 merged; /* the row being written: merge's result */
#pragma unroll
    for (int i = 0; i < P; i++)
        p.prefetch(xv, i);
    for (int i = 0; i < p.nr + L; i++) {
        if (i < p.nr) {
            kb_cp_async_wait<P - 1>(); /* row i's group: this thread's own copies */
            const float4 w = stats(i);
            if (p.tid == 0)
                kb_grid_publish(p.row_of(i), p.rank, p.S, w);
        }
        if (i >= L) {
            const int64_t row = p.row_of(i - L);
            if (p.tid == 0)
                kb_grid_wait(row, p.S);
            __syncthreads();
            if (p.tid < 32) {
                const float4 r = merge(row);
                if (p.tid == 0)
                    merged = r;
            }
            __syncthreads(); /* merged is set; warp 0 is past its reads of the slot */
            if (p.tid == 0)
                kb_grid_release(row);
            out(i - L, merged);
        }
        p.prefetch(xv, i + P); /* into the slot of row i - L, read above by this thread only */
    }
    kb_cp_async_wait<0>();
    kb_grid_leave(rows);
}

/* The blocks to launch for rows split over S blocks each, the GPU holding cap
 * at once: whole groups of S, at most one a row; 0 when it holds fewer than
 * S (the pipeline could not progress). */
static inline int64_t kb_gpipe_blocks(int64_t cap, int S, int64_t rows)
{
    const int64_t groups = cap / S < rows ? cap / S : rows;
    return groups * S;
}

#endif

/* grid_pipe.cuh - a row split over a persistent grid whose blocks publish a
 * row's partial statistics at once and wait for the row's other blocks only
 * L rows later (the pipelined grid of softmax and layernorm).
 *
 * grid_rows.cuh's split waits, every row, for the slowest of the row's
 * blocks; with one block an SM the SM then has nothing to do. Here blocks of
 * THREADS streaming threads and one exchange warp, as many groups of S as the
 * GPU holds at once, stay for the launch: block `rank` of group g owns
 * vectors tv + k stride (tv = rank THREADS + tid, stride = S THREADS, k < NV)
 * of rows g, g + G, ..., and keeps a ring of D row slices in shared memory,
 * filled by cp.async P = D - L rows ahead (each thread copies and reads only
 * its own vectors, so no barrier guards a slot; lane 0 of each warp also
 * copies the row's first 16 bytes, head(i), for a shift). For the block's
 * i-th row the streaming threads (kb_gpipe_run):
 *   1. wait for row i's copies and call stats(i), which reduces the slice
 *      over them (kb_gpipe_reduce: one named barrier, not the exchange
 *      warp's); thread 0 hands the partial to the exchange warp (shared
 *      memory and an mbarrier);
 *   2. for row j = i - L: wait on an mbarrier for the row's merged
 *      statistics from the exchange warp, and out(j, merged) writes the row;
 *   3. copy row i + P into the slot row j left.
 * The exchange warp publishes each partial to global memory as it comes
 * (release add), and one row later waits for the row's S partials
 * (acquire), merges them by merge(row) in one fixed order and hands the
 * result back. Every global round trip (the add, the polls, the reads of
 * the partials) is the exchange warp's: the streaming threads wait only
 * when the exchange is more than L rows behind. (The first form, commit
 * ab538b6 / f3c3749, had thread 0 do the exchange between two block
 * barriers every row: 26-62% of the copy bandwidth, barrier 44% of the
 * stall samples, 2026-12-02.) With the exchange warp (H200, 2026-12-02
 * 09:50 UTC) the kernels pass the operator checks, memcheck and synccheck;
 * racecheck reports hazards on kb_grid_leave's shared `last` (written by
 * thread 0 before the block barrier, read after it), which the compiler
 * inlined twice, once at the end of each role.
 * Progress needs the G S blocks resident at once: the launcher asks the
 * occupancy calculator (kb_grid_capacity) and launches no more. */
#ifndef KB_GRID_PIPE_CUH
#define KB_GRID_PIPE_CUH

#include "kernels/grid_rows.cuh"
#include "kernels/hopper.cuh"
#include "kernels/mma.cuh"

/* A block's place in the pipelined grid, its ring of row slices and (heads,
 * when not null) the ring of each row's first 16 bytes, one copy a warp. */
template <int NV, int THREADS, int D> struct kb_gpipe {
    static constexpr int W = THREADS / 32;
    uint4 *ring;  /* [D][NV][THREADS] */
    uint4 *heads; /* [D][W] or null */
    int tid, rank, G, first, stride, tv, nvec, nr, S;

    __device__ __forceinline__ kb_gpipe(uint4 *ring_, uint4 *heads_, int rows, int nvec_, int S_)
        : ring(ring_), heads(heads_), tid((int)threadIdx.x), rank((int)blockIdx.x % S_),
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
    /* The first 16 bytes of the block's i-th row, for every lane of the
     * warp (lane 0's copy, after its wait for the row; a warp shuffle). */
    __device__ __forceinline__ uint4 head(int i) const
    {
        uint4 h = make_uint4(0, 0, 0, 0);
        if ((tid & 31) == 0)
            h = heads[(i % D) * W + tid / 32];
        h.x = __shfl_sync(KB_FULL_MASK, h.x, 0);
        h.y = __shfl_sync(KB_FULL_MASK, h.y, 0);
        h.z = __shfl_sync(KB_FULL_MASK, h.z, 0);
        h.w = __shfl_sync(KB_FULL_MASK, h.w, 0);
        return h;
    }
    /* The copies of the block's i-th row (rows of nvec vectors from xv) into
     * its slot, zero-filled past the block's rows or the row's end (those
     * vectors are not read); one group a call. */
    __device__ __forceinline__ void prefetch(const uint4 *xv, int i) const
    {
        const bool ok_row = i < nr;
        const uint4 *row = xv + (ok_row ? row_of(i) : 0) * nvec;
        const uint4 *src = row + tv;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const bool ok = ok_row && in(k);
            kb_cp_async16(kb_smem_u32(&slot(i, k)), ok ? (const void *)(src + k * stride) : xv,
                          ok ? 16 : 0);
        }
        if (heads != nullptr && (tid & 31) == 0)
            kb_cp_async16(kb_smem_u32(&heads[(i % D) * W + tid / 32]), row, ok_row ? 16 : 0);
        kb_cp_async_commit();
    }
};

/* Reduces v over the THREADS streaming threads for the block's i-th row with
 * the warp reduction WARP (every lane gets the warp's result), empty lanes
 * contributing `empty`; every thread gets the result. red: __shared__
 * V[2][THREADS / 32], the half of i's parity written: one barrier a row
 * keeps two rows apart. */
template <int THREADS, typename V, typename WARP>
static __device__ __forceinline__ V kb_gpipe_reduce(V v, V (*red)[THREADS / 32], int i, V empty,
                                                    WARP warp)
{
    const int lane = threadIdx.x & 31;
    v = warp(v);
    if (lane == 0)
        red[i & 1][threadIdx.x / 32] = v;
    kb_bar_sync(1, THREADS); /* the streaming threads only */
    return warp(lane < THREADS / 32 ? red[i & 1][lane] : empty);
}

/* Slots of the partial and merged rings (see kb_gpipe_run). */
#define KB_GPIPE_R(L) ((L) + 2)

/* Runs the pipeline over p's rows of xv (see the header) in a block of
 * THREADS + 32 threads: stats(i) returns the block's partial of its i-th row
 * (every streaming thread calls it; kb_gpipe_reduce inside), merge(row) the
 * row's merged statistics (the exchange warp calls it, lane 0's result is
 * kept), out(j, merged) writes the block's j-th row (every streaming thread).
 * Ends with the kernel's kb_grid_leave(rows).
 * Slots: the partial and the merged statistics of row i live in slot i % R
 * of two small rings, each with an mbarrier (one arrival a phase). Thread 0
 * writes partial i after stats(i); it has by then waited for merged i - 1 -
 * L, which the exchange warp hands over only after reading partial i - L:
 * so R >= L keeps partial i - R read before it is overwritten. The exchange
 * warp writes merged q only after partial q + 1, i.e. after the streaming
 * threads' barrier in stats(q + 1), which each passes only after its
 * out(q - L): merged q - R (R >= L) is read by then. R = L + 2 leaves a row
 * of margin on each side; neither barrier can be two phases ahead of a
 * waiter for the same reasons. */
template <int L, int P, int THREADS, typename PIPE, typename STATS, typename MERGE, typename OUT>
static __device__ __forceinline__ void kb_gpipe_run(const PIPE &p, const uint4 *xv, int rows,
                                                    STATS stats, MERGE merge, OUT out)
{
    constexpr int R = KB_GPIPE_R(L);
    __shared__ float4 part[R], merged[R];
    __shared__ __align__(8) uint64_t bars[2 * R]; /* ready[R] (a partial), full[R] (merged) */
    const uint32_t ready = kb_smem_u32(bars), full = ready + 8 * R;
    if (threadIdx.x == 0) {
        for (int r = 0; r < 2 * R; r++)
            kb_mbar_init(ready + 8 * r, 1);
        kb_mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x >= THREADS) { /* the exchange warp */
        const int lane = (int)threadIdx.x & 31;
        for (int j = 0; j <= p.nr; j++) {
            if (j < p.nr) { /* publish the block's partial of row j */
                kb_mbar_wait(ready + 8 * (j % R), (unsigned)(j / R) & 1u);
                if (lane == 0)
                    kb_grid_publish(p.row_of(j), p.rank, p.S, part[j % R]);
            }
            if (j > 0) { /* merge row j - 1, published by every block one row ago */
                const int q = j - 1;
                const int64_t row = p.row_of(q);
                if (lane == 0)
                    kb_grid_wait(row, p.S);
                __syncwarp();
                const float4 r = merge(row);
                __syncwarp(); /* every lane is past its reads of the row's partials */
                if (lane == 0) {
                    merged[q % R] = r;
                    kb_mbar_arrive(full + 8 * (q % R));
                    kb_grid_release(row);
                }
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < P; i++)
            p.prefetch(xv, i);
        for (int i = 0; i < p.nr + L; i++) {
            if (i < p.nr) {
                kb_cp_async_wait<P - 1>(); /* row i's group: this thread's own copies */
                const float4 w = stats(i);
                if (p.tid == 0) {
                    part[i % R] = w;
                    kb_mbar_arrive(ready + 8 * (i % R));
                }
            }
            if (i >= L) {
                const int j = i - L;
                kb_mbar_wait(full + 8 * (j % R), (unsigned)(j / R) & 1u);
                out(j, merged[j % R]);
            }
            p.prefetch(xv, i + P); /* into the slot of row i - L, read above by this thread only */
        }
        kb_cp_async_wait<0>();
    }
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

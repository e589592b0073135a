/* cluster.cu - softmax of rows too long for one SM: a row split across the
 * blocks of a thread-block cluster, its statistics met in distributed shared
 * memory, the row read from DRAM once and written once.
 *
 * Clusters and DSMEM. On Hopper a launch may group its blocks in clusters of up
 * to 8 (16 with the non-portable attribute) that the hardware schedules at the
 * same time on SMs of one GPC. The blocks of a cluster can read and write one
 * another's shared memory (distributed shared memory: `mapa` turns a shared
 * address into the same variable in block r, `ld.shared::cluster` reads it
 * over the SM-to-SM network) and meet at a cluster-wide barrier
 * (`barrier.cluster.arrive` / `wait`, release/acquire: what a block wrote to
 * its shared memory before arriving is visible to its peers after they wait).
 * So a row too long for one SM's shared memory can live in the shared memory
 * of 8 or 16 SMs at once: each block holds a slice, reduces it, and the
 * cluster exchanges one (max, sum) pair a block instead of the row going back
 * through DRAM or the L2 for a second pass.
 *
 * Here (kernels/cluster.cuh has the geometry and the plan): block `rank` of a
 * cluster owns about 1/cl of the row's 16-byte body vectors. One thread starts
 * the copy engine on its slice (cp.async.bulk into shared memory, four pieces
 * on four mbarriers); meanwhile the block reads the overflow part, if any,
 * with ordinary loads; then it folds each piece into per-thread online
 * normaliser states (max, sum of exp(x - max)) as it lands, merges them over
 * the block, and publishes the block's pair in shared memory. After a cluster
 * barrier every warp reads the cl pairs of its peers (lanes 0..cl-1, one
 * ld.shared::cluster each) and merges them with the same butterfly, so every
 * block gets the same bits; it arrives at a second cluster barrier (waited on
 * before its pair is overwritten, or before it exits: a block's shared memory
 * must outlive its peers' reads), then writes y = exp(x - M) / S from the
 * slice in shared memory (16-byte stores) and from a second read of the
 * overflow. The head and tail elements around the 16-byte body are rank 0's.
 * Clusters are persistent, looping over rows; with overflow, only as many
 * rows are in flight as keep their overflow within half the L2, so the second
 * read comes from the L2 (rows in waves sized to the L2).
 *
 * Budget: 512 threads a block, launch bounds of 2 blocks an SM (64 registers
 * a thread at most); dynamic shared memory: the slice, up to ~113 KB (2 blocks
 * an SM: one loads while the other stores) or ~226 KB (1 block), so a
 * cluster of 16 holds rows of up to 1.8 MB or 3.6 MB: bf16 rows up to ~900K
 * elements at 2 an SM, 1.8M at 1; fp32 up to 450K / 900K; fp32 1048576 (4
 * MB) overflows by 0.4 MB a row, read twice (from the L2). Static shared
 * memory: 4 mbarriers, 16 float2 and one float4.
 *
 * A/B: KBENCH_CLUSTER_SIZE=1..16 (a power of two) forces the cluster size,
 * KBENCH_CLUSTER_BPS=1|2 the blocks an SM the slice is sized for,
 * KBENCH_CLUSTER_STORE=0 the threads' store of y instead of the copy
 * engine's (below).
 *
 * Prediction (before any measurement; H200, 132 SMs, copy ~4.2 TB/s):
 *   - rows=512, cols=1048576 bf16 (2 MB rows; cl 16, 1 block an SM): the row
 *     crosses DRAM once (excess 1.00x against fused's 1.50x); one block an SM
 *     with no overlap between its load and its store phases costs ~10-15%:
 *     ~85% of the copy bandwidth; fp32 (0.4 MB a row read again from the L2,
 *     excess ~1.00x in DRAM): ~80%;
 *   - rows=3, cols=262144 fp32 (1 MB rows): 16 blocks a row, 48 SMs busy
 *     instead of fused's 24 blocks; the problem is L2-sized (6 MB) and bound
 *     by the launch and one round trip of a 64 KB slice: about twice fused's
 *     13% (25-35%);
 *   - short rows (cols <= 4096): a rung for long rows; a cluster of 1 block a
 *     row and 512 threads for a few hundred elements: well below fused
 *     (expect 30-60%), correct by construction.
 *
 * Measured (H200, 2026-12-01, without counters, L2 flushed, two interleaved
 * rounds, % of the copy bandwidth): 2048 x 65536 390 us (64.6%) fp32 / 181 us
 * (69.6%) bf16, 512 x 262144 462 us (54.4%) / 195 us (64.6%); 40 registers,
 * so 3 blocks an SM where the slices allow (64 KB at fp32 65536: achieved
 * occupancy 68% of 75%). Tried beside it and dropped: a ring of two slices in
 * one block an SM, the copy engine bringing the next row's slice while this
 * row is reduced, met and written. Predicted ~85-90%; measured 654 / 212 /
 * 903 / 227 us (38-60%), slower at every shape. The same code with one slice
 * took 634 / 192 / 777 / 212 us: its bookkeeping took the kernel from 40 to
 * 64 registers, and 64 registers a thread leave room for 2 blocks of 512 an
 * SM instead of 3 (theoretical occupancy 50% against 75%); the ring itself
 * then holds 1 block an SM. Blocks resident an SM are what this rung lives
 * on: while one block waits for its slice or its cluster, the others move
 * data.
 *
 * The copy engine's store (the default since; KBENCH_CLUSTER_STORE=0 for the
 * threads' store above): y written back into the slice and sent out by the
 * copy engine piece by piece (one bulk store a piece, after the block's
 * barrier), so a row's stores leave the threads and the next row's copy is
 * issued as soon as the engine has read the slice out, rather than after 512
 * threads' 16-byte stores drained through the LSU pipeline. The kernel is
 * built for 3 blocks an SM (40 registers, no spills) so that residency stays
 * as it is. Predicted: 2048 x 65536 and 512 x 262144 from 54-70% to
 * ~75-80%; no change where the rows overflow (the overflow part is still the
 * threads'). Measured (H200, 2026-12-01, two rounds against the threads'
 * store in the same call, % of copy bandwidth): fp32 2048 x 65536 63.7 ->
 * 73.2 / 72.6, 512 x 262144 54.9 -> 66.4 / 66.9, 8192 x 32768 66.8 -> 76.1 /
 * 76.2, 128 x 1048576 (overflowing) 54.2 -> 57.7 / 59.2; bf16 unchanged
 * (69.6 -> 68.9, 64.0 -> 64.1, 70.9 -> 70.6, 54.0 -> 52.9). fp32 moved by
 * two thirds of the prediction; bf16 not at all: at half the bytes a row its
 * stall reasons were already not_selected 22% beside long_scoreboard 15%
 * (issue, not the store path, is its limit). Still short of 85%: the next
 * thing to find out is what the 25-40% idle of DRAM is spent on between a
 * block's slice arriving and the next being asked for. */
#include "kernels/cluster.cuh"
#include "softmax.cuh"

#define CLU_THREADS 512
#define CLU_UNROLL 4 /* overflow vectors a thread loads before using them */

/* s folded with the W finite elements f: the max moves first, the sum is
 * rescaled once. */
template <int W> static __device__ __forceinline__ float2 clu_fold(float2 s, const float *f)
{
    float m = s.x;
#pragma unroll
    for (int i = 0; i < W; i++)
        m = fmaxf(m, f[i]);
    float d[2] = {s.y * kb_exp2((s.x - m) * KB_LOG2E), 0.0f};
#pragma unroll
    for (int i = 0; i < W; i++)
        d[i % 2] += kb_exp2((f[i] - m) * KB_LOG2E);
    return make_float2(m, d[0] + d[1]);
}

template <typename T, bool ENGINE>
__global__ void __launch_bounds__(CLU_THREADS, ENGINE ? 3 : 2)
    softmax_cluster_rows(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols,
                         int64_t capv)
{
    constexpr int W = kb_vec_width<T>();
    constexpr int U = CLU_UNROLL;
    extern __shared__ __align__(128) uint4 sl[];
    __shared__ __align__(8) uint64_t bar[KB_SLICE_CHUNKS];
    __shared__ float2 red[CLU_THREADS / 32];
    __shared__ __align__(16) float4 part;
    const int tid = threadIdx.x, lane = tid & 31;
    const unsigned cl = kb_cluster_size(), rank = kb_cluster_rank();
    const int64_t clusters = gridDim.x / cl;
    const uint32_t bar0 = kb_smem_u32(bar), sl0 = kb_smem_u32(sl);
    const uint32_t peer = kb_cluster_map(kb_smem_u32(&part), lane < (int)cl ? lane : 0);
    if (tid == 0)
        kb_slice_init(bar0);
    __syncthreads();

    unsigned it = 0;
    for (int64_t row = blockIdx.x / cl; row < rows; row += clusters, it++) {
        const kb_slice sc = kb_slice_of<T>(row, cols, rank, cl, capv);
        const T *xr = x + row * cols;
        T *yr = y + row * cols;
        const T *xb = xr + sc.head;
        T *yb = yr + sc.head;
        if (tid == 0) {
            if (ENGINE)
                kb_bulk_wait_read<0>(); /* the last row's y has left the slice */
            kb_slice_load(sl0, bar0, xb + sc.lo * W, sc.ns);
        }

        /* The overflow, while the copy engine works: U vectors in flight a thread. */
        float2 s = kb_online_empty();
        const int64_t o0 = sc.lo + sc.ns;
        for (int64_t j0 = o0 + tid; j0 < sc.hi; j0 += (int64_t)U * CLU_THREADS) {
            uint4 r[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int64_t j = j0 + (int64_t)u * CLU_THREADS;
                r[u] = j < sc.hi ? kb_ld128(xb + j * W) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (j0 + (int64_t)u * CLU_THREADS < sc.hi) {
                    float f[W];
                    kb_unpack<T>(r[u], f);
                    s = clu_fold<W>(s, f);
                }
            }
        }

        /* The slice, piece by piece as it lands. */
        for (int c = 0; c < KB_SLICE_CHUNKS; c++) {
            kb_mbar_wait(bar0 + 8u * (uint32_t)c, it & 1u);
            const int64_t v1 = kb_slice_piece(sc.ns, c + 1);
            for (int64_t j = kb_slice_piece(sc.ns, c) + tid; j < v1; j += CLU_THREADS) {
                float f[W];
                kb_unpack<T>(sl[j], f);
                s = clu_fold<W>(s, f);
            }
        }
        if (rank == 0) {
            if (tid < sc.head)
                s = kb_online_add(s, kb_load(xr, tid));
            if (tid < sc.tail)
                s = kb_online_add(s, kb_load(xr, sc.tail0 + tid));
        }
        s = kb_block_online<CLU_THREADS>(s, red);

        /* The cluster: publish, meet, read the peers' pairs in rank order. */
        if (it > 0)
            kb_cluster_wait(); /* the peers have read the last row's pair */
        if (tid == 0)
            part = make_float4(s.x, s.y, 0.0f, 0.0f);
        kb_cluster_arrive();
        kb_cluster_wait();
        float2 p = kb_online_empty();
        if (lane < (int)cl) {
            const float4 q = kb_ld_cluster_f4(peer);
            p = make_float2(q.x, q.y);
        }
        p = kb_warp_online<32>(p);
        kb_cluster_arrive();

        /* y from the slice in shared memory, then from the overflow (the L2).
         * ENGINE: y replaces x in the slice, and the copy engine writes each
         * piece out once the block has computed it. */
        const float mx = p.x, inv = kb_rcp(p.y);
        const auto y_of = [&](float (&f)[W], int64_t) {
#pragma unroll
            for (int i = 0; i < W; i++)
                f[i] = kb_exp2((f[i] - mx) * KB_LOG2E) * inv;
        };
        kb_slice_write<T, ENGINE, CLU_THREADS>(sl, sl0, yb, sc, y_of);
        for (int64_t j = o0 + tid; j < sc.hi; j += CLU_THREADS) {
            float f[W];
            kb_unpack<T>(kb_ld128(xb + j * W), f);
            y_of(f, j);
            kb_st128(yb + j * W, kb_pack<T>(f));
        }
        if (rank == 0) {
            if (tid < sc.head)
                kb_store(yr, tid, kb_exp2((kb_load(xr, tid) - mx) * KB_LOG2E) * inv);
            if (tid < sc.tail)
                kb_store(yr, sc.tail0 + tid,
                         kb_exp2((kb_load(xr, sc.tail0 + tid) - mx) * KB_LOG2E) * inv);
        }
        __syncthreads(); /* the slice is read before the next row's copy lands */
    }
    if (ENGINE && tid == 0)
        kb_bulk_wait<0>(); /* the slice stays until the copy engine is done */
    if (it > 0)
        kb_cluster_wait(); /* no block leaves while a peer may read its pair */
}

template <typename T, bool ENGINE>
static cudaError_t launch_rows(const kb_args *a, cudaStream_t s, int64_t rows, int64_t cols)
{
    static const char *const names[2][2] = {
        {"softmax_cluster_rows", "softmax_cluster_rows_l2"},
        {"softmax_cluster_rows_engine", "softmax_cluster_rows_engine_l2"}};
    const auto k = softmax_cluster_rows<T, ENGINE>;
    kb_cluster_plan p;
    const cudaError_t e = kb_cluster_plan_rows(k, CLU_THREADS, rows, cols, sizeof(T), &p);
    if (e != cudaSuccess)
        return e;
    const kb_dim3 grid = {p.grid, 1, 1}, block = {CLU_THREADS, 1, 1};
    return kb_launch_cluster(a, s, k, names[ENGINE][p.overflow], grid, block, p.smem, p.cl,
                             (const T *)a->in[0], (T *)a->out[0], rows, cols, p.capv);
}

template <typename T> static cudaError_t launch_cluster(const kb_args *a, cudaStream_t s)
{
    const int64_t rows = a->shape[SM_ROWS], cols = a->shape[SM_COLS];
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    if (((uintptr_t)a->in[0] | (uintptr_t)a->out[0]) % 16 != 0)
        return cudaErrorMisalignedAddress; /* prepare skips such buffers */
    /* the copy engine's store unless KBENCH_CLUSTER_STORE says otherwise
     * (2 and 3 as 1 and 0: both kernels have 40 registers) */
    const int store = kb_cluster_store_mode(1);
    return store == 1 || store == 2 ? launch_rows<T, true>(a, s, rows, cols)
                                    : launch_rows<T, false>(a, s, rows, cols);
}

/* Launches the cluster softmax of a->in[0] into a->out[0] on stream s (the
 * plan: kernels/cluster.cuh). Returns the launch's error, or
 * cudaErrorInvalidValue for an unknown dtype. */
extern "C" cudaError_t kb_softmax_cluster(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_cluster, a, s)
}

/* The variant's prepare hook: skips (1, with the reason) on a GPU without
 * thread-block clusters or for buffers off 16-byte boundaries; -1 when the
 * runtime could not be asked. */
extern "C" int kb_softmax_cluster_prepare(const kb_args *a, char *why, size_t why_size)
{
    return kb_cluster_prepare(a, 1, 1, "cluster", why, why_size);
}

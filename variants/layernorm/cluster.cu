/* cluster.cu - layernorm + bias + GELU of rows too long for one SM: a row split
 * across the blocks of a thread-block cluster, each block's (count, mean, M2)
 * merged with its peers' through distributed shared memory, the row read from
 * DRAM once and written once.
 *
 * Clusters and DSMEM (softmax/cluster.cu says more): the blocks of a cluster
 * run at the same time on one GPC, read one another's shared memory (`mapa`,
 * `ld.shared::cluster`) and meet at cluster barriers. Block `rank` owns about
 * 1/cl of the row's 16-byte body vectors (kernels/cluster.cuh: geometry, plan,
 * the copy engine's cp.async.bulk of the slice into shared memory in four
 * pieces on four mbarriers). While the slice flies the block reads the
 * overflow, if any, with ordinary loads. Statistics are of d = x - K, K the
 * row's first element (exact differences keep a large mean's spread, as in
 * fused): each thread takes the exact two-pass (sum, then centred squares) of
 * its vectors of each piece from shared memory, and of each group of 4
 * overflow vectors from registers, and merges them with Chan's formula; the
 * block merges its threads (shuffles, 32 partials through shared memory), and
 * publishes (n, mean, M2). After a cluster barrier every warp reads the cl
 * partials (lanes 0..cl-1) and merges them in the same order, so every block
 * holds the same bits; the output y = GELU((d - mean) rstd gamma + beta + b)
 * is written from shared memory and from a second read of the overflow (from
 * the L2: the plan keeps the rows in flight within half of it). gamma, beta
 * and b come through L1/L2 with 16-byte loads when the row starts on a 16-byte
 * boundary and element by element when it does not (cols not a multiple of
 * the vector width: the body's columns are then off the parameters'
 * boundaries). Head and tail elements are rank 0's.
 *
 * Budget: 512 threads, launch bounds of 2 blocks an SM (64 registers a
 * thread); dynamic shared memory = the slice (~113 KB at 2 blocks an SM, ~226
 * KB at 1), so a cluster of 16 holds 1.8 / 3.6 MB rows; static: 4 mbarriers,
 * 3 x 32 floats, one float4.
 *
 * A/B: KBENCH_CLUSTER_SIZE=1..16 (a power of two), KBENCH_CLUSTER_BPS=1|2,
 * KBENCH_CLUSTER_STORE=0..3 (kernels/cluster.cuh; below).
 *
 * Prediction (before any measurement): rows=4096, cols=65536 (fused 25% fp32
 * / 15% bf16 today: its streaming path re-reads each row with one 1024-thread
 * block): fp32 rows of 256 KB in clusters of 4 at 2 blocks an SM (~64 KB a
 * block), ~80% of the copy bandwidth, bf16 (128 KB rows, clusters of 2) ~75%
 * (GELU's 10 instructions an element and the per-element parameter loads
 * weigh more at half the bytes); cols=1048576 few rows: one DRAM read
 * (excess ~1.0x), ~80% where the rows are enough to fill the GPU.
 *
 * Measured (H200, 2026-12-01, without counters, L2 flushed, two interleaved
 * rounds, % of the copy bandwidth): 2048 x 65536 482 us (52.3%) fp32 / 293 us
 * (43.0%) bf16, 512 x 262144 615 us (41.1%) / 326 us (38.7%): below the
 * prediction. 55-64 registers a thread hold it to 2 blocks of 512 an SM
 * (theoretical occupancy 50%) where the slices would allow 3; softmax's
 * cluster rung, at 40 registers and 3 blocks, reaches 64.6% at fp32 65536.
 * Tried beside it and dropped: a ring of two slices in one block an SM (the
 * next row's slice copied in while this row is worked on): 620 / 357 / 795 /
 * 412 us, 20-29% slower at every shape, at 1 block an SM.
 *
 * Next steps, then measured: KBENCH_CLUSTER_STORE=1, y written back into
 * the slice and sent out by the copy engine piece by piece, as in softmax's
 * rung, built for 2 blocks an SM; predicted +10-15% at 65536 and 262144.
 * KBENCH_CLUSTER_STORE=2, the same with the kernel for rows that fit (no
 * overflow loops) built for 3 blocks an SM: 40 registers, fp32 without
 * spills, 16-bit and the tanh GELU spilling 32-48 bytes; predicted another
 * +15-20% where the slices allow 3 blocks (fp32 65536: 64 KB each), as
 * softmax's 40-register rung reaches 64.6% there against this rung's 52.3%.
 * KBENCH_CLUSTER_STORE=3: the threads' store with that 3-block kernel, to
 * tell the residency's share from the copy engine's: 40 registers and no
 * spills in every dtype (the copy engine's pieces are what spill in 2).
 * The threads' store (0) keeps the one kernel it was first measured with.
 * Measured (H200, 2026-12-01, two rounds in one call, no counters, % of copy
 * bandwidth, fp32 / bf16; 0 -> 1 -> 2 -> 3):
 *   2048 x 65536    51.9 / 44.0 -> 51.4 / 41.7 -> 57.1 / 46.0 -> 56.0 / 47.5
 *   512 x 262144    41.2 / 39.3 -> 40.9 / 37.2 -> 44.7 / 41.1 -> 43.6 / 42.7
 *   8192 x 32768    59.0 / 45.8 -> 57.4 / 43.6 -> 62.8 / 46.7 -> 61.8 / 48.7
 *   128 x 1048576   34.6 / 30.1 -> 31.4 / 27.9 -> 31.4 / 27.8 -> 34.6 / 29.9
 * The copy engine's store lost 0.3-3 points here (softmax's won 10 in fp32):
 * layernorm's output pass loads gamma, beta and b for every element beside
 * the slice, and the store into the slice and the barrier before each piece
 * leaves add to a pass that is already the longer one. Residency is what
 * paid: the 3-block kernel gained 4-6 points in fp32 and 2-3 in bf16 with
 * either store. The default is 3 (the threads' store, the 3-block kernel
 * where rows fit, the 2-block overflow kernel where they do not: 128 x
 * 1048576 unchanged). Predicted +15-20% at 3 blocks; measured +8-11%
 * relative: the achieved occupancy is the next thing to read off the
 * counters. Still far from 85%: level with fused at 65536 (56.8% fp32, with
 * its 1.33x excess) and below it at 1048576 (58.9%). */
#include "kernels/cluster.cuh"
#include "layernorm.cuh"

#define LNC_THREADS 512
#define LNC_UNROLL 4 /* overflow vectors a thread loads before using them */

/* MODE 0: the threads store y; 1: the copy engine does (kb_slice_store_piece);
 * 2: as 1, the kernel for rows that fit built for 3 blocks an SM; 3: the
 * threads' store with that kernel for 3 blocks an SM (the two effects apart).
 * OVF: rows may overflow the cluster's shared memory (the second read from
 * the L2). */
template <typename T, bool TANH, int MODE, bool OVF>
__global__ void __launch_bounds__(LNC_THREADS, MODE >= 2 && !OVF ? 3 : 2)
    layernorm_cluster_rows(const T *__restrict__ x, const T *__restrict__ gamma,
                           const T *__restrict__ beta, const T *__restrict__ bias,
                           T *__restrict__ y, float *__restrict__ mean_out,
                           float *__restrict__ rstd_out, int64_t rows, int64_t cols,
                           int64_t capv)
{
    constexpr int W = kb_vec_width<T>();
    constexpr int U = LNC_UNROLL;
    constexpr bool ENGINE = MODE == 1 || MODE == 2;
    extern __shared__ __align__(128) uint4 sl[];
    __shared__ __align__(8) uint64_t bar[KB_SLICE_CHUNKS];
    __shared__ float red[3][32];
    __shared__ __align__(16) float4 part;
    const int tid = threadIdx.x, lane = tid & 31;
    const unsigned cl = kb_cluster_size(), rank = kb_cluster_rank();
    const int64_t clusters = gridDim.x / cl;
    const uint32_t bar0 = kb_smem_u32(bar), sl0 = kb_smem_u32(sl);
    const uint32_t peer = kb_cluster_map(kb_smem_u32(&part), lane < (int)cl ? lane : 0);
    const float inv_cols = 1.0f / (float)cols;
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
        const float K = kb_load(xr, 0);

        /* The overflow, while the copy engine works: U vectors a step. */
        ln_wf w = {0.0f, 0.0f, 0.0f};
        const int64_t o0 = sc.lo + sc.ns;
        for (int64_t j0 = o0 + tid; OVF && j0 < sc.hi; j0 += (int64_t)U * LNC_THREADS) {
            uint4 r[U];
            int n = 0;
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int64_t j = j0 + (int64_t)u * LNC_THREADS;
                r[u] = j < sc.hi ? kb_ld128(xb + j * W) : make_uint4(0, 0, 0, 0);
                n += j < sc.hi ? W : 0;
            }
            float f[U * W];
#pragma unroll
            for (int u = 0; u < U; u++)
                kb_unpack<T>(r[u], &f[u * W]);
            w = ln_wf_merge(w, ln_chunk_stats<U * W>(f, n, K)); /* in range first: n counts a prefix */
        }

        /* The slice, piece by piece as it lands: two passes over the
         * thread's vectors of the piece in shared memory. */
        for (int c = 0; c < KB_SLICE_CHUNKS; c++) {
            kb_mbar_wait(bar0 + 8u * (uint32_t)c, it & 1u);
            const int64_t v0 = kb_slice_piece(sc.ns, c) + tid, v1 = kb_slice_piece(sc.ns, c + 1);
            float s = 0.0f;
            int64_t n = 0;
            for (int64_t j = v0; j < v1; j += LNC_THREADS) {
                float f[W];
                kb_unpack<T>(sl[j], f);
#pragma unroll
                for (int i = 0; i < W; i++)
                    s += f[i] - K;
                n += W;
            }
            if (n > 0) {
                const float mean = s / (float)n;
                float q = 0.0f;
                for (int64_t j = v0; j < v1; j += LNC_THREADS) {
                    float f[W];
                    kb_unpack<T>(sl[j], f);
#pragma unroll
                    for (int i = 0; i < W; i++) {
                        const float d = f[i] - K - mean;
                        q = fmaf(d, d, q);
                    }
                }
                const ln_wf p = {(float)n, mean, q};
                w = ln_wf_merge(w, p);
            }
        }
        if (rank == 0) {
            if (tid < sc.head)
                ln_wf_push(w, kb_load(xr, tid) - K);
            if (tid < sc.tail)
                ln_wf_push(w, kb_load(xr, sc.tail0 + tid) - K);
        }
        w = ln_block_wf(w, red);

        /* The cluster: publish, meet, merge the peers' partials in rank order. */
        if (it > 0)
            kb_cluster_wait(); /* the peers have read the last row's partial */
        if (tid == 0)
            part = make_float4(w.n, w.mean, w.m2, 0.0f);
        kb_cluster_arrive();
        kb_cluster_wait();
        ln_wf t = {0.0f, 0.0f, 0.0f};
        if (lane < (int)cl) {
            const float4 q = kb_ld_cluster_f4(peer);
            t.n = q.x;
            t.mean = q.y;
            t.m2 = q.z;
        }
        t = ln_warp_wf(t);
        kb_cluster_arrive();

        /* y from the slice, then from the overflow (the L2). ENGINE: y
         * replaces x in the slice, and the copy engine writes each piece out
         * once the block has computed it. */
        const float md = t.mean, rstd = rsqrtf(fmaf(t.m2, inv_cols, LN_EPS));
        const bool vec = sc.head == 0;
        const auto y_of = [&](float (&f)[W], int64_t v) {
            float g[W], bb[W];
            ln_affine_any<T>(gamma, beta, bias, sc.head + v * W, vec, g, bb);
#pragma unroll
            for (int i = 0; i < W; i++)
                f[i] = ln_gelu<TANH>(fmaf((f[i] - K - md) * rstd, g[i], bb[i]));
        };
        kb_slice_write<T, ENGINE, LNC_THREADS>(sl, sl0, yb, sc, y_of);
        for (int64_t j = o0 + tid; OVF && j < sc.hi; j += LNC_THREADS) {
            float f[W];
            kb_unpack<T>(kb_ld128(xb + j * W), f);
            y_of(f, j);
            kb_st128(yb + j * W, kb_pack<T>(f));
        }
        if (rank == 0) {
            for (int64_t j = tid; j < sc.head + sc.tail; j += LNC_THREADS) {
                const int64_t col = j < sc.head ? j : sc.tail0 + (j - sc.head);
                const float z = fmaf((kb_load(xr, col) - K - md) * rstd, kb_load(gamma, col),
                                     kb_load(beta, col) + kb_load(bias, col));
                kb_store(yr, col, ln_gelu<TANH>(z));
            }
            if (mean_out != nullptr && tid == 0) {
                mean_out[row] = K + md;
                rstd_out[row] = rstd;
            }
        }
        __syncthreads(); /* the slice and red are read before they are written again */
    }
    if (ENGINE && tid == 0)
        kb_bulk_wait<0>(); /* the slice stays until the copy engine is done */
    if (it > 0)
        kb_cluster_wait(); /* no block leaves while a peer may read its partial */
}

template <typename T, bool TANH, int MODE>
static cudaError_t launch_gelu(const kb_args *a, cudaStream_t s, const ln_ptrs<T> &p)
{
    static const char *const names[4][2] = {
        {"layernorm_cluster_rows", "layernorm_cluster_rows_l2"},
        {"layernorm_cluster_rows_engine", "layernorm_cluster_rows_engine_l2"},
        {"layernorm_cluster_rows_engine_b3", "layernorm_cluster_rows_engine_l2"},
        {"layernorm_cluster_rows_b3", "layernorm_cluster_rows_l2"}};
    const auto k = layernorm_cluster_rows<T, TANH, MODE, true>;
    const int64_t cols = a->shape[LN_COLS];
    kb_cluster_plan pl;
    cudaError_t e = kb_cluster_plan_rows(k, LNC_THREADS, p.rows, cols, sizeof(T), &pl);
    if (e != cudaSuccess)
        return e;
    /* Rows that fit run the kernel without the overflow loops, on its own
     * plan: its attributes set, its grid from its own occupancy (3 blocks an
     * SM where the slices allow). The threads' store (MODE 0) runs one
     * kernel for both, as it was measured. */
    auto kr = k;
    if constexpr (MODE > 0) {
        if (!pl.overflow) {
            const auto kf = layernorm_cluster_rows<T, TANH, MODE, false>;
            kb_cluster_plan pf;
            if ((e = kb_cluster_plan_rows(kf, LNC_THREADS, p.rows, cols, sizeof(T), &pf)) !=
                cudaSuccess)
                return e;
            if (!pf.overflow) {
                kr = kf;
                pl = pf;
            }
        }
    }
    const kb_dim3 grid = {pl.grid, 1, 1}, block = {LNC_THREADS, 1, 1};
    return kb_launch_cluster(a, s, kr, names[MODE][pl.overflow], grid, block, pl.smem, pl.cl,
                             p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, cols, pl.capv);
}

template <typename T, int MODE>
static cudaError_t launch_mode(const kb_args *a, cudaStream_t s, const ln_ptrs<T> &p)
{
    return a->shape[LN_GELU] ? launch_gelu<T, true, MODE>(a, s, p)
                             : launch_gelu<T, false, MODE>(a, s, p);
}

template <typename T> static cudaError_t launch_cluster(const kb_args *a, cudaStream_t s)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    if (p.rows <= 0 || p.cols <= 0)
        return cudaSuccess;
    if (!ln_aligned16(a))
        return cudaErrorMisalignedAddress; /* prepare skips such buffers */
    /* the threads' store with the 3-block kernel unless KBENCH_CLUSTER_STORE
     * says otherwise (header comment) */
    switch (kb_cluster_store_mode(3)) {
    case 1:
        return launch_mode<T, 1>(a, s, p);
    case 2:
        return launch_mode<T, 2>(a, s, p);
    case 3:
        return launch_mode<T, 3>(a, s, p);
    default:
        return launch_mode<T, 0>(a, s, p);
    }
}

/* Launches the cluster layernorm of a->in[0] (gamma, beta, b: in[1..3]) into
 * a->out[0] (and the mean and rstd into out[1], out[2] when the shape asks) on
 * stream s (the plan: kernels/cluster.cuh). Returns the launch's error, or
 * cudaErrorInvalidValue for an unknown dtype. */
extern "C" cudaError_t kb_layernorm_cluster(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_cluster, a, s)
}

/* The variant's prepare hook: skips (1, with the reason) on a GPU without
 * thread-block clusters or for buffers off 16-byte boundaries; -1 when the
 * runtime could not be asked. */
extern "C" int kb_layernorm_cluster_prepare(const kb_args *a, char *why, size_t why_size)
{
    return kb_cluster_prepare(a, 4, 1, "cluster", why, why_size);
}

/* wgmma.cu - the matrix product on Hopper's own machinery: tiles of A and B
 * brought into shared memory by the copy engine (TMA) through an mbarrier
 * ring, multiplied by wgmma into fp32 accumulators in registers, a producer
 * warpgroup feeding two consumer warpgroups, and a persistent grid.
 *
 * Idea. A block owns output tiles of BM x BN = 128 x 256 and walks K in steps
 * of BK = 64 (one 128-byte swizzled row of 16-bit elements). Its 384 threads
 * are three warpgroups:
 *   producer   (warpgroup 0, setmaxnreg.dec to 40 registers; one thread
 *              works) copies A's 128 x 64 and B's 256 x 64 box of each K step
 *              into a STAGES-deep ring of shared-memory slots
 *              (cp.async.bulk.tensor); each slot has a "full" mbarrier the copy
 *              engine completes and an "empty" one the consumers' warps arrive
 *              on when the tensor cores are done with it;
 *   consumers  (warpgroups 1 and 2, setmaxnreg.inc to 232) each own 64 rows of
 *              the tile: per K step four wgmma.m64n256k16, A and B both
 *              K-major from shared memory (the descriptors step 32 bytes along
 *              k inside the swizzled row); the group of step j is committed
 *              and step j - 1's waited for (wait_group 1), so the tensor cores
 *              always have the next step queued, and step j - 1's slot is
 *              released;
 *   epilogue   the accumulators (128 fp32 a thread), with bias + GELU
 *              applied when epilogue=1, are rounded and written into
 *              shared memory in the 128-byte swizzle, half a consumer's 64 x
 *              256 at a time, and one thread per consumer sends them to C
 *              with TMA stores that run on while the consumers start the next
 *              tile: C never makes a second trip through DRAM. The tile's
 *              bias is copied into shared memory (cp.async) at the tile's
 *              start, under its products;
 *   persistent one block per SM walks tiles t = blockIdx.x, + gridDim.x, ...;
 *              the producer runs ahead into the next tile while the consumers
 *              store, and tiles are numbered in groups of MW_GROUP_M tile rows
 *              so the blocks in flight share A's rows and B's columns in L2;
 *   pair       the blocks run in clusters of two on neighbouring tile rows
 *              with the same B columns: each copies half of B's 256 x 64 box
 *              and the copy engine multicasts it into both blocks' slots, so
 *              a slot is free again only when both blocks' consumers have
 *              arrived on its "empty" barrier (remote arrivals through the
 *              cluster's shared memory window). B's reads from the L2 halve.
 * Edges: TMA zero-fills rows and columns past M, N and K on loads and clips
 * stores at them; the tensor maps need 16-byte aligned rows: k a multiple of 8
 * (other k are skipped with that reason), and n a multiple of 8 for the TMA
 * store (other n store from registers, configuration 1).
 *
 * Registers: consumers 128 accumulators + addresses (232 available, launched
 * at 168 and moved by setmaxnreg; ptxas: no spills). Shared memory: 4 x (16 +
 * 32) KB ring + 2 x 16 KB of C + 1 KB of bias = 225 KB: one block per SM.
 *
 * Prediction (bf16, 4096^3, 137 GFLOP): a K step is 2 x 4 m64n256k16, 1024
 * clk for both consumers at 4096 dense flop/clk/SM; the ring needs 48 KB per
 * step per SM from the L2 (6.2 KB/clk over 132 SMs, near the L2's limit), so
 * the tensor pipe should stay 80-90% busy: 650-720 TFLOP/s beside cuBLAS's
 * 700-775. The store of a tile should cost ~2-3% of its 64 K steps at K =
 * 4096, the GELU about as much again.
 *
 * Measured on the H200 (bf16, TFLOP/s, median of 20-30 launches; alternatives
 * side by side in one process with cublasGemmEx, 2026-12-01):
 *   first version (C stored from registers, 4 stages): 4096^3 692-709 (0.92-
 *     0.94x cuBLAS), 8192^3 748-756 (0.95-0.96x); epilogue=1 8% slower. All
 *     shapes checked at the first run.
 *   the store left out (timing only): 803 at 4096^3, 171 vs 197 us: the store
 *     from the accumulator layout (4-byte pieces of eight rows a warp
 *     instruction) cost 13%, five times the prediction.
 *   C through shared memory and TMA stores: 3 stages + all of C staged (64
 *     KB): 746 (0.99x) at 4096^3 but 730 (0.925x) at 8192^3; 4 stages + half
 *     of C staged (two passes): 756 (1.00x) and 743 (0.95x). Kept.
 *   epilogue=1 with the bias read from global memory in the store: +8%, and
 *     still +7% with GELU replaced by the identity: each bias load waited out
 *     its latency behind the previous shared-memory store's memory clobber;
 *     the bias copied to shared memory at the tile's start: +2-4%. tanh.approx
 *     (one MUFU) instead of exp2 + reciprocal (two): 3% on epilogue=1.
 *   clusters of 2 with B multicast (each block copies half of B's box into
 *     both): 428 at 4096^3, 0.57x the plain kernel; the cluster launch without
 *     multicast (each block copying its whole B box, the slots released across
 *     the pair) ran as slow (420), so the cost is in the pairing, not the
 *     multicast; not found yet, not kept (configuration 3 keeps it to measure).
 *     Those runs released the slots with mbarrier.arrive.release.cluster:
 *     with the default semantics for the remote arrivals instead
 *     (kb_mbar_arrive_cluster), the pairing pays. kbench runs of 2026-12-01,
 *     configurations interleaved with cuBLAS in two rounds (the clock moved
 *     with the power cap between rounds: compare within a round):
 *       4096^3  plain+TMA store 756 / 669, pair 661 / 648, pair+TMA store
 *               783 / 703, cuBLAS 780 / 786;
 *       8192^3  plain+TMA store 653 / 650, pair 660 / 762, pair+TMA store
 *               685 / 681, cuBLAS 678 / 672.
 *     The pair with C through the copy engine (configuration 4) was the
 *     fastest of ours in three of the four rounds and is the default; its B
 *     reads from the L2 are half the plain kernel's. The committed report
 *     (kbench 86c852b, matmul run first in its call): 781.3 vs cuBLAS's 734.1
 *     (1.06x) at 4096^3 (clocks read after the batch samples: 1980 and
 *     1719 MHz), 709.8 vs 692.8 (1.02x) at 8192^3 (1543-1545 MHz);
 *     DRAM excess 1.80x against the plain kernel's 2.19x; epilogue=1 +2.7%.
 * In kbench's runs (cuBLASLt beside it, the same harness):
 *   06:19 UTC: 4096^3 721.1 vs 756.6 (0.953x), 8192^3 785.9 vs 707.3 (cuBLAS
 *     throttled); epilogue=1 188.0 us against its own 190.6 at epilogue=0;
 *   the committed report (results/h200/matmul.json, kbench d7d3a0e, after five
 *     minutes of attention at the GPU's power cap): 684.0 vs 723.3 (0.946x) at
 *     4096^3 and 687.0 vs 744.7 (0.92x) at 8192^3, epilogue=1 204.4 vs 200.9
 *     us (+1.7%). The SM clock while each ran: 1590 vs cuBLAS's 1680 MHz and
 *     1470 vs 1515 MHz; per clock the two are equal at 4096^3 and 0.95x at
 *     8192^3. This kernel pulls the GPU harder into its power cap than
 *     cuBLAS: the next step is less traffic per flop (the cluster pairing
 *     made to pay: half of B's L2 reads), not more issue.
 *   decode-like m=16, n=8192, k=8192: 79.6 us, 1694 GB/s, 0.44x cuBLAS (35.2
 *     us): 32 tiles of 256 columns for 132 SMs and a 128-row tile for 16 rows;
 *     a split of K across blocks would fill the GPU.
 *   2026-12-02 11:18 UTC (kbench 8cd6345, the committed report): 777.7 vs
 *     779.9 (0.997x) at 4096^3, 717.9 vs 784.5 (0.915x) at 8192^3, where
 *     cuBLAS ran its cold samples at 1979 MHz and this kernel at 1560 (3486
 *     against 3003 flop per SM clock; back to back 1533 against 1625 us,
 *     1.06x). Each alone in a process on another H200 (11:25 UTC, 8192^3):
 *     cuBLAS 1583 and 1587 us (1545 MHz), this kernel 1574, 1563 and 1575
 *     (1515-1530 MHz): 1.006-1.015x.
 *   2026-12-02 12:10 UTC, another H200, the clock traced every 10 ms: 8192^3
 *     pulls it from 1980 to 1500-1560 MHz within 0.1 s of the first launch
 *     (software power cap, ~690 W) for cuBLAS and this kernel alike; one
 *     variant a process this kernel is 1.026x, 0.993x and 1.033x cuBLAS with
 *     0.05 s, 0.5 s and 2 s of warm-up (run --warmup), all three rungs in
 *     one process 1.008x and 1.013x (--warmup 2): no order effect there, so
 *     the 11:18 run's 1979 MHz for cuBLAS came with that machine and moment.
 *     The report of 12:21 UTC (third H200): 783.2 vs 760.4 (1.03x) at
 *     4096^3, 706.1 vs 737.3 (0.958x) at 8192^3 (1515 against 1650 MHz: 3531
 *     against 3385 flop per SM clock); epilogue=1 196.0 us against 175.5 for
 *     epilogue=0, its samples at 1694 MHz against 1980 (3135 against 2997
 *     flop per SM clock; back to back 196.8 against 199.2 us). */
#include <stdio.h>

#include "kernels/hopper.cuh"
#include "kernels/tma.h"
#include "matmul.cuh"

#define MW_BM 128
#define MW_BN 256
#define MW_BK 64 /* 64 16-bit elements: one 128-byte swizzled row */
#define MW_WG 128 /* threads per warpgroup */
#define MW_NC 2   /* consumer warpgroups */
#define MW_THREADS (MW_WG * (MW_NC + 1))
#define MW_ROWS 64 /* rows per consumer: the m of wgmma */
#define MW_A_BYTES (MW_BM * MW_BK * 2)
#define MW_B_BYTES (MW_BN * MW_BK * 2)
/* C's staging for the copy engine: a consumer's 64 x 256 rows are four boxes
 * of 64 x 64 (128-byte swizzled rows, 8 KB each), staged CB at a time. */
#define MW_C_BOX 64
#define MW_C_BOXES (MW_BN / MW_C_BOX)
#define MW_C_BOX_BYTES (MW_ROWS * MW_C_BOX * 2)
/* Tile rows per group of the tile order: 8 x 128 rows of A (16 MB at K =
 * 8192) beside the B columns the in-flight blocks read. */
#define MW_GROUP_M 8
/* Registers: launched at 65536 / 384 rounded down to 8; setmaxnreg moves them. */
#define MW_REG_LAUNCH (65536 / MW_THREADS / 8 * 8)
#define MW_REG_PRODUCER 40
#define MW_REG_CONSUMER                                                                        \
    ((MW_THREADS * MW_REG_LAUNCH - MW_WG * MW_REG_PRODUCER) / (MW_WG * MW_NC) / 8 * 8)
/* Named barrier ids (0 is __syncthreads): consumer w's own is 1 + w. */
#define MW_BAR_CONSUMER 1

/* STAGES: slots of the ring; CL: blocks per cluster sharing B's tile (1, 2);
 * CB: C stored through shared memory by the copy engine, CB of a consumer's
 * four boxes at a time (0: straight from registers). */
template <int STAGES_, int CL_, int CB_> struct mw_cfg {
    static constexpr int STAGES = STAGES_, CL = CL_, CB = CB_;
    static constexpr bool TS = CB > 0;
    static constexpr int C_BYTES = MW_NC * CB * MW_C_BOX_BYTES;
    static constexpr int OFF_B = STAGES * MW_A_BYTES;
    static constexpr int OFF_C = OFF_B + STAGES * MW_B_BYTES;
    /* the tile's bias, in T, per consumer (copied in at the tile's start) */
    static constexpr int OFF_BIAS = OFF_C + C_BYTES;
    static constexpr int OFF_BAR = OFF_BIAS + (TS ? MW_NC * MW_BN * 2 : 0);
    static_assert(CB == 0 || MW_C_BOXES % (CB > 0 ? CB : 1) == 0, "whole passes");
    static constexpr size_t SMEM = (size_t)OFF_BAR + 2 * STAGES * 8 + KB_SW128_ATOM; /* + alignment */
};

/* The slot's full and empty barriers, 8 bytes each after the tiles. */
template <typename C> static __device__ __forceinline__ uint32_t mw_full(uint32_t bars, int st)
{
    return bars + 8u * (uint32_t)st;
}

template <typename C> static __device__ __forceinline__ uint32_t mw_empty(uint32_t bars, int st)
{
    return bars + 8u * (uint32_t)(C::STAGES + st);
}

/* A consumer warp is done with slot st: one arrival on its empty barrier in
 * every block of the cluster (each copies into both). */
template <typename C> static __device__ __forceinline__ void mw_release(uint32_t bars, int st)
{
    if (C::CL == 1)
        kb_mbar_arrive(mw_empty<C>(bars, st));
    else
        for (int r = 0; r < C::CL; r++)
            kb_mbar_arrive_cluster(mw_empty<C>(bars, st), (unsigned)r);
}

/* Output tile t as (tile row tm, tile column tn): groups of MW_GROUP_M tile
 * rows, down the rows first inside a group. */
static __device__ __forceinline__ void mw_tile(int t, int tiles_m, int tiles_n, int *tm, int *tn)
{
    const int per_group = MW_GROUP_M * tiles_n;
    const int g = t / per_group, first = g * MW_GROUP_M;
    const int rows = min(MW_GROUP_M, tiles_m - first);
    const int r = t - g * per_group;
    *tm = first + r % rows;
    *tn = r / rows;
}

/* The producer: one thread issues every copy of the block, tile after tile;
 * the ring's position `it` runs on across tiles. With CL = 2 the two blocks of
 * a cluster take vertically adjacent tiles (the same columns of B): each
 * copies its own A box and half of the B box, multicast into both blocks. */
template <typename C>
static __device__ __forceinline__ void mw_produce(const CUtensorMap *ta, const CUtensorMap *tb,
                                                  uint32_t sbase, uint32_t bars, int tiles_m,
                                                  int tiles_n, int ktiles, unsigned rank)
{
    constexpr int CL = C::CL;
    kb_tma_prefetch_map(ta);
    kb_tma_prefetch_map(tb);
    const int tiles_mc = (tiles_m + CL - 1) / CL, total = tiles_mc * tiles_n;
    const int cid = blockIdx.x / CL, nclusters = gridDim.x / CL;
    constexpr int B_ROWS = MW_BN / CL; /* rows of B each block of a cluster copies */
    int it = 0;
    for (int u = cid; u < total; u += nclusters) {
        int pm, tn;
        mw_tile(u, tiles_mc, tiles_n, &pm, &tn);
        const int tm = pm * CL + (int)rank;
        for (int kt = 0; kt < ktiles; kt++, it++) {
            const int st = it % C::STAGES;
            const unsigned ph = (unsigned)(it / C::STAGES) & 1u;
            const uint32_t full = mw_full<C>(bars, st);
            kb_mbar_wait(mw_empty<C>(bars, st), ph ^ 1u);
            kb_mbar_expect_tx(full, MW_A_BYTES + MW_B_BYTES);
            kb_tma_load_3d(sbase + st * MW_A_BYTES, ta, full, kt * MW_BK, tm * MW_BM, 0);
            const uint32_t sb = sbase + C::OFF_B + st * MW_B_BYTES;
            if (CL == 1)
                kb_tma_load_3d(sb, tb, full, kt * MW_BK, tn * MW_BN, 0);
            else
                kb_tma_load_3d_multicast(sb + rank * B_ROWS * KB_SW128_ROW, tb, full, kt * MW_BK,
                                         tn * MW_BN + (int)rank * B_ROWS, 0,
                                         (uint16_t)((1u << CL) - 1u));
        }
    }
}

/* One K step of a consumer: four m64n256k16 over the slot at (sa, sb). */
template <typename T>
static __device__ __forceinline__ void mw_step(float (&acc)[128], uint32_t sa, uint32_t sb,
                                               int first)
{
#pragma unroll
    for (int kk = 0; kk < MW_BK / 16; kk++) {
        const uint64_t da = kb_wgmma_desc(sa + kk * 32, 16, KB_SW128_ATOM);
        const uint64_t db = kb_wgmma_desc(sb + kk * 32, 16, KB_SW128_ATOM);
        kb_wgmma_m64n256k16_ss<T>(acc, da, db, !(first && kk == 0));
    }
}

/* The accumulators of consumer w's 64 rows of tile (tm, tn) into C straight
 * from registers: this thread's rows are r and r + 8 (r = 16 warp + lane /
 * 4), its columns 2 (lane % 4) + 8 j and the next, j = 0..31 (the wgmma
 * accumulator layout). */
template <typename T, bool EPI>
static __device__ __forceinline__ void mw_store(const float (&acc)[128], T *__restrict__ c,
                                                const T *__restrict__ bias, int w, int tm, int tn,
                                                int m, int n)
{
    const int tid = threadIdx.x % MW_WG, lane = tid % 32;
    const int64_t row0 = (int64_t)tm * MW_BM + w * MW_ROWS + 16 * (tid / 32) + lane / 4;
    const int64_t col0 = (int64_t)tn * MW_BN + 2 * (lane % 4);
    T *crow0 = c + row0 * n, *crow1 = crow0 + 8 * (int64_t)n;
    const bool in0 = row0 < m, in1 = row0 + 8 < m;
#pragma unroll
    for (int j = 0; j < MW_BN / 8; j++) {
        const int64_t col = col0 + 8 * j;
        float2 b = make_float2(0.0f, 0.0f);
        if (EPI)
            b = mm_bias2(bias, col, n);
        if (in0)
            mm_store2<T, EPI>(crow0, col, n, acc[4 * j], acc[4 * j + 1], b);
        if (in1)
            mm_store2<T, EPI>(crow1, col, n, acc[4 * j + 2], acc[4 * j + 3], b);
    }
}

/* Starts copying the bias of tile column tn into this consumer's sbias
 * (cp.async: it lands while the tile's products run): two elements a thread,
 * zero-filled past n. */
template <typename T>
static __device__ __forceinline__ void mw_bias_fetch(uint32_t sbias, const T *__restrict__ bias,
                                                     int tn, int n)
{
    const int tid = threadIdx.x % MW_WG;
    const int col = tn * MW_BN + 2 * tid;
    const int bytes = col >= n ? 0 : col + 1 >= n ? 2 : 4;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 "cp.async.commit_group;\n" ::"r"(sbias + 4 * tid),
                 "l"(bytes ? bias + col : bias), "r"(bytes)
                 : "memory");
}

/* The same through the copy engine: the pairs, rounded to T, go into
 * consumer w's boxes of 64 x 64 at sc in the 128-byte swizzle (chunk j % 8 of
 * row r at (j % 8) ^ (r % 8): the eight rows a warp writes at once fall in
 * eight different bank groups), CB boxes a pass, and one thread sends each
 * pass to C with TMA stores that run on while the consumers go on (to the next
 * pass, or the next tile). Before boxes are rewritten, the stores that read
 * them must be done reading. The bias comes from sbias (mw_bias_fetch). */
template <typename T, bool EPI, int CB>
static __device__ __forceinline__ void mw_store_tma(const float (&acc)[128], uint32_t sc,
                                                    uint32_t sbias, const CUtensorMap *tc, int w,
                                                    int tm, int tn)
{
    constexpr int J = CB * MW_C_BOX / 8; /* column pairs of 8 a pass */
    const int tid = threadIdx.x % MW_WG, lane = tid % 32;
    const int r0 = 16 * (tid / 32) + lane / 4;
    if (EPI)
        asm volatile("cp.async.wait_all;\n" ::: "memory");
#pragma unroll
    for (int pass = 0; pass < MW_C_BOXES / CB; pass++) {
        if (tid == 0)
            kb_bulk_wait_read<0>();
        kb_bar_sync(MW_BAR_CONSUMER + w, MW_WG); /* also: everyone's bias has landed */
        float2 b[J];
#pragma unroll
        for (int jj = 0; jj < J; jj++) {
            b[jj] = make_float2(0.0f, 0.0f);
            if (EPI) {
                unsigned u;
                asm volatile("ld.shared.b32 %0, [%1];\n"
                             : "=r"(u)
                             : "r"(sbias + 2 * (8 * (pass * J + jj) + 2 * (lane % 4))));
                b[jj] = kb_unpack2<T>(u);
            }
        }
#pragma unroll
        for (int jj = 0; jj < J; jj++) {
            const int j = pass * J + jj;
            float v[4] = {acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]};
            if (EPI)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[e] = mm_gelu(v[e] + (e & 1 ? b[jj].y : b[jj].x));
            const uint32_t box = sc + (jj / 8) * MW_C_BOX_BYTES + 4 * (lane % 4);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = r0 + 8 * h;
                const uint32_t addr = box + r * KB_SW128_ROW + (((j % 8) ^ (r & 7)) << 4);
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr),
                             "r"(kb_pack2<T>(v[2 * h], v[2 * h + 1]))
                             : "memory");
            }
        }
        kb_fence_proxy_async();
        kb_bar_sync(MW_BAR_CONSUMER + w, MW_WG);
        if (tid == 0) {
#pragma unroll
            for (int bx = 0; bx < CB; bx++)
                kb_tma_store_3d(tc, sc + bx * MW_C_BOX_BYTES,
                                tn * MW_BN + (pass * CB + bx) * MW_C_BOX, tm * MW_BM + w * MW_ROWS,
                                0);
            kb_bulk_commit();
        }
    }
}

template <typename T, bool EPI, typename C>
__global__ void __launch_bounds__(MW_THREADS, 1)
    mm_wgmma(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
             const __grid_constant__ CUtensorMap tc, T *__restrict__ c,
             const T *__restrict__ bias, int m, int n, int tiles_m, int tiles_n, int ktiles)
{
    constexpr int CL = C::CL;
    extern __shared__ __align__(KB_SW128_ATOM) uint8_t mw_smem[];
    const uint32_t sbase =
        (kb_smem_u32(mw_smem) + KB_SW128_ATOM - 1) & ~(uint32_t)(KB_SW128_ATOM - 1);
    const uint32_t bars = sbase + C::OFF_BAR;
    const int wg = threadIdx.x / MW_WG;
    const unsigned rank = CL > 1 ? kb_cluster_rank() : 0u;

    if (threadIdx.x == 0) {
        for (int st = 0; st < C::STAGES; st++) {
            kb_mbar_init(mw_full<C>(bars, st), 1);
            /* one arrival per consumer warp of every block whose copies land here */
            kb_mbar_init(mw_empty<C>(bars, st), 4 * MW_NC * CL);
        }
        kb_mbar_fence_init();
    }
    if (CL > 1)
        kb_cluster_sync(); /* the barriers exist before the other block signals them */
    else
        __syncthreads();
    if (wg == 0) {
        kb_setmaxnreg_dec<MW_REG_PRODUCER>();
        if (threadIdx.x == 0)
            mw_produce<C>(&ta, &tb, sbase, bars, tiles_m, tiles_n, ktiles, rank);
    } else {
        kb_setmaxnreg_inc<MW_REG_CONSUMER>();
        const int w = wg - 1, lane = threadIdx.x % 32;
        const uint32_t sa0 = sbase + w * MW_ROWS * KB_SW128_ROW, sb0 = sbase + C::OFF_B;
        const uint32_t sc = sbase + C::OFF_C + w * C::CB * MW_C_BOX_BYTES;
        const uint32_t sbias = sbase + C::OFF_BIAS + w * MW_BN * 2;
        const int tiles_mc = (tiles_m + CL - 1) / CL, total = tiles_mc * tiles_n;
        const int cid = blockIdx.x / CL, nclusters = gridDim.x / CL;
        int it = 0;
        for (int u = cid; u < total; u += nclusters) {
            int pm, tn;
            mw_tile(u, tiles_mc, tiles_n, &pm, &tn);
            float acc[128];
            if (EPI && C::TS)
                mw_bias_fetch<T>(sbias, bias, tn, n);
            for (int kt = 0; kt < ktiles; kt++, it++) {
                const int st = it % C::STAGES;
                kb_mbar_wait(mw_full<C>(bars, st), (unsigned)(it / C::STAGES) & 1u);
                kb_wgmma_fence();
                mw_step<T>(acc, sa0 + st * MW_A_BYTES, sb0 + st * MW_B_BYTES, kt == 0);
                kb_wgmma_commit();
                kb_wgmma_wait<1>(); /* step kt - 1 is done: its slot is free */
                if (kt > 0 && lane == 0)
                    mw_release<C>(bars, (it - 1) % C::STAGES);
            }
            kb_wgmma_wait<0>();
            kb_fence_regs(acc);
            if (lane == 0)
                mw_release<C>(bars, (it - 1) % C::STAGES);
            if (C::TS)
                mw_store_tma<T, EPI, (C::CB > 0 ? C::CB : 1)>(acc, sc, sbias, &tc, w,
                                                               pm * CL + (int)rank, tn);
            else
                mw_store<T, EPI>(acc, c, bias, w, pm * CL + (int)rank, tn, m, n);
        }
        if (C::TS && threadIdx.x % MW_WG == 0)
            kb_bulk_wait<0>(); /* the last stores are out before the block's memory goes */
    }
    if (CL > 1)
        kb_cluster_sync(); /* no block leaves while the other may still signal it */
}

/* ---- host side ------------------------------------------------------------------------ */

/* A configuration's kernels (epilogue off, on) and the launch facts they share. */
typedef struct mw_config {
    int cluster;     /* blocks per cluster sharing B's tile: 1 or 2 */
    int tma_store;   /* C through shared memory and the copy engine: needs n % 8 == 0 */
    size_t smem;
    const void *kern[2];
    const char *name[2];
} mw_config;

#define MW_CONFIG(T, ST, CL, CB, name)                                                         \
    {CL, CB > 0, mw_cfg<ST, CL, CB>::SMEM,                                                     \
     {(const void *)mm_wgmma<T, false, mw_cfg<ST, CL, CB>>,                                    \
      (const void *)mm_wgmma<T, true, mw_cfg<ST, CL, CB>>},                                    \
     {name, name "_gelu"}}

/* The configurations measured (see the header); the variant runs MW_DEFAULT,
 * and where n is no multiple of 8 (the copy engine's rows of C must be
 * 16-byte multiples) the same pairing with C stored from registers;
 * KBENCH_MM_WGMMA_CONFIG=i runs the i-th instead (the kernel's name in the
 * report says which ran). */
#define MW_DEFAULT 4
template <typename T> static const mw_config *mw_configs(int *count)
{
    static const mw_config list[] = {
        MW_CONFIG(T, 4, 1, 2, "mm_wgmma_128x256x64_s4_tmastore2"),
        MW_CONFIG(T, 4, 1, 0, "mm_wgmma_128x256x64_s4"),
        MW_CONFIG(T, 3, 1, 4, "mm_wgmma_128x256x64_s3_tmastore4"),
        MW_CONFIG(T, 4, 2, 0, "mm_wgmma_128x256x64_s4_c2"),
        MW_CONFIG(T, 4, 2, 2, "mm_wgmma_128x256x64_s4_c2_tmastore2"),
    };
    *count = (int)KB_COUNT(list);
    return list;
}

/* What every launch of one case shares, found once by prepare (or the first
 * launch with other buffers or another shape): the configuration, the number
 * of clusters that fit on the GPU at once and the tensor maps. Nothing is
 * looked up between the timing events. */
typedef struct mw_plan {
    kb_case_key key;
    const mw_config *cfg;
    int clusters;        /* the persistent grid: clusters resident at once */
    CUtensorMap maps[3]; /* A, B, C */
} mw_plan;

static mw_plan mw_current;

/* The launch configuration of kernel k over `clusters` clusters of cl blocks. */
static cudaLaunchConfig_t mw_launch_config(const mw_config *cfg, int64_t clusters,
                                           cudaStream_t s, cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t lc = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)cfg->cluster;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    lc.gridDim = dim3((unsigned)(clusters * cfg->cluster), 1, 1);
    lc.blockDim = dim3(MW_THREADS, 1, 1);
    lc.dynamicSmemBytes = cfg->smem;
    lc.stream = s;
    lc.attrs = attr;
    lc.numAttrs = 1;
    return lc;
}

template <typename T> static cudaError_t mw_setup(const kb_args *a, mw_plan *p)
{
    const mw_config *cfg = p->cfg;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 2 && e == cudaSuccess; i++)
        e = kb_allow_smem_once(cfg->kern[i], cfg->smem);
    int sms = 0;
    if (e == cudaSuccess)
        e = kb_current_sms(&sms);
    p->clusters = sms;
    if (e == cudaSuccess && cfg->cluster > 1) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t lc = mw_launch_config(cfg, sms / cfg->cluster, NULL, &attr);
        e = cudaOccupancyMaxActiveClusters(&p->clusters, cfg->kern[0], &lc);
    }
    if (e == cudaSuccess && p->clusters < 1)
        e = cudaErrorInvalidConfiguration;
    const mm_shape sh = mm_shape_of(a);
    const uint64_t rows[3] = {(uint64_t)sh.m, (uint64_t)sh.n, (uint64_t)sh.m};
    const uint64_t inner[3] = {(uint64_t)sh.k, (uint64_t)sh.k, (uint64_t)sh.n};
    const uint32_t box_rows[3] = {MW_BM, (uint32_t)(MW_BN / cfg->cluster), MW_ROWS};
    const void *base[3] = {a->in[0], a->in[1], a->out[0]};
    for (int i = 0; i < (cfg->tma_store ? 3 : 2) && e == cudaSuccess; i++) {
        const uint64_t dims[3] = {inner[i], rows[i], 1};
        const uint64_t strides[2] = {inner[i] * 2, inner[i] * rows[i] * 2};
        const uint32_t box[3] = {(uint32_t)(i == 2 ? MW_C_BOX : MW_BK), box_rows[i], 1};
        e = kb_tma_map_3d(&p->maps[i], base[i], a->dtype, dims, strides, box);
    }
    return e;
}

/* Finds the plan for a's case unless mw_current already holds it, and points
 * *plan (when plan is not NULL) at mw_current, usable when cudaSuccess is
 * returned. Returns the CUDA error of a step that failed. */
template <typename T> static cudaError_t mw_plan_for(const kb_args *a, const mw_plan **plan)
{
    mw_plan *p = &mw_current;
    if (plan)
        *plan = p;
    if (p->cfg && kb_case_key_same(&p->key, a))
        return cudaSuccess;
    int count;
    const mw_config *list = mw_configs<T>(&count);
    int c = kb_env_int("KBENCH_MM_WGMMA_CONFIG", MW_DEFAULT, 0, count - 1);
    if (list[c].tma_store && mm_shape_of(a).n % 8 != 0)
        c = list[c].cluster > 1 ? 3 : 1; /* the same pairing, C from registers */
    p->cfg = &list[c];
    cudaError_t e = mw_setup<T>(a, p);
    if (e != cudaSuccess) {
        p->cfg = NULL; /* invalid until every step succeeded */
        return e;
    }
    kb_case_key_of(a, MM_EPILOGUE + 1, &p->key);
    return cudaSuccess;
}

template <typename T> static cudaError_t launch_mw(const kb_args *a, cudaStream_t s)
{
    const mw_plan *p;
    cudaError_t e = mw_plan_for<T>(a, &p);
    if (e != cudaSuccess)
        return e;
    const mw_config *cfg = p->cfg;
    const mm_shape sh = mm_shape_of(a);
    const int64_t tiles_m = (sh.m + MW_BM - 1) / MW_BM, tiles_n = (sh.n + MW_BN - 1) / MW_BN;
    const int64_t ktiles = (sh.k + MW_BK - 1) / MW_BK;
    const int64_t units = (tiles_m + cfg->cluster - 1) / cfg->cluster * tiles_n;
    if (units > 0x7fffffff || ktiles > 0x7fffffff || sh.m > 0x7fffffff || sh.n > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    const int64_t clusters = units < p->clusters ? units : p->clusters;
    const int epi = sh.epilogue != 0;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t lc = mw_launch_config(cfg, clusters, s, &attr);
    kb_note_launch(a->log, cfg->kern[epi], cfg->name[epi], (kb_dim3){lc.gridDim.x, 1, 1},
                   (kb_dim3){(unsigned)MW_THREADS, 1, 1}, cfg->smem);
    T *c = (T *)a->out[0];
    const T *bias = (const T *)a->in[2];
    int m = (int)sh.m, n = (int)sh.n, tm = (int)tiles_m, tn = (int)tiles_n, kt = (int)ktiles;
    void *args[] = {(void *)&p->maps[0], (void *)&p->maps[1], (void *)&p->maps[2], &c,
                    (void *)&bias, &m, &n, &tm, &tn, &kt};
    e = cudaLaunchKernelExC(&lc, cfg->kern[epi], args);
    return e != cudaSuccess ? e : cudaGetLastError();
}

/* Launches the TMA + wgmma product of a->in[0], a->in[1] (and the bias
 * epilogue) into a->out[0] on stream s (fp16 and bf16; a Hopper GPU). */
extern "C" cudaError_t kb_matmul_wgmma(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE16(launch_mw, a, s) /* fp32 is not in the variant's dtype mask */
}

/* The tensor maps want 16-byte aligned rows of A and B: k a multiple of 8. */
extern "C" int kb_matmul_wgmma_unsupported(const int64_t *shape, kb_dtype d, char *why,
                                           size_t why_size)
{
    (void)d;
    return mm_unsupported_k8(shape,
                             "wgmma loads A and B with the copy engine, which needs rows of "
                             "16-byte multiples",
                             why, why_size);
}

/* The variant's prepare: a GPU other than Hopper is a skip (sm_90a: wgmma,
 * setmaxnreg); finds the case's plan, so that the first timed launch does no
 * more than the others. */
extern "C" int kb_matmul_wgmma_prepare(const kb_args *a, char *why, size_t why_size)
{
    int r = kb_require_sm90a("wgmma", why, why_size);
    if (r != 0)
        return r;
    cudaError_t e = a->dtype == KB_BF16 ? mw_plan_for<__nv_bfloat16>(a, NULL)
                                            : mw_plan_for<__half>(a, NULL);
    if (e != cudaSuccess) {
        snprintf(why, why_size, "preparing wgmma failed: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

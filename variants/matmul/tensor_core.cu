/* tensor_core.cu - the matrix product on the tensor cores the way Ampere
 * taught it: mma.sync fed by ldmatrix from swizzled shared memory, and a
 * multi-stage cp.async pipeline bringing the next tiles in while the current
 * one is multiplied.
 *
 * Idea. A block of 8 warps owns a 128 x 256 tile of C and walks K in steps of
 * BK = 64. Each step's A (128 x 64) and B (256 x 64, B being N x K) tiles are
 * copied global -> shared by cp.async (16 bytes a thread a copy, no register
 * round trip) into one of STAGES = 3 slots, so two steps are in flight while
 * one is computed. A 128-byte row of a tile holds eight 16-byte chunks; chunk
 * c of row r is stored at c ^ (r % 8), so the eight rows an ldmatrix reads hit
 * eight different bank groups (no conflicts) and the copies stay 16-byte
 * wide. Each warp owns a 64 x 64 tile of C: per k16 slice it loads A's 4 m16
 * fragments and B's 8 n8 fragments with ldmatrix.x4 and issues 32
 * mma.m16n8k16 into 128 fp32 accumulators a thread. The next slice's
 * fragments are loaded before the current slice's mmas are issued (two
 * fragment sets), the next step's copies are spread over the slices, and the
 * barrier sits at the last slice only. The epilogue (bias + GELU when
 * epilogue=1) is applied to the accumulators, the tile written into the freed
 * slots and stored as whole 16-byte pieces of rows: fused, as in the wgmma
 * rung. Blocks are numbered in groups of 8 tile rows (L2 reuse).
 * Edges: rows past M or N and chunks past K are zero-filled by cp.async's
 * source size; k must be a multiple of 8 (16-byte aligned rows), other k are
 * skipped with that reason.
 *
 * Registers: 128 accumulators + 2 x 32 fragment registers + addresses: 254,
 * no spills; one block (256 threads) per SM. Shared memory: 3 x (16 + 32) KB
 * = 144 KB.
 *
 * Prediction (bf16, 4096^3): taking mma.sync on Hopper to issue one m16n8k16
 * per 8 clocks per SM sub-partition (2048 flop/clk/SM, half of wgmma's 4096;
 * published microbenchmarks put it at half to two thirds): about
 * 500 TFLOP/s at the clocks this GPU holds under load; with ldmatrix and the
 * barrier hidden, 420-480 TFLOP/s, ~0.6x cuBLAS.
 *
 * Measured on the H200 (bf16, TFLOP/s, beside cublasGemmEx in one process,
 * 2026-12-01): the first version (ldmatrix and mma of a slice back to back,
 * every copy at the step's start, C stored from the accumulators) 335 at
 * 4096^3 (0.46x); the inline asm was volatile, so nothing moved: the next
 * slice's fragments loaded ahead and the copies spread over the slices made
 * it 411-414 (0.55x); C through shared memory in whole rows 451 (0.60x), 433-
 * 459 at 8192^3 (0.55-0.59x). 4 stages: the same within 2%; 256 x 128 blocks
 * (4 x 2 warps): 401-449; 128 x 128 blocks of 4 warps, two blocks per SM:
 * 347-357. KBENCH_TC_CONFIG=1..3 runs those. In kbench's runs: 454.4 vs
 * cuBLASLt 756.6 (0.601x) at 4096^3 and 440.7 vs 707.3 (0.62x) at 8192^3 at
 * 06:19 UTC; the committed report (results/h200/matmul.json, after five
 * minutes of attention at the power cap): 420.3 vs 723.3 (0.58x) and 443.2 vs
 * 744.7 (0.595x). At 443 TFLOP/s and the 1830 MHz it ran at, it issues an
 * mma every 8.9 clocks per sub-partition: 90% of the rate assumed above, if
 * that rate holds; the 3.9 waves of 512 tiles at 4096^3 (the last a 116-block
 * wave) and each block's prologue account for most of the rest.
 * Tried and not kept (H200, 2026-12-01 17:50 UTC): a persistent form, one
 * block an SM walking its tiles as one stream of k steps (the next tile's
 * first copies issued in the current tile's last steps, C staged in its own
 * 64 KB so its stores drain under the next tile's products; 234 registers,
 * no spills), predicted +3-5% at 4096^3 on the theory that each tile's
 * empty pipeline at the start and the store of C at the end were the gap.
 * Two interleaved rounds, bf16 TFLOP/s, persistent / one block a tile, each
 * beside cuBLAS in its run: 4096^3 404, 420 / 422, 425 (cuBLAS 722-792);
 * 8192^3 430, 416 / 410, 424; epilogue=1 392, 405 / 409, 400; a whole matmul
 * report with the persistent form: 430 (0.54x cuBLAS) at 4096^3 and 456
 * (0.64x) at 8192^3. No gain: the time is not at the tiles' ends but in
 * the steady state of the k loop. That session's one-block-a-tile figures
 * were 0.54x at 4096^3 (cuBLAS at 788-792 and the GPU at its power cap):
 * below the committed report's 0.58x, so the margin to 0.6x at 4096^3 is
 * about 10%, of which the mma.sync rate leaves little.
 * The ceiling measured (bench/mma_peak.cu, H200, 2026-12-01 19:38 UTC, flop
 * per SM clock): mma.sync m16n8k16 from registers issues 2579-2707 (4-16
 * warps an SM, 8 or 32 accumulators a warp; 591-638 TFLOP/s), two thirds of
 * wgmma's 4096, not the half taken above; with this rung's fragment loads
 * beside it (8 ldmatrix.x4 per 32 mma, the 64 x 64 warp tile), each load
 * feeding the next 4 mmas at once, 2153 at 8 warps an SM (501 TFLOP/s) and
 * 1675 at 4. That form leaves each load's latency in the way of its mmas,
 * which this rung hides by loading the next slice's fragments a slice ahead,
 * so 501 is a floor of the ceiling, not the ceiling: 420-465 TFLOP/s is 84-93%
 * of it. The probe's `ahead` form (each group's fragments loaded a group
 * before it: 2026-12-01 21:15 UTC, flop per SM clock, now -> ahead): 2115 ->
 * 2150 at 8 warps an SM, 1675 -> 1795 at 4. At 8 warps the loads' latency is
 * hidden already; their issue beside the mmas is what costs (a fifth of the
 * rate). The ceiling of this warp tile is so about 2150. In the committed
 * report the rung did 457 TFLOP/s at 4096^3 at 1965 MHz: 1762 flop per SM
 * clock, 82% of it; 0.6x cuBLAS's 793 there is 476 TFLOP/s, 1835 at that
 * clock, 85%. A larger warp
 * tile would cut the reads (96 x 64: 10 ldmatrix per 48 mma, -17%) but needs
 * 192 accumulators a thread, and with fewer than 8 warps an SM the rate falls
 * (4 warps: 393 TFLOP/s in the same form).
 * Tried and not kept (H200, 2026-12-01 23:30 UTC, bf16, beside cuBLAS in
 * each run; code in commit ea8c084): k steps of 128 in two 96 KB slots, so
 * that a step's wait, barrier and copy issue come once per 256 mmas a warp
 * instead of 128, predicted +2-4%. TFLOP/s, BK 128 / BK 64: 4096^3 400.1 /
 * 426.4, 8192^3 430.2 / 432.9, 4095 x 4097 x 1000 201.9 / 209.6 (255 against
 * 244 registers): the step's overhead is not the gap; two stages leave one
 * step in flight where three left two.
 * Tried and not kept (H200, 2026-12-02 09:25 UTC, bf16; code in commit
 * 1756a44): the slots handed over on mbarriers instead of a block
 * barrier a step (four slots, two steps in flight as here; full[s] completed
 * by cp.async.mbarrier.arrive, empty[s] by each warp after its last mma on
 * the slot), so that a warp waits for the others to be done with a step two
 * behind its own rather than meeting them every step; predicted +3-6% if
 * the barrier were a tenth of the stalls. The stall sampling of this rung
 * (4096^3, same call) put it elsewhere: wait (fixed-latency dependencies,
 * the mmas' issue spacing) 42% and math-pipe throttle 22% of the samples,
 * the barrier not among the top two. TFLOP/s, mbarriers / barrier, two
 * interleaved rounds beside cuBLAS: 4096^3 434, 428 / 429, 432; 8192^3
 * 417, 417 / 442, 467; epilogue=1 407, 421 / 423, 426 (244 registers
 * both). Passed the check at 4095 x 4097 x 1000, 16 x 8192 x 8192 and three
 * small shapes, and memcheck; the warps' drift buys nothing when they are
 * all waiting on the same pipe.
 * Kept (H200, 2026-12-02 11:05 UTC, bf16): the k loop's SASS (nvdisasm of
 * the sm_90 cubin) held 318 instructions a step, 128 HMMA, 32 LDSM and 12
 * LDGSTS; most of the other ~146 were the copies' edge handling (row masks,
 * source sizes, 64-bit row offsets and selects), recomputed every step since
 * 244 registers leave no room to keep them. A block whose tile lies wholly
 * inside A, B and K (every block but the edge ones) now copies without it
 * (tc_copier<T, C, false>, plain cp.async): 242 instructions a step.
 * Predicted +3-6% if the issue slots beside the HMMAs were what cost.
 * Measured, two interleaved rounds, edge copies everywhere -> plain ones
 * inside, flop per SM clock (the clocks moved between 1740 and 1975 MHz
 * from run to run, cuBLAS's with them, so the figure without the clock):
 * 4096^3 1856, 1864 -> 1903, 1910 (+2.5%); 8192^3 1967, 1943 -> 2014, 2014
 * (+3%); epilogue=1 1797, 1874 -> 1861, 1877. Stall samples at 4096^3:
 * wait 34%, math-pipe throttle 30% (42% and 22% before): nearer the pipe,
 * 88% of the 2150 above. Awkward shapes (4095 x 4097 x 1000, 16 x 8192 x
 * 8192, 130 x 300 x 72, fp16 and bf16) pass the check, memcheck clean.
 * KBENCH_TC_WHOLE=0 gives every block the edge copies (the A/B). The
 * committed report (kbench 8cd6345, 11:18 UTC): 495.3 vs cuBLAS's 779.9
 * TFLOP/s (0.635x) at 4096^3 (1980 MHz: 1895 flop per SM clock), 463.4 vs
 * 784.5 (0.59x) at 8192^3 (1769 MHz against cuBLAS's 1979: 1984 flop per
 * SM clock, 92% of the 2150; back to back 0.68x). The report after it
 * (12:21 UTC, another H200, same kernels): 461.9 vs 760.4 (0.607x) at
 * 4096^3 (1830 MHz against cuBLAS's 1686: 1912 flop per SM clock), 511.4 vs
 * 737.3 (0.69x) at 8192^3 (1960 MHz: 1977, 92%). */
#include <stdio.h>

#include <type_traits>

#include "kernels/mma.cuh"
#include "matmul.cuh"

#define TC_BK 64
#define TC_ROW_BYTES (TC_BK * 2) /* 128: eight 16-byte chunks */

/* BM x BN block tile, WM_ x WN_ warps (64 x 64 each), STAGES slots, MINB
 * blocks per SM asked of the register allocator. */
template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int MINB_> struct tc_cfg {
    static constexpr int BM = BM_, BN = BN_, WARPS_M = WM_, WARPS_N = WN_;
    static constexpr int STAGES = STAGES_, MINB = MINB_;
    static constexpr int THREADS = 32 * WM_ * WN_;
    static constexpr int WM = BM / WM_, WN = BN / WN_; /* a warp's tile */
    static constexpr int MI = WM / 16, NI = WN / 8;    /* its m16 and n8 fragments */
    static constexpr int A_BYTES = BM * TC_ROW_BYTES, B_BYTES = BN * TC_ROW_BYTES;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int SMEM = STAGES * STAGE_BYTES;
    static_assert(A_BYTES % (16 * THREADS) == 0 && B_BYTES % (16 * THREADS) == 0,
                  "whole chunks per thread");
};

/* The byte offset of 16-byte chunk ch of row r in a swizzled tile. */
static __device__ __forceinline__ uint32_t tc_swz(int r, int ch)
{
    return (uint32_t)(r * TC_ROW_BYTES + ((ch ^ (r & 7)) << 4));
}

/* A thread's share of the copies: chunk ch = tid % 8 of rows tid / 8 + i
 * THREADS / 8 of A's and B's tiles (the chunk, and so its swizzle, is the same
 * for every i). The source pointers advance by BK along k each step. EDGE:
 * the block's tile may cross the edge of A, B or K, so every copy carries a
 * source size (0: zero fill) chosen from the row masks and the chunk's
 * column; without it (a tile wholly inside, k a multiple of BK: all but the
 * edge blocks) a copy is an address and nothing else. */
template <typename T, typename C, bool EDGE> struct tc_copier {
    static constexpr int AN = C::A_BYTES / 16 / C::THREADS, BN = C::B_BYTES / 16 / C::THREADS;
    static constexpr int RSTEP = C::THREADS / 8; /* rows between a thread's copies */
    const T *pa, *pb;   /* this thread's first A and B chunk of the current step */
    int64_t k, kcol;    /* the chunk's first column in the current step */
    uint32_t dst;       /* its offset in a slot (row tid / 8, swizzled chunk) */
    unsigned amask, bmask; /* which of the thread's A and B rows exist */

    __device__ __forceinline__ tc_copier(const T *a, const T *b, int64_t m0, int64_t n0,
                                         int64_t m, int64_t n, int64_t k_)
    {
        const int tid = threadIdx.x, r = tid / 8, ch = tid % 8;
        k = k_;
        kcol = ch * 8;
        dst = tc_swz(r, ch);
        amask = bmask = 0;
        for (int i = 0; i < AN; i++)
            amask |= (unsigned)(m0 + r + i * RSTEP < m) << i;
        for (int i = 0; i < BN; i++)
            bmask |= (unsigned)(n0 + r + i * RSTEP < n) << i;
        /* rows past the edge are never read: their pointers are clamped to row 0 */
        pa = a + (m0 + r < m ? m0 + r : 0) * k + kcol;
        pb = b + (n0 + r < n ? n0 + r : 0) * k + kcol;
    }

    static constexpr int PARTS = TC_BK / 16 - 1; /* the copies spread over a step's slices */
    static constexpr int PER_PART = (AN + BN + PARTS - 1) / PARTS;

    /* Part `part` of copying the current step into the slot at sa: copies
     * PER_PART of the thread's AN + BN chunks; the last part moves to the
     * next step. */
    __device__ __forceinline__ void copy(uint32_t sa, int part)
    {
        const bool kin = kcol < k;
#pragma unroll
        for (int q = 0; q < AN + BN; q++) {
            if (q / PER_PART != part)
                continue;
            const bool isa = q < AN;
            const int i = isa ? q : q - AN;
            const T *src = (isa ? pa : pb) + i * RSTEP * k;
            const uint32_t to = sa + (isa ? 0 : C::A_BYTES) + dst + i * RSTEP * TC_ROW_BYTES;
            if (EDGE) {
                const bool in = kin && ((isa ? amask : bmask) >> i & 1u);
                kb_cp_async16(to, in ? src : isa ? pa : pb, in ? 16 : 0);
            } else {
                kb_cp_async16_whole(to, src);
            }
        }
        if (part == PARTS - 1) {
            pa += TC_BK;
            pb += TC_BK;
            kcol += TC_BK;
        }
    }

    __device__ __forceinline__ void copy_all(uint32_t sa)
    {
#pragma unroll
        for (int part = 0; part < PARTS; part++)
            copy(sa, part);
    }
};

/* The fragments of one k16 slice: A's MI m16 fragments and B's NI n8
 * fragments (two per ldmatrix.x4). */
template <typename C> struct tc_frags {
    uint32_t a[C::MI][4], b[C::NI / 2][4];
};

/* Loads slice kk of the slot at sa into f: A rows lane % 16 of each m16 at
 * chunk 2 kk + lane / 16; B rows lane % 8 (+ 8 for lanes 16..31) of each pair
 * of n8 at chunk 2 kk + (lane / 8) % 2 (the mma fragment orders). */
template <typename C>
static __device__ __forceinline__ void tc_ldfrags(tc_frags<C> &f, uint32_t sa, int kk, int wm,
                                                  int wn, int lane)
{
    const int arow = wm * C::WM + (lane & 15), achunk = 2 * kk + (lane >> 4);
    const int brow = wn * C::WN + ((lane >> 4) << 3) + (lane & 7);
    const int bchunk = 2 * kk + ((lane >> 3) & 1);
#pragma unroll
    for (int mi = 0; mi < C::MI; mi++)
        kb_ldsm4(f.a[mi], sa + tc_swz(arow + 16 * mi, achunk));
#pragma unroll
    for (int nj = 0; nj < C::NI / 2; nj++)
        kb_ldsm4(f.b[nj], sa + C::A_BYTES + tc_swz(brow + 16 * nj, bchunk));
}

template <typename T, typename C>
static __device__ __forceinline__ void tc_mmas(float (&acc)[C::MI][C::NI][4], const tc_frags<C> &f)
{
#pragma unroll
    for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NI; ni++)
            kb_mma16816<T>(acc[mi][ni], f.a[mi], f.b[ni / 2][2 * (ni & 1)], f.b[ni / 2][2 * (ni & 1) + 1]);
}

/* C through shared memory: the accumulators (bias and GELU applied when EPI),
 * rounded to T, are written into the freed pipeline slots as the block's BM x
 * BN tile, 16-byte chunk ch of row r at ch ^ (r % 8) (the eight rows a warp
 * writes at once fall in different bank groups), then read back a row of
 * chunks per warp and stored 16 bytes a thread: whole, contiguous rows of C
 * instead of the accumulator layout's 4-byte pieces of eight rows. */
template <typename T, typename C, bool EPI>
static __device__ __forceinline__ void tc_store(const float (&acc)[C::MI][C::NI][4], uint32_t sbase,
                                                T *__restrict__ c, const T *__restrict__ bias,
                                                int64_t m0, int64_t n0, int64_t m, int64_t n,
                                                int wm, int wn, int lane)
{
    constexpr int RB = C::BN * 2, CH = C::BN / 8; /* row bytes, chunks a row */
    static_assert(C::BM * RB <= C::SMEM, "the tile fits in the slots");
    kb_cp_async_wait<0>();
    __syncthreads(); /* every warp is done with the slots */
#pragma unroll
    for (int ni = 0; ni < C::NI; ni++) {
        float2 bv = make_float2(0.0f, 0.0f);
        if (EPI)
            bv = mm_bias2(bias, n0 + wn * C::WN + ni * 8 + 2 * (lane % 4), n);
        const int ch = (wn * C::WN + ni * 8) / 8;
#pragma unroll
        for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = wm * C::WM + mi * 16 + lane / 4 + 8 * h;
                float v0 = acc[mi][ni][2 * h], v1 = acc[mi][ni][2 * h + 1];
                if (EPI) {
                    v0 = mm_gelu(v0 + bv.x);
                    v1 = mm_gelu(v1 + bv.y);
                }
                const uint32_t addr =
                    sbase + r * RB + ((ch ^ (r & 7)) << 4) + 4 * (lane % 4);
                asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(kb_pack2<T>(v0, v1))
                             : "memory");
            }
    }
    __syncthreads();
    const bool vec = !(n & 7); /* rows of C 16-byte aligned */
    for (int idx = threadIdx.x; idx < C::BM * CH; idx += C::THREADS) {
        const int r = idx / CH, ch = idx % CH;
        const int64_t row = m0 + r, col = n0 + ch * 8;
        if (row >= m || col >= n)
            continue;
        uint4 v;
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(sbase + r * RB + ((ch ^ (r & 7)) << 4)));
        T *dst = c + row * n + col;
        if (vec && col + 8 <= n) {
            kb_st128(dst, v);
        } else {
            const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
                if (col + i < n)
                    ((unsigned short *)dst)[i] = (unsigned short)(w[i / 2] >> (16 * (i % 2)));
        }
    }
}

/* Tile rows per group of the block order: the blocks in flight share 8 tile
 * rows of A and the columns of B they read in the L2. */
#define TC_GROUP_M 8

/* Block b's tile (bm, bn): groups of TC_GROUP_M tile rows, down the rows
 * first inside a group. */
static __device__ __forceinline__ void tc_block_tile(int64_t b, int64_t tiles_m, int64_t tiles_n,
                                                     int64_t *bm, int64_t *bn)
{
    const int64_t per_group = TC_GROUP_M * tiles_n, g = b / per_group, first = g * TC_GROUP_M;
    const int64_t rows = tiles_m - first < TC_GROUP_M ? tiles_m - first : TC_GROUP_M;
    const int64_t r = b - g * per_group;
    *bm = first + r % rows;
    *bn = r / rows;
}

/* The k loop of a block: the products of its tile rows of A and columns of B
 * into acc, with the copies of tc_copier<EDGE>. */
template <typename T, typename C, bool EDGE>
static __device__ __forceinline__ void tc_mainloop(float (&acc)[C::MI][C::NI][4], uint32_t sbase,
                                                   const T *__restrict__ a,
                                                   const T *__restrict__ b, int64_t m0,
                                                   int64_t n0, int64_t m, int64_t n, int64_t k,
                                                   int wm, int wn, int lane)
{
    const int ktiles = (int)((k + TC_BK - 1) / TC_BK);
    constexpr int KK = TC_BK / 16;
    tc_copier<T, C, EDGE> cp(a, b, m0, n0, m, n, k);
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; s++) {
        if (s < ktiles)
            cp.copy_all(sbase + s * C::STAGE_BYTES);
        kb_cp_async_commit();
    }
    kb_cp_async_wait<C::STAGES - 2>();
    __syncthreads();
    /* the pipeline: slice kk + 1's fragments are read while slice kk's mmas
     * run; at a step's last slice the next step's slot is waited for first,
     * and at its first the copy of step kt + STAGES - 1 is issued into the
     * slot step kt - 1 has freed */
    tc_frags<C> f[2];
    int rd = 0, wr = C::STAGES - 1; /* the slots read and written */
    tc_ldfrags<C>(f[0], sbase, 0, wm, wn, lane);
    for (int kt = 0; kt < ktiles; kt++) {
#pragma unroll
        for (int kk = 0; kk < KK; kk++) {
            if (kk == KK - 1) {
                kb_cp_async_wait<C::STAGES - 2>(); /* step kt + 1 has landed */
                __syncthreads();
                rd = rd + 1 == C::STAGES ? 0 : rd + 1;
            }
            tc_ldfrags<C>(f[(kk + 1) % 2], sbase + rd * C::STAGE_BYTES, (kk + 1) % KK, wm, wn,
                          lane);
            if (kk < KK - 1 && kt + C::STAGES - 1 < ktiles)
                cp.copy(sbase + wr * C::STAGE_BYTES, kk);
            if (kk == KK - 2) {
                kb_cp_async_commit();
                wr = wr + 1 == C::STAGES ? 0 : wr + 1;
            }
            tc_mmas<T, C>(acc, f[kk % 2]);
        }
    }
}

template <typename T, typename C, bool EPI>
__global__ void __launch_bounds__(C::THREADS, C::MINB)
    mm_tensor_core(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ c,
                   const T *__restrict__ bias, int64_t m, int64_t n, int64_t k, int whole)
{
    extern __shared__ __align__(128) uint8_t tc_smem[];
    const uint32_t sbase = kb_smem_u32(tc_smem);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
    int64_t bm, bn;
    tc_block_tile(blockIdx.x, (m + C::BM - 1) / C::BM, (n + C::BN - 1) / C::BN, &bm, &bn);
    const int64_t m0 = bm * C::BM, n0 = bn * C::BN;

    float acc[C::MI][C::NI][4];
    kb_mma_zero(acc);

    /* the edge blocks take the copies with source sizes, the others the plain
     * ones (whole = 0: every block the former, for an A/B) */
    if (whole && m0 + C::BM <= m && n0 + C::BN <= n && k % TC_BK == 0)
        tc_mainloop<T, C, false>(acc, sbase, a, b, m0, n0, m, n, k, wm, wn, lane);
    else
        tc_mainloop<T, C, true>(acc, sbase, a, b, m0, n0, m, n, k, wm, wn, lane);

    tc_store<T, C, EPI>(acc, sbase, c, bias, m0, n0, m, n, wm, wn, lane);
}

/* KBENCH_TC_WHOLE=0 gives every block the edge blocks' copies (an A/B of
 * the plain ones); read once. */
static int tc_whole(void)
{
    static const int w = kb_env_int("KBENCH_TC_WHOLE", 1, 0, 1);
    return w;
}

template <typename T, typename C, bool EPI>
static cudaError_t tc_launch(const kb_args *a, cudaStream_t s, const char *name)
{
    const mm_shape sh = mm_shape_of(a);
    const int64_t blocks = ((sh.n + C::BN - 1) / C::BN) * ((sh.m + C::BM - 1) / C::BM);
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1}, block = {C::THREADS, 1, 1};
    cudaError_t e = kb_allow_smem(mm_tensor_core<T, C, EPI>, C::SMEM);
    return e != cudaSuccess
               ? e
               : kb_launch(a, s, mm_tensor_core<T, C, EPI>, name, grid, block, C::SMEM,
                           (const T *)a->in[0], (const T *)a->in[1], (T *)a->out[0],
                           (const T *)a->in[2], sh.m, sh.n, sh.k, tc_whole());
}

typedef tc_cfg<128, 256, 2, 4, 3, 1> tc_c0; /* 8 warps, one block per SM */
typedef tc_cfg<128, 256, 2, 4, 4, 1> tc_c1;
typedef tc_cfg<256, 128, 4, 2, 3, 1> tc_c2;
typedef tc_cfg<128, 128, 2, 2, 4, 2> tc_c3; /* 4 warps, two blocks per SM */

/* The configuration KBENCH_TC_CONFIG names (0..3), read once. */
static int tc_config(void)
{
    static const int c = kb_env_int("KBENCH_TC_CONFIG", 0, 0, 3);
    return c;
}

template <typename T, bool EPI> static cudaError_t launch_tc_epi(const kb_args *a, cudaStream_t s)
{
    switch (tc_config()) {
    case 1: return tc_launch<T, tc_c1, EPI>(a, s, EPI ? "mm_tc_128x256x64_s4_gelu" : "mm_tc_128x256x64_s4");
    case 2: return tc_launch<T, tc_c2, EPI>(a, s, EPI ? "mm_tc_256x128x64_s3_gelu" : "mm_tc_256x128x64_s3");
    case 3: return tc_launch<T, tc_c3, EPI>(a, s, EPI ? "mm_tc_128x128x64_s4_gelu" : "mm_tc_128x128x64_s4");
    default: return tc_launch<T, tc_c0, EPI>(a, s, EPI ? "mm_tc_128x256x64_s3_gelu" : "mm_tc_128x256x64_s3");
    }
}

template <typename T> static cudaError_t launch_tc(const kb_args *a, cudaStream_t s)
{
    return mm_shape_of(a).epilogue ? launch_tc_epi<T, true>(a, s) : launch_tc_epi<T, false>(a, s);
}

/* Launches the mma.sync product of a->in[0], a->in[1] (and the bias epilogue)
 * into a->out[0] on stream s (fp16 and bf16). */
extern "C" cudaError_t kb_matmul_tensor_core(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE16(launch_tc, a, s) /* fp32 is not in the variant's dtype mask */
}

/* cp.async copies 16-byte chunks of A's and B's rows: k a multiple of 8. */
extern "C" int kb_matmul_tensor_core_unsupported(const int64_t *shape, kb_dtype d, char *why,
                                                 size_t why_size)
{
    (void)d;
    return mm_unsupported_k8(shape, "tensor-core copies rows of A and B in 16-byte chunks", why,
                             why_size);
}

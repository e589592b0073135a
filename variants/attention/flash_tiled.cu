/* flash_tiled.cu - attention with K and V streamed through shared memory in
 * tiles, an online softmax, and both products on the tensor cores; the
 * seq x seq score matrix exists only one 64-key tile at a time, in registers.
 *
 * Idea (FlashAttention-2's forward pass): a block owns BR = 128 query rows of
 * one (batch, head) and walks the keys in tiles of BC = 64. Each warp owns 16
 * x MT query rows. Per tile:
 *   S = Q K^T    mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulators); the K
 *                operand by ldmatrix.x4 from shared memory; Q's fragments
 *                in registers (QREG) or by ldmatrix from the block's Q tile;
 *   softmax      per row: the running max m (raw scores) and sum l live in
 *                registers; p = exp2(s * c - m * c), c = scale * log2(e),
 *                one FFMA and one MUFU.EX2 per score; O and l are rescaled by
 *                exp2((m_old - m_new) c), skipped when no row of the warp
 *                moved its max;
 *   O += P V     P converted to bf16/fp16 pairs in registers is the A operand
 *                as it stands (the accumulator layout of S is the A-fragment
 *                layout of P: no shared-memory round trip); V by
 *                ldmatrix.x4.trans.
 * K and V tiles come in by cp.async (16-byte, L2-only, zero-filled past the
 * end of the sequence) two stages deep: tile t + 1 loads while tile t
 * computes. Shared-memory rows are XOR-swizzled in 16-byte chunks (chunk ^
 * row % 8), so each 8 x 16-byte ldmatrix phase and each cp.async row write
 * touches all 32 banks once. O is divided by l at the end and stored from
 * registers. Causal: key tiles past a block's last row are never loaded, a
 * warp skips the compute of a tile that lies wholly past its own rows, and
 * only tiles that cross a warp's diagonal (or the end of the sequence) are
 * masked; blocks are issued from the last query block of each head (the most
 * tiles) down. Heads are the slow grid index, so the ~264 resident blocks
 * share a few heads' K and V in L2.
 *
 * Configuration (flash_cfg below): dim 128 runs 4 warps x 32 rows (MT = 2)
 * with Q re-read by ldmatrix each tile: per 64-key tile a warp reads 8 KB of
 * Q, 16 KB of K and 16 KB of V from shared memory for 1 MFLOP, 40 B per
 * 1024 flops, where 8 warps x 16 rows with Q in registers read 32 KB for 0.5
 * MFLOP, 64 B per 1024 flops: at the tensor pipe's rate that is about the
 * whole 128 B/clk of shared memory. dim 64 keeps Q in registers (32 of them).
 * Measured on the H200, 2026-11-29 (bf16, B=4 H=16 S=4096, TFLOP/s non-causal
 * / causal), every configuration checked equal to the chosen one:
 *   dim 128: 4 warps x 32 rows, Q from shared  368.8 / 325.2   <- chosen
 *            8 warps x 32 rows, Q from shared  361.5 / 303.9   (1 block/SM)
 *            4 warps x 16 rows, Q in registers 318.2 / 293.1   (196 regs)
 *            8 warps x 16 rows, Q in registers 294.7 / 270.0   (196 regs, 1 block/SM)
 *   dim 64:  4 warps x 32 rows, Q in registers 325.3 / 281.1   <- chosen
 *            4 warps x 32 rows, Q from shared  307.4 / 270.1
 *            8 warps x 16 rows, Q in registers 287.0 / 254.5
 *
 * Budget (ptxas -v, sm_90; 0 bytes spilled, no stack): dim 128: 255
 * registers, 128 threads (__launch_bounds__(128, 2)), shared memory 32 KB Q +
 * 2 x (16 + 16) KB K/V = 96 KB: two blocks (8 warps, 12.5% occupancy) per SM,
 * limited by registers. dim 64: 236 registers, 48 KB, two blocks per SM.
 * SASS per 64-key tile and warp (dim 128): 256 HMMA.16816.F32.BF16, 80 LDSM
 * (16 Q, 32 K, 32 V .trans), 16 LDGSTS.E.BYPASS.128, 64 MUFU.EX2.
 *
 * Prediction (default shape, 550 GFLOP): the tensor pipe through mma.sync at
 * about 2048 flops/clk/SM, 535 TFLOP/s at 1.98 GHz; per tile and warp about
 * 450 instructions beside the 256 HMMA (64 EX2, the max, sum, pack and O
 * rescale), overlapped by the other block's warps: 300-350 TFLOP/s, causal
 * a little lower (diagonal tiles masked, a tail of short blocks).
 * Measured on the H200, 2026-11-29 (kbench run, median, L2 flushed):
 *   bf16 B=4 H=16 S=4096 D=128        1.484 ms  370.6 TFLOP/s
 *        same, causal                 838.9 us  327.7   (fp16 326.0)
 *        B=4 H=16 S=4096 D=64         840.0 us  327.2   (fp16 324.2), causal 285.8
 *        B=16 H=16 S=1024 D=128       401.0 us  342.7   (fp16 329.5)
 *        B=1 H=16 S=16384 D=128       5.826 ms  377.4   (fp16 367.7)
 * Counters at the default shape (kbench --metrics full): tensor pipe active
 * 58.9% of cycles, issue active 37.8%, DRAM 0.28 GB (1.05 x the model's
 * bytes; K and V re-reads hit the L2, 92.7%); stalls: wait 35%, math pipe
 * throttle 15%, barrier 5%. cuBLAS bf16 GEMM 8192^3 on the same GPU: 775.9
 * TFLOP/s (wgmma). */
#include <type_traits>

#include "attention.cuh"
#include "kernels/mma.cuh"

#define FL_BC 64 /* keys per tile */

/* ---- the kernel ------------------------------------------------------------------------ */

/* D: head dimension (64, 128); NW warps of MT m16 tiles each; QREG: Q's
 * fragments loaded once into registers; MINB: blocks per SM to fit. */
template <int D_, int NW_, int MT_, bool QREG_, int MINB_> struct flash_cfg {
    static constexpr int D = D_, NW = NW_, MT = MT_, MINB = MINB_;
    static constexpr bool QREG = QREG_;
    static constexpr int THREADS = NW * 32;
    static constexpr int BR = NW * 16 * MT; /* query rows per block */
    static constexpr int ROWB = D * 2;      /* bytes per row of a tile */
    static constexpr int CH = D / 8;        /* 16-byte chunks per row */
    static constexpr int RPP = THREADS / CH; /* rows one pass of cp.async covers */
    static constexpr size_t SMEM = (size_t)(BR + 4 * FL_BC) * ROWB; /* Q, 2 x K, 2 x V */
    static_assert(D % 64 == 0, "the swizzle needs rows of at least 8 chunks");
    static_assert(RPP % 8 == 0 && FL_BC % RPP == 0 && BR % RPP == 0, "tile loads");
};

/* Issues the cp.async copies of rows [row0, row0 + NROWS) of a slice (rows of
 * D elements, s of them) into the swizzled tile at sbase; rows past s are
 * zero-filled. */
template <typename C, int NROWS, typename T>
static __device__ __forceinline__ void fl_load_tile(uint32_t sbase, const T *__restrict__ g,
                                                    int row0, int s)
{
    const int c = threadIdx.x % C::CH, r0 = threadIdx.x / C::CH;
    /* every row this thread copies has r % 8 == r0 % 8: one swizzled column */
    const uint32_t dst = sbase + r0 * C::ROWB + ((c ^ (r0 & 7)) << 4);
#pragma unroll
    for (int i = 0; i < NROWS / C::RPP; i++) {
        const int gr = row0 + r0 + i * C::RPP;
        const bool ok = gr < s;
        kb_cp_async16(dst + i * C::RPP * C::ROWB, g + (ok ? gr : 0) * C::D + c * 8, ok ? 16 : 0);
    }
}

template <typename T, typename C>
__global__ void __launch_bounds__(C::THREADS, C::MINB)
    att_flash(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
              T *__restrict__ o, int64_t s, int64_t nqb, int causal, float sl2)
{
    constexpr int D = C::D, MT = C::MT, ROWB = C::ROWB, KT = D / 16, NS = FL_BC / 8;
    constexpr int NO = D / 8;
    extern __shared__ uint4 fl_smem[];
    const uint32_t sq = kb_smem_u32(fl_smem);
    const uint32_t sk = sq + C::BR * ROWB, sv = sk + 2 * FL_BC * ROWB;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    /* positions within a slice fit in an int (seq <= 2^20) */
    const int64_t b = blockIdx.x / nqb;
    const int q0 = (int)(nqb - 1 - blockIdx.x % nqb) * C::BR, sl = (int)s;
    const int64_t base = b * s * D;
    const int wrow0 = q0 + warp * 16 * MT; /* this warp's first query row */
    const int kend = causal && q0 + C::BR < sl ? q0 + C::BR : sl;
    const int ntiles = (kend + FL_BC - 1) / FL_BC;

    fl_load_tile<C, C::BR>(sq, q + base, q0, sl);
    kb_cp_async_commit();
    fl_load_tile<C, FL_BC>(sk, k + base, 0, sl);
    fl_load_tile<C, FL_BC>(sv, v + base, 0, sl);
    kb_cp_async_commit();

    /* Per-lane ldmatrix addresses. Every row a lane addresses has row % 8 ==
     * lane % 8, and its logical chunk is 2 x + bit, so the swizzled chunk of
     * x = 4 a + j is 8 a + ((2 j + bit) ^ lane % 8): a row base plus a * 128
     * plus one of four per-lane offsets. */
    const int l7 = lane & 7, bit_a = lane >> 4, bit_b = (lane >> 3) & 1;
    uint32_t off_a[4], off_b[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        off_a[j] = (uint32_t)(((2 * j + bit_a) ^ l7) << 4);
        off_b[j] = (uint32_t)(((2 * j + bit_b) ^ l7) << 4);
    }
    /* A operand (Q): rows of the warp's m-tile, chunks 2 x + (lane >= 16). */
    const uint32_t q_lane = sq + (uint32_t)(warp * 16 * MT + (lane & 15)) * ROWB;
    /* K (B of Q K^T): keys n + 8 (lane >= 16) + lane % 8, chunks 2 x + bit_b. */
    const uint32_t k_lane = sk + (uint32_t)(((lane >> 4) << 3) + l7) * ROWB;
    /* V (B of P V, transposed): keys 8 bit_b + lane % 8, chunks 2 x + bit_a. */
    const uint32_t v_lane = sv + (uint32_t)((bit_b << 3) + l7) * ROWB;

    uint32_t qf[C::QREG ? MT : 1][C::QREG ? KT : 1][4];
    if constexpr (C::QREG) {
        kb_cp_async_wait<1>();
        __syncthreads();
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int kk = 0; kk < KT; kk++)
                kb_ldsm4(qf[mt][kk], q_lane + mt * 16 * ROWB + (kk / 4) * 128 + off_a[kk % 4]);
    }

    float oacc[MT][NO][4];
    float mrow[MT][2], lrow[MT][2];
    kb_mma_zero(oacc);
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mrow[mt][h] = kb_neg_inf();
            lrow[mt][h] = 0.0f;
        }

    for (int t = 0; t < ntiles; t++) {
        const uint32_t stage = (uint32_t)(t & 1) * FL_BC * ROWB;
        if (t + 1 < ntiles) {
            const uint32_t next = (uint32_t)((t + 1) & 1) * FL_BC * ROWB;
            fl_load_tile<C, FL_BC>(sk + next, k + base, (t + 1) * FL_BC, sl);
            fl_load_tile<C, FL_BC>(sv + next, v + base, (t + 1) * FL_BC, sl);
        }
        kb_cp_async_commit(); /* possibly empty: keeps the group count uniform */
        kb_cp_async_wait<1>(); /* tile t (and Q) have landed for this thread ... */
        __syncthreads(); /* ... and for every thread */

        const int k0 = t * FL_BC;
        if (!(causal && k0 > wrow0 + 16 * MT - 1)) { /* else wholly masked for this warp */
            /* S = Q K^T */
            float sacc[MT][NS][4];
            kb_mma_zero(sacc);
#pragma unroll
            for (int kk = 0; kk < KT; kk++) {
                const uint32_t ko = (kk / 4) * 128 + off_b[kk % 4];
                uint32_t af[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    if constexpr (C::QREG) {
#pragma unroll
                        for (int e = 0; e < 4; e++)
                            af[mt][e] = qf[mt][kk][e];
                    } else {
                        kb_ldsm4(af[mt], q_lane + mt * 16 * ROWB + (kk / 4) * 128 + off_a[kk % 4]);
                    }
                }
#pragma unroll
                for (int np = 0; np < NS / 2; np++) {
                    uint32_t kb4[4];
                    kb_ldsm4(kb4, k_lane + stage + np * 16 * ROWB + ko);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        kb_mma16816<T>(sacc[mt][2 * np], af[mt], kb4[0], kb4[1]);
                        kb_mma16816<T>(sacc[mt][2 * np + 1], af[mt], kb4[2], kb4[3]);
                    }
                }
            }

            /* mask: keys past the sequence, and past the row when causal */
            if (k0 + FL_BC > sl || (causal && k0 + FL_BC - 1 > wrow0)) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int n = 0; n < NS; n++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int row = wrow0 + mt * 16 + (lane >> 2) + (e >> 1) * 8;
                            const int col = k0 + n * 8 + 2 * (lane & 3) + (e & 1);
                            if (col >= sl || (causal && col > row))
                                sacc[mt][n][e] = kb_neg_inf();
                        }
            }

            /* online softmax: rows lane / 4 (h = 0) and lane / 4 + 8 (h = 1) of
             * each m-tile; a row's 16 scores of this lane, then its quad */
            float alpha[MT][2];
            bool moved = false;
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float mx = mrow[mt][h];
#pragma unroll
                    for (int n = 0; n < NS; n++)
                        mx = fmaxf(mx, fmaxf(sacc[mt][n][2 * h], sacc[mt][n][2 * h + 1]));
                    mx = att_lanes_max<4>(mx);
                    /* the first tile holds key 0, which no row masks: mx is finite */
                    alpha[mt][h] = kb_exp2((mrow[mt][h] - mx) * sl2);
                    moved |= mx != mrow[mt][h];
                    mrow[mt][h] = mx;
                    const float ms = mx * sl2;
                    float sum = 0.0f;
#pragma unroll
                    for (int n = 0; n < NS; n++)
#pragma unroll
                        for (int e = 2 * h; e < 2 * h + 2; e++) {
                            const float p = kb_exp2(fmaf(sacc[mt][n][e], sl2, -ms));
                            sacc[mt][n][e] = p;
                            sum += p;
                        }
                    lrow[mt][h] = lrow[mt][h] * alpha[mt][h] + sum;
                }
            if (__any_sync(KB_FULL_MASK, moved)) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int n = 0; n < NO; n++) {
                        oacc[mt][n][0] *= alpha[mt][0];
                        oacc[mt][n][1] *= alpha[mt][0];
                        oacc[mt][n][2] *= alpha[mt][1];
                        oacc[mt][n][3] *= alpha[mt][1];
                    }
            }

            /* O += P V: P's A fragments straight from the S accumulators */
#pragma unroll
            for (int ks = 0; ks < FL_BC / 16; ks++) {
                uint32_t pa[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    pa[mt][0] = kb_pack2<T>(sacc[mt][2 * ks][0], sacc[mt][2 * ks][1]);
                    pa[mt][1] = kb_pack2<T>(sacc[mt][2 * ks][2], sacc[mt][2 * ks][3]);
                    pa[mt][2] = kb_pack2<T>(sacc[mt][2 * ks + 1][0], sacc[mt][2 * ks + 1][1]);
                    pa[mt][3] = kb_pack2<T>(sacc[mt][2 * ks + 1][2], sacc[mt][2 * ks + 1][3]);
                }
#pragma unroll
                for (int dp = 0; dp < NO / 2; dp++) {
                    uint32_t vb4[4];
                    kb_ldsm4_t(vb4, v_lane + stage + ks * 16 * ROWB + (dp / 4) * 128 +
                                        off_a[dp % 4]);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        kb_mma16816<T>(oacc[mt][2 * dp], pa[mt], vb4[0], vb4[1]);
                        kb_mma16816<T>(oacc[mt][2 * dp + 1], pa[mt], vb4[2], vb4[3]);
                    }
                }
            }
        }
        __syncthreads(); /* stage t & 1 is free for tile t + 2 */
    }

    /* O / l, rounded to T, rows past the sequence not stored */
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float inv = kb_rcp(att_lanes_sum<4>(lrow[mt][h]));
            const int row = wrow0 + mt * 16 + (lane >> 2) + h * 8;
            if (row < sl) {
                T *orow = o + base + (int64_t)row * D + 2 * (lane & 3);
#pragma unroll
                for (int n = 0; n < NO; n++)
                    *(uint32_t *)(orow + n * 8) =
                        kb_pack2<T>(oacc[mt][n][2 * h] * inv, oacc[mt][n][2 * h + 1] * inv);
            }
        }
}

/* The configurations the variant runs (see the header): dim 128, 4 warps x
 * 32 rows, Q re-read from shared memory; dim 64, 4 warps x 32 rows, Q in
 * registers. */
typedef flash_cfg<128, 4, 2, false, 2> flash_cfg_d128;
typedef flash_cfg<64, 4, 2, true, 2> flash_cfg_d64;

template <typename T, typename C>
static cudaError_t launch_flash_cfg(const kb_args *a, cudaStream_t st, const char *name)
{
    const att_shape sh = att_shape_of(a);
    void (*kern)(const T *, const T *, const T *, T *, int64_t, int64_t, int, float) =
        att_flash<T, C>;
    cudaError_t e = kb_allow_smem(kern, C::SMEM);
    if (e != cudaSuccess)
        return e;
    const int64_t nqb = (sh.s + C::BR - 1) / C::BR, blocks = sh.bh * nqb;
    if (blocks > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1}, block = {C::THREADS, 1, 1};
    kb_note_launch(a->log, (const void *)kern, name, grid, block, C::SMEM);
    kern<<<grid.x, block.x, C::SMEM, st>>>((const T *)a->in[0], (const T *)a->in[1],
                                           (const T *)a->in[2], (T *)a->out[0], sh.s, nqb,
                                           sh.causal, sh.scale * KB_LOG2E);
    return cudaGetLastError();
}

template <typename T> static cudaError_t launch_flash(const kb_args *a, cudaStream_t st)
{
    switch (a->shape[ATT_DIM]) {
    case 128:
        return launch_flash_cfg<T, flash_cfg_d128>(a, st, "att_flash_d128_w4x32");
    case 64:
        return launch_flash_cfg<T, flash_cfg_d64>(a, st, "att_flash_d64_w4x32");
    default:
        return cudaErrorInvalidValue; /* other dims are skipped by the harness */
    }
}

/* Launches the flash attention of a->in[0..2] into a->out[0] on stream s
 * (fp16 and bf16; dim 64 and 128). */
extern "C" cudaError_t kb_attention_flash_tiled(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE16(launch_flash, a, s) /* fp32 is not in the variant's dtype mask */
}

/* fused.cu - layernorm + bias + GELU in one kernel: one read of x, one write of y.
 *
 * Idea: the row lives in registers between the statistics and the output, so x
 * crosses DRAM once and nothing else does but y (plus gamma/beta/b once and the
 * optional mean/rstd). Each thread issues all its 16-byte loads before using
 * any; the statistics are an exact two-pass over the registers (sum -> mean,
 * then sum of squared deviations -> var: two group sums, one barrier each),
 * fp32, on shifted data d = x - x[0] for fp32 inputs (exact differences keep a
 * large mean's spread; see layernorm.cuh; 16-bit inputs skip the shift, their
 * own spacing at a large mean being far coarser than the fp32 sums' rounding);
 * the output pass stores y with 16-byte stores. Plain cached loads and stores:
 * the streaming hints (ld/st.global.cs) cost 3-6% here (measured below).
 *
 * The row kernel is persistent, a group of threads per row (layernorm.cuh has
 * the ladder of shapes): as many blocks as fit on the GPU at once, so every SM
 * holds the same number, each group looping over rows g, g + groups, ...; the
 * loop's control is the block's, so a group past the last row idles through
 * the block's last round. fp32 (V = 4): 128-1024 threads x 8 vectors (32
 * floats) a row-group, one group a block, 8 blocks of 128 per SM at 4096
 * columns, 2 of 512 at 16384; gamma, beta, b come as 16-byte loads through L1.
 * 16-bit (V = 8): 1024-thread blocks of G = 8, 4, 2, 1 groups of 128-1024 x 4
 * vectors, so one SM-wide stage holds gamma (raw) and beta + b (fp32) in shared
 * memory (6 bytes a column: the output's three loads, widenings and an add per
 * element become one widening; 16-bit is near the issue limit), and each group
 * double-buffers x in its own shared-memory slots: the next row's x is copied
 * there (cp.async, LDGSTS.BYPASS) as soon as this row is unpacked, so it flies
 * during this row's barriers and output, costing no registers. fp32 needs no
 * prefetch: with 8 blocks of 32 floats a thread per SM its loads already
 * overlap other blocks' work (register or cp.async prefetch measured no faster).
 *
 * Dispatch, V = 4 (fp32) or 8 (16-bit):
 *   aligned, at most 16      the sub-warp kernel: 1-16 lanes a row, one vector
 *   vectors (cols % V == 0)  a lane, gamma and beta + b in registers, 4 rows a
 *                            group (below);
 *   cols <= 40 (fp32: 25-40) the thread-row kernel: a thread a row, a block's
 *   off 16-byte boundaries   256 rows copied through shared memory with
 *                            16-byte moves (below);
 *   cols <= 256, off 16-byte the tile kernel: several rows a warp (4-32 lanes
 *   boundaries               a row), a block's rows copied through shared
 *                            memory with 16-byte moves;
 *   257-16384 fp32 / 32768   the row kernel below peeled to 16-byte
 *   16-bit, off 16-byte      alignment, a block's rows all starting at the
 *   boundaries               same offset from one (below);
 *   cols <= 1024, aligned    a warp per row, NV = pow2 >= cols / (32 V) vectors a
 *                            lane, 4 rows per 128-thread block, shuffles only;
 *   up to 32768 fp32 /       the persistent row kernel, the first rung of
 *   32768 16-bit, aligned    LN_ROW_LADDER_* that holds the row (exact fit: no
 *                            range checks): 4096 -> 128 threads x 8 (fp32),
 *                            8 groups of 128 x 4 (16-bit); 16384 -> 512 x 8
 *                            (fp32), 2 groups of 512 x 4 (16-bit);
 *   fp32, 32769-65536 (and   the persistent clusters: 4-16 blocks of 16384
 *   to 262144 where the      elements a row, gamma and beta + b staged in
 *   grid below is not        shared memory once (below);
 *   filled), aligned, rows
 *   not few
 *   16-bit, 32769-1048576,   layernorm_fused_srow2: one 1024-thread block an
 *   aligned, rows not few    SM, 65536 elements of the row in its shared
 *   (to 65536: any rows),    memory, in clusters of 2-16 past 65536, beta + b
 *   where the grid below     as floats from the scratch (below);
 *   does not take them
 *   fp32 65536-1048576,      the pipelined grid: a block of 512 threads an
 *   16-bit 131073-1048576    SM, 8192 columns each (16384 16-bit), gamma and
 *   and whole 16384-column   beta + b in registers, a ring of 7 row slices,
 *   slices from 81920,       the rows' statistics exchanged 4 rows late
 *   aligned, rows not few,   (below);
 *   groups filling 7/8 of
 *   the GPU
 *   longer aligned rows:     the cluster register kernel: 2-16 blocks of
 *   fp32 up to 524288, or    1024 threads x 32 elements a row, one SM each
 *   rows x 16 <= SMs         (past 524288: 32 more in shared memory),
 *                            the blocks' (n, mean, M2) met through distributed
 *                            shared memory (below);
 *   longer aligned rows,     the streaming cluster kernel: 8-16 blocks of 512
 *   rows <= 3/4 of the SMs   threads a row, each streaming its slice twice
 *                            (below: slower than a block a row otherwise);
 *   otherwise (longer, or    the streaming path: a block per row (<= 1024
 *   cols % V != 0, or a      threads, ~8 elements each), peeled to 16-byte
 *   pointer off 16 bytes)    boundaries, 16-byte loads, exact statistics of 4
 *                            vectors at a time merged with Chan's formula
 *                            (shuffles, then 32 partials through shared
 *                            memory), then a second read of x (from L2 while
 *                            the row is there); the old one-element kernel for
 *                            pointers off 16 bytes.
 *
 * A/B switches (environment, read once per process): KBENCH_LAYERNORM_TILE=0
 * sends short rows back to the warp/streaming kernels, =2 takes every row of
 * up to 256 columns through the tile kernel; KBENCH_LAYERNORM_STREAM=0 takes
 * the old one-element streaming kernel; KBENCH_LAYERNORM_SUB=0 sends short
 * aligned rows back to the tile kernel (TILE=0 and 2 skip the sub-warp kernel
 * too); KBENCH_LAYERNORM_CLUSTER_REGS=0 sends the long aligned rows back to
 * the streaming path (=2 takes 16-bit rows of up to 16 blocks' registers into
 * the clusters too), KBENCH_LAYERNORM_TROW=0 sends the rows of up to 40
 * columns back to the tile kernel, =2 the 16-bit ones to the word kernel
 * (=3 with the copy engine's spans, the default for 16-bit rows of 9-40
 * columns; =1 the thread-row kernel, the others' default),
 * KBENCH_LAYERNORM_SMEM_ROW=0 the 16-bit rows of 32769-65536 columns;
 * KBENCH_LAYERNORM_PEEL=0 sends the rows of 257-16384 (fp32) or 257-32768
 * (16-bit) columns off 16-byte boundaries from the peeled row kernel back
 * to the streaming path; KBENCH_CLUSTER_PUSH=0 has
 * the cluster register kernel pull its blocks' states through a cluster
 * barrier instead of pushing them;
 * KBENCH_LAYERNORM_CLUSTER_PF=0 sends the fp32 rows of 32769-262144 columns
 * that take persistent clusters with the parameters staged back to the
 * cluster register kernel, =2 sends 16-bit rows there too (measured and not
 * kept: above that kernel); KBENCH_LAYERNORM_GRID_PIPE=0 sends the fp32 rows
 * of 65536-1048576 columns that take the pipelined grid back to the
 * persistent clusters' paths and the 16-bit rows of 131073-1048576 (and
 * the whole slices of 81920-131072) to layernorm_fused_srow2, =2 sends
 * every aligned row of 32769-1048576 columns to the pipelined grid
 * (measured: above that kernel); KBENCH_LAYERNORM_GPIPE_FROM16=n sends there
 * the 16-bit rows of whole 16384-column slices from n columns (default
 * 65537; 32769 adds 49152 and 65536, measured: the header of the grid);
 * KBENCH_LAYERNORM_GPIPE_RING=0 gives the pipelined grid its parameters in
 * shared memory and a ring of 4 fp32 slices (L = 2) instead of 7 (L = 4);
 * KBENCH_LAYERNORM_GPIPE_WIDE=0 gives it 16-bit slices of 8192 columns
 * instead of 16384; KBENCH_LAYERNORM_GPIPE_EXACT=1 gives rows of whole
 * slices its kernels without edge code (layernorm_fused_gpipe_*_exact; by
 * default the 16-bit wide slices only, =0 none of them); KBENCH_LAYERNORM_GPIPE_REGS=0
 * leaves the 16-bit wide slices' exchange warps their registers (by default
 * moved to the streaming threads, RR, the kernels' names ending in _rr);
 * KBENCH_LAYERNORM_GPIPE_WP=0 reduces a row's slice over the block behind a
 * barrier instead of handing the warps' partials to the exchange warp (its
 * kernels' names end in _bar); KBENCH_LAYERNORM_GPIPE_FENCES=2 gives the two
 * default forms' exchange warps a fence to publish and another to release
 * a row's slot instead of one fence a row (their names ending in _f2);
 * KBENCH_LAYERNORM_SROW2=0 sends the 16-bit rows of layernorm_fused_srow2
 * back to the first shared-memory row kernel (to 65536 columns) and the
 * streaming path, KBENCH_LAYERNORM_SROW2_MMA=0 takes its first pass's sum by
 * FADDs instead of the tensor cores, KBENCH_LAYERNORM_SROW2_PAR=0 its beta + b
 * raw instead of as floats from the scratch, KBENCH_LAYERNORM_SROW2_EARLY=1
 * issues its next row's first copies before its wait for this row's
 * bytes, KBENCH_LAYERNORM_SROW2_TW=1 (=2: rows of whole blocks only) widens
 * bf16's output pass by the tensor cores, KBENCH_LAYERNORM_SROW2_PC=1 keeps
 * beta + b of each thread's first vector in shared memory and
 * KBENCH_LAYERNORM_SROW2_P24=1 reads beta + b in 24 bits a column (its
 * header);
 * KBENCH_LAYERNORM_SQ=0 keeps the
 * centred pass for the squares in srow2 (1024 threads) and the pipelined
 * grid with RR instead of the tensor cores' (kernels named _sq);
 * KBENCH_LAYERNORM_PF_CLUSTERS=n caps the
 * persistent clusters at n (an A/B of the SMs they take).
 * Prediction for these paths (not yet measured): 4096 x 65536 from 25% (fp32)
 * / 15% (bf16) of the copy bandwidth to ~65% / ~55% (16-byte loads, one Chan
 * merge per 16-32 elements instead of a
 * Welford step with a reciprocal per element; the second read from L2 remains:
 * the `cluster` rung removes it); 4099-row unaligned shapes like 300 x 1000
 * bf16 now vector-loaded (~2x); 1000000 x 33 from a 32-thread block per row to
 * 8 lanes per row: 5-10x. Short aligned rows (32 fp32 columns: 8 vectors, a
 * warp per row left 24 lanes idle) ~2x. Measured (H200, 2026-12-01, without
 * counters, L2 flushed, rows x cols = 2^27, % of the copy bandwidth): tile
 * path 59% fp32 / 54% bf16 at 32 columns, 62% / 40% at 33; warp kernel 96% /
 * 38% at 128 (bf16: 16 vectors a row, half a warp idle), 95% / 80% at 768;
 * row kernels 90-93% fp32, 87-88% bf16 at 4096 and 16384; the vector
 * streaming path 51-59% from 65536 to 1048576 columns (was 25% / 15%); the
 * unaligned 4099 x 3001 46% / 21%. Next steps: the tile
 * kernel fills its 8192-element tile with as many rounds as fit and issues a
 * thread's loads before its stores (kb_span_in), and takes 16-bit rows of 16
 * vectors (128 bf16 columns) too: ~80% at 32-128 columns; 16-bit rows of
 * 33-128 vectors go to 8 one-warp groups a block with the parameters staged
 * and x prefetched (layernorm.cuh's first 16-bit rung) instead of the warp
 * kernel, which reloads gamma, beta and b for every vector: 768 bf16 from 80%
 * to ~88% (the row kernels' figure). Measured (same method, 2026-12-01, 10:35
 * UTC): 32 columns 60.2% fp32 / 52.0% bf16, 33 65.8% / 38.5%, 128 95.7% /
 * 54.0% (was 38%), 768 94.8% / 87.5% (was 80%), 4099 x 3001 46.0% / 20.6%.
 * The 16-bit rung did what was predicted at 768 and half of it at 128; the
 * tile path at 32-33 columns stayed near 60%, short of ~80%: a row of 32 is
 * one warp's two-pass reduction and 32 parameter pairs for every 128 bytes of
 * x, and the counters have yet to say which of them waits. One cause found in
 * the code since: lane t of a row's G lanes reads and writes columns t + G i,
 * so at 32 columns the 8 rows of a warp (128 bytes each, 4 lanes a row) read
 * the same 4 banks: 8-way conflicts on every shared load and store of the
 * pass (4-way at 33 columns). The swizzle has row r's lanes take their
 * elements in the order i ^ (r % 8) (kb_tile_col), the same columns spread
 * over the banks; predicted: 32 and 33 columns from 52-66% to 75-85% if the
 * conflicts are the limit, nothing if the DRAM traffic's gaps between a
 * block's load and store phases are. Measured (H200, 2026-12-01, two rounds,
 * no counters, % of copy bandwidth, off -> on): fp32 32 columns 60.1 -> 77.0
 * and 60.0 -> 77.9 (short_sb stalls were 48%: the conflicts were its limit);
 * fp32 128 95.5 -> 95.7 (no conflicts to lose: 4 lanes a 512-byte row read
 * 16 banks apart already); bf16 32 51.7 -> 47.8, fp32 33 65.4 -> 50.0, bf16
 * 33 38.3 -> 26.9, bf16 128 53.6 -> 46.6: where rows do not start on the
 * same banks the XOR only adds index arithmetic (40 -> 48 registers in
 * bf16). So it is on where the conflicts are, fp32 rows of a multiple of 32
 * columns (128-byte rows), and off elsewhere; KBENCH_TILE_SWIZZLE=0|1 forces
 * it either way. bf16 and 33 columns still wait on something else: not_sel
 * 29-44% of stalls there (issue-bound: instructions per byte, not banks).
 * One cause of that (prediction, before any measurement): every lane took 8
 * elements whatever the row, so at 33 columns a row's 8 lanes ran 64 slots
 * of loads, statistics, GELU and stores for 33 elements (GELU alone is 10
 * instructions a slot, idle or not). Rows of at most 5 G elements now take a
 * kernel of 5 a lane (40 slots at 33 columns; not where the swizzle is on,
 * which permutes 8): predicted 33 columns fp32 65.7% -> 80-85%, bf16 38.5% ->
 * 50-55%. KBENCH_TILE_NARROW=0 keeps 8 a lane. Measured (H200, 2026-12-01
 * 14:45 UTC, one round, no counters, % of copy bandwidth, 8 -> 5 a lane):
 * 4067203 x 33 fp32 65.6 -> 72.1, bf16 38.5 -> 46.6; 1743087 x 77 fp32 73.0
 * -> 80.8, bf16 42.7 -> 50.1. The direction predicted, a third to a half of
 * the size: the row pass is still global -> shared -> registers -> shared ->
 * global with the parameters from shared memory, and bf16 at 33 columns
 * stays far from 85%.
 * Tried and not kept (17:30 UTC, two rounds, same method, tile -> flat): a
 * block's rows held as one run of 16-byte chunks in registers, two partial
 * sums a chunk met in shared memory, a thread a row adding them in chunk
 * order (no copy of x or y through shared memory; predicted 33 columns fp32
 * ~88%, bf16 ~75%). 4067203 x 33 fp32 72.3 -> 60.9, bf16 46.8 -> 29.9;
 * 1743087 x 77 fp32 81.0 -> 58.9, bf16 50.4 -> 26.7; 854773 x 157 fp32 80.7
 * -> 58.2, bf16 50.6 -> 24.7. Its times hardly depended on the element size
 * (414-510 us at both): instruction- and latency-bound in the per-chunk row
 * arithmetic and the serial combine, the opposite of what the registers
 * were to buy.
 *
 * Resource budget (nvcc -Xptxas -v, sm_90, no spills, no stack anywhere):
 *   row fp32, 32 floats  63-64 registers (cap 64), 32-256 B static shared:
 *                        8 x 128 or 2 x 512 threads per SM (50% occupancy);
 *                        16 floats (cols <= 2048): 55-64;
 *   row 16-bit, 32 elts  63-64 registers, 1024-thread blocks, 256 B static +
 *                        6 cols + 64 KB (x slots) dynamic shared: 88 KB at
 *                        4096, 160 KB at 16384 (1 block, 50% occupancy);
 *                        16 elements (cols <= 2048): 40 registers, 2 x 512;
 *                        32768 columns: 64 registers, no x slots (192 KB stage);
 *   warp                 31-64 registers (cap 64), 8 blocks of 128 per SM;
 *   stream               47-48 registers, 384 B static shared.
 * SASS in the row loop (static count, erf form): 23.7 instructions an element
 * for fp32, 24.5 for bf16 (was 28.0 and 25.6): GELU 10, statistics 4-5, affine
 * 2-3, widening/narrowing 2.5 (16-bit), loads, stores and two group sums
 * (GELU is 8 for bf16 and 9 for fp16 since its lower-degree polynomials:
 * ln_gelu_out, layernorm_fused_srow2's header).
 *
 * Prediction (before the change, 32768x4096): bf16 from 75% to ~85-88% of copy
 * bandwidth by keeping x in flight across the barriers (prefetch) and ~15% fewer
 * instructions; fp32 from 85% to ~90% from the prefetch alone. The fp32 part was
 * wrong: no prefetch moved fp32 (85.1-86.9%); the streaming load hint did.
 *
 * Measured on the H200, 2026-11-29 (kbench run, L2 flushed, median; erf form;
 * % of the calibrated copy bandwidth, 4212-4229 GB/s), before -> after:
 *   fp32 32768x4096    298.4 us 85.1% -> 278.7 us 91.5%  (occupancy 47 -> 49%)
 *   bf16 32768x4096    169.2 us 75.0% -> 145.1 us 87.8%  (42 -> 49%)
 *   fp32 8192x16384    295.6 us 85.9% -> 274.0 us 93.1%  (48 -> 50%)
 *   bf16 8192x16384    174.3 us 72.9% -> 142.2 us 89.6%  (46 -> 50%)
 * DRAM excess 1.00 throughout; a second timing without counters: 91.2, 88.1,
 * 93.3, 89.0%. What moved it, from sweeps of the same kernels the same day:
 *   - plain instead of streaming loads (LDG.E.EF): fp32 4096 85.7 -> 91.5%,
 *     fp32 16384 90.8 -> 94.1%, bf16 16384 83.9 -> 88.9% (bf16 4096: no change);
 *   - the grid filling every SM alike (the old launcher's equal rows per block
 *     left 1024 blocks on 1056 slots: SMs of 7 and 8 blocks, ~3% by count);
 *   - 16-bit prefetch of the next row (in registers first): 80.6 -> 84.9%
 *     (4096), 80.4 -> 85.2% (16384);
 *   - one stage per SM (8 groups in a 1024-thread block instead of 8 blocks of
 *     24 KB each, which left ~28 KB of L1 for 64 KB of loads in flight) with
 *     the prefetch moved to cp.async (its registers freed: the register
 *     prefetch spilled 16 B once the groups came in): bf16 4096 84.1% (8
 *     blocks, another H200) -> 87.8%; same session, 8 groups prefetching into
 *     registers 86.8%;
 *   - straight-line code for exact-fit rows and a log2(warps)-step second
 *     level in the group sums: bf16 4096 75.7 -> 80.6% without prefetch.
 * Tried and dropped: one barrier a row with Chan's merge of per-thread (mean,
 * M2) (no faster: 83.5 vs 84.0%, more shuffles); 256 threads x 16 elements
 * (more threads, more per-row overhead: 81-82%); fp32 prefetch. */
#include "kernels/cluster.cuh"
/* The pipelined grid kernel: a row's blocks, at most GP_MAX_S (1048576 fp32
 * columns in slices of 8192), each a slot of the exchange, which has room
 * for KB_GRID_MAXB (the size the measured kernels were built with). */
#define KB_GRID_MAXB 192
#define GP_MAX_S 128
#include "kernels/grid_pipe.cuh"
#include "layernorm.cuh"

/* Pass 2 of the two-pass statistics: centres the NV vectors of V elements a
 * thread holds by md, in place, and returns the sum of their squares over the
 * vectors in range (in(k)), each vector's own sum first. */
template <int NV, int V, typename IN>
static __device__ __forceinline__ float centred_squares(float (&v)[NV][V], float md, IN in)
{
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        float qk = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++) {
            v[k][i] -= md;
            qk = fmaf(v[k][i], v[k][i], qk);
        }
        q += in(k) ? qk : 0.0f;
    }
    return q;
}

/* The two passes over packed vectors that stay where they are (shared-memory
 * slots), unpacked again each pass: op(acc, f) folded over the elements of the
 * NV vectors slot(k) in range (in(k)), each vector's own fold from 0 first. */
template <typename T, int NV, typename SLOT, typename IN, typename OP>
static __device__ __forceinline__ float packed_fold(SLOT slot, IN in, OP op)
{
    constexpr int V = kb_vec_width<T>();
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        float f[V];
        kb_unpack<T>(slot(k), f);
        float sk = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++)
            sk = op(sk, f[i]);
        s += in(k) ? sk : 0.0f;
    }
    return s;
}

/* Pass 1: the sum of the packed vectors ... */
template <typename T, int NV, typename SLOT, typename IN>
static __device__ __forceinline__ float packed_sum(SLOT slot, IN in)
{
    return packed_fold<T, NV>(slot, in, [](float acc, float f) { return acc + f; });
}

/* ... pass 2: the sum of their squares about md. */
template <typename T, int NV, typename SLOT, typename IN>
static __device__ __forceinline__ float packed_centred_squares(SLOT slot, float md, IN in)
{
    return packed_fold<T, NV>(slot, in, [md](float acc, float f) {
        const float c = f - md;
        return fmaf(c, c, acc);
    });
}

/* Two 16-bit ones in a register: the B of mma_sum's and mma_sum_sq's sums. */
template <typename T> static __device__ __forceinline__ constexpr uint32_t mma_ones()
{
    return std::is_same<T, __nv_bfloat16>::value ? 0x3F803F80u : 0x3C003C00u;
}

/* Pass 1 by the tensor cores, for 16-bit vectors: each of the NV vectors in
 * range (in(k)) an m16n8k16 A fragment (any placement: every element once), B
 * all ones, so that every column of the fp32 accumulators holds the 16 row
 * sums; lane (g, t) holds columns 2t, 2t + 1 of rows g and g + 8, which are
 * the elements of lanes 4g..4g+3, so the warp's sum of the returned values,
 * d0 + d2 over four, is the warp's sum of its vectors (a lane's own value is
 * a quarter of its quad's sum, not its own). */
template <typename T, int NV, typename SLOT, typename IN>
static __device__ __forceinline__ float mma_sum(SLOT slot, IN in)
{
    constexpr uint32_t ONE = mma_ones<T>();
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const uint4 v = in(k) ? slot(k) : make_uint4(0, 0, 0, 0);
        const uint32_t a4[4] = {v.x, v.y, v.z, v.w};
        kb_mma16816<T>(acc, a4, ONE, ONE);
    }
    return 0.25f * (acc[0] + acc[2]);
}

/* mma_sum with the sum of squares beside it (x: the sum, y: the squares),
 * both by the tensor cores. The squares: each half vector {r0, r1} an
 * m16n8k8 A fragment (r0 row g, r1 row g + 8 of lane (g, t)), against B = r0,
 * which is row g at exactly the k of B's column g, so the diagonal of rows
 * 0-7 of D1 = A r0 holds row g's squares; against B = r1 row g + 8's land on
 * D2 = A r1 at (g + 8, g). The operands are the registers as loaded (no
 * moves: a k16 form would take B = {a0, a2}, not a register pair). The
 * products are exact (16-bit by 16-bit), the sums fp32; the warp's sum of
 * the returned y (held by lanes 4g + g / 2) is the sum of its squares. Five
 * HMMAs a vector where the centred pass spends 24 instructions (unpack,
 * subtract, FMA). */
template <typename T, int NV, typename SLOT, typename IN>
static __device__ __forceinline__ float2 mma_sum_sq(SLOT slot, IN in)
{
    constexpr uint32_t ONE = mma_ones<T>();
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d1[4] = {0.0f, 0.0f, 0.0f, 0.0f},
          d2[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const uint4 v = in(k) ? slot(k) : make_uint4(0, 0, 0, 0);
        const uint32_t a4[4] = {v.x, v.y, v.z, v.w};
        kb_mma16816<T>(acc, a4, ONE, ONE);
        kb_mma1688<T>(d1, v.x, v.y, v.x);
        kb_mma1688<T>(d2, v.x, v.y, v.y);
        kb_mma1688<T>(d1, v.z, v.w, v.z);
        kb_mma1688<T>(d2, v.z, v.w, v.w);
    }
    const int g = (threadIdx.x & 31) >> 2, t2 = 2 * (threadIdx.x & 3);
    const float q = g == t2 ? d1[0] + d2[2] : g == t2 + 1 ? d1[1] + d2[3] : 0.0f;
    return make_float2(0.25f * (acc[0] + acc[2]), q);
}

/* M2 = s2 - n mean^2 from the sums (n elements, their mean, s2 the sum of
 * their squares), where that loses few digits: kept when M2 >= s2 / 64, so
 * |mean| < 8 sigma, and s2 is finite; -1 otherwise, for the caller's centred
 * pass (a row centred at 10^4, squares that overflow, NaN). A relative error
 * e in the sums (fp32, at most ~40 additions deep in a block of srow2: e <
 * 2.4e-6) moves M2 by under 64 e of itself through s2 and 2 |mean| (|mean| +
 * sigma) e / sigma^2 < 144 e through the mean: rstd by under 2.5e-4 at
 * worst, a quarter of an fp16 ulp, a thirtieth of a bf16 one. */
static __device__ __forceinline__ float ln_m2_from_sums(float n, float mean, float s2)
{
    const float m2 = fmaf(-n * mean, mean, s2);
    return s2 <= 3.0e38f && 64.0f * m2 >= s2 ? m2 : -1.0f;
}

/* bf16 widened to fp32 by the tensor cores (TW): an m16n8k8 A fragment {r0,
 * r1} (lane (g, t): row g's columns 2t, 2t + 1 in r0, row g + 8's in r1)
 * against B = I gives D = {r0.lo, r0.hi, r1.lo, r1.hi}, the lane's own four
 * elements in order, exact (each a product by one plus zeros). So a 16-byte
 * vector of 8 is two HMMAs, its register pairs as loaded, where the ALU
 * spends 8 instructions (a shift or a mask each). The zeros of B meet the
 * other lanes' elements: an inf or NaN spreads to its fragment's row (8
 * elements of 4 lanes), -0 becomes +0, and a subnormal may be flushed.
 * tw_one: this lane's register of B (its halves on the diagonal, column g =
 * row 2t or 2t + 1, hold bf16 ones). */
static __device__ __forceinline__ uint32_t tw_one(void)
{
    const int g = (int)(threadIdx.x & 31) >> 2, t2 = 2 * (int)(threadIdx.x & 3);
    return (g == t2 ? 0x00003F80u : 0u) | (g == t2 + 1 ? 0x3F800000u : 0u);
}
/* The 8 bf16 elements of v widened to fp32 (two HMMAs against I). */
static __device__ __forceinline__ void tw_widen(uint4 v, uint32_t one, float *f)
{
    float d0[4], d1[4];
    kb_mma1688_0<__nv_bfloat16>(d0, v.x, v.y, one);
    kb_mma1688_0<__nv_bfloat16>(d1, v.z, v.w, one);
#pragma unroll
    for (int e = 0; e < 4; e++) {
        f[e] = d0[e];
        f[4 + e] = d1[e];
    }
}

/* Pass 1 of the two-pass statistics: unpacks the NV vectors raw into v, less
 * K when SHIFT, and returns the sum over the vectors in range (in(k)), each
 * vector's own sum first. */
template <typename T, bool SHIFT, int NV, int V, typename IN>
static __device__ __forceinline__ float shifted_sum(const uint4 (&raw)[NV], float (&v)[NV][V],
                                                    float K, IN in)
{
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        kb_unpack<T>(raw[k], v[k]);
        float sk = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++) {
            if constexpr (SHIFT)
                v[k][i] -= K;
            sk += v[k][i];
        }
        s += in(k) ? sk : 0.0f;
    }
    return s;
}

/* ---- the warp-per-row register kernel (cols <= 1024) ---------------------------- */

/* A warp per row (layernorm.cuh: ln_warp_start, ln_warp_store). MODE, an A/B
 * switch (KBENCH_LAYERNORM_WARP, fused_kernels::warp): bit 0, plain loads and
 * stores of x and y instead of the streaming hints; bit 1, the shift x[0]
 * shuffled from lane 0's first vector instead of loaded again. Prediction
 * (before any run): fp32 131072 x 1024 93.0% and 174762 x 768 95.2% of the
 * copy bandwidth (the report of 2026-12-02) +2-4 points from bit 0, as plain
 * loads gave the row kernel 3-6% (header), +0-1 from bit 1; torch.compile's
 * kernel held 97.4% at 1024. Measured (H200, 2026-12-03 12:44 UTC, two
 * rounds, counters off, L2 flushed, % of the copy bandwidth, modes 0 / 1 /
 * 2 / 3): 131072 x 1024 92.6, 93.1 / 97.2, 97.0 / 92.7, 92.9 / 97.3, 97.3;
 * 174762 x 768 95.2, 95.0 / 98.1, 98.6 / 95.0, 94.9 / 98.4, 98.3; 1048576 x
 * 128 95.7, 95.8 / 96.2, 96.2 / 95.1, 95.1 / 96.1, 96.1 (all checked).
 * Plain loads and stores: +4.2 points at 1024 and +3.3 at 768, the top of
 * the prediction, +0.5 at 128; the shuffle nothing (-0.6 at 128 alone).
 * Mode 1 is the default (KBENCH_LAYERNORM_WARP unset); KBENCH_LAYERNORM_WARP=0
 * brings back the streaming hints for an A/B.
 * Bit 2 (mode 5, KBENCH_LAYERNORM_WARP=5; 4 reads as unset): x loaded
 * without a line in L1 (kb_ld128_na), so that the 128 KB of x an SM has in
 * flight (32 warps of 4 KB rows at 1024 columns) do not evict the 12 KB of
 * gamma, beta and b that every row reads again from L1 (kb_ld128). Why:
 * at 131072 x 1024 the H200 holds 96.7% of the copy bandwidth (the report
 * of 2026-12-06) where the H100 holds 99.5% (2026-12-06 22:52 UTC, 355.9
 * us), and torch.compile's kernel (its parameters loaded evict_last) 98.0%
 * on the H200. Prediction (before
 * any run): on the H200 131072 x 1024 96.7 -> 98-99% if the parameters'
 * misses to the L2 are what the H200's faster stream exposes, 174762 x 768
 * (98.1%) level to +0.5, 1048576 x 128 (one vector a lane, 16 blocks an SM)
 * level; on the H100 level. Measured on an H100 (80GB HBM3; no H200 was
 * lent; 2026-12-07 02:21-02:22 UTC, kbench 7868091, two interleaved
 * rounds, no check, % of its copy bandwidth, mode 1 / mode 5): 131072 x
 * 1024 99.5, 99.6 / 96.6, 96.6 (0.970x); 174762 x 768 99.7, 99.6 / 97.5,
 * 97.5 (0.978x); 1048576 x 128 100.2, 100.1 / 98.7, 98.7 (0.986x). Slower
 * at every shape where level was predicted, most where the rows are
 * longest; the checks (fp32 and bf16, six cases each: 7 x 1024, 1000 x
 * 1000, tanh, statistics, a mean of 10^4) ok. So on the H100 the loads
 * without a line cost more than any eviction of the parameters they
 * spare; the H200 A/B is still to run, and mode 1 stays the default. */
template <typename T, int NV, bool TANH, int MODE = 1>
__global__ void __launch_bounds__(128, 8)
    layernorm_fused_warp(const T *__restrict__ x, const T *__restrict__ gamma,
                         const T *__restrict__ beta, const T *__restrict__ bias,
                         T *__restrict__ y, float *__restrict__ mean_out,
                         float *__restrict__ rstd_out, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr bool SHIFT = sizeof(T) == 4, CS = (MODE & 1) == 0, NA = (MODE & 4) != 0;
    int64_t row;
    uint4 raw[NV];
    if (!ln_warp_start<T, NV, CS, NA>(x, rows, cols, row, raw))
        return;
    const int lane = threadIdx.x & 31, nvec = cols / V;
    const int64_t base = row * cols;
    float K = 0.0f;
    if constexpr (SHIFT && (MODE & 2))
        K = __uint_as_float(__shfl_sync(KB_FULL_MASK, raw[0].x, 0));
    else if constexpr (SHIFT)
        K = kb_load(x, base);

    float v[NV][V];
    const float s = shifted_sum<T, SHIFT>(raw, v, K, [&](int k) { return lane + 32 * k < nvec; });
    const float md = kb_warp_sum(s) * inv_cols;
    const float q = centred_squares(v, md, [&](int k) { return lane + 32 * k < nvec; });
    const float rstd = rsqrtf(fmaf(kb_warp_sum(q), inv_cols, LN_EPS));

    ln_warp_store<T, NV, TANH, CS>(gamma, beta, bias, y, base, cols,
                                   [&](int k, int i) { return v[k][i] * rstd; });
    if (mean_out != nullptr && lane == 0) {
        mean_out[row] = K + md;
        rstd_out[row] = rstd;
    }
}

/* ---- the sub-warp register kernel (aligned rows of at most 16 vectors) ----------- *
 *
 * Prediction (before any measurement): the tile kernel took these rows
 * through shared memory at 60.0-81.3% (fp32 32 columns, swizzle off / on),
 * 52.0% (bf16 32) and 53.6% (bf16 128) of the copy bandwidth, bf16 issue-
 * bound (not_selected 29-40% of stalls): every element went global -> shared
 * -> registers -> shared -> global, and its gamma and beta + b came from
 * shared memory once a row. Softmax's register kernels of 1-16 lanes a row
 * hold 92.6-99% at the same shapes. Here a lane's parameters stay in
 * registers over its 4 rows and its x goes straight from a 16-byte load into
 * the statistics: about 19 instructions an element against ~31 the copy
 * bandwidth leaves at 16 bits (GELU 10 of them). Predicted: fp32 32 columns
 * 90-95%, bf16 32 and 128 80-90%; fp32 128 (a warp a row, 95.5%) unchanged.
 * Measured (H200, 2026-12-01 14:45 UTC, one round, no counters, % of copy
 * bandwidth, tile -> sub-warp): 4194304 x 32 fp32 81.2 -> 97.4, bf16 51.7 ->
 * 91.8; 2097152 x 64 fp32 80.5 -> 90.7, bf16 50.7 -> 90.6; 1048576 x 128 fp32
 * 95.6 -> 95.4, bf16 53.9 -> 89.4: at or above the prediction everywhere.
 *
 * G = 1, 2, 4, 8 or 16 lanes a row, one 16-byte vector a lane (rows of up to
 * 64 fp32 or 128 16-bit columns, cols a multiple of V), 256-thread blocks of
 * 256 / G groups, each group taking SUB_ROWS rows of the block's
 * 256 / G * SUB_ROWS (row j 256 / G + group, so a warp's loads stay
 * contiguous). A lane's gamma and beta + b are the same columns in every row:
 * loaded once, into registers; its SUB_ROWS vectors of x are all loaded before
 * any is used. Statistics: the exact two passes of d = x - x[0] (fp32; the
 * group's lane 0 shuffles x[0] out), log2(G) shuffles each. No shared memory,
 * no barrier. */
#define SUB_THREADS 256
#define SUB_ROWS 4

template <typename T, int G, bool TANH>
__global__ void __launch_bounds__(SUB_THREADS)
    layernorm_fused_sub(LN_PATH_BUFFERS, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr int RPB = SUB_THREADS / G; /* groups a block */
    constexpr bool SHIFT = sizeof(T) == 4;
    const int t = threadIdx.x % G, gi = threadIdx.x / G;
    const bool lane_in = t < cols / V;
    const int64_t first = (int64_t)blockIdx.x * RPB * SUB_ROWS + gi;

    uint4 raw[SUB_ROWS];
#pragma unroll
    for (int j = 0; j < SUB_ROWS; j++) {
        const int64_t row = first + (int64_t)j * RPB;
        raw[j] = lane_in && row < rows
                     ? kb_ld128(reinterpret_cast<const uint4 *>(x + row * cols) + t)
                     : make_uint4(0u, 0u, 0u, 0u);
    }
    float g[V], bb[V];
    if (lane_in)
        ln_affine_global<T>(t, gamma, beta, bias, g, bb);

#pragma unroll
    for (int j = 0; j < SUB_ROWS; j++) {
        const int64_t row = first + (int64_t)j * RPB;
        const bool ok = row < rows, in = ok && lane_in;
        float v[V];
        kb_unpack<T>(raw[j], v);
        const float K = SHIFT ? __shfl_sync(KB_FULL_MASK, v[0], 0, G) : 0.0f;
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++) {
            if constexpr (SHIFT)
                v[i] -= K;
            s += v[i];
        }
        const float md = kb_warp_sum<G>(in ? s : 0.0f) * inv_cols;
        float q = 0.0f;
#pragma unroll
        for (int i = 0; i < V; i++) {
            v[i] -= md;
            q = fmaf(v[i], v[i], q);
        }
        const float rstd = rsqrtf(fmaf(kb_warp_sum<G>(in ? q : 0.0f), inv_cols, LN_EPS));
        if (in) {
            float o[V];
#pragma unroll
            for (int i = 0; i < V; i++)
                o[i] = ln_gelu_out<T, TANH>(fmaf(v[i] * rstd, g[i], bb[i]));
            kb_st128(reinterpret_cast<uint4 *>(y + row * cols) + t, kb_pack<T>(o));
        }
        if (mean_out != nullptr && ok && t == 0) {
            mean_out[row] = K + md;
            rstd_out[row] = rstd;
        }
    }
}

/* ---- the persistent group-per-row register kernel ------------------------------- */

/* G groups of THREADS threads a block (a rung of the ladder in layernorm.cuh),
 * NV 16-byte vectors a thread: thread tid of a group owns its row's vectors
 * tid + k THREADS. EXACT: the row is exactly THREADS NV vectors (no range
 * checks). PF: how x arrives (ln_row_fetch): 0 loaded at the top of each row,
 * 1 or 2 the next row's issued right after this row is unpacked (into
 * registers, or copied into the group's shared-memory slots xs).
 * PEEL: rows off 16-byte boundaries (cols % V != 0, the buffers aligned),
 * each peeled as softmax's are: head elements up to the row's first 16-byte
 * boundary (thread t < head holds head element t), a body of whole vectors
 * (the vectors above) and tail elements (thread t < tail holds tail element
 * t). Row r starts (r cols) % V elements past a boundary, so the rows fall in
 * p = V / gcd(cols, V) classes r = c (mod p) whose rows share head, body and
 * tail; block b takes the rows of class c = b mod p only (ln_row_walk_peel), so
 * one stage of gamma and beta + b shifted to the class's head
 * (ln_stage_affine_peel; fp32 too, 8 bytes a column) serves all its rows and
 * the body's parameters are 16-byte reads from it, as the aligned rows'. The
 * head and tail elements take theirs from a small stage of their own.
 * Why: such rows took the streaming path, a block a row reading x twice and,
 * in 7 of 8 16-bit rows (3 of 4 fp32), gamma, beta and b an element at a
 * time: 4099 x 3001 at 46.2% (fp32) and 21.3% (bf16) of the copy bandwidth
 * in the report of 2026-12-04 21:33 UTC, where softmax's peeled register
 * rows hold 83.1% and 73.2% at the same shape. fp32 rows take 512-thread
 * blocks of 1-4 groups here (LN_PEEL_LADDER_F32, not the aligned rows' one
 * group a block), so that a stage (8 bytes a column) serves four rows at
 * once. Prediction (before any measurement): 4099 x 3001 75-85% fp32,
 * 65-75% bf16, as softmax's; rows past the ladder (fp32 16384 columns,
 * 16-bit 32768) stay streamed. Measured (H200, 2026-12-05 01:41 UTC, two
 * interleaved rounds, no check, % of the copy bandwidth, streaming ->
 * peeled): fp32 4099 x 3001 45.8, 45.9 -> 75.1, 75.0 (1.64x); 20000 x 1001
 * 45.8, 45.7 -> 64.6, 64.5; 2000 x 12345 38.3, 38.4 -> 73.6, 73.5; bf16
 * 4099 x 3001 20.6, 20.6 -> 45.2, 44.9 (2.19x); 20000 x 1001 23.0 -> 64.4;
 * 2000 x 12345 20.5 -> 49.9. fp32 as predicted; bf16 at 4099 x 3001 short
 * of the predicted 65-75% (softmax's 73.2%). Checked (the peel group of
 * row_lengths.sh, its sanitizers clean; the GPU test suite's layernorm
 * sizes). The default since; KBENCH_LAYERNORM_PEEL=0 streams them. */
template <typename T, int THREADS, int NV, int PF, int MINB, int G, bool EXACT, bool TANH,
          bool PEEL = false>
__global__ void __launch_bounds__(THREADS *G, MINB)
    layernorm_fused_row(const T *__restrict__ x, const T *__restrict__ gamma,
                        const T *__restrict__ beta, const T *__restrict__ bias,
                        T *__restrict__ y, float *__restrict__ mean_out,
                        float *__restrict__ rstd_out, int rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr int NW = THREADS / 32;
    constexpr bool SHIFT = sizeof(T) == 4;
    constexpr bool STAGED = sizeof(T) == 2 || PEEL; /* the parameters from the stage */
    static_assert(!PEEL || (!EXACT && THREADS >= V - 1),
                  "a peeled row's body is range-checked, its head and tail one element a thread");
    extern __shared__ uint4 ln_dyn[]; /* the stage of gamma and beta + b (16-bit, PEEL) */
    __shared__ float red[G][2][NW];
    const int tid = threadIdx.x % THREADS, gid = threadIdx.x / THREADS;

    /* The block walks rows base + step gid, base = w.first, w.first + stride,
     * ... (without PEEL base = blockIdx.x G, step 1, stride = gridDim.x G):
     * the loop's control depends on base alone, the same for the whole block,
     * so the shuffles are provably converged; a group whose row is past the
     * end (only in the block's last round) computes on zeros and writes
     * nothing. */
    const ln_row_walk w = PEEL ? ln_row_walk_peel<V>(cols, G)
                               : ln_row_walk{(int)blockIdx.x * G, 1, (int)gridDim.x * G};
    const int stride = w.stride;
    /* PEEL: the class's head, body (nvec vectors) and tail; x and y advanced by
     * head, so that the body of row r starts at x + r cols, a 16-byte boundary. */
    int head = 0, tail = 0, nvec = EXACT ? THREADS * NV : cols / V;
    if constexpr (PEEL) {
        const int mis = (int)((int64_t)w.first * cols % V); /* the class's */
        head = mis ? V - mis : 0;
        nvec = (cols - head) / V;
        tail = cols - head - nvec * V;
    }
    const T *xb = x + head; /* row r's element i: xb[r cols - head + i] */
    T *yb = y + head;

    /* PF 2: this group's stage of x, after the block's stage of gamma and beta + b. */
    uint4 *xs = ln_dyn + (STAGED ? (V / 4 + 1) * nvec : 0) + gid * (THREADS * NV);

    /* The first row's x is on its way while the block stages gamma and beta + b. */
    int base = w.first, row = base + w.step * gid; /* rows < 2^31 (launcher) */
    bool ok = row < rows;
    uint4 raw[NV];
    ln_row_fetch<T, THREADS, NV, PF, EXACT>(xb, row, ok, cols, nvec, tid, raw, xs, 0.0f);
    float K = SHIFT && ok ? kb_load(xb, (int64_t)row * cols - head) : 0.0f;
    /* PEEL: this thread's head and tail elements (0 where it has none). */
    float eh = 0.0f, et = 0.0f;
    auto peel_fetch = [&](int r, bool okr, float &h, float &t) {
        const T *xr = xb + (int64_t)(okr ? r : 0) * cols;
        h = okr && tid < head ? kb_load(xr, tid - head) : 0.0f;
        t = okr && tid < tail ? kb_load(xr, nvec * V + tid) : 0.0f;
    };
    /* PEEL: the head's and the tail's gamma and beta + b, [0][t] head
     * element t's, [1][t] tail element t's (the stage's barrier orders them). */
    __shared__ float2 peel_p[2][PEEL ? V : 1];
    if constexpr (PEEL) {
        if (PF != 0)
            peel_fetch(row, ok, eh, et);
        const auto par = [&](int c) {
            return make_float2(kb_load(gamma, c), kb_load(beta, c) + kb_load(bias, c));
        };
        if (tid < head && gid == 0)
            peel_p[0][tid] = par(tid);
        if (tid < tail && gid == 0)
            peel_p[1][tid] = par(head + nvec * V + tid); /* tail element tid's column */
        ln_stage_affine_peel<T>(gamma, beta, bias, ln_dyn, nvec, head, cols);
    } else {
        ln_stage_affine<T>(gamma, beta, bias, ln_dyn, nvec);
    }
    const uint4 *stt = ln_dyn + tid; /* this thread's first vector of the stage */

    for (;;) {
        /* PF 0: the head and tail elements loaded here, not with the row's
         * vectors at the end of the last (where they spilled) */
        if constexpr (PEEL && PF == 0)
            peel_fetch(row, ok, eh, et);
        ln_row_take<THREADS, NV, PF, EXACT>(ok, nvec, tid, raw, xs);

        /* Pass 1: the sum of d = x - K. Vectors past the row's end hold zeros;
         * only their partial sums are dropped. */
        float v[NV][V];
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            kb_unpack<T>(raw[k], v[k]);
            if constexpr (SHIFT) {
#pragma unroll
                for (int i = 0; i < V; i++)
                    v[k][i] -= K;
            }
            float sk = v[k][0];
#pragma unroll
            for (int i = 1; i < V; i++)
                sk += v[k][i];
            s += EXACT || tid + k * THREADS < nvec ? sk : 0.0f;
        }
        if constexpr (PEEL) {
            eh = tid < head ? eh - K : 0.0f; /* d of the head and tail elements */
            et = tid < tail ? et - K : 0.0f;
            s += eh + et;
        }

        /* PF 1, 2: the next row's x starts on its way now, to fly during this
         * row's barriers and output. */
        const int nbase = base + stride, next = row + stride;
        const bool okn = next < rows;
        float Kn = 0.0f, ehn = 0.0f, etn = 0.0f;
        if (PF != 0 && nbase < rows) {
            ln_row_fetch<T, THREADS, NV, PF, EXACT>(xb, next, okn, cols, nvec, tid, raw, xs, s);
            if constexpr (SHIFT)
                Kn = okn ? kb_load(xb, (int64_t)next * cols - head) : 0.0f;
            if constexpr (PEEL)
                peel_fetch(next, okn, ehn, etn);
        }

        const float md = ln_group_sum<NW, G>(s, red[gid][0], gid) * inv_cols;

        /* Pass 2: c = d - mean_d, kept in v; the sum of c^2. red[gid][0] is not
         * written again before the next row's first sum, which follows this
         * sum's barrier. */
        float q =
            centred_squares(v, md, [&](int k) { return EXACT || tid + k * THREADS < nvec; });
        if constexpr (PEEL) {
            eh = tid < head ? eh - md : 0.0f;
            et = tid < tail ? et - md : 0.0f;
            q = fmaf(eh, eh, fmaf(et, et, q));
        }
        const float rstd =
            rsqrtf(fmaf(ln_group_sum<NW, G>(q, red[gid][1], gid), inv_cols, LN_EPS));

        /* Output: y = GELU(c * rstd * gamma + (beta + b)), plain 16-byte stores;
         * fp32 tanh fences each vector (ln_row_store). */
        ln_row_store<T, THREADS, NV, EXACT, TANH, TANH && SHIFT, STAGED>(
            gamma, beta, bias, yb, mean_out, rstd_out, row, ok, cols, nvec, tid, stt,
            [&] { return K + md; }, rstd, [&](int k, int i) { return v[k][i] * rstd; });
        if constexpr (PEEL) {
            auto peel_out = [&](int off, float c, float2 gb) {
                kb_store(yb + (int64_t)row * cols, off,
                         ln_gelu_out<T, TANH>(fmaf(c * rstd, gb.x, gb.y)));
            };
            if (ok && tid < head)
                peel_out(tid - head, eh, peel_p[0][tid]);
            if (ok && tid < tail)
                peel_out(nvec * V + tid, et, peel_p[1][tid]);
        }
        if (nbase >= rows)
            break;
        base = nbase;
        row = next;
        ok = okn;
        if constexpr (PF == 0) {
            ln_row_fetch<T, THREADS, NV, PF, EXACT>(xb, row, ok, cols, nvec, tid, raw, xs, 0.0f);
            if constexpr (SHIFT)
                K = ok ? kb_load(xb, (int64_t)row * cols - head) : 0.0f;
        } else {
            K = Kn;
            eh = ehn;
            et = etn;
        }
    }
}

/* ---- 16-bit rows of one block's shared memory ----------------------------------- *
 *
 * Aligned 16-bit rows of 32769-65536 columns, which the ladder's 1024 x 4
 * vectors do not hold and whose stage of gamma and beta + b (6 bytes a column)
 * would not fit in shared memory beside the row, went to the streaming path:
 * two reads of x, 51.6% of the copy bandwidth at 2048 x 65536 bf16 (report of
 * 2026-12-01 17:49 UTC), where softmax holds the same row in one block's
 * registers at 89.2%. Here a persistent 1024-thread block copies a row into
 * 128 KB of shared memory (cp.async, 8 vectors a thread, each read back only
 * by the thread that copied it: no barrier), takes the exact two-pass
 * statistics from there and writes y, with gamma, beta and b as three 16-byte
 * loads a vector through L1 and L2, as in the fp32 kernels. Held in registers
 * (8 packed vectors a thread, 32 registers) the row left too few for the
 * output pass: ptxas hoisted the parameter loads of later vectors and spilled
 * 100-600 bytes; from shared memory the output loop need not be unrolled. One
 * read of x, one write of y. Prediction (before any measurement): like
 * softmax's one-block row less layernorm's extra issue (parameter loads, GELU,
 * three reads of shared memory), 2048 x 65536 bf16 from 51.6% to 75-85%.
 * KBENCH_LAYERNORM_SMEM_ROW=0 sends these rows back to the streaming path.
 * Measured (H200, 2026-12-01 19:45 UTC, two interleaved rounds, no counters,
 * % of copy bandwidth, streaming -> this kernel, bf16): 2048 x 65536 51.5 ->
 * 61.1, with GELU 51.8 -> 66.3; 3000 x 40000 42.2 -> 53.3; 137 x 65536
 * (L2-resident) 26.6 -> 31.5. Kept, at half the predicted gain: the
 * counters put 29% of stalls on long_sb, a row's copies waited for with
 * nothing else on the SM, since a second row (256 KB) does not fit beside
 * the first, so DRAM idles while a row is reduced and written.
 * Tried and not kept (same runs; code in commit a2c7340): fp32 rows of
 * 32769-65536 columns the same way, 4 of a thread's 16 vectors in registers
 * and 12 in 192 KB of shared memory, statistics of x - x[0] (63-64
 * registers, no spills), predicted 80-88% at 2048 x 65536 against the
 * cluster register kernel's 75.5%: cluster -> this kernel 75.8 -> 71.0,
 * with GELU 76.9 -> 69.3, 3000 x 40000 65.0 -> 62.5, 137 x 65536 50.0 ->
 * 47.4. The two-block cluster overlaps one block's load with the other's
 * work; one block an SM does not.
 * Next (prediction, before any measurement): at 4096 x 65536 bf16 (66.3%,
 * report of 20:04 UTC) a row takes 12.3 us an SM, against 8 us for its 256 KB
 * at the SM's share of the copy bandwidth: about 4 us waiting for the row's
 * copies, then about 7 us of passes and output (GELU's 10 instructions an
 * element dominate) with nothing in flight but the stores. With PF = 4 more
 * slots a thread (192 KB a block), the next row's first 4 vectors are copied
 * into the free slots as soon as this row's have arrived, and its last 4 into
 * this row's first 4 slots as the output pass frees them (a ring of 12 slots
 * a thread), so the copies fly during the work: 66% to 78-88% (the issue
 * limit). KBENCH_LAYERNORM_SROW_PF=0 keeps the kernel without prefetch.
 * Measured (H200, 2026-12-01 21:20 UTC, two interleaved rounds, no counters,
 * % of copy bandwidth, bf16, without -> with the ring): 4096 x 65536 63.4 /
 * 63.7 -> 68.6 / 67.1, with GELU 68.9 / 68.5 -> 72.7 / 72.3, 3000 x 40000
 * 55.7 / 55.6 -> 57.7 / 57.4; 137 x 65536 (L2-resident, one row a block)
 * 31.2 / 31.1 -> 30.3 / 30.2. Kept: a third of the predicted gain. The copy
 * of the next row's first 4 vectors waits for this row's to arrive, and its
 * last 4 for the output pass, so a row's passes still run with half of the
 * next row in flight at most.
 * Instructions an element (2026-12-04, nvdisasm of the sm_90 cubin, no GPU;
 * a row loop's static instructions, inner loops times their trips, over a
 * thread's elements of the row): this kernel (exact, erf, PF = 4) 553 +
 * 8 x 185 (the output loop, 8 elements a trip) for 64 elements, ~31.8 an
 * element; the 16-bit row kernel at 16384 columns (2 groups of 512 x 4
 * vectors) 794 for 32, ~24.8; the persistent clusters (bf16, 4 blocks,
 * plain sums) 631 for 16, ~39.4, and fp32 656 for 16, ~41. At the
 * report's rates (2026-12-04, 1980 MHz: bf16 4096 x 65536 here at 67.8% of
 * the copy bandwidth, 0.72 G elements/ms; the row kernel at 16384 at
 * 89.9%, 0.96) both issue 2.3-2.4e13 thread instructions a second, ~70% of
 * the GPU's 3.34e13, the share the counters read (73% here, 2026-12-04
 * 07:25 UTC): 16-bit rows run at a rate set by their instructions an
 * element. 85% of the copy bandwidth in bf16 (0.91 G elements/ms) at that
 * issue share asks for at most ~26 an element, so this kernel needs a
 * fifth fewer; the persistent clusters, ~39 an element over 120 SMs, lose
 * to it, as measured (44.7% against 54.2%, above the persistent cluster
 * kernel), while fp32 rows, half the elements a byte, have room at ~41
 * (~52 at 85%). What the output loop spends beside GELU's 10 and the
 * normalisation's 3 an element: the three parameter vectors from the L2,
 * unpacked and beta + b added (~4 an element; the row kernel stages gamma
 * raw and beta + b as floats in shared memory, for which this kernel's
 * shared memory has no room), x unpacked a third time, and the loop's
 * address arithmetic (15 IADD3 and 4 ISETP a trip). */
#define LN_SROW_NV 8         /* vectors a thread */
#define LN_SROW_THREADS 1024 /* one block an SM */
#define LN_SROW_PF 4 /* slots a thread of the next row's vectors, flying during this row's */

/* The longest row the shared-memory row kernel holds in a block of TH threads
 * (65536 16-bit elements at 1024). */
template <typename T, int TH = LN_SROW_THREADS> static constexpr int64_t srow_cols(void)
{
    return (int64_t)TH * LN_SROW_NV * kb_vec_width<T>();
}

template <typename T, bool EXACT, bool TANH, int PF>
__global__ void __launch_bounds__(LN_SROW_THREADS, 1)
    layernorm_fused_srow(LN_PATH_BUFFERS, int rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>(), NV = LN_SROW_NV, THREADS = LN_SROW_THREADS;
    constexpr int NW = THREADS / 32;
    constexpr int R = NV + PF; /* a thread's slots: a ring */
    static_assert(V == 8, "16-bit rows");
    static_assert(PF <= NV, "the next row's vectors fill the slots freed");
    extern __shared__ uint4 ln_dyn[]; /* slot q of this thread at q THREADS + tid */
    __shared__ float red[2][NW];
    const int tid = threadIdx.x;
    const int nvec = EXACT ? THREADS * NV : cols / V;
    const auto in = [&](int k) { return EXACT || tid + k * THREADS < nvec; };
    const uint4 *xt = ln_dyn + tid;
    const uint32_t st = kb_smem_u32(ln_dyn + tid);
    const auto wrap = [](int q) { return q >= R ? q - R : q; };
    /* Vector k of row r into slot q: each thread copies, and later reads, only
     * its own slots, so no barrier orders them. */
    const auto fetch = [&](int r, int k, int q) {
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + (int64_t)r * cols) + tid;
        kb_cp_async16(st + q * THREADS * 16, xv + k * THREADS, 16);
    };
    int base = 0; /* the slot of the current row's vector 0; vector k in wrap(base + k) */
    /* the row loop's control is the block's: every thread takes every row */
    int row = blockIdx.x;
    if (row < rows) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (in(k))
                fetch(row, k, k);
        kb_cp_async_commit();
    }
    for (; row < rows; row += gridDim.x) {
        const int next = row + (int)gridDim.x;
        const int nbase = wrap(base + NV);
        kb_cp_async_wait<0>();
        /* PF > 0: the next row's first PF vectors into the free slots now, the
         * rest into this row's slots as the output pass frees them. */
        if constexpr (PF > 0) {
            if (next < rows) {
#pragma unroll
                for (int k = 0; k < PF; k++)
                    if (in(k))
                        fetch(next, k, wrap(nbase + k));
                kb_cp_async_commit();
            }
        }
        /* Pass 1: the sum of the row's vectors. */
        const auto slot = [&](int k) { return xt[wrap(base + k) * THREADS]; };
        const float md = ln_group_sum<NW, 1>(packed_sum<T, NV>(slot, in), red[0], 0) * inv_cols;
        /* Pass 2: the sum of (x - mean)^2. red[0] is not written again before
         * the next row's first sum, which follows this sum's barrier. */
        const float q = packed_centred_squares<T, NV>(slot, md, in);
        const float rstd = rsqrtf(fmaf(ln_group_sum<NW, 1>(q, red[1], 0), inv_cols, LN_EPS));
        /* Output: y = GELU((x - mean) rstd gamma + (beta + b)), a vector an
         * iteration; once vector k < NV - PF is written, its slot takes the
         * next row's vector PF + k (the ring: wrap(nbase + PF + k) is
         * wrap(base + k)); without PF, the next row's copies, issued after
         * this loop, overwrite only this thread's slots after its reads here. */
        uint4 *yv = reinterpret_cast<uint4 *>(y + (int64_t)row * cols) + tid;
        const T *gt = gamma + tid * V, *b1t = beta + tid * V, *b2t = bias + tid * V;
#pragma unroll 1
        for (int k = 0; k < NV; k++) {
            if (!in(k))
                break;
            const int sl = wrap(base + k);
            float f[V], g[V], bb[V];
            kb_unpack<T>(xt[sl * THREADS], f);
            ln_affine_global<T>(k * THREADS, gt, b1t, b2t, g, bb);
#pragma unroll
            for (int i = 0; i < V; i++)
                f[i] = ln_gelu_out<T, TANH>(fmaf((f[i] - md) * rstd, g[i], bb[i]));
            kb_st128(yv + k * THREADS, kb_pack<T>(f));
            if (PF > 0 && k < NV - PF && next < rows && in(PF + k)) {
                /* f came from slot sl: its read is done before the copy */
                asm volatile("" ::"f"(f[V - 1]) : "memory");
                fetch(next, PF + k, sl);
            }
        }
        if (mean_out != nullptr && tid == 0) {
            mean_out[row] = md;
            rstd_out[row] = rstd;
        }
        if (next < rows) {
            if constexpr (PF == 0) {
#pragma unroll
                for (int k = 0; k < NV; k++)
                    if (in(k))
                        fetch(next, k, k);
            }
            kb_cp_async_commit();
        }
        base = nbase;
    }
}

/* Launches layernorm_fused_srow: as many blocks as SMs (one an SM), or rows;
 * PF slots of prefetch a thread unless KBENCH_LAYERNORM_SROW_PF=0 (above). */
template <typename T, bool EXACT, bool TANH, int PF>
static cudaError_t launch_srow_pf(const kb_args *a, cudaStream_t s, const char *name)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    constexpr size_t smem = (size_t)LN_SROW_THREADS * (LN_SROW_NV + PF) * 16;
    int sms = 0;
    cudaError_t e = kb_current_sms(&sms);
    if (e != cudaSuccess)
        return e;
    const kb_dim3 grid = {(unsigned)(p.rows < sms ? p.rows : sms), 1, 1};
    const kb_dim3 block = {LN_SROW_THREADS, 1, 1};
    const auto k = layernorm_fused_srow<T, EXACT, TANH, PF>;
    e = kb_allow_smem(k, smem);
    return e != cudaSuccess ? e
                            : kb_launch(a, s, k, name, grid, block, smem, p.x, p.g, p.b1, p.b2,
                                        p.y, p.mo, p.ro, (int)p.rows, p.cols, p.inv_cols);
}

template <typename T, bool TANH> static cudaError_t launch_srow(const kb_args *a, cudaStream_t s)
{
    static const int pf = kb_env_int("KBENCH_LAYERNORM_SROW_PF", 1, 0, 1);
    const bool exact = a->shape[LN_COLS] == srow_cols<T>();
    constexpr int PF = LN_SROW_PF;
    if (pf)
        return exact ? launch_srow_pf<T, true, TANH, PF>(a, s, "layernorm_fused_srow_pf_exact")
                     : launch_srow_pf<T, false, TANH, PF>(a, s, "layernorm_fused_srow_pf");
    return exact ? launch_srow_pf<T, true, TANH, 0>(a, s, "layernorm_fused_srow_exact")
                 : launch_srow_pf<T, false, TANH, 0>(a, s, "layernorm_fused_srow");
}

/* ---- the tile kernel (short rows, several a warp) -------------------------------- *
 *
 * Rows of up to 8 G elements, G = 4, 8, 16, 32 lanes a row, any length: a
 * block's rows are one contiguous span of x, copied into shared memory with
 * 16-byte loads (the span's sticking-out first and last vectors element by
 * element, the span placed as it sits against 16-byte boundaries); each group
 * takes its row from there (up to 8 elements a lane, two-pass statistics of
 * d = x - x[0] over log2(G) shuffles each), writes y in place, and the block
 * stores the span with 16-byte stores. gamma and beta + b are staged once a
 * block as floats. A block takes as many rounds of 256 / G rows as fill
 * KB_TILE_ELEMS elements, each thread's loads of the span all issued before it
 * stores any (kb_span_in). */
#define TILE_COLS (KB_TILE_PER_LANE * 32) /* the longest row the tile kernel takes */

template <typename T, int G, int NPL, bool TANH, bool SWZ>
__global__ void __launch_bounds__(KB_TILE_THREADS)
    layernorm_fused_tile(const T *__restrict__ x, const T *__restrict__ gamma,
                         const T *__restrict__ beta, const T *__restrict__ bias,
                         T *__restrict__ y, float *__restrict__ mean_out,
                         float *__restrict__ rstd_out, int64_t rows, int cols, float inv_cols)
{
    constexpr int W = kb_vec_width<T>();
    constexpr int RPR = KB_TILE_THREADS / G; /* rows a round */
    static_assert(!SWZ || NPL == KB_TILE_PER_LANE, "the swizzle permutes 8 elements a lane");
    __shared__ __align__(16) T tile[KB_TILE_ELEMS + W]; /* + the misalignment */
    __shared__ float gs[NPL * G], bs[NPL * G];
    const int tid = threadIdx.x, t = tid % G;
    const int span = (int)kb_span_rows(KB_TILE_ELEMS, RPR, cols); /* rows a block */
    const kb_span sp = kb_span_of<T>(rows, cols, span);
    const int nrows = sp.nrows, mis = sp.mis;

    for (int c = tid; c < cols; c += KB_TILE_THREADS) {
        gs[c] = kb_load(gamma, c);
        bs[c] = kb_load(beta, c) + kb_load(bias, c);
    }
    kb_span_in<T, KB_TILE_THREADS, kb_span_maxv<T>(KB_TILE_THREADS, KB_TILE_ELEMS)>(tile, x, sp);
    __syncthreads();

    /* Each group its rows, in place; groups past the span's rows compute on
     * zeros, write nothing, and take part in the shuffles. */
    for (int k = 0; k < span / RPR; k++) {
        const int r = k * RPR + tid / G;
        const bool ok = r < nrows;
        const int lim = ok ? cols : 0;
        T *row = &tile[mis + (ok ? r : 0) * cols];
        const float K = ok ? kb_to_float(row[0]) : 0.0f;
        float v[NPL];
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            const int c = kb_tile_col<G, SWZ>(t, i, r);
            v[i] = c < lim ? kb_to_float(row[c]) - K : 0.0f;
            sum += v[i];
        }
        const float md = kb_warp_sum<G>(sum) * inv_cols;
        float q = 0.0f;
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            const int c = kb_tile_col<G, SWZ>(t, i, r);
            v[i] -= md;
            q = c < lim ? fmaf(v[i], v[i], q) : q;
        }
        const float rstd = rsqrtf(fmaf(kb_warp_sum<G>(q), inv_cols, LN_EPS));
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            const int c = kb_tile_col<G, SWZ>(t, i, r);
            if (c < lim)
                row[c] = kb_from_float<T>(ln_gelu_out<T, TANH>(fmaf(v[i] * rstd, gs[c], bs[c])));
        }
        if (mean_out != nullptr && ok && t == 0) {
            mean_out[sp.r0 + r] = K + md;
            rstd_out[sp.r0 + r] = rstd;
        }
    }
    __syncthreads();

    kb_span_out<T, KB_TILE_THREADS>(y, tile, sp);
}

/* ---- the thread-row kernel (short rows off 16-byte boundaries, a thread a row) ---- *
 *
 * The tile kernel spends its issue slots on the group, not the row: at 33
 * columns (8 lanes of 5 elements a row) the counters put 90% of bf16's issue
 * slots in use at 46.5% of the copy bandwidth, about 60 instructions an
 * element where the element's own work (a load, the two passes, the affine
 * step, GELU's 12-instruction erf, a store) is about 22: each round of 32 rows
 * pays 2 x 3 shuffles, the row's address and a range check and branch around
 * every element slot (the slot's lane and row vary within the warp). Here a
 * thread takes a whole row (NPL >= cols elements in registers, the first NPL -
 * 8 known to be in the row, the last 8 checked against cols, the same for the
 * whole block, so the check is a uniform branch), from the same span in shared
 * memory the tile kernel uses, 256 rows a block; gamma and beta + b are one
 * broadcast 8-byte load a column. Rows of 33 elements start 33 banks apart
 * (fp32) or 16.5 (16-bit): the warp's 32 rows read 32 different banks.
 * Prediction (before any measurement): 4067203 x 33 bf16 from 46.5% to
 * 75-85% (the issue per element cut to about 25), fp32 from 71.9% (73% of
 * issue slots, short_sb) to 80-88%. KBENCH_LAYERNORM_TROW=0 keeps the tile
 * kernel.
 * Measured (H200, 2026-12-01 20:00 UTC, two interleaved rounds, no counters,
 * x of 512 MB at 33 columns, % of copy bandwidth, tile -> thread-row, the
 * rounds within 0.3): 4067203 x 33 fp32 72.0 -> 90.6, 8134406 x 33 bf16 47.3
 * -> 67.7 (with GELU 49.6 -> 68.0), 3000000 x 39 bf16 52.8 -> 67.8, 8000000
 * x 7 bf16 31.2 -> 50.5; but 2000000 x 17 fp32 74.2 -> 72.2, so fp32 rows of
 * up to 24 columns stay with the tile kernel. fp32 did what was predicted;
 * bf16 reached 68%, short of 75-85%: the counters (33 columns) put bf16 at
 * 76% of issue slots (wait 20%, not_selected 19% of stalls), fp32 at 58%
 * (long_sb 24%): 16-bit is still issue-bound on the element's own work, of
 * which GELU's erf is half, and on the 7 of 40 slots that are skipped, not
 * free, at 33 columns. 64 registers (16-bit, 4 blocks an SM), 80 (fp32, 3);
 * no spills. */

/* The two-pass statistics of a thread's row in NPL slots (in(i): slot i is in
 * the row, x(i) its element): v[i] = x(i) less the mean on return, 0 past the
 * row; returns (mean, rstd) of the x(i). */
template <int NPL, typename IN, typename X>
static __device__ __forceinline__ float2 trow_stats(float (&v)[NPL], IN in, X x, float inv_cols)
{
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < NPL; i++) {
        v[i] = in(i) ? x(i) : 0.0f;
        sum += v[i];
    }
    const float md = sum * inv_cols;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < NPL; i++) {
        v[i] -= md;
        q = in(i) ? fmaf(v[i], v[i], q) : q;
    }
    return make_float2(md, rsqrtf(fmaf(q, inv_cols, LN_EPS)));
}

/* gamma and beta + b of each of the row's cols columns into gb, by a block of
 * the thread-row kernels; p = gb[c]: y = GELU(v rstd p.x + p.y) (trow_y). */
template <typename T>
static __device__ __forceinline__ void trow_params(float2 *gb, const T *__restrict__ gamma,
                                                   const T *__restrict__ beta,
                                                   const T *__restrict__ bias, int cols)
{
    for (int c = (int)threadIdx.x; c < cols; c += KB_TROW_THREADS)
        gb[c] = make_float2(kb_load(gamma, c), kb_load(beta, c) + kb_load(bias, c));
}

/* Output element of v (x less the mean) of a column whose parameters are p. */
template <typename T, bool TANH>
static __device__ __forceinline__ float trow_y(float v, float rstd, const float2 &p)
{
    return ln_gelu_out<T, TANH>(fmaf(v * rstd, p.x, p.y));
}

template <typename T, int NPL, bool TANH>
__global__ void __launch_bounds__(KB_TROW_THREADS, sizeof(T) == 4 ? 3 : 4)
    layernorm_fused_trow(const T *__restrict__ x, const T *__restrict__ gamma,
                         const T *__restrict__ beta, const T *__restrict__ bias,
                         T *__restrict__ y, float *__restrict__ mean_out,
                         float *__restrict__ rstd_out, int64_t rows, int cols, float inv_cols)
{
    constexpr int W = kb_vec_width<T>(), E = KB_TROW_THREADS * NPL; /* a span's most elements */
    __shared__ __align__(16) T tile[E + W]; /* + the misalignment */
    __shared__ float2 gb[NPL];              /* gamma and beta + b of each column */
    const int tid = threadIdx.x;
    const kb_span sp = kb_span_of<T>(rows, cols, KB_TROW_THREADS);
    trow_params(gb, gamma, beta, bias, cols);
    kb_span_in<T, KB_TROW_THREADS, kb_span_maxv<T>(KB_TROW_THREADS, E)>(tile, x, sp);
    __syncthreads();

    const auto in = [&](int i) { return kb_trow_in<NPL>(i, cols); };
    if (tid < sp.nrows) {
        T *row = &tile[sp.mis + tid * cols];
        const float K = kb_to_float(row[0]);
        float v[NPL];
        const float2 st =
            trow_stats(v, in, [&](int i) { return kb_to_float(row[i]) - K; }, inv_cols);
        const float md = st.x, rstd = st.y;
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            if (in(i)) {
                const float2 p = gb[i];
                row[i] = kb_from_float<T>(trow_y<T, TANH>(v[i], rstd, p));
            }
        }
        if (mean_out != nullptr) {
            mean_out[sp.r0 + tid] = K + md;
            rstd_out[sp.r0 + tid] = rstd;
        }
    }
    __syncthreads();

    kb_span_out<T, KB_TROW_THREADS>(y, tile, sp);
}

/* ---- the thread-row kernel on words (16-bit rows of up to 40 columns, a switch) -- *
 *
 * What the 16-bit thread-row kernel above still spends, from its SASS (bf16,
 * NPL 40, erf form, a thread's path through it counted at 33 columns: about
 * 1000 instructions a row, 30 an element; the counters put it at 76% of the
 * issue slots at 67.7% of the copy bandwidth): an element's 16-bit shared-
 * memory load and widening (2), the shift by K and the two passes (4), the
 * scale, the parameters' load and the affine step (3), GELU (8), and the
 * narrowing, a move of the half into place and a 16-bit store (3): 20; the
 * 7 idle slots of 40 about 1.5; the span's copy in about 5.5 (64-bit
 * offsets, and checks and an address for each of a thread's 6 vector slots,
 * which hold 4.1 vectors on average) and out about 2; the rest the row's own.
 * Here, for 16-bit elements:
 *   - a thread reads its row as 32-bit words and writes it back as words of
 *     two elements packed by one conversion (F2FP), 16-bit stores only for a
 *     half word at either end of the row: 1.5 instructions an element in, 1
 *     out. A row starts at an odd element in every other row when cols is
 *     odd, so the parity P of a row's start is a template argument of the
 *     row's code and a warp takes rows of one parity (warp w of a group of
 *     two takes the group's rows 2 lane + w % 2, whose starts are cols words
 *     apart: 32 banks for odd cols); for even cols every row of a block has
 *     the block's parity and a warp takes 32 consecutive rows (cols / 2
 *     words apart: odd for cols = 2 mod 4, as in the kernel above). Every
 *     thread reads its words before any writes its row (one more barrier),
 *     since the words at a row's ends hold a neighbour's elements;
 *   - no shift by K (16-bit inputs, as the other 16-bit row kernels);
 *   - gamma and beta + b as float2s, two columns a 16-byte load;
 *   - the span's offsets in 32 bits (kb_span_in's I), a thread's vectors at
 *     immediate offsets from its first;
 *   - or (BULK, KBENCH_LAYERNORM_TROW=3) the span copied in by the copy
 *     engine, one cp.async.bulk of its whole vectors on an mbarrier, and out
 *     by one bulk store of the vectors wholly in the span, the elements of
 *     the two it shares with the neighbouring blocks by threads.
 * SASS (sm_90, bf16, 33 columns, the same count): about 830 instructions a
 * row with the threads' copies (25 an element: the row's code ~17, the span
 * ~6), about 690 with the copy engine's (21). Prediction (before any run),
 * while issue-bound at the same share of the issue slots: 8134407 x 33 bf16
 * (69.7% in the committed report) to 76-82% (TROW=2) and 82-90% (TROW=3),
 * fp16 likewise, 39 columns too; rows of up to 24 columns by less.
 * Registers: 32-64 (36-64 above), no spills.
 * Measured (H200, 2026-12-05 01:40-01:47 UTC, two interleaved rounds, no
 * check, % of the copy bandwidth, thread-row -> TROW=2 -> TROW=3; this
 * GPU's thread-row figures below the report's): bf16 8134407 x 33 58.9,
 * 57.6 -> 62.1, 62.7 -> 72.6, 74.6 (1.26x); 3000000 x 39 59.3, 58.1 ->
 * 67.3, 67.4 -> 76.8, 76.8 (1.31x); 8000000 x 7 51.7, 51.8 -> 50.8, 50.5 ->
 * 49.3, 49.5 (0.955x); thread-row -> TROW=3: bf16 2500000 x 31 1.21x,
 * 3000000 x 23 1.22x, 4000000 x 17 1.15x, 6000000 x 12 1.04x, 8000000 x 9
 * 1.00x; fp16 8134407 x 33 1.24x, 8000000 x 7 0.98x. The copy engine's
 * spans are most of the gain (the threads' form 1.07-1.15x): the prediction
 * held for TROW=3, not for the threads' copies. Checked (the trow-w group:
 * both forms, fp32/fp16/bf16, all three sanitizers clean; the GPU test
 * suite's layernorm sizes with TROW=3). The default since for 16-bit rows
 * of 9-40 columns (=3); rows of up to 8 keep the thread-row kernel;
 * KBENCH_LAYERNORM_TROW=1 keeps it for all, =2 the threads' copies. */

/* Row code of the word kernel for a row starting at an element of parity P:
 * w the words from the one holding the row's first element (element i is
 * half (i + P) % 2 of w[(i + P) / 2]), tw the same words in the tile (written
 * back there), row the row's first element in the tile. */
template <typename T, int NPL, bool TANH, int P>
static __device__ __forceinline__ void trow_words_row(const unsigned (&w)[NPL / 2 + 1],
                                                      unsigned *tw, T *row, const float2 *gb,
                                                      int cols, float inv_cols,
                                                      float *mean_out, float *rstd_out)
{
    const auto in = [&](int i) { return kb_trow_in<NPL>(i, cols); };
    const auto elem = [&](int i) {
        const float2 f = kb_unpack2<T>(w[(i + P) / 2]);
        return (i + P) % 2 == 0 ? f.x : f.y;
    };
    float v[NPL];
    const float2 st = trow_stats(v, in, elem, inv_cols);
    const float md = st.x, rstd = st.y;
#pragma unroll
    for (int i = 0; i < NPL; i++)
        if (in(i))
            v[i] = trow_y<T, TANH>(v[i], rstd, gb[i]);
    /* word k holds elements 2k - P and 2k + 1 - P */
    if constexpr (P == 1)
        row[0] = kb_from_float<T>(v[0]);
#pragma unroll
    for (int k = P; k <= NPL / 2; k++) {
        const int e = 2 * k - P;
        if (e + 1 < NPL && in(e + 1))
            tw[k] = kb_pack2<T>(v[e], v[e + 1]);
        else if (e < NPL && in(e))
            row[e] = kb_from_float<T>(v[e]);
    }
    if (mean_out != nullptr) {
        *mean_out = md;
        *rstd_out = rstd;
    }
}

/* A block's span (kb_span) into tile by the copy engine: thread 0 readies
 * barrier bar and has the span's
 * vectors that lie wholly in x (total elements; all of them but the final
 * block's last, when x ends inside it) copied into tile; the THREADS threads
 * copy the rest of that vector element by element. After the caller's
 * __syncthreads, every thread waits for the copy on bar (phase 0). */
template <typename T, int THREADS>
KB_DEV void ln_span_bulk_in(T *tile, const T *__restrict__ x, const kb_span &sp, int64_t total,
                            uint64_t *bar)
{
    constexpr int W = kb_vec_width<T>();
    const T *xs = x + (sp.e0 - sp.mis);
    const int64_t whole = (total - (sp.e0 - sp.mis)) / W;
    const int nin = whole < sp.nvec ? (int)whole : sp.nvec;
    const uint32_t b = kb_smem_u32(bar);
    if (threadIdx.x == 0) {
        kb_mbar_init(b, 1);
        kb_mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        kb_mbar_expect_tx(b, 16u * (unsigned)nin);
        if (nin > 0)
            kb_bulk_load(kb_smem_u32(tile), xs, 16u * (unsigned)nin, b);
    }
    for (int i = nin * W + (int)threadIdx.x; i < sp.mis + (int)sp.n; i += THREADS)
        tile[i] = xs[i];
}

/* Span sp back from tile to y, as ln_span_bulk_in brought it: the vectors
 * wholly in the span by the copy engine (thread 0), the elements of the
 * vectors it shares with the neighbouring blocks' spans by threads 0..W-2
 * (head) and 32..32+W-2 (tail). Every thread calls it after writing its
 * part of tile (a barrier inside). */
template <typename T>
KB_DEV void ln_span_bulk_out(T *__restrict__ y, const T *tile, const kb_span &sp)
{
    constexpr int W = kb_vec_width<T>();
    T *ys = y + (sp.e0 - sp.mis);
    const int end = sp.mis + (int)sp.n;
    const int lo = (sp.mis + W - 1) / W, hi = end / W; /* the whole vectors [lo, hi) */
    const int h1 = lo * W < end ? lo * W : end, t0 = hi * W > h1 ? hi * W : h1;
    const int t = (int)threadIdx.x;
    kb_fence_proxy_async(); /* this thread's writes to tile, before the copy engine's reads */
    __syncthreads();
    if (t == 0 && hi > lo) {
        kb_bulk_store(ys + lo * W, kb_smem_u32(tile + lo * W), 16u * (unsigned)(hi - lo));
        kb_bulk_commit();
    }
    if (t < W && sp.mis + t < h1)
        ys[sp.mis + t] = tile[sp.mis + t];
    if (t >= 32 && t < 32 + W && t0 + t - 32 < end)
        ys[t0 + t - 32] = tile[t0 + t - 32];
    if (t == 0 && hi > lo)
        kb_bulk_wait_read<0>(); /* tile is read before the block's shared memory goes */
}

/* The word kernel; with BULK its span in and out by the copy engine
 * (ln_span_bulk_in / _out) instead of the threads' vector copies. */
template <typename T, int NPL, bool TANH, bool BULK>
__global__ void __launch_bounds__(KB_TROW_THREADS, 4)
    layernorm_fused_trow_w(const T *__restrict__ x, const T *__restrict__ gamma,
                           const T *__restrict__ beta, const T *__restrict__ bias,
                           T *__restrict__ y, float *__restrict__ mean_out,
                           float *__restrict__ rstd_out, int64_t rows, int cols, float inv_cols)
{
    static_assert(sizeof(T) == 2 && NPL % 2 == 0, "16-bit elements, whole words");
    constexpr int W = kb_vec_width<T>(), E = KB_TROW_THREADS * NPL, NW = NPL / 2 + 1;
    /* + the misalignment, + the last row's word past its end */
    __shared__ __align__(16) T tile[E + W + 2];
    __shared__ __align__(16) float2 gb[NPL]; /* gamma and beta + b of each column */
    __shared__ __align__(8) uint64_t bar;
    const int tid = threadIdx.x;
    const kb_span sp = kb_span_of<T>(rows, cols, KB_TROW_THREADS);
    if constexpr (BULK)
        ln_span_bulk_in<T, KB_TROW_THREADS>(tile, x, sp, rows * cols, &bar);
    trow_params(gb, gamma, beta, bias, cols);
    if constexpr (!BULK)
        kb_span_in<T, KB_TROW_THREADS, kb_span_maxv<T>(KB_TROW_THREADS, E), int>(tile, x, sp);
    /* the thread's row: a warp's rows of one parity (above the kernel) */
    const int r = cols % 2 != 0 ? (tid >> 6 << 6) + 2 * (tid & 31) + (tid >> 5) % 2 : tid;
    const int s = sp.mis + r * cols, p = s % 2; /* the row's first element, its parity */
    unsigned *tw = reinterpret_cast<unsigned *>(tile) + s / 2;
    unsigned wd[NW];
    __syncthreads();
    if constexpr (BULK)
        kb_mbar_wait(kb_smem_u32(&bar), 0); /* the copy engine's part of the span */
    if (r < sp.nrows) {
#pragma unroll
        for (int k = 0; k < NW; k++)
            wd[k] = tw[k];
    }
    __syncthreads(); /* every row's words read before any is written */
    if (r < sp.nrows) {
        float *mo = mean_out != nullptr ? mean_out + sp.r0 + r : nullptr;
        float *ro = mean_out != nullptr ? rstd_out + sp.r0 + r : nullptr;
        if (p == 0)
            trow_words_row<T, NPL, TANH, 0>(wd, tw, tile + s, gb, cols, inv_cols, mo, ro);
        else
            trow_words_row<T, NPL, TANH, 1>(wd, tw, tile + s, gb, cols, inv_cols, mo, ro);
    }
    if constexpr (BULK) {
        ln_span_bulk_out<T>(y, tile, sp);
    } else {
        __syncthreads();
        kb_span_out<T, KB_TROW_THREADS, int>(y, tile, sp);
    }
}

/* ---- the streaming kernels (rows too long for registers, or unaligned) ------------ */

/* The old streaming kernel: a block per row, one element a load, Welford a
 * element (KBENCH_LAYERNORM_STREAM=0 selects it, for A/B runs; also the path
 * for buffers off 16-byte boundaries). */
template <typename T, bool TANH>
__device__ __forceinline__ void fused_stream_scalar(const T *__restrict__ x,
                                                    const T *__restrict__ gamma,
                                                    const T *__restrict__ beta,
                                                    const T *__restrict__ bias,
                                                    T *__restrict__ y, float *__restrict__ mean_out,
                                                    float *__restrict__ rstd_out, int cols,
                                                    float inv_cols, float (*red)[32])
{
    const int64_t base = (int64_t)blockIdx.x * cols;
    const T *xr = x + base;
    const float K = kb_load(xr, 0);

    ln_wf w = {0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        ln_wf_push(w, kb_load(xr, j) - K);
    w = ln_block_wf(w, red);
    const float md = w.mean;
    const float rstd = rsqrtf(fmaf(w.m2, inv_cols, LN_EPS));

    T *yr = y + base;
#pragma unroll 4
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        const float c = (kb_load(xr, j) - K) - md;
        const float z = fmaf(c * rstd, kb_load(gamma, j), kb_load(beta, j) + kb_load(bias, j));
        kb_store(yr, j, ln_gelu_out<T, TANH>(z));
    }
    if (mean_out != nullptr && threadIdx.x == 0) {
        mean_out[blockIdx.x] = K + md;
        rstd_out[blockIdx.x] = rstd;
    }
}

template <typename T, bool TANH>
__global__ void __launch_bounds__(1024, 1)
    layernorm_fused_stream(const T *__restrict__ x, const T *__restrict__ gamma,
                           const T *__restrict__ beta, const T *__restrict__ bias,
                           T *__restrict__ y, float *__restrict__ mean_out,
                           float *__restrict__ rstd_out, int cols, float inv_cols)
{
    __shared__ float red[3][32];
    fused_stream_scalar<T, TANH>(x, gamma, beta, bias, y, mean_out, rstd_out, cols, inv_cols, red);
}

/* The vector streaming kernel: a block per row, peeled (head elements up to
 * the first 16-byte boundary, the body in 16-byte vectors, tail elements);
 * each thread loads STREAM_UNROLL body vectors before using them and merges
 * their exact two-pass statistics (of d = x - x[0]) into its Welford state
 * with Chan's formula; the block merges the threads'; then the body is read
 * again, from the L2 (the rows in flight, one or two a SM, 132-264 rows of at
 * most 256 KB at 65536 fp32 columns, stay there), and written with 16-byte
 * stores.
 * gamma, beta and b come as 16-byte vectors when the row starts on a 16-byte
 * boundary, else element by element (the body's columns then sit off the
 * parameters' boundaries). Buffers off 16-byte boundaries take the scalar
 * kernel's code. */
#define STREAM_UNROLL 4

/* The exact (n, mean, M2) of d = x - K over the 16-byte vectors of xv in [lo,
 * hi) that this thread takes (lo + tid + i nt, nt threads): U vectors loaded
 * before any is used, each chunk's two-pass statistics merged into the
 * thread's with Chan's formula. */
template <typename T, int U>
static __device__ __forceinline__ ln_wf ln_stream_stats(const uint4 *__restrict__ xv, int lo,
                                                        int hi, int nt, float K)
{
    constexpr int V = kb_vec_width<T>();
    ln_wf w = {0.0f, 0.0f, 0.0f};
    for (int j0 = lo + (int)threadIdx.x; j0 < hi; j0 += U * nt) {
        uint4 r[U];
        int n = 0;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int j = j0 + u * nt;
            r[u] = j < hi ? kb_ld128(xv + j) : make_uint4(0, 0, 0, 0);
            n += j < hi ? V : 0;
        }
        float f[U * V];
#pragma unroll
        for (int u = 0; u < U; u++)
            kb_unpack<T>(r[u], &f[u * V]);
        w = ln_wf_merge(w, ln_chunk_stats<U * V>(f, n, K)); /* the in-range vectors: a prefix */
    }
    return w;
}

template <typename T, bool TANH>
__global__ void __launch_bounds__(1024, 1)
    layernorm_fused_stream_vec(const T *__restrict__ x, const T *__restrict__ gamma,
                               const T *__restrict__ beta, const T *__restrict__ bias,
                               T *__restrict__ y, float *__restrict__ mean_out,
                               float *__restrict__ rstd_out, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>();
    constexpr int U = STREAM_UNROLL;
    __shared__ float red[3][32];
    if (((uintptr_t)x | (uintptr_t)y | (uintptr_t)gamma | (uintptr_t)beta | (uintptr_t)bias) %
            16 !=
        0) {
        fused_stream_scalar<T, TANH>(x, gamma, beta, bias, y, mean_out, rstd_out, cols, inv_cols,
                                     red);
        return;
    }
    const int tid = threadIdx.x, nt = blockDim.x;
    const int64_t base = (int64_t)blockIdx.x * cols;
    const T *xr = x + base;
    T *yr = y + base;
    const int mis = (int)(base % V);
    const int head = mis ? (V - mis < cols ? V - mis : cols) : 0;
    const int nv = (cols - head) / V, tail0 = head + nv * V, tail = cols - tail0;
    const T *xb = xr + head;
    T *yb = yr + head;
    const float K = kb_load(xr, 0);

    ln_wf w = ln_stream_stats<T, U>(reinterpret_cast<const uint4 *>(xb), 0, nv, nt, K);
    if (tid < head)
        ln_wf_push(w, kb_load(xr, tid) - K);
    if (tid < tail)
        ln_wf_push(w, kb_load(xr, tail0 + tid) - K);
    w = ln_block_wf(w, red);
    const float md = w.mean;
    const float rstd = rsqrtf(fmaf(w.m2, inv_cols, LN_EPS));

    const bool pvec = head == 0;
    for (int j = tid; j < nv; j += nt) {
        float f[V], g[V], bb[V];
        kb_unpack<T>(kb_ld128(xb + (int64_t)j * V), f);
        ln_affine_any<T>(gamma, beta, bias, head + (int64_t)j * V, pvec, g, bb);
#pragma unroll
        for (int i = 0; i < V; i++)
            f[i] = ln_gelu_out<T, TANH>(fmaf((f[i] - K - md) * rstd, g[i], bb[i]));
        kb_st128(yb + (int64_t)j * V, kb_pack<T>(f));
    }
    for (int j = tid; j < head + tail; j += nt) {
        const int col = j < head ? j : tail0 + (j - head);
        const float z = fmaf((kb_load(xr, col) - K - md) * rstd, kb_load(gamma, col),
                             kb_load(beta, col) + kb_load(bias, col));
        kb_store(yr, col, ln_gelu_out<T, TANH>(z));
    }
    if (mean_out != nullptr && tid == 0) {
        mean_out[blockIdx.x] = K + md;
        rstd_out[blockIdx.x] = rstd;
    }
}

/* ---- the streaming cluster kernel (aligned rows that no register path holds) ------- *
 *
 * The streaming kernel reads a row twice, the second time from the L2 while
 * the row is there; but with a block a row and one or two blocks an SM, 132-264
 * rows are in flight, 66-132 MB at 262144 bf16 columns and 512 MB at 1048576
 * fp32, more than the 60 MB L2: the counters put its DRAM traffic at 1.49-1.51x
 * the model there (2026-12-01 19:45 UTC: 512 x 262144 bf16 51.7% of the copy
 * bandwidth, 128 x 1048576 fp32 58.8%, bf16 55.8%), so the second read comes
 * half from DRAM. Here a cluster of CL blocks of 512 threads shares a row, each
 * streaming one CL-th of it (softmax's streaming path does the same), so the
 * rows in flight are CL times fewer: 8 blocks a row of up to 1 MB, 16 beyond,
 * one block an SM past 2 MB, about 33 MB of rows in flight at most. Each
 * block's (n, mean, M2) of d = x - x[0] meet through distributed shared memory
 * in one fixed order, as in the cluster register kernel. Prediction (before
 * any measurement): DRAM traffic from 1.5x to about 1.0x the model, and the
 * time with it where DRAM is the limit: 512 x 262144 bf16 and 128 x 1048576
 * from 52-59% to 70-78% (the DRAM throughput measured now, 3350 GB/s, over
 * the model's bytes). KBENCH_LAYERNORM_STREAM_CL=0 keeps the one-block kernel.
 * Measured (H200, 2026-12-01 21:20 UTC, two interleaved rounds, no counters,
 * % of copy bandwidth, one-block streaming -> this kernel): 512 x 262144 fp32
 * 61.3 / 61.3 -> 61.2 / 61.2, bf16 1024 x 262144 50.4 / 50.6 -> 49.0 / 49.0,
 * 128 x 1048576 fp32 59.1 / 59.0 -> 51.7 / 52.0, bf16 256 x 1048576 54.6 /
 * 54.2 -> 43.4 / 43.5; with fewer rows than SMs (L2-resident) bf16 67 x
 * 131072 25.3 / 25.3 -> 29.7 / 29.9 and 20 x 1048576 10.7 / 10.7 -> 40.9 /
 * 40.9. The prediction was half right: at bf16 1024 x 262144 the DRAM
 * traffic fell to 1.01x the model as predicted, and the time did not move
 * (48.8%, 45% of warps active, not_selected the top stall at 27%: issue,
 * not DRAM, is then the limit, the row's two passes and the cluster's
 * barriers on half-occupied SMs); at fp32 1048576 (4 MB rows, 16 blocks a
 * row) the excess stayed 1.71x and long_scoreboard took 76% of stalls. So
 * the kernel takes only rows fewer than the SMs, where the one-block kernel
 * leaves SMs idle. The report of 21:36 UTC showed that bound too loose: fp32
 * 128 x 1048576 (128 rows, 132 SMs) took this kernel at 51.6%, where a block a
 * row had measured 59.1% (21:20 UTC); 67 rows won, 128 lost. It now takes
 * rows of at most three quarters of the SMs (99 on the H200): a block a row
 * then leaves a quarter of the SMs idle or more. In the report of 2026-12-02
 * 00:45 UTC fp32 128 x 1048576 ran a block a row at 59.1%. */
/* The CL blocks' (n, mean, M2) states, block r's as part(r), merged alike in
 * every thread: lane r of each warp takes block r's and the warp merges them
 * in one fixed order, so the cluster's threads hold the same bits. */
template <int CL, typename Part>
static __device__ __forceinline__ ln_wf ln_ranks_wf(int lane, Part part)
{
    ln_wf c = {0.0f, 0.0f, 0.0f};
    if (lane < CL) {
        const float4 p = part(lane);
        c = {p.x, p.y, p.z};
    }
    return ln_warp_wf(c);
}

/* The (n, mean, M2) states w of a thread-block cluster's CL blocks (every
 * thread of a block holding its block's), merged alike in every thread
 * (ln_ranks_wf) through the exchange xc (kb_xchg, pushed or pulled). The
 * caller waits (kb_cluster_wait) before it exits. */
template <int CL, bool PUSH>
static __device__ __forceinline__ ln_wf ln_cluster_wf(ln_wf w, kb_xchg<CL, PUSH> &xc)
{
    const int lane = threadIdx.x & 31;
    kb_xchg_put(xc, make_float4(w.n, w.mean, w.m2, 0.0f));
    const ln_wf c = ln_ranks_wf<CL>(lane, [&](int r) { return kb_xchg_get(xc, r); });
    kb_xchg_done(xc);
    return c;
}

#define SCL_THREADS 512

template <typename T, int CL, int MINB, bool TANH, bool PUSH = false>
__global__ void __launch_bounds__(SCL_THREADS, MINB)
    layernorm_fused_stream_cl(LN_PATH_BUFFERS, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>(), U = STREAM_UNROLL;
    __shared__ float red[3][32];
    __shared__ kb_xchg<CL, PUSH> xc; /* the cluster's exchange */
    kb_xchg_open(xc);
    const int tid = threadIdx.x;
    const int rank = (int)kb_cluster_rank();
    const int64_t row = blockIdx.x / CL;
    const int64_t base = row * cols;
    const int nvec = cols / V, per = (nvec + CL - 1) / CL;
    const int lo = rank * per < nvec ? rank * per : nvec;
    const int hi = lo + per < nvec ? lo + per : nvec;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x + base);
    const float K = kb_load(x, base);

    /* Pass 1: this block's slice, U vectors a thread at a time, each chunk's
     * exact statistics merged into the thread's with Chan's formula. */
    const ln_wf w = ln_block_wf(ln_stream_stats<T, U>(xv, lo, hi, SCL_THREADS, K), red);

    /* The cluster's states, merged alike everywhere. */
    const ln_wf c = ln_cluster_wf(w, xc);
    const float md = c.mean, rstd = rsqrtf(fmaf(c.m2, inv_cols, LN_EPS));

    /* Pass 2: the slice again (from the L2), y with 16-byte stores. */
    uint4 *yv = reinterpret_cast<uint4 *>(y + base);
    for (int j = lo + tid; j < hi; j += SCL_THREADS) {
        float f[V], g[V], bb[V];
        kb_unpack<T>(kb_ld128(xv + j), f);
        ln_affine_any<T>(gamma, beta, bias, (int64_t)j * V, true, g, bb);
#pragma unroll
        for (int i = 0; i < V; i++)
            f[i] = ln_gelu_out<T, TANH>(fmaf((f[i] - K - md) * rstd, g[i], bb[i]));
        kb_st128(yv + j, kb_pack<T>(f));
    }
    if (mean_out != nullptr && rank == 0 && tid == 0) {
        mean_out[row] = K + md;
        rstd_out[row] = rstd;
    }
    kb_cluster_wait();
}

/* Launches layernorm_fused_stream_cl with CL blocks a row, MINB an SM.
 * cudaErrorNotSupported when this GPU does not place such clusters. */
template <typename T, int CL, int MINB, bool TANH, bool PUSH>
static cudaError_t launch_stream_cl_k(const kb_args *a, cudaStream_t s, const char *name)
{
    const auto k = layernorm_fused_stream_cl<T, CL, MINB, TANH, PUSH>;
    static const bool placed = kb_cluster_placed((const void *)k, SCL_THREADS, CL, 0);
    if (!placed)
        return cudaErrorNotSupported;
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    const kb_dim3 grid = {(unsigned)(p.rows * CL), 1, 1}, block = {SCL_THREADS, 1, 1};
    return kb_launch_cluster(a, s, k, name, grid, block, 0, CL, p.x, p.g, p.b1, p.b2, p.y, p.mo,
                             p.ro, p.rows, p.cols, p.inv_cols);
}

/* The same, the blocks' states pushed (kb_xchg) or, with KBENCH_CLUSTER_PUSH=0,
 * pulled through a cluster barrier (header comment). */
template <typename T, int CL, int MINB, bool TANH>
static cudaError_t launch_stream_cl_n(const kb_args *a, cudaStream_t s, const char *name)
{
    return kb_cluster_push() ? launch_stream_cl_k<T, CL, MINB, TANH, true>(a, s, name)
                             : launch_stream_cl_k<T, CL, MINB, TANH, false>(a, s, name);
}

/* The streaming cluster kernel for an aligned row of cols elements: 8 blocks
 * a row of up to 1 MB, 16 beyond, one block an SM past 2 MB (above the kernel). */
template <typename T, bool TANH>
static cudaError_t launch_stream_cl(const kb_args *a, cudaStream_t s)
{
    const int64_t rows = a->shape[LN_ROWS], bytes = a->shape[LN_COLS] * (int64_t)sizeof(T);
    if (rows > INT32_MAX / 16)
        return cudaErrorNotSupported;
    if (bytes <= (1 << 20))
        return launch_stream_cl_n<T, 8, 2, TANH>(a, s, "layernorm_fused_stream_cl8");
    if (bytes <= (2 << 20))
        return launch_stream_cl_n<T, 16, 2, TANH>(a, s, "layernorm_fused_stream_cl16");
    return launch_stream_cl_n<T, 16, 1, TANH>(a, s, "layernorm_fused_stream_cl16_b1");
}

/* ---- launch: the shared dispatch (layernorm.cuh) over this variant's kernels ---- *
 *
 * Before it, short rows go to the tile kernel; the streaming kernel is the
 * vector one unless KBENCH_LAYERNORM_STREAM=0. */

/* ---- the cluster register kernel (rows past one SM's registers) ------------------ *
 *
 * Prediction (before any measurement): the streaming path reads x twice and
 * reached 56.8% fp32 / 51.6% bf16 of the copy bandwidth at 2048 x 65536 and
 * 58.9% at 128 x 1048576 (the `cluster` rung, one read through shared memory,
 * 56% / 47.5% at 65536); the one-block row kernel holds 93% at 8192 x 16384
 * fp32 with the same 32 elements a thread and the same parameter loads. Split
 * over 2-16 blocks the new costs are one cluster barrier and CL small
 * distributed-shared-memory reads between a block's loads and its stores,
 * and clusters placed whole: fp32 65536 (2 blocks) and 262144 (8) to 80-88%,
 * bf16 65536-524288 to 75-85% (16-bit reads its parameters as three 16-byte
 * loads a vector here, not from a stage, so it is nearer the issue limit);
 * rows of up to 1048576 (32 blocks' registers) take 16 blocks with 32 more
 * elements a thread in shared memory (NS = 8 vectors fp32, 128 KB a block;
 * 4 16-bit, 64 KB): 128 x 1048576 from 58.9% to ~75-80%.
 * Measured (H200, 2026-12-01 14:45 UTC, one round, no counters, % of copy
 * bandwidth, streaming -> cluster registers): fp32 2048 x 65536 56.6 -> 76.1,
 * 512 x 262144 56.3 -> 61.1, but 128 x 1048576 (shared memory too) 58.9 ->
 * 44.1; bf16 65536 51.7 -> 51.8, 262144 51.8 -> 41.3, 1048576 55.8 -> 34.6;
 * rows=3 x 262144 2.2 -> 15.9 fp32, 1.9 -> 8.9 bf16 (3 blocks against 48).
 * Short of the prediction everywhere but fp32 65536, and behind the
 * streaming path wherever 16-bit rows or 16 blocks are involved: one block
 * an SM has no loads in flight while its cluster waits at the barrier, and
 * the 16-bit kernel issues three parameter loads a vector. So the path is
 * taken for fp32 rows that fit the cluster's registers (no shared memory)
 * and, at any dtype or length, where rows are so few that all their 16-block
 * clusters run at once (rows x 16 <= SMs); the rest stream as before. That
 * bound, measured (same method, 15:00 UTC, streaming -> cluster registers,
 * us): 3 x 1048576 fp32 385 -> 27.7, bf16 209 -> 22.3; 8 x 262144 103 ->
 * 24.9, 55.3 -> 21.8; 16 x 262144 bf16 53.4 -> 53.1 (level); 128 x 1048576
 * bf16 226 against 368 in the cluster (the first bound, rows < SMs, sent
 * those 128 rows there: 34.5% of the copy bandwidth).
 * Tried and not kept (17:30 UTC, two rounds, same method, this path or
 * streaming -> persistent clusters of 4-16 blocks of 16384 elements, gamma
 * and beta + b staged once in shared memory, the next row prefetched by
 * cp.async; predicted bf16 65536 and 262144 52% -> ~85%): fp32 2048 x 65536
 * 76.6 -> 71.9, 512 x 262144 61.1 -> 42.8; bf16 65536 51.8 -> 41.0, 262144
 * 51.9 -> 24.3; it won only where rows are too few to fill the GPU (137 x
 * 65536 bf16 26.7 -> 31.5, 33 x 262144 bf16 16.0 -> 20.9) and lost there in
 * fp32 (33 x 262144 44.1 -> 37.5). Half the streaming path's bandwidth at
 * 512 x 262144 bf16: the prefetch into shared memory and the reads back out
 * of it added a pass the streaming path does not make.
 * Tried and not kept (H200, 2026-12-01 23:30 UTC, two rounds, same method,
 * % of copy bandwidth; code in commits fe2fd7e, d208f73): softmax's split
 * rows (its header) for layernorm, a persistent cooperative grid of one
 * 512-thread block an SM, each 64 KB chunk's exact (n, mean, M2) met through
 * global memory, gamma, beta and b from the L2 (unstaged), or, staged, the
 * grid a multiple of the chunks a row so that each block kept its chunk's
 * gamma and beta + b in 128-192 KB of shared memory; predicted 80-88%. This
 * path -> unstaged -> staged: fp32 512 x 262144 60.8 -> 44.6 -> 55.1, 128 x
 * 1048576 58.9 -> 39.0 -> 50.7, 2048 x 65536 76.2 -> 46.5 -> 57.0; bf16
 * 1024 x 262144 50.5 -> 36.9 -> 41.8, 256 x 1048576 54.1 -> 35.5 -> 41.6,
 * 4096 x 65536 67.5 -> 38.0 -> 43.4 (second round within 1.5 points). The
 * split rows lost as in softmax; staging the parameters was worth 5-11
 * points within them, the one sign so far that the L2's parameter traffic
 * costs layernorm's long rows something.
 * Tried and not kept (H200, 2026-12-02 00:35 UTC, two rounds, same method,
 * % of copy bandwidth; code in commit 97f5c44): softmax's 512-thread
 * cluster register kernel (its header), two blocks an SM, twice as many a
 * row, 16-bit rows of up to 262144 into the clusters too; predicted fp32
 * 2048 x 65536 76.2 -> ~85, 512 x 262144 60.8 -> ~72, bf16 4096 x 65536
 * 68.5 -> ~78, 1024 x 262144 50.5 -> ~65. This path -> 512 threads: fp32
 * 2048 x 65536 76.4 -> 73.7, 76.8 -> 73.6; 512 x 262144 60.9 -> 54.5, 60.9 ->
 * 54.4; bf16 4096 x 65536 68.4 -> 49.7, 68.5 -> 49.7; 1024 x 262144 50.6 ->
 * 35.3, 50.3 -> 35.4. Worse everywhere, most where 16-bit rows left the
 * shared-memory and streaming kernels for the clusters. Under --metrics sol
 * (same session) the long rows keep DRAM 53-66% busy and issue 44-73% of
 * the SMs' slots (bf16 4096 x 65536: 73%, the shared-memory row kernel):
 * the 16-bit rows spend more instructions a byte than softmax's.
 * Tried and not kept (H200, 2026-12-02 06:05-06:22 UTC, two calls, two
 * rounds each, same method, % of copy bandwidth; code in commit 576fd95):
 * softmax's grid split (its header: rows over ordinary blocks of 512
 * threads, two an SM, 32 elements a thread in registers and 32 more in
 * shared memory, the blocks' (n, mean, M2) met in the L2 through
 * src/kernels/grid_rows.cuh), predicted to lift the rows the clusters hold
 * badly as it lifted softmax's 1048576 rows by 8-17 points. This path ->
 * grid: fp32 2048 x 65536 83.0 -> 68.3, 83.4 -> 68.2; 512 x 262144 74.7 ->
 * 58.0, 75.0 -> 58.2; 128 x 1048576 58.9 -> 54.3, 59.0 -> 54.3; bf16 4096
 * x 65536 67.9 -> 50.6, 68.7 -> 50.6; 1024 x 262144 50.6 -> 49.9, 50.5 ->
 * 50.1; 256 x 1048576 54.7 -> 48.7, 54.9 -> 48.8 (registers only, 64 KB a
 * block: 43-44 at bf16 65536 and 262144). And softmax's 512-thread cluster
 * blocks again, now that the exchange is pushed (the pulled try above lost
 * 3-19 points): fp32 2048 x 65536 82.6 -> 79.2, 82.7 -> 79.0; 512 x 262144
 * 74.1 -> 64.8, 75.6 -> 64.7; bf16 (with KBENCH_LAYERNORM_CLUSTER_REGS=2)
 * 4096 x 65536 67.5 -> 56.0, 66.7 -> 56.0; 1024 x 262144 50.4 -> 47.2,
 * 50.4 -> 47.2. Both lost everywhere: what lifts softmax's long rows (more
 * blocks an SM, more of the row in flight) does not lift layernorm's, whose
 * long rows are bound by the work a byte (the parameters' loads, two
 * passes, GELU), not by the gaps between loads.
 * Tried and not kept (H200, 2026-12-02 07:43-07:47 UTC, two rounds, same
 * method, % of copy bandwidth; code in commit a96c13a): the persistent
 * cluster kernel (below) without the cluster, so that fp32 rows of 1048576
 * fit (64 blocks of 16384 elements a row) and 128 of the 132 SMs work where
 * 16-block clusters fill 112: a row over S ordinary blocks of 1024 threads,
 * one an SM, G = 132 / S groups of them persistent, the parameters staged in
 * shared memory and the next row prefetched as there, the S states met in
 * the L2 through src/kernels/grid_rows.cuh. Predicted: fp32 512 x 262144
 * 75 -> ~85 (the cluster kernel's rate on 128 SMs instead of 112), 128 x
 * 1048576 59 -> 75-80. Default -> grid: fp32 2048 x 65536 83.5 -> 58.1, 81.7
 * -> 58.5; 512 x 262144 75.2 -> 56.4, 74.6 -> 55.1; 128 x 1048576 58.8 ->
 * 43.4, 58.9 -> 43.0; bf16 4096 x 65536 66.1 -> 39.1, 68.6 -> 38.9; 1024 x
 * 262144 50.3 -> 38.3, 50.3 -> 38.3; 256 x 1048576 53.8 -> 28.3, 53.8 ->
 * 26.1 (all checked; memcheck and racecheck clean at 20 x 65544). Stall
 * counters (same call): fp32 128 x 1048576 barrier 31%, long scoreboard
 * 30%; bf16 1024 x 262144 not selected 32%, barrier 25%. With one block an
 * SM the SM has nothing to do while its block waits for the row's other
 * states, and the L2's round trip (a release add, acquire polls, S loads of
 * the states) is several times the cluster's st.async: softmax's grid path
 * works with two blocks an SM, one streaming while the other waits, which
 * layernorm's staged parameters (128 KB a block) do not leave room for.
 * The exchange pushed (by default since the report of 2026-12-02;
 * KBENCH_CLUSTER_PUSH=0 pulls; the reasoning and the SASS in softmax's header):
 * the cluster register kernel's (n, mean, M2) states written into every
 * block's slot by st.async and waited for on the block's own mbarrier, no
 * MEMBAR.ALL.GPU in any warp. The streaming cluster kernel (few rows) takes
 * the same switch (measured below). Measured (H200, 2026-12-02
 * 01:10 UTC, two rounds, % of copy bandwidth, pull -> push): fp32 2048 x
 * 65536 76.6 -> 77.7, 76.2 -> 77.8; 512 x 262144 60.9 -> 65.0, 60.8 -> 65.0;
 * 8 x 262144 (L2-resident) 18.7 -> 25.0, 18.6 -> 25.1; bf16 20 x 1048576
 * (the streaming cluster kernel, then still pulling) 40.9 -> 40.8. Less
 * than softmax's gain: layernorm's long rows are held back by more than the
 * exchange (the parameters' L2 traffic, above). The streaming cluster
 * kernel pushing (02:25 UTC, two rounds, pull -> push): bf16 20 x 1048576
 * (L2-resident) 40.7 -> 44.3, 41.0 -> 44.3% of the copy bandwidth; fp32 40 x
 * 1048576 52.0 -> 54.9, 51.7 -> 55.0; fp32 3 x 262144 14.02 -> 10.98, 13.92
 * -> 10.94 us. Faster everywhere: it pushes too.
 * With the push, 16-bit long rows in the cluster register kernel instead
 * (KBENCH_LAYERNORM_CLUSTER_REGS=2 against 1, same call, two rounds, % of
 * copy bandwidth, 1 -> 2): bf16 4096 x 65536 68.7 -> 55.2, 68.6 -> 55.2;
 * 1024 x 262144 50.6 -> 48.2, 50.6 -> 48.3; 2048 x 131072 50.6 -> 49.9,
 * 50.7 -> 49.9; 256 x 1048576 54.5 -> 54.6, 54.8 -> 54.7 (the same kernel).
 * Not kept: the shared-memory row and streaming kernels stay faster for
 * 16-bit rows (softmax's 16-block rows went the other way: its header).
 * Where the long rows stand (H200, 2026-12-02 14:54 UTC, --metrics full,
 * one run, % of copy bandwidth, DRAM bytes over the model, issue active,
 * top stall shares): bf16 4096 x 65536 (shared-memory row kernel) 66.0%,
 * 1.00x, issue 73%, not_selected 34%, long_scoreboard 19%: issue-bound;
 * bf16 1024 x 262144 and 256 x 1048576 (the vector streaming path) 49.6%
 * and 53.0%, 1.51x and 1.50x, long_scoreboard 61-62%: the second read of
 * the row comes from DRAM, not the L2 (132 rows of 512 KB-2 MB in flight
 * outrun the L2), so 67% is their ceiling as written; fp32 512 x 262144
 * (persistent clusters) 74.9%, 1.00x, issue 68%, not_selected 29%,
 * short_scoreboard 18%; fp32 128 x 1048576 (pipelined grid) 67.4%, 1.00x,
 * long_scoreboard 30%, barrier 13%. Against them the row kernel at bf16
 * 32768 x 4096: 87.3%, issue 78%, not_selected 41%. So the 16-bit rows
 * past 65536 columns need a one-read path that is not issue-bound; the
 * cluster register kernel reads once but costs more instructions a byte
 * (above, 48% at 1024 x 262144).
 *
 * A row of more than 32768 elements held in the registers of a thread-block
 * cluster of CL blocks of 1024 threads, one SM each, 32 elements a thread (NV
 * vectors: 8 fp32, 4 16-bit): thread t of block `rank` holds the row's
 * vectors rank 1024 + t + k 1024 CL, so a warp reads 512 contiguous bytes.
 * Each thread takes the exact two-pass statistics of its elements (of d = x -
 * x[0]), the block merges its threads' (n, mean, M2) with Chan's formula, and
 * the blocks' states meet through distributed shared memory: lane r of every
 * warp reads block r's, and each warp merges them in one fixed order, so every
 * thread of the cluster holds the same bits. y = GELU((d - mean) rstd gamma +
 * beta + b) is written from the registers, gamma, beta and b read as 16-byte
 * vectors through L1 (the parameters of a block's part are read by every row,
 * from the L2). One read of x, one write of y.
 * NS > 0: each thread holds NS more vectors, NV .. NV + NS - 1, in its
 * own dynamic shared-memory slots (cp.async beside the register loads), so 16
 * blocks hold rows of 16 x 64K elements. */
template <typename T, int NV, int CL, bool TANH, int NS = 0, bool PUSH = false>
__global__ void __launch_bounds__(1024, 1)
    layernorm_fused_cluster(LN_PATH_BUFFERS, int64_t rows, int cols, float inv_cols)
{
    constexpr int V = kb_vec_width<T>(), THREADS = 1024, STRIDE = CL * THREADS;
    /* fp32 with the tanh form: each vector's parameter loads stay below the
     * last vector's store (hoisted, they would spill at 64 registers) */
    constexpr bool FENCE = TANH && sizeof(T) == 4;
    __shared__ float red[3][32];
    const int tid = threadIdx.x;
    const int tv = (int)kb_cluster_rank() * THREADS + tid; /* this thread's first vector */
    const int64_t row = blockIdx.x / CL;
    const int nvec = cols / V;
    const int64_t base = row * cols;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x + base) + tv;
    extern __shared__ __align__(16) uint4 lnc_xs[]; /* NS > 0: the thread's slots */
    auto slot = [&](int k) -> uint4 & { return lnc_xs[k * THREADS + tid]; };
    auto slot_in = [&](int k) { return tv + (NV + k) * STRIDE < nvec; };
    if constexpr (NS > 0) {
#pragma unroll
        for (int k = 0; k < NS; k++)
            kb_cp_async16(kb_smem_u32(&slot(k)), slot_in(k) ? xv + (NV + k) * STRIDE : xv,
                          slot_in(k) ? 16 : 0);
        kb_cp_async_commit();
    }

    uint4 raw[NV];
#pragma unroll
    for (int k = 0; k < NV; k++)
        raw[k] = tv + k * STRIDE < nvec ? kb_ld128(xv + k * STRIDE) : make_uint4(0, 0, 0, 0);
    const float K = kb_load(x, base);
    __shared__ kb_xchg<CL, PUSH> xc; /* the cluster's exchange, set up while the loads fly */
    kb_xchg_open(xc);

    /* This thread's exact statistics of d = x - K, two passes over registers. */
    auto in = [&](int k) { return tv + k * STRIDE < nvec; };
    float v[NV][V];
    float s = shifted_sum<T, true>(raw, v, K, in);
    int n = 0;
#pragma unroll
    for (int k = 0; k < NV; k++)
        n += in(k) ? V : 0;
    if constexpr (NS > 0) {
        kb_cp_async_wait<0>(); /* this thread's own copies, read by it alone */
#pragma unroll 2 /* fully unrolled, the hoisted shared loads would spill */
        for (int k = 0; k < NS; k++) {
            float f[V];
            kb_unpack<T>(slot(k), f);
            float sk = 0.0f;
#pragma unroll
            for (int i = 0; i < V; i++)
                sk += f[i] - K;
            s += slot_in(k) ? sk : 0.0f;
            n += slot_in(k) ? V : 0;
        }
    }
    const float mt = n > 0 ? s / (float)n : 0.0f;
    float q = centred_squares(v, mt, in);
    if constexpr (NS > 0) {
#pragma unroll 2
        for (int k = 0; k < NS; k++) {
            float f[V], qk = 0.0f;
            kb_unpack<T>(slot(k), f);
#pragma unroll
            for (int i = 0; i < V; i++) {
                const float c = f[i] - K - mt;
                qk = fmaf(c, c, qk);
            }
            q += slot_in(k) ? qk : 0.0f;
        }
    }
    ln_wf w = {(float)n, mt, q};
    w = ln_block_wf(w, red);

    /* The cluster's states, merged alike everywhere. */
    const ln_wf c = ln_cluster_wf(w, xc);
    const float rstd = rsqrtf(fmaf(c.m2, inv_cols, LN_EPS));
    const float md = c.mean - mt; /* v holds d - mt */

    uint4 *yv = reinterpret_cast<uint4 *>(y + base) + tv;
    const T *gt = ln_opaque(gamma) + tv * V, *b1t = ln_opaque(beta) + tv * V,
            *b2t = ln_opaque(bias) + tv * V;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (tv + k * STRIDE < nvec) {
            float g[V], bb[V], o[V];
            ln_affine_global<T>(k * STRIDE, gt, b1t, b2t, g, bb);
#pragma unroll
            for (int i = 0; i < V; i++)
                o[i] = ln_gelu_out<T, TANH>(fmaf((v[k][i] - md) * rstd, g[i], bb[i]));
            kb_st128(yv + k * STRIDE, kb_pack<T>(o));
        }
        if constexpr (FENCE)
            asm volatile("" ::: "memory");
    }
    if constexpr (NS > 0) {
#pragma unroll 2
        for (int k = 0; k < NS; k++) {
            if (slot_in(k)) {
                float f[V], g[V], bb[V];
                kb_unpack<T>(slot(k), f);
                ln_affine_global<T>((NV + k) * STRIDE, gt, b1t, b2t, g, bb);
#pragma unroll
                for (int i = 0; i < V; i++)
                    f[i] = ln_gelu_out<T, TANH>(fmaf((f[i] - K - c.mean) * rstd, g[i], bb[i]));
                kb_st128(yv + (NV + k) * STRIDE, kb_pack<T>(f));
            }
        }
    }
    if (mean_out != nullptr && tv == 0) {
        mean_out[row] = K + c.mean;
        rstd_out[row] = rstd;
    }
    kb_cluster_wait();
}

/* Launches layernorm_fused_cluster with CL blocks a row. cudaErrorNotSupported
 * when this GPU does not place such clusters (asked once a process: the query
 * costs host time in the timed region). */
template <typename T, int CL, bool TANH, int NS, bool PUSH>
static cudaError_t launch_cluster_k(const kb_args *a, cudaStream_t s, const char *name)
{
    constexpr int NV = 32 / kb_vec_width<T>();
    constexpr size_t SMEM = (size_t)NS * 1024 * 16;
    const auto k = layernorm_fused_cluster<T, NV, CL, TANH, NS, PUSH>;
    static const bool placed = kb_cluster_placed((const void *)k, 1024, CL, SMEM);
    if (!placed)
        return cudaErrorNotSupported;
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    const kb_dim3 grid = {(unsigned)(p.rows * CL), 1, 1}, block = {1024, 1, 1};
    return kb_launch_cluster(a, s, k, name, grid, block, SMEM, CL, p.x, p.g, p.b1, p.b2, p.y,
                             p.mo, p.ro, p.rows, p.cols, p.inv_cols);
}

/* The same, the blocks' states pushed (kb_xchg) or, with KBENCH_CLUSTER_PUSH=0,
 * pulled through a cluster barrier (header comment). */
template <typename T, int CL, bool TANH, int NS = 0>
static cudaError_t launch_cluster_cl(const kb_args *a, cudaStream_t s, const char *name)
{
    return kb_cluster_push() ? launch_cluster_k<T, CL, TANH, NS, true>(a, s, name)
                             : launch_cluster_k<T, CL, TANH, NS, false>(a, s, name);
}

/* The cluster register path for aligned rows of more than 32768 elements:
 * the fewest blocks (2-16) whose registers hold the row, doubled while rows x
 * blocks leave SMs idle; 16 falls back to 8 where the GPU does not place 16
 * and 8 hold the row. cudaErrorNotSupported when no cluster holds it. */
#define LN_CREG_PER (32 * 1024) /* elements a block of the cluster register kernel holds */

template <typename T, bool TANH> static cudaError_t launch_cluster(const kb_args *a, cudaStream_t s)
{
    constexpr int64_t PER = LN_CREG_PER;
    const int64_t rows = a->shape[LN_ROWS], cols = a->shape[LN_COLS];
    if (rows > INT32_MAX / KB_CLUSTER_MAX)
        return cudaErrorNotSupported;
    int cl = kb_cluster_blocks(rows, cols, PER);
    if (cl == 0) {
        /* rows of up to 16 x 64K elements: 32 more elements a thread in
         * shared memory (8 vectors fp32, 4 16-bit: 128 or 64 KB a block) */
        if (cols <= 2 * KB_CLUSTER_MAX * PER)
            return launch_cluster_cl<T, KB_CLUSTER_MAX, TANH, 32 / kb_vec_width<T>()>(
                a, s, "layernorm_fused_cluster16_smem");
        return cudaErrorNotSupported;
    }
    if (cl == 16) {
        const cudaError_t e = launch_cluster_cl<T, 16, TANH>(a, s, "layernorm_fused_cluster16");
        if (e != cudaErrorNotSupported || 8 * PER < cols)
            return e;
        cl = 8;
    }
    switch (cl) {
    case 2:
        return launch_cluster_cl<T, 2, TANH>(a, s, "layernorm_fused_cluster2");
    case 4:
        return launch_cluster_cl<T, 4, TANH>(a, s, "layernorm_fused_cluster4");
    default:
        return launch_cluster_cl<T, 8, TANH>(a, s, "layernorm_fused_cluster8");
    }
}

/* ---- parameters staged as floats in shared memory (the persistent kernels) --------- */

/* This thread's gamma and beta + b for its NV vectors tv + k stride (those
 * in(k)), read once from global memory into its own slots of gs and bs
 * ([NV V / 4][THREADS] float4s each). */
template <typename T, int NV, int THREADS, typename IN>
static __device__ __forceinline__ void ln_stage_params(const T *__restrict__ gamma,
                                                       const T *__restrict__ beta,
                                                       const T *__restrict__ bias, int tv,
                                                       int stride, IN in, float4 *gs, float4 *bs)
{
    constexpr int V = kb_vec_width<T>(), F4 = V / 4;
    const int tid = threadIdx.x;
    const T *gt = gamma + tv * V, *b1t = beta + tv * V, *b2t = bias + tv * V;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (in(k)) {
            float g[V], bb[V];
            ln_affine_global<T>(k * stride, gt, b1t, b2t, g, bb);
#pragma unroll
            for (int h = 0; h < F4; h++) {
                gs[(k * F4 + h) * THREADS + tid] =
                    make_float4(g[4 * h], g[4 * h + 1], g[4 * h + 2], g[4 * h + 3]);
                bs[(k * F4 + h) * THREADS + tid] =
                    make_float4(bb[4 * h], bb[4 * h + 1], bb[4 * h + 2], bb[4 * h + 3]);
            }
        }
    }
}

/* Vector k's gamma and beta + b back from this thread's slots (as
 * ln_stage_params wrote them). */
template <typename T, int THREADS>
static __device__ __forceinline__ void ln_staged_params(const float4 *gs, const float4 *bs, int k,
                                                        float *g, float *bb)
{
    constexpr int F4 = kb_vec_width<T>() / 4;
    const int tid = threadIdx.x;
#pragma unroll
    for (int h = 0; h < F4; h++) {
        const float4 gh = gs[(k * F4 + h) * THREADS + tid];
        g[4 * h] = gh.x, g[4 * h + 1] = gh.y, g[4 * h + 2] = gh.z, g[4 * h + 3] = gh.w;
        const float4 bh = bs[(k * F4 + h) * THREADS + tid];
        bb[4 * h] = bh.x, bb[4 * h + 1] = bh.y, bb[4 * h + 2] = bh.z, bb[4 * h + 3] = bh.w;
    }
}

/* ---- the persistent cluster kernel, pushed (rows of 32769-262144 elements) ---------- *
 *
 * layernorm_fused_cluster takes one row a cluster and ends: it reads its part
 * of gamma, beta and b from the L2 again for every row (three 16-byte loads
 * for every vector of x), and its SM has no loads in flight from its first
 * wait to the next cluster's start. Here a cluster of CL blocks of 1024
 * threads stays for rows cid, cid + nclusters, ..., each thread holding 16
 * elements of a row (a block 16384: CL = 4 holds 65536, 16 holds 262144):
 *   - its gamma and beta + b as floats in its own shared-memory slots, read
 *     from global memory once (128 KB a block);
 *   - the next row's vectors copied into its own slots by cp.async as soon as
 *     the current row's are in registers (64 KB fp32, 32 KB 16-bit), so the
 *     loads fly while the row is reduced, exchanged and written;
 *   - the blocks' (n, mean, M2) pushed into every block's slots by st.async
 *     (kb_xring: two slot sets by row parity, each block's own mbarriers), no
 *     fence in any warp.
 * Slots are thread-private (a thread reads back only what it copied), so no
 * block barrier guards them. The same design with the exchange pulled through
 * a cluster barrier a row (a GPU-scope fence in every warp, which waits for
 * the warp's stores and copies in flight) was measured and not kept
 * (2026-12-01 17:30 UTC, above: fp32 512 x 262144 61.1 -> 42.8%); the push
 * took those fences out of the one-row kernels (fp32 512 x 262144 60.9 ->
 * 65.0%). Prediction (before any measurement, % of the copy bandwidth): fp32
 * 2048 x 65536 77.5 -> ~85, 512 x 262144 65.4 -> ~80; bf16 4096 x 65536 67.6
 * -> ~75, 1024 x 262144 50.5 -> ~70, if the long rows are held back by the
 * parameters' L2 traffic (at 65% of the copy bandwidth, x's read through the
 * L2 and gamma, beta and b's three times as many bytes come to ~5.6 TB/s of
 * L2 reads); if nothing moves, they are not. Measured (H200, 2026-12-02
 * 03:50-04:00 UTC, two calls, two rounds each, no counters, L2 flushed, % of
 * the copy bandwidth, default -> this kernel): fp32 2048 x 65536 77.5 ->
 * 83.4, 77.4 -> 83.3; 512 x 262144 65.3 -> 74.9, 65.3 -> 74.6; bf16 4096 x
 * 65536 68.8 -> 50.6, 68.7 -> 50.5; 1024 x 262144 50.6 -> 45.9, 50.5 ->
 * 45.8; fp16 1024 x 262144 48.0 -> 46.7, 48.1 -> 46.5. fp32 gained 6-10
 * points, short of the prediction but in its direction: the parameters' L2
 * traffic was part of what held the rows back. 16-bit lost, 18 points where
 * the default holds the row in one block's shared memory: why is not yet
 * measured (per byte of x a 16-bit row stages twice the parameter bytes, and
 * its block keeps 160 KB of shared memory). fp32 rows take it by default;
 * KBENCH_LAYERNORM_CLUSTER_PF=0 turns it off, =2 gives it 16-bit rows too.
 * Tried and not kept (code in commit 87d081a): a ring of row slices. Here
 * an SM has one slice of x in flight (64 KB fp32), issued once the slice
 * before is in registers, and by Little's law its share of the copy
 * bandwidth (32.5 GB/s) over a loaded DRAM latency of 1.5-2 us wants 50-65
 * KB in flight at every moment. The ring kept a thread's gamma and beta + b
 * (16 columns) in registers for the whole launch, which freed the shared
 * memory for D = 3 slices (fp32; 6 16-bit) filled by cp.async D rows ahead,
 * the slot taking the row D later as soon as its vectors were in registers;
 * also in 512-thread blocks, two an SM. Prediction (before the run, % of
 * the copy bandwidth): fp32 2048 x 65536 83.6 -> 88-92, bf16 4096 x 65536
 * 68.6 -> 78-85, fp32 512 x 262144 75.3 -> ~80. Measured (H200, 2026-12-04
 * 05:31-05:35 UTC, two rounds, no counters, L2 flushed, median us; the
 * default's runs held back by the power cap to 1360-1660 MHz, the ring's at
 * 1880-1980): fp32 2048 x 65536 402, 310 (default) / 404, 406 (ring, 1024
 * threads) / 408, 411 (512 threads); fp32 512 x 262144 434, 393 / 507, 502 /
 * 503, 505; fp32 3000 x 40000 449, 437 / 469, 468 / 443, 444; bf16 4096 x
 * 65536 477, 467 / 509, 517 / 525, 534; bf16 3000 x 40000 238, 241 / 358,
 * 358 / 362, 362; bf16 1024 x 262144 607, 630 / 558, 559 / 560, 560 (the
 * one gain, at higher clocks, on an issue-bound row: 45% against the
 * report's 50.5% for the default at full clock). Slower everywhere else, at
 * higher clocks: deep rings of cp.async copies, one 16-byte copy a thread a
 * vector, keep fewer bytes moving than the plain loads they replace, as the
 * softmax grid's pipelined form found (64% against 82%, its header).
 * Not kept either (code in commit 3a4826d): these persistent clusters in
 * 512-thread blocks, two an SM (8192 columns a block, 8 or 16 a cluster),
 * so that one block works while the other waits on its cluster, as
 * softmax's cluster kernels gained from it; predicted fp32 2048 x 65536
 * 83.6 -> 86-90%. Measured (H200, 2026-12-04 06:42-06:52 UTC, the GPU held
 * at 1440-1590 MHz by its power cap throughout, interleaved rounds, no
 * counters, % of copy bandwidth, 512 / 1024 threads): 2048 x 65536, six
 * rounds, 65.7, 64.8, 64.9, 66.2, 63.9, 63.8 / 65.5, 66.1, 65.6, 66.1,
 * 66.5, 62.3 (1024 ahead by 0.7% on the mean; three rounds before, 1.09x
 * the other way with one round at 1944 MHz); 1024 x 131072 62.5, 61.5,
 * 60.6, 65.7, 59.3, 59.9 / 64.4, 62.0, 64.2, 64.4, 62.9, 64.0 (1024 ahead
 * 3.4%); 3000 x 40000, three rounds, 56.1, 56.0, 56.5 / 55.2, 56.2, 55.2.
 * Level within the noise of a capped clock. Neither more slices in flight
 * (the ring) nor a second block an SM (this) moved these rows, so what
 * holds them is not yet known. A first reading (kbench run --metrics full,
 * 06:52 UTC, 1946 MHz, the 512-thread form at 82.7% of the copy bandwidth,
 * DRAM excess 1.00): instructions issued on 70% of the SMs' issue slots,
 * where ~24 an element at this bandwidth would fill ~30%; stalls
 * not_selected 25%, short_scoreboard 19% (the staged parameters' shared
 * loads), long_scoreboard 14%, wait 13%. Something issues twice what the
 * element work does (the exchange's waits are the first suspect: their
 * polls count as issued); the next step is the SASS mix of this kernel
 * against the instruction counter on an uncapped GPU. Done for the default
 * (07:00 UTC, 1980 MHz, pf4 at 83.5%, DRAM excess 1.00): issue 70.8%,
 * not_selected 31%, short_scoreboard 17%, wait 12%, and its grid 120 blocks:
 * 30 clusters of 4 are all the GPU places (120 of 132 SMs, so the other
 * SMs' share of the bandwidth is left to these). Its static SASS
 * (tests/gpu/sass_mix.sh) is 1121 instructions, 467 fp, 344 int, 53 shfl,
 * for a thread's 16 elements a row and the once-only staging: at ~24 an
 * element the element work is ~380 of them, so the row's reductions (a
 * Welford merge with a reciprocal at each shuffle step of ln_block_wf's two
 * levels and of ln_ranks_wf) and the exchange make up much of the rest.
 * Next try: block sums of plain adds (n mean first, then M2 + n (mean -
 * M)^2 about the block's mean M), the merge with its reciprocal only at the
 * cluster level (PLAIN; the default since 2026-12-04, below;
 * KBENCH_LAYERNORM_PLAIN=0 keeps the Welford merge at both levels).
 * Prediction: fewer instructions a row, issue below 70%, fp32 2048 x 65536
 * 83.5 -> 85-88%. Measured (H200, 2026-12-04 07:18
 * UTC, three interleaved rounds, no counters, median us, the clock capped
 * at 1515-1695 MHz in the 65536 and 131072 runs, 1965-1980 at 40000; off /
 * on): 2048 x 65536 348, 371, 382 / 315, 306, 308 (1.18x; 80.0-82.5% of
 * the copy bandwidth under the cap); 1024 x 131072 350, 359, 362 / 321,
 * 346, 331 (1.07x); 3000 x 40000 371, 369, 369 / 325, 324, 323 (1.14x,
 * 61.0% -> 69.6%). Checked the same call at 33 x 65536 with a mean of
 * 10000 (rel. L2 error 1.1e-7), 40 x 40000, 150 x 65528, 41 x 98312, 400 x
 * 65536 (with stats), 67 x 131072 (tanh form); the GPU awkward-size sweep
 * with it on (07:25 UTC): 684 layernorm cases, 0 failed. Beside it, the same
 * call: bf16 4096 x 65536 (shared-memory row kernel) 66.8%, issue 73%,
 * not_selected 34%, math_pipe_throttle 13% (issue-bound, as above); bf16
 * 1024 x 262144 (streaming) 50.3%, DRAM excess 1.51, long_scoreboard 61%.
 * Again with clusters of 16 blocks on plain sums too (12:06-12:11 UTC, three
 * interleaved rounds, no counters, the clock at 1530-1590 MHz in the
 * persistent clusters' runs, 1920 at 40000 columns; % of the copy bandwidth,
 * Welford / plain): fp32 2048 x 65536 66.1, 67.0, 68.9 / 72.4, 69.8, 71.1
 * (1.056x); 1024 x 131072 68.7, 68.3, 63.0 / 71.5, 69.2, 69.6 (1.052x); 512
 * x 262144 62.3, 66.1, 62.5 / 67.1, 66.4, 69.8 (1.065x); 3000 x 40000 58.9,
 * 58.3, 57.4 / 61.7, 62.3, 64.2 (1.077x). The awkward-size sweep with it on
 * (12:14 UTC): 684 cases, 0 failed. So it is the default, for clusters of
 * 16 too. Beside it, 16-bit rows over these clusters
 * (KBENCH_LAYERNORM_CLUSTER_PF=2, plain sums) still lose to their own
 * paths (two rounds, the clock not kept, % of the copy bandwidth, default /
 * clusters): bf16 4096 x 65536 54.2, 53.7 / 44.7, 44.6; 6000 x 40000 48.0,
 * 49.7 / 30.8, 30.8.
 * At full clock (the report of 12:20-12:27 UTC, 1980 MHz, against the one
 * of 2026-12-03 with the Welford merge): fp32 512 x 262144 75.5 -> 80.8%,
 * 2048 x 65536 83.6 -> 83.5% (3000 x 40000 is not in the reports). So at
 * 65536 the issue slots stop mattering once the clock is free; what holds
 * the row there is not yet measured. First suspect: 30 clusters of 4 take
 * 120 of the 132 SMs, so the row runs at 83.5 / (120 / 132) = 91.9% of an
 * SM's share of the copy bandwidth; clusters of 2 would take every SM
 * (32768 columns a block), but a block's row slot and staged parameters
 * (384 KB) would not fit: the parameters would come from the L2 again, the
 * cost this kernel was built to remove. Checked (12:31-12:35 UTC):
 * row_lengths.sh's pf group (plain sums; fp32, fp16 and bf16 at 8 shapes,
 * clusters of 4, 8 and 16; rel. L2 error 1.1e-7 in fp32 at a mean of 10^4,
 * as the Welford form's) and its memcheck, racecheck and synccheck at 70 x
 * 40008, all clean; the Welford arm (pf-wf) and its memcheck the same.
 * The SMs taken (KBENCH_LAYERNORM_PF_CLUSTERS=n: at most n clusters;
 * H200, 2026-12-04 13:36-13:38 UTC, two interleaved rounds, 1965 MHz at the
 * end, % of the copy bandwidth): fp32 2048 x 65536, 30 clusters (120 SMs)
 * 82.8, 82.9; 27 (108) 80.0, 79.8; 24 (96) 77.1, 77.1. A tenth fewer SMs
 * cost 3.5%, a fifth 7%: the row's pace is mostly not the SMs' own, so the
 * 12 idle SMs would add ~3% at most (extrapolated), not the 10% that
 * 132 / 120 promised. */
template <typename T, int CL, bool TANH, bool PLAIN = false>
__global__ void __launch_bounds__(1024, 1)
    layernorm_fused_cluster_pf(LN_PATH_BUFFERS, int rows, int cols, float inv_cols,
                               int nclusters)
{
    constexpr int V = kb_vec_width<T>(), THREADS = 1024, NV = 16 / V, STRIDE = CL * THREADS;
    constexpr int F4 = V / 4; /* float4s a vector's parameters take */
    __shared__ float red[3][32];
    __shared__ kb_xring<CL> xr;
    extern __shared__ __align__(16) uint4 lnp_sm[];
    uint4 *xs = lnp_sm;                                         /* [NV][THREADS] */
    float4 *gs = reinterpret_cast<float4 *>(xs + NV * THREADS); /* [NV F4][THREADS] */
    float4 *bs = gs + NV * F4 * THREADS;                        /* [NV F4][THREADS] */
    const int tid = threadIdx.x, lane = tid & 31;
    const int tv = (int)kb_cluster_rank() * THREADS + tid; /* this thread's first vector */
    const int nvec = cols / V;
    auto in = [&](int k) { return tv + k * STRIDE < nvec; };
    const int cid = (int)blockIdx.x / CL;

    /* The copies of row r's vectors into this thread's slots (none past the
     * last row or the row's end: those slots are zero-filled, not read). */
    auto prefetch = [&](int r) {
        const int64_t base = (int64_t)(r < rows ? r : 0) * cols;
        const uint4 *xv = reinterpret_cast<const uint4 *>(x + base) + tv;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const bool ok = r < rows && in(k);
            kb_cp_async16(kb_smem_u32(&xs[k * THREADS + tid]),
                          ok ? (const void *)(xv + k * STRIDE) : (const void *)x, ok ? 16 : 0);
        }
        kb_cp_async_commit();
    };
    /* The first row on its way while the parameters are staged. */
    prefetch(cid);
    float K = cid < rows ? kb_load(x, (int64_t)cid * cols) : 0.0f;
    kb_xring_open(xr);

    /* This thread's gamma and beta + b, once. */
    ln_stage_params<T, NV, THREADS>(gamma, beta, bias, tv, STRIDE, in, gs, bs);
    /* The elements this thread holds of every row; PLAIN: the block's, and
     * 1 / that (red[2]: the loop's plain sums use red[0] and red[1]). */
    int n = 0;
#pragma unroll
    for (int k = 0; k < NV; k++)
        n += in(k) ? V : 0;
    float nblk = 0.0f, nb_inv = 0.0f;
    if constexpr (PLAIN) {
        nblk = ln_group_sum<THREADS / 32, 1>((float)n, red[2], 0);
        nb_inv = nblk > 0.0f ? 1.0f / nblk : 0.0f;
    }

    int round = 0;
    for (int row = cid; row < rows; row += nclusters, round++) {
        kb_cp_async_wait<0>();
        uint4 raw[NV];
#pragma unroll
        for (int k = 0; k < NV; k++)
            raw[k] = in(k) ? xs[k * THREADS + tid] : make_uint4(0, 0, 0, 0);
        /* This thread's exact statistics of d = x - K, two passes over registers. */
        float v[NV][V];
        const float s = shifted_sum<T, true>(raw, v, K, in);
        /* Every slot's value is in use (the sum): the next row may overwrite them. */
        const int next = row + nclusters;
        prefetch(next);
        const float Kn = next < rows ? kb_load(x, (int64_t)next * cols) : 0.0f;
        const float mt = n > 0 ? s / (float)n : 0.0f;
        const float q = centred_squares(v, mt, in);
        /* Every thread of the cluster past the previous round: red and this
         * round's slot set are free. */
        kb_xring_begin<CL>(round);
        ln_wf w = {(float)n, mt, q};
        if constexpr (PLAIN) {
            /* The block's state by plain sums: its mean mb from the sum of
             * d, then M2 = sum of (q + n (mt - mb)^2) about it (two barriers,
             * no reciprocal). */
            const float mb = ln_group_sum<THREADS / 32, 1>(s, red[0], 0) * nb_inv;
            const float e = mt - mb;
            w = {nblk, mb, ln_group_sum<THREADS / 32, 1>(fmaf((float)n * e, e, q), red[1], 0)};
        } else {
            w = ln_block_wf(w, red);
        }

        /* The cluster's states, merged alike everywhere, from this round's slots. */
        const float4 *part = kb_xring_push(xr, round, make_float4(w.n, w.mean, w.m2, 0.0f));
        const ln_wf c = ln_ranks_wf<CL>(lane, [&](int r) { return part[r]; });
        kb_xring_end();
        const float rstd = rsqrtf(fmaf(c.m2, inv_cols, LN_EPS));
        const float md = c.mean - mt; /* v holds d - mt */

        uint4 *yv = reinterpret_cast<uint4 *>(y + (int64_t)row * cols) + tv;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (in(k)) {
                float g[V], bb[V], o[V];
                ln_staged_params<T, THREADS>(gs, bs, k, g, bb);
#pragma unroll
                for (int i = 0; i < V; i++)
                    o[i] = ln_gelu_out<T, TANH>(fmaf((v[k][i] - md) * rstd, g[i], bb[i]));
                kb_st128(yv + k * STRIDE, kb_pack<T>(o));
            }
        }
        if (mean_out != nullptr && tv == 0) {
            mean_out[row] = K + c.mean;
            rstd_out[row] = rstd;
        }
        K = Kn;
    }
    /* The last zero-fill copies; every peer past its reads of this block's slots. */
    kb_cp_async_wait<0>();
    kb_cluster_wait();
}

/* Launches layernorm_fused_cluster_pf in clusters of CL blocks, as many
 * clusters as the GPU holds at once (at most one a row).
 * cudaErrorNotSupported when it places none (asked once a process). */
template <typename T, int CL, bool TANH, bool PLAIN = false>
static cudaError_t launch_cluster_pf_cl(const kb_args *a, cudaStream_t s, const char *name)
{
    constexpr int THREADS = 1024, V = kb_vec_width<T>();
    constexpr size_t SMEM = (size_t)(16 / V) * THREADS * 16 + (size_t)2 * 16 * THREADS * 4;
    const auto k = layernorm_fused_cluster_pf<T, CL, TANH, PLAIN>;
    static const int active = kb_cluster_capacity((const void *)k, THREADS, CL, SMEM);
    if (active == 0)
        return cudaErrorNotSupported;
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    /* KBENCH_LAYERNORM_PF_CLUSTERS=n: at most n clusters (an A/B of the SMs taken) */
    static const int cap = kb_env_int("KBENCH_LAYERNORM_PF_CLUSTERS", 0, 0, 4096);
    int nclusters = p.rows < active ? (int)p.rows : active;
    if (cap > 0 && nclusters > cap)
        nclusters = cap;
    const kb_dim3 grid = {(unsigned)(nclusters * CL), 1, 1}, block = {THREADS, 1, 1};
    return kb_launch_cluster(a, s, k, name, grid, block, SMEM, CL, p.x, p.g, p.b1, p.b2, p.y,
                             p.mo, p.ro, (int)p.rows, p.cols, p.inv_cols, nclusters);
}

/* launch_cluster_pf_cl in clusters of CL blocks, the block statistics by
 * plain sums (`plain`) or Welford merges; name is the Welford kernel's,
 * plain_name the other's. */
template <typename T, int CL, bool TANH>
static cudaError_t launch_cluster_pf_n(const kb_args *a, cudaStream_t s, bool plain,
                                       const char *name, const char *plain_name)
{
    return plain ? launch_cluster_pf_cl<T, CL, TANH, true>(a, s, plain_name)
                 : launch_cluster_pf_cl<T, CL, TANH, false>(a, s, name);
}

/* The persistent cluster kernel for aligned rows of 32769-262144 elements:
 * the fewest blocks of 16384 elements (4, 8 or 16) that hold a row.
 * cudaErrorNotSupported when the row does not fit or the GPU places none. */
template <typename T, bool TANH>
static cudaError_t launch_cluster_pf(const kb_args *a, cudaStream_t s)
{
    const int64_t rows = a->shape[LN_ROWS], cols = a->shape[LN_COLS];
    if (rows > INT32_MAX || cols <= 32768 || cols > KB_CLUSTER_MAX * 16384)
        return cudaErrorNotSupported;
    /* The block's statistics by plain sums unless KBENCH_LAYERNORM_PLAIN=0
     * (the Welford merge at every level; measured above the kernel). */
    static const int plain = kb_env_int("KBENCH_LAYERNORM_PLAIN", 1, 0, 1);
    if (cols <= 4 * 16384)
        return launch_cluster_pf_n<T, 4, TANH>(a, s, plain, "layernorm_fused_cluster_pf4",
                                               "layernorm_fused_cluster_pf4_plain");
    if (cols <= 8 * 16384)
        return launch_cluster_pf_n<T, 8, TANH>(a, s, plain, "layernorm_fused_cluster_pf8",
                                               "layernorm_fused_cluster_pf8_plain");
    return launch_cluster_pf_n<T, 16, TANH>(a, s, plain, "layernorm_fused_cluster_pf16",
                                            "layernorm_fused_cluster_pf16_plain");
}

/* The parameters' kernels below: this thread's vector v of a 16-bit row
 * and its beta + b as floats, or false past the row's nvec vectors. */
template <typename T>
KB_DEV bool ln_params_vec(const T *__restrict__ beta, const T *__restrict__ bias, int nvec,
                          int &v, float *b)
{
    static_assert(kb_vec_width<T>() == 8, "16-bit rows");
    v = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (v >= nvec)
        return false;
    ln_bias_global<T>(v, beta, bias, b);
    return true;
}

/* beta + b of a 16-bit row's nvec vectors as floats, in two planes of
 * float4s so that a warp's loads of its vectors' halves are contiguous:
 * vector v's elements 0-3 at bb[v], 4-7 at bb[nvec + v]. */
template <typename T>
__global__ void layernorm_params32(const T *__restrict__ beta, const T *__restrict__ bias,
                                   float4 *__restrict__ bb, int nvec)
{
    int v;
    float b[8];
    if (!ln_params_vec<T>(beta, bias, nvec, v, b))
        return;
    bb[v] = make_float4(b[0], b[1], b[2], b[3]);
    bb[nvec + v] = make_float4(b[4], b[5], b[6], b[7]);
}

/* layernorm_params32's planes, then gamma as floats in two more planes of
 * the same layout (G32, layernorm_fused_srow2's header): vector v's gamma
 * 0-3 at bb[2 nvec + v], 4-7 at bb[3 nvec + v]. */
template <typename T>
__global__ void layernorm_params64(const T *__restrict__ gamma, const T *__restrict__ beta,
                                   const T *__restrict__ bias, float4 *__restrict__ bb, int nvec)
{
    int v;
    float b[8], g[8];
    if (!ln_params_vec<T>(beta, bias, nvec, v, b))
        return;
    kb_unpack<T>(kb_ld128(gamma + (size_t)v * 8), g);
    bb[v] = make_float4(b[0], b[1], b[2], b[3]);
    bb[nvec + v] = make_float4(b[4], b[5], b[6], b[7]);
    bb[2 * nvec + v] = make_float4(g[0], g[1], g[2], g[3]);
    bb[3 * nvec + v] = make_float4(g[4], g[5], g[6], g[7]);
}

/* beta + b in 24 bits a column (P24, layernorm_fused_srow2's header): the
 * float hi16:lo8:lo8 that p24_unpack rebuilds from the 24 bits t = hi16:lo8
 * (the low byte repeated, so that one PRMT rebuilds it). */
KB_DEV uint32_t p24_value(uint32_t t)
{
    return (t << 8) | (t & 0xffu);
}

/* The t whose p24_value is nearest to the float of bits u, within 128 of
 * its last place (2^-16 relative); inf and NaN kept by truncation. */
KB_DEV uint32_t p24_nearest(uint32_t u)
{
    const uint32_t t = u >> 8;
    if ((u & 0x7f800000u) == 0x7f800000u)
        return t;
    const auto dist = [u](uint32_t c) {
        const uint32_t w = p24_value(c);
        return w > u ? w - u : u - w;
    };
    uint32_t best = t;
    if (((t + 1u) & 0x7fffffu) != 0u && (p24_value(t + 1u) & 0x7f800000u) != 0x7f800000u &&
        dist(t + 1u) < dist(best))
        best = t + 1u;
    if ((t & 0x7fffffu) != 0u && dist(t - 1u) < dist(best))
        best = t - 1u;
    return best;
}

/* beta + b of a 16-bit row's nvec vectors in 24 bits a column: vector v's
 * eight hi16 at hi[v], its eight lo8 at lo[v] (p24_nearest of the float sum
 * that layernorm_params32 stores). */
template <typename T>
__global__ void layernorm_params24(const T *__restrict__ beta, const T *__restrict__ bias,
                                   uint4 *__restrict__ hi, uint2 *__restrict__ lo, int nvec)
{
    int v;
    float b[8];
    if (!ln_params_vec<T>(beta, bias, nvec, v, b))
        return;
    uint32_t h[4] = {0u, 0u, 0u, 0u}, l[2] = {0u, 0u};
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const uint32_t t = p24_nearest(__float_as_uint(b[e]));
        h[e / 2] |= (t >> 8) << (16 * (e & 1));
        l[e / 4] |= (t & 0xffu) << (8 * (e & 3));
    }
    hi[v] = make_uint4(h[0], h[1], h[2], h[3]);
    lo[v] = make_uint2(l[0], l[1]);
}

/* The eight floats of a vector from layernorm_params24's hi16 (h) and lo8
 * (l): one PRMT each. */
KB_DEV void p24_unpack(uint4 h, uint2 l, float *bb)
{
    const uint32_t hw[4] = {h.x, h.y, h.z, h.w}, lw[2] = {l.x, l.y};
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const uint32_t j = 4u + (uint32_t)(e & 3), o = 2u * (uint32_t)(e & 1);
        bb[e] = __uint_as_float(
            __byte_perm(hw[e / 2], lw[e / 4], j | (j << 4) | (o << 8) | ((o + 1u) << 12)));
    }
}

/* ---- 16-bit rows in the shared memory of a block or a cluster ------------------- *
 *
 * The shared-memory row kernel above, reworked where its SASS spends
 * (instructions an element, its header): the ring of 12 slots a thread is
 * three groups of PF = 4, a row in two of them and the next row's first
 * half in the third, so a row's vectors sit at two base addresses with
 * immediate offsets instead of a wrapped slot index each; the output loop is
 * unrolled, its global addresses immediate offsets too; and the
 * normalisation is one FMA, x rstd + (-mean rstd), instead of a subtract and
 * a multiply (for 16-bit inputs its rounding, 2^-24 of |mean| / sigma in
 * normalised units, is 2^-16 of the input's own spacing there). Prediction
 * (before any measurement, nvdisasm of the sm_90 cubin): the output loop
 * from 185 to ~150 instructions for 8 elements, the row from ~31.8 to ~28
 * an element, bf16 4096 x 65536 67.8% -> ~76% of the copy bandwidth if the
 * issue share stays at ~70%.
 * Rows of CL x 65536 16-bit elements: the same kernel in a cluster of CL =
 * 2, 4, 8 or 16 blocks, block r holding the row's vectors r THREADS + tid +
 * k CL THREADS; each block takes its exact two-pass statistics (n, mean,
 * M2), the cluster's merged alike in every thread (Chan's formula) from the
 * states pushed into every block's slots (kb_xring, as the persistent
 * clusters do). The rows of 65537-1048576 columns took the streaming path
 * (two reads of x: bf16 1024 x 262144 50.4%, 256 x 1048576 54.1%, DRAM
 * excess 1.51, report of 2026-12-04); here x is read once. Prediction
 * (before any measurement): 262144 in clusters of 4 on 120 SMs ~65-70%,
 * 1048576 in clusters of 16 ~55-65% if the GPU places 7 of them.
 * KBENCH_LAYERNORM_SROW2=0 sends 32769-65536 columns back to the kernel
 * above and the longer rows to the streaming path.
 * SASS (sm_90, the row loop, bf16, erf): one block 1690 instructions for a
 * thread's 64 elements, ~26.4 an element (the old kernel ~31.8); a cluster
 * of 4, 1845, ~28.8 (the exchange). 48-64 registers; the tanh form with the
 * row exact spills 8-12 bytes (two stores a row, outside the element loops).
 * Measured (H200, 2026-12-04 13:34-13:38 UTC, two interleaved rounds, no
 * counters, the clock capped by power as the old kernel's 57-59% against its
 * report's 67.8% shows; % of the copy bandwidth, old (=0) / this kernel):
 * bf16 4096 x 65536 57.0, 58.7 / 66.5, 69.8 (1.18x, the predicted share of
 * the instructions saved); 1024 x 262144 (streamed / clusters of 4) 43.6,
 * 45.4 / 54.0, 68.8 (1.38x); 256 x 1048576 (clusters of 16) 46.3, 45.9 /
 * 53.8, 53.8 (1.17x); 3000 x 40000 (not exact) 52.1, 52.9 / 53.7, 53.1.
 * Tried and not kept (same call): fp32 rows in clusters of 2-8 such blocks
 * of 32768 columns, the parameters from the L2 (so that 65536 columns take
 * all 132 SMs in 66 clusters of 2): 0.78x the persistent clusters at 2048 x
 * 65536, 0.84x at 512 x 262144; and the folded normalisation there lost
 * fp32's digits at a mean of 10^4, as it must. The first form counted a
 * block's elements by a block sum through red[0], which the first row's sum
 * then overwrote unguarded: racecheck's hazard and a mismatch at 70 x 40008
 * (clusters of 2) found it; the count is now arithmetic.
 * Counters (kbench run --metrics full, 13:48 UTC, 1980 MHz after): bf16 4096
 * x 65536 82.1% of the copy bandwidth (not_selected 42%, math_pipe 12%:
 * still issue-bound), 1024 x 262144 64.8% (clusters of 4, 120 blocks;
 * not_selected 32%, long_scoreboard 20%), 256 x 1048576 54.1% (clusters of
 * 16, 7 placed, 112 blocks; long_scoreboard 36%, DRAM excess 1.05).
 * Next (prediction, before any measurement): the first pass's sum by the
 * tensor cores (MMA), each vector an m16n8k16 fragment against a B of ones,
 * an HMMA for 8 elements where the FADD form spends 16 instructions
 * (unpack and add); the row loop 1690 -> 1574 instructions (SASS), so
 * 4096 x 65536 82% -> ~87% while issue-bound. The products are exact and
 * the sums fp32; the second pass stays in FADD/FFMA, about the block's
 * mean, so M2 is exact about whatever mean the first pass gives.
 * KBENCH_LAYERNORM_SROW2_MMA=0 keeps the FADD form.
 * Measured (H200, 2026-12-04 13:58-13:59 UTC, two interleaved rounds, no
 * counters, the clock capped by power throughout: FADD / MMA, % of the copy
 * bandwidth): bf16 4096 x 65536 61.8, 61.6 / 63.3, 61.5 (1.011x); 1024 x
 * 262144 51.1, 51.4 / 51.7, 54.6 (1.037x). Kept, by a little: under the cap
 * the clock, not the instructions, sets the pace. The checks of 13:56 UTC
 * (srow2, srow2-fadd and srow2-c groups of row_lengths.sh, fp16 and bf16,
 * a mean of 10^4, statistics, tanh; memcheck, racecheck and synccheck at
 * one block and at a cluster of 2) and the GPU awkward-size sweep, all clean.
 * In the report of 14:02-14:10 UTC: 4096 x 65536 72.1% (67.8% in the one
 * before), its clock held at 1740 MHz by the power cap (305 us at 1980 MHz
 * in the counters run above, 347 us here: the time scales with the clock);
 * 1024 x 262144 63.3% (50.4%), 256 x 1048576 53.8% (54.1%): with 7
 * clusters of 16 on 112 SMs and long_scoreboard first, x's one read buys
 * nothing there yet.
 * Fewer instructions an element (the output pass is where they are): beta +
 * b as floats, worked out once a launch by layernorm_params32 into the
 * variant's scratch (4 bytes a column), replace two 16-byte loads, two
 * widenings and an add an element by two 16-byte float loads (the same L2
 * bytes as beta's and b's raw); and GELU's polynomial of degree 3 for bf16
 * and 4 for fp16 (ln_gelu_out; each under half an ulp of its output,
 * layernorm_ref.h) one or two FMAs fewer. SASS (bf16, one block, exact, erf;
 * a thread's 64 elements): 1640 instructions; parameters as floats 1464;
 * with GELU of degree 4 1400, of degree 3 1336; gamma as floats too 1416.
 * Prediction (before the run, from those counts): bf16 4096 x 65536, issue-
 * bound, 1.12x (parameters) and 1.23x (with degree 3); 1024 x 262144 and 256
 * x 1048576, waiting on loads more than on issue, 1.02-1.05x. Measured (H200,
 * 2026-12-04 19:38-19:40 UTC, three interleaved rounds, no check, the clock
 * between 1455 and 1980 MHz under the power cap; % of the copy bandwidth:
 * before | parameters | + degree 4 | + degree 3 | gamma too): 4096 x 65536
 * 67.9, 63.3, 67.1 | 71.6, 81.2, 72.9 (1.14x) | 73.6, 73.5, 71.5 (1.10x) |
 * 80.3, 82.0, 74.1 (1.19x) | 69.2, 66.6, 68.2 (1.03x); 1024 x 262144 55.9,
 * 53.3, 63.6 | 1.05x | 1.03x | 65.6, 60.4, 60.2 (1.08x) | 0.94x; 256 x
 * 1048576 51.4, 51.4, 51.2 | 1.02x | 1.03x | 54.0, 53.5, 53.2 (1.04x) |
 * 0.93x. The first form of the scratch (a thread's 8 floats side by side,
 * two loads 32 bytes apart across the warp) was 0.90-0.92x at the long rows
 * (19:28-19:33 UTC): half-used sectors on the path that waits on loads; the
 * planes above fixed it. Kept: parameters as floats, and the type's GELU in
 * every kernel of the variant. KBENCH_LAYERNORM_SROW2_PAR=0 keeps the raw
 * parameters (and KBENCH_LAYERNORM_SROW2_MMA=0, the FADD form, takes them).
 * The checks (19:50-19:54 UTC: the GPU awkward-size sweep of layernorm, the
 * srow2, srow2-raw, srow2-fadd and srow2-c groups with their sanitizers) all
 * clean. In the report of 19:54-20:01 UTC: 4096 x 65536 81.0% (80.0% in the
 * one before; the clock held at 1845 MHz, 1937 then), 1024 x 262144 66.2%
 * (64.5%), 256 x 1048576 53.6% (53.9%): less than the A/B's gain at 65536.
 * Counters after (kbench run --metrics full, 20:05 UTC): 4096 x 65536 304.5
 * us at 1889 MHz, issue 62% of its peak, DRAM 74%, stalls long_scoreboard
 * 22%, not_selected 22% (42% before), short_scoreboard 12%, barrier 11%: no
 * longer issue-bound first; 1024 x 262144 (clusters of 4) long_scoreboard 33%,
 * issue 56%; 256 x 1048576 (7 clusters of 16 on 112 SMs) long_scoreboard 44%,
 * issue 47%, DRAM 48%. What the long rows wait on is the loads of the output
 * pass (x from shared memory is short_scoreboard; gamma and beta + b come
 * from the L2 every row, 6 bytes a column) and each row's exchange across the
 * cluster, with little of the next row in flight: one row and half of the
 * next fill the shared memory.
 * Tried and not kept (20:21 UTC, two rounds, no check): the copies of the
 * next row's second half moved from after each of the output pass's first
 * four vectors to after the whole pass, which let the compiler issue the
 * parameters' loads up to a vector ahead (SASS: 1320 -> 1304 instructions;
 * predicted 1.03-1.08x at the long rows, waiting on loads): 0.957x at 4096 x
 * 65536, 0.913x at 1024 x 262144, 0.920x at 256 x 1048576 (522 against 480
 * us, its clock the higher). The next row's x in flight early is worth more
 * than the parameters' latency hidden.
 * Blocks of 512 threads, two an SM (TH = 512, KBENCH_LAYERNORM_SROW2_T=512;
 * the same code, each block half the columns, 96 KB of shared memory, 64
 * registers, no spills; clusters twice as large: a row of 65536 16-bit
 * columns over 2 blocks, 262144 over 8, at most 524288). Every row of the
 * 1024-thread form is one block's lockstep of two reductions, each behind a
 * barrier, the cluster's exchange and the output pass, with half of the
 * next row in flight: the counters above put long_scoreboard, barrier and
 * the exchange's wait first at the long rows. Two blocks an SM, of
 * different clusters and rows, each run those phases while the other
 * streams. Prediction (before any run, % of the copy bandwidth): bf16 4096
 * x 65536 ~80 -> ~85, 1024 x 262144 (clusters of 8 against the pipelined
 * grid's 64-66 and the clusters of 4's 63-66) ~75-80; level or worse if
 * the row's pace is its instructions (the same SASS a byte either way).
 * Measured on an H100 (80GB HBM3, not the H200 of the reports: no H200 was
 * lent; 2026-12-05 09:14 UTC, 1980 MHz, two interleaved rounds, no check, %
 * of that GPU's copy bandwidth, default / 512 threads / 1024 threads with
 * the pipelined grid off): bf16 4096 x 65536 89.6, 90.0 / 80.8, 81.1 /
 * 90.0, 89.7 (0.90x); 1024 x 262144 (the default the pipelined grid, the
 * others srow2's clusters of 8 and 4) 84.4, 84.2 / 77.3, 76.5 / 77.4, 77.0
 * (0.91x, level with 1024 threads); 2048 x 131072 79.7, 79.2 / 78.2, 77.2 /
 * 79.4, 80.2 (0.97x against 1024 threads). Slower or level everywhere:
 * the lockstep of a row is not what two blocks an SM buy back. And bench/cluster_fit
 * (same GPU) says they buy no placement either: clusters of 16 blocks of
 * 512 threads two an SM hold 112 SMs (14 clusters), as 7 of 1024 threads
 * do; of 8, 120 (30, as 15 of 1024). The checks (row_lengths.sh group
 * srow2-t512, the three sanitizers) clean. Not the default; the H200 A/B
 * is still to run.
 * The squares by the tensor cores too (SQ, KBENCH_LAYERNORM_SQ=1, the
 * default; =0 keeps the centred pass): the first pass takes the block's sum
 * and sum of squares at once (mma_sum_sq: per vector the sum's HMMA and four
 * m16n8k8 HMMAs whose diagonals are the squares), one group sum of the two
 * behind one barrier, and M2 = s2 - n mean^2 where that cancels at most 6
 * bits (|mean| < 8 sigma; ln_m2_from_sums bounds the error at 2.5e-4 of
 * rstd); past that the block takes the centred pass as before, as one. So a
 * typical row drops the second pass: its unpacks, subtracts and FMAs (24
 * instructions a vector) and its barrier. SASS (sm_90a, bf16 erf, one block,
 * exact, 1024 threads): the row loop 1249 -> 1095 instructions run (1336 laid
 * out, the centred pass kept for the rows that need it), a barrier a row
 * instead of two. Prediction (before any run): level on an H100, bandwidth-
 * bound there; on the H200, issue-bound at 4096 x 65536 (76%, the clock
 * under the power cap), 1.05-1.12x. Measured on an H100 (80GB HBM3; no H200
 * was lent; 2026-12-05 21:41-21:43 UTC, two interleaved rounds, % of its
 * copy bandwidth, default / SQ=0): bf16 4096 x 65536 89.1, 90.3 / 89.9, 89.5
 * (1.000x), level as predicted; the checks of row_lengths.sh's srow2 group
 * (a mean of 4, which takes SQ with 5 bits cancelled, 5 and 10^4, which take
 * the centred pass, statistics, tanh; max errors as SQ=0's) and the three
 * sanitizers clean. On the H200 (2026-12-05 21:48-21:50 UTC, two
 * interleaved rounds, no counters, the clock under the power cap, % of the
 * copy bandwidth, default / SQ=0): bf16 4096 x 65536 82.6, 83.5 / 69.0, 74.5
 * (1.157x, past the prediction, with SQ=0's rounds 5 points apart); the
 * pipelined grid there (KBENCH_LAYERNORM_GRID_PIPE=2, with SQ / without)
 * 77.4, 78.8 / 76.8, 77.5, still behind srow2. In the report of 21:55-22:03
 * UTC: 85.5% (76.2% in 6c40b87's).
 * The next row's first half issued before the wait for this row's bytes
 * (EARLY, KBENCH_LAYERNORM_SROW2_EARLY=1, one block a row with the squares
 * by the tensor cores, kernels named _early; the default 0 waits first;
 * SASS: DEPBAR.LE SB0, 0x1 after the copies for 0x0 before them). A row starts
 * by waiting for all of its copies, the last of them (its second half,
 * copied into the lo group as the last row's output pass freed it) issued
 * half an output pass before; the next row's first half goes out only
 * after that wait, so an SM's copies in flight fall to none at each row's
 * start, where the DRAM queue then drains. The free group is the last
 * row's hi group, whose reads by this thread are done, so its copies need
 * not wait. Prediction (before any run; 4096 x 65536 bf16 ~9.8 us a row
 * an SM, issue ~56% of its peak): on an H100, bound by the bandwidth at
 * ~90%, level; on the H200 (82-85%) +1-4% if the row's start is where the
 * SM's DRAM traffic stalls, level if the second half has landed by then.
 * Measured on an H100 (80GB HBM3; no H200 was lent; 2026-12-07 02:21 UTC,
 * kbench 7868091, two interleaved rounds, no check, % of its copy
 * bandwidth, default / EARLY): bf16 4096 x 65536 91.6, 90.2 / 90.8, 90.8
 * (0.998x); 8192 x 49152 88.3, 87.9 / 88.4, 88.0 (1.001x); 3000 x 40000
 * 82.3, 83.4 / 81.5, 82.8 (0.992x): level, as predicted there. The checks
 * (row_lengths.sh's srow2-early group: 9 shapes in fp32, fp16 and bf16,
 * the 16-bit ones of more than one row on the _early kernels; memcheck,
 * racecheck and synccheck at bf16 70 x 40008) clean. The H200 A/B,
 * where the prediction is a gain, is still to run; not the default.
 * Pairs of rows (R = 2, KBENCH_LAYERNORM_SROW2_PAIR=1; rows of at most one
 * block's 65536 16-bit columns, the squares by the tensor cores; kernels
 * named _pair). The parameters' traffic: every row's output pass reads
 * gamma (2 bytes a column) and beta + b as floats (4) from the L2, 6 bytes
 * a column where x and y move 4 through DRAM, so at 4096 x 65536 the SMs
 * read 1.5 times the model's bytes from the L2 again, ~5.3 TB/s at the
 * report's 82%, on top of the 3.5 TB/s of x and y passing through it. The
 * H100 (80GB HBM3), whose L2 is the same design (50 MB of it against the
 * H200's 60) and whose DRAM is 0.7 times as fast, runs this kernel at
 * 90-91% of its copy bandwidth, the H200 at 82-85%, and the fused_row
 * kernel of 16384 columns, whose parameters sit in shared memory, at
 * 87-89% on both: the L2's own
 * bandwidth is the suspect. Here a cluster of two blocks takes two rows at
 * once, each block the same half of both (the two rows' halves fill the
 * lo and hi slot groups that one row's halves fill in the form above, so
 * the shared memory and the ring's schedule are unchanged), and each
 * vector of the parameters, loaded once, serves both rows: the L2's reads
 * of them halve (0.75 bytes a byte of the model). The cost: each pair's
 * statistics cross the cluster (one exchange a pair, both rows' (mean, M2)
 * in one push, each block's count from its rank), and 66 clusters of two
 * must fill the 132 SMs. SASS (sm_90a, bf16, exact, erf): 64 registers, no
 * spills; 2248 instructions laid out against the one-row kernel's 1440,
 * the extra the two rows' centred passes (for rows the squares cannot
 * take) and the cluster's merges, most of them off the hot path.
 * Prediction (before any run): on the H200 at 4096 x 65536 82-85% ->
 * 87-90% if the L2 is what holds it; level or worse on an H100, where it
 * is not (there srow2's clusters of two at 2048 x 131072, 65536 columns a
 * block as here, ran at 79-81% of the copy bandwidth on 2026-12-05, one
 * block a row at 4096 x 65536 at 89-91%).
 * Measured on an H100 (80GB HBM3; no H200 was lent; 2026-12-07 03:46 UTC,
 * two interleaved rounds, no check, % of its copy bandwidth, default /
 * EARLY / PAIR): bf16 4096 x 65536 87.2, 87.6 / 88.5, 88.9 / 82.9, 83.2
 * (EARLY 1.015x, PAIR 0.951x); 8192 x 49152 85.3, 86.8 / 85.6, 86.2 /
 * 81.4, 79.1 (0.998x, 0.932x); 3000 x 40000 80.8, 81.8 / 81.9, 80.6 /
 * 71.6, 72.5 (0.999x, 0.886x): slower there, as predicted. Nsight Compute
 * on the same GPU (one launch each, the clocks free, caches flushed) says
 * why the prediction was no gain there: the default at 4096 x 65536 398 us
 * at 1834 MHz, DRAM at 79.3% of its peak and the busiest memory unit
 * (gpu__compute_memory_throughput 79.3%); L2-to-SM bytes 2.147 GB, x's
 * 0.537 and the parameters' 1.611 exactly. PAIR: 422 us at 1786 MHz, DRAM
 * 74.4%, L2-to-SM bytes 1.879 GB where the parameters halved would give
 * 1.342: 0.537 GB more than the SASS's loads (three 16-byte loads a vector
 * of the parameters, once for both rows) account for, not yet explained.
 * The checks (row_lengths.sh's srow2-pair group: 12 shapes in fp32, fp16
 * and bf16, the 16-bit ones of more than three rows on the _pair kernels:
 * odd rows, a mean of 4 (the squares) and 10^4 (the centred passes) with
 * the statistics, tanh; memcheck, racecheck and synccheck at bf16 70 x
 * 40008) clean. Those runs were of the kernel as first written. The form
 * here loads the parameters after the first row's unpack, works out y's
 * row pointers once, and leaves the one-row kernels their own fetch of a
 * row's vectors and their pair of sums (ln_group_sum2), so that every
 * kernel of this file but the new _pair ones is the same SASS,
 * instruction for instruction, as before the pairs (cuobjdump, 886
 * kernels; the first forms had moved the one-row kernels' schedules).
 * This form's checks on an H100 (80GB HBM3; no H200 was lent; 2026-12-07
 * 07:30 UTC): the srow2-pair group's 33 cases ok, both _pair kernels among
 * them, memcheck, racecheck and synccheck clean; its A/B there (two rounds,
 * no check, over the default): 0.915x at 4096 x 65536, 0.927x at 8192 x
 * 49152, 0.876x at 3000 x 40000 (EARLY 1.004x, 1.006x, 0.994x). The H200
 * A/B is still to run. Not the default.
 * The output pass's widening by the tensor cores (TW,
 * KBENCH_LAYERNORM_SROW2_TW=1; bf16, one block a row, with the squares by
 * the tensor cores; kernels named _tw). Where the H200 runs this kernel
 * under its power cap, the clock and so the pace follow the instructions
 * an element (the squares' 1.157x above). A vector of 8 bf16 elements of x
 * and one of gamma are widened to fp32 by 8 ALU instructions each (a shift
 * for the low half of a word, a mask for the high one); here each by two
 * m16n8k8 HMMAs against an identity (tw_widen: each lane's D holds its own
 * four elements, exact), so the output pass's 97 instructions a vector
 * (unpacks 16, FMAs 16, GELU 56, pack 4, loads and the store 5) become 85.
 * SASS (sm_90a, bf16, exact, erf): 1440 -> 1360 instructions laid out
 * (LOP3 and SHF 212 -> 78, HMMA 40 -> 72), 64 registers; 8 bytes of
 * stack, the ring's group index stored after a row's first barrier and
 * loaded at its end (one STL and one LDL a row, ~1000 instructions apart).
 * Every kernel of this file that existed before is the same SASS as before
 * (cuobjdump, 894 kernels compared). Prediction (before any run): on the
 * H200 at 4096 x 65536 82-85% -> 86-90% of the copy bandwidth if the
 * instructions hold it, level if its DRAM or L2 does; level on an H100,
 * bound there by the bandwidth at 87-91%.
 * The first form's checks (an H100, 80GB HBM3, 2026-12-07 07:30 UTC) found
 * it wrong where a row is not whole blocks: the HMMAs sat inside the lanes'
 * in-row test, and mma.sync is the warp's (bf16 2000 x 50000 hung, 9 x
 * 40000 wrote garbage past column 39936); then, widened by every lane, the
 * stale slot bytes of the lanes past the row's end met B's zeros and
 * spread NaN to the lanes in it (07:45 UTC, 2000 x 50000 and 31 x 65536
 * with tanh). Both mended above: every lane widens, zeros past the row's
 * end. The form here passed row_lengths.sh's srow2-tw group (24 cases in
 * fp32, fp16 and bf16, both _tw kernels among them) and memcheck,
 * racecheck and synccheck at bf16 70 x 40008 (07:52 UTC). Measured on the
 * same kind of H100 (no H200 was lent; 07:53 UTC, two interleaved rounds,
 * no check, % of its copy bandwidth, default / TW / EARLY): bf16 4096 x
 * 65536 88.4, 88.4 / 89.4, 89.2 / 90.7, 91.7 (TW 1.010x, EARLY 1.031x);
 * 8192 x 49152 87.7, 87.8 / 83.1, 85.6 / 89.8, 88.8 (0.961x, 1.018x); 3000
 * x 40000 82.3, 84.5 / 78.1, 76.6 / 83.3, 84.3 (0.928x, 1.005x). Nsight
 * Compute on that GPU (07:35 UTC, the first form at 4096 x 65536, whose
 * rows are whole blocks, so the same code as here; one launch each, clocks
 * free): default 377.9 us at 1837 MHz, issue 40.1% of its peak, DRAM 83.4%,
 * the L2 75.5%; TW 379.2 us at 1767 MHz, issue 38.3%, DRAM 83.4%, the L2
 * 77.6%: bound by the DRAM there, as predicted. Slower where rows are not
 * whole blocks (0.93-0.96x; 0.95-0.96x in the A/B of the form before the
 * zeros, 07:45 UTC), not yet explained. Not the default; the H200 A/B,
 * where the prediction is a gain, is still to run.
 * Two more forms of it for that A/B (2026-12-07): KBENCH_LAYERNORM_SROW2_TW=2
 * widens by the tensor cores only where a row is whole blocks (the _exact
 * kernel; the other rows keep the default), so that the loss above cannot
 * hide a gain at such rows; and with KBENCH_LAYERNORM_SROW2_EARLY=1 as well,
 * the one kernel does both (kernels named _tw_early; before, TW took the
 * rows and EARLY was not applied). Prediction (before any run): TW=2 level
 * with the default where rows are not whole blocks (the same kernel) and
 * as TW at 4096 x 65536; both at once there the product of the two, on an
 * H100 ~1.04x, on the H200 more if its instructions hold it. Measured on an
 * H100 (80GB HBM3; no H200 was lent; 2026-12-07 08:37 UTC, two interleaved
 * rounds, no check, % of its copy bandwidth, default / TW=2 / EARLY / both):
 * bf16 4096 x 65536 91.7, 88.8 / 88.3, 88.8 / 92.7, 92.8 / 90.5, 90.3 (TW=2
 * 0.982x, EARLY 1.028x, both 1.002x); 8192 x 49152 88.0, 89.2 / 88.5, 87.8
 * / 89.5, 89.4 / 89.2, 89.1 (0.995x, the default's kernel; 1.010x;
 * 1.007x). TW lost here where it gained 1.010x in the run above, and took
 * EARLY's gain with it: not the product predicted. The checks
 * (row_lengths.sh's srow2-tw-early and srow2-tw2 groups: 36 cases ok, the
 * _tw_early kernels and the _exact_tw one among them, the others' rows on
 * the default kernels; memcheck, racecheck and synccheck at bf16 70 x
 * 40008) clean. Not the default; the H200 A/B is still to run.
 * Beta + b of each thread's first vector kept in shared memory (PC,
 * KBENCH_LAYERNORM_SROW2_PC=1, with KBENCH_LAYERNORM_SROW2_EARLY=1 both;
 * one block a row; kernels named _pc and _pc_early). The ring's 192 KB
 * leave 35 KB of the SM's shared memory; 32 KB of it hold the floats of
 * beta + b for every thread's vector 0, loaded once a launch, read by two
 * LDS.128 a row in place of two loads from the L2. The Nsight Compute
 * figures above put the H100's L2 at 75.5% of its peak at 4096 x 65536 with
 * the DRAM at 83%; the H200 runs the same kernel 1.24 times as fast against
 * an L2 of the same design, ~94% if its peak is the H100's, so the L2 may
 * be what holds it there. Of the 512 KB a row that the SMs read from the
 * L2 at 65536 columns (x 128 KB, gamma 128 KB, beta + b 256 KB), 32 KB
 * (6.25%) no longer cross it. Prediction (before any run): on an H100,
 * bound by its DRAM, level; on the H200 at 4096 x 65536, +3-6% if the L2
 * is what holds it, level if not. SASS (sm_90a, bf16, exact, erf): 1448
 * instructions laid out against 1440, 64 registers, no stack; every other
 * kernel of this file the same SASS as before (cuobjdump, 902 kernels).
 * Measured on an H100 (same call as the TW=2 figures above, default / PC /
 * PC with EARLY): bf16 4096 x 65536 91.7, 88.8 / 85.2, 84.8 / 86.7, 85.6
 * (0.942x, 0.955x); 8192 x 49152 88.0, 89.2 / 85.9, 86.1 / 86.6, 84.6
 * (0.971x, 0.966x): slower, where level was predicted. Not measured apart,
 * the likeliest account is the L1's share of the SM's 256 KB: the
 * default's 194 KB of shared memory take the 196 KB carve-out and leave
 * the L1 60 KB, PC's 226 KB the 228 KB one and 28 KB, and every load of
 * gamma and beta + b (three 16-byte loads a vector, each thread's eight
 * vectors a row) takes L1 lines until it lands; Nsight Compute on that GPU
 * (08:52 UTC, one launch each, clocks free) agrees in kind: PC 409.3 us
 * against the default's 372.2, issue 36.6% of its peak against 40.2%,
 * DRAM 77.1% against 84.5%. The checks (srow2-pc and srow2-pc-early
 * groups: 39 cases ok, the four _pc kernels among them; memcheck,
 * racecheck and synccheck at bf16 70 x 40008, memcheck with EARLY) clean.
 * Not the default; the H200 A/B is still to run.
 * Beta + b in 24 bits a column (P24, KBENCH_LAYERNORM_SROW2_P24=1, with
 * KBENCH_LAYERNORM_SROW2_EARLY=1 both; one block a row; kernels named _p24
 * and _p24_early). The floats of beta + b are half of the 512 KB a row
 * that the SMs read from the L2 at 65536 columns. layernorm_params24
 * keeps each as its top 16 bits and its next 8 (hi16 in one plane of
 * 16-byte vectors, lo8 in one of 8-byte ones), and the output pass
 * rebuilds the float hi16:lo8:lo8 with one PRMT (p24_unpack), within 2^-16
 * of the float sum (p24_nearest), where bf16's own rounding of y is 2^-9:
 * 24 bytes a vector of the parameters' 48 where 32 were, the row's reads
 * from the L2 512 -> 448 KB (-12.5%), with no more loads (a 16-byte and an
 * 8-byte one for the two 16-byte ones), and no shared memory, so the L1
 * keeps its 60 KB (PC above lost that). The cost: the PRMTs, 8 a vector
 * (the output pass 97 -> 105 instructions a vector). SASS (sm_90a, bf16,
 * exact, erf): 1440 -> 1504 instructions laid out (the 64 PRMTs), 64
 * registers, no stack; every other kernel the same SASS as before
 * (cuobjdump, 918 kernels). Prediction (before any run): on an H100, bound
 * by its DRAM, level or ~1% slower (the instructions); on the H200 at
 * 4096 x 65536 +4-8% if its L2 is what holds it, 1-3% slower if its
 * instructions are (the clock under the power cap). Measured on an H100
 * (80GB HBM3; no H200 was lent; 2026-12-07 08:50 UTC, three interleaved
 * rounds, no check, over the default): P24 1.012x at 4096 x 65536, 0.979x
 * at 8192 x 49152, 0.996x at 3000 x 40000; with EARLY 1.041x, 1.003x,
 * 0.995x; EARLY alone 1.043x, 1.006x, 1.012x: level there, as predicted.
 * The checks (srow2-p24 and srow2-p24-early groups: 39 cases ok, the four
 * _p24 kernels among them; memcheck, racecheck and synccheck at bf16 70 x
 * 40008, memcheck with EARLY) clean. Nsight Compute on that GPU (08:52-08:55
 * UTC, 4096 x 65536, one launch each, clocks free) says the L2 will not be
 * what holds the H200 either: L2-to-SM bytes 2.147 GB -> 1.879 (P24, as
 * designed), 2.018 (PC), but the L2's busiest unit, the one lts__throughput
 * reports, is the fabric between its two halves
 * (lts__ltcfabric2ltc_cycles_active, 75-78%; its tags, data banks and
 * crossbar ports 38-56%), and its active time was the same with P24 as
 * without (75.73% of 377.2 us, 77.66% of 367.8 us): the parameters, read by
 * every SM, are kept in both halves and do not cross it; x and y do, half
 * of their sectors (0.55 GB of 1.06). The copy kernel that the % of the
 * copy bandwidth is of loads the fabric exactly as much a byte (78.15% of
 * 734.7 us for 2.13 GB; srow2 75.09% of 379.9 us for 1.06 GB; fused_row at
 * bf16 16384 x 16384 76.45% of 373.0 us for 1.05 GB: 26,960-27,050 %-us a
 * GB each), so whatever the fabric allows the copy on the H200, it allows
 * these kernels as well. What differs from the copy is then the SMs' side:
 * the bytes each keeps in flight (EARLY) and the instructions under the
 * power cap (SQ's 1.157x there, TW). Not the default.
 * The ring filled by the copy engine (BULK, tried 2026-12-07; one block a
 * row; code in commit cdddc42). With one block a row a slot (its
 * THREADS threads' vector k) is 16 KB of the row in a row, so one
 * cp.async.bulk fills it: thread 0 fills a slot group (4 slots, 64 KB) at
 * a time on the group's mbarrier, where every thread otherwise issues 8
 * LDGSTS of 16 bytes a row (with their address arithmetic and the
 * commit/wait groups), each passing through the LSU and taking L1 lines
 * until it lands, beside the loads of the parameters. Prediction (before
 * any run): on an H100, bound by its DRAM, level to +2%; on the H200 at
 * 4096 x 65536 +2-5% if the SMs' side holds it (instructions under the
 * power cap, the loads in flight), level if not.
 * The first form filled a group (4 slots) at once, by thread 0 once every
 * thread had read it: warp 0 waited at a named barrier that the other
 * warps arrived at and passed, after the output pass's first half (for
 * the next row's second half) and at the row's end (for the first half of
 * the row after next). SASS (sm_90a, bf16, exact, erf): 1680 instructions
 * laid out (the fills' code thread 0's), 64 registers, 16 bytes of stack
 * (group indices and parities: 4 LDL and 1 STL a row). Measured on an
 * H100 (80GB HBM3; no H200 was lent; 2026-12-07 09:21 UTC, three
 * interleaved rounds, no check, over the default): 0.942x at 4096 x
 * 65536, 0.931x at 8192 x 49152, 1.005x at 3000 x 40000 (EARLY 1.004x,
 * 0.995x, 1.018x in the same rounds); its checks (row_lengths.sh's
 * srow2-bulk group, 30 cases; memcheck, racecheck and synccheck) clean.
 * Slower where level was predicted: a group's copies waited for its
 * slowest warp, half a row of copies at once, where each thread's own
 * copies went out as soon as it had read its slot. Hence the form here:
 * each slot is filled as soon as the last warp has read it, by that warp
 * (each warp's lane 0 counts its reading of slot k with an acq_rel add in
 * shared memory after a __syncwarp; the one that reads 31 fills the slot,
 * after a proxy fence), so no warp waits and a slot's copy goes out when
 * the old form's last thread copy for it would have. SASS: 1968
 * instructions laid out (eight fills inlined), 64 registers, no stack.
 * Measured on the same kind of H100 (09:29 UTC, three rounds, over the
 * default): 0.917x at 4096 x 65536, 0.947x at 8192 x 49152, 0.918x at 3000
 * x 40000 (EARLY 1.023x, 1.012x, 0.997x); checks and sanitizers clean.
 * Slower still. Not measured apart; what the two forms share against the
 * threads' own copies is the copy engine's 16 KB copies, each from one
 * lane and a row's worth from a few warps, where 1024 threads' LDGSTS go
 * out spread over the output pass. Not kept (code of both forms in commit
 * cdddc42).
 * Gamma as floats too (G32, KBENCH_LAYERNORM_SROW2_G32=1; one block a row
 * with the squares by the tensor cores, kernels named _g32). The output
 * pass widens each vector's gamma (8 bf16 or fp16: a SHF and a LOP3 a
 * pair) every row, the same 65536 columns 4096 times at 4096 x 65536.
 * layernorm_params64 writes gamma as floats once, in two more planes
 * beside beta + b's (the scratch 4 -> 8 bytes a column), and the output
 * pass loads them as two 16-byte vectors where it loaded one: the
 * parameters' L2 reads 6 -> 8 bytes a column (the row's 384 -> 512 KB a
 * block, the opposite of P24), 65 unpacking instructions -> 8 more loads.
 * SASS (sm_90a, bf16, exact, erf): 1440 -> 1392 instructions laid out
 * (SHF 107 -> 74, LOP3 105 -> 73, LDG 24 -> 32, MOV 29 -> 43), 64
 * registers, no stack; every other kernel the same SASS as before
 * (cuobjdump, 936 kernels compared by name). Prediction (before any run):
 * on an H100, bound by its DRAM, level (P24's L2 bytes moved nothing
 * there); on the H200 at 4096 x 65536, where SQ's 12% fewer instructions
 * a row gave 1.157x, +2-5% if its instructions under the power cap hold
 * it, level or worse if the loads in flight do.
 * Measured on an H100 (80GB HBM3; no H200 was lent; 2026-12-07 10:39 UTC,
 * kbench ee1bdf8, three interleaved rounds, no check, % of its copy
 * bandwidth, default / EARLY / G32 / G32 + EARLY): bf16 4096 x 65536 89.3,
 * 90.4, 92.1 / 91.4, 89.7, 92.4 / 82.5, 82.4, 82.4 / 81.0, 82.3, 82.7
 * (G32 0.910x); 8192 x 49152 0.989x; 3000 x 40000 0.987x (EARLY 1.006x,
 * 1.011x, 1.009x). Slower, not level. Nsight Compute (10:40 UTC, one
 * launch each at 4096 x 65536, clocks free) has the instructions fall as
 * designed (smsp__inst_executed 142.9M -> 136.6M, -4.4%) and the time rise
 * (376.7 -> 411.9 us; DRAM 83.6 -> 76.9%, issue 40.7 -> 34.5%, L2 read
 * sectors 49.9M -> 53.1M). So on the H100 the SMs wait on the parameters'
 * loads, and a third more of their bytes (four 16-byte loads a vector
 * where three were, 14 more MOVs at the 64-register cap) costs more than
 * the 65 instructions save; P24's sixth fewer bytes gained 1.012x there
 * (above). The checks (row_lengths.sh's srow2-g32 and srow2-g32-early
 * groups, the four _g32 kernels in their reports; memcheck, racecheck and
 * synccheck at bf16 70 x 40008, memcheck with EARLY) clean. Not the
 * default; one arm of the H200's A/B.
 * The parameters' first vectors before the barrier (PP,
 * KBENCH_LAYERNORM_SROW2_PP=1 or 2; kernels named _pp1, _pp2). The output
 * pass loads vector k's gamma and beta + b one vector ahead (the compiler
 * issues vectors 0 and 1's six loads together, then each next vector's
 * during the one before), but only once pass 1's barrier is passed and,
 * for vector 0, right before its first use: a warp starts each row's
 * output pass with an L2 round trip, on which G32 says the H100 waits.
 * PP issues vector 0's three 16-byte loads (PP = 2: vectors 0 and 1's
 * six) after pass 1's HMMAs and before its barrier, held across it in 12
 * (24) registers, so that the barrier's wait covers them. SASS (sm_90a,
 * bf16, exact, erf): 1440 -> 1432 (PP = 1) and 1440 (PP = 2) instructions
 * laid out, the loads at 148-168 and 159-172 before the barrier at 190 and
 * 194 (after it at 467-473 before), 64 registers, no stack (PP = 2's tanh
 * kernels 8-16 bytes of stack); every other kernel the same SASS as
 * before (cuobjdump, 954 kernels). Prediction (before any run): on an H100
 * at 4096 x 65536, +1-3% if each row's output pass starts by waiting on
 * them (an L2 round trip, ~0.5-1 us of a row's ~9.8 us an SM, partly
 * overlapped across warps), level if the warps' spread at the barrier
 * hides it already; PP = 2 no better than 1 (vector 1's loads already fly
 * during vector 0); on the H200 the same or more.
 * Measured on an H100 (80GB HBM3; no H200 was lent; kbench 0179a41, three
 * interleaved rounds, no check, over the default in the same rounds) at
 * bf16 4096 x 65536 / 8192 x 49152 / 3000 x 40000: 11:05 UTC PP = 1
 * 1.039x / 1.010x / 1.003x, PP = 2 1.031x / 1.019x / 1.026x, PP = 1 +
 * EARLY 1.030x / 0.998x / 0.995x (EARLY 1.014x / 1.011x / 1.002x); 11:08
 * UTC PP = 1 1.025x / 1.006x / 1.003x, PP = 2 1.025x / 1.023x / 1.041x, PP
 * = 2 + EARLY 1.026x / 1.032x / 1.035x (EARLY 1.016x / 1.005x / 0.999x;
 * the default 88.4-92.0% of that GPU's copy bandwidth at 4096 x 65536).
 * PP = 2 ahead at every shape in both runs, past the prediction, and
 * against it better than PP = 1 away from 65536. kbench's own stall
 * counters (--metrics stalls, 11:08 UTC, 4096 x 65536, default / PP = 2 /
 * PP = 1, warps stalled a cycle of issue) say why, and it is not the
 * latency alone: mio_throttle 2.14 / 1.15 / 0.66, short_scoreboard 2.18 /
 * 1.54 / 0.98, lg_throttle 0.17 / 0.04 / 0.03, long_scoreboard 7.18 / 8.39
 * / 9.53, barrier 2.99 / 2.74 / 3.03; issue 42.5 / 43.6 / 42.9%, 377.1 /
 * 372.0 / 372.6 us under the counters. By default all 32 warps leave the
 * barrier together and each issues six 16-byte loads and its first slot's
 * shared-memory read at once, so they queue at the SM's memory
 * instruction pipe (MIO); with PP those loads went out before the
 * barrier, spread over the warps' uneven arrival at it. The checks
 * (row_lengths.sh's srow2-pp1, srow2-pp2 and srow2-pp-early groups: 24,
 * 24 and 15 cases ok, the six _pp kernels in their reports; memcheck,
 * racecheck and synccheck at bf16 70 x 40008 for PP = 1 and 2, memcheck
 * with EARLY) clean. fp16 on an H100 too (2026-12-07 14:06 UTC, kbench
 * 1eb0f80, two interleaved rounds, no check, over the default in the same
 * rounds, 4096 x 65536 / 8192 x 49152 / 3000 x 40000): PP = 2 1.031x /
 * 1.018x / 1.013x, PP = 2 + EARLY 1.028x / 1.028x / 1.010x. Not the
 * default: the committed reports are the H200's, and the H200 has not
 * measured it; first in its A/B. */
template <typename T, int CL, bool EXACT, bool TANH, bool MMA, bool PAR, int TH, bool SQ = false,
          bool EARLY = false, int R = 1, bool TW = false, bool PC = false, bool P24 = false,
          bool G32 = false, int PP = 0>
__global__ void __launch_bounds__(TH, LN_SROW_THREADS / TH)
    layernorm_fused_srow2(LN_PATH_BUFFERS, int rows, int cols, float inv_cols, int ngroups,
                          const float *__restrict__ par)
{
    constexpr int V = kb_vec_width<T>(), NV = LN_SROW_NV, THREADS = TH;
    constexpr int NW = THREADS / 32, PF = LN_SROW_PF, STRIDE = CL * THREADS;
    constexpr int NVR = NV / R; /* vectors of one row a thread */
    constexpr uint32_t GROUP = PF * THREADS * 16; /* bytes of a slot group */
    static_assert(V == 8, "16-bit rows (the folded normalisation is exact enough only there)");
    static_assert(NV == 2 * PF, "a row fills two slot groups of the three");
    static_assert(R == 1 || (R == 2 && SQ && CL > 1 && !EARLY),
                  "pairs of rows: the squares' form, in clusters");
    static_assert(!TW || (R == 1 && PAR && std::is_same<T, __nv_bfloat16>::value),
                  "the tensor cores' widening: bf16, one row, beta + b as floats");
    static_assert(!PC || (R == 1 && CL == 1 && PAR), "the kept parameters: one block a row");
    static_assert(!P24 || (R == 1 && CL == 1 && PAR && !PC),
                  "beta + b in 24 bits: one block a row");
    static_assert(!G32 || (R == 1 && CL == 1 && PAR && !TW && !PC && !P24),
                  "gamma as floats: one block a row, beta + b as floats");
    static_assert(PP == 0 || (PP <= 2 && R == 1 && CL == 1 && PAR && SQ && !TW && !PC && !P24 &&
                              !G32),
                  "the parameters' first vectors before the barrier: one block a row, SQ");
    extern __shared__ uint4 ln_dyn[]; /* slot q of this thread at q THREADS + tid */
    __shared__ float red[2][NW];
    __shared__ float red2[2][2 * R * NW]; /* SQ: the first pass's sums, by unit parity */
    __shared__ kb_xring<CL> xr;
    const int tid = threadIdx.x, lane = tid & 31;
    const int tv = (CL > 1 ? (int)kb_cluster_rank() : 0) * THREADS + tid;
    const int nvec = EXACT ? STRIDE * NVR : cols / V;
    const auto in = [&](int k) { return EXACT || tv + (k % NVR) * STRIDE < nvec; };
    const uint32_t st = kb_smem_u32(ln_dyn + tid);
    /* A unit is a row, or with R = 2 the pair of rows 2u and 2u + 1 (the
     * first in the slots of the lo group, the second in the hi group's).
     * Slot vector k of unit u into the slot at shared address dst. */
    const int units = (rows + R - 1) / R;
    const auto fetch = [&](int u, int k, uint32_t dst) {
        /* R = 1 written apart: the one-row kernels' SASS as measured */
        const int r = R == 1 ? u : R * u + k / NVR;
        if constexpr (R == 1) {
            const uint4 *xv = reinterpret_cast<const uint4 *>(x + (int64_t)r * cols) + tv;
            kb_cp_async16(dst, xv + k * STRIDE, 16);
        } else if (r < rows) {
            const uint4 *xv = reinterpret_cast<const uint4 *>(x + (int64_t)r * cols) + tv;
            kb_cp_async16(dst, xv + (k % NVR) * STRIDE, 16);
        }
    };
    /* With a cluster: this block's elements of every row (its vectors are
     * those v < nvec with v mod STRIDE in [rank THREADS, rank THREADS +
     * THREADS)), and their reciprocal. */
    float nb = 0.0f, nb_inv = 0.0f;
    if constexpr (CL > 1) {
        kb_xring_open(xr);
        const int rem = nvec % STRIDE - (tv - tid);
        nb = (float)V *
             (float)(nvec / STRIDE * THREADS + (rem < 0 ? 0 : rem < THREADS ? rem : THREADS));
        nb_inv = 1.0f / nb;
    }
    /* R = 2: block r's elements of a row, for the merge of its partials (the
     * same count as nb's, written apart so that the one-row kernels keep the
     * SASS they were measured with) */
    [[maybe_unused]] const auto nb_of = [&](int r) {
        const int rem = nvec % STRIDE - r * THREADS;
        return (float)V *
               (float)(nvec / STRIDE * THREADS + (rem < 0 ? 0 : rem < THREADS ? rem : THREADS));
    };
    /* The slot groups of this row's vectors 0..PF-1 (lo) and PF..NV-1 (hi),
     * and the free one; each row the next takes (free, lo). */
    int glo = 0, ghi = 1, gfree = 2;
    int row = (int)blockIdx.x / CL; /* the unit */
    /* PC: beta + b of this thread's vector 0, kept past the ring for every row */
    [[maybe_unused]] float4 *const pcs = reinterpret_cast<float4 *>(ln_dyn + (NV + PF) * THREADS);
    if constexpr (PC)
        if (in(0)) {
            const float4 *pb = reinterpret_cast<const float4 *>(par) + tv;
            pcs[tid] = __ldg(pb);
            pcs[THREADS + tid] = __ldg(pb + nvec);
        }
    if (row < units) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (in(k))
                fetch(row, k, st + (uint32_t)k * THREADS * 16);
        kb_cp_async_commit();
    }
    for (int round = 0; row < units; row += ngroups, round++) {
        const int next = row + ngroups;
        const uint4 *xlo = ln_dyn + glo * PF * THREADS + tid;
        const uint4 *xhi = ln_dyn + ghi * PF * THREADS + tid;
        const auto slot = [&](int k) {
            return k < PF ? xlo[k * THREADS] : xhi[(k - PF) * THREADS];
        };
        /* The next row's first PF vectors into the free group (this
         * thread's reads of it, the last row's hi group, are done), the rest
         * into this row's lo group as the output pass frees it; EARLY: the
         * first PF before the wait for this row's bytes, not after it. */
        if constexpr (!EARLY)
            kb_cp_async_wait<0>();
        if (next < units) {
#pragma unroll
            for (int k = 0; k < PF; k++)
                if (in(k))
                    fetch(next, k, st + gfree * GROUP + (uint32_t)k * THREADS * 16);
            kb_cp_async_commit();
        }
        if constexpr (EARLY) {
            if (next < units)
                kb_cp_async_wait<1>(); /* all but the group just committed */
            else
                kb_cp_async_wait<0>();
        }
        /* Pass 1: the block's sum of the row's vectors (SQ: and of their
         * squares, sb.y); with R = 2 each row's, behind the one barrier. */
        float2 sb[R];
        [[maybe_unused]] float4 ppl[PP > 0 ? PP : 1], pph[PP > 0 ? PP : 1];
        [[maybe_unused]] uint4 ppg[PP > 0 ? PP : 1];
        if constexpr (SQ) {
            /* red2 by unit parity: the unit after next writes this unit's
             * half only past the next unit's barrier, so past every warp's
             * reads here (this unit may have no second barrier) */
            if constexpr (R == 1) {
                if constexpr (PP > 0) {
                    /* PP: vectors 0..PP-1 of the parameters in flight across the barrier */
                    const float2 q = mma_sum_sq<T, NV>(slot, in);
#pragma unroll
                    for (int k = 0; k < PP; k++)
                        if (in(k)) {
                            const float4 *pb =
                                reinterpret_cast<const float4 *>(par) + tv + k * STRIDE;
                            ppl[k] = __ldg(pb);
                            pph[k] = __ldg(pb + nvec);
                            ppg[k] = kb_ld128(gamma + (tv + k * STRIDE) * V);
                        }
                    sb[0] = ln_group_sum2<NW, 1>(q, red2[round & 1], 0);
                } else {
                    sb[0] =
                        ln_group_sum2<NW, 1>(mma_sum_sq<T, NV>(slot, in), red2[round & 1], 0);
                }
            } else {
                float v[2 * R];
#pragma unroll
                for (int i = 0; i < R; i++) {
                    const float2 q =
                        mma_sum_sq<T, NVR>([&](int k) { return slot(i * NVR + k); }, in);
                    v[2 * i] = q.x;
                    v[2 * i + 1] = q.y;
                }
                ln_group_sumv<NW, 1>(v, red2[round & 1], 0);
#pragma unroll
                for (int i = 0; i < R; i++)
                    sb[i] = make_float2(v[2 * i], v[2 * i + 1]);
            }
        } else {
            const float s = MMA ? mma_sum<T, NV>(slot, in) : packed_sum<T, NV>(slot, in);
            sb[0] = make_float2(ln_group_sum<NW, 1>(s, red[0], 0), 0.0f);
        }
        float md[R], m2[R], rstd[R], nmr[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            md[i] = sb[i].x * (CL > 1 ? nb_inv : inv_cols);
            /* SQ: the same in every warp, so the block takes pass 2 or not as one */
            m2[i] = SQ ? ln_m2_from_sums(CL > 1 ? nb : (float)cols, md[i], sb[i].y) : -1.0f;
            /* Pass 2: the sum of (x - mean)^2, about this block's mean. red[i]
             * is not written again before the next unit's first sum, which
             * follows this sum's barrier (R = 1: red[0] is the first sum's,
             * so the second takes red[1], written only past a barrier every
             * warp reaches after its reads of the last). */
            if (m2[i] < 0.0f)
                m2[i] = ln_group_sum<NW, 1>(
                    packed_centred_squares<T, NVR>([&](int k) { return slot(i * NVR + k); },
                                                   md[i], in),
                    red[R == 1 ? 1 : i], 0);
        }
        if constexpr (CL > 1) {
            /* The cluster's (n, mean, M2), merged alike everywhere; with R =
             * 2 both rows' (mean, M2) in one push, each block's n from its
             * rank. */
            kb_xring_begin<CL>(round);
            const float4 mine = R == 1 ? make_float4(nb, md[0], m2[0], 0.0f)
                                       : make_float4(md[0], m2[0], md[R - 1], m2[R - 1]);
            const float4 *part = kb_xring_push(xr, round, mine);
#pragma unroll
            for (int i = 0; i < R; i++) {
                const ln_wf c = ln_ranks_wf<CL>(lane, [&](int r) {
                    const float4 q = part[r];
                    return R == 1 ? q
                           : i == 0 ? make_float4(nb_of(r), q.x, q.y, 0.0f)
                                    : make_float4(nb_of(r), q.z, q.w, 0.0f);
                });
                md[i] = c.mean;
                m2[i] = c.m2;
            }
            kb_xring_end();
        }
#pragma unroll
        for (int i = 0; i < R; i++) {
            rstd[i] = rsqrtf(fmaf(m2[i], inv_cols, LN_EPS));
            nmr[i] = -md[i] * rstd[i];
        }
        /* Output: y = GELU((x rstd - mean rstd) gamma + (beta + b)); once
         * vector k < PF is written, its slot takes the next unit's vector
         * PF + k. With R = 2 the lo group is the first row's, and each vector
         * of the parameters, loaded once, serves both rows. */
        uint4 *yv[R];
#pragma unroll
        for (int i = 0; i < R; i++)
            yv[i] = reinterpret_cast<uint4 *>(y + (int64_t)(R * row + i) * cols) + tv;
        const T *gt = gamma + tv * V, *b1t = beta + tv * V, *b2t = bias + tv * V;
        /* TW's B, worked out a row: one register fewer held across it */
        [[maybe_unused]] const uint32_t one = TW ? tw_one() : 0u;
#pragma unroll
        for (int k = 0; k < NVR; k++) {
            /* TW: mma.sync is the warp's, so every lane widens its vector,
             * in the row or not; past the row's end x and gamma are zeros,
             * not the slot's stale bytes, which the HMMA's zeros would meet
             * (an inf or NaN there spreads to the lanes in the row) */
            [[maybe_unused]] float fw[V], gw[V];
            if constexpr (TW) {
                uint4 xv = make_uint4(0, 0, 0, 0), gv = make_uint4(0, 0, 0, 0);
                if (in(k)) {
                    xv = slot(k);
                    gv = kb_ld128(gt + k * STRIDE * V);
                }
                tw_widen(xv, one, fw);
                tw_widen(gv, one, gw);
            }
            if (in(k)) {
                float f[V], g[V], bb[V];
                if constexpr (TW) {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        f[e] = fw[e]; /* the unit's first row */
                } else {
                    kb_unpack<T>(slot(k), f);
                }
                if constexpr (PAR) {
                    if constexpr (P24) {
                        const uint4 *ph = reinterpret_cast<const uint4 *>(par) + tv + k * STRIDE;
                        const uint2 *pl =
                            reinterpret_cast<const uint2 *>(reinterpret_cast<const uint4 *>(par) +
                                                            nvec) +
                            tv + k * STRIDE;
                        p24_unpack(__ldg(ph), __ldg(pl), bb);
                    } else {
                        const float4 *pb =
                            reinterpret_cast<const float4 *>(par) + tv + k * STRIDE;
                        const bool kept = PC && k == 0;
                        float4 lo, hi;
                        /* PP written apart: the other kernels keep the SASS
                         * they were measured with (as in the gamma load below) */
                        if constexpr (PP > 0) {
                            lo = k < PP ? ppl[k] : __ldg(pb);
                            hi = k < PP ? pph[k] : __ldg(pb + nvec);
                        } else {
                            lo = kept ? pcs[tid] : __ldg(pb);
                            hi = kept ? pcs[THREADS + tid] : __ldg(pb + nvec);
                        }
                        bb[0] = lo.x, bb[1] = lo.y, bb[2] = lo.z, bb[3] = lo.w;
                        bb[4] = hi.x, bb[5] = hi.y, bb[6] = hi.z, bb[7] = hi.w;
                    }
                    if constexpr (TW) {
#pragma unroll
                        for (int e = 0; e < V; e++)
                            g[e] = gw[e];
                    } else if constexpr (G32) {
                        const float4 *pg =
                            reinterpret_cast<const float4 *>(par) + 2 * nvec + tv + k * STRIDE;
                        const float4 lo = __ldg(pg), hi = __ldg(pg + nvec);
                        g[0] = lo.x, g[1] = lo.y, g[2] = lo.z, g[3] = lo.w;
                        g[4] = hi.x, g[5] = hi.y, g[6] = hi.z, g[7] = hi.w;
                    } else {
                        if constexpr (PP > 0)
                            kb_unpack<T>(k < PP ? ppg[k] : kb_ld128(gt + k * STRIDE * V), g);
                        else
                            kb_unpack<T>(kb_ld128(gt + k * STRIDE * V), g);
                    }
                } else {
                    ln_affine_global<T>(k * STRIDE, gt, b1t, b2t, g, bb);
                }
#pragma unroll
                for (int i = 0; i < R; i++) {
                    if (i > 0) {
                        if (R * row + i >= rows)
                            break;
                        kb_unpack<T>(slot(i * NVR + k), f);
                    }
#pragma unroll
                    for (int e = 0; e < V; e++)
                        f[e] = ln_gelu_out<T, TANH>(
                            fmaf(fmaf(f[e], rstd[i], nmr[i]), g[e], bb[e]));
                    kb_st128(yv[i] + k * STRIDE, kb_pack<T>(f));
                    if (i == 0 && k < PF && next < units && in(PF + k)) {
                        /* f came from this slot: its read is done before the copy */
                        asm volatile("" ::"f"(f[V - 1]) : "memory");
                        fetch(next, PF + k, st + glo * GROUP + (uint32_t)k * THREADS * 16);
                    }
                }
            }
        }
        if (mean_out != nullptr && tv == 0) {
#pragma unroll
            for (int i = 0; i < R; i++) {
                if (R == 1 || R * row + i < rows) {
                    mean_out[R * row + i] = md[i];
                    rstd_out[R * row + i] = rstd[i];
                }
            }
        }
        if (next < units)
            kb_cp_async_commit();
        const int g = gfree;
        gfree = ghi;
        ghi = glo;
        glo = g;
    }
    if constexpr (CL > 1)
        kb_cluster_wait(); /* every peer past its reads of this block's slots */
}

/* Launches layernorm_fused_srow2 in clusters of CL blocks of TH threads
 * (1024: one block an SM, 512: two; CL = 1: plain blocks), as many as the
 * GPU holds at once or rows.
 * cudaErrorNotSupported when it places none. */
template <typename T, int CL, bool EXACT, bool TANH, bool MMA, bool PAR, int TH, bool SQ = false,
          bool EARLY = false, int R = 1, bool TW = false, bool PC = false, bool P24 = false,
          bool G32 = false, int PP = 0>
static cudaError_t launch_srow2_k(const kb_args *a, cudaStream_t s, const char *name)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    constexpr size_t smem = (size_t)TH * (LN_SROW_NV + LN_SROW_PF + (PC ? 2 : 0)) * 16;
    const auto k =
        layernorm_fused_srow2<T, CL, EXACT, TANH, MMA, PAR, TH, SQ, EARLY, R, TW, PC, P24, G32,
                              PP>;
    float *par = PAR ? (float *)a->scratch : nullptr;
    int groups = 0;
    cudaError_t e = cudaSuccess;
    if constexpr (CL == 1) {
        e = kb_current_sms(&groups);
        groups *= LN_SROW_THREADS / TH;
        if (e == cudaSuccess)
            e = kb_allow_smem(k, smem);
    } else {
        static const int active = kb_cluster_capacity((const void *)k, TH, CL, smem);
        groups = active;
    }
    if (e != cudaSuccess)
        return e;
    if (groups == 0) /* before the parameters' kernel: the caller may take another path */
        return cudaErrorNotSupported;
    if constexpr (PAR) {
        const int nv = p.cols / kb_vec_width<T>();
        const kb_dim3 pg = {(unsigned)((nv + 255) / 256), 1, 1}, pb = {256, 1, 1};
        const cudaError_t pe =
            P24   ? kb_launch(a, s, layernorm_params24<T>, "layernorm_params24", pg, pb, 0, p.b1,
                              p.b2, (uint4 *)par, (uint2 *)((uint4 *)par + nv), nv)
            : G32 ? kb_launch(a, s, layernorm_params64<T>, "layernorm_params64", pg, pb, 0, p.g,
                              p.b1, p.b2, (float4 *)par, nv)
                  : kb_launch(a, s, layernorm_params32<T>, "layernorm_params32", pg, pb, 0, p.b1,
                              p.b2, (float4 *)par, nv);
        if (pe != cudaSuccess)
            return pe;
    }
    if ((p.rows + R - 1) / R < groups) /* a unit: R rows */
        groups = (int)((p.rows + R - 1) / R);
    const kb_dim3 grid = {(unsigned)(groups * CL), 1, 1}, block = {TH, 1, 1};
    if constexpr (CL == 1)
        return kb_launch(a, s, k, name, grid, block, smem, p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro,
                         (int)p.rows, p.cols, p.inv_cols, groups, (const float *)par);
    else
        return kb_launch_cluster(a, s, k, name, grid, block, smem, CL, p.x, p.g, p.b1, p.b2, p.y,
                                 p.mo, p.ro, (int)p.rows, p.cols, p.inv_cols, groups,
                                 (const float *)par);
}

/* srow2's first pass: the sum by the tensor cores unless
 * KBENCH_LAYERNORM_SROW2_MMA=0 (FADDs, the parameters raw), with the
 * squares too (SQ) unless KBENCH_LAYERNORM_SQ=0 where the block has 1024
 * threads and beta + b as floats; beta + b as floats from scratch
 * (layernorm_params32) unless KBENCH_LAYERNORM_SROW2_PAR=0 or the scratch
 * is missing. */
enum srow2_pass1 { SROW2_FADD, SROW2_MMA, SROW2_MMA_SQ };
struct srow2_form {
    srow2_pass1 pass1;
    bool par;
};
/* 16-bit long rows' squares by the tensor cores (mma_sum_sq: srow2 and the
 * pipelined grid's RR kernels) unless KBENCH_LAYERNORM_SQ=0. */
static bool ln_sq_on(void)
{
    static const int sq = kb_env_int("KBENCH_LAYERNORM_SQ", 1, 0, 1);
    return sq != 0;
}
template <int TH> static srow2_form srow2_form_of(const kb_args *a)
{
    static const int mma = kb_env_int("KBENCH_LAYERNORM_SROW2_MMA", 1, 0, 1);
    static const int par_on = kb_env_int("KBENCH_LAYERNORM_SROW2_PAR", 1, 0, 1);
    const bool par = par_on && a->scratch != nullptr &&
                     a->scratch_bytes >= (size_t)a->shape[LN_COLS] * sizeof(float);
    const bool sq = mma && par && ln_sq_on() && TH == LN_SROW_THREADS;
    return {sq ? SROW2_MMA_SQ : mma ? SROW2_MMA : SROW2_FADD, par};
}

/* layernorm_fused_srow2 one block a row with the squares by the tensor
 * cores, in the forms of its A/B switches (TW, PC, P24, G32, PP), with the early
 * copies or not: names[early][exact]. */
template <typename T, bool TANH, int TH, bool TW = false, bool PC = false, bool P24 = false,
          bool G32 = false, int PP = 0>
static cudaError_t launch_srow2_one(const kb_args *a, cudaStream_t s, bool exact, bool early,
                                    const char *const (&names)[2][2])
{
    constexpr bool Y = true, N = false;
    if (early)
        return exact ? launch_srow2_k<T, 1, Y, TANH, Y, Y, TH, Y, Y, 1, TW, PC, P24, G32, PP>(
                           a, s, names[1][1])
                     : launch_srow2_k<T, 1, N, TANH, Y, Y, TH, Y, Y, 1, TW, PC, P24, G32, PP>(
                           a, s, names[1][0]);
    return exact ? launch_srow2_k<T, 1, Y, TANH, Y, Y, TH, Y, N, 1, TW, PC, P24, G32, PP>(
                       a, s, names[0][1])
                 : launch_srow2_k<T, 1, N, TANH, Y, Y, TH, Y, N, 1, TW, PC, P24, G32, PP>(
                       a, s, names[0][0]);
}

/* launch_srow2_one's names[early][exact] for a form whose kernels end in _SFX */
#define SROW2_ONE_NAMES(SFX)                                                                       \
    {{"layernorm_fused_srow2_sq_" SFX, "layernorm_fused_srow2_sq_exact_" SFX},                     \
     {"layernorm_fused_srow2_sq_" SFX "_early", "layernorm_fused_srow2_sq_exact_" SFX "_early"}}

template <typename T, int CL, bool TANH, int TH>
static cudaError_t launch_srow2_cl(const kb_args *a, cudaStream_t s, const char *name,
                                   const char *exact_name, srow2_form f)
{
    const bool exact = a->shape[LN_COLS] == CL * srow_cols<T, TH>();
    if (f.pass1 == SROW2_FADD) /* the FADD form as it was measured: the parameters raw */
        return exact ? launch_srow2_k<T, CL, true, TANH, false, false, TH>(a, s, exact_name)
                     : launch_srow2_k<T, CL, false, TANH, false, false, TH>(a, s, name);
    if constexpr (TH == LN_SROW_THREADS) {
        if constexpr (CL == 1) {
            if (f.pass1 == SROW2_MMA_SQ) {
                /* pairs of rows over clusters of two (KBENCH_LAYERNORM_SROW2_PAIR=1;
                 * cudaErrorNotSupported: the GPU places no such cluster) */
                static const int pair = kb_env_int("KBENCH_LAYERNORM_SROW2_PAIR", 0, 0, 1);
                if (pair && a->shape[LN_ROWS] > 1) {
                    const cudaError_t pe =
                        exact ? launch_srow2_k<T, 2, true, TANH, true, true, TH, true, false, 2>(
                                    a, s, "layernorm_fused_srow2_c2_sq_exact_pair")
                              : launch_srow2_k<T, 2, false, TANH, true, true, TH, true, false, 2>(
                                    a, s, "layernorm_fused_srow2_c2_sq_pair");
                    if (pe != cudaErrorNotSupported)
                        return pe;
                }
                /* One block a row, each with the early copies too where
                 * KBENCH_LAYERNORM_SROW2_EARLY=1: bf16's output pass widened
                 * by the tensor cores (KBENCH_LAYERNORM_SROW2_TW=1 every row,
                 * =2 rows of whole blocks only), beta + b of each thread's
                 * first vector kept in shared memory
                 * (KBENCH_LAYERNORM_SROW2_PC=1), beta + b in 24 bits a column
                 * (KBENCH_LAYERNORM_SROW2_P24=1), gamma as floats too
                 * (KBENCH_LAYERNORM_SROW2_G32=1), the parameters' first one or
                 * two vectors loaded before pass 1's barrier
                 * (KBENCH_LAYERNORM_SROW2_PP=1 or 2), or the early copies alone */
                static const int tw = kb_env_int("KBENCH_LAYERNORM_SROW2_TW", 0, 0, 2);
                static const int pc = kb_env_int("KBENCH_LAYERNORM_SROW2_PC", 0, 0, 1);
                static const int p24 = kb_env_int("KBENCH_LAYERNORM_SROW2_P24", 0, 0, 1);
                static const int g32 = kb_env_int("KBENCH_LAYERNORM_SROW2_G32", 0, 0, 1);
                static const int pp = kb_env_int("KBENCH_LAYERNORM_SROW2_PP", 0, 0, 2);
                static const int early = kb_env_int("KBENCH_LAYERNORM_SROW2_EARLY", 0, 0, 1);
                static const char *const tw_n[2][2] = SROW2_ONE_NAMES("tw");
                static const char *const pc_n[2][2] = SROW2_ONE_NAMES("pc");
                static const char *const p24_n[2][2] = SROW2_ONE_NAMES("p24");
                static const char *const g32_n[2][2] = SROW2_ONE_NAMES("g32");
                static const char *const pp1_n[2][2] = SROW2_ONE_NAMES("pp1");
                static const char *const pp2_n[2][2] = SROW2_ONE_NAMES("pp2");
                static const char *const early_n[2][2] = {
                    {"layernorm_fused_srow2_sq", "layernorm_fused_srow2_sq_exact"},
                    {"layernorm_fused_srow2_sq_early", "layernorm_fused_srow2_sq_exact_early"}};
                if constexpr (std::is_same<T, __nv_bfloat16>::value)
                    if (tw == 1 || (tw == 2 && exact))
                        return launch_srow2_one<T, TANH, TH, true>(a, s, exact, early, tw_n);
                if (pc)
                    return launch_srow2_one<T, TANH, TH, false, true>(a, s, exact, early, pc_n);
                if (p24)
                    return launch_srow2_one<T, TANH, TH, false, false, true>(a, s, exact, early,
                                                                             p24_n);
                if (g32 && a->scratch_bytes >= (size_t)a->shape[LN_COLS] * 2 * sizeof(float))
                    return launch_srow2_one<T, TANH, TH, false, false, false, true>(a, s, exact,
                                                                                    early, g32_n);
                if (pp == 1)
                    return launch_srow2_one<T, TANH, TH, false, false, false, false, 1>(
                        a, s, exact, early, pp1_n);
                if (pp == 2)
                    return launch_srow2_one<T, TANH, TH, false, false, false, false, 2>(
                        a, s, exact, early, pp2_n);
                if (early)
                    return launch_srow2_one<T, TANH, TH>(a, s, exact, true, early_n);
            }
        }
        if (f.pass1 == SROW2_MMA_SQ)
            return exact ? launch_srow2_k<T, CL, true, TANH, true, true, TH, true>(a, s, exact_name)
                         : launch_srow2_k<T, CL, false, TANH, true, true, TH, true>(a, s, name);
    }
    if (f.par)
        return exact ? launch_srow2_k<T, CL, true, TANH, true, true, TH>(a, s, exact_name)
                     : launch_srow2_k<T, CL, false, TANH, true, true, TH>(a, s, name);
    return exact ? launch_srow2_k<T, CL, true, TANH, true, false, TH>(a, s, exact_name)
                 : launch_srow2_k<T, CL, false, TANH, true, false, TH>(a, s, name);
}

/* layernorm_fused_srow2 for an aligned row of at most 16 blocks' slots: the
 * fewest blocks that hold it (a power of two). cudaErrorNotSupported where
 * the row does not fit or the GPU places no such cluster. */
template <typename T, bool TANH, int TH>
static cudaError_t launch_srow2_t(const kb_args *a, cudaStream_t s)
{
    /* [1024 or 512 threads, 1024 with the squares by the tensor cores (SQ)]
     * [clusters of 1, 2, 4, 8, 16][not exact, exact] */
    static const char *const names[3][5][2] = {
        {{"layernorm_fused_srow2", "layernorm_fused_srow2_exact"},
         {"layernorm_fused_srow2_c2", "layernorm_fused_srow2_c2_exact"},
         {"layernorm_fused_srow2_c4", "layernorm_fused_srow2_c4_exact"},
         {"layernorm_fused_srow2_c8", "layernorm_fused_srow2_c8_exact"},
         {"layernorm_fused_srow2_c16", "layernorm_fused_srow2_c16_exact"}},
        {{"layernorm_fused_srow2_t512", "layernorm_fused_srow2_t512_exact"},
         {"layernorm_fused_srow2_c2_t512", "layernorm_fused_srow2_c2_t512_exact"},
         {"layernorm_fused_srow2_c4_t512", "layernorm_fused_srow2_c4_t512_exact"},
         {"layernorm_fused_srow2_c8_t512", "layernorm_fused_srow2_c8_t512_exact"},
         {"layernorm_fused_srow2_c16_t512", "layernorm_fused_srow2_c16_t512_exact"}},
        {{"layernorm_fused_srow2_sq", "layernorm_fused_srow2_sq_exact"},
         {"layernorm_fused_srow2_c2_sq", "layernorm_fused_srow2_c2_sq_exact"},
         {"layernorm_fused_srow2_c4_sq", "layernorm_fused_srow2_c4_sq_exact"},
         {"layernorm_fused_srow2_c8_sq", "layernorm_fused_srow2_c8_sq_exact"},
         {"layernorm_fused_srow2_c16_sq", "layernorm_fused_srow2_c16_sq_exact"}}};
    const srow2_form f = srow2_form_of<TH>(a);
    const char *const(&n)[5][2] = names[f.pass1 == SROW2_MMA_SQ ? 2 : TH == LN_SROW_THREADS ? 0 : 1];
    const int64_t cols = a->shape[LN_COLS], per = srow_cols<T, TH>();
    if (cols <= per)
        return launch_srow2_cl<T, 1, TANH, TH>(a, s, n[0][0], n[0][1], f);
    if (cols <= 2 * per)
        return launch_srow2_cl<T, 2, TANH, TH>(a, s, n[1][0], n[1][1], f);
    if (cols <= 4 * per)
        return launch_srow2_cl<T, 4, TANH, TH>(a, s, n[2][0], n[2][1], f);
    if (cols <= 8 * per)
        return launch_srow2_cl<T, 8, TANH, TH>(a, s, n[3][0], n[3][1], f);
    if (cols <= KB_CLUSTER_MAX * per)
        return launch_srow2_cl<T, KB_CLUSTER_MAX, TANH, TH>(a, s, n[4][0], n[4][1], f);
    return cudaErrorNotSupported;
}

/* layernorm_fused_srow2 in blocks of 1024 threads, one an SM, or with
 * KBENCH_LAYERNORM_SROW2_T=512 of 512, two an SM (clusters twice as large). */
template <typename T, bool TANH> static cudaError_t launch_srow2(const kb_args *a, cudaStream_t s)
{
    static const int th = kb_env_int("KBENCH_LAYERNORM_SROW2_T", LN_SROW_THREADS, 512,
                                     LN_SROW_THREADS);
    return th == 512 ? launch_srow2_t<T, TANH, 512>(a, s)
                     : launch_srow2_t<T, TANH, LN_SROW_THREADS>(a, s);
}

/* ---- the pipelined grid kernel (rows of 32769-1048576 elements; a switch) ---------- *
 *
 * The persistent grid kernel tried above (commit a96c13a) lost because each
 * block waited, every row, for the slowest of its row's S blocks: a
 * GPU-wide barrier a row, one block an SM, nothing else to do meanwhile.
 * Here the wait is moved L rows later (src/kernels/grid_pipe.cuh: each row's
 * states published at once, waited for L rows later, a ring of row slices in
 * shared memory filled by cp.async). Blocks of 512 threads, one an SM, each
 * own a slice of 8192 columns (S = cols / 8192 a row, up to 128, so fp32
 * rows of 1048576 take 128 of the 132 SMs), keep the slice's gamma and beta
 * + b as floats in shared memory (64 KB, read once) and a ring of D = 4
 * (fp32) or 8 (16-bit) row slices of x (128 KB; L = D / 2). The statistics
 * are each slice's exact (n, mean, M2) of d = x - x[row][0], merged by warp
 * 0 in one fixed order into the row's mean and rstd. A block so waits only
 * when some block of its row is more than L rows behind.
 * Prediction (before any run, % of the copy bandwidth): fp32 128 x 1048576
 * 59 -> 75-85 (128 SMs streaming with the parameters staged, no DRAM
 * re-read, no L2 parameter traffic), 512 x 262144 75 -> 80-85, 2048 x 65536
 * 83 -> 83-86; 16-bit rows issue-bound as before (bf16 1024 x 262144 50 ->
 * 55-65).
 * Measured (H200, 2026-12-02, kbench compare in one process each, pipe /
 * default): the first form (thread 0 publishing, waiting and merging
 * between two block barriers every row, each block loading the row's shift
 * x[row][0] from global memory) fp32 128 x 1048576 736 / 437 us, 2048 x
 * 65536 608 / 300, 512 x 262144 612 / 334, bf16 1024 x 262144 977 / 498:
 * 26-35% of the copy bandwidth, barrier 45% of the stall samples, DRAM
 * excess 1.00 (against the default's 1.49-1.51 at 262144 and 1048576
 * columns). With the exchange in a warp of its own and the shift copied
 * with the row (grid_pipe.cuh, 09:50 UTC): fp32 128 x 1048576 482 / 432
 * (0.90x), 256 x 1048576 970 / 878, 2048 x 65536 516 / 302, 512 x 262144
 * 503 / 338; bf16 128 x 1048576 366 / 232, 1024 x 262144 768 / 498; stall
 * samples long_sb 34%, short_sb 18%: the streaming threads wait for their
 * own cp.async copies of x (two rows, 64 KB, in flight an SM; 53% of the
 * copy bandwidth at 128 x 1048576). With the ring filled by the copy engine
 * (10:16 UTC, one process each): fp32 128 x 1048576 507 / 430, 512 x 262144
 * 486 / 335, bf16 1024 x 262144 768 / 498; the copies were not what held
 * it: one exchange warp took ~4 us a row (grid_pipe.cuh's header) whatever
 * the row's length, the pace of every cell. With four exchange warps whose
 * adds are not waited for (predicted: fp32 128 x 1048576 50 -> 75-90%, 512
 * x 262144 52 -> 75-85%; measured 10:50 UTC, pipe / default, us, % of the
 * copy bandwidth): fp32 128 x 1048576 362 / 430 (70% / 59%), 256 x 1048576
 * 712 / 873 (71% / 58%), 512 x 262144 331 / 335, 1024 x 262144 655 / 658
 * (77% / 76% both), 2048 x 65536 324 / 308, 4096 x 65536 642 / 600 (78% /
 * 82-84%); bf16 128 x 1048576 280 / 236, 256 x 1048576 545 / 468, 1024 x
 * 262144 539 / 503, 4096 x 65536 544 / 365. The exchange no longer sets the
 * pace: the fp32 rows of 1048576 gain 0.84x, short of the prediction; the
 * 16-bit rows run at ~1.98 TB/s (46%) at every length, their stall samples
 * (bf16 256 x 1048576) not_selected 21%, long_sb 14% at 31% occupancy:
 * issue-bound streaming threads, 512 an SM, each unpacking, reducing and
 * writing its elements twice from the ring. It wins for fp32 rows past
 * 262144 columns only, so it is the default there (12:15 UTC, kbench
 * compare in one process each, default / KBENCH_LAYERNORM_GRID_PIPE=0, us):
 * fp32 128 x 1048576 376 / 430 (0.875x), 256 x 1048576 745 / 877 (0.85x),
 * 256 x 524288 369 / 466 (0.79x), 64 x 1048576 192 / 245 (0.79x); but 200 x
 * 600000 550 / 433 (1.27x): S = 74 blocks a row, one group, 58 of the 132
 * SMs idle. So the default takes a shape only where its groups fill at least
 * 7/8 of the blocks the GPU holds (launch_gpipe's `filled`); bf16 rows stay
 * on their paths (0.997-1.002x at the same shapes). KBENCH_LAYERNORM_GRID_PIPE=0
 * turns it off, =2 takes every aligned row of 32769-1048576 columns here,
 * 16-bit too.
 * Tried and not kept (code in commit 216ad59): the slices' statistics by
 * plain sums (the slice's mean from the sum of d, then M2 about it, two
 * barriers and no reciprocal), as the persistent clusters' above, where
 * they took 5-8% (predicted: the same here if the streaming threads are
 * issue-bound). Measured (H200, 2026-12-04 12:06-12:11 UTC, three
 * interleaved rounds, no counters, 1980 MHz, % of the copy bandwidth,
 * Welford / plain): fp32 128 x 1048576 67.3, 67.0, 67.2 / 67.5, 67.1,
 * 67.9 (1.005x); 256 x 524288 67.8, 67.5, 68.0 / 67.6, 70.0, 68.3
 * (1.013x). Level: the fp32 streaming threads here are not issue-bound;
 * the exchange's pace is what holds these rows.
 * The parameters in registers (PREG: 32 floats a streaming thread, 84
 * registers, 640 threads) free the shared memory for a ring of 7 fp32
 * slices (224 KB; 14 16-bit) instead of 4, so both the slack L and the rows
 * copied ahead P = 7 - L grow. Prediction (before the run): if the exchange's
 * latency sets the pace, L moves the rows of 1048576 (S = 128) most, 67 ->
 * 75-80%, and those of 262144 (S = 32) less, 75-81 -> 83-85%. Measured (H200,
 * 2026-12-04, two interleaved rounds each, no counters, % of the copy
 * bandwidth; 18:07-18:11 UTC with the clock capped, the default's pf4 at 70%
 * against its report's 84%; 18:15-18:21 UTC at 1980 MHz): fp32 128 x 1048576
 * staged, L = 2: 67.8, 67.1 | 67.5, 67.3; PREG L = 3 (P = 4): 71.6, 71.3; L =
 * 4 (P = 3): 83.0, 81.8 | 82.4, 82.3 (1.22x); L = 5 (P = 2): 74.2, 74.0; L =
 * 6 (P = 1): 54.1, 54.3. 256 x 524288: 67.0, 67.3 -> L = 3 70.6, 71.9, L = 4
 * 82.7, 81.8. Against the persistent clusters (the default below 262145
 * columns until now): 512 x 262144 pf16 77.5, 77.4 -> L = 4 81.4, 81.5
 * (1.052x; L = 3 1.02x, L = 5 0.98x, L = 6 0.69x); 2048 x 65536 pf4 81.4,
 * 80.0 -> 81.1, 81.4 (1.007x, level). So L + P = 7 is shared between the
 * two: one slice (32 KB) in flight an SM starves the row (54%), two rows of
 * slack leave it waiting on the exchange (67%), and L = 4 is the default;
 * fp32 rows of 65537-1048576 columns take it (KBENCH_LAYERNORM_GPIPE_RING=0
 * keeps the staged form). 16-bit rows stay with layernorm_fused_srow2 (the
 * same call, GRID_PIPE=2, srow2 / this): bf16 1024 x 262144 56.4, 54.1 /
 * 48.1, 48.1; 256 x 1048576 51.7, 52.2 / 48.0, 48.0; 4096 x 65536 70.2, 65.4
 * / 48.1, 48.1: issue-bound there, as before (with the 16-bit GELU of degree
 * 3, 2026-12-04 20:06 UTC, two rounds: 503 us at all three, 50.1% of the copy
 * bandwidth at 1978 MHz, a fixed rate whatever the row's length, against
 * srow2's 57.6, 64.4 / 53.0, 53.0 / 81.8, 72.2). What is left at 1048576 (82%)
 * is the ring: 227 KB of shared memory hold 7 slices, and neither side of L
 * + P = 7 can grow without the other shrinking. Beside it (18:24-18:26 UTC,
 * two rounds, this / KBENCH_LAYERNORM_GRID_PIPE=0): fp32 1024 x 131072 82.2,
 * 83.0 / 81.4, 81.8; 1500 x 100008 79.6, 78.9 / 70.2, 72.1. In the report of
 * 18:34-18:42 UTC (kbench a7535be): fp32 512 x 262144 86.8% (81.0% on the
 * persistent clusters in b66bd2c's), 128 x 1048576 81.9% (67.7%).
 * 16-bit rows, wide slices. The 16-bit rate above is a fixed cost a slice:
 * 503 us for 512 MB is ~2 us a slice an SM, as fp32's 2.4 us a slice at 82%,
 * but a 16-bit slice of 8192 columns moves half the bytes. With 32 elements a
 * thread (slices of 16384 columns, 32 KB, the ring again 7 slices with L =
 * 4; gamma held packed and beta + b as floats, 96 registers, no spills)
 * predicted (before the run): 16-bit as fp32, ~75-82% at every length.
 * Measured (H200, 2026-12-04 21:03 UTC, two interleaved rounds, no check,
 * bf16, % of the copy bandwidth, srow2 / 8192 / 16384 columns a slice):
 * 4096 x 65536 73.9, 75.0 / 48.4, 48.5 / 61.4, 61.4; 1024 x 262144 64.3,
 * 59.7 / 48.4 / 60.0, 59.9; 256 x 1048576 53.7, 53.8 / 48.3 / 60.1, 60.0:
 * 1.24x over the narrow slices, still a fixed rate (420 us), ~1300
 * instructions a slice a thread in the SASS (40 an element). Then the
 * folded form of srow2 for 16-bit (no shift, the first pass's sum by the
 * tensor cores, each warp's slice about its own mean, two fmas to normalise:
 * ~1060 instructions; predicted 1.2-1.3x if issue-bound): 430 us (21:13 UTC,
 * 0.98x): not issue-bound after all. The counters (bf16 256 x 1048576, 21:14
 * UTC): issue 56% of peak, DRAM 51%, occupancy 31%; stalls wait 22.5%,
 * long_scoreboard 17.6%, short_scoreboard 16.0%, barrier 12.7%: every warp
 * held at the slice's barrier by the slowest, 16 streaming warps an SM and
 * little to overlap. So the barrier went (WP, kb_gpipe_run's warp partials):
 * each warp hands its (n, mean, M2) to the row's exchange warp, which merges
 * the block's 16 before publishing; the streaming warps never wait for each
 * other. Measured (21:19-21:22 UTC, two rounds, no check, % of the copy
 * bandwidth, srow2 / barrier / warp partials): bf16 4096 x 65536 70.2, 69.6
 * / 59.5, 59.7 / 66.2, 65.5; 1024 x 262144 64.1, 57.4 / 58.1, 58.2 / 64.6,
 * 65.1 (srow2's second round at 1578 MHz against 1980); 256 x 1048576 51.9,
 * 51.9 / 58.5, 58.4 / 63.0, 63.7 (1.22x over srow2, 1.09x over the
 * barrier); fp32 (the narrow slices, barrier / warp partials, the clock
 * capped at 1500-1800 MHz in both): 128 x 1048576 76.1, 73.5 / 80.4, 80.5
 * (1.075x); 512 x 262144 69.0, 73.0 / 80.6, 78.7 (1.12x). So 16-bit rows of
 * 131073-1048576 columns take the grid by default (srow2 keeps those of
 * 65536, 0.94x here), and every form hands warp partials
 * (KBENCH_LAYERNORM_GPIPE_WP=0 keeps the barrier). In the report of 21:33-21:41
 * UTC (kbench c24b2d1, another H200 than the last report's): bf16 256 x
 * 1048576 63.1% (53.6% on srow2's clusters of 16 in 46a25bf's), 1024 x 262144
 * 64.2% (66.2% on clusters of 4 there); fp32 128 x 1048576 79.3% against
 * 82.4% with the barrier in 46a25bf's, both at 1980 MHz: 0.968x across the two
 * GPUs, where the same-session A/B above, at a capped clock, had warp
 * partials 1.075x ahead; the unchanged kernels' medians 1.6% shorter to 1.2%
 * longer between the reports. Still to A/B at the full clock. The counters then
 * (21:41 UTC): bf16 256 x 1048576 issue 61%, DRAM 53%, occupancy 31%, stalls
 * long_scoreboard 23.7%, wait 23.6%, short_scoreboard 17.6% (1024 x 262144
 * within a point); fp32 128 x 1048576 issue 51%, DRAM 68%, long_scoreboard
 * 37.6%, not_selected 15.6%, wait 10.3%, membar 9.0%. What is left for 16-bit:
 * 16 streaming warps an SM (96 registers) with dependent chains (wait) and
 * long_scoreboard stalls not yet placed in the source (kbench's stall
 * samples carry no PC); more warps need the parameters out of the registers.
 * The SASS of the wide slices (96 registers, 48 of them the parameters)
 * computes a vector's eight GELUs one after the other, each a chain of nine
 * dependent instructions, where the same code with the parameters elsewhere
 * interleaves the eight (its eight MUFU.EX2 within ~40 instructions, against
 * one every ~11): the wait stalls. PS (16-bit only, the folded form and
 * warp partials; code in commit f20845a, KBENCH_LAYERNORM_GPIPE_PS=1|2
 * there): slices of 8192 columns, gamma raw and beta + b as floats in
 * shared memory after the ring (each thread's own slots, 48 KB), a ring of 10 slices of 16 KB (L = 6, P = 4: 64 KB in flight
 * an SM), 512 streaming threads of 16 elements (=1, 59-64 registers) or 256
 * of 32 (=2, 72-76 registers: a slice's fixed cost, ~200 instructions a
 * thread, over twice the elements). Prediction (before any measurement):
 * bf16 1024 x 262144 and 256 x 1048576 from 63-64% to 70-80% with either,
 * the 256-thread form ahead if the fixed cost is what is left; the rows of
 * 1048576 then take 128 blocks a row in one group instead of 64 in two.
 * Measured (H200, 2026-12-05 01:44 UTC, two interleaved rounds, no check, %
 * of the copy bandwidth, wide slices / PS=1 / PS=2): bf16 1024 x 262144
 * 63.3, 63.7 / 59.5, 59.5 / 54.1, 53.9; 256 x 1048576 62.4, 62.5 / 59.3,
 * 59.3 / 53.9, 54.1 (0.94x and 0.86x): the interleaved GELUs did not pay
 * for the shared-memory reads of the parameters and the narrower slices.
 * Not kept.
 * The grid's groups of S blocks leave SMs idle where S does not divide the
 * GPU's 132: fp32 rows of 1048576 columns and 16-bit ones of 2097152 take
 * one group of 128, 16-bit 1048576 two of 64, 262144 four of 32 (fp32) or
 * eight of 16 (16-bit): 128 of 132 SMs, 3% of the bandwidth left unused in
 * every cell this grid takes. The kernels' PART form (code in commit
 * f20845a, KBENCH_GPIPE_FILL=1 there) gave each block a contiguous part of
 * the row instead of chunks S THREADS apart, so that S need not divide it,
 * and took the S from the fewest blocks that hold a row up to twice that
 * whose groups fill the most of the GPU: 132 for fp32 1048576, 33 for
 * 262144, 66 for 16-bit 1048576. Prediction (before any measurement):
 * 1.03x at those cells (fp32 1048576 79.3 -> ~82%, 262144 85.6 -> ~88%),
 * unless the exchange of 132 partials a row instead of 128 costs it back.
 * The 16-bit wide slices' PART form spills 16-28 bytes (its ranges take two
 * registers more at 96); fp32's does not. Measured (same calls, two rounds,
 * % of the copy bandwidth, groups of the fewest blocks / filled): fp32 128 x
 * 1048576 80.8, 80.6 / 75.5, 75.8 (0.94x); 512 x 262144 73.4, 72.5 / 74.8,
 * 74.6 (1.02x); bf16 1024 x 262144 0.73x, 256 x 1048576 0.81x; with
 * KBENCH_LAYERNORM_GRID_PIPE=2 at 65536 columns fp32 0.98x and bf16 0.95x
 * against the default paths. The 4 idle SMs cost less than a part a block
 * and 132 partials a row. Not kept; KBENCH_LAYERNORM_GPIPE_WP=0 lost again
 * too (0.91x at both fp32 cells).
 * The lag apart from the ring (out's rows read a second time from the L2,
 * so that the lag takes no slots; src/kernels/grid_pipe.cuh, "the L2's
 * lag"): 0.71-0.82x at fp32 128 x 1048576 and 512 x 262144, 0.73-0.75x in
 * bf16, DRAM bytes 1.45-1.50 times the model's at every lag from 2 to 6,
 * the first read by the copy engine or by the threads' cp.async: the
 * second read found nothing in the L2, at least 40 MB of the grid's reads
 * and writes after the first (its header's arithmetic). Not kept (code in
 * commits cfdd9f7 and 862dfaf).
 * Rows of whole slices without the code for a row's edges (EXACT,
 * KBENCH_LAYERNORM_GPIPE_EXACT=1; off until measured): where cols is S
 * slices exactly (every sweep row this grid takes), in(k) is true for every
 * vector, so the per-vector guards, their branches (BSSY/BSYNC) and
 * predicates go, and the compiler may interleave one vector's output with
 * the next's. SASS (sm_90, the streaming threads' loop a row, erf): bf16
 * wide slices 916 -> 816 instructions a slice (32 elements a thread; BSSY
 * 12 -> 7, PLOP3 16 -> 12, BRA 26 -> 19), 96 registers both, the exact
 * form spilling 8 bytes (a register pair around the first pass's MMAs: one
 * STL and one LDL a slice, from L1); fp32 (slices of 8192) 776 -> 693, 84
 * -> 96 registers, no spills (640 threads an SM either way). Prediction
 * (before any run, % of the copy bandwidth): bf16 1024 x 262144 and 256 x
 * 1048576 64-66 -> 68-72 if the streaming threads' instructions and their
 * dependent chains are what is left (issue 61%, wait 23.6% of the stalls in
 * the counters above); fp32 128 x 1048576 78-82 -> level or +1-2, its pace
 * the exchange's. row_lengths.sh has its check group (gp-exact) and A/B.
 * Measured on an H100 (80GB HBM3; no H200 was lent; 2026-12-05 09:18 UTC,
 * two interleaved rounds, no check, % of that GPU's copy bandwidth, default
 * / exact): bf16 1024 x 262144 84.4, 84.4 / 84.6, 84.5 (1.002x); 256 x
 * 1048576 84.0, 84.3 / 83.1, 82.0 (0.981x); fp32 128 x 1048576 84.1, 83.9 /
 * 82.9, 82.6 (0.985x); 512 x 262144 90.5, 90.8 / 89.8, 89.5 (0.990x). Level
 * to slower: the instructions were not what held these rows (the checks,
 * group gp-exact and the sanitizers, clean). Where they wait instead, from
 * bench/pc_stalls on the same GPU (three launches each, every warp's
 * samples, the four exchange warps' among them, source lines by
 * bench/pc_stalls.py): fp32 128 x 1048576, 26.3% of the samples at the
 * streaming warps' wait for a row's merged statistics (kb_gpipe_run's
 * `done` mbarrier, long_scoreboard), 11.2% at the exchange warps' release
 * adds (kb_red_release: the fence before the add, membar), 10.3% at the
 * wait for a row's bytes (`full`), 3.8% at the exchange's acquire polls;
 * bf16 256 x 1048576 13.2% at `done`, 7.2% membar, 4.8% polls, 4.2% `full`,
 * and the GELU's chain (its MUFU.EX2's result, short_scoreboard, 9.5%; its
 * clamp and polynomial, 13.5%, wait the most of it). So the exchange's
 * round trips to the L2 (release add, poll, the S partials' reads, another
 * release) outlast the L = 4 rows of slack at 1048576 columns, in fp32
 * above all. With GRID_PIPE=2 the exact
 * form also took fp32 2048 x 65536 from the persistent clusters of 4's
 * 90.3, 89.6 to 92.2, 92.1 (1.024x), and bf16 4096 x 65536 from srow2's
 * 90.0, 89.8 to 84.4, 84.2 (0.94x). Apart (09:36 UTC, another H100 of
 * the same kind, two rounds, default / exact / GRID_PIPE=2 / both): fp32
 * 2048 x 65536 89.9, 89.8 / 89.4, 89.4 / 92.7, 92.8 / 92.0, 92.6 (the grid
 * 1.032x with edges, 1.027x without: the grid's gain, not the exact
 * form's; on the H200 in 2026-12-04's A/B it was level, 1.007x); fp32 128 x
 * 1048576 0.987x exact; bf16 256 x 1048576 0.986x, 1024 x 262144 1.004x.
 * Not the default. On the H200 (2026-12-05 21:51-21:53 UTC, kbench with
 * SQ, two interleaved rounds, % of the copy bandwidth): fp32's exact form
 * 0.943x at 128 x 1048576 (77.8, 77.9 / 73.5, 73.3) and 0.969x at 512 x
 * 262144 (85.1, 84.9 / 82.4, 82.4), so fp32 keeps its edge code; and fp32
 * 2048 x 65536 default (persistent clusters of 4) / GRID_PIPE=2 / both
 * 82.8, 78.2 / 86.7, 86.1 / 85.7, 85.4: the grid 1.073x there (level,
 * 1.007x, on 2026-12-04's H200; 1.032x on the H100). The next default to
 * move (fp32 rows from 65536 columns to the grid), with a refresh of the
 * report beside it: in the report of 21:55-22:03 UTC this cell is the
 * default's 83.2%. With the move built (launch_fused's fp32 bound from cols
 * > 65536 to cols >= 65536: rows of 65536 columns on the grid where its
 * groups fill 7/8 of the GPU), on an H100 (80GB HBM3; no H200 was lent;
 * 2026-12-06 00:34 UTC, three interleaved rounds, % of its copy
 * bandwidth, moved / KBENCH_LAYERNORM_GRID_PIPE=0): fp32 2048 x
 * 65536 92.9, 93.6, 92.5 / 89.5, 90.0, 90.6 (1.033x); 4096 x 65536 93.4,
 * 93.1, 93.0 / 89.1, 89.0, 90.7 (1.040x); 2048 x 65536, 37 x 65540, 1000 x
 * 98304 and 31 x 65536 with GELU's tanh form and the statistics checked on
 * the grid's kernel. Moved in ba501b4: 87.7% in the report of 2026-12-06
 * 09:21-09:28 UTC (H200).
 * The squares by the tensor cores on the same H100 (four interleaved rounds,
 * default / SQ=0): bf16 1024 x 262144 86.0, 86.1, 85.8, 86.0 / 85.7, 85.2,
 * 85.2, 85.4 (1.007x); 256 x 1048576 82.6, 82.2, 82.7, 82.9 / 82.6, 83.1,
 * 82.8, 83.1 (0.996x): level there, as before; the H200's 0.977x at 1048576
 * is still to be settled on an H200.
 * Tried and not kept: the exchange in one trip (KBENCH_LAYERNORM_GPIPE_LL,
 * commit 947080f, taken out after its measurement). After the slack, what
 * the streaming warps wait for looked like the exchange warp's chain for a
 * row: a 16-byte store of the partial, a release add whose fence waits for
 * that store to reach the L2 (the membar samples above), acquire polls of
 * the arrival count, then the S partials' reads, a second round trip.
 * There lane 0 posted the block's (mean, M2) as one 64-bit word by a
 * relaxed store, no fence, and the warp polled the row's S words
 * themselves (relaxed loads), merging them in the counters' order with
 * each block's count worked out from its rank (the same bits); the words
 * went back to 0 in the next launch but one (two banks by launch parity).
 * SASS: fp32 86 registers, no spills; the 16-bit wide kernel 96 and 8 bytes
 * of stack. Prediction: the wait for `done` about halves, fp32 128 x
 * 1048576 84 -> 86-88% on the H100, the 16-bit long rows +1-3%; level if
 * the partials' arrival, not the round trips after it, sets the wait.
 * Checked on an H100 (80GB HBM3, 2026-12-05 12:11 UTC: gp's shapes and
 * 1024 x 65536 in fp32, fp16 and bf16, and compute-sanitizer, all clean).
 * Measured on the same H100 (12:13 UTC, three interleaved rounds, % of its
 * copy bandwidth, default / one trip): fp32 128 x 1048576 83.3, 83.8, 83.8
 * / 82.9, 83.3, 83.6 (0.996x); 256 x 1048576 83.4, 83.8, 83.6 / 82.9,
 * 83.4, 83.6 (0.997x); bf16 1024 x 262144 84.2, 84.4, 84.4 / 76.9, 77.4,
 * 76.7 (0.913x); 512 x 262144 82.9, 83.3, 82.9 / 75.1, 75.1, 75.0
 * (0.904x). Why, from bench/pc_stalls on that GPU (12:17 UTC, three
 * launches): the fence went (bf16 1024 x 262144's membar samples 8.0% ->
 * none) but the wait for `done` hardly moved (bf16 10.9% -> 8.0%, fp32 128
 * x 1048576 25.6% -> 22.4%) and the polls took the fence's place (bf16
 * 7.0% at the word loads' test, 4.2% at the exchange's wait for its warps'
 * partials; fp32 4.0%). So a row waits for its slowest block's partial
 * (the blocks' skew over the grid), not for the round trips after it, as
 * softmax's pairs in one trip found (its header; code in commit f29b13f). In
 * 16-bit the 8 bytes of stack were two spill refills in the streaming
 * threads' row loop, each waited on (LDL then its use, long_scoreboard:
 * 5.5% and 4.8% of the samples): most of the 9% lost. bench/gpipe_trace
 * (stamps at nine edges a block and row) tells the wait's part before a
 * row's last publish from the part after it, and whether the same SMs are
 * late row after row. On an H100 (80GB HBM3, 2026-12-05 14:35 UTC, default
 * kernels, means over rows; fp32 128 x 1048576 / 512 x 262144 / bf16 1024 x
 * 262144 / 256 x 1048576): a row's blocks publish within 7.2 / 5.2 / 1.6 /
 * 2.8 us of each other; the merged statistics are handed over 2.3 / 2.3 /
 * 1.9 / 2.4 us after the last publish, 1.5 / 1.5 / 1.2 / 1.7 us of it the
 * exchange warp's reads and merge of the S partials after it has seen them
 * all; the streaming threads, L rows behind, wait for the merged statistics
 * 12.0 / 10.7 / 5.0 / 5.0% of thread 0's time (and 11.3 / 10.8 / 7.9 / 8.5%
 * for a row's bytes), 94-97% of that wait after the row's last publish. So
 * the account above is to be corrected: what the streaming threads meet is
 * the end of the exchange's own latency, the last publish's arrival and the
 * merge after it, not the blocks' spread; the one trip cut the round trips
 * but its polls of S words took as long. A block late on a row stays late
 * on the next (r = 0.70-0.90), with no SM last on more than 3% of the rows.
 * In bf16 a block's own work is most of a row: statistics 0.74 us and output
 * 1.73 us of 3.86 us a row at 1024 x 262144.
 * Registers moved to the streaming threads (RR, KBENCH_LAYERNORM_GPIPE_REGS=1,
 * the default since the H200's A/B below, =0 keeps them; 16-bit wide slices
 * only). A block of 640 threads, one
 * an SM, gets 96 registers a thread, and the wide slices' streaming threads
 * hold 48 of them as parameters: ptxas then computes a vector's eight GELUs
 * one after the other, a chain of nine dependent instructions each (the
 * `wait` stalls, 23.6% in the counters above, and 9.5% + 13.5% of the H100's
 * stall samples at the GELU). Here the exchange warpgroup gives its registers
 * down to KB_GPIPE_XREG (setmaxnreg, sm_90a; kb_gpipe_regs) and the streaming
 * threads take the rest, and load their parameters after that (kb_gpipe_run's
 * init), so none is spilled at entry. The default kernels' SASS is unchanged
 * (the file is now built for sm_90a with compute_90 PTX beside it; every
 * other function's SASS is the same as the sm_90 build's). Prediction
 * (before any run): level on an H100, where these rows reach 84% of the copy
 * bandwidth; on the H200, if the GELU's chains hold the 16-bit rows there,
 * bf16 1024 x 262144 and 256 x 1048576 from 64-66% to 70-77%.
 * First form, 32 registers for the exchange warps and 112 for the streaming
 * threads (SASS, bf16 erf: the row loop 915 -> 886 instructions, a vector's
 * eight MUFU.EX2 within ~20 instructions instead of one every ~11; the
 * exchange warps spilling two values, reloaded every row). Measured on an
 * H100 (80GB HBM3; no H200 was lent; 2026-12-05 14:50 UTC, three
 * interleaved rounds, % of its copy bandwidth, default / RR): bf16 1024 x
 * 262144 83.6, 84.5, 84.3 / 83.6, 84.0, 84.1 (0.997x); 256 x 1048576 83.9,
 * 83.1, 83.4 / 80.8, 81.1, 81.2 (0.971x); row_lengths.sh's gp-rr group and
 * the three sanitizers clean. bench/gpipe_trace (same call, bf16 1024 x
 * 262144, default / RR, means): a row's output 1.73 -> 1.35 us, as meant,
 * but its statistics until the exchange warp has every warp's partial 0.74
 * -> 1.26 us, the publish 1.14 -> 1.59 us and the blocks' spread at publish
 * 1.59 -> 4.42 us. bench/pc_stalls: the GELU's MUFU waits 9.4% -> 3.0% of
 * the samples, the streaming threads' wait for the merged statistics 11.6%
 * -> 19.3%. So the exchange warps got slower: their spills are local loads,
 * and with 224 KB of the SM's 256 KB as shared memory the L1 keeps little,
 * so a reload can go to the L2 (not measured apart). Second form: 40 and
 * 104 registers (kb_gpipe_sreg), no spills in the kernel, the MUFU.EX2 still
 * interleaved. Measured on an H100 (another of the same kind, 15:18-15:22
 * UTC, three interleaved rounds, default / RR): bf16 1024 x 262144 84.3,
 * 84.3, 84.5 / 84.5, 84.6, 85.1 (1.005x); 256 x 1048576 83.3, 83.8, 83.5 /
 * 82.8, 83.5, 82.9 (0.994x): level, as predicted there; gp-rr and the three
 * sanitizers clean. The same call's samples (bf16 1024 x 262144, default /
 * RR): the GELU's MUFU waits 9.4% -> 6.0%, the wait for a row's bytes 5.5%
 * -> 4.2%, the wait for its merged statistics 12.3% -> 13.5%: on the H100
 * the time the GELUs free is spent waiting for the bandwidth. Its timeline
 * (RR): a row's output 1.20 us and statistics 0.83 us (1.73 and 0.74 without
 * RR on the first H100, 14:35 UTC), so a block's own work a row 2.47 -> 2.03
 * us. On the H200 these rows take 2.98 us a row a block (the report of
 * 2026-12-05 02:08 UTC: 382 us for 128 rows), so there the work was most of
 * the row, and RR is what the H200's A/B is to settle; off until then.
 * With KBENCH_LAYERNORM_GPIPE_EXACT=1 as well, rows of whole slices take RR
 * without edge code (SASS, bf16 erf: the row loop 814 instructions against
 * RR's 892 and the exact form's 815, and none of the exact form's two
 * spilled registers; fp16's erf form spills 8 bytes); row_lengths.sh's
 * gp-rr-exact group checks it: on an H100 (2026-12-05 16:05 UTC) 27 cases
 * ok, 16 of them on this kernel, and memcheck, racecheck and synccheck
 * clean. Timed on an H100 (80GB HBM3, 2026-12-05 18:52 UTC, two interleaved
 * rounds, % of the copy bandwidth, RR / the registers unmoved / RR without
 * edge code): bf16 1024 x 262144 85.2, 84.9 / 84.5, 84.7 / 85.4, 85.8; 256
 * x 1048576 83.0, 83.1 / 84.1, 84.3 / 82.6, 82.3: all three within 1.5%, as
 * on the first H100.
 * Measured on the H200 at last (2026-12-05 19:47-19:49 UTC, kbench ef8fff6
 * with RR on by default, two interleaved rounds, no check, bf16, % of the
 * copy bandwidth, RR / the registers unmoved / RR without edge code): 1024
 * x 262144 69.7, 69.0 / 65.5, 65.7 / 74.1, 75.7; 256 x 1048576 68.2, 69.4
 * / 64.6, 64.1 / 74.5, 74.3. RR 1.06-1.07x over the registers unmoved, and
 * RR without edge code 1.081x over RR at both: 64-66% -> 74-76%, past the
 * prediction's 70-77% only with the edge code gone, where the H100 had all
 * three level. So on the H200 the 16-bit rows' instructions and chains are
 * what held them (issue-bound there, bandwidth-bound on the H100). Both are
 * the default for 16-bit rows since (KBENCH_LAYERNORM_GPIPE_EXACT's default
 * -1: 16-bit wide slices without edge code, the rest with it; fp32's exact
 * form was 0.985x on the H100 and 0.943-0.969x on the H200, above). Still
 * short of 85%: next, the instructions a slice (~814 a thread in the row
 * loop).
 * The squares by the tensor cores (SQ, KBENCH_LAYERNORM_SQ=1, the default
 * with RR; =0 keeps the centred pass): a warp's slice statistics from its
 * sum and sum of squares, both by HMMA (mma_sum_sq), M2 = s2 - n mean^2
 * where |mean| < 8 sigma (ln_m2_from_sums), the centred pass otherwise.
 * SASS (sm_90a, bf16 erf, RR without edge code): a row's statistics 208 ->
 * 138 instructions run (the centred pass laid out beside them), the row loop
 * ~814 -> ~744 for a thread's 32 elements. Prediction (before any run):
 * level on an H100; on the H200, where these rows are issue-bound, bf16 1024
 * x 262144 and 256 x 1048576 from 74-76% to 80-84%. Measured on an H100
 * (80GB HBM3; no H200 was lent; 2026-12-05 21:43-21:44 UTC, two interleaved
 * rounds, % of its copy bandwidth, default / SQ=0): 1024 x 262144 85.8,
 * 85.7 / 85.7, 86.0 (1.001x); 256 x 1048576 83.0, 82.5 / 82.9, 83.2
 * (1.004x): level, as predicted. row_lengths.sh's gp-rr and gp-rr-exact
 * groups (means of 4, 5 and -4 beside their shapes) and gp-rr-nosq, and
 * the three sanitizers, clean. On the H200 (2026-12-05 21:50-21:51 UTC, two
 * interleaved rounds, default / SQ=0): 1024 x 262144 76.9, 77.3 / 76.7, 76.9
 * (1.004x); 256 x 1048576 74.4, 75.5 / 76.5, 76.9 (0.977x). Not the
 * predicted gain: 70 instructions fewer a row bought nothing at 262144 and
 * lost a little at 1048576, so the statistics' instructions are not what
 * holds these rows on the H200 (the GELU's chains and the exchange, by the
 * H100's samples above, are the candidates; not yet sampled on the H200).
 * Kept on for now, as the report of 21:55-22:03 UTC measured it (77.6% and
 * 76.4%; 65.7% and 64.1% in 6c40b87's, without RR or the exact form); a
 * longer A/B at 1048576 is to settle it.
 * Tried and not kept: a row of the slack held in registers (fp32; commit
 * 940b0c5). The ring's 7 fp32 slices are shared between the slack and the
 * rows copied ahead, and each trade lost (L = 3, P = 4: 71%; L = 4, P = 3:
 * 82-83%; L = 5, P = 2: 74%), while the timeline says the streaming threads
 * still wait 12% of their time for the merged statistics, ~2.3 us after the
 * row's last publish. There the oldest row of the slack left its slot for
 * 16 registers a thread one row before its out (with RR: the form needs
 * ~100 registers), so L = 5 with P = 3. Prediction (before the run): that
 * wait mostly gone at fp32 128 x 1048576 (a row takes ~2.4 us, more than
 * the 2.3 us), 78-83% -> 85-90%; 512 x 262144 about as much; level or worse
 * if the time freed goes to waiting for the bytes. Measured (H100 80GB HBM3,
 * 2026-12-05 17:20-17:21 UTC, two interleaved rounds, % of the copy
 * bandwidth, default / held): fp32 128 x 1048576 83.7, 84.0 / 81.1, 81.3
 * (0.968x); 512 x 262144 90.8, 90.7 / 91.2, 90.7 (1.003x). Worse where the
 * wait was largest: a fifth row of slack buys nothing with three rows copied
 * ahead, so the slack was not what the wait for merged statistics lacked
 * (softmax's deep form agrees: its fused.cu). Its checks (27 cases) and
 * memcheck, racecheck and synccheck were clean.
 * The statistics of the rows ahead (AHEAD, KBENCH_LAYERNORM_GPIPE_AHEAD:
 * =-1, the default, the 16-bit wide slices of rows of whole slices, =1 fp32
 * rows too, =0 neither;
 * grid_pipe.cuh's kb_gpipe_run). A streaming warp that
 * would wait for row j's merged statistics takes, while they are not in,
 * the statistics of the rows after it whose bytes are (up to the last row
 * copied), so that the block publishes them as soon as its bytes allow and
 * the wait is spent on the work of the rows ahead; the exchange's rings
 * grow from L + 2 to L + P + 1 slots (6 to 8 here, within the 3 KB of
 * static shared memory the ring leaves). Before, a warp took row i's statistics
 * only after out(i - L - 1): a block held at `done` published its next
 * rows late, and the other blocks then waited for it in turn. Prediction
 * (before any run): on an H100, where these rows are bound by the
 * bandwidth at 84-86%, level to +2%; on the H200, where a block's own work
 * is most of a row (bf16 1024 x 262144: statistics ~0.8 us and output ~1.2
 * us of a row's ~3.0 us), the 16-bit rows of 262144 and 1048576 columns
 * 76-78% -> 80-84%, and fp32 128 x 1048576 +0-3%. SASS: every other kernel
 * of the file the same as before; the AHEAD kernels 85 registers (fp32)
 * and 96 (16-bit, RR), 2.4-2.5 KB of static shared memory. Measured on an
 * H100 (80GB HBM3; no H200 was lent; 2026-12-06 05:23-05:27 UTC, kbench
 * 5856622, interleaved rounds, checked, % of its copy bandwidth, default /
 * AHEAD): bf16 1024 x 262144 86.0, 86.0 / 91.1, 91.4 (1.062x); 256 x
 * 1048576 83.2, 83.0 / 87.8, 87.2 (1.053x); fp32 128 x 1048576 84.2, 83.5,
 * 83.5 / 83.5, 83.6, 83.6 (0.998x), 512 x 262144 0.997x, 2048 x 65536
 * 0.997x. Past the prediction in 16-bit, whose rows were bound by more than
 * the bandwidth on the H100 too, and level in fp32, whose streaming
 * threads have work to spare. row_lengths.sh's gp-ahead group (45 cases,
 * fp32, fp16 and bf16, every one on an AHEAD kernel but 5 x 40960, whose
 * five rows take a cluster) and memcheck, racecheck and
 * synccheck at 70 x 40008 clean. At more shapes (the same H100, 06:24-06:28
 * UTC, two rounds each, bf16, AHEAD / none): 512 x 524288 1.066x, 64 x
 * 1048576 1.055x, 2048 x 131072 1.007x, 300 x 131072 1.000x, but 300 x
 * 131080 0.908x and 2048 x 131080 0.918x: rows that are not whole slices
 * take the form with edge code, and that form with AHEAD keeps 16 bytes on
 * the stack (ptxas, 96 registers; the exact form none), spills that the
 * streaming threads' row loop waits on, as the one-trip exchange's did
 * (above). So AHEAD takes 16-bit rows of whole slices only (checked on
 * the same H100, 06:37 UTC, kbench 73bca36: gp-ahead's 45 cases ok, those
 * of 16-bit rows that are not whole slices on their kernels without it,
 * and memcheck, racecheck and synccheck at 70 x 49152 clean); they take it
 * by default (=-1, since ba501b4), fp32 rows not.
 * On the H200 (2026-12-06): the report of 09:21-09:28 UTC (kbench ba501b4,
 * AHEAD on) has bf16 1024 x 262144 at 82.8% and 256 x 1048576 at 80.7%,
 * against 77.6% and 76.4% in the report of the day before (AHEAD off); the
 * same session's A/B after it (09:29-09:31 UTC, two interleaved rounds, 1 s
 * warm-up a case, at the power cap's clock, =0 / the default): 1024 x 262144
 * 74.8, 72.3 / 71.3, 72.3 (0.976x), 256 x 1048576 74.0, 74.5 / 76.2, 74.4
 * (1.014x); fp32 (=1 / the default) 128 x 1048576 80.8, 79.5 / 78.6, 78.8
 * (0.982x), 512 x 262144 75.8, 74.6 / 76.4, 85.1 (1.074x). Level within
 * rounds that spread 2-3 points (9 in one): its effect on the H200 is not
 * settled. bench/gpipe_trace on the same H200 (AHEAD on, one
 * launch, means over rows): bf16 1024 x 262144 a row's blocks publish
 * within 1.23 us, the merged statistics handed over 1.81 us after the last
 * publish, the blocks waiting 8.8% of their time for bytes and 6.4% for
 * merged statistics; fp32 2048 x 65536 1.33 us, 1.82 us, 10.0% and 5.9%;
 * fp32 128 x 1048576 7.57 us (p90 9.47), 1.95 us, 11.1% and 10.2%, a
 * block's lateness on a row and on its next r = 0.92 (0.52 and 0.19 at the
 * other two). So the H200's fp32 rows of 1048576 (78%) are held by their
 * 128 blocks drifting apart, a late block staying late, not by the
 * exchange's hand-over, which is ~1.8-2.0 us at every shape; the exchange
 * warp's loads of the S partials (4 a lane at S = 128, issued two by two)
 * are not it either: "merge, hand over" 1.21 us there against 1.15-1.16
 * at S = 8 and 16.
 * The same timelines read by block (2026-12-06): at fp32 128 x 1048576 a
 * block's lateness is its own from the start, not a drift: half the
 * blocks publish ~3 us before a row's median and half ~3 us after it, the
 * same in the first and the second half of the rows (r = 0.995 between the
 * halves), and the late half started 2.7 us after the early one (the
 * launch). Every block runs its rows at one pace, ~3.0 us a row (2.5 at
 * fp32 65536), and thread 0's part of it from its stores to its next row
 * read 0.85-0.91 us at all three shapes, taken then for its wait for the
 * slot's other readers and its copy of the row P ahead. Tried and not kept
 * (code in commit 6cdc864, KBENCH_LAYERNORM_GPIPE_LC there): the slot's
 * last reader copying instead, so that no streaming warp waits for
 * another. Predicted: level on an H100, where these rows are bound by the
 * bandwidth; on the H200 fp32 128 x 1048576 78 -> 83-88% if that wait was
 * on the pace's path. Measured on an H100 (80GB HBM3; no H200 was lent;
 * 2026-12-06 10:59 UTC, bench/gpipe_trace's launches without stamps, one
 * binary, median of 20, thread 0 / last reader): fp32 128 x 1048576 428.9
 * / 441.8 us (0.971x), bf16 1024 x 262144 438.0 / 448.1 us (0.977x); its
 * checks (row_lengths.sh's gp, gp-ahead and gp-rr-exact groups, 108 cases,
 * and the three sanitizers) clean. Its timeline kept thread 0's 1.0 us
 * from its stores to its next row with no wait and no copy in it: the
 * segment was the trace's own, each stamp loading the buffer's address
 * from global memory behind the row's stores (grid_pipe.cuh, fixed since).
 * So the premise did not hold, and the phases above read long by up to a
 * load's latency each.
 * With the stamps mended (the same kind of H100, 11:17 UTC, default
 * kernels, means over rows; fp32 128 x 1048576 / 2048 x 65536 / bf16 1024
 * x 262144): the wait for a row's bytes 0.20 / 0.15 / 0.08 us (6.0 / 4.9 /
 * 2.7% of thread 0's time), for its merged statistics 1.03 / 0.87 / 0.28
 * us (31.6 / 28.7 / 9.3%), and the exchange warp's publish, a 16-byte
 * store and a release add whose fence (MEMBAR.ALL.GPU) waits, 4.50 / 3.92
 * / 3.37 us (p90 7.1 / 6.5 / 5.4): longer than the rows' spread (4.89 /
 * 2.76 / 4.14 us), and the same fence comes again in the release of the
 * row's slot before the warp's next row, whose partial waits for it (the
 * "statistics" phase, bytes in to the exchange warp taking the partial,
 * 3.08 / 3.14 / 2.56 us). So each exchange warp spends two fences, the
 * wait for the row's blocks and the merge on each of its rows, ~12-13 us,
 * and its four warps take a row every ~3.1-3.3 us: the pace of every
 * block at every length (above: a fixed rate whatever the row's length).
 * F1 (KBENCH_LAYERNORM_GPIPE_FENCES=1, the default; =2 the two fences, the
 * two default forms): the release of a row's slot waits for the warp's
 * next publish, whose fence orders the reads of the row's partials before
 * it as well (kb_grid_publish_release): one fence a row. Prediction (before
 * any run): the exchange warps' turn from ~13 to ~9 us a row, their pace
 * from ~3.2 to ~2.3 us a row where it is what sets it; on the H200 fp32
 * 128 x 1048576 78 -> 84-90% and the 16-bit rows of 262144 and 1048576
 * columns +3-8%; on an H100, whose bandwidth these rows nearly fill (83-90%
 * of its copy), +0-3%. Measured on an H100 (80GB HBM3; no H200 was lent;
 * 2026-12-06 11:33-11:34 UTC, kbench 4c05dcf with this change, two
 * interleaved rounds, no check, % of its copy bandwidth, two fences / one):
 * fp32 128 x 1048576 83.5, 83.9 / 94.4, 94.7 (1.130x); 512 x 262144 90.9,
 * 90.7 / 96.2, 96.9 (1.063x); 2048 x 65536 91.6, 91.6 / 92.7, 92.5
 * (1.011x); bf16 1024 x 262144 90.6, 90.9 / 93.3, 93.3 (1.028x); 256 x
 * 1048576 87.6, 87.5 / 93.2, 93.0 (1.063x). Far past the prediction on
 * this GPU: the rows it called bound by the bandwidth were bound by the
 * exchange warps' fences. The timelines (same call, means over rows, two
 * fences / one; fp32 128 x 1048576, 2048 x 65536, bf16 1024 x 262144): a
 * row's bytes in to its exchange warp taking the partial 3.17 / 1.37, 3.16
 * / 1.24, 2.67 / 0.84 us; the publish's fence 4.10 / 4.69, 3.99 / 5.17,
 * 3.43 / 3.66 us (one fence still, as long); the launches without stamps
 * 428.3 / 390.3, 392.6 / 384.4, 389.8 / 383.5 us. Checked on the same
 * H100 (row_lengths.sh's gp, gp-ahead, gp-rr-exact and gp-f2 groups: 153
 * cases ok, memcheck, racecheck and synccheck clean). The default since
 * (the two default forms; the others, the 16-bit rows that are not whole
 * slices among them, keep two fences: with one, the 16-bit exact forms
 * without the tensor cores' squares keep 8-16 bytes on the stack).
 * With one fence the 16-bit grid passes srow2 at shorter rows of whole
 * slices too. Measured on an H100 (80GB HBM3; no H200 was lent; 2026-12-06
 * 14:33-14:35 UTC, kbench 963fb8a, two interleaved rounds, no check, % of
 * its copy bandwidth, the default / KBENCH_LAYERNORM_GRID_PIPE=2): bf16
 * 2048 x 131072 (srow2 in clusters of 2) 80.9, 80.9 / 94.3, 93.9 (1.163x);
 * 2730 x 98304 (clusters of 2) 78.3, 76.7 / 93.8, 94.6 (1.215x); 8192 x
 * 49152 89.7, 88.1 / 94.1, 94.1 (1.058x); 4096 x 65536 91.2, 84.9 / 93.1,
 * 92.4 (1.053x); 2048 x 65536 88.7, 91.2 / 92.8, 91.8 (1.025x); fp16 2048
 * x 131072 1.184x, 4096 x 65536 1.052x; with two fences the grid 1.133x at
 * bf16 2048 x 131072 and 1.038x at 4096 x 65536; but at 3000 x 40000, not
 * whole slices (the form with edge code and two fences), 84.5, 84.1 / 81.9,
 * 81.7 (0.970x). On the H200 srow2 led the grid at 65536 (0.94x with two
 * fences, 2026-12-05, srow2's header), issue-bound there at the power cap's
 * clock. So 16-bit rows of whole slices from 81920 columns, where srow2
 * takes clusters of 2, take the grid by default
 * (KBENCH_LAYERNORM_GPIPE_FROM16, default 65537; =131073 sends them back to
 * srow2); 49152 and 65536, one block of srow2 a row, stay there (=32769
 * takes them to the grid; the H200's A/B below). Prediction for the H200
 * (before any run there): 81920-131072 columns +10-20%, as here, the grid
 * then at its 262144 figure (82.8% in the report of 09:21 UTC, two fences);
 * 49152 and 65536 level within the rounds' spread. Built and measured on an
 * H100 (80GB HBM3; 2026-12-06 14:44 UTC, kbench b324a1b, two interleaved
 * rounds, no check, % of its copy bandwidth, FROM16=131073 / the default /
 * =32769): bf16 3276 x 81920 77.3, 76.4 / 93.0, 92.7 (1.209x); 2730 x 98304
 * 76.5, 79.9 / 92.9, 92.6 (1.186x); 2048 x 131072 80.5, 80.8 / 91.7, 92.4
 * (1.142x); 4096 x 65536 86.9, 87.6 / 85.9, 87.8 / 92.7, 92.2 (1.059x with
 * =32769). row_lengths.sh's gp-whole16 group (21 cases, fp32, fp16 and
 * bf16, 5-8 slices a row, statistics, a mean of 10^4, tanh; 12 x 81920 too
 * few rows to fill the grid, on srow2's clusters of 2) and memcheck,
 * racecheck and synccheck at bf16 30 x 81920 clean.
 * On the H200 (2026-12-06 20:45-20:46 UTC, kbench 73586cf, one fence a row,
 * two interleaved rounds, no check, % of its copy bandwidth, the default /
 * =32769): bf16 4096 x 65536 84.2, 82.5 / 76.5, 77.0 (0.921x), srow2 still
 * ahead there as with two fences; 8192 x 49152 65.7, 66.5 / 75.3, 76.1
 * (1.145x), the grid ahead. One threshold cannot take 49152 and leave
 * 65536, so the default stays 65537, and srow2's 66% at 49152 is a cliff
 * between the sweep's points (16384 and 65536) left open. Its report of
 * 20:46-20:50 UTC, the same call: bf16 1024 x 262144 83.9%, 256 x 1048576
 * 82.2% on the grid (82.8 and 80.7 in ba501b4's, two fences), fp32 128 x
 * 1048576 88.5% (78.0), 512 x 262144 90.1% (85.4): the fp32 rows gained
 * as the H100 predicted, the 16-bit rows, 93% there, hold 82-84% here.
 * The output pass by the tensor cores (TN, KBENCH_LAYERNORM_GPIPE_TN=1; bf16
 * rows of whole slices on the default form, kernels named _tw; off until
 * the H200 measures it). On the H200 these rows follow their instructions
 * (the exact form's 1.081x above for 11% fewer). The output pass spends 13
 * an element: x's unpack (a shift or a mask), x rstd - mean rstd (an FMA),
 * gamma and beta + b (an FMA), the GELU (eight) and half a pack. TN widens x
 * by tw_widen's two HMMAs a vector of 8, as srow2's TW, and so gives the
 * same floats as the unpack. SASS (sm_90a, erf, the output pass of a row,
 * default / TN): 419 / 396 instructions (the unpacks' ~49 shifts, masks and
 * IMADs against 8 HMMAs), 96 registers, no stack. Prediction (before any
 * run): level on an H100 (bandwidth-bound there at 93%); on the H200 bf16
 * 1024 x 262144 and 256 x 1048576 +1-3% (5% fewer instructions a row).
 * Tried with it and not kept: x rstd - mean rstd by the HMMAs as well
 * (TN=2: rstd as two bf16, h + l, four HMMAs a vector against I h and I l,
 * C = -mean rstd), 193 FFMAs a row instead of 224, but 14 moves a row to
 * rebuild the C quad and 24 bytes of stack (5 loads a row). Measured on an
 * H100 (80GB HBM3; no H200 was lent; 2026-12-07 16:38 UTC, kbench 98de2f9,
 * this change built beside srow2's PP=2 default, the grid's kernels the
 * same SASS as 4fc5ac2's here; two interleaved rounds, no check, % of its
 * copy bandwidth, default / TN=1 / TN=2): bf16 1024 x 262144 94.5, 94.4 /
 * 94.1, 94.4 / 89.4, 89.1 (0.997x, 0.945x); 256 x 1048576 92.8, 92.3 /
 * 91.6, 92.1 / 87.4, 87.6 (0.993x, 0.946x). TN=2 also erred more at a mean of 10^4 (relative L2 error 1.19
 * against the default's and TN=1's 0.29, bf16 50 x 98304 and 40 x 262144):
 * the tensor cores' fp32 sum of x h and -mean rstd, each ~10^4 rstd, where
 * the FMA rounds once. Both passed their row_lengths.sh groups there
 * (gp-tn1 and gp-tn2 then, gp-tn now: 27 cases each, 9 of them bf16 on the
 * TN kernel; memcheck, racecheck and synccheck at bf16 30 x 81920 clean).
 * TN=2's code is gone (commit 4fc5ac2 has it); TN=1 is the H200's A/B. */
#define GP_THREADS 512
#define GP_ELEMS 16 /* elements of a row a thread: a slice is 8192 columns */
#define GP_WIDE_ELEMS (2 * GP_ELEMS) /* 16-bit wide slices: 16384 columns */
#define GP_RING_BYTES (128 * 1024)
/* The ring when the parameters are held in registers (PREG): the rest of the
 * SM's 227 KB of shared memory but the static kilobyte. */
#define GP_RING_BYTES_PREG (224 * 1024)
#define GP_PREG_L 4 /* rows of slack in that ring (3 of 7 ahead, fp32) */
/* PREG: gamma and beta + b in the streaming threads' registers, the shared
 * memory all ring, GP_PREG_L rows of slack; else half the ring's. */
template <typename T, bool PREG = false, int E = GP_ELEMS> struct gp_cfg {
    static constexpr int V = kb_vec_width<T>(), NV = E / V, F4 = V / 4;
    static constexpr int SLOT = NV * GP_THREADS; /* uint4s a row slice takes */
    static constexpr int D = (PREG ? GP_RING_BYTES_PREG : GP_RING_BYTES) / (SLOT * 16);
    static constexpr int L = PREG ? GP_PREG_L : D / 2, P = D - L;
    static_assert(P >= 1 && L >= 1, "a row of slack and one ahead at least");
    static constexpr size_t SMEM =
        (size_t)D * SLOT * 16 + (PREG ? 0 : (size_t)2 * NV * F4 * GP_THREADS * 16);
};

/* ln_warp_wf as a function object, for kb_gpipe_reduce. */
struct ln_warp_wf_op {
    KB_DEV ln_wf operator()(ln_wf w) const { return ln_warp_wf(w); }
};

template <typename T, bool TANH, bool PREG = false, int E = GP_ELEMS, bool WP = false,
          bool EXACT = false, bool RR = false, bool SQ = false, bool AHEAD = false, bool F1 = false,
          bool TN = false>
__global__ void __launch_bounds__(KB_GPIPE_BLOCK(GP_THREADS), 1)
    layernorm_fused_gpipe(LN_PATH_BUFFERS, int rows, int cols, float inv_cols, int S)
{
    using C = gp_cfg<T, PREG, E>;
    /* TN: x widened by the tensor cores in out (tw_widen); every lane of a
     * warp takes part, so rows of whole slices only */
    static_assert(!TN || (EXACT && PREG && std::is_same<T, __nv_bfloat16>::value),
                  "TN: bf16 rows of whole slices");
    /* 16-bit rows with the parameters in registers (PK): gamma held packed
     * (unpacked a vector at a time in out), no shift (the statistics of x
     * itself, each warp's slice about its own mean: the first pass by the
     * tensor cores, the second unpacking the slot again instead of holding
     * the slice as floats), and the normalisation folded into two fmas, as
     * layernorm_fused_srow2's. */
    constexpr bool PK = PREG && sizeof(T) < 4;
    constexpr int V = C::V, NV = C::NV, F4 = C::F4, THREADS = GP_THREADS;
    __shared__ ln_wf red[2][THREADS / 32];    /* by row parity */
    __shared__ __align__(16) uint4 heads[C::D]; /* each row's first 16 bytes: its shift */
    extern __shared__ __align__(16) uint4 gp_sm[];
    const kb_gpipe<NV, THREADS, C::D> p(gp_sm, PK ? nullptr : heads, rows, cols / V, S);
    /* The staged parameters after the ring (not PREG): gs [NV F4][THREADS],
     * bs [NV F4][THREADS] */
    float4 *gs = reinterpret_cast<float4 *>(gp_sm + C::D * C::SLOT);
    float4 *bs = gs + NV * F4 * THREADS;
    /* EXACT: the row is S whole slices (cols = S THREADS E), every vector in
     * it, and no code for the edges */
    auto in = [&](int k) { return EXACT || p.in(k); };
    /* PREG: this streaming thread's gamma and beta + b, held for the launch. */
    float gr[PREG && !PK ? NV : 1][V], br[PREG ? NV : 1][V];
    uint4 gq[PK ? NV : 1];
    /* RR: loaded after the registers move (kb_gpipe_run's init), not here */
    auto params = [&]() {
        if constexpr (PK) {
            const T *gt = gamma + p.tv * V, *b1t = beta + p.tv * V, *b2t = bias + p.tv * V;
#pragma unroll
            for (int k = 0; k < NV; k++) {
                gq[k] = make_uint4(0, 0, 0, 0);
                if (in(k)) {
                    gq[k] = kb_ld128(gt + k * p.stride * V);
                    ln_bias_global<T>(k * p.stride, b1t, b2t, br[k]);
                } else {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        br[k][e] = 0.0f;
                }
            }
        } else if constexpr (PREG) {
            const T *gt = gamma + p.tv * V, *b1t = beta + p.tv * V, *b2t = bias + p.tv * V;
#pragma unroll
            for (int k = 0; k < NV; k++) {
                if (in(k)) {
                    ln_affine_global<T>(k * p.stride, gt, b1t, b2t, gr[k], br[k]);
                } else {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        gr[k][e] = br[k][e] = 0.0f;
                }
            }
        } else {
            /* this thread's own slots: no barrier */
            ln_stage_params<T, NV, THREADS>(gamma, beta, bias, p.tv, p.stride, in, gs, bs);
        }
    };
    if (!RR && threadIdx.x < THREADS) /* the streaming threads' own parameters */
        params();

    /* The block's i-th row's shift x[row][0], from the head copied with it
     * (in the ring until the row's slot is refilled, after its out). */
    auto shift = [&](int i) {
        float h[V];
        kb_unpack<T>(p.head(i), h);
        return h[0];
    };
    /* This thread's elements of every row (the same slice of each). */
    int n = 0;
#pragma unroll
    for (int k = 0; k < NV; k++)
        n += in(k) ? V : 0;
    /* PK: its warp's, summed once (RR: in kb_gpipe_run's init, so not held
     * from entry). */
    auto warp_n = [&]() { return EXACT ? (float)(32 * NV * V) : kb_warp_sum((float)n); };
    float nw = !PK || RR ? 0.0f : warp_n();
    /* The slice's exact (n, mean, M2) over the block, of d = x - x[row][0]
     * (of x when PK; thread 0's is the one used). */
    auto stats = [&](int i) {
        if constexpr (PK) {
            const uint4 *sr = p.slot_row(i);
            const auto sl = [&](int k) { return sr[k * THREADS]; };
            float mw, qw = -1.0f;
            if constexpr (SQ) {
                /* SQ: the squares by the tensor cores too; the centred pass
                 * only where they would cancel (ln_m2_from_sums) */
                const float2 t = mma_sum_sq<T, NV>(sl, in);
                mw = nw > 0.0f ? kb_warp_sum(t.x) / nw : 0.0f;
                qw = ln_m2_from_sums(nw, mw, kb_warp_sum(t.y));
            } else {
                mw = nw > 0.0f ? kb_warp_sum(mma_sum<T, NV>(sl, in)) / nw : 0.0f;
            }
            if (qw < 0.0f)
                qw = kb_warp_sum(packed_centred_squares<T, NV>(sl, mw, in));
            if constexpr (WP)
                return make_float4(nw, mw, qw, 0.0f);
            const ln_wf w = kb_gpipe_reduce_warps<THREADS>(ln_wf{nw, mw, qw}, red, i,
                                                           ln_wf{0.0f, 0.0f, 0.0f},
                                                           ln_warp_wf_op());
            return make_float4(w.n, w.mean, w.m2, 0.0f);
        } else {
            const float K = shift(i);
            const uint4 *sr = p.slot_row(i);
            uint4 raw[NV];
#pragma unroll
            for (int k = 0; k < NV; k++)
                raw[k] = in(k) ? sr[k * THREADS] : make_uint4(0, 0, 0, 0);
            float v[NV][V];
            const float s = shifted_sum<T, true>(raw, v, K, in);
            const float mt = n > 0 ? s / (float)n : 0.0f;
            const ln_wf t = {(float)n, mt, centred_squares(v, mt, in)};
            const ln_wf w = WP ? ln_warp_wf(t)
                               : kb_gpipe_reduce<THREADS>(t, red, i, ln_wf{0.0f, 0.0f, 0.0f},
                                                          ln_warp_wf_op());
            return make_float4(w.n, w.mean, w.m2, 0.0f);
        }
    };
    /* The row's S states in one fixed order: its mean of d and rstd. */
    auto merge = [&](int64_t row) {
        const int lane = threadIdx.x & 31;
        ln_wf c = {0.0f, 0.0f, 0.0f};
        for (int r = lane; r < S; r += 32) {
            const float4 q = kb_grid_get(row, r);
            c = ln_wf_merge(c, {q.x, q.y, q.z});
        }
        c = ln_warp_wf(c);
        return make_float4(c.mean, rsqrtf(fmaf(c.m2, inv_cols, LN_EPS)), 0.0f, 0.0f);
    };
    auto out = [&](int j, float4 st) {
        const int64_t row = p.row_of(j);
        const float md = st.x, rstd = st.y, K = PK ? 0.0f : shift(j), nmr = -md * rstd;
        uint4 *yv = reinterpret_cast<uint4 *>(y + row * cols) + p.tv;
        const uint4 *sr = p.slot_row(j);
        /* TN's B, worked out a row (held from the kernel's entry, the
         * compiler rebuilds it a row all the same at 96 registers) */
        [[maybe_unused]] const uint32_t one = TN ? tw_one() : 0u;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (in(k)) {
                float f[V], g[V], bb[V];
                if constexpr (TN)
                    tw_widen(sr[k * THREADS], one, f);
                else
                    kb_unpack<T>(sr[k * THREADS], f);
                if constexpr (PK) {
                    kb_unpack<T>(gq[k], g);
#pragma unroll
                    for (int e = 0; e < V; e++)
                        bb[e] = br[k][e];
                } else if constexpr (PREG) {
#pragma unroll
                    for (int e = 0; e < V; e++)
                        g[e] = gr[k][e], bb[e] = br[k][e];
                } else {
                    ln_staged_params<T, THREADS>(gs, bs, k, g, bb);
                }
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const float z = PK ? fmaf(f[e], rstd, nmr) : (f[e] - K - md) * rstd;
                    f[e] = ln_gelu_out<T, TANH>(fmaf(z, g[e], bb[e]));
                }
                kb_st128(yv + k * p.stride, kb_pack<T>(f));
            }
        }
        if (mean_out != nullptr && p.tv == 0) {
            mean_out[row] = K + md;
            rstd_out[row] = rstd;
        }
    };
    /* WP: the exchange warp's merge of the block's warp partials. */
    auto combine = [](int lane, const float4 *pw) {
        ln_wf c = {0.0f, 0.0f, 0.0f};
        if (lane < THREADS / 32)
            c = ln_wf{pw[lane].x, pw[lane].y, pw[lane].z};
        c = ln_warp_wf(c);
        return make_float4(c.n, c.mean, c.m2, 0.0f);
    };
    if constexpr (WP)
        kb_gpipe_run<C::L, C::P, THREADS, RR, AHEAD, F1>(p, reinterpret_cast<const uint4 *>(x), rows,
                                                     stats, merge, out, combine,
                                                     [&]() {
                                                         if constexpr (RR) {
                                                             params();
                                                             if constexpr (PK)
                                                                 nw = warp_n();
                                                         }
                                                     });
    else
        kb_gpipe_run<C::L, C::P, THREADS>(p, reinterpret_cast<const uint4 *>(x), rows, stats,
                                          merge, out);
}

/* Launches layernorm_fused_gpipe (EXACT: its form without edge code) with S
 * blocks a row over as many groups of S as the GPU holds at once (at most
 * one a row). cudaErrorNotSupported when the GPU holds fewer than S, and
 * with `filled` also when the groups would leave more than 1/8 of its
 * blocks idle (kb_gpipe_blocks). */
template <typename T, bool TANH, bool PREG, int E, bool WP, bool EXACT, bool RR = false,
          bool SQ = false, bool AHEAD = false, bool F1 = false, bool TN = false>
static cudaError_t launch_gpipe_k(const kb_args *a, cudaStream_t s, bool filled, int S)
{
    using C = gp_cfg<T, PREG, E>;
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    static int64_t cap = -1;
    const auto k = layernorm_fused_gpipe<T, TANH, PREG, E, WP, EXACT, RR, SQ, AHEAD, F1, TN>;
    const int64_t blocks =
        kb_gpipe_blocks((const void *)k, GP_THREADS, C::SMEM, S, p.rows, &cap, filled);
    if (blocks == 0 || p.rows > INT32_MAX)
        return cudaErrorNotSupported;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1}, block = {KB_GPIPE_BLOCK(GP_THREADS), 1, 1};
    /* the 16-bit AHEAD kernel is built for rows of whole slices only (its
     * name below says so; launch_gpipe_ring) */
    static_assert(!(AHEAD && RR) || EXACT, "AHEAD with RR: rows of whole slices");
    /* the forms with a barrier a slice (KBENCH_LAYERNORM_GPIPE_WP=0) named apart */
    /* one fence a row (F1): the two default forms, whose forms with two
     * (KBENCH_LAYERNORM_GPIPE_FENCES=2) are named apart */
    constexpr bool deflt = (AHEAD && RR) || (PREG && WP && !EXACT && !RR && !AHEAD &&
                                             E == GP_ELEMS && sizeof(T) == 4);
    static_assert(!F1 || deflt, "one fence a row: the default forms only");
    static_assert(!TN || (deflt && F1), "TN: the default form");
    const char *name = TN              ? "layernorm_fused_gpipe_wide_exact_rr_sq_ahead_tw"
                       : deflt && !F1  ? (AHEAD ? "layernorm_fused_gpipe_wide_exact_rr_sq_ahead_f2"
                                                : "layernorm_fused_gpipe_preg_f2")
                       : AHEAD           ? (RR ? "layernorm_fused_gpipe_wide_exact_rr_sq_ahead"
                                             : "layernorm_fused_gpipe_preg_ahead")
                       : RR            ? (SQ ? (EXACT ? "layernorm_fused_gpipe_wide_exact_rr_sq"
                                                      : "layernorm_fused_gpipe_wide_rr_sq")
                                             : EXACT ? "layernorm_fused_gpipe_wide_exact_rr"
                                                     : "layernorm_fused_gpipe_wide_rr")
                       : EXACT         ? (E > GP_ELEMS ? "layernorm_fused_gpipe_wide_exact"
                                                        : "layernorm_fused_gpipe_preg_exact")
                       : E > GP_ELEMS ? (WP ? "layernorm_fused_gpipe_wide"
                                            : "layernorm_fused_gpipe_wide_bar")
                       : PREG         ? (WP ? "layernorm_fused_gpipe_preg"
                                            : "layernorm_fused_gpipe_preg_bar")
                                      : "layernorm_fused_gpipe";
    return kb_launch(a, s, k, name, grid, block, C::SMEM, p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro,
                     (int)p.rows, p.cols, p.inv_cols, S);
}

/* layernorm_fused_gpipe with the blocks a row its slices take;
 * cudaErrorNotSupported when that is more than GP_MAX_S. With `exact` (the
 * parameters in registers and warp partials), rows of whole slices take
 * the form without edge code; with `regs` (the same and wide 16-bit
 * slices), the form with the exchange warps' registers moved (RR), with or
 * without edge code, and with `sq` the squares by the tensor cores; with
 * `ahead`, the statistics of the rows ahead (the 16-bit form of whole
 * slices only, and fp32's with edge code); with `f1`, the two default
 * forms' one fence a row; with `tn` as well, bf16's default form with x
 * widened by the tensor cores (TN). */
template <typename T, bool TANH, bool PREG, int E = GP_ELEMS, bool WP = false>
static cudaError_t launch_gpipe_ring(const kb_args *a, cudaStream_t s, bool filled,
                                     bool exact = false, bool regs = false, bool sq = false,
                                     bool ahead = false, bool f1 = false, bool tn = false)
{
    using C = gp_cfg<T, PREG, E>;
    const int64_t cols = a->shape[LN_COLS];
    const int S = kb_grid_blocks(cols / C::V, (int64_t)GP_THREADS * C::NV);
    if (S > GP_MAX_S)
        return cudaErrorNotSupported;
    const bool whole = exact && (int64_t)S * GP_THREADS * E == cols;
    if constexpr (PREG && WP && E > GP_ELEMS)
        if (regs && sq && ahead && whole) { /* with the edge code it spills (above the kernel) */
            if constexpr (std::is_same<T, __nv_bfloat16>::value)
                if (f1 && tn)
                    return launch_gpipe_k<T, TANH, PREG, E, WP, true, true, true, true, true,
                                          true>(a, s, filled, S);
            return f1 ? launch_gpipe_k<T, TANH, PREG, E, WP, true, true, true, true, true>(
                            a, s, filled, S)
                      : launch_gpipe_k<T, TANH, PREG, E, WP, true, true, true, true>(a, s, filled,
                                                                                     S);
        }
    if constexpr (PREG && WP && E == GP_ELEMS && sizeof(T) == 4)
        if (ahead && !whole)
            return launch_gpipe_k<T, TANH, PREG, E, WP, false, false, false, true>(a, s, filled,
                                                                                   S);
    if constexpr (PREG && WP && E > GP_ELEMS)
        if (regs) {
            if (sq)
                return whole
                           ? launch_gpipe_k<T, TANH, PREG, E, WP, true, true, true>(a, s, filled, S)
                           : launch_gpipe_k<T, TANH, PREG, E, WP, false, true, true>(a, s, filled,
                                                                                     S);
            return whole ? launch_gpipe_k<T, TANH, PREG, E, WP, true, true>(a, s, filled, S)
                         : launch_gpipe_k<T, TANH, PREG, E, WP, false, true>(a, s, filled, S);
        }
    if constexpr (PREG && WP)
        if (whole)
            return launch_gpipe_k<T, TANH, PREG, E, WP, true>(a, s, filled, S);
    if constexpr (PREG && WP && E == GP_ELEMS && sizeof(T) == 4)
        if (f1)
            return launch_gpipe_k<T, TANH, PREG, E, WP, false, false, false, false, true>(
                a, s, filled, S);
    return launch_gpipe_k<T, TANH, PREG, E, WP, false>(a, s, filled, S);
}

/* launch_gpipe_ring with the parameters in registers and L = 4 of the 7
 * fp32 slices (14 16-bit) a ring of 224 KB holds, or, with
 * KBENCH_LAYERNORM_GPIPE_RING=0, the parameters staged in shared memory beside
 * a ring of 128 KB (4 fp32 slices, L = 2; measured above the kernel); the
 * 16-bit wide slices with registers moved (KBENCH_LAYERNORM_GPIPE_REGS=0 keeps
 * them) and, in rows of whole slices, without edge code
 * (KBENCH_LAYERNORM_GPIPE_EXACT: =1 fp32 rows too, =0 neither), taking the
 * statistics of the rows ahead with KBENCH_LAYERNORM_GPIPE_AHEAD (=-1 the
 * 16-bit wide slices of rows of whole slices, the default, =1 fp32 rows
 * too, =0 neither), the two default forms with one fence a row
 * (KBENCH_LAYERNORM_GPIPE_FENCES=2: two), bf16's with x widened by the
 * tensor cores with KBENCH_LAYERNORM_GPIPE_TN=1. */
template <typename T, bool TANH>
static cudaError_t launch_gpipe(const kb_args *a, cudaStream_t s, bool filled)
{
    static const int ring = kb_env_int("KBENCH_LAYERNORM_GPIPE_RING", 1, 0, 1);
    static const int wide = kb_env_int("KBENCH_LAYERNORM_GPIPE_WIDE", 1, 0, 1);
    static const int wp = kb_env_int("KBENCH_LAYERNORM_GPIPE_WP", 1, 0, 1);
    /* -1: the 16-bit wide slices without edge code, the others with it (the
     * H200's A/B) */
    static const int exact = kb_env_int("KBENCH_LAYERNORM_GPIPE_EXACT", -1, -1, 1);
    static const int regs = kb_env_int("KBENCH_LAYERNORM_GPIPE_REGS", 1, 0, 1);
    /* -1: the 16-bit wide slices of rows of whole slices take the
     * statistics ahead, fp32 rows not (the H100's A/Bs above the kernel) */
    static const int ahead = kb_env_int("KBENCH_LAYERNORM_GPIPE_AHEAD", -1, -1, 1);
    /* 1: the exchange warps' one fence a row; 2: a fence to publish and one
     * to release (the two default forms) */
    static const int fences = kb_env_int("KBENCH_LAYERNORM_GPIPE_FENCES", 1, 1, 2);
    /* 1: bf16 rows of whole slices on the default form with x widened by
     * the tensor cores (above the kernel); 0, by the ALU */
    static const int tn = kb_env_int("KBENCH_LAYERNORM_GPIPE_TN", 0, 0, 1);
    if (!ring)
        return launch_gpipe_ring<T, TANH, false>(a, s, filled);
    if constexpr (sizeof(T) < 4) {
        if (wide)
            return wp ? launch_gpipe_ring<T, TANH, true, GP_WIDE_ELEMS, true>(
                            a, s, filled, exact != 0, regs, ln_sq_on(), ahead != 0, fences == 1,
                            tn == 1)
                      : launch_gpipe_ring<T, TANH, true, GP_WIDE_ELEMS>(a, s, filled);
    }
    return wp ? launch_gpipe_ring<T, TANH, true, GP_ELEMS, true>(a, s, filled, exact == 1, false,
                                                                 false, ahead == 1, fences == 1)
              : launch_gpipe_ring<T, TANH, true>(a, s, filled);
}

template <bool VEC> struct fused_kernels {
    static constexpr const char *warp_name = "layernorm_fused_warp";
    static constexpr const char *row_name = "layernorm_fused_row";
    static constexpr const char *stream_name =
        VEC ? "layernorm_fused_stream_vec" : "layernorm_fused_stream";
    template <typename T, int NV, bool TANH> static auto warp()
    {
        static const int mode = kb_env_int("KBENCH_LAYERNORM_WARP", 1, 0, 5);
        switch (mode) {
        case 0:
            return layernorm_fused_warp<T, NV, TANH, 0>;
        case 2:
            return layernorm_fused_warp<T, NV, TANH, 2>;
        case 3:
            return layernorm_fused_warp<T, NV, TANH, 3>;
        case 5:
            return layernorm_fused_warp<T, NV, TANH, 5>;
        default:
            return layernorm_fused_warp<T, NV, TANH, 1>;
        }
    }
    template <typename T, int THREADS, int NV, int PF, int MINB, int G, bool EXACT, bool TANH>
    static constexpr auto row()
    {
        return layernorm_fused_row<T, THREADS, NV, PF, MINB, G, EXACT, TANH>;
    }
    template <typename T, bool TANH> static constexpr auto stream()
    {
        if constexpr (VEC)
            return layernorm_fused_stream_vec<T, TANH>;
        else
            return layernorm_fused_stream<T, TANH>;
    }
};

/* Whether the tile kernel swizzles rows of cols elements: where rows start on
 * the same banks (fp32 rows of a multiple of 32 columns; header comment);
 * KBENCH_TILE_SWIZZLE=0|1 forces it off or on. */
template <typename T> static bool tile_swizzled(int64_t cols)
{
    static const int env = kb_env_int("KBENCH_TILE_SWIZZLE", -1, 0, 1);
    return env >= 0 ? env == 1 : sizeof(T) == 4 && cols % 32 == 0;
}

/* The tile kernel of G lanes a row, NPL elements a lane (5 or 8). */
template <typename T, int G, int NPL, bool TANH>
static cudaError_t launch_tile(const kb_args *a, cudaStream_t s)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    const bool swz = tile_swizzled<T>(p.cols);
    const int64_t span = kb_span_rows(KB_TILE_ELEMS, KB_TILE_THREADS / G, p.cols);
    const kb_dim3 grid = {(unsigned)((p.rows + span - 1) / span), 1, 1};
    const kb_dim3 block = {KB_TILE_THREADS, 1, 1};
    static const char *const names[4][3] = {
        {"layernorm_fused_tile_g4_n5", "layernorm_fused_tile_g4",
         "layernorm_fused_tile_g4_swz"},
        {"layernorm_fused_tile_g8_n5", "layernorm_fused_tile_g8",
         "layernorm_fused_tile_g8_swz"},
        {"layernorm_fused_tile_g16_n5", "layernorm_fused_tile_g16",
         "layernorm_fused_tile_g16_swz"},
        {"layernorm_fused_tile_g32_n5", "layernorm_fused_tile_g32",
         "layernorm_fused_tile_g32_swz"}};
    const int g = kb_tile_group_index(G);
    if constexpr (NPL == KB_TILE_PER_LANE) {
        if (swz)
            return kb_launch(a, s, layernorm_fused_tile<T, G, NPL, TANH, true>, names[g][2], grid,
                             block, 0, p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro, p.rows, p.cols,
                             p.inv_cols);
    }
    return kb_launch(a, s, layernorm_fused_tile<T, G, NPL, TANH, false>,
                     names[g][NPL == KB_TILE_PER_LANE ? 1 : 0], grid, block, 0, p.x, p.g, p.b1,
                     p.b2, p.y, p.mo, p.ro, p.rows, p.cols, p.inv_cols);
}

/* The sub-warp kernel with G lanes a row. */
template <typename T, int G, bool TANH>
static cudaError_t launch_sub_g(const kb_args *a, cudaStream_t s, const char *name)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    constexpr int64_t PER_BLOCK = SUB_THREADS / G * SUB_ROWS; /* rows a block */
    const kb_dim3 grid = {(unsigned)((p.rows + PER_BLOCK - 1) / PER_BLOCK), 1, 1};
    const kb_dim3 block = {SUB_THREADS, 1, 1};
    return kb_launch(a, s, layernorm_fused_sub<T, G, TANH>, name, grid, block, 0, p.x, p.g, p.b1,
                     p.b2, p.y, p.mo, p.ro, p.rows, p.cols, p.inv_cols);
}

/* The sub-warp kernel for aligned rows of nvec <= 16 vectors: G the least
 * power of two >= nvec. */
template <typename T, bool TANH>
static cudaError_t launch_sub(const kb_args *a, cudaStream_t s, int64_t nvec)
{
    if (nvec <= 1)
        return launch_sub_g<T, 1, TANH>(a, s, "layernorm_fused_sub_g1");
    if (nvec <= 2)
        return launch_sub_g<T, 2, TANH>(a, s, "layernorm_fused_sub_g2");
    if (nvec <= 4)
        return launch_sub_g<T, 4, TANH>(a, s, "layernorm_fused_sub_g4");
    if (nvec <= 8)
        return launch_sub_g<T, 8, TANH>(a, s, "layernorm_fused_sub_g8");
    return launch_sub_g<T, 16, TANH>(a, s, "layernorm_fused_sub_g16");
}

/* launch_tile with 5 elements a lane (n5) or 8. */
template <typename T, int G, bool TANH>
static cudaError_t launch_tile_g(const kb_args *a, cudaStream_t s, bool n5)
{
    return n5 ? launch_tile<T, G, 5, TANH>(a, s) : launch_tile<T, G, KB_TILE_PER_LANE, TANH>(a, s);
}

/* The thread-row kernel for rows of cols <= NPL elements, NPL - KB_TROW_STEP < cols;
 * WORDS as launch_trow's. */
template <typename T, int NPL, bool TANH, int WORDS>
static cudaError_t launch_trow_n(const kb_args *a, cudaStream_t s, const char *name)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    const kb_dim3 grid = {(unsigned)((p.rows + KB_TROW_THREADS - 1) / KB_TROW_THREADS), 1, 1};
    const kb_dim3 block = {KB_TROW_THREADS, 1, 1};
    auto k = layernorm_fused_trow<T, NPL, TANH>;
    if constexpr (WORDS != 0)
        k = layernorm_fused_trow_w<T, NPL, TANH, WORDS == 2>;
    return kb_launch(a, s, k, name, grid, block, 0, p.x, p.g, p.b1, p.b2, p.y, p.mo, p.ro,
                     p.rows, p.cols, p.inv_cols);
}

#define TROW_COLS 40 /* the longest row the thread-row kernel takes */
/* The thread-row kernels by row length: WORDS 0 the kernel above, 1 the word
 * kernel (16-bit), 2 the word kernel with the copy engine's spans. */
template <typename T, bool TANH, int WORDS = 0>
static cudaError_t launch_trow(const kb_args *a, cudaStream_t s)
{
    static const char *const names[3][5] = {
        {"layernorm_fused_trow_n8", "layernorm_fused_trow_n16", "layernorm_fused_trow_n24",
         "layernorm_fused_trow_n32", "layernorm_fused_trow_n40"},
        {"layernorm_fused_trow_w8", "layernorm_fused_trow_w16", "layernorm_fused_trow_w24",
         "layernorm_fused_trow_w32", "layernorm_fused_trow_w40"},
        {"layernorm_fused_trow_wb8", "layernorm_fused_trow_wb16", "layernorm_fused_trow_wb24",
         "layernorm_fused_trow_wb32", "layernorm_fused_trow_wb40"}};
    const char *const *n = names[WORDS];
    const int64_t cols = a->shape[LN_COLS];
    if (cols <= 8)
        return launch_trow_n<T, 8, TANH, WORDS>(a, s, n[0]);
    if (cols <= 16)
        return launch_trow_n<T, 16, TANH, WORDS>(a, s, n[1]);
    if (cols <= 24)
        return launch_trow_n<T, 24, TANH, WORDS>(a, s, n[2]);
    if (cols <= 32)
        return launch_trow_n<T, 32, TANH, WORDS>(a, s, n[3]);
    return launch_trow_n<T, 40, TANH, WORDS>(a, s, n[4]);
}

/* The peeled row kernel (layernorm_fused_row, PEEL) on rung (THREADS, NV,
 * PF, MINB, G) of the ladder: as many blocks as the GPU holds at once, in
 * whole rounds of the row classes, and a block of each class that holds
 * rows. */
template <typename T, bool TANH, int THREADS, int NV, int PF, int MINB, int G>
static cudaError_t launch_peel_rung(const kb_args *a, cudaStream_t s)
{
    const ln_ptrs<T> p = ln_ptrs_of<T>(a);
    const auto k = layernorm_fused_row<T, THREADS, NV, PF, MINB, G, false, TANH, true>;
    const size_t smem =
        ln_peel_stage_bytes<T>(p.cols) + (PF == 2 ? (size_t)G * THREADS * NV * 16 : 0);
    if (p.rows > INT32_MAX / 2) /* row + stride stays below 2^31 */
        return cudaErrorNotSupported;
    unsigned blocks = 0;
    const cudaError_t e = ln_row_grid((const void *)k, THREADS * G, G, smem, p.rows, &blocks);
    if (e != cudaSuccess)
        return e;
    const unsigned pc = (unsigned)ln_peel_classes(p.cols, kb_vec_width<T>());
    const unsigned least = p.rows < (int64_t)pc ? (unsigned)p.rows : pc;
    blocks = blocks >= pc ? blocks / pc * pc : least;
    const kb_dim3 grid = {blocks, 1, 1}, block = {(unsigned)(THREADS * G), 1, 1};
    return kb_launch(a, s, k, "layernorm_fused_row_peel", grid, block, smem, p.x, p.g, p.b1,
                     p.b2, p.y, p.mo, p.ro, (int)p.rows, p.cols, p.inv_cols);
}

/* The peeled row kernel on the first rung of the ladder whose groups hold
 * the row's cols / V vectors: fp32 at most 16384 columns (its stage, 8
 * bytes a column, in one block's shared memory), 16-bit 32768 (the 16-bit
 * ladder); cudaErrorNotSupported past them. */
#define LN_PEEL_ROW(TH, NV, PF, MB, G)                                                    \
    {TH, NV, nullptr, launch_peel_rung<T, TANH, TH, NV, PF, MB, G>},
#define LN_PEEL_LADDER_F32(X)                                                             \
    X(128, 4, 0, 2, 4) X(128, 8, 0, 2, 4) X(256, 8, 0, 2, 2) X(512, 8, 0, 2, 1)
template <typename T, bool TANH> static cudaError_t launch_peel(const kb_args *a, cudaStream_t s)
{
    const int64_t nvec = a->shape[LN_COLS] / kb_vec_width<T>();
    const ln_row_cfg *r;
    if constexpr (sizeof(T) == 4) {
        static const ln_row_cfg l[] = {LN_PEEL_LADDER_F32(LN_PEEL_ROW)};
        r = ln_rung_for(l, nvec);
    } else {
        static const ln_row_cfg l[] = {LN_ROW_LADDER_16(LN_PEEL_ROW)};
        r = ln_rung_for(l, nvec);
    }
    return r != nullptr ? r->any(a, s) : cudaErrorNotSupported;
}

template <typename T, bool TANH> static cudaError_t launch_gelu(const kb_args *a, cudaStream_t s)
{
    constexpr int V = kb_vec_width<T>();
    const int64_t rows = a->shape[LN_ROWS], cols = a->shape[LN_COLS];
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    /* A/B switches (header comment). */
    static const int use_tile = kb_env_int("KBENCH_LAYERNORM_TILE", 1, 0, 2);
    static const int vec_stream = kb_env_int("KBENCH_LAYERNORM_STREAM", 1, 0, 1);
    static const int narrow = kb_env_int("KBENCH_TILE_NARROW", 1, 0, 1);
    const bool aligned = ln_aligned16(a) != 0;
    /* Short rows: the tile kernel when the warp kernel would leave most lanes
     * idle (16 vectors a row or fewer) or the row is off 16-byte boundaries. */
    const bool short_row = cols <= TILE_COLS && rows <= INT32_MAX;
    /* Aligned rows of at most 16 vectors: the sub-warp register kernel,
     * unless KBENCH_LAYERNORM_SUB=0 or KBENCH_LAYERNORM_TILE=0|2 (header comment). */
    static const int use_sub = kb_env_int("KBENCH_LAYERNORM_SUB", 1, 0, 1);
    if (aligned && use_sub && use_tile == 1 && cols % V == 0 && cols / V <= 16)
        return launch_sub<T, TANH>(a, s, cols / V);
    /* Rows of at most TROW_COLS off 16-byte boundaries: a thread a row,
     * unless KBENCH_LAYERNORM_TROW=0 (above the kernel). */
    static const int trow_env = kb_env_int("KBENCH_LAYERNORM_TROW", -1, 0, 3);
    /* by default 16-bit rows of 9-40 columns the word kernel with the copy
     * engine's spans, the others the thread-row kernel (measured above the
     * word kernel) */
    const int use_trow = trow_env >= 0 ? trow_env : sizeof(T) == 2 && cols > 8 ? 3 : 1;
    if (aligned && use_trow && use_tile == 1 && cols % V != 0 && cols <= TROW_COLS &&
        (sizeof(T) == 2 || cols > 24) && rows <= INT32_MAX) { /* fp32 <= 24: measured above */
        if constexpr (sizeof(T) == 2) { /* the word kernel (above it) */
            if (use_trow == 2)
                return launch_trow<T, TANH, 1>(a, s);
            if (use_trow == 3)
                return launch_trow<T, TANH, 2>(a, s);
        }
        return launch_trow<T, TANH>(a, s);
    }
    if (aligned && short_row && use_tile &&
        (use_tile == 2 || cols % V != 0 || cols / V <= 16)) {
        /* 5 elements a lane where they hold the row, else 8: a lane's idle
         * elements cost as much as its others (header comment) */
        const bool n5 = narrow && !tile_swizzled<T>(cols);
        if (cols <= 8 * 4)
            return launch_tile_g<T, 4, TANH>(a, s, n5 && cols <= 5 * 4);
        if (cols <= 8 * 8)
            return launch_tile_g<T, 8, TANH>(a, s, n5 && cols <= 5 * 8);
        if (cols <= 8 * 16)
            return launch_tile_g<T, 16, TANH>(a, s, n5 && cols <= 5 * 16);
        return launch_tile_g<T, 32, TANH>(a, s, n5 && cols <= 5 * 32);
    }
    /* Rows of 257-16384 (fp32) or 257-32768 (16-bit) columns off 16-byte
     * boundaries: the peeled row kernel, unless KBENCH_LAYERNORM_PEEL=0 (the
     * streaming path; measured above the kernel). */
    static const int use_peel = kb_env_int("KBENCH_LAYERNORM_PEEL", 1, 0, 1);
    if (use_peel && aligned && cols % V != 0 && cols > TILE_COLS) {
        const cudaError_t e = launch_peel<T, TANH>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    /* Aligned rows past the one-block ladder (fp32 8192 vectors, 16-bit
     * 4096: 32768 elements) in a cluster's registers, unless
     * KBENCH_LAYERNORM_CLUSTER_REGS=0; 16-bit rows too with =2 (header
     * comment). */
    /* Aligned fp32 rows of 32769-262144 columns in persistent clusters with
     * the parameters staged, unless KBENCH_LAYERNORM_CLUSTER_PF=0; 16-bit
     * rows too with =2 (measured: above the kernel); not where rows are too
     * few for the clusters the GPU holds. */
    /* Aligned rows of 65536 (fp32) or 131073 (16-bit) to 1048576 columns
     * over the pipelined grid where its groups of blocks fill 7/8 of the
     * GPU, and 16-bit rows of whole wide slices (16384 columns) from
     * KBENCH_LAYERNORM_GPIPE_FROM16 columns (65537: 81920-131072 join them;
     * 32769: 49152 and 65536 too), unless KBENCH_LAYERNORM_GRID_PIPE=0; =2
     * takes every aligned row of 32769-1048576 columns there (measured
     * above the kernel). */
    static const int use_gpipe = kb_env_int("KBENCH_LAYERNORM_GRID_PIPE", 1, 0, 2);
    static const int gpipe_from16 =
        kb_env_int("KBENCH_LAYERNORM_GPIPE_FROM16", 65537, 32769, 1048577);
    const bool gpipe_whole16 =
        sizeof(T) == 2 && cols >= gpipe_from16 && cols % (GP_THREADS * GP_WIDE_ELEMS) == 0;
    if ((use_gpipe == 2 ||
         (use_gpipe == 1 && (cols >= (sizeof(T) == 4 ? 65536 : 131073) || gpipe_whole16))) &&
        aligned &&
        cols % V == 0 && cols > 32768 && !kb_rows_few(rows)) {
        const cudaError_t e = launch_gpipe<T, TANH>(a, s, use_gpipe == 1);
        if (e != cudaErrorNotSupported)
            return e;
    }
    static const int use_pf = kb_env_int("KBENCH_LAYERNORM_CLUSTER_PF", 1, 0, 2);
    if ((sizeof(T) == 4 ? use_pf : use_pf == 2) && aligned && cols % V == 0 && cols > 32768 &&
        !kb_rows_few(rows)) {
        const cudaError_t e = launch_cluster_pf<T, TANH>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    static const int use_creg = kb_env_int("KBENCH_LAYERNORM_CLUSTER_REGS", 1, 0, 2);
    if (use_creg && aligned && cols % V == 0 && cols > 32768 &&
        (((sizeof(T) == 4 || use_creg == 2) && cols <= KB_CLUSTER_MAX * LN_CREG_PER) ||
         kb_rows_few(rows))) {
        const cudaError_t e = launch_cluster<T, TANH>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    /* 16-bit aligned rows of 32769-65536 columns: one block's shared memory,
     * unless KBENCH_LAYERNORM_SMEM_ROW=0 (above the kernel); the reworked
     * kernel (layernorm_fused_srow2), 32769-1048576 columns in clusters past
     * 65536, unless KBENCH_LAYERNORM_SROW2=0 (measured above that kernel) */
    static const int use_srow = kb_env_int("KBENCH_LAYERNORM_SMEM_ROW", 1, 0, 1);
    static const int use_srow2 = kb_env_int("KBENCH_LAYERNORM_SROW2", 1, 0, 1);
    if constexpr (sizeof(T) == 2) {
        /* row + grid < 2^31 */
        const bool held = use_srow && aligned && cols % V == 0 && cols > 32768 &&
                          rows <= INT32_MAX / 2;
        if (held && use_srow2 && (cols <= srow_cols<T>() || !kb_rows_few(rows))) {
            const cudaError_t e = launch_srow2<T, TANH>(a, s);
            if (e != cudaErrorNotSupported)
                return e;
        }
        if (held && cols <= srow_cols<T>())
            return launch_srow<T, TANH>(a, s);
    }
    /* Aligned rows past the paths above, at most 3/4 as many rows as SMs: the
     * streaming cluster kernel (measured above), unless KBENCH_LAYERNORM_STREAM_CL=0. */
    static const int use_scl = kb_env_int("KBENCH_LAYERNORM_STREAM_CL", 1, 0, 1);
    int sms = 0;
    if (use_scl && vec_stream && aligned && cols % V == 0 && cols > 32768 &&
        kb_current_sms(&sms) == cudaSuccess && rows * 4 <= (int64_t)sms * 3) {
        const cudaError_t e = launch_stream_cl<T, TANH>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    return vec_stream ? ln_dispatch<fused_kernels<true>, T, TANH>(a, s)
                      : ln_dispatch<fused_kernels<false>, T, TANH>(a, s);
}

template <typename T> static cudaError_t fused_launch(const kb_args *a, cudaStream_t s)
{
    return a->shape[LN_GELU] ? launch_gelu<T, true>(a, s) : launch_gelu<T, false>(a, s);
}

/* Launches the fused layernorm + bias + GELU of a->in[0] (gamma, beta, b:
 * in[1..3]) into a->out[0] (mean and rstd into out[1], out[2] when the shape
 * asks) on stream s: the tile, warp, row or streaming kernel by the shape.
 * Returns the launch's error, or cudaErrorInvalidValue for an unknown dtype. */
extern "C" cudaError_t kb_layernorm_fused(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(fused_launch, a, s)
}

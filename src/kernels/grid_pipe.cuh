/* grid_pipe.cuh - a row split over a persistent grid whose blocks publish a
 * row's partial statistics at once and wait for the row's other blocks only
 * L rows later (the pipelined grid of softmax and layernorm).
 *
 * grid_rows.cuh's split waits, every row, for the slowest of the row's
 * blocks; with one block an SM the SM then has nothing to do. Here blocks of
 * THREADS streaming threads and KB_GPIPE_XWARPS exchange warps, as many
 * groups of S as the GPU holds at once, stay for the launch: block `rank` of
 * group g owns vectors tv + k stride (tv = rank THREADS + tid, stride = S
 * THREADS, k < NV) of rows g, g + G, ..., and keeps a ring of D row slices
 * in shared memory, filled by the copy engine P = D - L rows ahead
 * (cp.async.bulk: thread 0 issues a chunk of THREADS vectors a copy, and the
 * row's first 16 bytes, head(i), for a shift; the bytes complete the slot's
 * mbarrier). For the block's i-th row the streaming threads (kb_gpipe_run):
 *   1. wait for row i's bytes and call stats(i), which reduces the slice
 *      over them (kb_gpipe_reduce: one named barrier, not the exchange
 *      warps'); thread 0 hands the partial to the row's exchange warp
 *      (shared memory and an mbarrier); or, given a `combine`, stats(i)
 *      reduces over its warp only, every warp's lane 0 hands over its
 *      partial (the mbarrier takes a warp's arrival each) and the exchange
 *      warp combines them: no barrier among the streaming warps (1.08-1.12x,
 *      layernorm's fused.cu);
 *   2. for row j = i - L: wait on an mbarrier for the row's merged
 *      statistics, and out(j, merged) writes the row; each warp then says
 *      it is done with the slot (an mbarrier);
 *   3. thread 0 copies row i + P into the slot row j left, once every warp
 *      is done with it.
 * Exchange warp w takes rows w, w + XWARPS, ...: it publishes the row's
 * partial to global memory (a release add it does not wait for), waits for
 * the row's S partials (acquire), merges them by merge(row) in one fixed
 * order, hands the result back and says it is done with the row's global
 * slot (another release add; with F1, an add that goes out with the warp's
 * next publish, under its fence: a release's fence took 3.4-4.5 us a row
 * on an H100 under this traffic, and the warp's next row waited for it;
 * layernorm's fused.cu). The global round trips are the exchange
 * warps', several rows' at once: the streaming threads wait only when the
 * exchange of a row takes longer than L rows of streaming.
 * History (H200, 2026-12-02, fp32 128 x 1048576, % of the copy bandwidth):
 * the first form (commits ab538b6 / f3c3749: thread 0 publishing, waiting
 * and merging between two block barriers every row) 26-62%, barrier 44% of
 * the stall samples. One exchange warp (commit deb1534; each thread copying
 * its own vectors with cp.async) 53% (layernorm) and 64% (softmax), the
 * streaming threads' stall samples long_sb 34-52%; with the ring filled by
 * the copy engine instead (10:16 UTC) the same: 50% and 64% (507 and 392 us
 * against the default paths' 430 and 306), so the copies were not what
 * held it. Every cell of both forms fits one exchange warp taking ~4 us a
 * row (an acq_rel add that its next load waits for, a poll, the reads of
 * the partials, another acq_rel add, one after the other): layernorm fp32
 * 128 x 1048576 (S = 128, one group) and 512 x 262144 (S = 32, four groups)
 * both ran 3.8-4.0 us a row of a group whatever the row's length; softmax
 * bf16 256 x 1048576 4.05. That form's racecheck flagged kb_grid_leave's
 * shared flag, inlined once at the end of each role; kb_grid_leave now
 * finds the last block by the barrier's vote (__syncthreads_or; racecheck
 * clean, 10:16 UTC).
 * Four exchange warps and adds that are not waited for (predicted: ~2 us a
 * row a warp, four rows at once, so the exchange no longer sets the pace:
 * fp32 128 x 1048576 from 50% (layernorm) and 64% (softmax) to 75-90%).
 * Measured 10:50-11:10 UTC: layernorm fp32 128 x 1048576 70% (362 us
 * against the default's 430), rows of 262144 level with the default, 16-bit
 * rows ~46% at every length, issue-bound (the figures in layernorm's
 * fused.cu); softmax bf16 0.78-0.83x of its grid path; softmax fp32 trapped
 * (its ring of partials too small for four warps: see kb_gpipe_run).
 * The L2's lag (tried 2026-12-05: KBENCH_GPIPE_L2 and KBENCH_GPIPE_LAG in
 * commit cfdd9f7). The ring's D slots are shared between the rows copied
 * ahead (P) and the rows of slack (L): layernorm's fp32 rows of 1048576
 * columns ran at 83% with L = 4, P = 3 and lost at L = 5, P = 2 (74%; its
 * fused.cu), softmax's at 78% with L = 5. Here the two are apart: DS slots
 * filled from DRAM for stats(i) only, freed as soon as it is done, and Q =
 * 2 or 3 slots into which out's rows are copied a second time, from the
 * L2, Q rows before their out, so that the lag (Q to 7 rows) takes no
 * slots. Prediction (before the run): fp32 128 x 1048576 78 -> 85-88% at a
 * lag of 6 with 4-5 slices ahead, if the exchange's latency is what the
 * lag buys and the L2 keeps a lag's rows (6 rows, 24 MB, at 1048576).
 * Measured (H200, 2026-12-05 02:41-02:47 UTC, two interleaved rounds, no
 * check, % of the copy bandwidth, default / Q = 2 lag 5 / Q = 2 lag 7 / Q =
 * 3 lag 6): layernorm fp32 128 x 1048576 77.4, 77.9 / 61.4, 61.5 / 61.8,
 * 61.5 / 60.7, 60.7; 512 x 262144 84.9, 85.0 / 64.1, 64.2 / 64.1, 63.8 /
 * 63.8, 64.0; bf16 1024 x 262144 and 256 x 1048576 0.73-0.75x; softmax fp32
 * 128 x 1048576 (its kernel with warp partials and these slots) 82.3, 82.5
 * / 55.9, 56.0 (0.68x), 64 x 2097152 0.76x. The counters said why
 * (02:57-03:02 UTC, kbench run, fp32 128 x 1048576 and 512 x 262144): DRAM
 * bytes 1.45-1.49 times the model's at lags of 2, 3, 4 and 6 (the default
 * 1.00), and no faster at the shorter lags: the copy engine's second copy
 * of a row missed the L2 even two rows (8 MB of x) after the first, and an
 * evict_last policy on the first copies (createpolicy, the bulk copy's
 * L2::cache_hint) changed nothing (1.48). Nor the second copy being the
 * copy engine's: with out reading its row
 * from global memory itself (Q = 1: plain loads, all issued before any use,
 * the whole ring of 7 slots for the statistics; 92 registers, no spills in
 * fp32; checked at both shapes), 03:57 UTC, two rounds, default / lag 4 /
 * lag 6: fp32 128 x 1048576 77.9, 77.8 / 59.1, 59.2 / 59.9, 60.0; 512 x
 * 262144 86.3, 85.3 / 60.9, 61.4 / 61.6, 61.5; DRAM bytes 1.49-1.50 times
 * the model's. Nor the copy engine: with each thread copying its own
 * vectors of a row into the slots by cp.async (LDGSTS, through the L2 as
 * any load; commit 862dfaf), 04:25 UTC, one round: 0.65-0.66x at 128 x
 * 1048576, 0.73-0.80x at 512 x 262144, DRAM bytes 1.49 times the model's
 * at lags 4 and 6. So in this pipeline the L2 kept none of the rows for a
 * second read two to six rows later, whoever read them first, where
 * softmax's waves (its fused.cu: 64 KB chunks from a ticket, both reads
 * plain loads) found theirs there at 16 MB (DRAM reads 1.04-1.05 of the
 * model's). Not kept (code in commits cfdd9f7 and 862dfaf).
 * The likeliest account, from the arithmetic (2026-12-05, not measured
 * apart): a row's first copy is made DS = D - Q rows before its
 * statistics (Q = 1: D), its second lag - Q rows after them, so DS + lag -
 * Q steps of the grid pass between the two (5 at lag 2 with Q = 2, 11 at
 * lag 4 with Q = 1), and a step is the whole GPU's: 4 MB of x read and 4 MB
 * of y written at either shape (one row of 1048576, or four of 262144).
 * That is 40-88 MB through the L2 between a row's two reads, against its
 * 50 MB; softmax's waves hit with 32 MB between theirs (16 MB of x, as much
 * of y) and lost time at 56 MB. The lag read from the L2 then has room for
 * about four steps of the grid, the copies ahead included: no more than the
 * ring's own L + P = 7 slices give it without the second read. Stores of y
 * that the L2 evicts first (an evict_first policy on them) would be the
 * next thing to try, if any. Measured apart since (bench/l2_reuse on an
 * H100, 80GB HBM3, 50 MB of L2, 2026-12-05 09:14 UTC; time over a plain
 * copy's, 1.5 when every second read comes from DRAM): with x read and y
 * written between a row's two reads, the second read hits up to 8 MB of
 * that traffic (1.00), then 1.18 at 12 MB, 1.29 at 16, 1.44 at 33, 1.46
 * from 41 MB on; y stored with evict_first 1.09 at 12 MB, 1.21 at 16. The
 * reuse distance under streaming traffic is about a sixth of the L2, and
 * the lag's 40-88 MB were far past it: the account above holds (the H200,
 * whose L2 is the same size, still to run). Nor does the L2's set-aside
 * for persisting lines (cudaLimitPersistingL2CacheSize, the evict_last
 * reads' own ways) make room: on an H100 (2026-12-06, bench/l2_reuse.cu's
 * header) the second read hit at 52 MB between, but the streaming itself
 * took 2.07 times the plain copy's time.
 * Nor did a longer lag in registers help: the last row of the slack held
 * in the streaming threads' registers, its slot refilled a row early (L = 5
 * with 7 fp32 slots and 3 rows ahead; commit 940b0c5), lost 3% in
 * layernorm and changed nothing in softmax's deep form (H100, 2026-12-05;
 * the figures in both fused.cu files).
 * Progress needs the G S blocks resident at once: the launcher asks the
 * occupancy calculator (kb_grid_capacity) and launches no more. */
#ifndef KB_GRID_PIPE_CUH
#define KB_GRID_PIPE_CUH

#include "kernels/grid_rows.cuh"
#include "kernels/hopper.cuh"

/* A block's place in the pipelined grid, its ring of row slices and (heads,
 * when not null) the ring of each row's first 16 bytes. The block's vectors
 * of a row: chunks of THREADS vectors S THREADS apart (rank THREADS + k S
 * THREADS, the header's). Thread tid owns vector tid of each chunk. (A form
 * with a contiguous part of the row a block, so that S need not divide the
 * GPU, lost: layernorm's fused.cu; code in commit f20845a.) */
template <int NV, int THREADS, int D> struct kb_gpipe {
    uint4 *ring;  /* [D][NV][THREADS] */
    uint4 *heads; /* [D] or null */
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
    /* The block's first chunk's start in a row. */
    __device__ __forceinline__ int start() const { return rank * THREADS; }
    /* The block's i-th row. */
    __device__ __forceinline__ int64_t row_of(int i) const
    {
        return (int64_t)first + (int64_t)i * G;
    }
    /* This thread's vector 0 of the block's i-th row in the ring; its vector
     * k is THREADS k further (one ring offset a row, not one a vector). */
    __device__ __forceinline__ const uint4 *slot_row(int i) const
    {
        return ring + (i % D) * NV * THREADS + tid;
    }
    /* The first 16 bytes of the block's i-th row (after the wait for it). */
    __device__ __forceinline__ uint4 head(int i) const { return heads[i % D]; }
    /* The vectors of the block's chunk k of a row that lie in the row
     * (0..THREADS). */
    __device__ __forceinline__ int chunk(int k) const
    {
        const int n = nvec - (start() + k * stride);
        return n < 0 ? 0 : n < THREADS ? n : THREADS;
    }
    /* Copies the block's i-th row (i < nr; rows of nvec vectors from xv)
     * into its slot with the copy engine, a chunk of THREADS vectors (or the
     * part of it in the row) a copy, and the row's head: one thread, after
     * the slot's readers are done; the bytes complete barrier bar's phase. */
    __device__ __forceinline__ void prefetch(const uint4 *xv, int i, uint32_t bar) const
    {
        const uint4 *row = xv + row_of(i) * nvec;
        unsigned bytes = heads != nullptr ? 16u : 0u;
#pragma unroll
        for (int k = 0; k < NV; k++)
            bytes += 16u * (unsigned)chunk(k);
        kb_mbar_expect_tx(bar, bytes);
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (chunk(k) > 0)
                kb_bulk_load(kb_smem_u32(&ring[((i % D) * NV + k) * THREADS]),
                             row + start() + k * stride, 16u * (unsigned)chunk(k), bar);
        if (heads != nullptr)
            kb_bulk_load(kb_smem_u32(&heads[i % D]), row, 16u, bar);
    }
};

/* kb_gpipe_reduce's second level, for a value already reduced over each warp
 * (every lane of warp w holding warp w's). */
template <int THREADS, typename V, typename WARP>
static __device__ __forceinline__ V kb_gpipe_reduce_warps(V w, V (*red)[THREADS / 32], int i,
                                                          V empty, WARP warp)
{
    const int lane = threadIdx.x & 31;
    if (lane == 0)
        red[i & 1][threadIdx.x / 32] = w;
    kb_bar_sync(1, THREADS); /* the streaming threads only */
    return warp(lane < THREADS / 32 ? red[i & 1][lane] : empty);
}

/* Reduces v over the THREADS streaming threads for the block's i-th row with
 * the warp reduction WARP (every lane gets the warp's result), empty lanes
 * contributing `empty`; every thread gets the result. red: __shared__
 * V[2][THREADS / 32], the half of i's parity written: one barrier a row
 * keeps two rows apart. */
template <int THREADS, typename V, typename WARP>
static __device__ __forceinline__ V kb_gpipe_reduce(V v, V (*red)[THREADS / 32], int i, V empty,
                                                    WARP warp)
{
    return kb_gpipe_reduce_warps<THREADS>(warp(v), red, i, empty, warp);
}

/* The exchange warps a block, and their threads (a block is THREADS +
 * KB_GPIPE_XTHREADS threads). */
#define KB_GPIPE_XWARPS 4
#define KB_GPIPE_XTHREADS (32 * KB_GPIPE_XWARPS)
/* The threads of a block of `threads` streaming threads and the exchange warps. */
#define KB_GPIPE_BLOCK(threads) ((threads) + KB_GPIPE_XTHREADS)

/* Slots of the partial and merged rings (see kb_gpipe_run): L + 2, and no
 * fewer than the exchange warps. */
#define KB_GPIPE_R(L) ((L) + 2 > KB_GPIPE_XWARPS ? (L) + 2 : KB_GPIPE_XWARPS)

/* Registers moved from the exchange warps to the streaming threads (RR in
 * kb_gpipe_run; sm_90a's setmaxnreg): a block of THREADS + XTHREADS threads,
 * one an SM, starts with the registers of the SM shared out evenly, in steps
 * of 8 (96 for 640 threads); the exchange warps (one warpgroup) give theirs
 * down to KB_GPIPE_XREG and the streaming threads take them up to
 * kb_gpipe_sreg (104 for 512 of them), so that code with many values live
 * (16-bit GELUs, a chain of nine dependent instructions each) may keep two
 * or more in flight where 96 registers put them one after the other. Where
 * the file is built without sm_90a (the compute_90 PTX) the calls are
 * empty and the registers stay as they are. */
#define KB_GPIPE_XREG 40 /* 32 spilled two values in their row loop (layernorm's fused.cu) */
template <int THREADS> __host__ __device__ constexpr int kb_gpipe_sreg(void)
{
    constexpr int entry = 65536 / KB_GPIPE_BLOCK(THREADS) / 8 * 8;
    constexpr int spare = KB_GPIPE_BLOCK(THREADS) * entry - KB_GPIPE_XTHREADS * KB_GPIPE_XREG;
    constexpr int s = spare / THREADS / 8 * 8;
    static_assert(s >= 24, "setmaxnreg's least");
    return s > 256 ? 256 : s;
}
template <bool RR, bool EXCHANGE, int THREADS>
static __device__ __forceinline__ void kb_gpipe_regs(void)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    static_assert(THREADS % 128 == 0, "setmaxnreg moves a warpgroup's registers");
    if constexpr (RR && EXCHANGE)
        kb_setmaxnreg_dec<KB_GPIPE_XREG>();
    else if constexpr (RR)
        kb_setmaxnreg_inc<kb_gpipe_sreg<THREADS>()>();
#endif
}

/* Runs the pipeline over p's rows of xv (see the header) in a block of
 * THREADS + KB_GPIPE_XTHREADS threads: stats(i) returns the block's partial
 * of its i-th row (every streaming thread calls it; kb_gpipe_reduce inside),
 * merge(row) the row's merged statistics (an exchange warp calls it, lane
 * 0's result is kept), out(j, merged) writes the block's j-th row (every
 * streaming thread), and init() runs once in every streaming thread before
 * its first row, after the first copies are issued (with RR, after the
 * registers moved: what it loads is held in them, not spilled at entry).
 * Ends with the kernel's kb_grid_leave(rows).
 * The ring: slot i % D holds row i; thread 0 copies row i + P into it once
 * every streaming warp has said (empty[s], one arrival a warp after its
 * out(i - L)) that it is done with row i - L, and the streaming threads wait
 * for the copy's bytes on full[s].
 * The exchange: the partial and the merged statistics of row i live in slot
 * i % R of two small rings, each with an mbarrier (one arrival a phase).
 * Thread 0 (every warp's lane 0, with warp partials) writes partial i after
 * stats(i), having waited for merged i - 1 - L, which its exchange warp hands
 * over only after publishing partial i - 1 - L: R >= L + 1 keeps partial i -
 * R published before it is overwritten. Merged i is written only after every
 * block has published row i, so after the streaming threads' barrier in
 * stats(i) (with warp partials: after every warp's arrival for row i), which
 * each passes only after its out(i - 1 - L): R >= L + 1 keeps merged i - R
 * read by then. Neither
 * barrier can be two phases ahead of a waiter for the same reasons. R = L +
 * 2 leaves a row of margin. Nor may a waiter be a phase ahead of its barrier:
 * a wait on the parity of the phase after the current one returns at once.
 * Exchange warp w waits for partial j having done row j - XWARPS, whose
 * partial thread 0 wrote before partial j - R when R >= XWARPS; so R is at
 * least XWARPS (softmax's fp32 ring, L = 1, had R = 3: warp 3 took slot 0's
 * fresh barrier for row 3's partial and published row 0's, and the launch
 * trapped in the exchange's wait, H200 2026-12-02 11:10 UTC). */
/* bench/gpipe_trace.cu builds a variant with KB_GPIPE_TRACE: streaming
 * thread 0 and lane 0 of a row's exchange warp stamp the global timer at the
 * pipeline's edges for each row the block meets, where the trace buffer is
 * set: kb_gpipe_trace[(row * KB_GRID_MAXB + rank) * 16 + k], [15] the SM.
 *   k 0  streaming: at the wait for the row's bytes   5  exchange: merged statistics handed over
 *     1  streaming: past it                           6  streaming: at the wait for them
 *     2  exchange: the block's partials in            7  streaming: past it
 *     3  exchange: published                          8  streaming: the row's stores issued
 *     4  exchange: every block of the row published
 * KB_GPIPE_STAMP is for kb_gpipe_run's body: it takes the block's rank from
 * the pipe there, p, and the buffer's address from kb_trace, read once at
 * the start, so that a stamp is a timer read and a store. (Until 2026-12-06
 * each stamp loaded the address from global memory first, a load that the
 * compiler could not hoist past the mbarriers' asm and that waited behind
 * the row's stores: every phase ending in a stamp read long by up to a
 * load's latency, the most in the stamps after out's stores.) */
#ifdef KB_GPIPE_TRACE
static __device__ unsigned long long *kb_gpipe_trace;
static __device__ __forceinline__ void kb_gpipe_stamp(unsigned long long *trace, int64_t row,
                                                      int rank, int k)
{
    if (trace == nullptr)
        return;
    unsigned long long *t = trace + ((size_t)row * KB_GRID_MAXB + rank) * 16;
    t[k] = kb_globaltimer();
    if (k == 0)
        t[15] = kb_smid();
}
#define KB_GPIPE_STAMP(cond, row, k)                                                      \
    do {                                                                                   \
        if (cond)                                                                          \
            kb_gpipe_stamp(kb_trace, (row), p.rank, (k));                                  \
    } while (0)
#else
#define KB_GPIPE_STAMP(cond, row, k)                                                      \
    do {                                                                                   \
    } while (0)
#endif

/* kb_gpipe_run's `combine` when stats(i) returns the block's partial (the
 * form with one barrier a row). */
struct kb_gpipe_block_partial {};
/* No work of the streaming threads' own before the rows (kb_gpipe_run's init). */
struct kb_gpipe_no_init {
    __device__ void operator()(void) const {}
};

/* AHEAD (warp partials only): before it waits for row j's merged
 * statistics, a streaming warp whose wait would not return at once takes
 * the statistics of the rows after it whose bytes are in (their full[]
 * tested, not waited for), up to row i + P - 1, the last one copied, so
 * that the block publishes them as soon as its own bytes allow and the
 * time the warp would have spent waiting goes to the work of the rows
 * ahead. A warp's statistics then run up to L + P - 1 rows before its out:
 * partial s is written only after out(s - P - L), and merged m only after
 * every warp's partial m, so after out(m - P - L) too; the arguments above
 * then need R >= L + P, and the rings take one slot more, a row of margin
 * as L + 2 leaves over L + 1. */
template <int L, int P, bool AHEAD>
__host__ __device__ constexpr int kb_gpipe_rslots(void)
{
    return AHEAD ? (L + P + 1 > KB_GPIPE_XWARPS ? L + P + 1 : KB_GPIPE_XWARPS) : KB_GPIPE_R(L);
}

/* F1: the exchange warp's release of a row's slot goes out with its next
 * publish, under that publish's fence (kb_grid_publish_release), or after
 * its last row: one fence a row instead of two. The release of row r then
 * comes with the warp's row r + XWARPS G; the slot's next use, row r +
 * KB_GRID_RING, waits for it in its publish, and every wait of that chain
 * is for an older row (XWARPS G < KB_GRID_RING: G is at most the GPU's
 * SMs), so none goes round in a circle. */
template <int L, int P, int THREADS, bool RR = false, bool AHEAD = false, bool F1 = false,
          typename PIPE,
          typename STATS, typename MERGE, typename OUT,
          typename COMBINE = kb_gpipe_block_partial, typename INIT = kb_gpipe_no_init>
static __device__ __forceinline__ void kb_gpipe_run(const PIPE &p, const uint4 *xv, int rows,
                                                    STATS stats, MERGE merge, OUT out,
                                                    COMBINE combine = {}, INIT init = {})
{
    constexpr int R = kb_gpipe_rslots<L, P, AHEAD>(), D = L + P, NW = THREADS / 32;
    /* Warp partials: stats(i) returns the warp's partial (no barrier), each
     * warp's lane 0 writes it and arrives, and the exchange warp combines the
     * NW of them, combine(lane, partials) (every lane; lane 0's kept). */
    constexpr bool WP = !std::is_same<COMBINE, kb_gpipe_block_partial>::value;
#ifdef KB_GPIPE_TRACE
    unsigned long long *const kb_trace = kb_gpipe_trace; /* KB_GPIPE_STAMP's */
#endif
    static_assert(R >= L + 1 && R >= KB_GPIPE_XWARPS, "the exchange's rings (see above)");
    static_assert(!AHEAD || (WP && R >= L + P), "AHEAD: warp partials, and rings of L + P");
    __shared__ float4 part[WP ? R * NW : R], merged[R];
    /* ready[R] (a partial), done[R] (merged), full[D] (a row's bytes), empty[D] */
    __shared__ __align__(8) uint64_t bars[2 * R + 2 * D];
    const uint32_t ready = kb_smem_u32(bars), done = ready + 8 * R, full = done + 8 * R,
                   empty = full + 8 * D;
    if (threadIdx.x == 0) {
        for (int r = 0; r < 2 * R + D; r++)
            kb_mbar_init(ready + 8 * r, WP && r < R ? NW : 1);
        for (int r = 0; r < D; r++)
            kb_mbar_init(empty + 8 * r, NW);
        kb_mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x >= THREADS) { /* the exchange warps: row j is warp j % XWARPS's */
        kb_gpipe_regs<RR, true, THREADS>();
        const int lane = (int)threadIdx.x & 31, xw = ((int)threadIdx.x - THREADS) / 32;
        int64_t held = -1; /* F1: the row whose slot the warp has yet to release */
        for (int j = xw; j < p.nr; j += KB_GPIPE_XWARPS) {
            const int64_t row = p.row_of(j);
            kb_mbar_wait(ready + 8 * (j % R), (unsigned)(j / R) & 1u);
            KB_GPIPE_STAMP(lane == 0, row, 2);
            float4 mine;
            if constexpr (WP)
                mine = combine(lane, &part[(j % R) * NW]);
            else
                mine = part[j % R];
            if (lane == 0) {
                if constexpr (F1)
                    kb_grid_publish_release(row, p.rank, p.S, mine, held);
                else
                    kb_grid_publish<true>(row, p.rank, p.S, mine);
                KB_GPIPE_STAMP(true, row, 3);
                kb_grid_wait(row, p.S);
                KB_GPIPE_STAMP(true, row, 4);
            }
            __syncwarp();
            const float4 r = merge(row);
            __syncwarp(); /* every lane is past its reads of the row's partials */
            if (lane == 0) {
                merged[j % R] = r;
                kb_mbar_arrive(done + 8 * (j % R));
                KB_GPIPE_STAMP(true, row, 5);
                if constexpr (F1)
                    held = row;
                else
                    kb_grid_release<true>(row);
            }
        }
        if (F1 && lane == 0 && held >= 0)
            kb_grid_release<true>(held);
    } else {
        kb_gpipe_regs<RR, false, THREADS>();
        if (p.tid == 0)
            for (int i = 0; i < P && i < p.nr; i++)
                p.prefetch(xv, i, full + 8 * i);
        init();
        /* row r's statistics, handed to its exchange warp */
        const auto take = [&](int r) {
            const float4 w = stats(r);
            if (WP ? (p.tid & 31) == 0 : p.tid == 0) {
                part[WP ? (r % R) * NW + p.tid / 32 : r % R] = w;
                kb_mbar_arrive(ready + 8 * (r % R));
            }
        };
        int s = 0; /* AHEAD: the warp's next row without statistics */
        for (int i = 0; i < p.nr + L; i++) {
            if (i < p.nr && (!AHEAD || s <= i)) {
                KB_GPIPE_STAMP(p.tid == 0, p.row_of(i), 0);
                kb_mbar_wait(full + 8 * (i % D), (unsigned)(i / D) & 1u); /* row i's bytes */
                KB_GPIPE_STAMP(p.tid == 0, p.row_of(i), 1);
                take(i);
                s = i + 1;
            }
            if (i >= L) {
                const int j = i - L;
                if constexpr (AHEAD)
                    for (; s < p.nr && s < i + P; s++) {
                        /* lane 0's tests, so that the warp goes on as one */
                        const bool go = __shfl_sync(
                            KB_FULL_MASK,
                            !kb_mbar_test(done + 8 * (j % R), (unsigned)(j / R) & 1u) &&
                                kb_mbar_test(full + 8 * (s % D), (unsigned)(s / D) & 1u),
                            0);
                        if (!go)
                            break;
                        KB_GPIPE_STAMP(p.tid == 0, p.row_of(s), 0);
                        KB_GPIPE_STAMP(p.tid == 0, p.row_of(s), 1);
                        take(s);
                    }
                KB_GPIPE_STAMP(p.tid == 0, p.row_of(j), 6);
                kb_mbar_wait(done + 8 * (j % R), (unsigned)(j / R) & 1u);
                KB_GPIPE_STAMP(p.tid == 0, p.row_of(j), 7);
                out(j, merged[j % R]);
                __syncwarp(); /* the warp's reads of row j's slot are done */
                KB_GPIPE_STAMP(p.tid == 0, p.row_of(j), 8);
                if ((p.tid & 31) == 0)
                    kb_mbar_arrive(empty + 8 * (j % D));
            }
            const int n = i + P; /* into the slot of row i - L (n - D) */
            if (p.tid == 0 && n < p.nr) {
                if (n >= D)
                    kb_mbar_wait(empty + 8 * (n % D), (unsigned)(n / D - 1) & 1u);
                p.prefetch(xv, n, full + 8 * (n % D));
            }
        }
    }
    kb_grid_leave(rows);
}

/* The blocks to launch kernel k (KB_GPIPE_BLOCK(threads) threads, smem
 * dynamic bytes) for rows split over S blocks each: whole groups of S, as many
 * as the GPU holds at once (kb_grid_capacity_once through *cap), at most one a
 * row. 0 when S is 0 or the GPU holds fewer than S (the pipeline could not
 * progress), and with `filled` also when the groups would leave more than 1/8
 * of the blocks it holds idle (layernorm fp32 200 x 600000: 74 blocks of 132,
 * 1.27x the persistent clusters' time). */
static inline int64_t kb_gpipe_blocks(const void *k, int threads, size_t smem, int S,
                                      int64_t rows, int64_t *cap, bool filled)
{
    if (S <= 0)
        return 0;
    const int64_t c = kb_grid_capacity_once(k, KB_GPIPE_BLOCK(threads), smem, cap);
    const int64_t groups = c / S < rows ? c / S : rows, blocks = groups * S;
    return filled && blocks * 8 < c * 7 ? 0 : blocks;
}

#endif

/* cluster.cuh - what the `cluster` rungs of the row operators (softmax,
 * layernorm) share: a row split across the blocks of a thread-block cluster,
 * each block holding its slice in shared memory.
 *
 * Geometry of a row (kb_slice_of): the row's first element sits at some
 * offset from a 16-byte boundary; up to W - 1 head elements (W = 16 / element
 * size) come before the first boundary, then the body of nv whole 16-byte
 * vectors, then up to W - 1 tail elements. Block `rank` of a cluster of cl
 * owns body vectors [lo, hi), about nv / cl; the first ns of them (as many as
 * its shared memory holds) are copied there by the copy engine in
 * KB_SLICE_CHUNKS pieces, each on its own mbarrier so that work starts on the
 * first piece while the others fly; the rest, [lo + ns, hi), the overflow, is
 * read with ordinary loads twice (statistics, then output), the second time
 * from the L2. The head and tail are the rank 0 block's, element by element.
 *
 * The host plan (kb_cluster_plan_rows) picks the cluster size, the shared
 * memory a block takes and a persistent grid: clusters loop over rows
 * c, c + clusters, ... so that only `clusters` rows are in flight, and, when
 * rows overflow, few enough that their overflow parts stay in the L2 between
 * the two reads (rows in waves sized to the L2).
 *
 * A/B switches (environment, read once per process; unset or out of range:
 * the plan's own choice):
 *   KBENCH_CLUSTER_SIZE=1|2|4|8|16   blocks a cluster (16 where the GPU allows
 *                                    non-portable sizes);
 *   KBENCH_CLUSTER_BPS=1|2           blocks an SM the slice is sized for (1:
 *                                    the most shared memory a block, 2: half,
 *                                    so one block loads while another stores);
 *   KBENCH_CLUSTER_STORE=0|1|2|3     how y leaves the slice: 0 the threads' own
 *                                    16-byte stores, 1 the copy engine, piece by
 *                                    piece (kb_slice_store_piece), so that the
 *                                    next row's copy waits only until the last
 *                                    row's slice is read out; 2 as 1, with the
 *                                    layernorm kernel for rows that fit built
 *                                    for 3 blocks an SM (a few spilled bytes);
 *                                    3 as 0 with that kernel (softmax: 2 and 3
 *                                    as 1 and 0). Unset: softmax 1, layernorm
 *                                    3, each its operator's measured best. */
#ifndef KB_CLUSTER_CUH
#define KB_CLUSTER_CUH

#include <stdint.h>
#include <stdio.h>

#include "kernels/device.cuh"
#include "kernels/hopper.cuh"
#include "kernels/tma.h"

/* Copy-engine pieces a slice arrives in (one mbarrier each). */
#define KB_SLICE_CHUNKS 4
/* The largest cluster the hardware forms (non-portable; 8 is portable). */
#define KB_CLUSTER_MAX 16
#define KB_CLUSTER_PORTABLE 8
/* A block's slice is at least this many bytes when the plan is free to choose:
 * smaller slices only add blocks that wait on one another. */
#define KB_SLICE_MIN_BYTES 8192
/* Plans kb_cluster_plan_rows keeps (a launcher picks from up to two kernels). */
#define KB_PLAN_MEMO 4
/* Shared memory the runtime reserves per block (sm_90: 1 KB). */
#define KB_SMEM_RESERVED 1024

/* ---- device: a row's slices ----------------------------------------------------- */

/* One block's part of one row, in elements from the row's first element and
 * in body vectors (see the file comment). */
struct kb_slice {
    int64_t head;    /* elements before the first 16-byte boundary */
    int64_t nv;      /* whole 16-byte vectors of the body */
    int64_t tail0;   /* first tail element: head + nv W */
    int64_t tail;    /* elements after the body */
    int64_t lo, hi;  /* this block's body vectors */
    int64_t ns;      /* of them, [lo, lo + ns) in shared memory */
};

/* The slice of block rank (of cl) for row `row` of a rows x cols matrix whose
 * base address is 16-byte aligned; capv: the vectors a block's shared memory
 * holds. */
template <typename T>
KB_DEV kb_slice kb_slice_of(int64_t row, int64_t cols, unsigned rank, unsigned cl, int64_t capv)
{
    constexpr int W = kb_vec_width<T>();
    kb_slice s;
    const int64_t mis = row * cols % W;
    s.head = mis ? W - mis : 0;
    s.head = s.head < cols ? s.head : cols;
    s.nv = (cols - s.head) / W;
    s.tail0 = s.head + s.nv * W;
    s.tail = cols - s.tail0;
    const int64_t per = (s.nv + cl - 1) / cl;
    s.lo = (int64_t)rank * per < s.nv ? (int64_t)rank * per : s.nv;
    s.hi = s.lo + per < s.nv ? s.lo + per : s.nv;
    s.ns = s.hi - s.lo < capv ? s.hi - s.lo : capv;
    return s;
}

/* The first vector of piece c (of KB_SLICE_CHUNKS) of ns vectors. */
KB_DEV int64_t kb_slice_piece(int64_t ns, int c)
{
    return ns * c / KB_SLICE_CHUNKS;
}

/* One thread: starts the copy of the ns vectors at src (16-byte aligned) into
 * shared memory at sl, piece c on barrier bar + 8 c. Every barrier gets its
 * one arrival even for an empty piece, so each phase completes. */
KB_DEV void kb_slice_load(uint32_t sl, uint32_t bar, const void *src, int64_t ns)
{
    const char *g = (const char *)src;
    for (int c = 0; c < KB_SLICE_CHUNKS; c++) {
        const int64_t v0 = kb_slice_piece(ns, c), v1 = kb_slice_piece(ns, c + 1);
        const uint32_t bytes = (uint32_t)((v1 - v0) * 16);
        kb_mbar_expect_tx(bar + 8u * (uint32_t)c, bytes);
        if (bytes > 0)
            kb_bulk_load(sl + (uint32_t)(v0 * 16), g + v0 * 16, bytes, bar + 8u * (uint32_t)c);
    }
}

/* One thread: the copy engine writes piece c of the ns vectors at sl (y,
 * computed in place) to dst (16-byte aligned), as one bulk group. The piece's
 * writers have fenced (kb_fence_proxy_async) and met at a block barrier. */
KB_DEV void kb_slice_store_piece(void *dst, uint32_t sl, int64_t ns, int c)
{
    const int64_t v0 = kb_slice_piece(ns, c), v1 = kb_slice_piece(ns, c + 1);
    if (v1 > v0)
        kb_bulk_store((char *)dst + v0 * 16, sl + (uint32_t)(v0 * 16), (uint32_t)((v1 - v0) * 16));
    kb_bulk_commit();
}

/* y from a block's slice at sl (shared address sl0; x as it landed), THREADS
 * threads: each of its sc.ns vectors through y_of(f, v) (f: the vector's W
 * values, in place; v: its vector index in the row's body) to yb, the row's y
 * from the body's first 16-byte boundary. ENGINE: written back into the slice
 * and sent out by the copy engine piece by piece, each piece after the
 * block's barrier (the next row's copy waits for kb_bulk_wait_read); else
 * stored by the threads. */
template <typename T, bool ENGINE, int THREADS, typename F>
KB_DEV void kb_slice_write(uint4 *sl, uint32_t sl0, T *yb, const kb_slice &sc, F y_of)
{
    constexpr int W = kb_vec_width<T>();
    if constexpr (ENGINE) {
        for (int c = 0; c < KB_SLICE_CHUNKS; c++) {
            const int64_t v1 = kb_slice_piece(sc.ns, c + 1);
            for (int64_t j = kb_slice_piece(sc.ns, c) + threadIdx.x; j < v1; j += THREADS) {
                float f[W];
                kb_unpack<T>(sl[j], f);
                y_of(f, sc.lo + j);
                sl[j] = kb_pack<T>(f);
            }
            kb_fence_proxy_async();
            __syncthreads();
            if (threadIdx.x == 0)
                kb_slice_store_piece(yb + sc.lo * W, sl0, sc.ns, c);
        }
    } else {
        for (int64_t j = threadIdx.x; j < sc.ns; j += THREADS) {
            float f[W];
            kb_unpack<T>(sl[j], f);
            y_of(f, sc.lo + j);
            kb_st128(yb + (sc.lo + j) * W, kb_pack<T>(f));
        }
    }
}

/* Initialises the KB_SLICE_CHUNKS barriers at bar (one thread), visible to the
 * copy engine; the caller's next __syncthreads publishes them. */
KB_DEV void kb_slice_init(uint32_t bar)
{
    for (int c = 0; c < KB_SLICE_CHUNKS; c++)
        kb_mbar_init(bar + 8u * (uint32_t)c, 1);
    kb_mbar_fence_init();
}

/* ---- the cluster exchange: a block's partial to its peers, pushed or pulled ---------------------- */

/* One exchange of a 16-byte partial a block between the CL blocks of a
 * cluster, pushed (PUSH, the default: kb_cluster_push) or pulled.
 * Pushed: each block writes its partial into every block's slot `rank` with
 * st.async, counted by the receiver's mbarrier, and waits on its own barrier
 * for all CL of them; no warp fences. Pulled: each block keeps its partial in
 * its own slot, and its peers read it after a cluster barrier with release
 * and acquire (every warp of every block fencing before the barrier, then a
 * round trip to each peer's shared memory). Use: kb_xchg_open after the block
 * has issued its loads, kb_xchg_put when the block's partial is in thread 0
 * (every thread may then kb_xchg_get any block's), kb_xchg_done after the
 * last get, and kb_cluster_wait before the block exits (it meets the arrival
 * in kb_xchg_put or kb_xchg_done, so that no peer reads or writes this
 * block's slots after it has gone). */
template <int CL, bool PUSH> struct kb_xchg {
    float4 part[PUSH ? CL : 1];
    uint64_t bar;
};

/* Thread 0 writes `mine` into slot `rank` of the set of CL slots `set` of
 * every block of the cluster by st.async, each counted by that block's
 * barrier at `bar`, which it arms first for the CL partials it will receive.
 * The caller then waits on its own barrier. */
template <int CL> KB_HDEV void kb_push_partial(float4 *set, uint32_t bar, float4 mine)
{
    if (threadIdx.x == 0) {
        kb_mbar_expect_tx(bar, CL * 16);
        const uint32_t slot = kb_smem_u32(&set[kb_cluster_rank()]);
#pragma unroll
        for (int r = 0; r < CL; r++)
            kb_st_async_f4(kb_cluster_map(slot, (unsigned)r), kb_cluster_map(bar, (unsigned)r),
                           mine);
    }
}

/* Pushed: thread 0 initialises the barrier, every thread arrives, relaxed,
 * on the cluster barrier (met in kb_xchg_put). */
template <int CL, bool PUSH> KB_HDEV void kb_xchg_open(kb_xchg<CL, PUSH> &x)
{
    if constexpr (PUSH) {
        if (threadIdx.x == 0) {
            kb_mbar_init(kb_smem_u32(&x.bar), 1);
            kb_mbar_fence_init();
        }
        kb_cluster_arrive_relaxed();
    }
}

template <int CL, bool PUSH> KB_HDEV void kb_xchg_put(kb_xchg<CL, PUSH> &x, float4 mine)
{
    if constexpr (PUSH) {
        kb_cluster_wait(); /* every peer's barrier is initialised */
        const uint32_t bar = kb_smem_u32(&x.bar);
        kb_push_partial<CL>(x.part, bar, mine);
        kb_mbar_wait(bar, 0);
        kb_cluster_arrive_relaxed(); /* met by the kb_cluster_wait before the exit */
    } else {
        if (threadIdx.x == 0)
            x.part[0] = mine;
        kb_cluster_sync();
    }
}

/* Block r's partial (after kb_xchg_put). */
template <int CL, bool PUSH> KB_HDEV float4 kb_xchg_get(kb_xchg<CL, PUSH> &x, int r)
{
    if constexpr (PUSH)
        return x.part[r];
    else
        return kb_ld_cluster_f4(kb_cluster_map(kb_smem_u32(&x.part[0]), (unsigned)r));
}

/* Pulled: this block is done reading its peers' slots (the arrival its
 * kb_cluster_wait meets). Pushed: nothing left to say. */
template <int CL, bool PUSH> KB_HDEV void kb_xchg_done(kb_xchg<CL, PUSH> &)
{
    if constexpr (!PUSH)
        kb_cluster_arrive();
}

/* The same exchange for a cluster that stays for many rows, one round a row:
 * two sets of CL slots used by alternate rounds, each counted by its own
 * mbarrier (round r: set r % 2, phase r / 2 % 2). A block pushes round r only
 * after every thread of the cluster has arrived, relaxed, past its reads of
 * round r - 1 (kb_xring_begin waits for those arrivals), so a set is never
 * written while a peer may still read it: its reads of round r - 2 came
 * before. The slots' values are merged into registers before the arrival.
 * Use: kb_xring_open once; each round kb_xring_begin (a cluster-wide wait:
 * also every thread of the block has left the previous round, so block-wide
 * scratch may be written again), kb_xring_push with the partial in thread 0
 * (every thread then waits until it can read the round's CL slots), the
 * reads of the slots, kb_xring_end; kb_cluster_wait before the block exits. */
template <int CL> struct kb_xring {
    float4 part[2][CL];
    uint64_t bar[2];
};

template <int CL> KB_HDEV void kb_xring_open(kb_xring<CL> &x)
{
    if (threadIdx.x == 0) {
        kb_mbar_init(kb_smem_u32(&x.bar[0]), 1);
        kb_mbar_init(kb_smem_u32(&x.bar[1]), 1);
        kb_mbar_fence_init();
    }
    kb_cluster_arrive_relaxed();
    kb_cluster_wait(); /* every peer's barriers are initialised */
}

template <int CL> KB_HDEV void kb_xring_begin(int round)
{
    if (round > 0)
        kb_cluster_wait(); /* meets round - 1's kb_xring_end */
}

/* Pushes round `round`'s partial (thread 0's `mine`) and waits for the
 * round's CL partials; returns the address of the round's slots. */
template <int CL> KB_HDEV const float4 *kb_xring_push(kb_xring<CL> &x, int round, float4 mine)
{
    const int set = round & 1;
    const uint32_t bar = kb_smem_u32(&x.bar[set]);
    kb_push_partial<CL>(x.part[set], bar, mine);
    kb_mbar_wait(bar, (unsigned)(round >> 1) & 1u);
    return x.part[set];
}

KB_HDEV void kb_xring_end(void)
{
    kb_cluster_arrive_relaxed();
}

/* ---- host: the switches and the plan ------------------------------------------------------------- */

/* How y leaves the slice (the file comment): KBENCH_CLUSTER_STORE where set,
 * else the operator's own choice dflt (softmax 1, layernorm 3: measured). */
static inline int kb_cluster_store_mode(int dflt)
{
    static const int v = kb_env_int("KBENCH_CLUSTER_STORE", -1, 0, 3);
    return v >= 0 ? v : dflt;
}

/* Whether the row kernels' clusters exchange their partials by kb_xchg
 * (pushed, the default) rather than through a cluster barrier (pulled,
 * KBENCH_CLUSTER_PUSH=0; variants/softmax/fused.cu's header). */
static inline bool kb_cluster_push(void)
{
    static const bool v = kb_env_int("KBENCH_CLUSTER_PUSH", 1, 0, 1) == 1;
    return v;
}

/* How a cluster rung runs a shape. */
struct kb_cluster_plan {
    int cl;          /* blocks a cluster */
    int64_t capv;    /* 16-byte vectors of a block's shared-memory slice */
    size_t smem;     /* dynamic shared memory a block: capv * 16 */
    unsigned grid;   /* blocks: clusters * cl */
    int overflow;    /* 1 when rows do not fit the cluster's shared memory */
};

/* The launch configuration of grid x block in clusters of cl blocks along x,
 * smem bytes of dynamic shared memory, on stream s; *at holds its attribute. */
static inline cudaLaunchConfig_t kb_cluster_config(kb_dim3 grid, kb_dim3 block, size_t smem,
                                                   int cl, cudaStream_t s, cudaLaunchAttribute *at)
{
    cudaLaunchConfig_t cfg = {};
    at->id = cudaLaunchAttributeClusterDimension;
    at->val.clusterDim.x = (unsigned)cl;
    at->val.clusterDim.y = 1;
    at->val.clusterDim.z = 1;
    cfg.gridDim = dim3(grid.x, grid.y, grid.z);
    cfg.blockDim = dim3(block.x, block.y, block.z);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cfg;
}

/* *active = the clusters of cl blocks of kernel k (threads a block, smem bytes
 * of dynamic shared memory) the GPU holds at once; 0 when it cannot place one.
 * Allows k smem bytes of dynamic shared memory first. Returns the CUDA error. */
static inline cudaError_t kb_active_clusters(const void *k, int threads, int cl, size_t smem,
                                             int *active)
{
    cudaLaunchAttribute at;
    const kb_dim3 grid = {(unsigned)cl, 1, 1}, block = {(unsigned)threads, 1, 1};
    const cudaLaunchConfig_t cfg = kb_cluster_config(grid, block, smem, cl, 0, &at);
    *active = 0;
    /* Always allowed, not only past 48 KB: the default limit is 48 KB less
     * the kernel's static shared memory, so a slice just under 48 KB (fp32
     * rows of ~12K elements at one block a row) would not launch. */
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveClusters(active, k, &cfg);
    return e;
}

/* How many clusters of cl blocks of kernel k (threads a block, smem bytes of
 * dynamic shared memory) this GPU holds at once, after allowing k the
 * non-portable cluster size (past KB_CLUSTER_PORTABLE) and its shared memory:
 * 0 when it places none. A refusal is an answer, not an error: the runtime's
 * error state is cleared. Persistent cluster kernels launch that many. */
static inline int kb_cluster_capacity(const void *k, int threads, int cl, size_t smem)
{
    int active = 0;
    const bool ok = (cl <= KB_CLUSTER_PORTABLE ||
                     cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) ==
                         cudaSuccess) &&
                    kb_active_clusters(k, threads, cl, smem, &active) == cudaSuccess;
    (void)cudaGetLastError();
    return ok ? active : 0;
}

/* Whether this GPU places such clusters at all. */
static inline bool kb_cluster_placed(const void *k, int threads, int cl, size_t smem)
{
    return kb_cluster_capacity(k, threads, cl, smem) > 0;
}

/* Whether rows are so few that the largest cluster for each fits on this
 * GPU at once (rows x KB_CLUSTER_MAX <= SMs; false when it cannot say):
 * there a row split over more SMs pays whatever else it costs. */
static inline bool kb_rows_few(int64_t rows)
{
    int sms = 0;
    return kb_current_sms(&sms) == cudaSuccess && rows * KB_CLUSTER_MAX <= sms;
}

/* Blocks a cluster for rows of cols elements of which a block holds per: the
 * fewest (a power of two, at least 2) that hold a row, doubled while rows x
 * blocks leave SMs idle, at most KB_CLUSTER_MAX; 0 when KB_CLUSTER_MAX
 * blocks do not hold a row. */
static inline int kb_cluster_blocks(int64_t rows, int64_t cols, int64_t per)
{
    int cl = 2, sms = 0;
    while (cl < KB_CLUSTER_MAX && cl * per < cols)
        cl *= 2;
    if (cl * per < cols)
        return 0;
    if (kb_current_sms(&sms) == cudaSuccess)
        while (cl < KB_CLUSTER_MAX && rows * cl < sms)
            cl *= 2;
    return cl;
}

/* The plan for kernel k (threads a block) over rows x cols elements of esize
 * bytes: the smallest cluster whose shared memory holds the row (two blocks an
 * SM when that is enough, else one), grown to fill the GPU when rows are few;
 * the largest cluster, one block an SM, and the overflow read twice when no
 * cluster holds it. The largest is 16 blocks where this GPU places 16 with a
 * block's full shared memory, else 8. Allows k its shared memory and the
 * non-portable cluster size. Returns the CUDA error; cudaErrorNotSupported
 * when no cluster of k can be placed on this GPU. */
template <typename... P>
static cudaError_t kb_cluster_plan_rows(void (*k)(P...), int threads, int64_t rows, int64_t cols,
                                        size_t esize, kb_cluster_plan *p)
{
    /* The last plans, kept (one a kernel of the few a launcher picks from):
     * the occupancy queries cost host time inside the timed region, and a
     * case launches the same shape again and again. */
    struct memo {
        const void *k;
        int dev, threads;
        int64_t rows, cols;
        kb_cluster_plan plan;
    };
    static memo last[KB_PLAN_MEMO] = {};
    static unsigned next = 0;
    static const int cl_env = kb_env_int("KBENCH_CLUSTER_SIZE", 0, 1, KB_CLUSTER_MAX);
    static const int bps_env = kb_env_int("KBENCH_CLUSTER_BPS", 0, 1, 2);
    const void *kf = (const void *)k;
    int dev = 0, sms = 0, smem_sm = 0, smem_optin = 0, l2 = 0;
    cudaFuncAttributes fa;
    cudaError_t e = cudaGetDevice(&dev);
    for (int i = 0; e == cudaSuccess && i < KB_PLAN_MEMO; i++)
        if (last[i].k == kf && last[i].dev == dev && last[i].threads == threads &&
            last[i].rows == rows && last[i].cols == cols) {
            *p = last[i].plan;
            return cudaSuccess;
        }
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    if (e == cudaSuccess)
        e = cudaFuncGetAttributes(&fa, kf);
    if (e != cudaSuccess)
        return e;

    /* Bytes of a block's slice at b blocks an SM. */
    auto cap = [&](int b) {
        int64_t c = (int64_t)smem_sm / b - KB_SMEM_RESERVED - (int64_t)fa.sharedSizeBytes;
        const int64_t most = (int64_t)smem_optin - (int64_t)fa.sharedSizeBytes;
        c = c < most ? c : most;
        return c > 16 ? c / 16 * 16 : (int64_t)16;
    };

    /* 16-block clusters where the GPU places them (a refusal is no error). */
    int clmax = KB_CLUSTER_PORTABLE, active = 0;
    if (cudaFuncSetAttribute(kf, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) ==
            cudaSuccess &&
        kb_active_clusters(kf, threads, KB_CLUSTER_MAX, (size_t)cap(1), &active) == cudaSuccess &&
        active > 0)
        clmax = KB_CLUSTER_MAX;
    (void)cudaGetLastError();

    const int64_t row_bytes = cols * (int64_t)esize;
    int cl = 1, bps = 2;
    while (cl < clmax && (int64_t)cl * cap(2) < row_bytes)
        cl *= 2;
    if ((int64_t)cl * cap(2) < row_bytes)
        bps = 1;
    bps = bps_env ? bps_env : bps;
    /* Few rows: more blocks a row, while each slice keeps KB_SLICE_MIN_BYTES. */
    while (cl < clmax && rows * cl < (int64_t)sms * bps &&
           row_bytes / (cl * 2) >= KB_SLICE_MIN_BYTES)
        cl *= 2;
    if (cl_env && cl_env <= clmax && (cl_env & (cl_env - 1)) == 0)
        cl = cl_env;

    /* The slice: no more shared memory than a block's share of the row needs. */
    const int64_t per_block = ((row_bytes + cl - 1) / cl + 15) / 16 + 1; /* vectors, +1: peel */
    const int64_t capv = cap(bps) / 16;
    p->cl = cl;
    p->capv = per_block < capv ? per_block : capv;
    p->smem = (size_t)p->capv * 16;
    p->overflow = per_block > capv;

    /* The persistent grid: the clusters that fit at once, no more than rows. */
    if ((e = kb_active_clusters(kf, threads, cl, p->smem, &active)) != cudaSuccess)
        return e;
    if (active < 1)
        return cudaErrorNotSupported;
    int64_t clusters = active < rows ? active : rows;
    if (p->overflow) {
        /* The overflow of the rows in flight stays within half the L2. */
        const int64_t spill = row_bytes - (int64_t)cl * (int64_t)p->smem;
        const int64_t fit = spill > 0 ? (int64_t)l2 / 2 / spill : clusters;
        clusters = fit < 1 ? 1 : fit < clusters ? fit : clusters;
    }
    p->grid = (unsigned)(clusters * cl);
    last[next++ % KB_PLAN_MEMO] = {kf, dev, threads, rows, cols, *p};
    return cudaSuccess;
}

/* Launches kernel k in clusters of cl blocks (cudaLaunchKernelEx with the
 * cluster-dimension attribute) with grid and block and smem bytes of dynamic
 * shared memory on stream s, passing it args, after noting the launch in
 * a->log as name. Returns the launch's error. */
template <typename... P, typename... A>
static cudaError_t kb_launch_cluster(const kb_args *a, cudaStream_t s, void (*k)(P...),
                                     const char *name, kb_dim3 grid, kb_dim3 block, size_t smem,
                                     int cl, A... args)
{
    kb_note_launch(a->log, (const void *)k, name, grid, block, smem);
    cudaLaunchAttribute at;
    const cudaLaunchConfig_t cfg = kb_cluster_config(grid, block, smem, cl, s, &at);
    const cudaError_t e = cudaLaunchKernelEx(&cfg, k, args...);
    return e != cudaSuccess ? e : cudaGetLastError();
}

/* Whether the current GPU runs the cluster rungs: 0 when it forms thread-block
 * clusters (compute capability 9.0 or later) and the buffers in[0..nin) and
 * out[0..nout) of a start on 16-byte boundaries; 1 when not, with the reason
 * naming `variant` in why (the case is skipped); -1 when asking the runtime
 * failed, with its error in why. */
static inline int kb_cluster_prepare(const kb_args *a, int nin, int nout, const char *variant,
                                     char *why, size_t why_size)
{
    int major, minor;
    if (kb_device_cc(variant, &major, &minor, why, why_size) != 0)
        return -1;
    if (major < 9) {
        snprintf(why, why_size,
                 "%s needs thread-block clusters (compute capability 9.0), this GPU is %d.%d",
                 variant, major, minor);
        return 1;
    }
    uintptr_t u = 0;
    for (int i = 0; i < nin; i++)
        u |= (uintptr_t)a->in[i];
    for (int i = 0; i < nout; i++)
        u |= (uintptr_t)a->out[i];
    if (u % 16 != 0) {
        snprintf(why, why_size, "%s needs buffers on 16-byte boundaries", variant);
        return 1;
    }
    return 0;
}

#endif

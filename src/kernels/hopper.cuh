/* hopper.cuh - the Hopper (sm_90a) machinery the top rungs share, as thin
 * inline-PTX wrappers a reader can match one to one with the PTX ISA:
 *   mbarrier       a 64-bit barrier in shared memory that counts arrivals and,
 *                  for the copy engine, bytes ("transaction count"); waiting
 *                  is on the parity of its phase;
 *   TMA            cp.async.bulk.tensor: the copy engine moves a box of a
 *                  tensor (described by a CUtensorMap made on the host, see
 *                  tma.h) from global into shared memory, swizzling rows in
 *                  16-byte units and zero-filling past the tensor's edges,
 *                  or back from shared into global memory, clipped at them;
 *   wgmma          wgmma.mma_async: a warpgroup (4 consecutive warps) multiplies
 *                  an m64 x k16 A (shared memory, or registers) by a k16 x N B
 *                  from shared memory into fp32 accumulators in registers,
 *                  asynchronously; fence, commit and wait order it;
 *   setmaxnreg     moves registers between warpgroups of one block;
 *   named barriers bar.sync / bar.arrive on ids 1..15 among a subset of the
 *                  block's warps;
 *   clusters       up to 8 (16 non-portable) blocks scheduled together on
 *                  one GPC, which can read each other's shared memory
 *                  (distributed shared memory: mapa, ld.shared::cluster)
 *                  and meet at a cluster-wide barrier; cp.async.bulk copies
 *                  a plain byte range into shared memory on an mbarrier.
 * Shared-memory operands are described by a 64-bit matrix descriptor; every
 * tile here uses the 128-byte swizzle, which wants each tile to start on a
 * 1024-byte boundary (8 rows of 128 bytes: one swizzle atom).
 *
 * Inline device code only; a file that uses wgmma or setmaxnreg must be built
 * for sm_90a (the Makefile's HOPPER_CU list). */
#ifndef KB_HOPPER_CUH
#define KB_HOPPER_CUH

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>

#include "mma.cuh" /* kb_smem_u32 */

#define KB_HDEV __device__ __forceinline__

/* Bytes of one 128-byte-swizzled row, and of one swizzle atom (8 rows). */
#define KB_SW128_ROW 128
#define KB_SW128_ATOM 1024

/* ---- mbarrier ------------------------------------------------------------------ */

/* Initialises the barrier at bar to expect `count` arrivals per phase. */
KB_HDEV void kb_mbar_init(uint32_t bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

/* Makes barrier initialisations visible to the copy engine and other threads
 * (before the __syncthreads that publishes them). */
KB_HDEV void kb_mbar_fence_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* One arrival that also announces `bytes` the copy engine will deliver in this
 * phase: the phase completes when all arrivals and all bytes are in. */
KB_HDEV void kb_mbar_expect_tx(uint32_t bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

/* One plain arrival. */
KB_HDEV void kb_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Waits until the phase of parity `parity` has completed. A fresh barrier is
 * in phase 0, so waiting on parity 1 returns at once ("the phase before"). */
KB_HDEV void kb_mbar_wait(uint32_t bar, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "wait_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_%=;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* Whether the phase of parity `parity` has completed, without waiting. */
KB_HDEV bool kb_mbar_test(uint32_t bar, unsigned parity)
{
    uint32_t r;
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(r)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return r != 0;
}

/* ---- the copy engine (TMA) ------------------------------------------------------ */

/* Fetches a tensor map into the descriptor cache ahead of its first use. */
KB_HDEV void kb_tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

/* Copies the box at coordinates (c0, c1, c2) of a 3-D tensor map into shared
 * memory at dst; its bytes count towards barrier bar's transaction count. */
KB_HDEV void kb_tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1,
                            int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* Has the TMA unit bring the box at (c0, c1, c2) of a 3-D tensor map into the
 * L2, no shared memory and no barrier involved, so that a later load of the
 * box finds it there. */
KB_HDEV void kb_tma_prefetch_3d(const CUtensorMap *map, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* The same copy multicast: the box lands at the same shared-memory offset in
 * every block of the cluster named in cta_mask, and completes bytes on the
 * barrier at bar's offset in each of them. */
KB_HDEV void kb_tma_load_3d_multicast(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0,
                                      int c1, int c2, uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
                 : "memory");
}

/* Copies the box at smem src into the 3-D tensor map's box at (c0, c1, c2);
 * parts past the tensor's edges are not written. Joins the thread's current
 * bulk group (kb_bulk_commit). Shared-memory writes by ordinary stores must be
 * made visible to the copy engine first (kb_fence_proxy_async). */
KB_HDEV void kb_tma_store_3d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group"
                 " [%0, {%2, %3, %4}], [%1];\n" ::"l"(map),
                 "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* Closes this thread's bulk copies issued since the last commit into a group. */
KB_HDEV void kb_bulk_commit(void)
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's bulk groups still read shared memory. */
template <int N> KB_HDEV void kb_bulk_wait_read(void)
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

/* Waits until at most N of this thread's bulk groups are still in flight. */
template <int N> KB_HDEV void kb_bulk_wait(void)
{
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Orders this thread's ordinary shared-memory writes before later copies by
 * the copy engine (the async proxy). */
KB_HDEV void kb_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Stores four 8 x 8 matrices of 16-bit elements into shared memory, the
 * warp's registers in the mma accumulator layout (thread t holds row t / 4,
 * columns 2 (t % 4) and the next, of matrix i in r[i]); thread t gives the
 * address of row t % 8 of matrix t / 8 (stmatrix). */
KB_HDEV void kb_stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* A 16-byte load from this block's shared memory at addr. */
KB_HDEV uint4 kb_lds_v4(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* ---- thread-block clusters ------------------------------------------------------------ */

/* This block's rank in its cluster. */
KB_HDEV unsigned kb_cluster_rank(void)
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* One arrival on the barrier at shared address bar of cluster block `rank`
 * (this block's own included), with the default semantics (release at CTA
 * scope): enough to say "this slot's reads are done" (the reads were the
 * tensor cores', already waited for); a cluster-scope release would make each
 * arrival wait for the thread's memory operations to reach the cluster. */
KB_HDEV void kb_mbar_arrive_cluster(uint32_t bar, unsigned rank)
{
    asm volatile("{\n.reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

/* The same arrival on the barrier at bar of the other block of a cluster of
 * two (rank ^ 1), the rank read in the asm so that no register holds it. */
KB_HDEV void kb_mbar_arrive_peer(uint32_t bar)
{
    asm volatile("{\n.reg .b32 peer, remote;\n"
                 "mov.u32 peer, %%cluster_ctarank;\n"
                 "xor.b32 peer, peer, 1;\n"
                 "mapa.shared::cluster.u32 remote, %0, peer;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar)
                 : "memory");
}

/* Every thread of every block of the cluster meets here (what each wrote to
 * shared memory before is visible to the others after). Not .aligned: the
 * threads of a warp may arrive from different branches. */
KB_HDEV void kb_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* An arrival with no memory ordering: for a barrier that only says "this
 * block has started" or "this block is past its exchange", where what the
 * others need was ordered by other means (an mbarrier's transactions, a
 * fence). */
KB_HDEV void kb_cluster_arrive_relaxed(void)
{
    asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory");
}

/* Writes v at addr, in another cluster block's shared memory (kb_cluster_map),
 * and counts its 16 bytes towards the transactions of that block's barrier at
 * bar (mapped alike) (st.async): the receiver learns of the data from its own
 * barrier, no cluster-wide fence or barrier on the way. */
KB_HDEV void kb_st_async_f4(uint32_t addr, uint32_t bar, float4 v)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], "
                 "{%2, %3, %4, %5}, [%1];\n" ::"r"(addr),
                 "r"(bar), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}

/* The number of blocks in this block's cluster (1 when launched without one). */
KB_HDEV unsigned kb_cluster_size(void)
{
    unsigned n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
    return n;
}

/* The two halves of kb_cluster_sync, so that work can go on between them:
 * every thread of the cluster must call them alternately, arrive first. */
KB_HDEV void kb_cluster_arrive(void)
{
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}

KB_HDEV void kb_cluster_wait(void)
{
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* Distributed shared memory: the address, in the cluster's shared window, of
 * the variable at shared address addr of this block as it lies in cluster
 * block `rank` (mapa), and a 16-byte load from such an address. */
KB_HDEV uint32_t kb_cluster_map(uint32_t addr, unsigned rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

KB_HDEV float4 kb_ld_cluster_f4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* Copies `bytes` (a multiple of 16) from global src (16-byte aligned) into
 * this block's shared memory at dst (16-byte aligned) with the copy engine,
 * no registers involved (cp.async.bulk, plain sm_90); the bytes count
 * towards barrier bar's transaction count. */
KB_HDEV void kb_bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* Copies `bytes` (a multiple of 16) from this block's shared memory at src
 * (16-byte aligned) to global dst (16-byte aligned) with the copy engine, in
 * this thread's current bulk group (kb_bulk_commit closes it; kb_bulk_wait_read
 * says when src may be written again). Ordinary stores to src must be made
 * visible to the copy engine first (kb_fence_proxy_async, then a barrier). */
KB_HDEV void kb_bulk_store(void *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
                 "r"(src), "r"(bytes)
                 : "memory");
}

/* ---- named barriers and register reallocation -------------------------------------- */

/* Waits at barrier id until `threads` threads have arrived (this one included). */
KB_HDEV void kb_bar_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* Arrives at barrier id without waiting. */
KB_HDEV void kb_bar_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* This warpgroup's registers per thread become N (a multiple of 8, 24..256);
 * every thread of the warpgroup must execute the same call. */
template <int N> KB_HDEV void kb_setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N> KB_HDEV void kb_setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* ---- wgmma ------------------------------------------------------------------------ */

/* The matrix descriptor of a 128-byte-swizzled operand at shared address addr:
 * lbo = bytes between swizzle atoms along M/N (used by MN-major operands),
 * sbo = bytes between groups of 8 rows (K-major) or of 8 k (MN-major). */
KB_HDEV uint64_t kb_wgmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)((lbo & 0x3ffff) >> 4) << 16 |
           (uint64_t)((sbo & 0x3ffff) >> 4) << 32 | (uint64_t)1 << 62;
}

/* desc with delta added to its low word (the start address in 16-byte units
 * at bits 0-13, the leading byte offset at bits 16-29), the high word kept. */
KB_HDEV uint64_t kb_wgmma_desc_add_lo(uint64_t desc, uint32_t delta)
{
    return (desc & 0xffffffff00000000ull) | (uint32_t)((uint32_t)desc + delta);
}

/* desc moved bytes (a multiple of 16) along shared memory. The start address
 * is bits 0-13 of the low word (address >> 4, shared addresses below 2^18),
 * so while the moved address stays below 2^18 this is one 32-bit add that
 * never carries into the leading byte offset at bit 16: a loop can encode a
 * descriptor once and move it, instead of encoding every operand's address. */
KB_HDEV uint64_t kb_wgmma_desc_add(uint64_t desc, uint32_t bytes)
{
    return kb_wgmma_desc_add_lo(desc, bytes >> 4);
}

/* Before the first wgmma that reads registers written by ordinary code. */
KB_HDEV void kb_wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/* Closes the wgmmas issued since the last commit into one group. */
KB_HDEV void kb_wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most N committed groups of this warpgroup are in flight. */
template <int N> KB_HDEV void kb_wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Keeps the compiler from moving reads or writes of registers an in-flight
 * wgmma owns across this point (a no-op instruction that "uses" them). */
template <int N> KB_HDEV void kb_fence_regs(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(r[i])::"memory");
}

template <int N, int M> KB_HDEV void kb_fence_regs(uint32_t (&r)[N][M])
{
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int j = 0; j < M; j++)
            asm volatile("" : "+r"(r[i][j])::"memory");
}

/* The accumulator operand lists: 128, 88, 64, 36 or 32 fp32 registers of d, read and written. */
#define KB_ACC8(d, i)                                                                          \
    "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]),  \
        "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define KB_ACC32(d) KB_ACC8(d, 0), KB_ACC8(d, 8), KB_ACC8(d, 16), KB_ACC8(d, 24)
#define KB_ACC36(d)                                                                            \
    KB_ACC32(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define KB_ACC64(d) KB_ACC32(d), KB_ACC8(d, 32), KB_ACC8(d, 40), KB_ACC8(d, 48), KB_ACC8(d, 56)
#define KB_ACC88(d) KB_ACC64(d), KB_ACC8(d, 64), KB_ACC8(d, 72), KB_ACC8(d, 80)
#define KB_ACC128(d)                                                                           \
    KB_ACC64(d), KB_ACC8(d, 64), KB_ACC8(d, 72), KB_ACC8(d, 80), KB_ACC8(d, 88), KB_ACC8(d, 96),  \
        KB_ACC8(d, 104), KB_ACC8(d, 112), KB_ACC8(d, 120)
#define KB_REGS128 \
    "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
    "}"
#define KB_REGS88                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "     \
    "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "     \
    "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "     \
    "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}"
#define KB_REGS32                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define KB_REGS36                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35}"
#define KB_REGS64                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
    "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "     \
    "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "     \
    "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

/* d (64 x N fp32, N / 2 registers a thread) = [d +] A B: A 64 x 16 and B 16 x
 * N both from shared memory, both K-major (rows of k contiguous); scale_d 0
 * overwrites d. ACC and REGS are d's operand list and register names, OPS the
 * numbers of the operands after them (da, db, scale_d). */
#define KB_WGMMA_SS(N, NR, ACC, REGS, DA, DB, SC)                                              \
    template <typename T>                                                                      \
    KB_HDEV void kb_wgmma_m64n##N##k16_ss(float(&d)[NR], uint64_t da, uint64_t db, int scale_d) \
    {                                                                                          \
        if constexpr (std::is_same<T, __nv_bfloat16>::value)                                   \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\n"                       \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 " REGS        \
                         ", " DA ", " DB ", p, 1, 1, 0, 0;\n}\n"                                 \
                         : ACC(d)                                                              \
                         : "l"(da), "l"(db), "r"(scale_d));                                   \
        else                                                                                   \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\n"                       \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 " REGS          \
                         ", " DA ", " DB ", p, 1, 1, 0, 0;\n}\n"                                 \
                         : ACC(d)                                                              \
                         : "l"(da), "l"(db), "r"(scale_d));                                   \
    }
/* the matrix product's widest tile */
KB_WGMMA_SS(256, 128, KB_ACC128, KB_REGS128, "%128", "%129", "%130")
/* attention's S for 128 keys a tile */
KB_WGMMA_SS(128, 64, KB_ACC64, KB_REGS64, "%64", "%65", "%66")
/* attention's S for 176 keys a tile */
KB_WGMMA_SS(176, 88, KB_ACC88, KB_REGS88, "%88", "%89", "%90")
/* attention's S for a tile's first 64 keys */
KB_WGMMA_SS(64, 32, KB_ACC32, KB_REGS32, "%32", "%33", "%34")

/* d (64 x N fp32, N / 2 registers a thread) = [d +] A B: A 64 x 16 from
 * registers (the m16n8k16 A-fragment layout per warp, four 16-bit pairs), B
 * 16 x N from shared memory, MN-major (rows of n contiguous). ACC and REGS as
 * in KB_WGMMA_SS; A0..A3, DB and SC the numbers of the operands after d. */
#define KB_WGMMA_RS(N, NR, ACC, REGS, A0, A1, A2, A3, DB, SC)                                   \
    template <typename T>                                                                      \
    KB_HDEV void kb_wgmma_m64n##N##k16_rs(float(&d)[NR], const uint32_t(&a)[4], uint64_t db,    \
                                          int scale_d)                                         \
    {                                                                                          \
        if constexpr (std::is_same<T, __nv_bfloat16>::value)                                   \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\n"                       \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 " REGS        \
                         ", {" A0 ", " A1 ", " A2 ", " A3 "}, " DB ", p, 1, 1, 1;\n}\n"            \
                         : ACC(d)                                                              \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d)); \
        else                                                                                   \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SC ", 0;\n"                       \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 " REGS          \
                         ", {" A0 ", " A1 ", " A2 ", " A3 "}, " DB ", p, 1, 1, 1;\n}\n"            \
                         : ACC(d)                                                              \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d)); \
    }
/* attention's O += P V at dim 128 */
KB_WGMMA_RS(128, 64, KB_ACC64, KB_REGS64, "%64", "%65", "%66", "%67", "%68", "%69")
/* ... at dim 64 */
KB_WGMMA_RS(64, 32, KB_ACC32, KB_REGS32, "%32", "%33", "%34", "%35", "%36", "%37")
/* ... at dim 64 with 8 more columns (a 64-column swizzle atom and 8 columns
 * of the next, lbo away), which flash attention fills with ones to sum P's
 * rows */
KB_WGMMA_RS(72, 36, KB_ACC36, KB_REGS36, "%36", "%37", "%38", "%39", "%40", "%41")

#endif

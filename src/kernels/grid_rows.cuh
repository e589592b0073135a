/* grid_rows.cuh - a row split across ordinary blocks of a grid, the blocks'
 * partial statistics met in global memory (the L2), for rows longer than a
 * thread-block cluster holds.
 *
 * A cluster of 16 blocks holds at most 16 SMs' registers and shared memory,
 * and 16-block clusters fit only where a GPC has 16 free SMs (the H200 places
 * 7 at once: 112 of its 132 SMs). Past that (fp32 rows of 1048576 elements
 * are 4 MB) a row is split over as many blocks as it needs, nb a row, any
 * block on any SM: block `rank` of row `row` holds its share in registers
 * (and shared memory), reduces it, publishes its partial in a slot of global
 * memory and waits until the row's nb partials are in; then every warp merges
 * them in one fixed order (every block gets the same bits) and the block
 * writes its share of y. The row crosses DRAM once each way, as in a cluster.
 *
 * Order and progress. Blocks run in any order, so a block takes its work item
 * from a counter (an atomic ticket) rather than from blockIdx: items are
 * row-major (row = item / nb, rank = item % nb), so every item below a block's
 * own was taken by a block that is running or done. A block waits only on the
 * blocks of its own row, which have published before waiting; if every
 * resident block waited, all of them would belong to the one row whose items
 * are not all taken, which cannot happen while the GPU holds at least nb
 * blocks at once (the launcher asks the occupancy calculator for twice that).
 * No other kernel may run beside a launch that takes the GPU's capacity away
 * (kbench runs one at a time).
 *
 * Slots. Rows in flight use a ring of KB_GRID_RING slots of KB_GRID_MAXB
 * partials, row r slot r % KB_GRID_RING; the counters of a slot only grow
 * within a launch (generation g = r / KB_GRID_RING waits for (g + 1) nb
 * arrivals, and publishes only after the g nb readers of the generation
 * before have finished with the slot), and the last block to leave puts every
 * counter back to 0 for the next launch (in the trimmed exit below, the last
 * release of each slot puts that slot's back). A wait that outlasts ~2^26
 * polls traps (the launch fails with an error) rather than hanging the
 * process.
 * The state is one per translation unit: two launches of the same operator
 * must not run at once. */
#ifndef KB_GRID_ROWS_CUH
#define KB_GRID_ROWS_CUH

#include <stdint.h>

#include "kernels/device.cuh"

/* Rows whose exchange may be in flight at once, and blocks a row at most (a
 * file may define KB_GRID_MAXB before including this one: the state is its
 * own). */
#define KB_GRID_RING 1024
#ifndef KB_GRID_MAXB
#define KB_GRID_MAXB 64
#endif

struct kb_grid_state {
    unsigned ticket, left;
    unsigned arrive[KB_GRID_RING];
    unsigned done[KB_GRID_RING];
    float4 part[KB_GRID_RING][KB_GRID_MAXB];
};

static __device__ kb_grid_state kb_grid;

static __device__ __forceinline__ unsigned kb_ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Adds v to *p, the old value returned: acq_rel (the thread's later loads
 * wait for the add), or without ACQ release only (the thread waits for the
 * value only where it uses it). */
template <bool ACQ = true>
static __device__ __forceinline__ unsigned kb_add_ordered(unsigned *p, unsigned v)
{
    unsigned old;
    if (!ACQ)
        asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(p), "r"(v)
                     : "memory");
    else
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(p), "r"(v)
                     : "memory");
    return old;
}

/* Adds v to *p with release semantics, nothing returned: the thread does
 * not wait for the add (kb_add_ordered's acq_rel form makes its later loads
 * wait for it). */
static __device__ __forceinline__ void kb_red_release(unsigned *p, unsigned v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Adds 1 to *p, relaxed, nothing returned: after kb_fence_gpu, a release. */
static __device__ __forceinline__ void kb_red_relaxed_1(unsigned *p)
{
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

/* The thread's memory operations before it ordered before those after it,
 * at the GPU's scope. */
static __device__ __forceinline__ void kb_fence_gpu(void)
{
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

/* Thread 0 waits until *p >= n (acquire); traps after ~2^26 polls. */
static __device__ __forceinline__ void kb_grid_until(const unsigned *p, unsigned n)
{
    for (unsigned i = 0; kb_ld_acquire(p) < n; i++) {
        if (i > 64)
            __nanosleep(64);
        if (i == (1u << 26))
            __trap();
    }
}

/* This block's work item (every thread gets it; one block barrier). RESET
 * (the trimmed exit, below): the block that draws the last ticket puts the
 * ticket back to 0, every other block having drawn its own. */
template <bool RESET = false> static __device__ __forceinline__ unsigned kb_grid_take(void)
{
    __shared__ unsigned item;
    if (threadIdx.x == 0) {
        const unsigned t = atomicAdd(&kb_grid.ticket, 1u);
        if (RESET && t == gridDim.x - 1)
            kb_grid.ticket = 0;
        item = t;
    }
    __syncthreads();
    return item;
}

/* Thread 0 publishes `mine` as block `rank` of row `row` split over nb
 * blocks (after the generation before has finished with the slot); RED: the
 * count raised by kb_red_release, which the thread does not wait for. */
/* Row `row`'s slot, once the generation before (row - KB_GRID_RING's nb
 * blocks) has finished with it. */
static __device__ __forceinline__ unsigned kb_grid_slot(int64_t row, int nb)
{
    const unsigned slot = (unsigned)(row % KB_GRID_RING);
    const unsigned gen = (unsigned)(row / KB_GRID_RING);
    if (gen > 0)
        kb_grid_until(&kb_grid.done[slot], gen * (unsigned)nb);
    return slot;
}

template <bool RED = false>
static __device__ __forceinline__ void kb_grid_publish(int64_t row, int rank, int nb, float4 mine)
{
    const unsigned slot = kb_grid_slot(row, nb);
    __stcg(&kb_grid.part[slot][rank], mine);
    if (RED)
        kb_red_release(&kb_grid.arrive[slot], 1u);
    else
        kb_add_ordered(&kb_grid.arrive[slot], 1u);
}

/* kb_grid_publish's RED form that also releases the slot of row `held`
 * (when >= 0), whose partials the thread has read: the partial's store and
 * those reads ordered before both adds by one fence, where
 * kb_grid_publish and kb_grid_release fence each (the form of one fence a
 * row; grid_pipe.cuh). */
static __device__ __forceinline__ void kb_grid_publish_release(int64_t row, int rank, int nb,
                                                               float4 mine, int64_t held)
{
    const unsigned slot = kb_grid_slot(row, nb);
    __stcg(&kb_grid.part[slot][rank], mine);
    kb_fence_gpu();
    kb_red_relaxed_1(&kb_grid.arrive[slot]);
    if (held >= 0)
        kb_red_relaxed_1(&kb_grid.done[held % KB_GRID_RING]);
}

/* Thread 0 waits until row `row`'s nb partials are in. */
static __device__ __forceinline__ void kb_grid_wait(int64_t row, int nb)
{
    kb_grid_until(&kb_grid.arrive[row % KB_GRID_RING],
                  (unsigned)(row / KB_GRID_RING + 1) * (unsigned)nb);
}

/* Publishes this block's partial `mine` (thread 0's) as block `rank` of row
 * `row` split over nb blocks, then waits for the row's nb partials; every
 * thread may then kb_grid_get them. Block barrier inside. RED as in
 * kb_grid_publish (the poll then starts without the add's round trip). */
template <bool RED = false>
static __device__ __forceinline__ void kb_grid_put(int64_t row, int rank, int nb, float4 mine)
{
    if (threadIdx.x == 0) {
        kb_grid_publish<RED>(row, rank, nb, mine);
        kb_grid_wait(row, nb);
    }
    __syncthreads();
}

/* Block r's partial of row `row` (after kb_grid_put). */
static __device__ __forceinline__ float4 kb_grid_get(int64_t row, int r)
{
    return __ldcg(&kb_grid.part[row % KB_GRID_RING][r]);
}

/* Thread 0 says the block is done with row `row`'s slot (after a block
 * barrier that every thread reached past its gets); RED as in
 * kb_grid_publish. */
template <bool RED = false> static __device__ __forceinline__ void kb_grid_release(int64_t row)
{
    if (RED)
        kb_red_release(&kb_grid.done[row % KB_GRID_RING], 1u);
    else
        kb_add_ordered(&kb_grid.done[row % KB_GRID_RING], 1u);
}

/* The block is done with row `row`'s slot (every thread past its gets; one
 * block barrier). */
static __device__ __forceinline__ void kb_grid_done(int64_t row)
{
    __syncthreads();
    if (threadIdx.x == 0)
        kb_grid_release(row);
}

/* The block leaves a launch of `rows` rows; the last to leave (every other
 * block has left, all tickets are taken) zeroes the counters. Every thread
 * calls it; one block barrier, whose vote says which block is last (no flag
 * in shared memory: a kernel whose warps take different roles may reach the
 * call from two places, which racecheck took for a race on such a flag). */
static __device__ __forceinline__ void kb_grid_leave(int64_t rows)
{
    if (__syncthreads_or(threadIdx.x == 0 &&
                         kb_add_ordered(&kb_grid.left, 1u) == gridDim.x - 1)) {
        const int64_t n = rows < KB_GRID_RING ? rows : KB_GRID_RING;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            kb_grid.arrive[i] = 0;
            kb_grid.done[i] = 0;
        }
        if (threadIdx.x == 0) {
            kb_grid.ticket = 0;
            kb_grid.left = 0;
        }
    }
}

/* ---- the trimmed exit (softmax's grid path; KBENCH_SOFTMAX_GRID_TRIM=0 turns it off) ----
 * kb_grid_leave holds every block at its end for a round trip to the L2
 * (the `left` count, behind a block barrier), and kb_grid_done holds warp 0
 * for another before its stores; under the grid's DRAM traffic such a trip
 * takes microseconds. Here nothing waits on them: the ticket goes back to 0
 * in kb_grid_take<true>, and each slot's counters are put back by the block
 * whose release of the slot is the slot's last of the launch (nb releases
 * for each of the launch's rows that take the slot), which thread 0 learns
 * from its add's old value, read only at the block's end. */

/* The block is done with row `row`'s slot (every thread past its gets; one
 * block barrier); thread 0 gets the slot's release count before its own,
 * for kb_grid_finish (the other threads 0). */
static __device__ __forceinline__ unsigned kb_grid_done_count(int64_t row)
{
    __syncthreads();
    return threadIdx.x == 0 ? kb_add_ordered<false>(&kb_grid.done[row % KB_GRID_RING], 1u) : 0u;
}

/* Thread 0 at the block's end, in a launch of `rows` rows of nb blocks:
 * where its release of row `row`'s slot (old: kb_grid_done_count's) was the
 * slot's last, every other block's use of the slot happened before it
 * (their releases, acquired here), and the slot's counters go back to 0. */
static __device__ __forceinline__ void kb_grid_finish(int64_t row, int64_t rows, int nb,
                                                      unsigned old)
{
    const int64_t slot = row % KB_GRID_RING;
    const unsigned uses = (unsigned)((rows - 1 - slot) / KB_GRID_RING + 1);
    if (old == uses * (unsigned)nb - 1u) {
        kb_fence_gpu();
        kb_grid.arrive[slot] = 0;
        kb_grid.done[slot] = 0;
    }
}

/* Blocks a row of `vectors` 16-byte vectors takes at `per` vectors a block
 * (the launcher's grid and the kernel's rank agree through it). */
static __host__ __device__ __forceinline__ int64_t kb_grid_row_blocks(int64_t vectors,
                                                                      int64_t per)
{
    return (vectors + per - 1) / per;
}

/* The same, 0 when more than KB_GRID_MAXB. */
static inline int kb_grid_blocks(int64_t vectors, int64_t per)
{
    const int64_t nb = kb_grid_row_blocks(vectors, per);
    return nb <= KB_GRID_MAXB ? (int)nb : 0;
}

/* Blocks of kernel k (threads, smem dynamic bytes, already allowed) the GPU
 * holds at once, 0 when it cannot say; the grid path's progress needs nb of
 * them, and its launchers ask for 2 nb. */
static inline int64_t kb_grid_capacity(const void *k, int threads, size_t smem)
{
    int per_sm = 0, sms = 0;
    if (kb_current_sms(&sms) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (int64_t)per_sm * sms;
}

/* kb_grid_capacity of kernel k after letting it take smem bytes of dynamic
 * shared memory, asked once through *cap (-1 before the first call; 0 when
 * the runtime cannot say): the queries cost host time in the timed region. */
static inline int64_t kb_grid_capacity_once(const void *k, int threads, size_t smem, int64_t *cap)
{
    if (*cap < 0)
        *cap = kb_allow_smem_once(k, smem) == cudaSuccess ? kb_grid_capacity(k, threads, smem) : 0;
    return *cap;
}

#endif

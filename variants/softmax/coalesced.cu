/* coalesced.cu - softmax with a warp per row: lane l reads elements l, l + 32,
 * l + 64, ... so each warp-wide load is one contiguous 128-byte line (fp32) or
 * 64 bytes (16-bit). Still three passes over global memory (max, sum of
 * exp(x - max), write: naive's sm_three_passes, by 32 lanes); the two row
 * reductions are warp shuffles (__shfl_xor_sync butterflies), no shared
 * memory and no barriers.
 *
 * Idea: same arithmetic and the same passes as naive, only the access pattern
 * changes, so the difference between the two is what coalescing is worth.
 * Warps per row also multiply the threads in flight by 32.
 *
 * Budget: 256 threads (8 rows) per block, 32 registers, no shared
 * memory: full occupancy (64 warps per SM) from the resources' side.
 *
 * Bytes per element: x read three times, y written once: 4 * size against the
 * model's 2 * size. A warp streams its whole 16 KB row before reading it
 * again, and 132 x 64 resident warps hold 8448 rows (135 MB) in flight, more
 * than twice the 60 MB L2: most re-reads go back to DRAM.
 *
 * Prediction at 32768 x 4096 fp32: about 35-50% of the copy bandwidth: close
 * to twice the model's DRAM traffic, with enough 4-byte loads in flight
 * (full occupancy, 4 per thread after unrolling) to run that traffic near
 * the copy rate; the L2 hits that remain are the upside.
 *
 * Measured (H200, 2026-11-29): 514.1 us at 32768 x 4096 fp32, 49.8% of the
 * copy bandwidth, inside the prediction; DRAM runs at 4189 GB/s measured, the
 * copy rate, and the counters confirm why the table says half: 2.01x the
 * model's bytes, every re-read from DRAM. bf16 43.2%. */
#include "softmax.cuh"

#define COAL_THREADS 256
#define COAL_ROWS (COAL_THREADS / 32) /* rows per block: one per warp */

template <typename T>
__global__ void __launch_bounds__(COAL_THREADS)
    softmax_coalesced_rows(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols)
{
    const int lane = threadIdx.x % 32;
    const int64_t r = (int64_t)blockIdx.x * COAL_ROWS + threadIdx.x / 32;
    /* The whole warp leaves together, so the shuffles see all 32 lanes. */
    if (r >= rows)
        return;
    sm_three_passes<32>(x + r * cols, y + r * cols, cols, lane);
}

template <typename T> static cudaError_t launch(const kb_args *a, cudaStream_t s)
{
    return sm_launch<T>(a, s, softmax_coalesced_rows<T>, "softmax_coalesced_rows", COAL_THREADS,
                        COAL_ROWS);
}

/* Launches the warp-per-row softmax of a->in[0] into a->out[0] on stream s.
 * Returns the launch's error, or cudaErrorInvalidValue for an unknown dtype. */
extern "C" cudaError_t kb_softmax_coalesced(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch, a, s)
}

/* A softmax variant of your own, started by `kbench new softmax NAME`.
 *
 * Run it beside the built-in ladder, and again on every save:
 *   kbench run softmax --variants fused,./NAME.cu --watch
 *
 * The operator (see kbench/variant.h): in[0] = x, out[0] = y, both rows x cols
 * of a->dtype, row-major; y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r)
 * along each row.
 *
 * Idea of this starting point: a block of 256 threads per row, three passes
 * over the row in global memory (the max, the sum of exponentials, the write),
 * each block-wide reduction through a warp shuffle and a few floats of shared
 * memory. Correct for every shape and dtype; not fast (x is read three times,
 * and the element type is switched on per element). Ideas to try: keep the
 * row in registers, one read and one write; the online normaliser (max and sum
 * in one pass); a warp per row for short rows; 16-byte vector loads; a
 * template per element type. */
#include <kbench/variant.h>
#include <math.h>

const int kbench_variant_abi = KBENCH_VARIANT_ABI;
const char kbench_operator[] = "softmax";
const char kbench_summary[] = "a block per row, three passes, block reductions (starting point)";
const unsigned kbench_dtypes = KBENCH_DT_ALL;

#define THREADS 256
#define WARPS (THREADS / 32)

/* The block's maximum (is_max) or sum of v, in every thread. partial holds a
 * float per warp; every thread of the block must call this. */
__device__ float block_reduce(float v, bool is_max, float *partial)
{
    for (int o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = partial[0];
    for (int i = 1; i < WARPS; i++)
        v = is_max ? fmaxf(v, partial[i]) : v + partial[i];
    __syncthreads(); /* partial is reused by the next reduction */
    return v;
}

__global__ void __launch_bounds__(THREADS)
    softmax_rows(const void *x, void *y, kbench_dtype d, int64_t cols)
{
    __shared__ float partial[WARPS];
    const int64_t first = (int64_t)blockIdx.x * cols;

    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        m = fmaxf(m, kbench_load(x, d, first + c));
    m = block_reduce(m, true, partial);

    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        sum += expf(kbench_load(x, d, first + c) - m);
    sum = block_reduce(sum, false, partial);

    const float inv = 1.0f / sum;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        kbench_store(y, d, first + c, expf(kbench_load(x, d, first + c) - m) * inv);
}

/* One block per row (rows is at most 2^31 - 1, the grid's limit). */
extern "C" cudaError_t kbench_launch(const kbench_args *a, cudaStream_t s)
{
    const int64_t rows = a->shape[0], cols = a->shape[1];
    softmax_rows<<<(unsigned)rows, THREADS, 0, s>>>(a->in[0], a->out[0], a->dtype, cols);
    return cudaGetLastError();
}

/* A layernorm variant of your own, started by `kbench new layernorm NAME`.
 *
 * Run it beside the built-in ladder, and again on every save:
 *   kbench run layernorm --variants fused,./NAME.cu --watch
 *
 * The operator (see kbench/variant.h): per row of x (rows x cols),
 *   y = GELU((x - mean) * rstd * gamma + beta + b),  rstd = 1 / sqrt(var + 1e-5)
 * with the biased variance; in[0] = x, in[1] = gamma, in[2] = beta, in[3] = b
 * (cols each), out[0] = y, all of a->dtype; with stats = 1 also out[1] = mean
 * and out[2] = rstd, one fp32 per row (NULL when stats = 0). The gelu axis
 * picks the exact GELU (0) or the tanh approximation (1). The mean axis
 * centres the inputs far from zero (x = mean + U[-1, 1)): the check catches a
 * variance that loses its digits there.
 *
 * Idea of this starting point: a block of 256 threads per row, passes over the
 * row in global memory: the mean (of x - x[0], so that the sums stay small when
 * the row sits far from zero), the variance around it, then the write. Correct
 * for every shape and dtype; not fast (x is read three times). Ideas to try:
 * the row in registers, Welford statistics in one pass, 16-byte vectors, a
 * warp per row for short rows. */
#include <kbench/variant.h>
#include <math.h>

const int kbench_variant_abi = KBENCH_VARIANT_ABI;
const char kbench_operator[] = "layernorm";
const char kbench_summary[] = "a block per row, shifted two-pass statistics (starting point)";
const unsigned kbench_dtypes = KBENCH_DT_ALL;

/* The axes, in a->shape[] order. */
enum { ROWS, COLS, GELU, STATS };

#define THREADS 256
#define WARPS (THREADS / 32)
#define EPS 1e-5f

/* The block's sum of v, in every thread; every thread must call it. */
__device__ float block_sum(float v, float *partial)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
    for (int i = 0; i < WARPS; i++)
        v += partial[i];
    __syncthreads(); /* partial is reused by the next sum */
    return v;
}

__device__ float gelu(float z, int tanh_form)
{
    if (tanh_form)
        return 0.5f * z * (1.0f + tanhf(0.7978845608028654f * (z + 0.044715f * z * z * z)));
    return 0.5f * z * (1.0f + erff(z * 0.7071067811865476f));
}

__global__ void __launch_bounds__(THREADS)
    layernorm_rows(kbench_args a, int64_t cols, int tanh_form)
{
    __shared__ float partial[WARPS];
    const kbench_dtype d = a.dtype;
    const int64_t row = blockIdx.x, first = row * cols;
    const float shift = kbench_load(a.in[0], d, first);

    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS)
        s += kbench_load(a.in[0], d, first + c) - shift;
    const float mean = shift + block_sum(s, partial) / (float)cols;

    float q = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += THREADS) {
        const float t = kbench_load(a.in[0], d, first + c) - mean;
        q += t * t;
    }
    const float rstd = 1.0f / sqrtf(block_sum(q, partial) / (float)cols + EPS);

    for (int64_t c = threadIdx.x; c < cols; c += THREADS) {
        const float t = (kbench_load(a.in[0], d, first + c) - mean) * rstd;
        const float z = t * kbench_load(a.in[1], d, c) + kbench_load(a.in[2], d, c) +
                        kbench_load(a.in[3], d, c);
        kbench_store(a.out[0], d, first + c, gelu(z, tanh_form));
    }
    if (a.out[1] && threadIdx.x == 0) { /* stats = 1 */
        ((float *)a.out[1])[row] = mean;
        ((float *)a.out[2])[row] = rstd;
    }
}

/* One block per row (rows is at most 2^26). */
extern "C" cudaError_t kbench_launch(const kbench_args *a, cudaStream_t s)
{
    layernorm_rows<<<(unsigned)a->shape[ROWS], THREADS, 0, s>>>(*a, a->shape[COLS],
                                                                (int)a->shape[GELU]);
    return cudaGetLastError();
}

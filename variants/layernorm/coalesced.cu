/* coalesced.cu - the naive variant's steps with warp-contiguous accesses: a
 * statistics kernel with a warp per row, then normalise, bias and GELU as
 * separate elementwise kernels whose neighbouring threads touch neighbouring
 * elements.
 *
 * Idea: same work and same round trips through global memory as naive, but every
 * warp-wide load or store is one contiguous 128-byte (fp32) or 64-byte (16-bit)
 * span, so DRAM moves what is used and the memory system sees enough parallel
 * requests. Kernels:
 *   stats      a warp per row (8 rows per 256-thread block): lane l reads
 *              elements l, l + 32, ...; two passes over the row (the second from
 *              L1/L2) on shifted data d = x - x[0]: sum d -> mean, sum (d -
 *              mean_d)^2 -> rstd; warp shuffles only;
 *   normalise  t = (x - mean) * rstd * gamma + beta       (t: fp32 scratch);
 *   bias       t += b;
 *   gelu       y = GELU(t).
 * The elementwise kernels share one 2-D grid-stride loop (ew_walk: y over
 * rows, x over columns in 256-thread strips), so no index is divided by cols.
 *
 * Resource budget (nvcc -Xptxas -v, sm_90): 19 to 32 registers, no shared
 * memory, no spills; full occupancy (2048 threads per SM).
 *
 * Scratch: as naive, 2 * pad64(rows) * 4 + rows * cols * 4 bytes.
 * Bytes moved per element, fp32: stats read x (the second pass mostly hits
 * L2: a warp's 16 KB row is re-read at once), normalise reads x and writes t,
 * bias reads and writes t, gelu reads t and writes y: 4 + 8 + 8 + 8 = 28 bytes
 * against the model's 8 (3.5x); bf16: 2 + 6 + 8 + 6 = 22 against 4 (5.5x).
 *
 * Prediction at 32768x4096 fp32: ~25% of copy bandwidth by the model's bytes
 * (the kernels themselves run near copy bandwidth: 3.5x the traffic, plus the
 * stats kernel's latency-bound reductions).
 *
 * Measured (H200, 2026-11-29): 1.649 ms at 32768x4096 fp32, 15.7% of the copy
 * bandwidth by the model's bytes, under the ~25% predicted on two counts: the
 * four kernels move 4.00x the model's bytes, not the 3.5x counted above (so the
 * statistics kernel's second read of a row is not served by L2), and the DRAM
 * runs at 2.6 TB/s over the four of them, not at the copy rate (bf16: 5.91x,
 * 2.1 TB/s). The per-kernel counters are in results/h200/layernorm.json. */
#include "layernorm.cuh"

#define STATS_THREADS 256
#define EW_MAX_THREADS 256

template <typename T>
__global__ void __launch_bounds__(STATS_THREADS)
    layernorm_coalesced_stats(const T *__restrict__ x, float *__restrict__ mean,
                              float *__restrict__ rstd, int64_t rows, int cols, float inv_cols)
{
    const int64_t r = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= rows)
        return; /* the whole warp */
    const T *xr = x + r * cols;
    const float K = kb_load(xr, 0);
    float s = 0.0f;
    for (int j = lane; j < cols; j += 32)
        s += kb_load(xr, j) - K;
    const float md = kb_warp_sum(s) * inv_cols;
    float q = 0.0f;
    for (int j = lane; j < cols; j += 32) {
        const float c = (kb_load(xr, j) - K) - md;
        q = fmaf(c, c, q);
    }
    q = kb_warp_sum(q);
    if (lane == 0) {
        mean[r] = K + md;
        rstd[r] = rsqrtf(fmaf(q, inv_cols, LN_EPS));
    }
}

/* The elementwise kernels' 2-D grid-stride walk: block row blockIdx.y takes
 * rows blockIdx.y, blockIdx.y + gridDim.y, ...; in each, the threads of the
 * block row take columns in strips of gridDim.x * blockDim.x. row(r) is called
 * once for each of the thread's rows, then f(base, j) for each of its columns
 * j of that row, base = r * cols. */
template <typename R, typename F>
static __device__ __forceinline__ void ew_walk(int64_t rows, int cols, R row, F f)
{
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        row(r);
        const int64_t base = r * cols;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += gridDim.x * blockDim.x)
            f(base, j);
    }
}

/* ew_walk with nothing to do once a row. */
template <typename F> static __device__ __forceinline__ void ew_walk(int64_t rows, int cols, F f)
{
    ew_walk(rows, cols, [](int64_t) {}, f);
}

template <typename T>
__global__ void __launch_bounds__(EW_MAX_THREADS)
    layernorm_coalesced_normalise(const T *__restrict__ x, const float *__restrict__ mean,
                                  const float *__restrict__ rstd, const T *__restrict__ gamma,
                                  const T *__restrict__ beta, float *__restrict__ t,
                                  int64_t rows, int cols)
{
    float m, rs; /* the row's statistics */
    ew_walk(
        rows, cols, [&](int64_t r) { m = mean[r]; rs = rstd[r]; },
        [&](int64_t base, int j) {
            t[base + j] =
                fmaf((kb_load(x, base + j) - m) * rs, kb_load(gamma, j), kb_load(beta, j));
        });
}

template <typename T>
__global__ void __launch_bounds__(EW_MAX_THREADS)
    layernorm_coalesced_bias(const T *__restrict__ bias, float *__restrict__ t, int64_t rows,
                             int cols)
{
    ew_walk(rows, cols, [&](int64_t base, int j) { t[base + j] += kb_load(bias, j); });
}

template <typename T, bool TANH>
__global__ void __launch_bounds__(EW_MAX_THREADS)
    layernorm_coalesced_gelu(const float *__restrict__ t, T *__restrict__ y, int64_t rows,
                             int cols)
{
    ew_walk(rows, cols,
            [&](int64_t base, int j) { kb_store(y, base + j, ln_gelu<TANH>(t[base + j])); });
}

/* The statistics, a warp per row; then three elementwise launches in strips of
 * up to 256 columns (fewer for short rows, in whole warps), one block row per
 * matrix row up to 65535, then grid-stride (ln_steps: the buffers). */
template <typename T, bool TANH> static cudaError_t launch_t(const kb_args *a, cudaStream_t s)
{
    const ln_steps<T> p = ln_steps_of<T>(a);
    const int rpb = STATS_THREADS / 32;
    const kb_dim3 sgrid = {(unsigned)((p.rows + rpb - 1) / rpb), 1, 1};
    const kb_dim3 sblock = {STATS_THREADS, 1, 1};
    int threads = (p.cols + 31) / 32 * 32;
    if (threads > EW_MAX_THREADS)
        threads = EW_MAX_THREADS;
    const int64_t gx = (p.cols + threads - 1) / threads;
    const kb_dim3 grid = {(unsigned)(gx < 65535 ? gx : 65535),
                          (unsigned)(p.rows < 65535 ? p.rows : 65535), 1};
    const kb_dim3 block = {(unsigned)threads, 1, 1};
    cudaError_t e;
    if ((e = kb_launch(a, s, layernorm_coalesced_stats<T>, "layernorm_coalesced_stats", sgrid,
                       sblock, 0, p.x, p.mean, p.rstd, p.rows, p.cols, p.inv_cols)) !=
            cudaSuccess ||
        (e = kb_launch(a, s, layernorm_coalesced_normalise<T>, "layernorm_coalesced_normalise",
                       grid, block, 0, p.x, p.mean, p.rstd, p.g, p.b1, p.t, p.rows, p.cols)) !=
            cudaSuccess ||
        (e = kb_launch(a, s, layernorm_coalesced_bias<T>, "layernorm_coalesced_bias", grid, block,
                       0, p.b2, p.t, p.rows, p.cols)) != cudaSuccess)
        return e;
    return kb_launch(a, s, layernorm_coalesced_gelu<T, TANH>, "layernorm_coalesced_gelu", grid,
                     block, 0, (const float *)p.t, p.y, p.rows, p.cols);
}

template <typename T> static cudaError_t launch_gelu(const kb_args *a, cudaStream_t s)
{
    return a->shape[LN_GELU] ? launch_t<T, true>(a, s) : launch_t<T, false>(a, s);
}

extern "C" cudaError_t kb_layernorm_coalesced(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_gelu, a, s)
}

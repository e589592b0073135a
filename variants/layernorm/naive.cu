/* naive.cu - layernorm + bias + GELU as the formula reads: five kernels, one
 * thread per row, every intermediate a round trip through global memory.
 *
 * Idea: the baseline the ladder improves on. Kernels, each one thread per row
 * (naive_row) walking its row left to right:
 *   mean       mean[r] = K + sum(x - K) / cols, K = x[r][0] (shifted data: the
 *              sum keeps the spread's digits when the mean is large);
 *   variance   rstd[r] = 1 / sqrt(sum((x - mean)^2) / cols + eps);
 *   normalise  t = (x - mean) * rstd * gamma + beta     (t: fp32 scratch);
 *   bias       t += b;
 *   gelu       y = GELU(t).
 * mean and rstd go to the stats outputs when asked for, else to scratch.
 * Neighbouring threads of a warp read addresses a whole row apart, so every
 * load and store of a warp touches 32 different sectors (uncoalesced); what
 * survives is what L1 keeps of each thread's line between iterations.
 *
 * Resource budget (nvcc -Xptxas -v, sm_90): 26 to 32 registers, no shared
 * memory, no spills; 128-thread blocks, rows / 128 of them (256 blocks at the
 * default shape: about two per SM, so ~12% of the SM's warp slots are occupied
 * and little memory parallelism is exposed).
 *
 * Scratch: 2 * pad64(rows) * 4 bytes of statistics + rows * cols * 4 bytes of t.
 * Bytes moved (at best, every sector reused from L1 before eviction): x read
 * three times (mean, variance, normalise), t written twice and read twice, y
 * written once: 12 + 16 + 4 = 32 bytes per fp32 element against the model's 8
 * (4x); bf16 6 + 16 + 2 = 24 against 4 (6x). More when sectors are evicted
 * before their other 7 floats are used.
 *
 * Prediction at 32768x4096 fp32: ~3% of copy bandwidth (~8 ms against 0.25).
 * Only 256 threads per SM, each walking 16 KB of its own row; a warp's access
 * is 32 transactions, of which L1 turns 7 in 8 into hits (a 32-byte sector
 * holds 8 floats), and t's stores go to L2 one 4-byte piece per transaction.
 *
 * Measured (H200, 2026-11-29, results/h200/layernorm.json): 7.502 ms at
 * 32768x4096 fp32, 3.4% of the copy bandwidth, as predicted; the counters show
 * 4.30x the model's DRAM bytes (6.55x in bf16, where the fp32 intermediates
 * weigh twice as much against the data) and 12% achieved occupancy (a thread
 * per row). */
#include "layernorm.cuh"

#define NAIVE_THREADS 128
/* Elements a thread sums before adding the run to its row's total: a single
 * fp32 running sum of a million squares loses about 7e-4 of the variance
 * (each addition rounds at the total's size; measured on the H200 at
 * rows=3, cols=1048576: outputs 4e-4 off), runs of 1024 keep both levels'
 * rounding near the run's size. The order of loads is unchanged. */
#define NAIVE_RUN 1024

/* The opening of a thread-per-row kernel: f(r) for this thread's row r, no
 * call past the last row. */
template <typename F> static __device__ __forceinline__ void naive_row(int64_t rows, F f)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        f(r);
}

template <typename T>
__global__ void layernorm_naive_mean(const T *__restrict__ x, float *__restrict__ mean,
                                     int64_t rows, int cols, float inv_cols)
{
    naive_row(rows, [&](int64_t r) {
        const T *xr = x + r * cols;
        const float K = kb_load(xr, 0);
        float s = 0.0f;
        for (int j0 = 0; j0 < cols; j0 += NAIVE_RUN) {
            const int j1 = cols - j0 < NAIVE_RUN ? cols : j0 + NAIVE_RUN;
            float run = 0.0f;
            for (int j = j0; j < j1; j++)
                run += kb_load(xr, j) - K;
            s += run;
        }
        mean[r] = K + s * inv_cols;
    });
}

template <typename T>
__global__ void layernorm_naive_variance(const T *__restrict__ x,
                                         const float *__restrict__ mean,
                                         float *__restrict__ rstd, int64_t rows, int cols,
                                         float inv_cols)
{
    naive_row(rows, [&](int64_t r) {
        const T *xr = x + r * cols;
        const float m = mean[r];
        float q = 0.0f;
        for (int j0 = 0; j0 < cols; j0 += NAIVE_RUN) {
            const int j1 = cols - j0 < NAIVE_RUN ? cols : j0 + NAIVE_RUN;
            float run = 0.0f;
            for (int j = j0; j < j1; j++) {
                const float c = kb_load(xr, j) - m;
                run = fmaf(c, c, run);
            }
            q += run;
        }
        rstd[r] = rsqrtf(fmaf(q, inv_cols, LN_EPS));
    });
}

template <typename T>
__global__ void layernorm_naive_normalise(const T *__restrict__ x,
                                          const float *__restrict__ mean,
                                          const float *__restrict__ rstd,
                                          const T *__restrict__ gamma,
                                          const T *__restrict__ beta, float *__restrict__ t,
                                          int64_t rows, int cols)
{
    naive_row(rows, [&](int64_t r) {
        const T *xr = x + r * cols;
        float *tr = t + r * cols;
        const float m = mean[r], rs = rstd[r];
        for (int j = 0; j < cols; j++)
            tr[j] = fmaf((kb_load(xr, j) - m) * rs, kb_load(gamma, j), kb_load(beta, j));
    });
}

template <typename T>
__global__ void layernorm_naive_bias(const T *__restrict__ bias, float *__restrict__ t,
                                     int64_t rows, int cols)
{
    naive_row(rows, [&](int64_t r) {
        float *tr = t + r * cols;
        for (int j = 0; j < cols; j++)
            tr[j] += kb_load(bias, j);
    });
}

template <typename T, bool TANH>
__global__ void layernorm_naive_gelu(const float *__restrict__ t, T *__restrict__ y,
                                     int64_t rows, int cols)
{
    naive_row(rows, [&](int64_t r) {
        const float *tr = t + r * cols;
        T *yr = y + r * cols;
        for (int j = 0; j < cols; j++)
            kb_store(yr, j, ln_gelu<TANH>(tr[j]));
    });
}

/* Five launches in order, each a thread per row (ln_steps: the buffers). */
template <typename T, bool TANH> static cudaError_t launch_t(const kb_args *a, cudaStream_t s)
{
    const ln_steps<T> p = ln_steps_of<T>(a);
    const kb_dim3 grid = {(unsigned)((p.rows + NAIVE_THREADS - 1) / NAIVE_THREADS), 1, 1};
    const kb_dim3 block = {NAIVE_THREADS, 1, 1};
    cudaError_t e;
    if ((e = kb_launch(a, s, layernorm_naive_mean<T>, "layernorm_naive_mean", grid, block, 0, p.x,
                       p.mean, p.rows, p.cols, p.inv_cols)) != cudaSuccess ||
        (e = kb_launch(a, s, layernorm_naive_variance<T>, "layernorm_naive_variance", grid, block,
                       0, p.x, p.mean, p.rstd, p.rows, p.cols, p.inv_cols)) != cudaSuccess ||
        (e = kb_launch(a, s, layernorm_naive_normalise<T>, "layernorm_naive_normalise", grid,
                       block, 0, p.x, p.mean, p.rstd, p.g, p.b1, p.t, p.rows, p.cols)) !=
            cudaSuccess ||
        (e = kb_launch(a, s, layernorm_naive_bias<T>, "layernorm_naive_bias", grid, block, 0, p.b2,
                       p.t, p.rows, p.cols)) != cudaSuccess)
        return e;
    return kb_launch(a, s, layernorm_naive_gelu<T, TANH>, "layernorm_naive_gelu", grid, block, 0,
                     (const float *)p.t, p.y, p.rows, p.cols);
}

template <typename T> static cudaError_t launch_gelu(const kb_args *a, cudaStream_t s)
{
    return a->shape[LN_GELU] ? launch_t<T, true>(a, s) : launch_t<T, false>(a, s);
}

extern "C" cudaError_t kb_layernorm_naive(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_gelu, a, s)
}

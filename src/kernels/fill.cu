/* fill.cu - device input generators and output poisoning (see fill.h).
 * The draw is a counter-based hash of (seed, index): any element can be
 * recomputed on the host, and filling a GB takes a fraction of a millisecond. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/fill.h"
#include "kernels/op.h"

#define KB_HD __host__ __device__ __forceinline__

/* splitmix64 finaliser: a bijective 64-bit mix. */
static KB_HD uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) with 24 random bits. */
static KB_HD float uniform(uint64_t seed, uint64_t i)
{
    uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ull + mix64(i + 0x632be59bd9b4e019ull));
    return (float)(int32_t)(h >> 40) * 0x1p-23f - 1.0f;
}

static __device__ __forceinline__ void store_as(void *buf, size_t i, kb_dtype d, float v)
{
    switch (d) {
    case KB_FP32:
        ((float *)buf)[i] = v;
        break;
    case KB_FP16:
        ((__half *)buf)[i] = __float2half_rn(v);
        break;
    default:
        ((__nv_bfloat16 *)buf)[i] = __float2bfloat16_rn(v);
        break;
    }
}

static __global__ void fill_uniform_kernel(void *buf, size_t n, kb_dtype d, uint64_t seed,
                                           float center, float spread)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        store_as(buf, i, d, center + spread * uniform(seed, i));
}

static __global__ void fill_rows_kernel(void *buf, int64_t rows, int64_t cols, kb_dtype d,
                                        uint64_t seed, float spread, float shift)
{
    size_t n = (size_t)rows * (size_t)cols;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    uint64_t row_seed = seed ^ 0x5851f42d4c957f2dull;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t r = i / (uint64_t)cols;
        store_as(buf, i, d, shift * uniform(row_seed, r) + spread * uniform(seed, i));
    }
}

/* Threads per block of the generators, and blocks per SM their grid-stride
 * loops are given at most: every block slot of an SM (32 on sm_90) taken,
 * each thread still looping over many elements of a large input. */
#define FILL_THREADS 256
#define FILL_BLOCKS_PER_SM 32

/* The grid for n elements on the current device: one element a thread, at
 * most FILL_BLOCKS_PER_SM blocks per SM of the device; 0 for no element. */
static cudaError_t fill_grid(size_t n, unsigned *grid)
{
    int sms = 0;
    *grid = 0;
    cudaError_t ce = n ? kb_current_sms(&sms) : cudaSuccess;
    if (ce != cudaSuccess || n == 0)
        return ce;
    const size_t blocks = (n + FILL_THREADS - 1) / FILL_THREADS;
    const size_t most = (size_t)(sms > 0 ? sms : 1) * FILL_BLOCKS_PER_SM;
    *grid = (unsigned)(blocks > most ? most : blocks);
    return cudaSuccess;
}

extern "C" cudaError_t kb_fill_uniform(void *buf, size_t n, kb_dtype d, uint64_t seed,
                                       float center, float spread, cudaStream_t s)
{
    unsigned grid;
    cudaError_t ce = fill_grid(n, &grid);
    if (ce != cudaSuccess || grid == 0)
        return ce;
    fill_uniform_kernel<<<grid, FILL_THREADS, 0, s>>>(buf, n, d, seed, center, spread);
    return cudaGetLastError();
}

extern "C" cudaError_t kb_fill_rows(void *buf, int64_t rows, int64_t cols, kb_dtype d,
                                    uint64_t seed, float spread, float shift, cudaStream_t s)
{
    unsigned grid;
    cudaError_t ce = fill_grid((size_t)rows * (size_t)cols, &grid);
    if (ce != cudaSuccess || grid == 0)
        return ce;
    fill_rows_kernel<<<grid, FILL_THREADS, 0, s>>>(buf, rows, cols, d, seed, spread, shift);
    return cudaGetLastError();
}

extern "C" cudaError_t kb_poison(void *buf, size_t nbytes, cudaStream_t s)
{
    return nbytes ? cudaMemsetAsync(buf, 0xff, nbytes, s) : cudaSuccess;
}

extern "C" float kb_uniform_host(uint64_t seed, uint64_t i)
{
    return uniform(seed, i);
}

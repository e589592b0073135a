/* calibrate.cu - the ceilings kbench measures itself: device copy bandwidth, and
 * the SM clock while work runs. */
#include <math.h>
#include <stdlib.h>

#include "kernels/op.h"
#include "profiler/device.h"
#include "profiler/policy.h"

/* Grids of the copy and flush kernels: blocks per SM of THREADS threads,
 * enough loads in flight to reach the copy bandwidth. */
#define THREADS 512
#define COPY_BLOCKS_PER_SM 8
#define FLUSH_BLOCKS_PER_SM 4
/* How long the clock probe spins, ns: long enough for a 0.1% reading. */
#define SPIN_NS 2000000ull
/* A batch sample of the copy calibration lasts at least this long, ms: the
 * case's batch samples' KB_BATCH_MIN_US (profiler/bench.c) or more. */
#define KB_CALIBRATE_BATCH_MS 2.0

/* Each thread copies 4 float4 per iteration, all loads issued before the stores. */
static __global__ void copy_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst,
                                   size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        float4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n; i += stride)
        dst[i] = src[i];
}

static __global__ void spin_kernel(unsigned long long ns, unsigned long long *out)
{
    unsigned long long t0, t1, c0, c1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    c0 = clock64();
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    } while (t1 - t0 < ns);
    c1 = clock64();
    out[0] = c1 - c0;
    out[1] = t1 - t0;
}

/* Reads every 16-byte word of buf: the L2 ends up holding clean lines of buf
 * alone, so the next kernel neither hits on its own data nor pays for writing
 * back someone else's dirty lines. The store never happens (the data are never
 * all-ones) but keeps the loads alive. */
static __global__ void flush_kernel(const uint4 *__restrict__ buf, size_t n, uint4 *sink)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint4 v = __ldcg(&buf[i]);
        acc |= v.x & v.y & v.z & v.w;
    }
    if (acc == 0xffffffffu)
        sink[0] = make_uint4(acc, acc, acc, acc);
}

extern "C" cudaError_t kb_flush_l2(void *buf, size_t bytes, cudaStream_t s)
{
    if (bytes < sizeof(uint4))
        return cudaSuccess;
    int sms = 0;
    cudaError_t ce = kb_current_sms(&sms);
    if (ce != cudaSuccess)
        return ce;
    flush_kernel<<<(unsigned)sms * FLUSH_BLOCKS_PER_SM, THREADS, 0, s>>>(
        (const uint4 *)buf, bytes / sizeof(uint4), (uint4 *)buf);
    return cudaGetLastError();
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Launches one copy of n4 float4 (method 0: the copy kernel; 1: cudaMemcpyAsync). */
static cudaError_t copy_once(int method, const float4 *src, float4 *dst, size_t n4, int sms)
{
    if (method == 1)
        return cudaMemcpyAsync(dst, src, n4 * sizeof(float4), cudaMemcpyDeviceToDevice, 0);
    copy_kernel<<<(unsigned)sms * COPY_BLOCKS_PER_SM, THREADS>>>(src, dst, n4);
    return cudaGetLastError();
}

/* The median of ms[0 .. REPS) (sorted in place). */
static double median_ms(float *ms, int n)
{
    qsort(ms, (size_t)n, sizeof ms[0], cmp_float);
    return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

extern "C" kb_status kb_calibrate_copy(double *cold_gbps, double *batch_gbps, kb_err *e)
{
    kb_status st = KB_OK;
    const size_t bytes = (size_t)1 << 30, n4 = bytes / sizeof(float4);
    float4 *src = NULL, *dst = NULL;
    void *flush = NULL;
    size_t flush_bytes = 0;
    cudaEvent_t t0 = NULL, t1 = NULL;
    enum { REPS = 20, WARM = 3 };
    float ms[REPS];
    double best_cold = 0, best_batch = 0;
    int sms = 0, dev = 0, l2 = 0;
    *cold_gbps = *batch_gbps = NAN;
    KB_CUDA(kb_current_sms(&sms));
    KB_CUDA(cudaGetDevice(&dev));
    KB_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    flush_bytes = (size_t)KB_FLUSH_L2_FACTOR * (size_t)l2;
    KB_CUDA(cudaMalloc((void **)&src, bytes));
    KB_CUDA(cudaMalloc((void **)&dst, bytes));
    if (flush_bytes) {
        KB_CUDA(cudaMalloc(&flush, flush_bytes));
        KB_CUDA(cudaMemset(flush, 0, flush_bytes));
    }
    KB_CUDA(cudaMemset(src, 1, bytes));
    KB_CUDA(cudaEventCreate(&t0));
    KB_CUDA(cudaEventCreate(&t1));
    for (int method = 0; method < 2; method++) {
        /* cold: each copy alone after an L2 flush, as a cold sample is timed */
        for (int rep = -WARM; rep < REPS; rep++) {
            if (flush_bytes)
                KB_CUDA(kb_flush_l2(flush, flush_bytes, 0));
            KB_CUDA(cudaEventRecord(t0, 0));
            KB_CUDA(copy_once(method, src, dst, n4, sms));
            KB_CUDA(cudaEventRecord(t1, 0));
            KB_CUDA(cudaEventSynchronize(t1));
            if (rep >= 0)
                KB_CUDA(cudaEventElapsedTime(&ms[rep], t0, t1));
        }
        const double cold_ms = median_ms(ms, REPS);
        /* batch: copies back to back, a sample lasting KB_CALIBRATE_BATCH_MS or
         * more, as a batch sample is timed */
        const int n = (int)ceil(KB_CALIBRATE_BATCH_MS / cold_ms) < 2
                          ? 2
                          : (int)ceil(KB_CALIBRATE_BATCH_MS / cold_ms);
        for (int rep = -WARM; rep < REPS; rep++) {
            KB_CUDA(cudaEventRecord(t0, 0));
            for (int i = 0; i < n; i++)
                KB_CUDA(copy_once(method, src, dst, n4, sms));
            KB_CUDA(cudaEventRecord(t1, 0));
            KB_CUDA(cudaEventSynchronize(t1));
            if (rep >= 0) {
                KB_CUDA(cudaEventElapsedTime(&ms[rep], t0, t1));
                ms[rep] /= (float)n;
            }
        }
        const double batch_ms = median_ms(ms, REPS);
        best_cold = fmax(best_cold, 2.0 * (double)bytes / (cold_ms * 1e6));
        best_batch = fmax(best_batch, 2.0 * (double)bytes / (batch_ms * 1e6));
    }
    *cold_gbps = best_cold;
    *batch_gbps = best_batch;
done:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    cudaFree(src);
    cudaFree(dst);
    cudaFree(flush);
    return st;
}

extern "C" double kb_measure_sm_clock(cudaStream_t s)
{
    unsigned long long *d = NULL, h[2] = {0, 0};
    double mhz = NAN;
    if (cudaMalloc((void **)&d, sizeof h) != cudaSuccess)
        return NAN;
    spin_kernel<<<1, 1, 0, s>>>(SPIN_NS, d);
    if (cudaGetLastError() == cudaSuccess &&
        cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
        cudaStreamSynchronize(s) == cudaSuccess && h[1] > 0)
        mhz = (double)h[0] / (double)h[1] * 1e3;
    cudaFree(d);
    return mhz;
}

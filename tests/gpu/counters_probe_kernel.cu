/* counters_probe_kernel.cu - the kernels of the counter probe
 * (tests/gpu/counters_probe.c): a copy whose DRAM traffic is known exactly
 * (every byte of the input read once, every byte of the output written once),
 * and a read-only sweep that leaves the L2 holding clean lines only.
 *
 * Budget: 256 threads per block, a handful of registers, no shared memory;
 * one 16-byte vector per thread per step, so the copy runs at the DRAM limit
 * and its counters can be checked against 2 x its size. */
#include <cuda_runtime.h>

#include "kernels/op.h"

#define PROBE_THREADS 256

/* out[i] = in[i] for i < n: float4 vectors over a grid-stride loop, then the
 * last n % 4 elements one by one. */
__global__ void __launch_bounds__(PROBE_THREADS)
    probe_copy_f4(const float *__restrict__ in, float *__restrict__ out, int64_t n)
{
    const int64_t n4 = n / 4, stride = (int64_t)gridDim.x * blockDim.x;
    const float4 *in4 = reinterpret_cast<const float4 *>(in);
    float4 *out4 = reinterpret_cast<float4 *>(out);
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = t; i < n4; i += stride)
        out4[i] = in4[i];
    for (int64_t i = n4 * 4 + t; i < n; i += stride)
        out[i] = in[i];
}

/* Reads buf[0 .. n4) and writes one word only if the sum is impossible, so the
 * loads stay and the L2 ends up holding clean lines of buf. */
__global__ void __launch_bounds__(PROBE_THREADS)
    probe_read_sweep(const float4 *__restrict__ buf, int64_t n4, float *sink)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4;
         i += stride) {
        const float4 v = buf[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == -1.0e30f)
        *sink = s;
}

static unsigned grid_for(int64_t items)
{
    int64_t g = (items + PROBE_THREADS - 1) / PROBE_THREADS;
    if (g < 1)
        g = 1;
    return (unsigned)(g > 1048576 ? 1048576 : g);
}

/* The probe's launcher (a kb_launch_fn): copies a->shape[0] floats from
 * a->in[0] to a->out[0] on stream s. */
extern "C" cudaError_t kb_probe_copy(const kb_args *a, cudaStream_t s)
{
    const int64_t n = a->shape[0];
    if (n <= 0)
        return cudaSuccess;
    const unsigned grid = grid_for((n + 3) / 4);
    probe_copy_f4<<<grid, PROBE_THREADS, 0, s>>>(static_cast<const float *>(a->in[0]),
                                                 static_cast<float *>(a->out[0]), n);
    return cudaGetLastError();
}

/* The copy kernel, for cudaFuncGetAttributes and the occupancy calculator. */
extern "C" const void *kb_probe_copy_fn(void)
{
    return reinterpret_cast<const void *>(probe_copy_f4);
}

/* Reads `bytes` (a multiple of 16) of buf on stream s; sink is one device float. */
extern "C" cudaError_t kb_probe_read_sweep(const void *buf, size_t bytes, float *sink,
                                           cudaStream_t s)
{
    const int64_t n4 = (int64_t)(bytes / 16);
    probe_read_sweep<<<grid_for(n4), PROBE_THREADS, 0, s>>>(
        static_cast<const float4 *>(buf), n4, sink);
    return cudaGetLastError();
}

/* busy_kernel.cu - another process's work on the GPU, for the GPU tests of
 * `kbench run` (tests/gpu/test_gpu_run.c): a kernel that spins on one block
 * for a few milliseconds, launched again and again for as long as asked, so
 * that the process holds a context and computes on the GPU the whole time.
 *
 * Budget: one block of 32 threads, a few registers; it occupies one SM, so
 * kbench's cases still run (slower), which is the point: they must be flagged. */
#include <cuda_runtime.h>
#include <time.h>
#include <unistd.h>

/* How long one launch spins, ns. */
#define SPIN_NS 5000000ull

static __global__ void busy_spin(unsigned long long ns)
{
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    } while (t1 - t0 < ns);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps GPU 0 busy for `seconds`; writes one byte to ready_fd once the first
 * launch has run. Returns 0, or 1 on a CUDA error. For a child process that
 * has not touched CUDA before. */
extern "C" int kbt_gpu_busy(double seconds, int ready_fd)
{
    const double end = now_s() + seconds;
    if (cudaSetDevice(0) != cudaSuccess)
        return 1;
    busy_spin<<<1, 32>>>(SPIN_NS);
    if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    const char c = 'r';
    if (write(ready_fd, &c, 1) != 1)
        return 1;
    while (now_s() < end) {
        busy_spin<<<1, 32>>>(SPIN_NS);
        if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            return 1;
    }
    return 0;
}

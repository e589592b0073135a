/* epilogue.cu - the bias + GELU epilogue as a kernel of its own, run by the
 * CUDA-core rungs (naive .. register-tiled) after their product when
 * epilogue=1: C = GELU(C + bias) in place.
 *
 * Idea: the unfused form of the epilogue. C (M x N) is written by the
 * product, then read back and written again here: 2 M N elements more cross
 * DRAM than the model's one write of C, which the counters' excess shows
 * (for bf16 4096^3 about 64 MB against a model of 100 MB). The tensor-core
 * rungs apply the epilogue to the accumulators before their one store.
 *
 * Mapping: a block of 256 threads covers 256 consecutive columns, so a
 * thread's bias element is read once and kept; blocks step down the rows
 * (blockIdx.y, stride gridDim.y). Reads and writes of C are warp-contiguous.
 * Budget: a handful of registers, no shared memory; bandwidth-bound, so the
 * grid only needs enough rows in flight (EPI_ROW_BLOCKS blocks down).
 * Prediction: close to copy bandwidth, about 30 us for bf16 4096 x 4096
 * (67 MB read + written). Measured: not yet measured. */
#include "matmul.cuh"

#define EPI_THREADS 256
/* Blocks down the rows: with 16 blocks across (4096 columns) 16384 blocks of
 * 256 threads, many waves on any GPU. */
#define EPI_ROW_BLOCKS 1024

template <typename T>
__global__ void __launch_bounds__(EPI_THREADS)
    mm_epilogue(T *__restrict__ c, const T *__restrict__ bias, mm_shape sh)
{
    const int col = blockIdx.x * EPI_THREADS + threadIdx.x;
    if (col >= sh.n)
        return;
    const float b = kb_load(bias, col);
    for (int row = blockIdx.y; row < sh.m; row += gridDim.y) {
        const int64_t i = (int64_t)row * sh.n + col;
        kb_store(c, i, mm_gelu(kb_to_float(c[i]) + b));
    }
}

template <typename T> static cudaError_t launch_epilogue(const kb_args *a, cudaStream_t s)
{
    const mm_shape sh = mm_shape_of(a);
    const kb_dim3 grid = {(unsigned)mm_div_up(sh.n, EPI_THREADS),
                          (unsigned)(sh.m < EPI_ROW_BLOCKS ? sh.m : EPI_ROW_BLOCKS), 1};
    return kb_launch(a, s, mm_epilogue<T>, "mm_epilogue", grid, kb_dim3{EPI_THREADS, 1, 1}, 0,
                     (T *)a->out[0], (const T *)a->in[2], sh);
}

extern "C" cudaError_t kb_matmul_epilogue(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_epilogue, a, s)
}

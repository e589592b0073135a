/* shared_memory.cu - square tiles of A and B staged in shared memory and
 * reused there.
 *
 * Idea: a block of 32 x 32 threads computes a 32 x 32 tile of C, one output
 * per thread. For each step of 32 along K it loads a 32 x 32 tile of A and one
 * of B into shared memory - both with warp-contiguous reads, a warp taking 32
 * consecutive k of one row - and every element loaded is then read 32 times
 * from shared memory instead of from L1/L2: global traffic falls 32x against
 * the one-output-per-thread rungs. Layout: As[i][k] as loaded; B's tile is
 * stored transposed, Bs[k][j], so that the inner loop's reads of B are 32
 * consecutive words across a warp (j = lane) while A's are one broadcast word
 * (i is the warp's). Bs rows are padded to 33 words so that the transposing
 * store (a warp writing one column) hits 32 different banks.
 *
 * Budget: about 30 registers, 8.3 KB of shared memory, blocks of 1024 threads,
 * 2 per SM (100% occupancy); two barriers per tile. With epilogue=1 the
 * epilogue kernel (epilogue.cu) runs after.
 *
 * Prediction (fp32 4096^3): two shared loads (one a broadcast) per FMA, bound
 * by the shared-memory pipe at about 32 flops a clock per SM: 6-8 TFLOP/s,
 * 1.5-2x coalesced. Measured: not yet measured. */
#include "matmul.cuh"

#define SM_TILE 32
#define SM_MAX_Y 65535

template <typename T>
__global__ void __launch_bounds__(SM_TILE *SM_TILE)
    mm_shared(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, mm_shape sh)
{
    __shared__ float As[SM_TILE][SM_TILE];
    __shared__ float Bs[SM_TILE][SM_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int j0 = blockIdx.x * SM_TILE;
    for (int i0 = blockIdx.y * SM_TILE; i0 < sh.m; i0 += gridDim.y * SM_TILE) {
        float acc = 0.0f;
        for (int k0 = 0; k0 < sh.k; k0 += SM_TILE) {
            const int t = k0 + tx;
            const bool in_k = t < sh.k;
            As[ty][tx] = in_k && i0 + ty < sh.m ? kb_load(A, (int64_t)(i0 + ty) * sh.k + t) : 0.0f;
            Bs[tx][ty] = in_k && j0 + ty < sh.n ? kb_load(B, (int64_t)(j0 + ty) * sh.k + t) : 0.0f;
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < SM_TILE; kk++)
                acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
            __syncthreads();
        }
        if (i0 + ty < sh.m && j0 + tx < sh.n)
            kb_store(C, (int64_t)(i0 + ty) * sh.n + j0 + tx, acc);
    }
}

template <typename T> static cudaError_t launch_shared(const kb_args *a, cudaStream_t s)
{
    const mm_shape sh = mm_shape_of(a);
    const int64_t rows = mm_div_up(sh.m, SM_TILE);
    const kb_dim3 grid = {(unsigned)mm_div_up(sh.n, SM_TILE),
                          (unsigned)(rows < SM_MAX_Y ? rows : SM_MAX_Y), 1};
    cudaError_t e = kb_launch(a, s, mm_shared<T>, "mm_shared", grid,
                              kb_dim3{SM_TILE, SM_TILE, 1}, 0, (const T *)a->in[0],
                              (const T *)a->in[1], (T *)a->out[0], sh);
    return mm_then_epilogue(e, a, s);
}

/* Launches C = A B^T (+ the epilogue kernel when epilogue=1) of a->in[0..2]
 * into a->out[0] on stream s. */
extern "C" cudaError_t kb_matmul_shared_memory(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_shared, a, s)
}

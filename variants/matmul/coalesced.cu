/* coalesced.cu - the naive product with every global access warp-contiguous.
 *
 * Idea: with B stored N x K row-major, a thread's operands are two rows that
 * are contiguous along K (a row of A and a row of B). No mapping of one output
 * per thread can make a warp's reads contiguous then: 32 outputs of a warp
 * differ in i or j, and their rows lie K elements apart. So the lanes split K
 * instead. A warp owns 32 outputs of one row of C, C[i][j0..j0+31]; lane l
 * takes the products of k = l, l+32, l+64, ...: at each step of 32 it reads
 * A[i][k0+l] (the warp reads 32 consecutive elements: 128 bytes in fp32) and,
 * for each of the 32 columns, B[j0+jj][k0+l] (again 32 consecutive elements),
 * and keeps 32 partial sums p[jj]. At the end lane l must hold the sum over
 * the lanes of p[l]: a reduce-scatter by butterfly halving, 16 + 8 + 4 + 2 +
 * 1 = 31 shuffles, after which lane l writes C[i][j0+l] - the warp's 32
 * writes contiguous too. Each load instruction now uses every byte it
 * fetches (32 L1 wavefronts per load in naive become 1); the 8 warps of a
 * block take 8 rows of C with the same 32 columns, so the block's 32 rows of
 * B are read from L2 once per block and shared through L1.
 *
 * Budget (ptxas, sm_90): 58 registers in fp32, 74 in fp16/bf16 (32 partial
 * sums, 32 loads in flight), no spills, no shared memory; blocks of 8 warps,
 * 4 (fp32) or 3 (16-bit) per SM: 50% or 37.5% theoretical occupancy. With
 * epilogue=1 the epilogue kernel (epilogue.cu) runs after.
 *
 * Prediction (fp32 4096^3): 33 load instructions per 32 FMA instructions,
 * bound by the load/store unit at about one warp load a clock per SM and by
 * L2 bandwidth for B: 3-6 TFLOP/s, 5-10x naive. 16-bit inputs read 64 bytes
 * a warp load, half a line: about the same time.
 * Measured: not yet measured. */
#include "matmul.cuh"

#define CO_WARPS 8
#define CO_THREADS (CO_WARPS * 32)
#define CO_MAX_Y 65535

/* Lane l's sum over the warp of p[l] (p: 32 partial sums per lane), by
 * butterfly halving: at each step a lane keeps the half of its columns its
 * lane bit selects, sends the other half and adds what its partner sent. */
KB_DEV float mm_reduce_scatter32(float (&p)[32], int lane)
{
#pragma unroll
    for (int h = 16; h >= 1; h >>= 1) {
        const bool upper = (lane & h) != 0;
#pragma unroll
        for (int q = 0; q < h; q++) {
            const float send = upper ? p[q] : p[q + h];
            const float keep = upper ? p[q + h] : p[q];
            p[q] = keep + __shfl_xor_sync(KB_FULL_MASK, send, h);
        }
    }
    return p[0];
}

template <typename T>
__global__ void __launch_bounds__(CO_THREADS)
    mm_coalesced(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, mm_shape sh)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int j0 = blockIdx.x * 32;
    const int ncols = sh.n - j0 < 32 ? sh.n - j0 : 32;
    for (int i = blockIdx.y * CO_WARPS + warp; i < sh.m; i += gridDim.y * CO_WARPS) {
        const T *a = A + (int64_t)i * sh.k;
        const T *b = B + (int64_t)j0 * sh.k;
        float p[32];
#pragma unroll
        for (int jj = 0; jj < 32; jj++)
            p[jj] = 0.0f;
        for (int k0 = 0; k0 < sh.k; k0 += 32) {
            const int t = k0 + lane;
            if (t < sh.k) {
                const float av = kb_load(a, t);
#pragma unroll
                for (int jj = 0; jj < 32; jj++)
                    if (jj < ncols)
                        p[jj] = fmaf(av, kb_load(b, (int64_t)jj * sh.k + t), p[jj]);
            }
        }
        const float v = mm_reduce_scatter32(p, lane);
        if (lane < ncols)
            kb_store(C, (int64_t)i * sh.n + j0 + lane, v);
    }
}

template <typename T> static cudaError_t launch_coalesced(const kb_args *a, cudaStream_t s)
{
    const mm_shape sh = mm_shape_of(a);
    const int64_t rows = mm_div_up(sh.m, CO_WARPS);
    const kb_dim3 grid = {(unsigned)mm_div_up(sh.n, 32),
                          (unsigned)(rows < CO_MAX_Y ? rows : CO_MAX_Y), 1};
    cudaError_t e = kb_launch(a, s, mm_coalesced<T>, "mm_coalesced", grid,
                              kb_dim3{CO_THREADS, 1, 1}, 0, (const T *)a->in[0],
                              (const T *)a->in[1], (T *)a->out[0], sh);
    return mm_then_epilogue(e, a, s);
}

/* Launches C = A B^T (+ the epilogue kernel when epilogue=1) of a->in[0..2]
 * into a->out[0] on stream s. */
extern "C" cudaError_t kb_matmul_coalesced(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_coalesced, a, s)
}

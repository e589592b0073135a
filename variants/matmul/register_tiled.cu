/* register_tiled.cu - each thread computes an 8 x 8 tile of C in registers
 * from operands staged in shared memory: the CUDA-core SGEMM.
 *
 * Idea: in shared-memory every FMA needed two shared loads; here a thread
 * loads 8 values of A and 8 of B per step of k (four 16-byte shared loads) and
 * does 64 FMAs with them, so the FMA pipe, not the shared-memory pipe, sets
 * the pace. The pieces, as the best hand-written SGEMMs arrange them:
 *   - Block tile 128 x 128, BK = 8, 256 threads (8 warps), 16384 outputs.
 *   - Warp tiling: the warps are 4 (M) x 2 (N), each owning a 32 x 64 tile;
 *     a warp's lanes are 4 (M) x 8 (N). A thread's 8 rows are two groups of 4,
 *     16 apart (rows wm + 4 ly + 0..3 and wm + 16 + 4 ly + 0..3), and its 8
 *     columns two groups of 4, 32 apart (wn + 4 lx + 0..3, wn + 32 + 4 lx +
 *     0..3). So each of its four shared loads per k is one 16-byte vector, and
 *     a warp's load of B covers 128 consecutive bytes (8 lanes x 16 bytes, each
 *     read by 4 lanes) and its load of A 64 bytes: one wavefront each, no bank
 *     conflict.
 *   - Transposed staging: A and B are both contiguous along K in global
 *     memory, but the inner loop wants, for one k, consecutive rows (of A) and
 *     consecutive columns (of C, rows of B). Each thread reads 4 consecutive k
 *     of one row with one vector load (16 bytes in fp32, 8 in fp16/bf16:
 *     thread t takes row t/2, k 4(t%2)..+3; a warp reads 16 rows x 32 bytes,
 *     whole sectors) and stores them transposed, As[k][m] and Bs[k][n]. Rows
 *     of As and Bs are padded to 132 words: the transposing stores of a warp
 *     (16 rows, two k groups) then fall in 32 different banks.
 *   - Double buffering: two shared buffers; while the block computes tile t
 *     from one, each thread's global loads of tile t+1 are in flight into
 *     registers, stored into the other buffer after the compute: one barrier
 *     per tile. Inside a tile the fragments of step k+1 are loaded from shared
 *     memory while step k's 64 FMAs run (two register fragments).
 *   - Grouped tile order: blocks walk the tiles of 8 block rows column by
 *     column, so the blocks in flight share rows of A and columns of B in L2.
 *   - Edges: loads outside the matrix (rows past M or N, k past K) read zeros,
 *     so partial tiles need no other care inside the loop; the vector loads
 *     need K % 4 == 0 (else a scalar-load instance runs); stores are 16-byte
 *     vectors (fp32; 8 bytes in 16-bit) in whole tiles when N % 4 == 0, and
 *     guarded element stores otherwise.
 * 16-bit inputs are widened to fp32 on their way into shared memory; the
 * products accumulate in fp32, C is rounded once. With epilogue=1 the epilogue
 * kernel (epilogue.cu) runs after.
 *
 * Budget: __launch_bounds__(256, 2): at most 128 registers (64 accumulators,
 * 2 x 16 fragment values, 8 prefetched values, addresses); ptxas (sm_90) gives
 * every instance 127 and no spills, except the fp32 scalar-load one (K % 4 !=
 * 0), which spills 4 bytes. Two blocks of 8 warps per SM (25% occupancy; the
 * ILP is in the 64 independent FMAs a step), 16.5 KB of shared memory a
 * block.
 *
 * Prediction (fp32 4096^3, H200): per step of k a warp issues 64 FFMA and 4
 * LDS.128 plus loop overhead, about 90% of the issue slots for FMAs; with
 * latency, barriers and register-bank stalls about 65-75% of the FP32 peak
 * (67 TFLOP/s at 1.98 GHz): 42-50 TFLOP/s, at least 0.8x cuBLAS's SGEMM (about
 * 51). 16-bit inputs: the same compute, half the global bytes: the same time.
 * Measured: not yet measured. */
#include <type_traits>

#include "matmul.cuh"

#define RT_BM 128
#define RT_BN 128
#define RT_BK 8
#define RT_THREADS 256
#define RT_PAD 4 /* words of padding per shared row: conflict-free transposing stores */
#define RT_LD (RT_BM + RT_PAD)
#define RT_GROUP 8 /* block rows walked together (L2 reuse) */

/* f[0..4) = the 4 elements at p as floats: one 16-byte (fp32) or 8-byte
 * (16-bit) load; p must be aligned to that. */
template <typename T> KB_DEV void mm_load4(const T *p, float (&f)[4])
{
    if constexpr (std::is_same<T, float>::value) {
        const float4 v = __ldg((const float4 *)p);
        f[0] = v.x;
        f[1] = v.y;
        f[2] = v.z;
        f[3] = v.w;
    } else {
        const uint2 v = __ldg((const uint2 *)p);
        const float2 lo = kb_unpack2<T>(v.x), hi = kb_unpack2<T>(v.y);
        f[0] = lo.x;
        f[1] = lo.y;
        f[2] = hi.x;
        f[3] = hi.y;
    }
}

/* Stores f[0..4) rounded to T at p: one 16-byte (fp32) or 8-byte (16-bit)
 * store; p must be aligned to that. */
template <typename T> KB_DEV void mm_store4(T *p, const float *f)
{
    if constexpr (std::is_same<T, float>::value)
        *(float4 *)p = make_float4(f[0], f[1], f[2], f[3]);
    else
        *(uint2 *)p = make_uint2(kb_pack2<T>(f[0], f[1]), kb_pack2<T>(f[2], f[3]));
}

/* dst[0..4) = the 16-byte-aligned shared words src[0..4): one LDS.128. */
KB_DEV void mm_lds4(float *dst, const float *src)
{
    const float4 v = *(const float4 *)src;
    dst[0] = v.x;
    dst[1] = v.y;
    dst[2] = v.z;
    dst[3] = v.w;
}

/* The 4 elements k, k+1, k+2, k+3 of a row (row: the row's first element, or
 * NULL past the matrix's last row), zeros past K. VEC: K % 4 == 0, so the 4
 * are all inside or all outside and one vector load reads them. */
template <typename T, bool VEC>
KB_DEV void mm_load_k4(const T *row, int k, int K, float (&f)[4])
{
    if (VEC) {
        if (row && k < K) {
            mm_load4(row + k, f);
        } else {
#pragma unroll
            for (int c = 0; c < 4; c++)
                f[c] = 0.0f;
        }
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++)
            f[c] = row && k + c < K ? kb_load(row, k + c) : 0.0f;
    }
}

template <typename T, bool VEC>
__global__ void __launch_bounds__(RT_THREADS, 2)
    mm_register_tiled(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                      mm_shape sh)
{
    __shared__ __align__(16) float As[2][RT_BK][RT_LD];
    __shared__ __align__(16) float Bs[2][RT_BK][RT_LD];

    /* This block's tile, in grouped order. */
    const int tiles_m = (sh.m + RT_BM - 1) / RT_BM, tiles_n = (sh.n + RT_BN - 1) / RT_BN;
    const int per_group = RT_GROUP * tiles_n;
    const int first_m = (int)blockIdx.x / per_group * RT_GROUP;
    const int group_m = tiles_m - first_m < RT_GROUP ? tiles_m - first_m : RT_GROUP;
    const int in_group = (int)blockIdx.x % per_group;
    const int bm = (first_m + in_group % group_m) * RT_BM;
    const int bn = in_group / group_m * RT_BN;

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    /* The thread's outputs: rows rm + 0..3 and rm + 16 + 0..3, columns cn + 0..3
     * and cn + 32 + 0..3, within the block tile. */
    const int rm = (warp / 2) * 32 + (lane / 8) * 4;
    const int cn = (warp % 2) * 64 + (lane % 8) * 4;

    /* What the thread loads each tile: row lrow of A's and of B's block tile,
     * k lk..lk+3 of the tile. */
    const int lrow = tid / 2, lk = (tid % 2) * 4;
    const T *arow = bm + lrow < sh.m ? A + (int64_t)(bm + lrow) * sh.k : nullptr;
    const T *brow = bn + lrow < sh.n ? B + (int64_t)(bn + lrow) * sh.k : nullptr;

    float ra[4], rb[4];
    mm_load_k4<T, VEC>(arow, lk, sh.k, ra);
    mm_load_k4<T, VEC>(brow, lk, sh.k, rb);
#pragma unroll
    for (int c = 0; c < 4; c++) {
        As[0][lk + c][lrow] = ra[c];
        Bs[0][lk + c][lrow] = rb[c];
    }
    __syncthreads();

    float acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; r++)
#pragma unroll
        for (int c = 0; c < 8; c++)
            acc[r][c] = 0.0f;

    const int ntiles = (sh.k + RT_BK - 1) / RT_BK;
    for (int t = 0; t < ntiles; t++) {
        const int cur = t & 1;
        const bool more = t + 1 < ntiles;
        if (more) { /* the next tile's loads, in flight during this tile's FMAs */
            mm_load_k4<T, VEC>(arow, (t + 1) * RT_BK + lk, sh.k, ra);
            mm_load_k4<T, VEC>(brow, (t + 1) * RT_BK + lk, sh.k, rb);
        }
        float fa[2][8], fb[2][8];
        mm_lds4(&fa[0][0], &As[cur][0][rm]);
        mm_lds4(&fa[0][4], &As[cur][0][rm + 16]);
        mm_lds4(&fb[0][0], &Bs[cur][0][cn]);
        mm_lds4(&fb[0][4], &Bs[cur][0][cn + 32]);
#pragma unroll
        for (int kk = 0; kk < RT_BK; kk++) {
            const int f = kk & 1;
            if (kk + 1 < RT_BK) {
                mm_lds4(&fa[f ^ 1][0], &As[cur][kk + 1][rm]);
                mm_lds4(&fa[f ^ 1][4], &As[cur][kk + 1][rm + 16]);
                mm_lds4(&fb[f ^ 1][0], &Bs[cur][kk + 1][cn]);
                mm_lds4(&fb[f ^ 1][4], &Bs[cur][kk + 1][cn + 32]);
            }
#pragma unroll
            for (int r = 0; r < 8; r++)
#pragma unroll
                for (int c = 0; c < 8; c++)
                    acc[r][c] = fmaf(fa[f][r], fb[f][c], acc[r][c]);
        }
        if (more) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                As[cur ^ 1][lk + c][lrow] = ra[c];
                Bs[cur ^ 1][lk + c][lrow] = rb[c];
            }
        }
        __syncthreads();
    }

    /* Row r of the thread's tile is block row rm + r (r < 4) or rm + 12 + r;
     * column group g at cn + 32 g. */
    const bool whole = bm + RT_BM <= sh.m && bn + RT_BN <= sh.n && sh.n % 4 == 0 &&
                       (uintptr_t)C % (4 * sizeof(T)) == 0;
#pragma unroll
    for (int r = 0; r < 8; r++) {
        const int i = bm + rm + (r < 4 ? r : r + 12);
        T *crow = C + (int64_t)i * sh.n;
#pragma unroll
        for (int g = 0; g < 2; g++) {
            const int j = bn + cn + 32 * g;
            if (whole) {
                mm_store4(crow + j, &acc[r][4 * g]);
            } else if (i < sh.m) {
#pragma unroll
                for (int c = 0; c < 4; c++)
                    if (j + c < sh.n)
                        kb_store(crow, j + c, acc[r][4 * g + c]);
            }
        }
    }
}

template <typename T, bool VEC>
static cudaError_t launch_rt(const kb_args *a, cudaStream_t s, const mm_shape &sh)
{
    const int64_t tiles = mm_div_up(sh.m, RT_BM) * mm_div_up(sh.n, RT_BN);
    if (tiles > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    cudaError_t e = kb_launch(a, s, mm_register_tiled<T, VEC>,
                              VEC ? "mm_register_tiled" : "mm_register_tiled_scalar_k",
                              kb_dim3{(unsigned)tiles, 1, 1}, kb_dim3{RT_THREADS, 1, 1}, 0,
                              (const T *)a->in[0], (const T *)a->in[1], (T *)a->out[0], sh);
    return mm_then_epilogue(e, a, s);
}

template <typename T> static cudaError_t launch_register_tiled(const kb_args *a, cudaStream_t s)
{
    const mm_shape sh = mm_shape_of(a);
    /* One vector load takes 4 elements of a row: rows must start 4-aligned. */
    const size_t vec_bytes = 4 * sizeof(T);
    const bool vec = sh.k % 4 == 0 && (uintptr_t)a->in[0] % vec_bytes == 0 &&
                     (uintptr_t)a->in[1] % vec_bytes == 0 && (uintptr_t)a->out[0] % vec_bytes == 0;
    return vec ? launch_rt<T, true>(a, s, sh) : launch_rt<T, false>(a, s, sh);
}

/* Launches C = A B^T (+ the epilogue kernel when epilogue=1) of a->in[0..2]
 * into a->out[0] on stream s. */
extern "C" cudaError_t kb_matmul_register_tiled(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_register_tiled, a, s)
}

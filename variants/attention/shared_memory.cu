/* shared_memory.cu - the two products tiled through shared memory, the
 * softmax reduced per block; S and P still materialised in global memory.
 *
 * Idea: data reuse. A 64 x 64 tile of S takes a 64-row slab of Q and of K
 * through shared memory 16 columns of the head dimension at a time; each of
 * the 256 threads keeps a 4 x 4 block of outputs in registers, so one shared
 * load feeds four FMAs and each global element is read by one block instead
 * of by 64 threads. The softmax runs a block per row (max and sum through
 * kb_block_max / kb_block_sum). O = P V is tiled the same way: 64 query rows
 * x 64 head columns per block, P and V staged 16 keys at a time. Threads own
 * rows ty + 16 r and columns tx + 16 c, and the tiles are padded by one
 * float, so the shared loads are conflict-free (a broadcast or 16 distinct
 * banks). Causal: score tiles entirely above the diagonal are skipped, the
 * softmax writes zeros to the masked part of the diagonal tile, and P V
 * stops at the diagonal tile.
 *
 * Budget (ptxas -v, sm_90; no spills): scores 72 registers and 8.5 KB of
 * shared memory, P.V 80 registers and 8.3 KB, __launch_bounds__(256, 3):
 * three blocks per SM (37.5% theoretical occupancy); softmax 32 registers.
 * The first build (no minimum-blocks hint: the score kernel at 128
 * registers with a 24-byte stack, two blocks per SM) ran 39.0 ms.
 *
 * Prediction (default shape bf16, 550 GFLOP): the FFMA products at about
 * 15 TFLOP/s (two shared loads per 16 FMAs per thread), 37 ms, plus 17 GB of
 * S and P traffic (write S, read and rewrite it, read P) at about 3.5 TB/s,
 * 5 ms: about 42 ms. Measured on the H200, 2026-11-29: bf16 30.71 ms, 17.9
 * TFLOP/s, 37x naive. */
#include "attention.cuh"

#define SM_TILE 64
#define SM_K 16
#define SM_THREADS 256
#define SM_SOFTMAX_THREADS 256

/* The product step of a staged pair of slabs: for kk < SM_K,
 * acc[r][c] += A(ty + 16 r, kk) B(kk, tx + 16 c), where A_AT and B_AT are the
 * shared-memory elements of the thread's row and column x at kk: two shared
 * loads per 16 FMAs and kk step. A macro, so that both kernels compile to
 * the instructions of the loop written out in place. */
#define SM_SLAB_FMA(acc, A_AT, B_AT)                                                        \
    _Pragma("unroll") for (int kk = 0; kk < SM_K; kk++) {                                   \
        float av[4], bv[4];                                                                 \
        _Pragma("unroll") for (int x = 0; x < 4; x++) {                                     \
            av[x] = (A_AT);                                                                 \
            bv[x] = (B_AT);                                                                 \
        }                                                                                   \
        _Pragma("unroll") for (int r = 0; r < 4; r++)                                       \
            _Pragma("unroll") for (int c = 0; c < 4; c++)                                   \
                (acc)[r][c] += av[r] * bv[c];                                               \
    }

/* S tile (qt, kt) of slice b: S[i][j] = scale * q_i . k_j for 64 x 64 (i, j). */
template <typename T>
__global__ void __launch_bounds__(SM_THREADS, 3)
    att_sm_scores(const T *__restrict__ q, const T *__restrict__ k, float *__restrict__ S,
                  att_shape sh)
{
    __shared__ float sq[SM_TILE][SM_K + 1], sk[SM_TILE][SM_K + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t s = sh.s;
    const unsigned nk = (unsigned)((s + SM_TILE - 1) / SM_TILE); /* seq <= 2^20 */
    const int64_t i0 = (int64_t)(blockIdx.x / nk) * SM_TILE;
    const int64_t j0 = (int64_t)(blockIdx.x % nk) * SM_TILE;
    if (sh.causal && j0 > i0 + SM_TILE - 1)
        return; /* entirely masked */
    /* the loads: this thread copies column c of rows r0 + 16 u (u < 4) of both slabs */
    const int c = threadIdx.x % SM_K, r0 = threadIdx.x / SM_K;
    const int64_t qrows = s - i0 - r0, krows = s - j0 - r0; /* rows r0 + 16 u valid below */
    for (int64_t b = blockIdx.y; b < sh.bh; b += gridDim.y) {
        const T *qp = q + (b * s + i0 + r0) * sh.d + c, *kp = k + (b * s + j0 + r0) * sh.d + c;
        float acc[4][4] = {};
        for (int t0 = 0; t0 < sh.d; t0 += SM_K) {
            const bool in_t = t0 + c < sh.d;
#pragma unroll
            for (int u = 0; u < SM_TILE * SM_K / SM_THREADS; u++) {
                const int64_t off = (int64_t)u * 16 * sh.d + t0;
                sq[r0 + 16 * u][c] = in_t && 16 * u < qrows ? kb_to_float(qp[off]) : 0.0f;
                sk[r0 + 16 * u][c] = in_t && 16 * u < krows ? kb_to_float(kp[off]) : 0.0f;
            }
            __syncthreads();
            SM_SLAB_FMA(acc, sq[ty + 16 * x][kk], sk[tx + 16 * x][kk]);
            __syncthreads();
        }
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int64_t i = i0 + ty + 16 * r, j = j0 + tx + 16 * c;
                if (i < s && j < s)
                    S[(b * s + i) * s + j] = acc[r][c] * sh.scale;
            }
    }
}

/* A block per row of S: P = exp(S - max) / sum in place over the row's keys;
 * causal rows also get zeros over the rest of their diagonal tile, which P.V
 * reads. */
__global__ void __launch_bounds__(SM_SOFTMAX_THREADS) att_sm_softmax(float *__restrict__ S,
                                                                     att_shape sh)
{
    __shared__ float red[SM_SOFTMAX_THREADS / 32];
    const int64_t s = sh.s, rows = sh.bh * s;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        float *x = S + r * s;
        const int64_t i = r % s, n = att_keys(sh, i);
        float m = kb_neg_inf(), sum = 0.0f;
        for (int64_t j = threadIdx.x; j < n; j += SM_SOFTMAX_THREADS)
            m = fmaxf(m, x[j]);
        m = kb_block_max<SM_SOFTMAX_THREADS>(m, red);
        for (int64_t j = threadIdx.x; j < n; j += SM_SOFTMAX_THREADS)
            sum += expf(x[j] - m);
        const float inv = 1.0f / kb_block_sum<SM_SOFTMAX_THREADS>(sum, red);
        for (int64_t j = threadIdx.x; j < n; j += SM_SOFTMAX_THREADS)
            x[j] = expf(x[j] - m) * inv;
        if (sh.causal) {
            int64_t end = (i / SM_TILE + 1) * SM_TILE;
            end = end < s ? end : s;
            for (int64_t j = n + threadIdx.x; j < end; j += SM_SOFTMAX_THREADS)
                x[j] = 0.0f;
        }
    }
}

/* O tile (qt, dt) of slice b: 64 query rows x 64 head columns of P V. */
template <typename T>
__global__ void __launch_bounds__(SM_THREADS, 3)
    att_sm_pv(const float *__restrict__ P, const T *__restrict__ v, T *__restrict__ o,
              att_shape sh)
{
    __shared__ float sp[SM_TILE][SM_K + 1], sv[SM_K][SM_TILE + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t s = sh.s;
    const unsigned nd = (unsigned)((sh.d + SM_TILE - 1) / SM_TILE);
    const int64_t i0 = (int64_t)(blockIdx.x / nd) * SM_TILE;
    const int t0 = (int)(blockIdx.x % nd) * SM_TILE;
    int64_t kend = sh.causal ? i0 + SM_TILE : s;
    kend = kend < s ? kend : s;
    for (int64_t b = blockIdx.y; b < sh.bh; b += gridDim.y) {
        const float *pb = P + b * s * s;
        const T *vb = v + b * s * sh.d;
        float acc[4][4] = {};
        for (int64_t j0 = 0; j0 < kend; j0 += SM_K) {
#pragma unroll
            for (int u = 0; u < SM_TILE * SM_K / SM_THREADS; u++) {
                const int e = threadIdx.x + u * SM_THREADS;
                const int pr = e / SM_K, pc = e % SM_K; /* P: 64 rows x 16 keys */
                const int vr = e / SM_TILE, vc = e % SM_TILE; /* V: 16 keys x 64 columns */
                sp[pr][pc] = i0 + pr < s && j0 + pc < kend ? pb[(i0 + pr) * s + j0 + pc] : 0.0f;
                sv[vr][vc] = j0 + vr < kend && t0 + vc < sh.d
                                 ? kb_load(vb, (j0 + vr) * sh.d + t0 + vc)
                                 : 0.0f;
            }
            __syncthreads();
            SM_SLAB_FMA(acc, sp[ty + 16 * x][kk], sv[kk][tx + 16 * x]);
            __syncthreads();
        }
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int64_t i = i0 + ty + 16 * r;
                const int t = t0 + tx + 16 * c;
                if (i < s && t < sh.d)
                    kb_store(o, (b * s + i) * sh.d + t, acc[r][c]);
            }
    }
}

template <typename T> static cudaError_t launch_sm(const kb_args *a, cudaStream_t st)
{
    const att_shape sh = att_shape_of(a);
    const int64_t nt = (sh.s + SM_TILE - 1) / SM_TILE, nd = (sh.d + SM_TILE - 1) / SM_TILE;
    const unsigned gy = (unsigned)(sh.bh < 65535 ? sh.bh : 65535);
    const kb_dim3 block = {SM_THREADS, 1, 1};
    const kb_dim3 g1 = {(unsigned)(nt * nt), gy, 1};
    const kb_dim3 g2 = {att_blocks(sh.bh * sh.s, 1), 1, 1};
    const kb_dim3 g3 = {(unsigned)(nt * nd), gy, 1};
    const kb_dim3 b2 = {SM_SOFTMAX_THREADS, 1, 1};
    return att_launch_materialised<T>(a, st, sh,
                                      {att_sm_scores<T>, "att_sm_scores", g1, block},
                                      {att_sm_softmax, "att_sm_softmax", g2, b2},
                                      {att_sm_pv<T>, "att_sm_pv", g3, block});
}

/* Launches the shared-memory attention of a->in[0..2] into a->out[0] on
 * stream s, with the fp32 scores in a->scratch (B*H*S^2*4 bytes). */
extern "C" cudaError_t kb_attention_shared_memory(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_sm, a, s)
}

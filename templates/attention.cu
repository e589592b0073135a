/* An attention variant of your own, started by `kbench new attention NAME`.
 *
 * Run it beside the built-in ladder, and again on every save:
 *   kbench run attention --variants flash-tiled,./NAME.cu --watch
 *
 * The operator (see kbench/variant.h): per (batch, head),
 *   O = softmax(Q K^T / sqrt(dim)) V
 * with in[0] = Q, in[1] = K, in[2] = V and out[0] = O, each
 * [batch][heads][seq][dim] of a->dtype; with causal = 1 query row i sees keys
 * 0..i only.
 *
 * Idea of this starting point: a warp per query row, streaming over the keys
 * with the online softmax (a running max and sum, the accumulator rescaled
 * when the max grows), so the seq x seq scores are never stored. Each lane
 * holds dim / 32 of the query and of the output row in registers; a score is a
 * warp-wide dot product. Correct for every shape and dtype; K and V are read
 * once per query row (from L2, mostly). Ideas to try: a block of query rows
 * sharing K/V tiles in shared memory; tensor cores (mma.sync, wgmma) for both
 * products; a template per element type. */
#include <kbench/variant.h>
#include <math.h>
#include <stdio.h>

const int kbench_variant_abi = KBENCH_VARIANT_ABI;
const char kbench_operator[] = "attention";
const char kbench_summary[] = "a warp per query row, online softmax over the keys (starting point)";
const unsigned kbench_dtypes = KBENCH_DT_ALL;

/* The axes, in a->shape[] order. */
enum { BATCH, HEADS, SEQ, DIM, CAUSAL };

#define WARPS_PER_BLOCK 4
/* Elements of a row each lane holds: dim at most 32 * PER_LANE. */
#define PER_LANE 8
/* Blocks at most; the warps stride over the query rows beyond that. */
#define MAX_BLOCKS (1 << 20)

__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
    attention_rows(const void *q, const void *k, const void *v, void *o, kbench_dtype d,
                   int64_t rows, int64_t seq, int dim, int causal)
{
    const int lane = threadIdx.x % 32;
    const float scale = 1.0f / sqrtf((float)dim);
    const int64_t warps = (int64_t)gridDim.x * WARPS_PER_BLOCK;
    for (int64_t row = (int64_t)blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32; row < rows;
         row += warps) {
        const int64_t i = row % seq;            /* query position */
        const int64_t base = (row - i) * dim;   /* this (batch, head) */
        float qr[PER_LANE], acc[PER_LANE];
        for (int t = 0; t < PER_LANE; t++) {
            const int c = lane + 32 * t;
            qr[t] = c < dim ? kbench_load(q, d, row * dim + c) * scale : 0.0f;
            acc[t] = 0.0f;
        }
        float m = -INFINITY, l = 0.0f;
        const int64_t keys = causal ? i + 1 : seq;
        for (int64_t j = 0; j < keys; j++) {
            const int64_t kj = base + j * dim;
            float s = 0.0f;
            for (int t = 0; t < PER_LANE; t++) {
                const int c = lane + 32 * t;
                if (c < dim)
                    s += qr[t] * kbench_load(k, d, kj + c);
            }
            for (int off = 16; off > 0; off >>= 1)
                s += __shfl_xor_sync(0xffffffffu, s, off);
            const float m_new = fmaxf(m, s);
            const float rescale = expf(m - m_new); /* 0 at the first key */
            const float p = expf(s - m_new);
            l = l * rescale + p;
            for (int t = 0; t < PER_LANE; t++) {
                const int c = lane + 32 * t;
                if (c < dim)
                    acc[t] = acc[t] * rescale + p * kbench_load(v, d, kj + c);
            }
            m = m_new;
        }
        const float inv = 1.0f / l;
        for (int t = 0; t < PER_LANE; t++) {
            const int c = lane + 32 * t;
            if (c < dim)
                kbench_store(o, d, row * dim + c, acc[t] * inv);
        }
    }
}

/* A lane holds at most PER_LANE elements of a row. */
extern "C" int kbench_unsupported(const int64_t *shape, int naxes, kbench_dtype d, char *why,
                                  size_t why_size)
{
    (void)naxes;
    (void)d;
    if (shape[DIM] <= 32 * PER_LANE)
        return 0;
    snprintf(why, why_size, "a lane holds %d elements of a row: dim=%lld is too long",
             PER_LANE, (long long)shape[DIM]);
    return 1;
}

extern "C" cudaError_t kbench_launch(const kbench_args *a, cudaStream_t s)
{
    const int64_t rows = a->shape[BATCH] * a->shape[HEADS] * a->shape[SEQ];
    int64_t blocks = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    if (blocks > MAX_BLOCKS)
        blocks = MAX_BLOCKS;
    attention_rows<<<(unsigned)blocks, WARPS_PER_BLOCK * 32, 0, s>>>(
        a->in[0], a->in[1], a->in[2], a->out[0], a->dtype, rows, a->shape[SEQ],
        (int)a->shape[DIM], (int)a->shape[CAUSAL]);
    return cudaGetLastError();
}

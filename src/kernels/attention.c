/* attention.c - the attention forward operator:
 *   O = softmax(Q K^T * scale [+ causal mask]) V,   scale = 1 / sqrt(dim),
 * per (batch, head), Q, K, V and O laid out [batch][heads][seq][dim]
 * contiguous, in fp32, fp16 or bf16 with fp32 accumulation. With causal=1,
 * query row i sees keys 0..i only. Owns the axes, the input distribution, the
 * fp64 reference check, the byte/flop model and the variant table
 * (variants/attention/).
 *
 * Buffers: in[0] = Q, in[1] = K, in[2] = V, out[0] = O, all
 * batch * heads * seq * dim elements of the dtype. The materialising variants
 * (naive, coalesced, shared-memory) keep the fp32 score matrix, seq * seq per
 * (batch, head), in scratch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "inputs.h"
#include "op.h"

cudaError_t kb_attention_naive(const kb_args *a, cudaStream_t s);
cudaError_t kb_attention_coalesced(const kb_args *a, cudaStream_t s);
cudaError_t kb_attention_shared_memory(const kb_args *a, cudaStream_t s);
cudaError_t kb_attention_fused(const kb_args *a, cudaStream_t s);
cudaError_t kb_attention_flash_tiled(const kb_args *a, cudaStream_t s);
/* variants/attention/flash_wgmma.cu: the work counter's scratch, and prepare
 * (Hopper only; the case's configuration and tensor maps, found once). */
cudaError_t kb_attention_flash_wgmma(const kb_args *a, cudaStream_t s);
size_t kb_attention_flash_wgmma_scratch(const int64_t *shape, kb_dtype d);
int kb_attention_flash_wgmma_prepare(const kb_args *a, char *why, size_t why_size);
/* variants/attention/cudnn.cu: cuDNN loaded at run time; see its header. */
cudaError_t kb_attention_cudnn(const kb_args *a, cudaStream_t s);
int kb_attention_cudnn_unsupported(const int64_t *shape, kb_dtype d, char *why,
                                   size_t why_size);
int kb_attention_cudnn_prepare(const kb_args *a, char *why, size_t why_size);
const char *kb_attention_cudnn_last_error(void);

/* The axis order here is the order of a->shape[] in the launchers
 * (variants/attention/attention.cuh repeats it). */
enum { BATCH, HEADS, SEQ, DIM, CAUSAL, NAXES };

static const kb_axis axes[] = {
    {"batch", 4, 1, 65536, "independent sequences"},
    {"heads", 16, 1, 4096, "attention heads per sequence"},
    {"seq", 4096, 1, 1 << 20, "sequence length: query rows = keys per (batch, head)"},
    {"dim", 128, 1, 256, "head dimension (the flash rungs run 64 and 128)"},
    {"causal", 0, 0, 1, "1: query row i attends to keys 0..i only"},
};

/* The shared memory one block can have on sm_90 (227 KB), which the fused
 * variant's rows of scores must fit in; its launcher sizes its blocks with the
 * same rule (variants/attention/fused.cu, fused_rows). */
#define FUSED_SMEM_LIMIT 232448
#define FUSED_KEYS 64

static int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

/* fused: a block keeps the fp32 scores of its query rows, seq of them per row
 * rounded up to the key tile, beside the fp32 Q rows and one K/V tile (rows
 * padded to dim rounded up to 4, plus 4). The launcher picks the most rows
 * (16, 8, 4, 2, 1) that fit; with none, the shape is skipped. */
static int fused_unsupported(const int64_t *shape, kb_dtype d, char *why, size_t why_size)
{
    (void)d;
    const int64_t dp = round_up(shape[DIM], 4) + 4;
    const int64_t need = (round_up(shape[SEQ], FUSED_KEYS) + dp + FUSED_KEYS * dp) * 4;
    if (need <= FUSED_SMEM_LIMIT)
        return 0;
    snprintf(why, why_size,
             "fused keeps a query row's %lld fp32 scores in shared memory: with dim=%lld one "
             "row needs %lld bytes, more than the %d a block can have",
             (long long)shape[SEQ], (long long)shape[DIM], (long long)need, FUSED_SMEM_LIMIT);
    return 1;
}

/* The tiled tensor-core rungs instantiate their tiles for head dimensions 64
 * and 128 only. */
static int dims_64_128(const char *variant, const int64_t *shape, char *why, size_t why_size)
{
    if (shape[DIM] == 64 || shape[DIM] == 128)
        return 0;
    snprintf(why, why_size, "%s is built for dim 64 and 128, not dim=%lld", variant,
             (long long)shape[DIM]);
    return 1;
}

static int flash_unsupported(const int64_t *shape, kb_dtype d, char *why, size_t why_size)
{
    (void)d;
    return dims_64_128("flash-tiled", shape, why, why_size);
}

static int wgmma_unsupported(const int64_t *shape, kb_dtype d, char *why, size_t why_size)
{
    (void)d;
    return dims_64_128("flash-wgmma", shape, why, why_size);
}

/* naive, coalesced, shared-memory: the fp32 score matrix, seq x seq per
 * (batch, head); the softmax overwrites it with P in place. */
static size_t scratch_scores(const int64_t *shape, kb_dtype d)
{
    (void)d;
    return (size_t)shape[BATCH] * (size_t)shape[HEADS] * (size_t)shape[SEQ] *
           (size_t)shape[SEQ] * sizeof(float);
}

#define DT16 (KB_DT(KB_FP16) | KB_DT(KB_BF16))

static const kb_variant variants[] = {
    {.name = "naive",
     .summary = "three kernels, a thread per output, S and P through global memory (fp32)",
     .dtypes = KB_DT_ALL,
     .launch = kb_attention_naive,
     .scratch_bytes = scratch_scores},
    {.name = "coalesced",
     .summary = "the same three stages with warp-contiguous reads and writes",
     .dtypes = KB_DT_ALL,
     .launch = kb_attention_coalesced,
     .scratch_bytes = scratch_scores},
    {.name = "shared-memory",
     .summary = "both products tiled through shared memory, block-reduced softmax",
     .dtypes = KB_DT_ALL,
     .launch = kb_attention_shared_memory,
     .scratch_bytes = scratch_scores},
    {.name = "fused",
     .summary = "one kernel per query block, its rows of scores kept in shared memory",
     .dtypes = KB_DT_ALL,
     .launch = kb_attention_fused,
     .unsupported = fused_unsupported},
    {.name = "flash-tiled",
     .summary = "K/V tiles streamed (cp.async), online softmax, mma.sync tensor cores",
     .dtypes = DT16,
     .launch = kb_attention_flash_tiled,
     .unsupported = flash_unsupported},
    {.name = "flash-wgmma",
     .summary = "TMA loads, wgmma tensor cores, producer/consumer warpgroups, overlapped softmax",
     .dtypes = DT16,
     .launch = kb_attention_flash_wgmma,
     .unsupported = wgmma_unsupported,
     .scratch_bytes = kb_attention_flash_wgmma_scratch,
     .prepare = kb_attention_flash_wgmma_prepare},
    {.name = "cudnn",
     .summary = "the vendor row: cuDNN's fused flash attention (graph API), the library a "
                "user would call",
     .dtypes = DT16,
     .launch = kb_attention_cudnn,
     .unsupported = kb_attention_cudnn_unsupported,
     .prepare = kb_attention_cudnn_prepare,
     .last_error = kb_attention_cudnn_last_error},
};

static size_t tensor_elems(const int64_t *shape)
{
    return (size_t)shape[BATCH] * (size_t)shape[HEADS] * (size_t)shape[SEQ] *
           (size_t)shape[DIM];
}

static size_t buf_bytes(const int64_t *shape, kb_dtype d, int i)
{
    (void)i;
    return tensor_elems(shape) * kb_dtype_size(d);
}

/* Q, K, V read once and O written once; 4 * seq^2 * dim flops per (batch,
 * head) - two products of 2 * seq^2 * dim each - and half of that causal (the
 * masked half of the scores is never needed). The softmax's exps are not
 * counted. */
static void model(const int64_t *shape, kb_dtype d, double *bytes, double *flops)
{
    const double bh = (double)shape[BATCH] * (double)shape[HEADS];
    const double s = (double)shape[SEQ], dim = (double)shape[DIM];
    *bytes = 4.0 * bh * s * dim * (double)kb_dtype_size(d);
    *flops = 4.0 * bh * s * s * dim * (shape[CAUSAL] ? 0.5 : 1.0);
}

/* Q and K uniform in [-2, 2), V in [-1, 1), each from its own seed. A score
 * q.k * scale then has standard deviation 4/3 (dim * (4/3)^2 / dim), so the
 * row max of 4096 keys sits near 4.7 and the weights span about e^-9..1: the
 * max subtraction matters and the softmax is neither flat nor one-hot. */
#define QK_SPREAD 2.0f
#define V_SPREAD 1.0f

static kb_status generate(const kb_args *a, uint64_t seed, cudaStream_t s, kb_err *e)
{
    const size_t n = tensor_elems(a->shape);
    const kb_input_fill in[3] = {
        {"Q", n, 0.0f, QK_SPREAD}, {"K", n, 0.0f, QK_SPREAD}, {"V", n, 0.0f, V_SPREAD}};
    return kb_fill_inputs(a, "attention", in, 3, seed, s, e);
}

/* The fp64 reference of one query row: scores s_j = scale * q . k_j over keys
 * 0..nkeys-1 (k row-major nkeys x dim), w = softmax(s), out[t] = sum_j w_j v_jt.
 * *spread = sqrt(sum_j w_j^2), the scale of the error that rounding each
 * weight to the working precision leaves in out (see tolerance below).
 * p must hold nkeys doubles. */
void kb_attention_ref_row(const double *q, const double *k, const double *v, int64_t nkeys,
                          int64_t dim, double scale, double *p, double *out, double *spread)
{
    double m = -INFINITY, l = 0.0, sq = 0.0;
    for (int64_t j = 0; j < nkeys; j++) {
        double dot = 0.0;
        for (int64_t t = 0; t < dim; t++)
            dot += q[t] * k[j * dim + t];
        p[j] = dot * scale;
        m = p[j] > m ? p[j] : m;
    }
    for (int64_t j = 0; j < nkeys; j++) {
        p[j] = exp(p[j] - m);
        l += p[j];
    }
    for (int64_t t = 0; t < dim; t++)
        out[t] = 0.0;
    for (int64_t j = 0; j < nkeys; j++) {
        const double w = p[j] / l;
        sq += w * w;
        for (int64_t t = 0; t < dim; t++)
            out[t] += w * v[j * dim + t];
    }
    *spread = sqrt(sq);
}

/* Tolerances. Element (row, t) passes if
 *   |out - ref| <= atol_row + rtol * |ref|,   atol_row = atol * sqrt(sum_j w_j^2).
 * O is a weighted average of V, whose entries are at most 1: a kernel that
 * rounds each weight (or unnormalised exp) to a unit roundoff u before the
 * second product leaves an error sum_j w_j e_j v_jt with |e_j| <= u, of size
 * about (u / 3) * sqrt(sum w^2) for random roundings and V uniform in [-1, 1)
 * (std(v) = 1/sqrt 3, std(e) = u/sqrt 3). sqrt(sum w^2) is 1 for a row that
 * sees one key and about 1/sqrt(keys) for a wide row, so the absolute part
 * follows the row rather than the worst row: at seq 4096 the outputs are about
 * 0.02, and a fixed atol loose enough for a causal row of two keys would pass
 * them at 50% error. rtol covers the rounding of O itself to the dtype (u).
 *   bf16: u = 2^-8:  atol 1e-2 and rtol 1e-2, each 2.5 u: the weight term is
 *         then 7.5 standard deviations (u / 3) out; a correct fp32-accumulating
 *         kernel with bf16 P lands near rel_l2 3e-3.
 *   fp16: u = 2^-11: atol 2e-3 and rtol 2e-3, each 4 u.
 *   fp32: scores, exps and sums in fp32 (exp2.approx: 2 ulp); a sequential sum
 *         of seq products errs by about sqrt(seq) * 2^-24 of the row's scale,
 *         1e-5 at seq 16384: atol 1e-4, rtol 1e-4.
 * The check reports as its atol the largest atol_row it applied. */
static void tolerance(kb_dtype d, double *atol, double *rtol)
{
    static const double at[KB_DTYPE_COUNT] = {1e-4, 2e-3, 1e-2};
    static const double rt[KB_DTYPE_COUNT] = {1e-4, 2e-3, 1e-2};
    *atol = at[d];
    *rtol = rt[d];
}

/* Compares sampled rows of O (row index = (batch * heads + head) * seq + query,
 * column = t) with the fp64 reference computed from the device's own
 * (dtype-rounded) inputs. K and V of a (batch, head) are fetched once while
 * consecutive picks (sorted) share it. */
static kb_status check(const kb_args *a, uint64_t seed, kb_check *c, kb_err *e)
{
    const int64_t bh = a->shape[BATCH] * a->shape[HEADS], s = a->shape[SEQ];
    const int64_t dim = a->shape[DIM];
    const int causal = (int)a->shape[CAUSAL];
    const int64_t rows = bh * s;
    const size_t kv = (size_t)s * (size_t)dim;
    const double scale = 1.0 / sqrt((double)dim);
    const kb_dtype d = a->dtype;
    int64_t *pick = malloc(KB_CHECK_ALL_ROWS * sizeof *pick);
    double *k = calloc(kv, sizeof *k), *v = calloc(kv, sizeof *v); /* filled per (batch, head) */
    double *p = malloc((size_t)s * sizeof *p);
    double *row = malloc(3 * (size_t)dim * sizeof *row);
    kb_status st = KB_OK;
    double atol, rtol, atol_max = 0.0;
    tolerance(d, &atol, &rtol);
    kb_check_begin(c, atol, rtol);
    if (!pick || !k || !v || !p || !row) {
        st = kb_fail(e, KB_EENV, "out of host memory for the K and V of seq=%lld, dim=%lld",
                     (long long)s, (long long)dim);
        goto done;
    }
    double *q = row, *o = row + dim, *ref = row + 2 * dim;
    const int64_t n = kb_sample_rows(rows, seed, pick);
    int64_t have = -1; /* the (batch, head) whose K and V are in k, v */
    for (int64_t r = 0; r < n; r++) {
        const int64_t b = pick[r] / s, i = pick[r] % s;
        if (b != have) {
            if ((st = kb_fetch_doubles(a->in[1], d, (size_t)b * kv, kv, k, e)) != KB_OK ||
                (st = kb_fetch_doubles(a->in[2], d, (size_t)b * kv, kv, v, e)) != KB_OK)
                goto done;
            have = b;
        }
        const size_t first = (size_t)pick[r] * (size_t)dim;
        if ((st = kb_fetch_doubles(a->in[0], d, first, (size_t)dim, q, e)) != KB_OK ||
            (st = kb_fetch_doubles(a->out[0], d, first, (size_t)dim, o, e)) != KB_OK)
            goto done;
        double spread;
        kb_attention_ref_row(q, k, v, causal ? i + 1 : s, dim, scale, p, ref, &spread);
        c->atol = atol * spread;
        atol_max = c->atol > atol_max ? c->atol : atol_max;
        for (int64_t t = 0; t < dim; t++)
            kb_check_elem(c, o[t], ref[t], pick[r], t);
        c->rows_checked++;
    }
    c->atol = atol_max;
    kb_check_end(c);
done:
    free(pick);
    free(k);
    free(v);
    free(p);
    free(row);
    return st;
}

const kb_op kb_op_attention = {
    .name = "attention",
    .summary = "softmax(Q K^T / sqrt(dim) [causal]) V per (batch, head) (compute-bound)",
    .axes = axes,
    .naxes = NAXES,
    .dtypes = KB_DT_ALL,
    .default_dtype = KB_BF16, /* the dtype attention runs in practice, and the tensor-core rungs' */
    .bound = "compute",
    .variants = variants,
    .nvariants = (int)KB_COUNT(variants),
    .nin = 3,
    .nout = 1,
    .in_bytes = buf_bytes,
    .out_bytes = buf_bytes,
    .model = model,
    .generate = generate,
    .check = check,
};

/* matmul.c - the matrix product operator:
 *   C = A B            (epilogue 0)
 *   C = GELU(A B + b)  (epilogue 1; the tanh form of GELU, what cuBLASLt's
 *                       GELU_BIAS epilogue computes; b added to every row)
 * A is M x K row-major; B is stored N x K row-major, which is K x N
 * column-major (the layout tensor cores read without a transpose: both
 * operands are contiguous along K); C is M x N row-major. fp32, fp16 or bf16
 * in and out, products accumulated in fp32 and C rounded once at the end.
 * Owns the axes, the input distribution, the fp64 reference check, the
 * byte/flop model and the variant table (variants/matmul/).
 *
 * Buffers: in[0] = A (M*K), in[1] = B (N*K), in[2] = bias (N; always
 * allocated and generated, read with epilogue 1), out[0] = C (M*N), all of
 * the dtype. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "inputs.h"
#include "matmul_ref.h"
#include "op.h"

cudaError_t kb_matmul_naive(const kb_args *a, cudaStream_t s);
cudaError_t kb_matmul_coalesced(const kb_args *a, cudaStream_t s);
cudaError_t kb_matmul_shared_memory(const kb_args *a, cudaStream_t s);
cudaError_t kb_matmul_register_tiled(const kb_args *a, cudaStream_t s);
/* variants/matmul/cublas.cu: cuBLASLt; prepare builds the case's descriptors
 * and picks the algorithm, the workspace is the variant's scratch. */
cudaError_t kb_matmul_cublas(const kb_args *a, cudaStream_t s);
size_t kb_matmul_cublas_scratch(const int64_t *shape, kb_dtype d);
int kb_matmul_cublas_prepare(const kb_args *a, char *why, size_t why_size);
const char *kb_matmul_cublas_last_error(void);
/* variants/matmul/tensor_core.cu and wgmma.cu: 16-bit only; k a multiple of 8
 * (16-byte rows for cp.async and the copy engine); wgmma is Hopper's. */
cudaError_t kb_matmul_tensor_core(const kb_args *a, cudaStream_t s);
int kb_matmul_tensor_core_unsupported(const int64_t *shape, kb_dtype d, char *why,
                                      size_t why_size);
cudaError_t kb_matmul_wgmma(const kb_args *a, cudaStream_t s);
int kb_matmul_wgmma_unsupported(const int64_t *shape, kb_dtype d, char *why, size_t why_size);
int kb_matmul_wgmma_prepare(const kb_args *a, char *why, size_t why_size);

/* The axis order here is the order of a->shape[] in the launchers
 * (variants/matmul/matmul.cuh repeats it). */
enum { M, N, K, EPILOGUE, NAXES };

/* Each of m, n, k is at most 2^24: the largest buffer, 2^48 elements, is then
 * far from wrapping a size_t, and a shape too large for the GPU is refused by
 * its bytes (kb_case_fits). */
#define MM_AXIS_MAX (1 << 24)

static const kb_axis axes[] = {
    {"m", 4096, 1, MM_AXIS_MAX, "rows of A and C"},
    {"n", 4096, 1, MM_AXIS_MAX, "columns of C: rows of the N x K buffer B"},
    {"k", 4096, 1, MM_AXIS_MAX, "the reduced axis: columns of A and of the buffer B"},
    {"epilogue", 0, 0, 1, "1: C = GELU(A B + bias), tanh GELU, bias per column of C"},
};

static const kb_variant variants[] = {
    {.name = "naive",
     .summary = "a thread per output, K loop from global memory; a warp spans 32 rows of C",
     .dtypes = KB_DT_ALL,
     .launch = kb_matmul_naive},
    {.name = "coalesced",
     .summary = "a warp per 32 outputs of a row, lanes split K: every load and store contiguous",
     .dtypes = KB_DT_ALL,
     .launch = kb_matmul_coalesced},
    {.name = "shared-memory",
     .summary = "32x32 tiles of A and B staged in shared memory, each element read 32 times there",
     .dtypes = KB_DT_ALL,
     .launch = kb_matmul_shared_memory},
    {.name = "register-tiled",
     .summary = "128x128 block tiles, an 8x8 tile of C per thread in registers, double-buffered",
     .dtypes = KB_DT_ALL,
     .launch = kb_matmul_register_tiled},
    {.name = "tensor-core",
     .summary = "mma.sync from ldmatrix of swizzled tiles, a 3-slot cp.async pipeline, fused epilogue",
     .dtypes = KB_DT(KB_FP16) | KB_DT(KB_BF16),
     .launch = kb_matmul_tensor_core,
     .unsupported = kb_matmul_tensor_core_unsupported},
    {.name = "wgmma",
     .summary = "TMA ring, wgmma producer/consumer warpgroups, persistent tiles, TMA-stored fused epilogue",
     .dtypes = KB_DT(KB_FP16) | KB_DT(KB_BF16),
     .launch = kb_matmul_wgmma,
     .unsupported = kb_matmul_wgmma_unsupported,
     .prepare = kb_matmul_wgmma_prepare},
    {.name = "cublas",
     .summary = "the vendor row: cuBLASLt (fp32 compute, no TF32; its GELU_BIAS epilogue)",
     .dtypes = KB_DT_ALL,
     .launch = kb_matmul_cublas,
     .scratch_bytes = kb_matmul_cublas_scratch,
     .prepare = kb_matmul_cublas_prepare,
     .last_error = kb_matmul_cublas_last_error},
};

static size_t in_bytes(const int64_t *shape, kb_dtype d, int i)
{
    const size_t es = kb_dtype_size(d);
    switch (i) {
    case 0:
        return (size_t)shape[M] * (size_t)shape[K] * es;
    case 1:
        return (size_t)shape[N] * (size_t)shape[K] * es;
    default:
        return (size_t)shape[N] * es;
    }
}

static size_t out_bytes(const int64_t *shape, kb_dtype d, int i)
{
    (void)i;
    return (size_t)shape[M] * (size_t)shape[N] * kb_dtype_size(d);
}

static void model(const int64_t *shape, kb_dtype d, double *bytes, double *flops)
{
    kb_matmul_model(shape[M], shape[N], shape[K], (int)shape[EPILOGUE], d, bytes, flops);
}

/* A, B and bias uniform in [-KB_MM_SPREAD, KB_MM_SPREAD), each from its own
 * seed: no zeros, no constant rows, and C of size sqrt(K) / 3. */
static kb_status generate(const kb_args *a, uint64_t seed, cudaStream_t s, kb_err *e)
{
    static const char *const names[3] = {"A", "B", "bias"};
    kb_input_fill in[3];
    for (int i = 0; i < 3; i++) {
        const size_t n = in_bytes(a->shape, a->dtype, i) / kb_dtype_size(a->dtype);
        in[i] = (kb_input_fill){names[i], n, 0.0f, (float)KB_MM_SPREAD};
    }
    return kb_fill_inputs(a, "matmul", in, 3, seed, s, e);
}

/* Rows of the fp64 copies of A and B fetched at a time, so that the check's
 * host memory stays bounded (2 * 64 rows * 16384 doubles, 16 MB) for any k. */
#define MM_CHECK_CHUNK 16384

/* Seeds of the sampled rows and columns, apart from each other and from the
 * inputs'. */
#define MM_ROW_SEED 0x9e3779b97f4a7c15ull
#define MM_COL_SEED 0xc2b2ae3d27d4eb4full

/* Compares C at the crossings of sampled rows and columns (kb_sample_indices;
 * the first and last of each, so the four corners always) with the fp64
 * reference computed from the device's own (dtype-rounded) inputs. The dot
 * products are summed over chunks of k, fetching the sampled rows of A and B
 * a chunk at a time. Each element gets atol + the GELU term of its
 * pre-activation; the check reports the largest atol it applied. */
static kb_status check(const kb_args *a, uint64_t seed, kb_check *c, kb_err *e)
{
    const int64_t m = a->shape[M], n = a->shape[N], k = a->shape[K];
    const int epi = (int)a->shape[EPILOGUE];
    const kb_dtype d = a->dtype;
    const int64_t chunk = k < MM_CHECK_CHUNK ? k : MM_CHECK_CHUNK;
    int64_t rows[KB_MM_CHECK_ROWS], cols[KB_MM_CHECK_COLS];
    const int64_t nr = kb_sample_indices(m, KB_MM_CHECK_ROWS, seed ^ MM_ROW_SEED, rows);
    const int64_t nc = kb_sample_indices(n, KB_MM_CHECK_COLS, seed ^ MM_COL_SEED, cols);
    double *ar = malloc((size_t)(nr * chunk) * sizeof *ar);
    double *br = malloc((size_t)(nc * chunk) * sizeof *br);
    double *dot = calloc((size_t)(nr * nc), sizeof *dot);
    double bias[KB_MM_CHECK_COLS] = {0};
    kb_status st = KB_OK;
    double atol, rtol, atol_max = 0.0;
    kb_matmul_tolerance(d, k, &atol, &rtol);
    kb_check_begin(c, atol, rtol);
    if (!ar || !br || !dot) {
        st = kb_fail(e, KB_EENV, "out of host memory for the check of k=%lld", (long long)k);
        goto done;
    }
    for (int64_t t0 = 0; t0 < k; t0 += chunk) {
        const int64_t len = k - t0 < chunk ? k - t0 : chunk;
        for (int64_t r = 0; r < nr; r++)
            if ((st = kb_fetch_doubles(a->in[0], d, (size_t)(rows[r] * k + t0), (size_t)len,
                                       ar + r * chunk, e)) != KB_OK)
                goto done;
        for (int64_t j = 0; j < nc; j++)
            if ((st = kb_fetch_doubles(a->in[1], d, (size_t)(cols[j] * k + t0), (size_t)len,
                                       br + j * chunk, e)) != KB_OK)
                goto done;
        for (int64_t r = 0; r < nr; r++)
            for (int64_t j = 0; j < nc; j++)
                dot[r * nc + j] += kb_matmul_ref_dot(ar + r * chunk, br + j * chunk, len);
    }
    if (epi)
        for (int64_t j = 0; j < nc; j++)
            if ((st = kb_fetch_doubles(a->in[2], d, (size_t)cols[j], 1, &bias[j], e)) != KB_OK)
                goto done;
    for (int64_t r = 0; r < nr; r++) {
        for (int64_t j = 0; j < nc; j++) {
            double out;
            if ((st = kb_fetch_doubles(a->out[0], d, (size_t)(rows[r] * n + cols[j]), 1, &out,
                                       e)) != KB_OK)
                goto done;
            const double z = dot[r * nc + j] + (epi ? bias[j] : 0.0);
            c->atol = atol + (epi ? kb_matmul_gelu_atol(d, dot[r * nc + j], z) : 0.0);
            atol_max = c->atol > atol_max ? c->atol : atol_max;
            kb_check_elem(c, out, kb_matmul_ref_epilogue(dot[r * nc + j], bias[j], epi), rows[r],
                          cols[j]);
        }
        c->rows_checked++;
    }
    c->atol = atol_max;
    kb_check_end(c);
done:
    free(ar);
    free(br);
    free(dot);
    return st;
}

const kb_op kb_op_matmul = {
    .name = "matmul",
    .summary = "C = A B [+ bias, GELU]; A M x K row-major, B stored N x K row-major (= K x N "
               "column-major), C M x N row-major (compute-bound)",
    .axes = axes,
    .naxes = NAXES,
    .dtypes = KB_DT_ALL,
    .default_dtype = KB_BF16, /* the dtype products run in practice, and the tensor-core rungs' */
    .bound = "compute",
    .variants = variants,
    .nvariants = (int)KB_COUNT(variants),
    .nin = 3,
    .nout = 1,
    .in_bytes = in_bytes,
    .out_bytes = out_bytes,
    .model = model,
    .generate = generate,
    .check = check,
};

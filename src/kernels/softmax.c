/* softmax.c - the row softmax operator: y[r][c] = exp(x[r][c] - max_r) / sum_r,
 * over the last axis of a rows x cols matrix, in fp32, fp16 or bf16 with fp32
 * accumulation. Owns the axes, the input distribution, the fp64 reference
 * check, the byte/flop model and the variant table (variants/softmax/). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fill.h"
#include "op.h"

cudaError_t kb_softmax_naive(const kb_args *a, cudaStream_t s);
cudaError_t kb_softmax_coalesced(const kb_args *a, cudaStream_t s);
cudaError_t kb_softmax_shared_memory(const kb_args *a, cudaStream_t s);
cudaError_t kb_softmax_online(const kb_args *a, cudaStream_t s);
cudaError_t kb_softmax_fused(const kb_args *a, cudaStream_t s);
cudaError_t kb_softmax_cluster(const kb_args *a, cudaStream_t s);
/* variants/softmax/cluster.cu: skips the rung on a GPU without clusters. */
int kb_softmax_cluster_prepare(const kb_args *a, char *why, size_t why_size);

enum { ROWS, COLS };

static const kb_axis axes[] = {
    {"rows", 32768, 1, INT32_MAX, "rows of the matrix; softmax runs along each row"},
    {"cols", 4096, 1, INT32_MAX, "row length, the reduced axis"},
};

static const kb_variant variants[] = {
    {.name = "naive",
     .summary = "one thread per row, three passes over global memory (max, sum, write)",
     .dtypes = KB_DT_ALL,
     .launch = kb_softmax_naive},
    {.name = "coalesced",
     .summary = "a warp per row: neighbouring lanes read neighbouring elements",
     .dtypes = KB_DT_ALL,
     .launch = kb_softmax_coalesced},
    {.name = "shared-memory",
     .summary = "a block per row, reductions through a shared-memory tree",
     .dtypes = KB_DT_ALL,
     .launch = kb_softmax_shared_memory},
    {.name = "online",
     .summary = "a block per row, max and sum in one pass with the online normaliser",
     .dtypes = KB_DT_ALL,
     .launch = kb_softmax_online},
    {.name = "fused",
     .summary = "one read and one write: row in registers, 16-byte vectors, online normaliser",
     .dtypes = KB_DT_ALL,
     .launch = kb_softmax_fused},
    {.name = "cluster",
     .summary = "a row split over a cluster's blocks, (max, sum) merged in DSMEM (Hopper)",
     .dtypes = KB_DT_ALL,
     .launch = kb_softmax_cluster,
     .prepare = kb_softmax_cluster_prepare},
};

static size_t elems(const int64_t *shape)
{
    return (size_t)shape[ROWS] * (size_t)shape[COLS];
}

static size_t buf_bytes(const int64_t *shape, kb_dtype d, int i)
{
    (void)i;
    return elems(shape) * kb_dtype_size(d);
}

/* x read once, y written once; per element: a max, a subtraction, an exp, an
 * add and a multiply. */
static void model(const int64_t *shape, kb_dtype d, double *bytes, double *flops)
{
    double n = (double)shape[ROWS] * (double)shape[COLS];
    *bytes = 2.0 * n * (double)kb_dtype_size(d);
    *flops = 5.0 * n;
}

/* Spread of the values within a row, and of the per-row offsets: with offsets
 * up to 100, exp without the max subtraction overflows fp32. */
#define SPREAD 5.0f
#define SHIFT 100.0f

static kb_status generate(const kb_args *a, uint64_t seed, cudaStream_t s, kb_err *e)
{
    cudaError_t ce = kb_fill_rows((void *)a->in[0], a->shape[ROWS], a->shape[COLS], a->dtype,
                                  seed, SPREAD, SHIFT, s);
    if (ce != cudaSuccess)
        return kb_fail(e, KB_EENV, "generating softmax inputs failed: %s",
                       cudaGetErrorString(ce));
    return KB_OK;
}

/* Outputs are probabilities of order 1/cols; the absolute tolerance covers the
 * subnormal spacing of fp16 (6e-8) and nothing more. In fp32 the error of a
 * recursive sum grows with its length (the bound is n*u), so beyond 16384
 * columns the relative tolerance grows with cols: the naive variant's sequential
 * sum of 100003 exps is 1.1e-4 off in relative L2, a tree sum far less. */
static void tolerance(kb_dtype d, int64_t cols, double *atol, double *rtol)
{
    static const double at[KB_DTYPE_COUNT] = {1e-9, 6e-8, 1e-9};
    static const double rt[KB_DTYPE_COUNT] = {1e-4, 2e-3, 1e-2};
    *atol = at[d];
    *rtol = rt[d];
    if (d == KB_FP32 && cols > 16384)
        *rtol *= (double)cols / 16384.0;
}

/* What check's rows share. */
typedef struct sm_check {
    const kb_args *a;
    const int64_t *pick;
} sm_check;

/* Picked row i of y against exp(x - max) / sum (scratch: x, then y). */
static kb_status check_row(const void *ctx, int64_t i, double *x, kb_check *c, kb_err *e)
{
    const sm_check *k = ctx;
    const int64_t row = k->pick[i], cols = k->a->shape[COLS];
    const size_t first = (size_t)row * (size_t)cols;
    double *y = x + cols;
    kb_status st = kb_fetch_doubles(k->a->in[0], k->a->dtype, first, (size_t)cols, x, e);
    if (st == KB_OK)
        st = kb_fetch_doubles(k->a->out[0], k->a->dtype, first, (size_t)cols, y, e);
    if (st != KB_OK)
        return st;
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; j++)
        m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < cols; j++)
        sum += exp(x[j] - m);
    for (int64_t j = 0; j < cols; j++)
        kb_check_elem(c, y[j], exp(x[j] - m) / sum, row, j);
    c->rows_checked++;
    return KB_OK;
}

/* Compares y with the fp64 reference, row by row over kb_sample_rows
 * (kb_check_rows' threads). */
static kb_status check(const kb_args *a, uint64_t seed, kb_check *c, kb_err *e)
{
    const int64_t rows = a->shape[ROWS], cols = a->shape[COLS];
    int64_t *pick = malloc(KB_CHECK_ALL_ROWS * sizeof *pick);
    double atol, rtol;
    tolerance(a->dtype, cols, &atol, &rtol);
    kb_check_begin(c, atol, rtol);
    if (!pick)
        return kb_fail(e, KB_EENV, "out of host memory for %d row indices", KB_CHECK_ALL_ROWS);
    const sm_check k = {a, pick};
    const kb_status st = kb_check_rows(kb_sample_rows(rows, seed, pick), 2 * (size_t)cols,
                                       check_row, &k, c, e);
    if (st == KB_OK)
        kb_check_end(c);
    free(pick);
    return st;
}

const kb_op kb_op_softmax = {
    .name = "softmax",
    .summary = "softmax over the last axis of a rows x cols matrix (memory-bound)",
    .axes = axes,
    .naxes = 2,
    .dtypes = KB_DT_ALL,
    .bound = "memory",
    .variants = variants,
    .nvariants = (int)KB_COUNT(variants),
    .nin = 1,
    .nout = 1,
    .in_bytes = buf_bytes,
    .out_bytes = buf_bytes,
    .model = model,
    .generate = generate,
    .check = check,
};

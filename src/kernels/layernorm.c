/* layernorm.c - the layernorm + bias + GELU operator:
 *   y = GELU((x - mean) * rstd * gamma + beta + b)   over each row of x,
 * rstd = 1 / sqrt(var + 1e-5) (biased variance), GELU exact (erf) or tanh, in
 * fp32, fp16 or bf16 with fp32 statistics, optionally also writing the per-row
 * mean and rstd (fp32) as training frameworks do. Owns the axes, the input
 * distribution, the fp64 reference check (layernorm_ref.c), the byte/flop model
 * and the variant table (variants/layernorm/).
 *
 * Buffers: in[0] = x (rows x cols), in[1] = gamma, in[2] = beta, in[3] = b (cols
 * each), all of the dtype; out[0] = y (rows x cols, dtype), out[1] = mean and
 * out[2] = rstd (rows fp32 each; 0 bytes, and NULL in the launcher, when
 * stats=0).
 *
 * The large-mean case (mean axis): x = mean + U[-1, 1). It is meaningful in fp32,
 * whose spacing at 1e4 is 2^-10, far below the spread: there a one-pass
 * variance E[x^2] - E[x]^2 loses everything (E[x^2] = 1e8 has spacing 8; var is
 * 1/3) and the check catches it, while a two-pass or Welford variance on shifted
 * data is accurate. In fp16 (spacing 8 at 1e4) and bf16 (spacing 64) the inputs
 * round to a single value per row at mean 1e4: rows are constant, var is 0 and
 * the case tests only the eps; fp16 cannot hold |mean| + 1 > 65504 at all (such
 * shapes are skipped for fp16). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "inputs.h"
#include "layernorm_ref.h"
#include "op.h"

cudaError_t kb_layernorm_naive(const kb_args *a, cudaStream_t s);
cudaError_t kb_layernorm_coalesced(const kb_args *a, cudaStream_t s);
cudaError_t kb_layernorm_shared_memory(const kb_args *a, cudaStream_t s);
cudaError_t kb_layernorm_fused(const kb_args *a, cudaStream_t s);
cudaError_t kb_layernorm_one_pass_variance(const kb_args *a, cudaStream_t s);
cudaError_t kb_layernorm_cluster(const kb_args *a, cudaStream_t s);
/* variants/layernorm/cluster.cu: skips the rung on a GPU without clusters. */
int kb_layernorm_cluster_prepare(const kb_args *a, char *why, size_t why_size);

enum { ROWS, COLS, GELU, STATS, MEAN, NAXES };

static const kb_axis axes[] = {
    {"rows", 32768, 1, 1 << 26, "rows of x; each is normalised on its own"},
    {"cols", 4096, 1, 1 << 22, "row length, the normalised axis"},
    {"gelu", 0, 0, 1, "0: exact GELU (erf), 1: tanh approximation"},
    {"stats", 0, 0, 1, "1: also write each row's mean and rstd (fp32)"},
    {"mean", 0, -1000000, 1000000,
     "centre of the inputs, x = mean + U[-1,1); 10000 exposes a one-pass variance (fp32)"},
};

/* The largest finite fp16 is 65504: inputs centred further out overflow. */
static int unsupported(const int64_t *shape, kb_dtype d, char *why, size_t why_size)
{
    if (d == KB_FP16 && llabs((long long)shape[MEAN]) + 1 > 65504) {
        snprintf(why, why_size, "fp16 cannot hold inputs centred at mean=%lld (largest 65504)",
                 (long long)shape[MEAN]);
        return 1;
    }
    return 0;
}

/* naive and coalesced keep mean and rstd (each padded to 64 floats) and the
 * fp32 intermediate t (rows x cols) in scratch. */
static size_t scratch_stepwise(const int64_t *shape, kb_dtype d)
{
    (void)d;
    return (size_t)(2 * kb_ln_pad_rows(shape[ROWS]) + shape[ROWS] * shape[COLS]) * sizeof(float);
}

/* fused keeps a 16-bit row's beta + b as floats (layernorm_params32), and
 * with KBENCH_LAYERNORM_SROW2_G32=1 its gamma too: two floats a column. */
static size_t scratch_fused(const int64_t *shape, kb_dtype d)
{
    return kb_dtype_size(d) == 2 ? (size_t)shape[COLS] * 2 * sizeof(float) : 0;
}

static const kb_variant variants[] = {
    {.name = "naive",
     .summary = "five kernels, a thread per row, intermediates through global memory",
     .dtypes = KB_DT_ALL,
     .launch = kb_layernorm_naive,
     .unsupported = unsupported,
     .scratch_bytes = scratch_stepwise},
    {.name = "coalesced",
     .summary = "warp-per-row statistics, then coalesced normalise, bias, GELU kernels",
     .dtypes = KB_DT_ALL,
     .launch = kb_layernorm_coalesced,
     .unsupported = unsupported,
     .scratch_bytes = scratch_stepwise},
    {.name = "shared-memory",
     .summary = "a block per row, Welford merged through shared memory, one kernel",
     .dtypes = KB_DT_ALL,
     .launch = kb_layernorm_shared_memory,
     .unsupported = unsupported},
    {.name = "fused",
     .summary = "one read and one write: row in registers, 16-byte vectors, two-pass stats",
     .dtypes = KB_DT_ALL,
     .launch = kb_layernorm_fused,
     .unsupported = unsupported,
     .scratch_bytes = scratch_fused},
    {.name = "one-pass-variance",
     .summary = "trap: fused with var = E[x^2] - E[x]^2, wrong at large mean",
     .dtypes = KB_DT_ALL,
     .launch = kb_layernorm_one_pass_variance,
     .unsupported = unsupported},
    {.name = "cluster",
     .summary = "a row split over a cluster's blocks, Welford partials merged in DSMEM (Hopper)",
     .dtypes = KB_DT_ALL,
     .launch = kb_layernorm_cluster,
     .unsupported = unsupported,
     .prepare = kb_layernorm_cluster_prepare},
};

static size_t in_bytes(const int64_t *shape, kb_dtype d, int i)
{
    size_t n = i == 0 ? (size_t)shape[ROWS] * (size_t)shape[COLS] : (size_t)shape[COLS];
    return n * kb_dtype_size(d);
}

static size_t out_bytes(const int64_t *shape, kb_dtype d, int i)
{
    if (i == 0)
        return (size_t)shape[ROWS] * (size_t)shape[COLS] * kb_dtype_size(d);
    return shape[STATS] ? (size_t)shape[ROWS] * sizeof(float) : 0;
}

/* See kb_layernorm_model: x read and y written once, gamma/beta/b read once,
 * mean and rstd written when asked for; 14 flops an element. */
static void model(const int64_t *shape, kb_dtype d, double *bytes, double *flops)
{
    kb_layernorm_model(shape[ROWS], shape[COLS], (int)shape[STATS], d, bytes, flops);
}

/* x around the mean axis with spread 1; gamma = 1 +- 0.5; beta, b = 0 +- 0.5,
 * each from its own seed. */
static kb_status generate(const kb_args *a, uint64_t seed, cudaStream_t s, kb_err *e)
{
    const size_t rows = (size_t)a->shape[ROWS], cols = (size_t)a->shape[COLS];
    const kb_input_fill in[4] = {{"x", rows * cols, (float)a->shape[MEAN], 1.0f},
                                 {"gamma", cols, 1.0f, 0.5f},
                                 {"beta", cols, 0.0f, 0.5f},
                                 {"b", cols, 0.0f, 0.5f}};
    return kb_fill_inputs(a, "layernorm", in, 4, seed, s, e);
}

/* What check's rows share: the case, the rows picked, their statistics (mean,
 * rstd a row, pass 1's) and the parameters as doubles. */
typedef struct ln_check {
    const kb_args *a;
    const int64_t *pick;
    double *rs;
    const double *g, *b1, *b2;
} ln_check;

/* Pass 1: picked row i's statistics into rs. */
static kb_status check_stats_row(const void *ctx, int64_t i, double *x, kb_check *c, kb_err *e)
{
    (void)c;
    const ln_check *k = ctx;
    const size_t n = (size_t)k->a->shape[COLS];
    const kb_status st =
        kb_fetch_doubles(k->a->in[0], k->a->dtype, (size_t)k->pick[i] * n, n, x, e);
    if (st == KB_OK)
        kb_layernorm_ref_stats(x, (int64_t)n, &k->rs[2 * i], &k->rs[2 * i + 1]);
    return st;
}

/* Pass 2: picked row i of y against the reference (scratch: x, then y). */
static kb_status check_row(const void *ctx, int64_t i, double *x, kb_check *c, kb_err *e)
{
    const ln_check *k = ctx;
    const kb_args *a = k->a;
    const int64_t row = k->pick[i], cols = a->shape[COLS];
    const size_t n = (size_t)cols, first = (size_t)row * n;
    const int tanh_form = (int)a->shape[GELU];
    double *y = x + n;
    kb_status st;
    if ((st = kb_fetch_doubles(a->in[0], a->dtype, first, n, x, e)) != KB_OK ||
        (st = kb_fetch_doubles(a->out[0], a->dtype, first, n, y, e)) != KB_OK)
        return st;
    const double m = k->rs[2 * i], r = k->rs[2 * i + 1];
    for (int64_t j = 0; j < cols; j++)
        kb_check_elem(c, y[j],
                      kb_gelu_ref((x[j] - m) * r * k->g[j] + k->b1[j] + k->b2[j], tanh_form), row,
                      j);
    if (a->shape[STATS]) {
        double dm, dr;
        if ((st = kb_fetch_doubles(a->out[1], KB_FP32, (size_t)row, 1, &dm, e)) != KB_OK ||
            (st = kb_fetch_doubles(a->out[2], KB_FP32, (size_t)row, 1, &dr, e)) != KB_OK)
            return st;
        kb_check_elem(c, (dm - m) * r, 0.0, row, -1);
        kb_check_elem(c, dr / r, 1.0, row, -2);
    }
    c->rows_checked++;
    return KB_OK;
}

/* Compares y with the fp64 reference computed from the device's own
 * (dtype-rounded) inputs, row by row over kb_sample_rows (kb_check_rows'
 * threads); with stats also the mean (as mean * rstd_ref, i.e. in units of
 * the row's standard deviation, reported as column -1) and rstd (as rstd /
 * rstd_ref against 1, column -2). Tolerances: kb_layernorm_tolerance, its
 * conditioning term from a first pass over the same rows. */
static kb_status check(const kb_args *a, uint64_t seed, kb_check *c, kb_err *e)
{
    const int64_t rows = a->shape[ROWS], cols = a->shape[COLS];
    const kb_dtype d = a->dtype;
    const size_t n = (size_t)cols;
    int64_t *pick = malloc(KB_CHECK_ALL_ROWS * sizeof *pick);
    double *rs = malloc((size_t)KB_CHECK_ALL_ROWS * 2 * sizeof *rs); /* mean, rstd per pick */
    double *buf = malloc(3 * n * sizeof *buf);
    kb_status st = KB_OK;
    double atol, rtol;
    kb_check_begin(c, 0.0, 0.0);
    if (!pick || !rs || !buf) {
        st = kb_fail(e, KB_EENV, "out of host memory for a row of %lld", (long long)cols);
        goto done;
    }
    const ln_check k = {a, pick, rs, buf, buf + n, buf + 2 * n};
    if ((st = kb_fetch_doubles(a->in[1], d, 0, n, buf, e)) != KB_OK ||
        (st = kb_fetch_doubles(a->in[2], d, 0, n, buf + n, e)) != KB_OK ||
        (st = kb_fetch_doubles(a->in[3], d, 0, n, buf + 2 * n, e)) != KB_OK)
        goto done;
    const int64_t npick = kb_sample_rows(rows, seed, pick);

    /* Pass 1: the statistics of every checked row, and the worst conditioning
     * |mean| * rstd among them (c compares nothing yet: begun again below). */
    if ((st = kb_check_rows(npick, n, check_stats_row, &k, c, e)) != KB_OK)
        goto done;
    double cond = 0.0, gmax = 0.0;
    for (int64_t i = 0; i < npick; i++)
        cond = fmax(cond, fabs(rs[2 * i]) * rs[2 * i + 1]);
    for (int64_t j = 0; j < cols; j++)
        gmax = fmax(gmax, fabs(k.g[j]));
    double def_atol, def_rtol;
    kb_default_tolerance(d, &def_atol, &def_rtol);
    kb_layernorm_tolerance(d, cols, cond, gmax, def_atol, def_rtol, &atol, &rtol);
    kb_check_begin(c, atol, rtol);

    /* Pass 2: compare. */
    if ((st = kb_check_rows(npick, 2 * n, check_row, &k, c, e)) != KB_OK)
        goto done;
    kb_check_end(c);
done:
    free(pick);
    free(rs);
    free(buf);
    return st;
}

const kb_op kb_op_layernorm = {
    .name = "layernorm",
    .summary = "GELU(layernorm(x; gamma, beta) + b) over the last axis (memory-bound)",
    .axes = axes,
    .naxes = NAXES,
    .dtypes = KB_DT_ALL,
    .bound = "memory",
    .variants = variants,
    .nvariants = (int)KB_COUNT(variants),
    .nin = 4,
    .nout = 3,
    .in_bytes = in_bytes,
    .out_bytes = out_bytes,
    .model = model,
    .generate = generate,
    .check = check,
};

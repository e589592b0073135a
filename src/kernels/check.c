/* check.c - row sampling, device fetches and tolerance accounting shared by the
 * operators' fp64 reference checks. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "../util/par.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t kb_sample_indices(int64_t n, int64_t want, uint64_t seed, int64_t *out)
{
    if (n <= want) {
        for (int64_t i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    int64_t got = 0;
    out[got++] = 0;
    out[got++] = n - 1;
    uint64_t k = 0;
    while (got < want) {
        float u = kb_uniform_host(seed ^ 0x243f6a8885a308d3ull, k++); /* [-1, 1) */
        int64_t r = (int64_t)((double)(u + 1.0f) * 0.5 * (double)n);
        if (r < 0)
            r = 0;
        if (r >= n)
            r = n - 1;
        int dup = 0;
        for (int64_t j = 0; j < got && !dup; j++)
            dup = out[j] == r;
        if (!dup)
            out[got++] = r;
    }
    qsort(out, (size_t)got, sizeof *out, cmp_i64);
    return got;
}

int64_t kb_sample_rows(int64_t rows, uint64_t seed, int64_t *out)
{
    return kb_sample_indices(rows, rows <= KB_CHECK_ALL_ROWS ? rows : KB_CHECK_SAMPLE_ROWS,
                             seed, out);
}

kb_status kb_fetch_doubles(const void *dev, kb_dtype d, size_t first, size_t count,
                           double *host, kb_err *e)
{
    size_t es = kb_dtype_size(d);
    void *tmp = malloc(count * es + 1);
    if (!tmp)
        return kb_fail(e, KB_EENV, "out of host memory fetching %zu elements", count);
    cudaError_t ce = cudaMemcpy(tmp, (const char *)dev + first * es, count * es,
                                cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        free(tmp);
        return kb_fail(e, KB_EENV, "cudaMemcpy of check data failed: %s (%s)",
                       cudaGetErrorString(ce), cudaGetErrorName(ce));
    }
    for (size_t i = 0; i < count; i++)
        host[i] = kb_load_as_double(tmp, d, i);
    free(tmp);
    return KB_OK;
}

void kb_default_tolerance(kb_dtype d, double *atol, double *rtol)
{
    switch (d) {
    case KB_FP32:
        *atol = 1e-7;
        *rtol = 1e-4;
        break;
    case KB_FP16:
        *atol = 1e-5;
        *rtol = 2e-3;
        break;
    default:
        *atol = 1e-5;
        *rtol = 1e-2;
        break;
    }
}

void kb_check_begin(kb_check *c, double atol, double rtol)
{
    *c = (kb_check){0};
    c->atol = atol;
    c->rtol = rtol;
}

void kb_check_elem(kb_check *c, double out, double ref, int64_t row, int64_t col)
{
    double diff = fabs(out - ref);
    c->elems_checked++;
    int bad = !isfinite(out) || !(diff <= c->atol + c->rtol * fabs(ref));
    if (isfinite(out)) {
        if (diff > c->max_abs_err)
            c->max_abs_err = diff;
        c->sum_sq_diff += diff * diff;
    } else {
        c->max_abs_err = INFINITY;
        c->sum_sq_diff = INFINITY;
    }
    c->sum_sq_ref += ref * ref;
    if (bad) {
        if (c->bad_elems == 0)
            snprintf(c->first_bad, sizeof c->first_bad, "row %lld col %lld: got %.9g, expected %.9g",
                     (long long)row, (long long)col, out, ref);
        c->bad_elems++;
    }
}

void kb_check_end(kb_check *c)
{
    c->rel_l2_err = c->sum_sq_ref > 0 ? sqrt(c->sum_sq_diff / c->sum_sq_ref)
                                      : sqrt(c->sum_sq_diff);
}

int kb_check_passed(const kb_check *c)
{
    return c->elems_checked > 0 && c->bad_elems == 0;
}

/* Adds the comparison `part` (begun with the same tolerances, not ended) to
 * `into`, as if its elements had been compared after into's: the counts and
 * sums add, the largest error stays, and into's first bad element stays the
 * first. */
static void check_merge(kb_check *into, const kb_check *part)
{
    into->rows_checked += part->rows_checked;
    into->elems_checked += part->elems_checked;
    if (into->bad_elems == 0 && part->bad_elems > 0)
        memcpy(into->first_bad, part->first_bad, sizeof into->first_bad);
    into->bad_elems += part->bad_elems;
    if (part->max_abs_err > into->max_abs_err)
        into->max_abs_err = part->max_abs_err;
    into->sum_sq_diff += part->sum_sq_diff;
    into->sum_sq_ref += part->sum_sq_ref;
}

/* kb_check_rows' job: a kb_check a chunk and a scratch a worker. */
typedef struct check_job {
    kb_check_row_fn fn;
    const void *ctx;
    const kb_check *tol;
    kb_check *part; /* [KB_CHECK_CHUNKS] */
    double **scratch; /* [threads] */
    size_t nscratch;
    int dev; /* the caller's CUDA device, -1 for none (rows that fetch nothing) */
} check_job;

static kb_status check_init(void *ctx, int w, kb_err *e)
{
    check_job *j = ctx;
    if (j->dev >= 0 && w > 0) {
        const cudaError_t ce = cudaSetDevice(j->dev);
        if (ce != cudaSuccess)
            return kb_fail(e, KB_EENV, "cudaSetDevice(%d) for a check thread failed: %s", j->dev,
                           cudaGetErrorString(ce));
    }
    if (j->nscratch && !(j->scratch[w] = malloc(j->nscratch * sizeof(double))))
        return kb_fail(e, KB_EENV, "out of host memory for a check row of %zu", j->nscratch);
    return KB_OK;
}

static kb_status check_chunk(void *ctx, int k, int64_t begin, int64_t end, int w, kb_err *e)
{
    check_job *j = ctx;
    kb_check *c = &j->part[k];
    kb_check_begin(c, j->tol->atol, j->tol->rtol);
    for (int64_t i = begin; i < end; i++) {
        const kb_status st = j->fn(j->ctx, i, j->scratch[w], c, e);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

kb_status kb_check_rows(int64_t n, size_t scratch, kb_check_row_fn fn, const void *ctx,
                        kb_check *c, kb_err *e)
{
    int threads = kb_par_threads();
    const size_t row_bytes = scratch * sizeof(double);
    const size_t fit = row_bytes > 0 ? KB_CHECK_SCRATCH_BYTES / row_bytes : (size_t)threads;
    if ((size_t)threads > fit)
        threads = fit > 0 ? (int)fit : 1;
    check_job j = {.fn = fn, .ctx = ctx, .tol = c, .nscratch = scratch, .dev = -1};
    if (cudaGetDevice(&j.dev) != cudaSuccess) {
        j.dev = -1; /* no device: rows that fetch nothing (the host tests) */
        (void)cudaGetLastError();
    }
    j.part = calloc(KB_CHECK_CHUNKS, sizeof *j.part);
    j.scratch = calloc((size_t)threads, sizeof *j.scratch);
    kb_status st;
    if (!j.part || !j.scratch) {
        st = kb_fail(e, KB_EENV, "out of host memory for a check on %d threads", threads);
    } else {
        st = kb_par_run(n, KB_CHECK_CHUNKS, threads, check_init, check_chunk, &j, e);
        for (int k = 0; k < KB_CHECK_CHUNKS && st == KB_OK; k++)
            check_merge(c, &j.part[k]);
    }
    if (j.scratch)
        for (int w = 0; w < threads; w++)
            free(j.scratch[w]);
    free(j.scratch);
    free(j.part);
    return st;
}

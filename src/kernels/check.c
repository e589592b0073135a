/* check.c - row sampling, device fetches and tolerance accounting shared by the
 * operators' fp64 reference checks. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fill.h"

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

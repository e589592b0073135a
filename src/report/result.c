/* result.c - lifecycle of the result model and the figures derived from it. */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

static const char *const rstatus_names[] = {"ok", "mismatch", "failed", "skipped"};

const char *kb_rstatus_name(kb_rstatus s)
{
    return (unsigned)s < 4 ? rstatus_names[s] : "?";
}

int kb_rstatus_parse(const char *s, kb_rstatus *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, rstatus_names[i]) == 0) {
            *out = (kb_rstatus)i;
            return 0;
        }
    return -1;
}

void kb_result_init(kb_result *r)
{
    memset(r, 0, sizeof *r);
    r->max_abs_err = r->rel_l2_err = r->atol = r->rtol = NAN;
    r->median_us = r->min_us = r->max_us = r->stdrel = NAN;
    r->sm_clock_mhz = NAN;
    r->bytes = r->flops = NAN;
    r->gbps = r->tflops = r->pct_peak = NAN;
    r->dram_bytes = r->excess_traffic = r->achieved_occupancy = r->dram_gbps = NAN;
    kb_strlcpy(r->metric_set, "none", sizeof r->metric_set);
    kb_strlcpy(r->bound, "memory", sizeof r->bound);
    r->extra_bytes = 0;
    r->theoretical_occupancy = NAN;
    r->registers = -1;
    r->local_bytes = -1;
}

void kb_device_init(kb_device *d)
{
    memset(d, 0, sizeof *d);
    d->copy_gbps = d->mma_tflops = d->fp32_tflops = NAN;
}

void kb_run_init(kb_run *run)
{
    memset(run, 0, sizeof *run);
    kb_device_init(&run->dev);
}

void kb_result_release(kb_result *r)
{
    free(r->samples_us);
    free(r->kernels);
    r->samples_us = NULL;
    r->kernels = NULL;
    r->nsamples = 0;
    r->nkernels = 0;
}

void kb_run_release(kb_run *run)
{
    for (size_t i = 0; i < run->nresults; i++)
        kb_result_release(&run->results[i]);
    free(run->results);
    run->results = NULL;
    run->nresults = run->cap = 0;
}

int kb_run_add(kb_run *run, kb_result *r)
{
    if (run->nresults == run->cap) {
        size_t cap = run->cap ? run->cap * 2 : 8;
        kb_result *p = realloc(run->results, cap * sizeof *p);
        if (!p)
            return -1;
        run->results = p;
        run->cap = cap;
    }
    run->results[run->nresults++] = *r;
    r->samples_us = NULL;
    r->kernels = NULL;
    r->nsamples = 0;
    r->nkernels = 0;
    return 0;
}

void kb_result_derive(kb_result *r, const kb_device *dev)
{
    r->gbps = r->tflops = r->pct_peak = r->dram_gbps = NAN;
    if (!(r->median_us > 0))
        return;
    if (isfinite(r->dram_bytes))
        r->dram_gbps = r->dram_bytes / (r->median_us * 1e3);
    if (isfinite(r->bytes))
        r->gbps = r->bytes / (r->median_us * 1e3);
    if (isfinite(r->flops))
        r->tflops = r->flops / (r->median_us * 1e6);
    if (strcmp(r->bound, "compute") == 0) {
        double peak = strcmp(r->dtype, "fp32") == 0 ? dev->fp32_tflops : dev->mma_tflops;
        if (isfinite(r->tflops) && peak > 0)
            r->pct_peak = 100.0 * r->tflops / peak;
    } else if (isfinite(r->gbps) && dev->copy_gbps > 0) {
        r->pct_peak = 100.0 * r->gbps / dev->copy_gbps;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void kb_result_summarise(kb_result *r)
{
    r->median_us = r->min_us = r->max_us = r->stdrel = NAN;
    size_t n = r->nsamples;
    if (n == 0)
        return;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return;
    memcpy(s, r->samples_us, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    r->min_us = s[0];
    r->max_us = s[n - 1];
    r->median_us = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    double mean = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        mean += s[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        var += (s[i] - mean) * (s[i] - mean);
    r->stdrel = n > 1 && mean > 0 ? sqrt(var / (double)(n - 1)) / mean : 0.0;
    free(s);
}

void kb_result_shape_str(const kb_result *r, const char *sep, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->naxes && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s=%lld", i ? sep : "", r->axis[i],
                         (long long)r->shape[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int kb_result_same_group(const kb_result *a, const kb_result *b)
{
    if (strcmp(a->op, b->op) != 0 || strcmp(a->dtype, b->dtype) != 0 || a->naxes != b->naxes)
        return 0;
    for (int i = 0; i < a->naxes; i++)
        if (strcmp(a->axis[i], b->axis[i]) != 0 || a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

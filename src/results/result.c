/* result.c - lifecycle of the result model: initial values, ownership of the
 * samples and kernels, the run's list of results and the speed-up over naive
 * that it keeps current; names and groups. The figures of one result are in
 * figures.c. */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

static const char *const rstatus_names[] = {"ok", "mismatch", "failed", "skipped"};
#define NSTATUS ((int)KB_COUNT(rstatus_names))

int kb_clocks_apart(double a, double b)
{
    const double lo = a < b ? a : b, hi = a < b ? b : a;
    return lo > 0 && isfinite(lo) && isfinite(hi) && hi > KB_CLOCKS_APART * lo;
}

const char *kb_rstatus_name(kb_rstatus s)
{
    return (int)s >= 0 && (int)s < NSTATUS ? rstatus_names[s] : "?";
}

int kb_rstatus_parse(const char *s, kb_rstatus *out)
{
    for (int i = 0; i < NSTATUS; i++)
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
    r->gbps = r->tflops = r->pct_peak = r->speedup = NAN;
    r->batch_us = r->batch_stdrel = r->batch_sm_clock_mhz = NAN;
    r->gbps_batch = r->tflops_batch = r->pct_peak_batch = r->speedup_batch = NAN;
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
    d->copy_gbps = d->mma_tflops = d->fp32_tflops = d->copy_batch_gbps = NAN;
    d->ceilings_sm_clock_mhz = NAN;
}

const char *kb_ceiling_name(int i)
{
    static const char *const names[KB_NCEILINGS] = {"copy_gbps", "mma_tflops", "fp32_tflops",
                                                    "copy_batch_gbps"};
    return i >= 0 && i < KB_NCEILINGS ? names[i] : "?";
}

double kb_device_ceiling_of(const kb_device *d, int i)
{
    return *kb_device_ceiling((kb_device *)d, i);
}

double *kb_device_ceiling(kb_device *d, int i)
{
    return i == KB_CEILING_COPY         ? &d->copy_gbps
           : i == KB_CEILING_MMA        ? &d->mma_tflops
           : i == KB_CEILING_COPY_BATCH ? &d->copy_batch_gbps
                                        : &d->fp32_tflops;
}

/* ---- flags and timings ------------------------------------------------------------ */

static const char *const flag_names[KB_NFLAGS] = {"gpu_shared", "l2_resident", "gpu_unchecked"};

const char *kb_flag_name(int i)
{
    return i >= 0 && i < KB_NFLAGS ? flag_names[i] : NULL;
}

int kb_flag_parse(const char *s, unsigned *bit)
{
    for (int i = 0; i < KB_NFLAGS; i++)
        if (strcmp(s, flag_names[i]) == 0) {
            *bit = 1u << i;
            return 0;
        }
    return -1;
}

void kb_flags_str(unsigned flags, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < KB_NFLAGS && used < n; i++) {
        if (!(flags & (1u << i)))
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", flag_names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int kb_flags_parse(const char *s, unsigned *flags)
{
    char name[32];
    *flags = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        unsigned bit = 0;
        if (len >= sizeof name)
            return -1;
        memcpy(name, s, len);
        name[len] = '\0';
        if (kb_flag_parse(name, &bit) != 0)
            return -1;
        *flags |= bit;
        s += len + (s[len] == ',');
    }
    return 0;
}

static const char *const timing_names[] = {"cold", "batch"};

const char *kb_timing_name(kb_timing t)
{
    return (int)t >= 0 && (int)t < (int)KB_COUNT(timing_names) ? timing_names[t] : "?";
}

int kb_timing_parse(const char *s, kb_timing *out)
{
    for (size_t i = 0; i < KB_COUNT(timing_names); i++)
        if (strcmp(s, timing_names[i]) == 0) {
            *out = (kb_timing)i;
            return 0;
        }
    return -1;
}

kb_timed kb_result_timed(const kb_result *r, kb_timing t)
{
    if (t == KB_TIMING_BATCH)
        return (kb_timed){r->batch_us, r->batch_stdrel, r->gbps_batch, r->tflops_batch,
                          r->pct_peak_batch, r->speedup_batch};
    return (kb_timed){r->median_us, r->stdrel, r->gbps, r->tflops, r->pct_peak, r->speedup};
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
    kb_run_case_speedups(run, &run->results[run->nresults - 1]);
    return 0;
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

kb_status kb_groups_of(size_t n, const kb_result *(*at)(const void *ctx, size_t i),
                       const void *ctx, kb_groups *g, kb_err *e)
{
    char *taken = calloc(n ? n : 1, 1);
    memset(g, 0, sizeof *g);
    g->first = calloc(n + 1, sizeof *g->first);
    g->idx = calloc(n ? n : 1, sizeof *g->idx);
    if (!taken || !g->first || !g->idx) {
        free(taken);
        kb_groups_release(g);
        return kb_fail(e, KB_EENV, "out of memory grouping %zu results", n);
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        const kb_result *r0 = at(ctx, i);
        g->first[g->n++] = used;
        for (size_t j = i; j < n; j++)
            if (!taken[j] && kb_result_same_group(r0, at(ctx, j))) {
                taken[j] = 1;
                g->idx[used++] = j;
            }
    }
    g->first[g->n] = used;
    free(taken);
    return KB_OK;
}

static const kb_result *run_result(const void *ctx, size_t i)
{
    return &((const kb_run *)ctx)->results[i];
}

kb_status kb_run_groups(const kb_run *run, kb_groups *g, kb_err *e)
{
    return kb_groups_of(run->nresults, run_result, run, g, e);
}

void kb_groups_release(kb_groups *g)
{
    free(g->first);
    free(g->idx);
    memset(g, 0, sizeof *g);
}

int kb_counters_reason_is_new(const kb_run *run, const size_t *idx, size_t i)
{
    const char *why = run->results[idx[i]].counters_reason;
    if (!*why)
        return 0;
    for (size_t j = 0; j < i; j++)
        if (strcmp(run->results[idx[j]].counters_reason, why) == 0)
            return 0;
    return 1;
}

static int clamp_count(int n, int max)
{
    return n < 0 ? 0 : n > max ? max : n;
}

int kb_kernel_nmetrics(const kb_kernel *k)
{
    return clamp_count(k->nmetrics, KB_RES_MAX_METRICS);
}

int kb_kernel_nstalls(const kb_kernel *k)
{
    return clamp_count(k->nstalls, KB_RES_MAX_STALLS);
}

/* ---- the speed-up over naive, a figure of the run ---------------------------------- */

/* The variant every speed-up is taken against. */
#define BASELINE_VARIANT "naive"

/* The time (cold median, or batch) of the first ok baseline result of r's
 * case in the run that has one, or NAN. */
static double baseline_time(const kb_run *run, const kb_result *r, kb_timing t)
{
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *b = &run->results[i];
        const double us = kb_result_timed(b, t).us;
        if (strcmp(b->variant, BASELINE_VARIANT) == 0 && b->status == KB_R_OK && us > 0 &&
            isfinite(us) && kb_result_same_group(b, r))
            return us;
    }
    return NAN;
}

/* base over x's time, when x is ok and both are known. */
static double speedup_of(const kb_result *x, double base, double us)
{
    return x->status == KB_R_OK && us > 0 && isfinite(us) && isfinite(base) ? base / us : NAN;
}

void kb_run_case_speedups(kb_run *run, const kb_result *r)
{
    const kb_result key = *r; /* r may point into run->results */
    const double base = baseline_time(run, &key, KB_TIMING_COLD);
    const double base_batch = baseline_time(run, &key, KB_TIMING_BATCH);
    for (size_t i = 0; i < run->nresults; i++) {
        kb_result *x = &run->results[i];
        if (!kb_result_same_group(x, &key))
            continue;
        x->speedup = speedup_of(x, base, x->median_us);
        x->speedup_batch = speedup_of(x, base_batch, x->batch_us);
    }
}

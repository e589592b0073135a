/* figures.c - the figures of one result, computed once: the summary of the
 * samples, throughput and % of peak, excess traffic, arithmetic intensity, and
 * the per-result summaries of the kernels. (The speed-up over naive is a figure
 * of the run: result.c keeps it with the run's results.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/metrics.h"
#include "results/sorted.h"
#include "results/result.h"
#include "util/status.h"

/* Microseconds to seconds, and the units of the rates: GB/s is 1e9 bytes/s and
 * TFLOP/s 1e12 flop/s, so bytes / (us * 1e3) and flops / (us * 1e6). */
#define US_PER_GB_S 1e3
#define US_PER_TFLOP_S 1e6

double kb_excess_traffic(double dram_read, double dram_write, double model_bytes)
{
    if (!isfinite(dram_read) || !isfinite(dram_write) || !isfinite(model_bytes) ||
        model_bytes <= 0)
        return NAN;
    return (dram_read + dram_write) / model_bytes;
}

double kb_result_ceiling(const kb_result *r, const kb_device *dev, kb_timing t)
{
    if (strcmp(r->bound, "compute") != 0)
        return t == KB_TIMING_BATCH ? dev->copy_batch_gbps : dev->copy_gbps;
    return strcmp(r->dtype, "fp32") == 0 ? dev->fp32_tflops : dev->mma_tflops;
}

/* GB/s, TFLOP/s and % of r's ceiling in timing t at time us. */
static void rates(const kb_result *r, const kb_device *dev, kb_timing t, double us,
                  double *gbps, double *tflops, double *pct)
{
    *gbps = *tflops = *pct = NAN;
    if (!(us > 0) || !isfinite(us))
        return;
    if (isfinite(r->bytes))
        *gbps = r->bytes / (us * US_PER_GB_S);
    if (isfinite(r->flops))
        *tflops = r->flops / (us * US_PER_TFLOP_S);
    const double achieved = strcmp(r->bound, "compute") == 0 ? *tflops : *gbps;
    const double peak = kb_result_ceiling(r, dev, t);
    if (isfinite(achieved) && peak > 0)
        *pct = 100.0 * achieved / peak;
}

void kb_result_derive(kb_result *r, const kb_device *dev)
{
    r->dram_gbps = NAN;
    r->excess_traffic = kb_excess_traffic(r->dram_bytes, 0.0, r->bytes);
    rates(r, dev, KB_TIMING_COLD, r->median_us, &r->gbps, &r->tflops, &r->pct_peak);
    rates(r, dev, KB_TIMING_BATCH, r->batch_us, &r->gbps_batch, &r->tflops_batch,
          &r->pct_peak_batch);
    if (r->median_us > 0 && isfinite(r->dram_bytes))
        r->dram_gbps = r->dram_bytes / (r->median_us * US_PER_GB_S);
}

int kb_samples_summary(const double *samples, size_t n, double *median, double *min,
                       double *max, double *stdrel)
{
    *median = *min = *max = *stdrel = NAN;
    if (n == 0)
        return 0;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, kb_cmp_double);
    *min = s[0];
    *max = s[n - 1];
    *median = kb_median_sorted(s, n);
    double mean = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        mean += s[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        var += (s[i] - mean) * (s[i] - mean);
    *stdrel = n > 1 && mean > 0 ? sqrt(var / (double)(n - 1)) / mean : 0.0;
    free(s);
    return 0;
}

void kb_result_summarise(kb_result *r)
{
    (void)kb_samples_summary(r->samples_us, r->nsamples, &r->median_us, &r->min_us, &r->max_us,
                             &r->stdrel);
}

int kb_result_has_counters(const kb_result *r)
{
    return strcmp(r->metric_set, "none") != 0 && *r->metric_set && !*r->counters_reason;
}

double kb_result_intensity(const kb_result *r)
{
    if (!(r->bytes > 0) || !isfinite(r->bytes) || !isfinite(r->flops))
        return NAN;
    return r->flops / r->bytes;
}

double kb_result_flop_per_clock(const kb_result *r, int sms)
{
    if (r->status != KB_R_OK || strcmp(r->bound, "compute") != 0 || !(r->flops > 0) ||
        !(r->median_us > 0) || !(r->sm_clock_mhz > 0) || !isfinite(r->sm_clock_mhz) || sms <= 0)
        return NAN;
    return r->flops / (r->median_us * 1e-6) / ((double)sms * r->sm_clock_mhz * 1e6);
}

/* ---- the kernels' summaries --------------------------------------------------- */

/* The kernel's counter `name` in the counter pass, or NAN when it has none. */
static double metric_of(const kb_kernel *k, const char *name)
{
    const int n = kb_kernel_nmetrics(k);
    for (int m = 0; m < n; m++)
        if (strcmp(k->metrics[m].name, name) == 0 && isfinite(k->metrics[m].value))
            return k->metrics[m].value;
    return NAN;
}

static double duration_of(const kb_kernel *k)
{
    return metric_of(k, KB_METRIC_DURATION);
}

int kb_result_longest_kernel(const kb_result *r, int with_stalls)
{
    int best = -1;
    double best_t = -INFINITY;
    for (int i = 0; i < r->nkernels; i++) {
        const kb_kernel *k = &r->kernels[i];
        if (with_stalls && k->nstalls <= 0)
            continue;
        const double t = duration_of(k);
        if (best < 0 || (isfinite(t) && t > best_t)) {
            best = i;
            best_t = isfinite(t) ? t : best_t;
        }
    }
    return best;
}

/* Short names of the stall reasons for the run table. */
static const char *stall_short(const char *reason)
{
    static const char *const map[][2] = {
        {"long_scoreboard", "long_sb"},   {"short_scoreboard", "short_sb"},
        {"math_pipe_throttle", "math"},   {"mio_throttle", "mio"},
        {"lg_throttle", "lg"},            {"tex_throttle", "tex"},
        {"not_selected", "not_sel"},      {"branch_resolving", "branch"},
        {"no_instruction", "no_inst"},    {"dispatch_stall", "dispatch"},
    };
    for (size_t i = 0; i < KB_COUNT(map); i++)
        if (strcmp(reason, map[i][0]) == 0)
            return map[i][1];
    return reason;
}

/* The stall reasons shown in the run table: the largest of them. */
#define TOP_STALLS 2

/* "long_sb 52% barrier 18%": the largest stall reasons of k into r->top_stalls. */
static void fill_top_stalls(const kb_kernel *k, kb_result *r)
{
    size_t used = 0;
    r->top_stalls[0] = '\0';
    for (int i = 0; i < kb_kernel_nstalls(k) && i < TOP_STALLS; i++) {
        int w = snprintf(r->top_stalls + used, sizeof r->top_stalls - used, "%s%s %.0f%%",
                         i ? " " : "", stall_short(k->stalls[i].name),
                         100.0 * k->stalls[i].value);
        if (w < 0 || (size_t)w >= sizeof r->top_stalls - used)
            break;
        used += (size_t)w;
    }
}

void kb_result_summarise_kernels(kb_result *r)
{
    for (int i = 0; i < r->nkernels; i++) {
        const kb_kernel *k = &r->kernels[i];
        if (k->registers > r->registers)
            r->registers = k->registers;
        if (k->local_bytes > r->local_bytes)
            r->local_bytes = k->local_bytes;
    }
    const int longest = kb_result_longest_kernel(r, 0);
    if (longest < 0)
        return;
    /* achieved and theoretical of one kernel: never a time-weighted achieved
     * figure over another kernel's theoretical one */
    r->theoretical_occupancy = 100.0 * r->kernels[longest].occupancy;
    r->achieved_occupancy = metric_of(&r->kernels[longest], KB_METRIC_OCCUPANCY);
    fill_top_stalls(&r->kernels[longest], r);
}

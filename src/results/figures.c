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

/* The ceiling r's pct_peak is of: the copy bandwidth (GB/s) for a memory-bound
 * operator, the matrix-unit (fp16, bf16) or fp32 peak (TFLOP/s) for a
 * compute-bound one. */
static double ceiling_of(const kb_result *r, const kb_device *dev)
{
    if (strcmp(r->bound, "compute") != 0)
        return dev->copy_gbps;
    return strcmp(r->dtype, "fp32") == 0 ? dev->fp32_tflops : dev->mma_tflops;
}

void kb_result_derive(kb_result *r, const kb_device *dev)
{
    r->gbps = r->tflops = r->pct_peak = r->dram_gbps = NAN;
    r->excess_traffic = kb_excess_traffic(r->dram_bytes, 0.0, r->bytes);
    if (!(r->median_us > 0))
        return;
    if (isfinite(r->dram_bytes))
        r->dram_gbps = r->dram_bytes / (r->median_us * US_PER_GB_S);
    if (isfinite(r->bytes))
        r->gbps = r->bytes / (r->median_us * US_PER_GB_S);
    if (isfinite(r->flops))
        r->tflops = r->flops / (r->median_us * US_PER_TFLOP_S);
    const double achieved = strcmp(r->bound, "compute") == 0 ? r->tflops : r->gbps;
    const double peak = ceiling_of(r, dev);
    if (isfinite(achieved) && peak > 0)
        r->pct_peak = 100.0 * achieved / peak;
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
    qsort(s, n, sizeof *s, kb_cmp_double);
    r->min_us = s[0];
    r->max_us = s[n - 1];
    r->median_us = kb_median_sorted(s, n);
    double mean = 0, var = 0;
    for (size_t i = 0; i < n; i++)
        mean += s[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        var += (s[i] - mean) * (s[i] - mean);
    r->stdrel = n > 1 && mean > 0 ? sqrt(var / (double)(n - 1)) / mean : 0.0;
    free(s);
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

/* ---- the kernels' summaries --------------------------------------------------- */

/* The kernel's duration in the counter pass, or NAN when it has none. */
static double duration_of(const kb_kernel *k)
{
    const int n = kb_kernel_nmetrics(k);
    for (int m = 0; m < n; m++)
        if (strcmp(k->metrics[m].name, KB_METRIC_DURATION) == 0 && isfinite(k->metrics[m].value))
            return k->metrics[m].value;
    return NAN;
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
    r->theoretical_occupancy = 100.0 * r->kernels[longest].occupancy;
    fill_top_stalls(&r->kernels[longest], r);
}

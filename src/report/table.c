/* table.c - the results table of a case (see table.h). */
#include "report/table.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/format.h"
#include "util/text.h"

/* A reason in the note column is cut to this many bytes. */
#define SHORT_REASON 40

/* Registers and spills come from static facts and always show; extra mem when
 * a result of the case needs device memory beyond its inputs and outputs; the
 * counter columns when a result of the case has counters, top stalls only when
 * one has stall reasons too; in text the note shows only when one is set and it
 * fits. Occupancy is "achieved/theoretical" in percent. A compute-bound case
 * shows TFLOP/s and % peak (of the matrix-unit or fp32 peak) where a
 * memory-bound one shows GB/s and % copy (of the copy bandwidth). The time
 * column is the cold median, or with --timing batch the batch time ("batch"),
 * and every figure beside it is of that time, each % against the ceiling
 * measured the same way. */
static const struct column {
    const char *head;
    int right;    /* right-aligned (numbers) */
    int counters; /* shown only when a result of the case has counters */
    int compact;  /* in the compact set (text within 100 columns); the rest: --wide */
} cols[KB_NCOL] = {
    {"variant", 0, 0, 1},   {"status", 0, 0, 1},     {"median", 1, 0, 1},
    {"spread", 1, 0, 1},    {"GB/s", 1, 0, 1},       {"% copy", 1, 0, 1},
    {"vs naive", 1, 0, 1},  {"kernels", 1, 0, 0},    {"regs", 1, 0, 1},
    {"spill", 1, 0, 0},     {"extra mem", 1, 0, 0},  {"DRAM GB/s", 1, 1, 0},
    {"excess", 1, 1, 1},    {"occ a/t", 1, 1, 1},    {"top stalls", 0, 1, 1},
    {"note", 0, 0, 1},
};

/* "61/75%": achieved / theoretical occupancy, "-" for an unknown side. */
static void fmt_occupancy(double achieved, double theoretical, char *b, size_t n)
{
    char a[24], t[24];
    kb_fmt_fixed(achieved, 0, "", "", a, sizeof a);
    kb_fmt_fixed(theoretical, 0, "", "", t, sizeof t);
    if (!isfinite(achieved) && !isfinite(theoretical))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%s/%s%%", a, t);
}

/* Whether r's % of peak is of a compute ceiling. */
static int is_compute(const kb_result *r)
{
    return strcmp(r->bound, "compute") == 0;
}

/* Appends ", what" (or what, to an empty note) to the note n. */
static void note_add(char *n, const char *what)
{
    const size_t used = strlen(n);
    if (used < KB_CELL)
        snprintf(n + used, KB_CELL - used, "%s%s", used ? ", " : "", what);
}

void kb_result_cells(const kb_result *r, int compute, kb_timing timing, kb_row *w)
{
    const kb_timed t = kb_result_timed(r, timing);
    kb_safe(KB_SAFE_TERM, r->variant, w->c[KB_COL_VARIANT], KB_CELL);
    kb_strlcpy(w->c[KB_COL_STATUS], kb_rstatus_name(r->status), KB_CELL);
    kb_fmt_time(t.us, w->c[KB_COL_MEDIAN], KB_CELL);
    kb_fmt_fixed(100.0 * t.stdrel, 1, "\xC2\xB1", "%", w->c[KB_COL_SPREAD], KB_CELL);
    kb_fmt_fixed(compute ? t.tflops : t.gbps, 1, "", "", w->c[KB_COL_GBPS], KB_CELL);
    kb_fmt_fixed(t.pct_peak, 1, "", "%", w->c[KB_COL_PCT], KB_CELL);
    kb_fmt_fixed(t.speedup, 2, "", "x", w->c[KB_COL_SPEEDUP], KB_CELL);
    snprintf(w->c[KB_COL_KERNELS], KB_CELL, "%d", r->nkernels);
    if (r->registers >= 0)
        snprintf(w->c[KB_COL_REGS], KB_CELL, "%d", r->registers);
    else
        snprintf(w->c[KB_COL_REGS], KB_CELL, "-");
    if (r->local_bytes >= 0)
        snprintf(w->c[KB_COL_SPILLS], KB_CELL, "%lld B", (long long)r->local_bytes);
    else
        snprintf(w->c[KB_COL_SPILLS], KB_CELL, "-");
    kb_fmt_bytes(r->extra_bytes, w->c[KB_COL_EXTRA], KB_CELL);
    kb_fmt_fixed(r->dram_gbps, 1, "", "", w->c[KB_COL_DRAM], KB_CELL);
    kb_fmt_fixed(r->excess_traffic, 2, "", "x", w->c[KB_COL_EXCESS], KB_CELL);
    fmt_occupancy(r->achieved_occupancy, r->theoretical_occupancy, w->c[KB_COL_OCC], KB_CELL);
    kb_text_shorten(*r->top_stalls ? r->top_stalls : "-", KB_CELL - 1, w->c[KB_COL_STALLS],
                    KB_CELL);
    switch (r->status) {
    case KB_R_MISMATCH:
        snprintf(w->c[KB_COL_NOTE], KB_CELL, "max abs %.3g, rel l2 %.3g", r->max_abs_err,
                 r->rel_l2_err);
        break;
    case KB_R_FAILED:
    case KB_R_SKIPPED:
        kb_text_shorten(r->reason, SHORT_REASON, w->c[KB_COL_NOTE], KB_CELL);
        break;
    default:
        w->c[KB_COL_NOTE][0] = '\0';
        if (!r->checked)
            note_add(w->c[KB_COL_NOTE], "not checked");
        if (r->throttled)
            note_add(w->c[KB_COL_NOTE], "throttled");
        if (r->flags & KB_FLAG_GPU_SHARED)
            note_add(w->c[KB_COL_NOTE], "gpu shared");
        if (r->flags & KB_FLAG_L2_RESIDENT)
            note_add(w->c[KB_COL_NOTE], "l2 resident");
        break;
    }
}

int kb_case_compute(const kb_run *run, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_compute(&run->results[idx[i]]))
            return 1;
    return 0;
}

kb_heads kb_case_heads(int compute, kb_timing timing)
{
    kb_heads h;
    for (int c = 0; c < KB_NCOL; c++)
        h.h[c] = cols[c].head;
    if (timing == KB_TIMING_BATCH)
        h.h[KB_COL_MEDIAN] = "batch";
    if (compute) {
        h.h[KB_COL_GBPS] = "TFLOP/s";
        h.h[KB_COL_PCT] = "% peak";
    }
    return h;
}

void kb_case_columns(const kb_run *run, const size_t *idx, size_t n, const kb_row *rows,
                     int note_always, int compact, int vis[KB_NCOL])
{
    int counters = 0, stalls = 0, extra = 0, note = note_always;
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &run->results[idx[i]];
        counters |= kb_result_has_counters(r);
        stalls |= kb_result_has_counters(r) && *r->top_stalls;
        extra |= r->extra_bytes > 0;
        note |= rows[i].c[KB_COL_NOTE][0] != '\0';
    }
    for (int c = 0; c < KB_NCOL; c++)
        vis[c] = !cols[c].counters || counters;
    vis[KB_COL_EXTRA] = extra;
    vis[KB_COL_STALLS] = stalls;
    vis[KB_COL_NOTE] = note;
    for (int c = 0; c < KB_NCOL && compact; c++)
        vis[c] &= cols[c].compact;
}

int kb_case_clocks(const kb_run *run, const size_t *idx, size_t n, kb_clock_spread *s)
{
    *s = (kb_clock_spread){NAN, NAN, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &run->results[idx[i]];
        const double c = r->sm_clock_mhz;
        if (r->status != KB_R_OK || !isfinite(c) || c <= 0)
            continue;
        if (!(c >= s->lo)) {
            s->lo = c;
            s->at_lo = i;
        }
        if (!(c <= s->hi)) {
            s->hi = c;
            s->at_hi = i;
        }
    }
    return kb_clocks_apart(s->lo, s->hi);
}

const char *kb_clock_note_part(const kb_clock_spread *s, int part, char *b, size_t n)
{
    if (part == 0)
        snprintf(b, n, "clocks after the samples: ");
    else if (part == 1)
        snprintf(b, n, " %.0f MHz, ", s->lo);
    else
        snprintf(b, n, " %.0f (%.0f%% apart): these results met the power cap differently",
                 s->hi, 100.0 * (s->hi / s->lo - 1.0));
    return b;
}

size_t kb_case_per_clock(const kb_run *run, const size_t *idx, size_t n, size_t from,
                         double *fpc)
{
    for (size_t j = from; j < n; j++) {
        *fpc = kb_result_flop_per_clock(&run->results[idx[j]], run->dev.sms);
        if (isfinite(*fpc))
            return j;
    }
    return n;
}

int kb_col_right(int c)
{
    return c >= 0 && c < KB_NCOL && cols[c].right;
}

/* ---- the table of a sweep ----------------------------------------------------------- */

/* "·" and "×" in UTF-8. */
#define DOT_SEP "\xC2\xB7"
#define TIMES "\xC3\x97"

size_t kb_sweep_nlead(const kb_sweep *s)
{
    return *s->partner ? 2 : 1;
}

size_t kb_sweep_ncols(const kb_sweep *s)
{
    return kb_sweep_nlead(s) + s->nvariants + 1;
}

void kb_sweep_head(const kb_sweep *s, size_t c, char *b, size_t n)
{
    const size_t lead = kb_sweep_nlead(s);
    if (c == 0)
        kb_safe(KB_SAFE_TERM, s->axis, b, n);
    else if (c < lead)
        kb_safe(KB_SAFE_TERM, s->partner, b, n);
    else if (c < lead + s->nvariants)
        kb_safe(KB_SAFE_TERM, s->variant[c - lead], b, n);
    else
        snprintf(b, n, "%s", s->compute ? "% peak" : "% copy");
}

void kb_sweep_cell(const kb_sweep *s, size_t p, size_t c, char *b, size_t n)
{
    const size_t lead = kb_sweep_nlead(s);
    if (c == 0)
        snprintf(b, n, "%lld", (long long)s->value[p]);
    else if (c < lead)
        snprintf(b, n, "%lld", (long long)s->partner_value[p]);
    else if (c < lead + s->nvariants) {
        const size_t v = c - lead;
        const double x = s->figure[p * s->nvariants + v];
        if (isfinite(x))
            snprintf(b, n, "%.1f%s", x, s->best[p] == (long)v ? "*" : " ");
        else
            snprintf(b, n, "- ");
    } else
        kb_fmt_fixed(s->best_pct[p], 1, "", "%", b, n);
}

void kb_sweep_title(const kb_sweep *s, char *b, size_t n)
{
    char t[512];
    if (*s->partner)
        snprintf(t, sizeof t, "%s " DOT_SEP " %s " DOT_SEP " sweep over %s, %s " TIMES
                 " %s about constant%s%s",
                 s->op, s->dtype, s->axis, s->partner, s->axis, *s->fixed ? ", " : "", s->fixed);
    else
        snprintf(t, sizeof t, "%s " DOT_SEP " %s " DOT_SEP " sweep over %s%s%s", s->op, s->dtype,
                 s->axis, *s->fixed ? ", " : "", s->fixed);
    kb_safe(KB_SAFE_TERM, t, b, n);
}

void kb_sweep_legend(const kb_sweep *s, kb_timing t, char *b, size_t n)
{
    snprintf(b, n, "%s of each variant (model %s / %s); * the fastest at each %s, and %s its "
                   "share of the calibrated %s%s",
             s->compute ? "TFLOP/s" : "GB/s", s->compute ? "flops" : "bytes",
             t == KB_TIMING_BATCH ? "batch time" : "median time", s->axis,
             s->compute ? "% peak" : "% copy",
             s->compute ? "compute peak" : "copy bandwidth",
             !s->compute && t == KB_TIMING_BATCH ? " (back to back)" : "");
}

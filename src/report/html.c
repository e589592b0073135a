/* html.c - the HTML report and comparison pages (html.h): one file with inline
 * CSS and SVG charts, drawn from the same kb_run and kb_compare the other
 * writers read. Charts are laid out here (scales, ticks, positions); the
 * figures they show come from the result model. */
#include "report/html.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/compare_view.h"
#include "report/table.h"
#include "report/format.h"

/* ---- escaping and small pieces -------------------------------------------------- */

/* The entity of a character that HTML text and attributes must not hold as
 * itself, or NULL. */
static const char *entity(char c)
{
    static const char *const map[][2] = {
        {"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"},
    };
    for (size_t i = 0; i < KB_COUNT(map); i++)
        if (c == map[i][0][0])
            return map[i][1];
    return NULL;
}

void kb_html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        const char *ent = entity(*s);
        if (ent)
            fputs(ent, f);
        else
            fputc(*s, f);
    }
}

/* A table cell holding escaped text; num: right-aligned. */
static void td(FILE *f, const char *s, int num)
{
    fputs(num ? "<td class=\"num\">" : "<td>", f);
    kb_html_escape(f, s);
    fputs("</td>", f);
}

static void th(FILE *f, const char *s, int num)
{
    fputs(num ? "<th class=\"num\">" : "<th>", f);
    kb_html_escape(f, s);
    fputs("</th>", f);
}

/* The fill colour of a dtype in the charts. */
static const char *dtype_colour(const char *dtype)
{
    if (strcmp(dtype, "fp32") == 0)
        return "#4c78a8";
    if (strcmp(dtype, "bf16") == 0)
        return "#f58518";
    if (strcmp(dtype, "fp16") == 0)
        return "#54a24b";
    return "#79706e";
}

/* The legend's items for the colours of the dtypes of the results idx[0 ..
 * n) of run (idx NULL: all of them). */
static void dtype_legend_items(FILE *f, const kb_run *run, const size_t *idx, size_t n)
{
    static const char *const dtypes[] = {"fp32", "fp16", "bf16"};
    if (!idx)
        n = run->nresults;
    for (size_t d = 0; d < KB_COUNT(dtypes); d++) {
        int used = 0;
        for (size_t i = 0; i < n && !used; i++)
            used = strcmp(run->results[idx ? idx[i] : i].dtype, dtypes[d]) == 0;
        if (used)
            fprintf(f, "<li class=\"dtype\"><span class=\"swatch\" style=\"background:%s\">"
                       "</span>%s</li>",
                    dtype_colour(dtypes[d]), dtypes[d]);
    }
}

/* A tick label for a power of ten: "0.01", "1", "1000", "1e+06". */
static void fmt_decade(int k, char *b, size_t n)
{
    snprintf(b, n, "%g", pow(10.0, k));
}

/* The most ticks a linear axis gets, and the decades either side of 1 a log
 * axis may show: a value beyond 1e-12 .. 1e12 (of µs, TFLOP/s, flop/byte or
 * GB/s) is no figure a GPU produces, so it is left out of the chart with a note
 * instead of stretching the axis (every axis loop is bounded by these). */
enum { AXIS_MAX_TICKS = 8, AXIS_MAX_DECADE = 12 };

/* The step of a linear axis from 0 to past vmax in at most AXIS_MAX_TICKS steps
 * of 1, 2 or 5 times a power of ten; *nsteps the number of steps. Returns 0
 * when vmax is no positive finite number such an axis can show. */
static int linear_axis(double vmax, double *step, int *nsteps)
{
    if (!(vmax > 0) || !isfinite(vmax))
        return 0;
    const double raw = vmax / AXIS_MAX_TICKS;
    const double mag = pow(10.0, floor(log10(raw)));
    if (!(mag > 0) || !isfinite(mag))
        return 0;
    static const double mult[] = {1, 2, 5, 10};
    for (size_t i = 0; i < KB_COUNT(mult); i++) {
        *step = mult[i] * mag;
        *nsteps = (int)ceil(vmax / *step - 1e-9);
        if (*nsteps <= AXIS_MAX_TICKS)
            break;
    }
    if (*nsteps < 1)
        *nsteps = 1;
    return isfinite(*step * *nsteps) && *nsteps <= AXIS_MAX_TICKS;
}

/* Whether v can be placed on a log axis: finite, positive, within the decades
 * a chart may show. */
static int log_placeable(double v)
{
    return v > 0 && isfinite(v) && fabs(log10(v)) <= AXIS_MAX_DECADE;
}

static const char page_css[] =
    ":root{--fg:#1d2430;--muted:#5b6576;--line:#d8dde6;--head:#f3f5f9}"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);"
    "margin:24px auto;max-width:1280px;padding:0 16px}"
    "h1{font-size:22px;margin:0 0 8px}"
    "h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}"
    "h3{font-size:14px;margin:16px 0 4px}"
    "dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}"
    "dl.meta dt{color:var(--muted)}dl.meta dd{margin:0}"
    "table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}"
    "th,td{padding:3px 9px;border-bottom:1px solid var(--line);text-align:left;"
    "white-space:nowrap}"
    "th{background:var(--head);font-weight:600}td.num,th.num{text-align:right}"
    "td.note{white-space:normal;max-width:420px}div.scroll{overflow-x:auto}"
    "tr.status-mismatch td,tr.status-failed td{color:#b42318}"
    "tr.status-skipped td{color:var(--muted)}"
    "ul.notes{margin:4px 0 8px;padding-left:18px;color:var(--muted)}"
    ".warning{background:#fff4e5;border:1px solid #f5b041;padding:8px 12px;border-radius:4px}"
    ".headline{font-size:16px;font-weight:600}"
    "figure{margin:8px 0}figcaption{color:var(--muted);font-size:12px}"
    ".nochart{color:var(--muted)}"
    "svg text{font:11px system-ui,sans-serif;fill:var(--fg)}"
    "svg .grid line{stroke:var(--line)}svg text.tick{fill:var(--muted)}"
    "rect.bar{fill:#4c78a8}rect.stall-bar{fill:#e45756}"
    ".roof-mem,.roof-compute{stroke:#333;stroke-width:2;fill:none}"
    ".roof-compute{stroke-dasharray:6 3}"
    "circle.roof-point{stroke:#fff;stroke-width:1}line.leader{stroke:#98a2b3;stroke-width:.7}"
    "span.caseno{color:var(--muted);font-weight:400}"
    "rect.band{fill:#e8eef7}line.one{stroke:#333}"
    "g.ci line{stroke-width:2}"
    "tr.verdict-slower td.verdict{color:#b42318;font-weight:700}"
    "tr.verdict-faster td.verdict{color:#067647;font-weight:700}"
    "tr.verdict-uncertain td.verdict{color:#b54708}"
    "footer{margin-top:32px;color:var(--muted);font-size:12px}"
    "ul.legend{list-style:none;margin:2px 0;padding:0;display:flex;gap:16px;font-size:12px}"
    "ul.legend span{display:inline-block;width:18px;height:10px;margin-right:5px;"
    "vertical-align:baseline}"
    "span.key-mem{border-top:2px solid #333;height:0!important}"
    "span.key-compute{border-top:2px dashed #333;height:0!important}"
    "rect.copy-bar{fill:#4c78a8}"
    "polyline.sweep-line{fill:none;stroke-width:2}line.sweep-tick{stroke:#eef0f4}"
    "line.sweep-ceiling{stroke:#333;stroke-width:1.5;stroke-dasharray:6 3}"
    "circle.sweep-point{stroke:#fff;stroke-width:1}td.best{font-weight:700}";

/* Opens an SVG image of class cls, w x h pixels, inside a chart <figure> when
 * figure is nonzero (the caller closes both). */
static void svg_open(FILE *f, int figure, const char *cls, int w, int h)
{
    fprintf(f,
            "%s<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
            figure ? "<figure class=\"chart\">" : "", cls, w, h, w, h);
}

static void page_start(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    kb_html_escape(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", page_css);
}

static void page_end(FILE *f, const kb_run *run)
{
    fputs("<footer>written by kbench ", f);
    kb_html_escape(f, run->version);
    fputs("</footer>\n</body>\n</html>\n", f);
}

static void meta_row(FILE *f, const char *name, const char *value)
{
    fputs("<dt>", f);
    kb_html_escape(f, name);
    fputs("</dt><dd>", f);
    kb_html_escape(f, value);
    fputs("</dd>", f);
}

/* ---- the run page: tables ---------------------------------------------------- */

static void run_header(FILE *f, const kb_run *run)
{
    const kb_device *d = &run->dev;
    char b[512];
    if (run->id > 0)
        snprintf(b, sizeof b, "kbench run %lld", (long long)run->id);
    else
        snprintf(b, sizeof b, "kbench run");
    fputs("<header>\n<h1>", f);
    kb_html_escape(f, b);
    fputs("</h1>\n", f);
    if (strcmp(run->state, "complete") != 0) {
        fputs("<p class=\"warning\">", f);
        kb_html_escape(f, strcmp(run->state, "interrupted") == 0
                   ? "INTERRUPTED: the run stopped before it finished; only the results it "
                     "completed are shown"
                   : "RUNNING: the run has not finished (or its process was killed); results "
                     "so far");
        fputs("</p>\n", f);
    }
    fputs("<dl class=\"meta\">", f);
    snprintf(b, sizeof b, "%s, cc %d.%d, %d SMs (%s)", d->name, d->cc_major, d->cc_minor, d->sms,
             d->uuid);
    meta_row(f, "device", b);
    kb_fmt_ceilings(d, b, sizeof b);
    meta_row(f, "ceilings", b);
    snprintf(b, sizeof b, "%s%s%s", run->started, *run->finished ? " (finished " : "",
             *run->finished ? run->finished : "");
    if (*run->finished)
        kb_strlcpy(b + strlen(b), ")", sizeof b - strlen(b));
    meta_row(f, "started", b);
    meta_row(f, "state", run->state);
    if (*run->tag)
        meta_row(f, "tag", run->tag);
    snprintf(b, sizeof b, "%s (git %s)", run->version, run->git);
    meta_row(f, "kbench", b);
    if (*run->argv)
        meta_row(f, "command", run->argv);
    if (*run->env)
        meta_row(f, "env", run->env);
    fputs("</dl>\n</header>\n", f);
}

/* One result's row: the cells of the text report's columns (vis), the top
 * stalls whole rather than cut to a cell, and the note in full. */
static void run_table_row(FILE *f, const kb_result *r, const kb_row *w, const int *vis)
{
    char b[256];
    fputs("<tr class=\"result status-", f);
    kb_html_escape(f, kb_rstatus_name(r->status));
    fputs("\">", f);
    for (int c = 0; c < KB_COL_NOTE; c++)
        if (vis[c])
            td(f, c == KB_COL_STALLS && *r->top_stalls ? r->top_stalls : w->c[c],
               kb_col_right(c));
    fputs("<td class=\"note\">", f);
    if (r->status == KB_R_MISMATCH) {
        snprintf(b, sizeof b, "max abs err %.6g, rel l2 err %.6g (atol %g, rtol %g)%s",
                 r->max_abs_err, r->rel_l2_err, r->atol, r->rtol, *r->reason ? "; " : "");
        kb_html_escape(f, b);
    } else if (r->status == KB_R_OK) {
        kb_html_escape(f, w->c[KB_COL_NOTE]);
    }
    if (r->status != KB_R_OK)
        kb_html_escape(f, r->reason);
    fputs("</td></tr>\n", f);
}

/* The table of a case: the columns of the text report; then why counters are
 * missing, each reason once. */
static void run_table(FILE *f, const kb_run *run, const size_t *idx, size_t n, kb_row *rows)
{
    const int compute = kb_case_compute(run, idx, n);
    const kb_heads hd = kb_case_heads(compute, run->timing);
    int vis[KB_NCOL];
    for (size_t i = 0; i < n; i++)
        kb_result_cells(&run->results[idx[i]], compute, run->timing, &rows[i]);
    kb_case_columns(run, idx, n, rows, 1, 0, vis);
    fputs("<div class=\"scroll\"><table class=\"results\">\n<thead><tr>", f);
    for (int c = 0; c < KB_NCOL; c++)
        if (vis[c])
            th(f, hd.h[c], kb_col_right(c));
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t i = 0; i < n; i++)
        run_table_row(f, &run->results[idx[i]], &rows[i], vis);
    fputs("</tbody>\n</table></div>\n", f);
    int opened = 0;
    kb_clock_spread cs;
    if (kb_case_clocks(run, idx, n, &cs)) {
        char b[96];
        fputs("<ul class=\"notes\"><li>", f);
        opened = 1;
        for (int part = 0; part < 3; part++) {
            fputs(kb_clock_note_part(&cs, part, b, sizeof b), f);
            if (part < 2)
                kb_html_escape(f, rows[part ? cs.at_hi : cs.at_lo].c[KB_COL_VARIANT]);
        }
        fputs("</li>", f);
        double fpc;
        size_t j = kb_case_per_clock(run, idx, n, 0, &fpc);
        if (j < n) {
            fputs("<li>" KB_PER_CLOCK_NOTE, f);
            for (const char *sep = " "; j < n; j = kb_case_per_clock(run, idx, n, j + 1, &fpc)) {
                fputs(sep, f);
                kb_html_escape(f, rows[j].c[KB_COL_VARIANT]);
                fprintf(f, " %.0f", fpc);
                sep = ", ";
            }
            fputs("</li>", f);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!kb_counters_reason_is_new(run, idx, i))
            continue;
        fputs(opened++ ? "<li>" : "<ul class=\"notes\"><li>", f);
        fputs("counters: none (", f);
        kb_html_escape(f, run->results[idx[i]].counters_reason);
        fputs(")</li>", f);
    }
    if (opened)
        fputs("</ul>\n", f);
}

/* ---- the run page: charts ---------------------------------------------------- */

enum { BAR_W = 760, BAR_LABEL = 170, BAR_VALUE = 90, BAR_ROW = 22, BAR_TOP = 6, BAR_AXIS = 28 };

/* The bar chart of the median time of each timed result of a case: a linear
 * axis from zero with 1-2-5 ticks, so bar lengths compare as the times do. */
static void bar_chart(FILE *f, const kb_run *run, const size_t *idx, size_t n)
{
    double vmax = 0, step = 0;
    size_t nb = 0, nout = 0;
    int nsteps = 0;
    char b[64];
    for (size_t i = 0; i < n; i++) {
        double v = run->results[idx[i]].median_us;
        if (!log_placeable(v)) {
            nout += isfinite(v) && v > 0;
            continue;
        }
        nb++;
        vmax = v > vmax ? v : vmax;
    }
    if (nb == 0 || !linear_axis(vmax, &step, &nsteps)) {
        fputs(nout ? "<p class=\"nochart\">no timed result to chart (times out of the chart's "
                     "range)</p>\n"
                   : "<p class=\"nochart\">no timed result to chart</p>\n",
              f);
        return;
    }
    const double pw = BAR_W - BAR_LABEL - BAR_VALUE, top = step * nsteps;
    int height = BAR_TOP + (int)nb * BAR_ROW + BAR_AXIS;
    svg_open(f, 1, "bars", BAR_W, height);
    int axis_y = BAR_TOP + (int)nb * BAR_ROW;
    fputs("<g class=\"grid\">", f);
    for (int t = 0; t <= nsteps; t++) {
        double x = BAR_LABEL + pw * t / nsteps;
        kb_fmt_time(step * t, b, sizeof b);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, BAR_TOP, x, axis_y);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x,
                axis_y + 16);
        kb_html_escape(f, t == 0 ? "0" : b);
        fputs("</text>", f);
    }
    fputs("</g>\n", f);
    size_t row = 0;
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &run->results[idx[i]];
        double v = r->median_us;
        if (!log_placeable(v))
            continue;
        double len = pw * v / top;
        if (len < 1)
            len = 1;
        double y = BAR_TOP + (double)row++ * BAR_ROW;
        kb_fmt_time(v, b, sizeof b);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", BAR_LABEL - 8, y + 15);
        kb_html_escape(f, r->variant);
        fprintf(f, "</text><rect class=\"bar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                   "style=\"fill:%s\"><title>",
                BAR_LABEL, y + 3, len, BAR_ROW - 6, dtype_colour(r->dtype));
        kb_html_escape(f, r->variant);
        fputs(": ", f);
        kb_html_escape(f, b);
        fprintf(f, "</title></rect><text x=\"%.1f\" y=\"%.1f\">", BAR_LABEL + len + 5, y + 15);
        kb_html_escape(f, b);
        fputs("</text>\n", f);
    }
    fputs("</svg><ul class=\"legend\">", f);
    dtype_legend_items(f, run, idx, n);
    fputs("</ul><figcaption>median time per variant, linear scale from zero; shorter is "
          "faster",
          f);
    if (nout)
        fprintf(f, " (%zu result%s with a time out of the chart's range not drawn)", nout,
                nout == 1 ? "" : "s");
    fputs("</figcaption></figure>\n", f);
}

/* The roofline chart's size and margins. */
enum { RF_W = 820, RF_H = 440, RF_L = 70, RF_R = 30, RF_T = 20, RF_B = 50 };

/* Log-log plot coordinates of the roofline chart. */
typedef struct roof_axes {
    double lx0, lx1, ly0, ly1; /* decades shown */
} roof_axes;

static double rx(const roof_axes *a, double ai)
{
    return RF_L + (RF_W - RF_L - RF_R) * (log10(ai) - a->lx0) / (a->lx1 - a->lx0);
}

static double ry(const roof_axes *a, double tf)
{
    return RF_T + (RF_H - RF_T - RF_B) * (1.0 - (log10(tf) - a->ly0) / (a->ly1 - a->ly0));
}

/* Whether r is a point of the roofline: timed, ok, with flops and bytes. */
static int roof_point(const kb_result *r)
{
    return r->status == KB_R_OK && r->flops > 0 && r->bytes > 0 && isfinite(r->flops) &&
           isfinite(r->bytes) && r->tflops > 0 && isfinite(r->tflops);
}

/* Whether a roofline point of r can be placed on the chart's log axes. */
static int roof_placeable(const kb_result *r)
{
    return roof_point(r) && log_placeable(kb_result_intensity(r)) && log_placeable(r->tflops);
}

/* A point of the roofline: its position and result. */
typedef struct roof_mark {
    double x, y;
    size_t idx;
} roof_mark;

/* Columns left to right, then top to bottom. */
static int cmp_mark(const void *pa, const void *pb)
{
    const roof_mark *a = pa, *b = pb;
    if (fabs(a->x - b->x) > 0.5)
        return a->x < b->x ? -1 : 1;
    return (a->y > b->y) - (a->y < b->y);
}

/* What the roofline shows: its points' extent, the roofs, the axes. */
typedef struct roof_frame {
    double bw;      /* the copy bandwidth in TB/s (bytes per ps, as TFLOP/s per flop/byte) */
    double peak[2]; /* the compute roofs the run's dtypes use: mma (16-bit), fp32; NAN none */
    double top;     /* the highest of them, NAN when none */
    double xmin, xmax, ymin, ymax;
    size_t np;      /* points */
    size_t nout;    /* points out of the chart's range, not drawn */
    roof_axes ax;
} roof_frame;

static const char *const roof_peak_name[2] = {"bf16 mma", "fp32"};

/* The extent of the points and roofs, and the decades of the axes around them
 * (a factor of two of margin). */
static roof_frame roof_extent(const kb_run *run)
{
    const kb_device *d = &run->dev;
    roof_frame fr = {.bw = log_placeable(d->copy_gbps / 1000.0) ? d->copy_gbps / 1000.0 : NAN,
                     .peak = {NAN, NAN}, .top = NAN, .xmin = INFINITY, .xmax = 0,
                     .ymin = INFINITY, .ymax = 0};
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        if (!roof_placeable(r)) {
            fr.nout += roof_point(r);
            continue;
        }
        double ai = kb_result_intensity(r);
        fr.np++;
        fr.xmin = fmin(fr.xmin, ai);
        fr.xmax = fmax(fr.xmax, ai);
        fr.ymin = fmin(fr.ymin, r->tflops);
        fr.ymax = fmax(fr.ymax, r->tflops);
        if (strcmp(r->dtype, "fp32") == 0)
            fr.peak[1] = d->fp32_tflops;
        else
            fr.peak[0] = d->mma_tflops;
    }
    for (int k = 0; k < 2; k++) {
        if (!log_placeable(fr.peak[k])) {
            fr.peak[k] = NAN;
            continue;
        }
        fr.top = isfinite(fr.top) && fr.top > fr.peak[k] ? fr.top : fr.peak[k];
        fr.ymax = fmax(fr.ymax, fr.peak[k]);
        if (isfinite(fr.bw) && log_placeable(fr.peak[k] / fr.bw)) {
            double ridge = fr.peak[k] / fr.bw;
            fr.xmax = fmax(fr.xmax, ridge);
            fr.xmin = fmin(fr.xmin, ridge);
        }
    }
    fr.ax = (roof_axes){floor(log10(fr.xmin / 2)), ceil(log10(fr.xmax * 2)),
                        floor(log10(fr.ymin / 2)), ceil(log10(fr.ymax * 2))};
    return fr;
}

/* The chart's opening, its decade grid and the axis titles. */
static void roof_grid(FILE *f, const roof_axes *ax)
{
    char v[32];
    svg_open(f, 1, "roofline", RF_W, RF_H);
    fputs("<g class=\"grid\">", f);
    for (int k = (int)ax->lx0; k <= (int)ax->lx1; k++) {
        double x = rx(ax, pow(10.0, k));
        fmt_decade(k, v, sizeof v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text class=\"tick\" "
                   "x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                x, RF_T, x, RF_H - RF_B, x, RF_H - RF_B + 19, v); /* clear of the y ticks */
    }
    for (int k = (int)ax->ly0; k <= (int)ax->ly1; k++) {
        double y = ry(ax, pow(10.0, k));
        fmt_decade(k, v, sizeof v);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text class=\"tick\" "
                   "x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                RF_L, y, RF_W - RF_R, y, RF_L - 6, y + 4, v);
    }
    fprintf(f, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity "
               "(model flop / model byte)</text>"
               "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">"
               "achieved TFLOP/s</text>\n",
            (RF_W + RF_L - RF_R) / 2, RF_H - 10, (RF_H - RF_B + RF_T) / 2,
            (RF_H - RF_B + RF_T) / 2);
}

/* The slanted memory roof, from the left edge (or the floor) to the highest
 * compute roof (or the ceiling of the chart), then the flat compute roofs.
 * Their names and values are in the legend under the chart, where no point
 * label can cover them. */
static void roof_roofs(FILE *f, const roof_frame *fr)
{
    const roof_axes *ax = &fr->ax;
    const double bw = fr->bw, x0 = pow(10.0, ax->lx0), x1 = pow(10.0, ax->lx1),
                 y0 = pow(10.0, ax->ly0), y1 = pow(10.0, ax->ly1);
    if (isfinite(bw)) {
        double a = y0 / bw > x0 ? y0 / bw : x0;
        double z = isfinite(fr->top) ? fr->top / bw : x1;
        z = z < y1 / bw ? z : y1 / bw;
        z = z < x1 ? z : x1;
        if (z > a)
            fprintf(f, "<line class=\"roof-mem\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                       "y2=\"%.1f\"/>\n",
                    rx(ax, a), ry(ax, a * bw), rx(ax, z), ry(ax, z * bw));
    }
    for (int k = 0; k < 2; k++) {
        if (!isfinite(fr->peak[k]))
            continue;
        double a = isfinite(bw) ? fr->peak[k] / bw : x0;
        a = a > x0 ? a : x0;
        double py = ry(ax, fr->peak[k]);
        fprintf(f, "<line class=\"roof-compute\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                   "y2=\"%.1f\"/>\n",
                rx(ax, a), py, rx(ax, x1), py);
    }
}

/* The legend of the roofs drawn: "— copy bw 4218 GB/s", "-- bf16 mma 806
 * TFLOP/s". */
static void roof_legend(FILE *f, const kb_device *d, const roof_frame *fr)
{
    char b[160];
    if (isfinite(fr->bw)) {
        snprintf(b, sizeof b, "copy bw %.0f GB/s", d->copy_gbps);
        fputs("<li class=\"roof-label\"><span class=\"key-mem\"></span>", f);
        kb_html_escape(f, b);
        fputs("</li>", f);
    }
    for (int k = 0; k < 2; k++) {
        if (!isfinite(fr->peak[k]))
            continue;
        snprintf(b, sizeof b, "%s %.*f TFLOP/s", roof_peak_name[k], fr->peak[k] >= 10 ? 0 : 1,
                 fr->peak[k]);
        fputs("<li class=\"roof-label\"><span class=\"key-compute\"></span>", f);
        kb_html_escape(f, b);
        fputs("</li>", f);
    }
}

/* One circle per point, with its title; their positions into pt (np of them). */
static void roof_points(FILE *f, const kb_run *run, const size_t *caseno, const roof_axes *ax,
                        roof_mark *pt)
{
    char b[160];
    size_t np = 0;
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        if (!roof_placeable(r))
            continue;
        double ai = kb_result_intensity(r);
        roof_mark m = {rx(ax, ai), ry(ax, r->tflops), i};
        pt[np++] = m;
        kb_fmt_case_title(r, b, sizeof b);
        fprintf(f, "<circle class=\"roof-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                   "style=\"fill:%s\"><title>[%zu] ",
                m.x, m.y, dtype_colour(r->dtype), caseno[i]);
        kb_html_escape(f, b);
        fputs(" \xC2\xB7 ", f);
        kb_html_escape(f, r->variant);
        fprintf(f, ": %.3g TFLOP/s at %.3g flop/byte, %.1f%% of %s</title></circle>\n",
                r->tflops, ai, r->pct_peak,
                strcmp(r->bound, "compute") == 0 ? "its compute peak" : "copy bw");
    }
}

/* A label's box on the chart, estimated from its length: LABEL_CHAR px a
 * character of the 11 px font (more than any glyph takes), LABEL_H tall. */
enum { LABEL_CHAR = 7, LABEL_H = 13, LABEL_TRIES = 12 };
typedef struct box {
    double x0, y0, x1, y1;
} box;

static int overlaps(const box *a, const box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Whether b lies inside the plot area and clear of every box in taken[0 .. n). */
static int box_free(const box *b, const box *taken, size_t n)
{
    if (b->x0 < RF_L + 2 || b->x1 > RF_W - RF_R - 2 || b->y0 < RF_T || b->y1 > RF_H - RF_B)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (overlaps(b, &taken[i]))
            return 0;
    return 1;
}

/* The labels of the points pt[0 .. np): "variant [case]", each put where its
 * box covers no other label and no point: beside its point, right or left,
 * or moved up or down with a leader line; a label that finds no such place
 * within LABEL_TRIES rows either way is left out (its point keeps its title).
 * Returns how many were left out. */
static size_t roof_labels(FILE *f, const kb_run *run, const size_t *caseno, const roof_mark *pt,
                          size_t np, box *taken)
{
    size_t n = 0, left_out = 0;
    for (size_t i = 0; i < np; i++) /* the points are obstacles from the start */
        taken[n++] = (box){pt[i].x - 6, pt[i].y - 6, pt[i].x + 6, pt[i].y + 6};
    for (size_t i = 0; i < np; i++) {
        const kb_result *r = &run->results[pt[i].idx];
        char text[160];
        snprintf(text, sizeof text, "%s [%zu]", r->variant, caseno[pt[i].idx]);
        const double w = (double)kb_text_width(text) * LABEL_CHAR;
        int placed = 0;
        for (int t = 0; t <= 2 * LABEL_TRIES && !placed; t++) {
            const int step = (t + 1) / 2; /* 0, 1, 1, 2, 2, ...: alternately above, below */
            const double dy = (t % 2 ? 1 : -1) * (double)step * LABEL_H;
            for (int side = 0; side < 2 && !placed; side++) {
                const double base = pt[i].y + 4 + dy;
                const double x = side == 0 ? pt[i].x + 9 : pt[i].x - 9 - w;
                const box bx = {x, base - 10, x + w, base + 3};
                if (!box_free(&bx, taken, n))
                    continue;
                taken[n++] = bx;
                placed = 1;
                if (fabs(dy) > 0)
                    fprintf(f, "<line class=\"leader\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                               "y2=\"%.1f\"/>",
                            pt[i].x, pt[i].y, side == 0 ? x : x + w, base - 4);
                fprintf(f, "<text class=\"roof-label\" x=\"%.1f\" y=\"%.1f\">", x, base);
                kb_html_escape(f, text);
                fputs("</text>\n", f);
            }
        }
        left_out += !placed;
    }
    return left_out;
}

/* Whether every result with a place on the roofline is memory-bound (its %
 * of peak is of the copy bandwidth): the roofline would be columns of points
 * under the slanted roof, and the share of the copy bandwidth says it better. */
static int all_memory_bound(const kb_run *run)
{
    int any = 0;
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        if (!roof_point(r))
            continue;
        if (strcmp(r->bound, "compute") == 0)
            return 0;
        any = 1;
    }
    return any;
}

enum { CP_W = 760, CP_LABEL = 220, CP_VALUE = 60, CP_ROW = 20, CP_TOP = 6, CP_AXIS = 28 };

/* For a memory-bound run: a bar per ok result, "variant [case]", its share of
 * the calibrated copy bandwidth on a linear axis from 0 (to 100% or past it). */
static void copy_chart(FILE *f, const kb_run *run, const size_t *caseno)
{
    size_t nb = 0;
    double vmax = 100.0, step = 0;
    int nsteps = 0;
    char b[160];
    fputs("<section id=\"copy-share\">\n<h2>Share of the copy bandwidth</h2>\n", f);
    for (size_t i = 0; i < run->nresults; i++) {
        const double v = run->results[i].pct_peak;
        if (run->results[i].status == KB_R_OK && v > 0 && v <= 1e4) {
            nb++;
            vmax = v > vmax ? v : vmax;
        }
    }
    if (nb == 0 || !linear_axis(vmax, &step, &nsteps)) {
        fputs("<p class=\"nochart\">no share to draw: the copy bandwidth is not calibrated, or "
              "no result is ok</p>\n</section>\n",
              f);
        return;
    }
    const double pw = CP_W - CP_LABEL - CP_VALUE, top = step * nsteps;
    const int height = CP_TOP + (int)nb * CP_ROW + CP_AXIS, axis_y = CP_TOP + (int)nb * CP_ROW;
    svg_open(f, 1, "copy-chart", CP_W, height);
    fputs("<g class=\"grid\">", f);
    for (int t = 0; t <= nsteps; t++) {
        const double x = CP_LABEL + pw * t / nsteps;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text class=\"tick\" "
                   "x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f%%</text>",
                x, CP_TOP, x, axis_y, x, axis_y + 16, step * t);
    }
    fputs("</g>\n", f);
    size_t row = 0;
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        const double v = r->pct_peak;
        if (!(r->status == KB_R_OK && v > 0 && v <= 1e4))
            continue;
        const double y = CP_TOP + (double)row++ * CP_ROW, len = pw * v / top;
        snprintf(b, sizeof b, "%s [%zu]", r->variant, caseno[i]);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", CP_LABEL - 8, y + 14);
        kb_html_escape(f, b);
        fprintf(f, "</text><rect class=\"copy-bar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
                   "height=\"%d\" style=\"fill:%s\"><title>",
                CP_LABEL, y + 3, len < 1 ? 1 : len, CP_ROW - 6, dtype_colour(r->dtype));
        kb_html_escape(f, b);
        fprintf(f, ": %.1f%% of copy bw</title></rect><text x=\"%.1f\" y=\"%.1f\">%.1f%%</text>\n",
                v, CP_LABEL + (len < 1 ? 1 : len) + 5, y + 14, v);
    }
    fputs("</svg><ul class=\"legend\">", f);
    dtype_legend_items(f, run, NULL, 0);
    fputs("</ul><figcaption>each ok result's achieved GB/s (model bytes / median time) as a "
          "share of this GPU's calibrated copy bandwidth, labelled with its variant and [case "
          "number]; every result is memory-bound, so this takes the roofline's place</figcaption>"
          "</figure>\n</section>\n",
          f);
}

/* The roofline of the whole run; caseno[i] is the number of the case section
 * of result i. Returns 0, or -1 when out of memory. */
static int roofline(FILE *f, const kb_run *run, const size_t *caseno)
{
    fputs("<section id=\"roofline\">\n<h2>Roofline</h2>\n", f);
    const roof_frame fr = roof_extent(run);
    if (fr.np == 0) {
        fputs(fr.nout ? "<p class=\"nochart\">no point to draw: every result's figures are out "
                        "of the chart's range</p>\n</section>\n"
                      : "<p class=\"nochart\">no point to draw: no ok result has a flop and a "
                        "byte model and a time</p>\n</section>\n",
              f);
        return 0;
    }
    roof_mark *pt = malloc(fr.np * sizeof *pt);
    box *taken = malloc(2 * fr.np * sizeof *taken);
    if (!pt || !taken) {
        free(pt);
        free(taken);
        return -1;
    }
    roof_grid(f, &fr.ax);
    roof_roofs(f, &fr);
    roof_points(f, run, caseno, &fr.ax, pt);
    qsort(pt, fr.np, sizeof *pt, cmp_mark);
    const size_t unlabelled = roof_labels(f, run, caseno, pt, fr.np, taken);
    free(pt);
    free(taken);
    fputs("</svg><ul class=\"legend\">", f);
    dtype_legend_items(f, run, NULL, 0);
    roof_legend(f, &run->dev, &fr);
    fputs("</ul><figcaption>one point per result, labelled with its variant and [case "
          "number]: model flops / model bytes against the achieved TFLOP/s; the slanted roof "
          "is the calibrated copy bandwidth, the flat ones the calibrated compute peaks (a "
          "roof not drawn is not calibrated)",
          f);
    if (unlabelled)
        fprintf(f, "; %zu label%s left out for room (the point's tooltip names it)", unlabelled,
                unlabelled == 1 ? "" : "s");
    if (fr.nout)
        fprintf(f, "; %zu result%s with figures out of the chart's range not drawn", fr.nout,
                fr.nout == 1 ? "" : "s");
    fputs("</figcaption></figure>\n</section>\n", f);
    return 0;
}

/* ---- the run page: sweeps ------------------------------------------------------- */

/* A line's colour per variant of a sweep (column v: the colours repeat after
 * ten variants). */
static const char *variant_colour(size_t v)
{
    static const char *const palette[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756",
                                          "#72b7b2", "#b279a2", "#ff9da6", "#9d755d",
                                          "#bab0ac", "#eeca3b"};
    return palette[v % KB_COUNT(palette)];
}

/* The sweep chart's size and margins; the x-axis labels take up to SW_ROWS
 * rows under the axis, SW_ROW apart. */
enum { SW_W = 820, SW_H = 420, SW_L = 70, SW_R = 30, SW_T = 20, SW_B = 78, SW_ROWS = 3,
       SW_ROW = 13 };

/* The log x-axis of a sweep: the decades lx0 .. lx1 across the plot. */
typedef struct sweep_axes {
    double lx0, lx1, top; /* top: the y-axis's greatest value */
} sweep_axes;

static double sw_x(const sweep_axes *a, int64_t v)
{
    return SW_L + (log10((double)v) - a->lx0) / (a->lx1 - a->lx0) * (SW_W - SW_L - SW_R);
}

static double sw_y(const sweep_axes *a, double v)
{
    return SW_H - SW_B - v / a->top * (SW_H - SW_T - SW_B);
}

/* The x-axis: a tick at each value of the sweep, its label in the first of
 * SW_ROWS rows where it clears the labels before it (left out when none
 * has room). Returns how many labels were left out. */
static size_t sweep_x_ticks(FILE *f, const kb_sweep *s, const sweep_axes *a)
{
    double right[SW_ROWS];
    size_t left_out = 0;
    for (int r = 0; r < SW_ROWS; r++)
        right[r] = -1e9;
    fputs("<g class=\"grid\">", f);
    for (size_t p = 0; p < s->npoints; p++) {
        const double x = sw_x(a, s->value[p]);
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)s->value[p]);
        const double w = (double)strlen(b) * LABEL_CHAR;
        fprintf(f, "<line class=\"sweep-tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x,
                SW_T, x, SW_H - SW_B + 4);
        int row = -1;
        for (int r = 0; r < SW_ROWS && row < 0; r++)
            if (x - w / 2 > right[r] + 4)
                row = r;
        if (row < 0) {
            left_out++;
            continue;
        }
        right[row] = x + w / 2;
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x,
                SW_H - SW_B + 16 + row * SW_ROW, b);
    }
    fputs("</g>\n", f);
    return left_out;
}

/* The chart of a sweep: each variant's figure against the swept axis (log
 * scale), one line per variant, a point per result with its tooltip, and the
 * calibrated ceiling as a dashed line. */
static void sweep_chart(FILE *f, const kb_run *run, const kb_sweep *s)
{
    const size_t nv = s->nvariants;
    double vmax = isfinite(s->ceiling) && s->ceiling > 0 && s->ceiling <= 1e9 ? s->ceiling : 0;
    for (size_t c = 0; c < s->npoints * nv; c++)
        if (isfinite(s->figure[c]) && s->figure[c] > vmax && s->figure[c] <= 1e9)
            vmax = s->figure[c];
    double step = 0;
    int nsteps = 0;
    if (!log_placeable((double)s->value[0]) || !log_placeable((double)s->value[s->npoints - 1])) {
        fputs("<p class=\"nochart\">no chart: the axis holds values a log scale cannot show "
              "(zero or negative)</p>\n",
              f);
        return;
    }
    if (nv == 0 || !linear_axis(vmax, &step, &nsteps)) {
        fputs("<p class=\"nochart\">no chart: no ok result in this sweep</p>\n", f);
        return;
    }
    const char *unit = s->compute ? "TFLOP/s" : "GB/s";
    sweep_axes a = {log10((double)s->value[0]), log10((double)s->value[s->npoints - 1]),
                    step * nsteps};
    const double pad = 0.04 * (a.lx1 - a.lx0);
    a.lx0 -= pad;
    a.lx1 += pad;
    char b[160], t[64];
    svg_open(f, 1, "sweep-chart", SW_W, SW_H);
    fputs("<g class=\"grid\">", f);
    for (int k = 0; k <= nsteps; k++) {
        const double y = sw_y(&a, step * k);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text class=\"tick\" "
                   "x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>",
                SW_L, y, SW_W - SW_R, y, SW_L - 6, y + 4, step * k);
    }
    fputs("</g>\n", f);
    const size_t unlabelled = sweep_x_ticks(f, s, &a);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (SW_L + SW_W - SW_R) / 2,
            SW_H - 8);
    kb_html_escape(f, s->axis);
    fprintf(f, " (log scale)</text><text x=\"16\" y=\"%d\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 16 %d)\">%s</text>\n",
            (SW_T + SW_H - SW_B) / 2, (SW_T + SW_H - SW_B) / 2, unit);
    if (vmax > 0 && isfinite(s->ceiling) && s->ceiling > 0 && s->ceiling <= vmax) {
        const double y = sw_y(&a, s->ceiling);
        fprintf(f, "<line class=\"sweep-ceiling\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s %.0f %s</text>\n",
                SW_L, y, SW_W - SW_R, y, SW_W - SW_R - 4, y - 5,
                s->compute ? "peak" : "copy bw", s->ceiling, unit);
    }
    for (size_t v = 0; v < nv; v++) {
        /* a line through the points it has, broken where it has none */
        int open = 0;
        for (size_t p = 0; p < s->npoints; p++) {
            const double x = s->figure[p * nv + v];
            if (!isfinite(x) || x > vmax) {
                fputs(open ? "\"/>\n" : "", f);
                open = 0;
                continue;
            }
            if (!open)
                fprintf(f, "<polyline class=\"sweep-line\" style=\"stroke:%s\" points=\"",
                        variant_colour(v));
            fprintf(f, "%s%.1f,%.1f", open ? " " : "", sw_x(&a, s->value[p]), sw_y(&a, x));
            open = 1;
        }
        fputs(open ? "\"/>\n" : "", f);
        for (size_t p = 0; p < s->npoints; p++) {
            const double x = s->figure[p * nv + v];
            if (!isfinite(x) || x > vmax)
                continue;
            const kb_result *r = &run->results[s->cell[p * nv + v]];
            kb_fmt_time(kb_result_timed(r, run->timing).us, t, sizeof t);
            kb_result_shape_str(r, ", ", b, sizeof b);
            fprintf(f, "<circle class=\"sweep-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                       "style=\"fill:%s\"><title>",
                    sw_x(&a, s->value[p]), sw_y(&a, x), variant_colour(v));
            kb_html_escape(f, s->variant[v]);
            fputs(" at ", f);
            kb_html_escape(f, b);
            fprintf(f, ": %.1f %s, ", x, unit);
            kb_html_escape(f, t);
            fputs("</title></circle>\n", f);
        }
    }
    fputs("</svg><ul class=\"legend\">", f);
    for (size_t v = 0; v < nv; v++) {
        fprintf(f, "<li class=\"sweep-key\"><span class=\"swatch\" style=\"background:%s\">"
                   "</span>",
                variant_colour(v));
        kb_html_escape(f, s->variant[v]);
        fputs("</li>", f);
    }
    if (isfinite(s->ceiling) && s->ceiling > 0)
        fprintf(f, "<li><span class=\"key-compute\"></span>%s</li>",
                s->compute ? "compute peak" : "copy bw");
    fprintf(f, "</ul><figcaption>%s of each variant against ", unit);
    kb_html_escape(f, s->axis);
    fputs(" (log scale, a tick at each shape of the sweep), one line per variant, broken where "
          "it has no ok result; the dashed line is the calibrated ",
          f);
    fputs(s->compute ? "compute peak" : "copy bandwidth", f);
    if (unlabelled)
        fprintf(f, "; %zu tick label%s left out for room", unlabelled, unlabelled == 1 ? "" : "s");
    fputs("</figcaption></figure>\n", f);
}

/* The table of a sweep: the text report's cells, the fastest in bold. */
static void sweep_table(FILE *f, const kb_sweep *s)
{
    const size_t nc = kb_sweep_ncols(s), lead = kb_sweep_nlead(s);
    char b[96];
    fputs("<div class=\"scroll\"><table class=\"sweep\"><thead><tr>", f);
    for (size_t c = 0; c < nc; c++) {
        kb_sweep_head(s, c, b, sizeof b);
        th(f, b, 1);
    }
    fputs("</tr></thead><tbody>\n", f);
    for (size_t p = 0; p < s->npoints; p++) {
        fputs("<tr class=\"sweep-row\">", f);
        for (size_t c = 0; c < nc; c++) {
            kb_sweep_cell(s, p, c, b, sizeof b);
            const size_t len = strlen(b);
            if (len > 0 && b[len - 1] == ' ')
                b[len - 1] = '\0';
            const int best = c >= lead && c < lead + s->nvariants && s->best[p] == (long)(c - lead);
            fputs(best ? "<td class=\"num best\">" : "<td class=\"num\">", f);
            kb_html_escape(f, b);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

/* Every sweep of the run: its title, table and chart. KB_EENV when out of
 * memory. */
static kb_status sweep_section(FILE *f, const kb_run *run, kb_err *e)
{
    kb_sweeps sw;
    kb_status st = kb_run_sweeps(run, &sw, e);
    if (st != KB_OK || sw.n == 0) {
        kb_sweeps_release(&sw);
        return st;
    }
    fputs("<section id=\"sweeps\">\n<h2>Sweeps</h2>\n", f);
    for (size_t i = 0; i < sw.n; i++) {
        char title[512], legend[512];
        kb_sweep_title(&sw.s[i], title, sizeof title);
        kb_sweep_legend(&sw.s[i], run->timing, legend, sizeof legend);
        fputs("<section class=\"sweep\"><h3>", f);
        kb_html_escape(f, title);
        fputs("</h3>\n", f);
        sweep_table(f, &sw.s[i]);
        fputs("<p class=\"nochart\">", f);
        kb_html_escape(f, legend);
        fputs("</p>\n", f);
        sweep_chart(f, run, &sw.s[i]);
        fputs("</section>\n", f);
    }
    fputs("</section>\n", f);
    kb_sweeps_release(&sw);
    return KB_OK;
}

/* ---- the run page: stalls ------------------------------------------------------- */

enum { ST_W = 560, ST_LABEL = 190, ST_ROW = 18 };

/* Per result with stall reasons, a bar per reason of its longest kernel. */
static void stall_section(FILE *f, const kb_run *run)
{
    int any = 0;
    char b[320];
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        const int longest = kb_result_longest_kernel(r, 1);
        if (longest < 0)
            continue;
        const kb_kernel *k = &r->kernels[longest];
        const int ns = kb_kernel_nstalls(k);
        if (!any++)
            fputs("<section id=\"stalls\">\n<h2>Warp stall reasons</h2>\n<p>Share of the "
                  "stalled warp cycles of each result's longest kernel, by reason.</p>\n",
                  f);
        kb_fmt_case_title(r, b, sizeof b);
        fputs("<div class=\"stalls\"><h3>", f);
        kb_html_escape(f, b);
        fputs(" \xC2\xB7 ", f);
        kb_html_escape(f, r->variant);
        fputs(" <small>(", f);
        kb_html_escape(f, k->name);
        fputs(")</small></h3>\n", f);
        int height = ns * ST_ROW + 4;
        svg_open(f, 0, "stall-chart", ST_W, height);
        for (int j = 0; j < ns; j++) {
            double frac = k->stalls[j].value, y = 2 + j * ST_ROW;
            double w = isfinite(frac) && frac > 0 ? (ST_W - ST_LABEL - 60) * frac : 0;
            kb_fmt_fixed(100.0 * frac, 1, "", "%", b, sizeof b);
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", ST_LABEL - 6, y + 12);
            kb_html_escape(f, k->stalls[j].name);
            fprintf(f, "</text><rect class=\"stall-bar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%d\"><title>",
                    ST_LABEL, y + 2, w, ST_ROW - 5);
            kb_html_escape(f, k->stalls[j].name);
            fprintf(f, " %s</title></rect><text x=\"%.1f\" y=\"%.1f\">%s</text>\n", b,
                    ST_LABEL + w + 5, y + 12, b);
        }
        fputs("</svg></div>\n", f);
    }
    if (any)
        fputs("</section>\n", f);
}

kb_status kb_html_write_run(FILE *f, const kb_run *run, kb_err *e)
{
    kb_status st = KB_OK;
    kb_groups g = {0, NULL, NULL};
    size_t *caseno = calloc(run->nresults ? run->nresults : 1, sizeof *caseno);
    kb_row *rows = calloc(run->nresults ? run->nresults : 1, sizeof *rows);
    char title[512];

    if (!caseno || !rows) {
        st = kb_fail(e, KB_EENV, "out of memory writing the HTML report");
        goto done;
    }
    KB_TRY(kb_run_groups(run, &g, e));
    if (run->id > 0)
        snprintf(title, sizeof title, "kbench run %lld \xC2\xB7 %s", (long long)run->id,
                 run->dev.name);
    else
        snprintf(title, sizeof title, "kbench run \xC2\xB7 %s", run->dev.name);
    page_start(f, title);
    run_header(f, run);
    if (run->nresults == 0)
        fputs("<p class=\"nochart\">no results</p>\n", f);
    for (size_t k = 0; k < g.n; k++) {
        const size_t *idx = g.idx + g.first[k], m = g.first[k + 1] - g.first[k];
        kb_fmt_case_title(&run->results[idx[0]], title, sizeof title);
        fprintf(f, "<section class=\"case\" id=\"case-%zu\">\n<h2><span class=\"caseno\">"
                   "[%zu]</span> ",
                k + 1, k + 1);
        kb_html_escape(f, title);
        fputs("</h2>\n", f);
        for (size_t j = 0; j < m; j++)
            caseno[idx[j]] = k + 1;
        run_table(f, run, idx, m, rows);
        bar_chart(f, run, idx, m);
        fputs("</section>\n", f);
    }
    KB_TRY(sweep_section(f, run, e));
    if (run->nresults > 0) {
        if (all_memory_bound(run))
            copy_chart(f, run, caseno);
        else if (roofline(f, run, caseno) != 0) {
            st = kb_fail(e, KB_EENV, "out of memory writing the HTML report");
            goto done;
        }
        stall_section(f, run);
    }
    page_end(f, run);
    if (ferror(f))
        st = kb_fail(e, KB_EENV, "cannot write the HTML report: %s", strerror(errno));
done:
    kb_groups_release(&g);
    free(caseno);
    free(rows);
    return st;
}

/* ---- the comparison page ---------------------------------------------------------- */

/* "slower", "only-in-base": the class suffix of a verdict. */
static void verdict_class(kb_verdict v, char *b, size_t n)
{
    size_t i = 0;
    for (const char *s = kb_verdict_name(v); *s && i + 1 < n; s++)
        b[i++] = *s == ' ' ? '-' : (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
    b[i] = '\0';
}

static void side_row(FILE *f, const char *label, const char *name, const kb_run *r)
{
    char b[2048];
    kb_compare_side_line(name, r, b, sizeof b);
    meta_row(f, label, b);
}

enum { CI_W = 640, CI_LABEL = 170, CI_ROW = 20, CI_AXIS = 26 };

/* The x of ratio v on an axis from lo to hi. */
static double ci_x(double v, double lo, double hi)
{
    return CI_LABEL + (CI_W - CI_LABEL - 20) * (v - lo) / (hi - lo);
}

/* The ratio and interval of each judged case of a group against the band
 * [1 - t, 1 + t]. */
static void ci_chart(FILE *f, const kb_compare *c, const size_t *idx, size_t n)
{
    double t = c->threshold, lo = 1.0 - t, hi = 1.0 + t;
    size_t nc = 0;
    char b[64], cls[32];
    for (size_t i = 0; i < n; i++) {
        const kb_cmp_case *k = &c->cases[idx[i]];
        if (!isfinite(k->lo) || !isfinite(k->hi) || !isfinite(k->ratio))
            continue;
        nc++;
        lo = k->lo < lo ? k->lo : lo;
        hi = k->hi > hi ? k->hi : hi;
    }
    if (nc == 0)
        return;
    double span = hi - lo > 1e-6 ? hi - lo : 0.02; /* threshold 0 and exact ratios */
    lo -= 0.05 * span;
    hi += 0.05 * span;
    int height = (int)nc * CI_ROW + CI_AXIS + 4;
    svg_open(f, 1, "ci-chart", CI_W, height);
    int axis_y = (int)nc * CI_ROW + 4;
    fprintf(f, "<rect class=\"band\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\"/>",
            ci_x(1.0 - t, lo, hi), ci_x(1.0 + t, lo, hi) - ci_x(1.0 - t, lo, hi), axis_y);
    fprintf(f, "<line class=\"one\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\"/>",
            ci_x(1.0, lo, hi), ci_x(1.0, lo, hi), axis_y);
    /* ticks: the band's edges and 1, then the ends where they do not crowd them */
    const double ticks[] = {1.0, 1.0 - t, 1.0 + t, lo + 0.02 * (hi - lo), hi - 0.02 * (hi - lo)};
    double drawn[5] = {0};
    size_t nd = 0;
    for (size_t j = 0; j < KB_COUNT(ticks); j++) {
        double x = ci_x(ticks[j], lo, hi);
        int crowded = 0;
        for (size_t q = 0; q < nd; q++)
            crowded |= fabs(drawn[q] - x) < 45;
        if (crowded)
            continue;
        drawn[nd++] = x;
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3f</text>",
                x, axis_y + 16, ticks[j]);
    }
    fputs("\n", f);
    size_t row = 0;
    for (size_t i = 0; i < n; i++) {
        const kb_cmp_case *k = &c->cases[idx[i]];
        if (!isfinite(k->lo) || !isfinite(k->hi) || !isfinite(k->ratio))
            continue;
        double y = 4 + (double)row++ * CI_ROW + CI_ROW / 2.0;
        const char *col = k->verdict == KB_V_SLOWER   ? "#b42318"
                          : k->verdict == KB_V_FASTER ? "#067647"
                          : k->verdict == KB_V_SAME   ? "#475467"
                                                      : "#b54708";
        verdict_class(k->verdict, cls, sizeof cls);
        fprintf(f, "<g class=\"ci verdict-%s\"><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
                cls, CI_LABEL - 8, y + 4);
        kb_html_escape(f, kb_cmp_case_result(k)->variant);
        snprintf(b, sizeof b, "%.3f [%.3f, %.3f] %s", k->ratio, k->lo, k->hi,
                 kb_verdict_name(k->verdict));
        fprintf(f, "</text><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                   "style=\"stroke:%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                   "style=\"fill:%s\"/><title>%s</title></g>\n",
                ci_x(k->lo, lo, hi), y, ci_x(k->hi, lo, hi), y, col, ci_x(k->ratio, lo, hi), y,
                col, b);
    }
    fprintf(f, "</svg><figcaption>%s with its %.0f%% interval; the band is the threshold "
               "\xC2\xB1%.3g%%</figcaption></figure>\n",
            c->cross_gpu ? "ratio of % peak BASE / NEW" : "ratio of median times NEW / BASE",
            100.0 * KB_CMP_CONFIDENCE, 100.0 * c->threshold);
}

/* Case group number no of the comparison: its table and its chart. */
static void compare_group(FILE *f, const kb_compare *c, const size_t *idx, size_t m, size_t no)
{
    char b[1024], cls[32];
    const kb_result *r0 = kb_cmp_case_result(&c->cases[idx[0]]);
    kb_fmt_case_title(r0, b, sizeof b);
    fprintf(f, "<section class=\"case\" id=\"case-%zu\">\n<h2>", no);
    kb_html_escape(f, b);
    fputs("</h2>\n<div class=\"scroll\"><table class=\"compare\">\n<thead><tr>", f);
    th(f, "variant", 0);
    th(f, "BASE", 1);
    th(f, "NEW", 1);
    if (c->cross_gpu) {
        th(f, "BASE % peak", 1);
        th(f, "NEW % peak", 1);
    }
    th(f, c->cross_gpu ? "peak ratio" : "NEW/BASE", 1);
    th(f, "95% interval", 0);
    th(f, "verdict", 0);
    th(f, "what moved", 0);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t j = 0; j < m; j++) {
        const kb_cmp_case *k = &c->cases[idx[j]];
        verdict_class(k->verdict, cls, sizeof cls);
        fprintf(f, "<tr class=\"case verdict-%s\">", cls);
        td(f, kb_cmp_case_result(k)->variant, 0);
        kb_fmt_time(k->base ? k->base->median_us : NAN, b, sizeof b);
        td(f, b, 1);
        kb_fmt_time(k->cur ? k->cur->median_us : NAN, b, sizeof b);
        td(f, b, 1);
        if (c->cross_gpu) {
            kb_fmt_fixed(k->base ? k->base->pct_peak : NAN, 1, "", "%", b, sizeof b);
            td(f, b, 1);
            kb_fmt_fixed(k->cur ? k->cur->pct_peak : NAN, 1, "", "%", b, sizeof b);
            td(f, b, 1);
        }
        kb_fmt_fixed(c->cross_gpu ? k->ratio : k->time_ratio, 3, "", "x", b, sizeof b);
        td(f, b, 1);
        if (isfinite(k->lo) && isfinite(k->hi))
            snprintf(b, sizeof b, "[%.3f, %.3f]", k->lo, k->hi);
        else
            snprintf(b, sizeof b, "-");
        td(f, b, 0);
        fputs("<td class=\"verdict\">", f);
        kb_html_escape(f, kb_verdict_name(k->verdict));
        fputs("</td>", f);
        fputs("<td class=\"note\">", f);
        kb_html_escape(f, k->moved);
        if (*k->why) {
            fputs(*k->moved ? "; " : "", f);
            kb_html_escape(f, k->why);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table></div>\n", f);
    ci_chart(f, c, idx, m);
    fputs("</section>\n", f);
}

kb_status kb_html_write_compare(FILE *f, const kb_compare *c, kb_err *e)
{
    kb_groups g;
    char b[1024];
    kb_status st = kb_compare_groups(c, &g, e);
    if (st != KB_OK)
        return st;
    page_start(f, "kbench compare");
    fputs("<header>\n<h1>kbench compare</h1>\n<p class=\"headline\">", f);
    kb_compare_headline(c, b, sizeof b);
    kb_html_escape(f, b);
    fputs("</p>\n", f);
    if (c->cross_gpu) {
        fputs("<p class=\"warning cross-gpu\">Different GPUs: ", f);
        kb_compare_cross_gpu_note(f, c, kb_html_escape);
        fputs("</p>\n", f);
    }
    fputs("<dl class=\"meta\">", f);
    side_row(f, "BASE", c->base_name, c->base);
    side_row(f, "NEW", c->new_name, c->cur);
    snprintf(b, sizeof b,
             "%s; %.0f%% bootstrap interval (%d resamples); FASTER below %.3g, SLOWER above "
             "%.3g, SAME within, else UNCERTAIN (also when a side is not ok or has fewer than "
             "%d samples)",
             c->cross_gpu ? "ratio = % peak BASE / % peak NEW" : "ratio = median time NEW / BASE",
             100.0 * KB_CMP_CONFIDENCE, KB_CMP_RESAMPLES, 1.0 - c->threshold,
             1.0 + c->threshold, KB_CMP_MIN_SAMPLES);
    meta_row(f, "rule", b);
    fputs("</dl>\n</header>\n", f);
    for (size_t k = 0; k < g.n; k++)
        compare_group(f, c, g.idx + g.first[k], g.first[k + 1] - g.first[k], k + 1);
    page_end(f, c->cur);
    if (ferror(f))
        st = kb_fail(e, KB_EENV, "cannot write the HTML comparison: %s", strerror(errno));
    kb_groups_release(&g);
    return st;
}

/* writers.c - text, markdown and CSV reports of a kb_run. The text and markdown
 * writers share one table builder (case groups, cells) and differ only in how
 * they lay the cells out; the CSV writer dumps every scalar field. */
#include "report/writers.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NCOL = 9, CELL = 96, SHORT_REASON = 40 };

static const char *const col_head[NCOL] = {"variant", "status",   "median",  "spread", "GB/s",
                                           "% copy",  "vs naive", "kernels", "note"};
static const int col_right[NCOL] = {0, 0, 1, 1, 1, 1, 1, 1, 0};

typedef struct row {
    char c[NCOL][CELL];
} row;

typedef enum fmt_kind { FMT_TEXT, FMT_MD } fmt_kind;

/* ---- figures as strings -------------------------------------------------------- */

/* Microseconds with about four significant digits, in us, ms or s. */
static void fmt_time(double us, char *b, size_t n)
{
    static const char *const unit[] = {"\xC2\xB5s", "ms", "s"};
    if (!isfinite(us)) {
        snprintf(b, n, "-");
        return;
    }
    double v = us;
    int u = 0;
    while (u < 2 && fabs(v) >= 1000.0) {
        v /= 1000.0;
        u++;
    }
    int prec = fabs(v) < 10 ? 3 : fabs(v) < 100 ? 2 : 1;
    snprintf(b, n, "%.*f %s", prec, v, unit[u]);
}

static void fmt_fixed(double v, int prec, const char *pre, const char *post, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%s%.*f%s", pre, prec, v, post);
}

/* The shortest decimal text that reads back to exactly v; "" when unknown. */
static void fmt_exact(double v, char *b, size_t n)
{
    if (!isfinite(v)) {
        snprintf(b, n, "%s", "");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(b, n, "%.*g", prec, v);
        if (strtod(b, NULL) == v)
            return;
    }
}

/* The first line of s in at most max bytes (cut on a UTF-8 boundary, "..."
 * marking the cut), control characters as spaces. */
static void shorten(const char *s, size_t max, char *b, size_t n)
{
    size_t len = strcspn(s, "\r\n");
    int cut = 0;
    if (max + 1 > n)
        max = n - 1;
    if (len > max) {
        len = max - 3;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
            len--;
        cut = 1;
    }
    for (size_t i = 0; i < len; i++)
        b[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
    b[len] = '\0';
    if (cut || s[strcspn(s, "\r\n")] != '\0')
        kb_strlcpy(b + len, "...", n - len);
}

/* "rows=4096, cols=1024" */
static void shape_words(const kb_result *r, char *b, size_t n)
{
    size_t used = 0;
    b[0] = '\0';
    for (int i = 0; i < r->naxes && used < n; i++) {
        int w = snprintf(b + used, n - used, "%s%s=%lld", i ? ", " : "", r->axis[i],
                         (long long)r->shape[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* ---- case groups ---------------------------------------------------------------- */

static int same_case(const kb_result *a, const kb_result *b)
{
    if (strcmp(a->op, b->op) != 0 || strcmp(a->dtype, b->dtype) != 0 || a->naxes != b->naxes)
        return 0;
    for (int i = 0; i < a->naxes; i++)
        if (strcmp(a->axis[i], b->axis[i]) != 0 || a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

/* Collects into idx[] the results of the case of run->results[first] that are
 * not yet marked in seen[], marking them; returns how many. */
static size_t take_group(const kb_run *run, size_t first, char *seen, size_t *idx)
{
    size_t n = 0;
    for (size_t j = first; j < run->nresults; j++)
        if (!seen[j] && same_case(&run->results[first], &run->results[j])) {
            seen[j] = 1;
            idx[n++] = j;
        }
    return n;
}

/* The median of the group's ok `naive` result, or NAN. */
static double naive_median(const kb_run *run, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &run->results[idx[i]];
        if (strcmp(r->variant, "naive") == 0 && r->status == KB_R_OK && r->median_us > 0 &&
            isfinite(r->median_us))
            return r->median_us;
    }
    return NAN;
}

static double speedup(const kb_result *r, double naive)
{
    if (r->status != KB_R_OK || !(r->median_us > 0) || !isfinite(naive))
        return NAN;
    return naive / r->median_us;
}

static void fill_row(const kb_result *r, double naive, row *w)
{
    kb_strlcpy(w->c[0], r->variant, CELL);
    kb_strlcpy(w->c[1], kb_rstatus_name(r->status), CELL);
    fmt_time(r->median_us, w->c[2], CELL);
    fmt_fixed(100.0 * r->stdrel, 1, "\xC2\xB1", "%", w->c[3], CELL);
    fmt_fixed(r->gbps, 1, "", "", w->c[4], CELL);
    fmt_fixed(r->pct_peak, 1, "", "%", w->c[5], CELL);
    fmt_fixed(speedup(r, naive), 2, "", "x", w->c[6], CELL);
    snprintf(w->c[7], CELL, "%d", r->nkernels);
    switch (r->status) {
    case KB_R_MISMATCH:
        snprintf(w->c[8], CELL, "max abs %.3g, rel l2 %.3g", r->max_abs_err, r->rel_l2_err);
        break;
    case KB_R_FAILED:
    case KB_R_SKIPPED:
        shorten(r->reason, SHORT_REASON, w->c[8], CELL);
        break;
    default:
        snprintf(w->c[8], CELL, "%s%s%s", r->checked ? "" : "not checked",
                 !r->checked && r->throttled ? ", " : "", r->throttled ? "throttled" : "");
        break;
    }
}

/* ---- layout --------------------------------------------------------------------- */

/* Display columns of a UTF-8 string (one per code point). */
static size_t dwidth(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Appends n spaces, or s, to line[LINE] at *at (cells are short: never cut). */
enum { LINE = NCOL * (CELL + 4) };
static void put_pad(char *line, size_t *at, size_t n)
{
    while (n-- > 0 && *at + 1 < LINE)
        line[(*at)++] = ' ';
    line[*at] = '\0';
}
static void put_str(char *line, size_t *at, const char *s)
{
    kb_strlcpy(line + *at, s, LINE - *at);
    *at += strlen(line + *at);
}

static void text_table(FILE *f, const row *rows, size_t nrows)
{
    size_t width[NCOL];
    char line[LINE];
    for (int c = 0; c < NCOL; c++)
        width[c] = dwidth(col_head[c]);
    for (size_t i = 0; i < nrows; i++)
        for (int c = 0; c < NCOL; c++)
            if (dwidth(rows[i].c[c]) > width[c])
                width[c] = dwidth(rows[i].c[c]);
    /* The note column is dropped when every note is empty. */
    int last = NCOL - 1, any = 0;
    for (size_t i = 0; i < nrows; i++)
        any |= rows[i].c[last][0] != '\0';
    if (!any)
        last--;
    for (size_t i = 0; i <= nrows; i++) {
        size_t at = 0;
        line[0] = '\0';
        for (int c = 0; c <= last; c++) {
            const char *s = i == 0 ? col_head[c] : rows[i - 1].c[c];
            size_t gap = width[c] - dwidth(s);
            if (c > 0)
                put_pad(line, &at, 2);
            if (col_right[c])
                put_pad(line, &at, gap);
            put_str(line, &at, s);
            if (!col_right[c])
                put_pad(line, &at, gap);
        }
        while (at > 0 && line[at - 1] == ' ')
            line[--at] = '\0';
        fputs(line, f);
        fputc('\n', f);
    }
}

/* Writes s with '|' escaped and line breaks as spaces. */
static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

/* Writes s with line breaks as spaces. */
static void one_line(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void md_table(FILE *f, const row *rows, size_t nrows)
{
    fputc('|', f);
    for (int c = 0; c < NCOL; c++)
        fprintf(f, " %s |", col_head[c]);
    fputs("\n|", f);
    for (int c = 0; c < NCOL; c++)
        fputs(col_right[c] ? "---:|" : "---|", f);
    fputc('\n', f);
    for (size_t i = 0; i < nrows; i++) {
        fputc('|', f);
        for (int c = 0; c < NCOL; c++) {
            fputc(' ', f);
            md_cell(f, rows[i].c[c]);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}

static void header(FILE *f, const kb_run *run, fmt_kind k)
{
    const kb_device *d = &run->dev;
    char id[32], copy[64];
    if (run->id > 0)
        snprintf(id, sizeof id, "%lld", (long long)run->id);
    else
        snprintf(id, sizeof id, "(not stored)");
    if (isfinite(d->copy_gbps))
        snprintf(copy, sizeof copy, "%.1f GB/s (calibrated)", d->copy_gbps);
    else
        snprintf(copy, sizeof copy, "not calibrated (run 'kbench calibrate')");
    int interrupted = strcmp(run->state, "interrupted") == 0;
    int running = strcmp(run->state, "running") == 0;
    const char *warn = interrupted ? "INTERRUPTED: the run stopped before it finished; only the "
                                     "results it completed are shown"
                       : running   ? "RUNNING: the run has not finished (or its process was "
                                     "killed); results so far"
                                   : NULL;

    if (k == FMT_TEXT) {
        fprintf(f, "kbench run %s  [%s]\n", id, *run->state ? run->state : "?");
        if (warn)
            fprintf(f, "!! %s !!\n", warn);
        fprintf(f, "started   %s", run->started);
        if (*run->finished)
            fprintf(f, "  (finished %s)", run->finished);
        fprintf(f, "\ndevice    %s, cc %d.%d, %d SMs", d->name, d->cc_major, d->cc_minor, d->sms);
        if (*d->uuid)
            fprintf(f, "  (%s)", d->uuid);
        fprintf(f, "\ncopy bw   %s\n", copy);
        fprintf(f, "state     %s\n", *run->state ? run->state : "?");
        if (*run->tag)
            fprintf(f, "tag       %s\n", run->tag);
        fprintf(f, "kbench    %s (git %s)\n", run->version, run->git);
        if (*run->argv)
            fprintf(f, "command   %s\n", run->argv);
    } else {
        fprintf(f, "# kbench run %s\n\n", id);
        if (warn)
            fprintf(f, "> **%s**\n\n", warn);
        fprintf(f, "- **started**: %s", run->started);
        if (*run->finished)
            fprintf(f, " (finished %s)", run->finished);
        fprintf(f, "\n- **device**: %s, cc %d.%d, %d SMs", d->name, d->cc_major, d->cc_minor,
                d->sms);
        if (*d->uuid)
            fprintf(f, " (`%s`)", d->uuid);
        fprintf(f, "\n- **copy bandwidth**: %s\n", copy);
        fprintf(f, "- **state**: %s\n", *run->state ? run->state : "?");
        if (*run->tag) {
            fputs("- **tag**: ", f);
            md_cell(f, run->tag);
            fputc('\n', f);
        }
        fprintf(f, "- **kbench**: %s (git %s)\n", run->version, run->git);
        if (*run->argv) {
            fputs("- **command**: `", f);
            md_cell(f, run->argv);
            fputs("`\n", f);
        }
    }
}

/* The full reason of each non-ok result of a group, one line each. */
static void reasons(FILE *f, const kb_run *run, const size_t *idx, size_t n, fmt_kind k)
{
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &run->results[idx[i]];
        if (r->status == KB_R_OK)
            continue;
        if (k == FMT_TEXT)
            fprintf(f, "  %s (%s): ", r->variant, kb_rstatus_name(r->status));
        else
            fprintf(f, "- **%s** (%s): ", r->variant, kb_rstatus_name(r->status));
        if (r->status == KB_R_MISMATCH)
            fprintf(f, "max abs err %.6g, rel l2 err %.6g (atol %g, rtol %g); ", r->max_abs_err,
                    r->rel_l2_err, r->atol, r->rtol);
        if (*r->reason && k == FMT_MD)
            md_cell(f, r->reason);
        else if (*r->reason)
            one_line(f, r->reason);
        else
            fputs("no reason recorded", f);
        fputc('\n', f);
    }
}

static kb_status write_tables(FILE *f, const kb_run *run, fmt_kind k, kb_err *e)
{
    kb_status st = KB_OK;
    size_t n = run->nresults;
    char *seen = calloc(n ? n : 1, 1);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    row *rows = calloc(n ? n : 1, sizeof *rows);
    char shape[256];

    if (!seen || !idx || !rows) {
        st = kb_fail(e, KB_EENV, "out of memory writing the report");
        goto done;
    }
    header(f, run, k);
    if (n == 0)
        fputs(k == FMT_TEXT ? "\nno results\n" : "\n_no results_\n", f);
    for (size_t i = 0; i < n; i++) {
        if (seen[i])
            continue;
        size_t m = take_group(run, i, seen, idx);
        const kb_result *r0 = &run->results[i];
        double naive = naive_median(run, idx, m);
        shape_words(r0, shape, sizeof shape);
        if (k == FMT_TEXT)
            fprintf(f, "\n%s \xC2\xB7 %s \xC2\xB7 %s\n", r0->op, r0->dtype, shape);
        else
            fprintf(f, "\n## %s \xC2\xB7 %s \xC2\xB7 %s\n\n", r0->op, r0->dtype, shape);
        for (size_t j = 0; j < m; j++)
            fill_row(&run->results[idx[j]], naive, &rows[j]);
        if (k == FMT_TEXT)
            text_table(f, rows, m);
        else
            md_table(f, rows, m);
        int any_bad = 0;
        for (size_t j = 0; j < m; j++)
            any_bad |= run->results[idx[j]].status != KB_R_OK;
        if (any_bad && k == FMT_MD)
            fputc('\n', f);
        reasons(f, run, idx, m, k);
    }
    if (ferror(f))
        st = kb_fail(e, KB_EENV, "cannot write the report: %s", strerror(errno));
done:
    free(seen);
    free(idx);
    free(rows);
    return st;
}

kb_status kb_write_text(FILE *f, const kb_run *run, kb_err *e)
{
    return write_tables(f, run, FMT_TEXT, e);
}

kb_status kb_write_markdown(FILE *f, const kb_run *run, kb_err *e)
{
    return write_tables(f, run, FMT_MD, e);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void csv_str(FILE *f, const char *s, int first)
{
    if (!first)
        fputc(',', f);
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    char b[40];
    fmt_exact(v, b, sizeof b);
    csv_str(f, b, 0);
}

static void csv_int(FILE *f, long long v)
{
    fprintf(f, ",%lld", v);
}

static const char *const csv_head[] = {
    "run_id",       "started",      "state",     "tag",          "device",
    "device_uuid",  "cc",           "copy_gbps", "op",           "variant",
    "dtype",        "shape",        "status",    "reason",       "seed",
    "checked",      "max_abs_err",  "rel_l2_err", "atol",        "rtol",
    "rows_checked", "median_us",    "min_us",    "max_us",       "stdrel",
    "nsamples",     "sm_clock_mhz", "throttled", "bytes",        "flops",
    "gbps",         "tflops",       "pct_peak",  "speedup_vs_naive", "kernels",
};

kb_status kb_write_csv(FILE *f, const kb_run *run, kb_err *e)
{
    kb_status st = KB_OK;
    size_t n = run->nresults;
    char *seen = calloc(n ? n : 1, 1);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    double *naive = calloc(n ? n : 1, sizeof *naive);
    char cc[24], shape[256], seed[32];

    if (!seen || !idx || !naive) {
        st = kb_fail(e, KB_EENV, "out of memory writing the report");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (seen[i])
            continue;
        size_t m = take_group(run, i, seen, idx);
        double nm = naive_median(run, idx, m);
        for (size_t j = 0; j < m; j++)
            naive[idx[j]] = nm;
    }
    for (size_t c = 0; c < sizeof csv_head / sizeof csv_head[0]; c++)
        csv_str(f, csv_head[c], c == 0);
    fputs("\r\n", f);
    snprintf(cc, sizeof cc, "%d.%d", run->dev.cc_major, run->dev.cc_minor);
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &run->results[i];
        kb_result_shape_str(r, shape, sizeof shape);
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
        fprintf(f, "%lld", (long long)run->id);
        csv_str(f, run->started, 0);
        csv_str(f, run->state, 0);
        csv_str(f, run->tag, 0);
        csv_str(f, run->dev.name, 0);
        csv_str(f, run->dev.uuid, 0);
        csv_str(f, cc, 0);
        csv_num(f, run->dev.copy_gbps);
        csv_str(f, r->op, 0);
        csv_str(f, r->variant, 0);
        csv_str(f, r->dtype, 0);
        csv_str(f, shape, 0);
        csv_str(f, kb_rstatus_name(r->status), 0);
        csv_str(f, r->reason, 0);
        csv_str(f, seed, 0);
        csv_int(f, r->checked);
        csv_num(f, r->max_abs_err);
        csv_num(f, r->rel_l2_err);
        csv_num(f, r->atol);
        csv_num(f, r->rtol);
        csv_int(f, (long long)r->rows_checked);
        csv_num(f, r->median_us);
        csv_num(f, r->min_us);
        csv_num(f, r->max_us);
        csv_num(f, r->stdrel);
        csv_int(f, (long long)r->nsamples);
        csv_num(f, r->sm_clock_mhz);
        csv_int(f, r->throttled);
        csv_num(f, r->bytes);
        csv_num(f, r->flops);
        csv_num(f, r->gbps);
        csv_num(f, r->tflops);
        csv_num(f, r->pct_peak);
        csv_num(f, speedup(r, naive[i]));
        csv_int(f, r->nkernels);
        fputs("\r\n", f);
    }
    if (ferror(f))
        st = kb_fail(e, KB_EENV, "cannot write the report: %s", strerror(errno));
done:
    free(seen);
    free(idx);
    free(naive);
    return st;
}

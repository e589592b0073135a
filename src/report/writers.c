/* writers.c - text, markdown and CSV reports of a kb_run, and the per-kernel
 * detail of `kbench report --kernels`. The text and markdown writers share one
 * table builder (case groups, cells, which columns a case shows and what they
 * are called) and differ only in how they lay the cells out (format.h); the
 * CSV writer dumps every scalar field. Every figure comes from the model. */
#include "report/writers.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/format.h"
#include "report/table.h"
#include "results/metrics.h"
#include "util/member.h"
#include "util/text.h"

/* The text table stays within the layout's width by cutting the stalls column
 * (never below MIN_STALLS, else leaving it to --wide and --kernels) and the
 * note column, or by moving the notes under the table when the note would get
 * fewer than MIN_NOTE columns. */
enum { MIN_STALLS = 12, MIN_NOTE = 20 };
/* --kernels: metric labels wider than this do not widen the label column. */
enum { MAX_LABEL = 24 };
/* --kernels: the column of metric values ("1000.0 µs"). */
enum { VALUE_W = 9 };

typedef enum fmt_kind { FMT_TEXT, FMT_MD } fmt_kind;

/* A run as one writer shows it. */
typedef struct run_view {
    const kb_run *run;
    fmt_kind k;
    size_t width; /* text: the widest line (0: no limit) */
    int wide;     /* text: every column, cells whole, lines as long as they need */
} run_view;

/* Untrusted text (a reason, from a store or report) in the format: escaped
 * for markdown, one clean line for text. */
static void put_text(FILE *f, const char *s, fmt_kind k)
{
    if (k == FMT_MD)
        kb_md_text(f, s);
    else
        kb_text_line(f, s);
}

/* ---- layout --------------------------------------------------------------------- */

/* The stall summary s in at most max columns, cut after a whole "reason NN%"
 * pair when it is too long (or shortened with "..." when even one is). */
static void cut_stalls(const char *s, size_t max, char *b, size_t n)
{
    size_t len = strlen(s), keep = 0;
    if (kb_text_width(s) <= max) {
        kb_strlcpy(b, s, n);
        return;
    }
    for (size_t i = 1; i <= max && i <= len; i++)
        if (s[i - 1] == '%' && (s[i] == ' ' || s[i] == '\0'))
            keep = i;
    if (keep == 0) {
        kb_text_shorten(s, max, b, n);
        return;
    }
    if (keep >= n)
        keep = n - 1;
    memcpy(b, s, keep);
    b[keep] = '\0';
}
/* Widths of the visible columns. The stalls and note columns (the last two)
 * are cut so that a line stays within TEXT_WIDTH, the stalls first served,
 * counting a row's UTF-8 characters ("µ", "±") at their bytes so that a line
 * fits however a reader counts it;
 * when the note would get fewer than MIN_NOTE columns (or its own width, if
 * less) it is hidden (vis[KB_COL_NOTE] = 0) and the caller prints the notes under
 * the table instead. */
static void text_widths(const kb_heads *hd, const kb_row *rows, size_t nrows,
                        int vis[KB_NCOL], size_t limit, size_t width[KB_NCOL])
{
    size_t used = 0, extra = 0;
    int first = 1;
    for (int c = 0; c < KB_NCOL; c++) {
        width[c] = kb_text_width(hd->h[c]);
        for (size_t i = 0; i < nrows; i++)
            if (kb_text_width(rows[i].c[c]) > width[c])
                width[c] = kb_text_width(rows[i].c[c]);
        if (!vis[c] || c == KB_COL_STALLS || c == KB_COL_NOTE)
            continue;
        used += width[c] + (first ? 0 : 2);
        first = 0;
    }
    for (size_t i = 0; i < nrows; i++) {
        size_t e = 0;
        for (int c = 0; c < KB_NCOL; c++)
            if (vis[c] && c != KB_COL_STALLS && c != KB_COL_NOTE)
                e += strlen(rows[i].c[c]) - kb_text_width(rows[i].c[c]);
        extra = e > extra ? e : extra;
    }
    used += extra;
    if (limit == 0)
        return; /* every cell whole */
    size_t avail = limit > used ? limit - used : 0;
    if (vis[KB_COL_STALLS]) {
        size_t room = avail > 2 ? avail - 2 : 0;
        if (room < MIN_STALLS)
            vis[KB_COL_STALLS] = 0;
        else if (width[KB_COL_STALLS] > room)
            width[KB_COL_STALLS] = room;
        if (vis[KB_COL_STALLS])
            avail = avail > 2 + width[KB_COL_STALLS] ? avail - 2 - width[KB_COL_STALLS] : 0;
    }
    if (vis[KB_COL_NOTE]) {
        size_t room = avail > 2 ? avail - 2 : 0;
        size_t least = width[KB_COL_NOTE] < MIN_NOTE ? width[KB_COL_NOTE] : MIN_NOTE;
        if (room < least)
            vis[KB_COL_NOTE] = 0;
        else if (width[KB_COL_NOTE] > room)
            width[KB_COL_NOTE] = room;
    }
}

/* Which columns are right-aligned (numbers). */
static void right_cols(int right[KB_NCOL])
{
    for (int c = 0; c < KB_NCOL; c++)
        right[c] = kb_col_right(c);
}

/* The cells of row i of the table (0: the headings), those wider than their
 * column cut into cut[] (the stall summary after a whole pair). */
static void row_cells(const kb_heads *hd, const kb_row *rows, size_t i,
                      const size_t width[KB_NCOL], int limited,
                      char cut[KB_NCOL][KB_CELL], const char *cell[KB_NCOL])
{
    for (int c = 0; c < KB_NCOL; c++) {
        cell[c] = i == 0 ? hd->h[c] : rows[i - 1].c[c];
        /* within a limit the last two are cut to bytes (text_widths) */
        const int last = limited && (c == KB_COL_STALLS || c == KB_COL_NOTE);
        if ((last ? strlen(cell[c]) : kb_text_width(cell[c])) <= width[c])
            continue;
        if (c == KB_COL_STALLS)
            cut_stalls(cell[c], width[c], cut[c], KB_CELL);
        else
            kb_text_shorten(cell[c], width[c], cut[c], KB_CELL);
        cell[c] = cut[c];
    }
}

/* The table; may hide the note column (see text_widths). */
static void text_table(FILE *f, const kb_heads *hd, const kb_row *rows, size_t nrows,
                       int vis[KB_NCOL], size_t limit)
{
    size_t width[KB_NCOL];
    char cut[KB_NCOL][KB_CELL];
    const char *cell[KB_NCOL];
    int right[KB_NCOL];
    right_cols(right);
    text_widths(hd, rows, nrows, vis, limit, width);
    for (size_t i = 0; i <= nrows; i++) {
        row_cells(hd, rows, i, width, limit > 0, cut, cell);
        kb_table_text_row(f, cell, width, right, vis, KB_NCOL);
    }
}

static void md_table(FILE *f, const kb_heads *hd, const kb_row *rows, size_t nrows,
                     const int vis[KB_NCOL])
{
    int right[KB_NCOL];
    const char *cell[KB_NCOL];
    right_cols(right);
    kb_table_md_row(f, hd->h, vis, KB_NCOL);
    kb_table_md_rule(f, right, vis, KB_NCOL);
    for (size_t i = 0; i < nrows; i++) {
        for (int c = 0; c < KB_NCOL; c++)
            cell[c] = rows[i].c[c];
        kb_table_md_row(f, cell, vis, KB_NCOL);
    }
}

/* The run's strings, made safe for the output (text, or markdown). */
typedef struct safe_meta {
    char name[512], uuid[512], started[256], finished[256], state[128], tag[1024],
        version[256], git[256], argv[4096], env[2048];
} safe_meta;

static void safe_meta_of(const kb_run *run, fmt_kind k, safe_meta *m)
{
    const kb_safe_kind sk = k == FMT_MD ? KB_SAFE_MD : KB_SAFE_TERM;
    kb_safe(sk, run->dev.name, m->name, sizeof m->name);
    kb_safe(sk, run->dev.uuid, m->uuid, sizeof m->uuid);
    kb_safe(sk, run->started, m->started, sizeof m->started);
    kb_safe(sk, run->finished, m->finished, sizeof m->finished);
    kb_safe(sk, *run->state ? run->state : "?", m->state, sizeof m->state);
    kb_safe(sk, run->tag, m->tag, sizeof m->tag);
    kb_safe(sk, run->version, m->version, sizeof m->version);
    kb_safe(sk, run->git, m->git, sizeof m->git);
    kb_safe(sk, run->argv, m->argv, sizeof m->argv);
    kb_safe(sk, run->env, m->env, sizeof m->env);
}

/* One "name      value" line of the text header, wrapped at width. */
static void field(FILE *f, const char *name, const char *value, size_t width)
{
    char lead[16];
    snprintf(lead, sizeof lead, "%-10s", name);
    kb_text_wrap(f, lead, value, width);
}

static void header(FILE *f, const kb_run *run, fmt_kind k, size_t width)
{
    const kb_device *d = &run->dev;
    char id[32], copy[192];
    safe_meta m;
    safe_meta_of(run, k, &m);
    if (run->id > 0)
        snprintf(id, sizeof id, " %lld", (long long)run->id);
    else
        id[0] = '\0'; /* a report file's run: no id */
    kb_fmt_ceilings(d, copy, sizeof copy);
    int interrupted = strcmp(run->state, "interrupted") == 0;
    int running = strcmp(run->state, "running") == 0;
    const char *warn = interrupted ? "INTERRUPTED: the run stopped before it finished; only the "
                                     "results it completed are shown"
                       : running   ? "RUNNING: the run has not finished (or its process was "
                                     "killed); results so far"
                                   : NULL;

    if (k == FMT_TEXT) {
        char line[2048];
        fprintf(f, "kbench run%s  [%s]\n", id, m.state);
        if (warn)
            fprintf(f, "!! %s !!\n", warn);
        snprintf(line, sizeof line, "%s%s%s%s", m.started, *run->finished ? "  (finished " : "",
                 m.finished, *run->finished ? ")" : "");
        field(f, "started", line, width);
        snprintf(line, sizeof line, "%s, cc %d.%d, %d SMs%s%s%s", m.name, d->cc_major,
                 d->cc_minor, d->sms, *d->uuid ? "  (" : "", m.uuid, *d->uuid ? ")" : "");
        field(f, "device", line, width);
        field(f, "ceilings", copy, width);
        field(f, "state", m.state, width);
        if (*run->tag)
            field(f, "tag", m.tag, width);
        snprintf(line, sizeof line, "%s (git %s)", m.version, m.git);
        field(f, "kbench", line, width);
        if (*run->argv)
            field(f, "command", m.argv, width);
        if (*run->env)
            field(f, "env", m.env, width);
    } else {
        fprintf(f, "# kbench run%s\n\n", id);
        if (warn)
            fprintf(f, "> **%s**\n\n", warn);
        fprintf(f, "- **started**: %s", m.started);
        if (*run->finished)
            fprintf(f, " (finished %s)", m.finished);
        fprintf(f, "\n- **device**: %s, cc %d.%d, %d SMs", m.name, d->cc_major, d->cc_minor,
                d->sms);
        if (*d->uuid)
            fprintf(f, " (%s)", m.uuid);
        fprintf(f, "\n- **ceilings**: %s\n", copy);
        fprintf(f, "- **state**: %s\n", m.state);
        if (*run->tag)
            fprintf(f, "- **tag**: %s\n", m.tag);
        fprintf(f, "- **kbench**: %s (git %s)\n", m.version, m.git);
        if (*run->argv)
            fprintf(f, "- **command**: %s\n", m.argv);
        if (*run->env)
            fprintf(f, "- **env**: %s\n", m.env);
    }
}

/* A note line under a table: written to a buffer (*lf) for text, so that it
 * can be wrapped at width, or straight to f for markdown. */
typedef struct note_line {
    FILE *f, *lf;
    char *buf;
    size_t len, width;
    fmt_kind k;
} note_line;

static void note_begin(note_line *l, FILE *f, fmt_kind k, size_t width)
{
    *l = (note_line){f, f, NULL, 0, width, k};
    if (k == FMT_TEXT) {
        l->lf = open_memstream(&l->buf, &l->len);
        if (!l->lf)
            l->lf = f; /* out of memory: the line unwrapped */
    }
}

static void note_end(note_line *l)
{
    if (l->lf != l->f && fclose(l->lf) == 0 && l->buf)
        kb_text_wrap(l->f, "  ", l->buf, l->width);
    else
        fputc('\n', l->f);
    free(l->buf);
}

/* Why counters are missing, each distinct reason once: "counters: none
 * (REASON)" when no result of the group has counters, else naming the results
 * that lack them. */
static void counters_note(FILE *out, const run_view *v, const size_t *idx, size_t n)
{
    const kb_run *run = v->run;
    const fmt_kind k = v->k;
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= kb_result_has_counters(&run->results[idx[i]]);
    for (size_t i = 0; i < n; i++) {
        if (!kb_counters_reason_is_new(run, idx, i))
            continue;
        const char *why = run->results[idx[i]].counters_reason;
        note_line l;
        note_begin(&l, out, k, v->width);
        FILE *f = l.lf;
        fputs(k == FMT_TEXT ? "counters: none" : "- **counters**: none", f);
        if (any) {
            int m = 0;
            fputs(" for ", f);
            for (size_t j = i; j < n; j++)
                if (strcmp(run->results[idx[j]].counters_reason, why) == 0) {
                    fputs(m++ ? ", " : "", f);
                    put_text(f, run->results[idx[j]].variant, k);
                }
        }
        fputs(" (", f);
        put_text(f, why, k);
        fputs(")", f);
        note_end(&l);
    }
}

/* The full reason of each non-ok result of a group, one line each, and, when
 * the table hid its note column (note_shown 0), the notes of ok results. */
static void reasons(FILE *out, const run_view *v, const size_t *idx, size_t n,
                    const kb_row *rows, int note_shown)
{
    const fmt_kind k = v->k;
    for (size_t i = 0; i < n; i++) {
        const kb_result *r = &v->run->results[idx[i]];
        note_line l;
        if (r->status == KB_R_OK) {
            if (note_shown || !rows[i].c[KB_COL_NOTE][0])
                continue;
            note_begin(&l, out, k, v->width);
            fprintf(l.lf, "%s (ok): %s", rows[i].c[KB_COL_VARIANT], rows[i].c[KB_COL_NOTE]);
            note_end(&l);
            continue;
        }
        note_begin(&l, out, k, v->width);
        FILE *f = l.lf;
        fputs(k == FMT_TEXT ? "" : "- **", f);
        put_text(f, r->variant, k);
        fprintf(f, k == FMT_TEXT ? " (%s): " : "** (%s): ", kb_rstatus_name(r->status));
        if (r->status == KB_R_MISMATCH)
            fprintf(f, "max abs err %.6g, rel l2 err %.6g (atol %g, rtol %g); ", r->max_abs_err,
                    r->rel_l2_err, r->atol, r->rtol);
        if (*r->reason)
            put_text(f, r->reason, k);
        else
            fputs("no reason recorded", f);
        note_end(&l);
    }
}

/* One case group: its heading, its table, why counters are missing, and the
 * reasons of its results that are not ok. rows holds m rows. */
static void write_group(FILE *f, const run_view *v, const size_t *idx, size_t m, kb_row *rows)
{
    const kb_run *run = v->run;
    const fmt_kind k = v->k;
    char title[384];
    int vis[KB_NCOL];
    kb_fmt_case_title(&run->results[idx[0]], title, sizeof title);
    fputs(k == FMT_TEXT ? "\n" : "\n## ", f);
    put_text(f, title, k);
    fputs(k == FMT_TEXT ? "\n" : "\n\n", f);
    const int compute = kb_case_compute(run, idx, m);
    const kb_heads hd = kb_case_heads(compute, run->timing);
    for (size_t j = 0; j < m; j++)
        kb_result_cells(&run->results[idx[j]], compute, run->timing, &rows[j]);
    kb_case_columns(run, idx, m, rows, k == FMT_MD, k == FMT_TEXT && !v->wide, vis);
    const int stalls = vis[KB_COL_STALLS];
    if (k == FMT_TEXT)
        text_table(f, &hd, rows, m, vis, v->wide ? 0 : v->width);
    else
        md_table(f, &hd, rows, m, vis);
    for (size_t j = 0; j < m && stalls && !vis[KB_COL_STALLS]; j++) {
        /* no room for the column: each result's top stalls on a line of its own */
        if (strcmp(rows[j].c[KB_COL_STALLS], "-") == 0)
            continue;
        note_line l;
        note_begin(&l, f, k, v->width);
        fprintf(l.lf, "%s: top stalls %s", rows[j].c[KB_COL_VARIANT], rows[j].c[KB_COL_STALLS]);
        note_end(&l);
    }
    kb_clock_spread cs;
    if (kb_case_clocks(run, idx, m, &cs)) {
        note_line l;
        note_begin(&l, f, k, v->width);
        char b[96];
        for (int part = 0; part < 3; part++) {
            fputs(kb_clock_note_part(&cs, part, b, sizeof b), l.lf);
            if (part < 2)
                put_text(l.lf, run->results[idx[part ? cs.at_hi : cs.at_lo]].variant, k);
        }
        note_end(&l);
        double fpc;
        size_t j = kb_case_per_clock(run, idx, m, 0, &fpc);
        if (j < m) {
            note_begin(&l, f, k, v->width);
            fputs(KB_PER_CLOCK_NOTE, l.lf);
            for (const char *sep = " "; j < m; j = kb_case_per_clock(run, idx, m, j + 1, &fpc)) {
                fputs(sep, l.lf);
                put_text(l.lf, run->results[idx[j]].variant, k);
                fprintf(l.lf, " %.0f", fpc);
                sep = ", ";
            }
            note_end(&l);
        }
    }
    int any_bad = 0;
    for (size_t j = 0; j < m; j++)
        any_bad |= run->results[idx[j]].status != KB_R_OK ||
                   run->results[idx[j]].counters_reason[0] != '\0';
    if (any_bad && k == FMT_MD)
        fputc('\n', f);
    counters_note(f, v, idx, m);
    reasons(f, v, idx, m, rows, vis[KB_COL_NOTE]);
}

/* ---- sweeps --------------------------------------------------------------------- */

/* Bytes of a sweep table's cell. */
enum { SWEEP_CELL = 64 };

/* What a sweep's table is laid out with: its cells (row 0 the headings), and
 * per column its width, visibility, alignment and the cell of the row written. */
typedef struct sweep_grid {
    size_t nc, rows;
    char *cells; /* rows * nc * SWEEP_CELL */
    size_t *width;
    int *vis, *right;
    const char **row;
} sweep_grid;

static char *grid_cell(const sweep_grid *g, size_t r, size_t c)
{
    return g->cells + (r * g->nc + c) * SWEEP_CELL;
}

static void grid_release(sweep_grid *g)
{
    free(g->cells);
    free(g->width);
    free(g->vis);
    free(g->right);
    free(g->row);
}

/* The cells of s into g (for markdown without the blank that keeps a text
 * column's numbers aligned beside the fastest's '*'): -1 when out of memory
 * (g then to release). */
static int grid_of(const kb_sweep *s, fmt_kind k, sweep_grid *g)
{
    g->nc = kb_sweep_ncols(s);
    g->rows = s->npoints + 1;
    g->cells = malloc(g->rows * g->nc * SWEEP_CELL);
    g->width = calloc(g->nc, sizeof *g->width);
    g->vis = calloc(g->nc, sizeof *g->vis);
    g->right = calloc(g->nc, sizeof *g->right);
    g->row = calloc(g->nc, sizeof *g->row);
    if (!g->cells || !g->width || !g->vis || !g->right || !g->row)
        return -1;
    for (size_t c = 0; c < g->nc; c++) {
        g->right[c] = 1;
        kb_sweep_head(s, c, grid_cell(g, 0, c), SWEEP_CELL);
        for (size_t p = 0; p < s->npoints; p++) {
            char *cell = grid_cell(g, p + 1, c);
            kb_sweep_cell(s, p, c, cell, SWEEP_CELL);
            const size_t len = strlen(cell);
            if (k == FMT_MD && len > 0 && cell[len - 1] == ' ')
                cell[len - 1] = '\0';
        }
        /* bytes, not characters: the line fits however it is counted */
        for (size_t r = 0; r < g->rows; r++)
            if (strlen(grid_cell(g, r, c)) > g->width[c])
                g->width[c] = strlen(grid_cell(g, r, c));
    }
    return 0;
}

/* The rows of g with the columns g->vis shows: aligned text, or a pipe table. */
static void grid_rows(FILE *f, const sweep_grid *g, fmt_kind k)
{
    for (size_t r = 0; r < g->rows; r++) {
        for (size_t c = 0; c < g->nc; c++)
            g->row[c] = grid_cell(g, r, c);
        if (k == FMT_TEXT)
            kb_table_text_row(f, g->row, g->width, g->right, g->vis, (int)g->nc);
        else
            kb_table_md_row(f, g->row, g->vis, (int)g->nc);
        if (k == FMT_MD && r == 0)
            kb_table_md_rule(f, g->right, g->vis, (int)g->nc);
    }
}

/* The text table of s within limit columns (0: none): the lead columns, then
 * as many variants as fit, the % column after the last; the variants that do
 * not fit in a further table under it, the lead columns repeated. */
static void sweep_text_tables(FILE *f, const kb_sweep *s, sweep_grid *g, size_t limit)
{
    const size_t lead = kb_sweep_nlead(s), nv = s->nvariants;
    size_t leadw = 0;
    for (size_t c = 0; c < lead; c++)
        leadw += g->width[c] + (c ? 2 : 0);
    for (size_t v0 = 0;;) {
        size_t w = leadw, v1 = v0;
        while (v1 < nv && (limit == 0 || w + 2 + g->width[lead + v1] <= limit))
            w += 2 + g->width[lead + v1++];
        if (v1 == v0 && v1 < nv)
            v1++; /* one variant a table at least */
        int last = v1 == nv;
        if (last && limit && w + 2 + g->width[g->nc - 1] > limit && v1 - v0 > 1) {
            v1--; /* room for the % column */
            last = 0;
        }
        for (size_t c = 0; c < g->nc; c++)
            g->vis[c] = c < lead || (c >= lead + v0 && c < lead + v1) || (last && c == g->nc - 1);
        grid_rows(f, g, FMT_TEXT);
        if (last)
            break;
        fputc('\n', f);
        v0 = v1;
    }
}

/* Each sweep of the run (results/sweep.h): its title, its table (the fastest
 * variant marked, its share of the ceiling) and what the cells are. */
static kb_status write_sweeps(FILE *f, const run_view *v, kb_err *e)
{
    kb_sweeps sw;
    kb_status st = kb_run_sweeps(v->run, &sw, e);
    if (st != KB_OK)
        return st;
    for (size_t i = 0; i < sw.n && st == KB_OK; i++) {
        const kb_sweep *s = &sw.s[i];
        char title[512], legend[512];
        sweep_grid g = {0, 0, NULL, NULL, NULL, NULL, NULL};
        if (grid_of(s, v->k, &g) != 0) {
            st = kb_fail(e, KB_EENV, "out of memory writing a sweep of %zu shapes", s->npoints);
            grid_release(&g);
            break;
        }
        kb_sweep_title(s, title, sizeof title);
        kb_sweep_legend(s, v->run->timing, legend, sizeof legend);
        if (v->k == FMT_TEXT) {
            fputc('\n', f);
            kb_text_wrap(f, "", title, v->width);
            sweep_text_tables(f, s, &g, v->width);
            kb_text_wrap(f, "  ", legend, v->width);
        } else {
            fputs("\n## ", f);
            kb_md_text(f, title);
            fputs("\n\n", f);
            for (size_t c = 0; c < g.nc; c++)
                g.vis[c] = 1;
            grid_rows(f, &g, FMT_MD);
            fputc('\n', f);
            kb_md_text(f, legend);
            fputc('\n', f);
        }
        grid_release(&g);
    }
    kb_sweeps_release(&sw);
    return st;
}

static kb_status write_tables(FILE *f, const run_view *v, kb_err *e)
{
    const kb_run *run = v->run;
    const fmt_kind k = v->k;
    kb_groups g;
    kb_status st = kb_run_groups(run, &g, e);
    if (st != KB_OK)
        return st;
    kb_row *rows = calloc(run->nresults ? run->nresults : 1, sizeof *rows);
    if (!rows) {
        kb_groups_release(&g);
        return kb_fail(e, KB_EENV, "out of memory writing the report");
    }
    header(f, run, k, v->wide ? 0 : v->width);
    if (run->nresults == 0)
        fputs(k == FMT_TEXT ? "\nno results\n" : "\n_no results_\n", f);
    for (size_t i = 0; i < g.n; i++)
        write_group(f, v, g.idx + g.first[i], g.first[i + 1] - g.first[i], rows);
    free(rows);
    kb_groups_release(&g);
    st = write_sweeps(f, v, e);
    if (st != KB_OK)
        return st;
    if (ferror(f))
        return kb_fail(e, KB_EENV, "cannot write the report: %s", strerror(errno));
    return KB_OK;
}

kb_status kb_write_text_laid_out(FILE *f, const kb_run *run, const kb_text_layout *l,
                                 kb_err *e)
{
    const run_view v = {run, FMT_TEXT, l->wide ? 0 : l->width ? l->width : KB_TEXT_WIDTH,
                        l->wide};
    return write_tables(f, &v, e);
}

kb_status kb_write_text(FILE *f, const kb_run *run, kb_err *e)
{
    const kb_text_layout l = {KB_TEXT_WIDTH, 0};
    return kb_write_text_laid_out(f, run, &l, e);
}

kb_status kb_write_markdown(FILE *f, const kb_run *run, kb_err *e)
{
    const run_view v = {run, FMT_MD, 0, 1};
    return write_tables(f, &v, e);
}

/* ---- CSV ------------------------------------------------------------------------ */

/* One cell of kbench's own text (a heading, a number), quoted when needed. */
static void csv_cell(FILE *f, const char *s, int first)
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

/* One cell of untrusted text (from a report or store): made safe for CSV (no
 * control characters, no formula) and quoted when needed. */
static void csv_str(FILE *f, const char *s, int first)
{
    char b[4096 + 8];
    csv_cell(f, kb_safe(KB_SAFE_CSV, s, b, sizeof b), first);
}

static void csv_num(FILE *f, double v)
{
    char b[40];
    kb_fmt_exact(v, b, sizeof b);
    csv_cell(f, b, 0);
}

static void csv_int(FILE *f, long long v)
{
    fprintf(f, ",%lld", v);
}

/* An integer that is unknown (empty) when negative. */
static void csv_known(FILE *f, long long v)
{
    if (v < 0)
        fputc(',', f);
    else
        csv_int(f, v);
}

/* The cells of a row that are figured from a result rather than read from a
 * member. */
typedef struct csv_figured {
    int64_t run_id;
    char cc[24];
    char shape[256];
    char status[16];
    char seed[32];
    int64_t nsamples;
    char flags[96];
} csv_figured;

/* The struct a column's value is a member of. */
typedef enum csv_src { CSV_RUN, CSV_DEV, CSV_RES, CSV_FIG } csv_src;

/* How a column's cell is written. */
typedef enum csv_kind {
    CSV_TEXT,  /* untrusted text (csv_str) */
    CSV_OWN,   /* kbench's own text (csv_cell) */
    CSV_NUM,   /* a double */
    CSV_INT,   /* an int or int64_t (util/member.h) */
    CSV_KNOWN, /* an int or int64_t, empty when negative (unknown) */
} csv_kind;

typedef struct csv_column {
    const char *head;
    size_t off, size; /* the member's offset in its struct and its size */
    csv_src src;
    csv_kind kind;
} csv_column;

#define CSV_MEMBER(type, member) offsetof(type, member), sizeof(((type *)0)->member)
#define RUN(member) CSV_MEMBER(kb_run, member), CSV_RUN
#define DEV(member) CSV_MEMBER(kb_device, member), CSV_DEV
#define RES(member) CSV_MEMBER(kb_result, member), CSV_RES
#define FIG(member) CSV_MEMBER(csv_figured, member), CSV_FIG

/* The CSV report's columns, in order: the header row and every result's row
 * are written from this one table. */
static const csv_column csv_columns[] = {
    {"run_id", FIG(run_id), CSV_INT},
    {"started", RUN(started), CSV_TEXT},
    {"state", RUN(state), CSV_TEXT},
    {"tag", RUN(tag), CSV_TEXT},
    {"device", DEV(name), CSV_TEXT},
    {"device_uuid", DEV(uuid), CSV_TEXT},
    {"cc", FIG(cc), CSV_OWN},
    {"copy_gbps", DEV(copy_gbps), CSV_NUM},
    {"op", RES(op), CSV_TEXT},
    {"variant", RES(variant), CSV_TEXT},
    {"dtype", RES(dtype), CSV_TEXT},
    {"shape", FIG(shape), CSV_TEXT},
    {"status", FIG(status), CSV_OWN},
    {"reason", RES(reason), CSV_TEXT},
    {"seed", FIG(seed), CSV_OWN},
    {"checked", RES(checked), CSV_INT},
    {"max_abs_err", RES(max_abs_err), CSV_NUM},
    {"rel_l2_err", RES(rel_l2_err), CSV_NUM},
    {"atol", RES(atol), CSV_NUM},
    {"rtol", RES(rtol), CSV_NUM},
    {"rows_checked", RES(rows_checked), CSV_INT},
    {"median_us", RES(median_us), CSV_NUM},
    {"min_us", RES(min_us), CSV_NUM},
    {"max_us", RES(max_us), CSV_NUM},
    {"stdrel", RES(stdrel), CSV_NUM},
    {"nsamples", FIG(nsamples), CSV_INT},
    {"sm_clock_mhz", RES(sm_clock_mhz), CSV_NUM},
    {"throttled", RES(throttled), CSV_INT},
    {"bytes", RES(bytes), CSV_NUM},
    {"flops", RES(flops), CSV_NUM},
    {"gbps", RES(gbps), CSV_NUM},
    {"tflops", RES(tflops), CSV_NUM},
    {"pct_peak", RES(pct_peak), CSV_NUM},
    {"speedup_vs_naive", RES(speedup), CSV_NUM},
    {"kernels", RES(nkernels), CSV_INT},
    {"metric_set", RES(metric_set), CSV_TEXT},
    {"passes", RES(passes), CSV_INT},
    {"counters_reason", RES(counters_reason), CSV_TEXT},
    {"dram_bytes", RES(dram_bytes), CSV_NUM},
    {"dram_gbps", RES(dram_gbps), CSV_NUM},
    {"excess_traffic", RES(excess_traffic), CSV_NUM},
    {"achieved_occupancy", RES(achieved_occupancy), CSV_NUM},
    {"theoretical_occupancy", RES(theoretical_occupancy), CSV_NUM},
    {"registers", RES(registers), CSV_KNOWN},
    {"local_bytes", RES(local_bytes), CSV_KNOWN},
    {"top_stalls", RES(top_stalls), CSV_TEXT},
    {"mma_tflops", DEV(mma_tflops), CSV_NUM},
    {"fp32_tflops", DEV(fp32_tflops), CSV_NUM},
    {"bound", RES(bound), CSV_TEXT},
    {"extra_bytes", RES(extra_bytes), CSV_NUM},
    {"batch_us", RES(batch_us), CSV_NUM},
    {"batch_stdrel", RES(batch_stdrel), CSV_NUM},
    {"batch_launches", RES(batch_launches), CSV_INT},
    {"batch_sm_clock_mhz", RES(batch_sm_clock_mhz), CSV_NUM},
    {"gbps_batch", RES(gbps_batch), CSV_NUM},
    {"tflops_batch", RES(tflops_batch), CSV_NUM},
    {"pct_peak_batch", RES(pct_peak_batch), CSV_NUM},
    {"speedup_batch_vs_naive", RES(speedup_batch), CSV_NUM},
    {"flags", FIG(flags), CSV_TEXT},
    {"throttle_reason", RES(throttle_reason), CSV_TEXT},
    {"copy_batch_gbps", DEV(copy_batch_gbps), CSV_NUM},
};

/* The cell of column c, its member at m; first: the row's first cell. */
static void csv_column_cell(FILE *f, const csv_column *c, const void *m, int first)
{
    switch (c->kind) {
    case CSV_TEXT:
        csv_str(f, m, first);
        break;
    case CSV_OWN:
        csv_cell(f, m, first);
        break;
    case CSV_NUM:
        csv_num(f, *(const double *)m);
        break;
    case CSV_INT:
        if (first)
            fprintf(f, "%lld", (long long)kb_int_member(m, c->size));
        else
            csv_int(f, kb_int_member(m, c->size));
        break;
    default: /* CSV_KNOWN */
        csv_known(f, kb_int_member(m, c->size));
        break;
    }
}

kb_status kb_write_csv(FILE *f, const kb_run *run, kb_err *e)
{
    csv_figured fig = {.run_id = run->id};
    for (size_t c = 0; c < KB_COUNT(csv_columns); c++)
        csv_cell(f, csv_columns[c].head, c == 0);
    fputs("\r\n", f);
    snprintf(fig.cc, sizeof fig.cc, "%d.%d", run->dev.cc_major, run->dev.cc_minor);
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        const void *base[] = {[CSV_RUN] = run, [CSV_DEV] = &run->dev, [CSV_RES] = r,
                              [CSV_FIG] = &fig};
        kb_result_shape_str(r, ",", fig.shape, sizeof fig.shape);
        kb_strlcpy(fig.status, kb_rstatus_name(r->status), sizeof fig.status);
        snprintf(fig.seed, sizeof fig.seed, "%llu", (unsigned long long)r->seed);
        fig.nsamples = (int64_t)r->nsamples;
        kb_flags_str(r->flags, fig.flags, sizeof fig.flags);
        for (size_t c = 0; c < KB_COUNT(csv_columns); c++) {
            const csv_column *col = &csv_columns[c];
            csv_column_cell(f, col, (const char *)base[col->src] + col->off, c == 0);
        }
        fputs("\r\n", f);
    }
    if (ferror(f))
        return kb_fail(e, KB_EENV, "cannot write the report: %s", strerror(errno));
    return KB_OK;
}

/* ---- kernels -------------------------------------------------------------------- */

/* A metric value: an integer as one, else six significant digits; "-" unknown. */
static void fmt_value(double v, char *b, size_t n)
{
    if (!isfinite(v))
        snprintf(b, n, "-");
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(b, n, "%.0f", v);
    else
        snprintf(b, n, "%.6g", v);
}

/* A metric's value in its unit: "61.44 µs", "16.5 MB", "0 B", "71.8%", or the
 * number. */
static void fmt_metric(const kb_metric_info *m, double v, char *b, size_t n)
{
    if (!isfinite(v)) {
        snprintf(b, n, "-");
        return;
    }
    switch (m->unit) {
    case KB_UNIT_NS:
        kb_fmt_time(v / 1000.0, b, n);
        break;
    case KB_UNIT_BYTES:
        if (v == 0)
            snprintf(b, n, "0 B");
        else
            kb_fmt_bytes(v, b, n);
        break;
    case KB_UNIT_PCT:
        kb_fmt_fixed(v, 1, "", "%", b, n);
        break;
    default:
        fmt_value(v, b, n);
    }
}

/* "4096x1x1" */
static void fmt_dim3(const unsigned v[3], char *b, size_t n)
{
    snprintf(b, n, "%ux%ux%u", v[0], v[1], v[2]);
}

static int longest_name(const kb_named_value *v, int n)
{
    size_t w = 0;
    for (int i = 0; i < n; i++)
        if (kb_text_width(v[i].name) > w)
            w = kb_text_width(v[i].name);
    return (int)w;
}

/* The result's title: "softmax · fp32 · rows=4096, cols=1024 · naive". */
static void result_title(const kb_result *r, char *b, size_t n)
{
    char c[384];
    kb_fmt_case_title(r, c, sizeof c);
    snprintf(b, n, "%s \xC2\xB7 %s", c, r->variant);
}

/* What the counter pass of r gave: "core, 1 pass", "none (REASON)" or "none". */
static void counters_line(FILE *f, const kb_result *r, fmt_kind k)
{
    if (kb_result_has_counters(r))
    {
        put_text(f, r->metric_set, k);
        fprintf(f, ", %d pass%s", r->passes, r->passes == 1 ? "" : "es");
    }
    else
        fputs("none", f);
    if (*r->counters_reason) {
        fputs(" (", f);
        put_text(f, r->counters_reason, k);
        fputc(')', f);
    }
    fputc('\n', f);
}

/* "no kernels recorded (REASON)" for a result without kernels. */
static void no_kernels(FILE *f, const kb_result *r, fmt_kind k)
{
    fputs(k == FMT_TEXT ? "  no kernels recorded" : "- no kernels recorded", f);
    if (*r->reason) {
        fputs(" (", f);
        put_text(f, r->reason, k);
        fputc(')', f);
    }
    fputc('\n', f);
}

static void kernel_text(FILE *f, const kb_kernel *k, int i, int n)
{
    char g[48], bl[48], v[40], name[256];
    fmt_dim3(k->grid, g, sizeof g);
    fmt_dim3(k->block, bl, sizeof bl);
    char lead[48], safe_name[1024];
    snprintf(lead, sizeof lead, "  kernel %d of %d: ", i + 1, n);
    kb_text_wrap(f, lead, kb_safe(KB_SAFE_TERM, k->name, safe_name, sizeof safe_name),
                 KB_TEXT_WIDTH);
    fprintf(f, "    launch      grid %s, block %s\n", g, bl);
    fprintf(f, "    registers   %d per thread\n", k->registers);
    fprintf(f, "    shared mem  %lld B static + %lld B dynamic per block\n",
            (long long)k->static_smem, (long long)k->dynamic_smem);
    fprintf(f, "    local mem   %lld B per thread%s\n", (long long)k->local_bytes,
            k->local_bytes > 0 ? " (spills, stack)" : "");
    kb_fmt_fixed(100.0 * k->occupancy, 1, "", "%", v, sizeof v);
    fprintf(f, "    occupancy   %s theoretical, %d blocks per SM", v, k->blocks_per_sm);
    if (*k->occ_limiter) {
        fputs(", limited by ", f);
        kb_text_line(f, k->occ_limiter);
    }
    fputc('\n', f);
    int nm = kb_kernel_nmetrics(k), ns = kb_kernel_nstalls(k);
    if (nm > 0) {
        /* label, value in its unit, and the CUPTI name */
        int w = 0;
        for (int j = 0; j < nm; j++) {
            const int lw = (int)kb_text_width(kb_metric_info_of(k->metrics[j].name).label);
            w = lw > w && lw <= MAX_LABEL ? lw : w;
        }
        fputs("    metrics\n", f);
        for (int j = 0; j < nm; j++) {
            const kb_metric_info m = kb_metric_info_of(k->metrics[j].name);
            char label[256];
            fmt_metric(&m, k->metrics[j].value, v, sizeof v);
            kb_safe(KB_SAFE_TERM, k->metrics[j].name, name, sizeof name);
            kb_safe(KB_SAFE_TERM, m.label, label, sizeof label);
            const size_t vw = kb_text_width(v);
            fprintf(f, "      %-*s  %*s%s", w, label, vw < VALUE_W ? (int)(VALUE_W - vw) : 0, "",
                    v);
            if (m.label != k->metrics[j].name) /* a known metric: the CUPTI name beside */
                fprintf(f, "  %s", name);
            fputc('\n', f);
        }
    }
    if (ns > 0) {
        int w = longest_name(k->stalls, ns);
        fputs("    stalls (share of stalled warp cycles, largest first)\n", f);
        for (int j = 0; j < ns; j++) {
            kb_fmt_fixed(100.0 * k->stalls[j].value, 1, "", "%", v, sizeof v);
            kb_safe(KB_SAFE_TERM, k->stalls[j].name, name, sizeof name);
            fprintf(f, "      %-*s  %6s\n", w, name, v);
        }
    }
}

/* A table of name -> value (or % share) of one kernel, under a bold caption. */
static void md_values(FILE *f, const char *caption, const char *head, const kb_named_value *v,
                      int n, int pct)
{
    char b[40];
    if (pct)
        fprintf(f, "\n%s\n\n| %s | share |\n|---|---:|\n", caption, head);
    else
        fprintf(f, "\n%s\n\n| %s | value | CUPTI name |\n|---|---:|---|\n", caption, head);
    for (int j = 0; j < n; j++) {
        const kb_metric_info m = kb_metric_info_of(v[j].name);
        if (pct)
            kb_fmt_fixed(100.0 * v[j].value, 1, "", "%", b, sizeof b);
        else
            fmt_metric(&m, v[j].value, b, sizeof b);
        fputs("| ", f);
        kb_md_text(f, pct ? v[j].name : m.label);
        fprintf(f, " | %s |", b);
        if (!pct) {
            fputc(' ', f);
            kb_md_text(f, v[j].name);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}

/* The kernels of a result (at least one) in markdown: a table of their
 * launches and resources, then each kernel's metrics and stalls. */
static void kernels_markdown(FILE *f, const kb_result *r)
{
    char g[48], bl[48], occ[40], cap[96];
    fputs("\n| # | kernel | grid | block | regs | static smem | dynamic smem | local "
          "| occupancy | limiter |\n|---:|---|---|---|---:|---:|---:|---:|---:|---|\n",
          f);
    for (int j = 0; j < r->nkernels; j++) {
        const kb_kernel *k = &r->kernels[j];
        fmt_dim3(k->grid, g, sizeof g);
        fmt_dim3(k->block, bl, sizeof bl);
        kb_fmt_fixed(100.0 * k->occupancy, 1, "", "%", occ, sizeof occ);
        fprintf(f, "| %d | ", j + 1);
        kb_md_text(f, k->name);
        fprintf(f, " | %s | %s | %d | %lld B | %lld B | %lld B | %s | ", g, bl, k->registers,
                (long long)k->static_smem, (long long)k->dynamic_smem,
                (long long)k->local_bytes, occ);
        kb_md_text(f, *k->occ_limiter ? k->occ_limiter : "-");
        fputs(" |\n", f);
    }
    for (int j = 0; j < r->nkernels; j++) {
        const kb_kernel *k = &r->kernels[j];
        if (kb_kernel_nmetrics(k) > 0) {
            snprintf(cap, sizeof cap, "**kernel %d metrics**", j + 1);
            md_values(f, cap, "metric", k->metrics, kb_kernel_nmetrics(k), 0);
        }
        if (kb_kernel_nstalls(k) > 0) {
            snprintf(cap, sizeof cap,
                     "**kernel %d stalls** (share of stalled warp cycles, largest first)", j + 1);
            md_values(f, cap, "reason", k->stalls, kb_kernel_nstalls(k), 1);
        }
    }
}

/* The kernels report in format k: per result its title, status and counters
 * line, then its kernels or why there are none. */
static kb_status write_kernels(FILE *f, const kb_run *run, fmt_kind k, kb_err *e)
{
    char title[512];
    header(f, run, k, k == FMT_TEXT ? KB_TEXT_WIDTH : 0);
    if (run->nresults == 0)
        fputs(k == FMT_TEXT ? "\nno results\n" : "\n_no results_\n", f);
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        result_title(r, title, sizeof title);
        fputs(k == FMT_TEXT ? "\n" : "\n## ", f);
        put_text(f, title, k);
        fprintf(f, k == FMT_TEXT ? "  [%s]\n  counters    " : " (%s)\n\n- **counters**: ",
                kb_rstatus_name(r->status));
        counters_line(f, r, k);
        if (r->nkernels <= 0)
            no_kernels(f, r, k);
        else if (k == FMT_MD)
            kernels_markdown(f, r);
        for (int j = 0; k == FMT_TEXT && j < r->nkernels; j++)
            kernel_text(f, &r->kernels[j], j, r->nkernels);
    }
    if (ferror(f))
        return kb_fail(e, KB_EENV, "cannot write the report: %s", strerror(errno));
    return KB_OK;
}

kb_status kb_write_kernels_text(FILE *f, const kb_run *run, kb_err *e)
{
    return write_kernels(f, run, FMT_TEXT, e);
}

kb_status kb_write_kernels_markdown(FILE *f, const kb_run *run, kb_err *e)
{
    return write_kernels(f, run, FMT_MD, e);
}

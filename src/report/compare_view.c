/* compare_view.c - the text, markdown and JSON views of a comparison
 * (compare_view.h). They read the kb_compare and compute nothing of their own. */
#include "report/compare_view.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "report/format.h"
#include "util/text.h"

/* The verdicts as JSON writes them (no spaces). */
static const char *const verdict_keys[KB_V_COUNT] = {
    "FASTER", "SLOWER", "SAME", "UNCERTAIN", "ONLY_IN_BASE", "ONLY_IN_NEW",
};

/* ---- shared pieces ------------------------------------------------------------------ */

void kb_compare_cross_gpu_note(FILE *f, const kb_compare *c, void (*text)(FILE *, const char *))
{
    fputs("BASE ran on ", f);
    text(f, c->base->dev.name);
    fputs(", NEW on ", f);
    text(f, c->cur->dev.name);
    fputs(". " KB_CROSS_GPU_WHY, f);
}

void kb_compare_headline(const kb_compare *c, char *b, size_t n)
{
    snprintf(b, n, "%zu faster, %zu slower, %zu same, %zu uncertain, %zu only in BASE, %zu only "
             "in NEW",
             c->count[KB_V_FASTER], c->count[KB_V_SLOWER], c->count[KB_V_SAME],
             c->count[KB_V_UNCERTAIN], c->count[KB_V_ONLY_BASE], c->count[KB_V_ONLY_NEW]);
}

/* The rule in one sentence. */
static void rule(const kb_compare *c, char *b, size_t n)
{
    double t = c->threshold;
    snprintf(b, n,
             "%s; %.0f%% bootstrap interval (%d resamples of the samples); FASTER when it lies "
             "below %.3g, SLOWER above %.3g, SAME within [%.3g, %.3g], else UNCERTAIN (also "
             "when a side is not ok or has fewer than %d samples)",
             c->cross_gpu ? "ratio = % peak BASE / % peak NEW (each of its own GPU's ceiling)"
                          : "ratio = median time NEW / BASE",
             100.0 * KB_CMP_CONFIDENCE, KB_CMP_RESAMPLES, 1.0 - t, 1.0 + t, 1.0 - t, 1.0 + t,
             KB_CMP_MIN_SAMPLES);
}

/* Columns of a comparison table; the two % peak columns only across GPUs. */
enum ccol { K_VARIANT, K_BASE, K_NEW, K_BPCT, K_NPCT, K_RATIO, K_CI, K_VERDICT, K_MOVED, NK };
enum { KCELL = 288 };
/* The fewest columns "what moved" is shown in; narrower, it is left out. */
enum { MIN_MOVED = 16 };

static const struct {
    const char *head;
    int right;
    int cross; /* shown only across GPUs */
} kcols[NK] = {
    {"variant", 0, 0}, {"BASE", 1, 0},    {"NEW", 1, 0},      {"BASE % peak", 1, 1},
    {"NEW % peak", 1, 1}, {"ratio", 1, 0}, {"95% interval", 0, 0}, {"verdict", 0, 0},
    {"what moved", 0, 0},
};

typedef struct krow {
    char c[NK][KCELL];
} krow;

/* Hex digits of a source's SHA-256 the variant cell shows. */
#define SHORT_SHA 8

/* The variant cell: its name, and for a variant file the source each side
 * ran, by short hash: "mine · src 1a2b3c4d→5e6f7a8b" ("-" for a side without
 * it), one hash when both ran the same source. */
static void variant_cell(const kb_cmp_case *k, const kb_result *r, char *b, size_t n)
{
    const char *bs = k->base ? k->base->source_sha256 : "";
    const char *ns = k->cur ? k->cur->source_sha256 : "";
    char v[256], sb[80], sn[80]; /* from the reports: made safe for a terminal */
    kb_safe(KB_SAFE_TERM, r->variant, v, sizeof v);
    kb_safe(KB_SAFE_TERM, bs, sb, sizeof sb);
    kb_safe(KB_SAFE_TERM, ns, sn, sizeof sn);
    if (!bs[0] && !ns[0])
        snprintf(b, n, "%s", v);
    else if (!strcmp(bs, ns) || !k->base || !k->cur)
        snprintf(b, n, "%s · src %.*s", v, SHORT_SHA, sb[0] ? sb : sn);
    else
        snprintf(b, n, "%s · src %.*s→%.*s", v, SHORT_SHA, sb[0] ? sb : "-", SHORT_SHA,
                 sn[0] ? sn : "-");
}

static void fill_krow(const kb_compare *c, const kb_cmp_case *k, krow *w)
{
    const kb_result *r = kb_cmp_case_result(k);
    variant_cell(k, r, w->c[K_VARIANT], KCELL);
    if (k->base)
        kb_fmt_time(k->base->median_us, w->c[K_BASE], KCELL);
    else
        snprintf(w->c[K_BASE], KCELL, "-");
    if (k->cur)
        kb_fmt_time(k->cur->median_us, w->c[K_NEW], KCELL);
    else
        snprintf(w->c[K_NEW], KCELL, "-");
    kb_fmt_fixed(k->base ? k->base->pct_peak : NAN, 1, "", "%", w->c[K_BPCT], KCELL);
    kb_fmt_fixed(k->cur ? k->cur->pct_peak : NAN, 1, "", "%", w->c[K_NPCT], KCELL);
    kb_fmt_fixed(c->cross_gpu ? k->ratio : k->time_ratio, 3, "", "x", w->c[K_RATIO], KCELL);
    if (isfinite(k->lo) && isfinite(k->hi))
        snprintf(w->c[K_CI], KCELL, "[%.3f, %.3f]", k->lo, k->hi);
    else
        snprintf(w->c[K_CI], KCELL, "-");
    kb_strlcpy(w->c[K_VERDICT], kb_verdict_name(k->verdict), KCELL);
    kb_strlcpy(w->c[K_MOVED], k->moved, KCELL);
}

typedef enum kfmt { KF_TEXT, KF_MD } kfmt;

static void table(FILE *f, const kb_compare *c, const krow *rows, size_t n, kfmt k,
                  size_t width)
{
    int vis[NK], right[NK], any_moved = 0;
    size_t wcol[NK];
    const char *head[NK], *cell[NK];
    for (int j = 0; j < NK; j++) {
        head[j] = j == K_RATIO ? (c->cross_gpu ? "peak ratio" : "NEW/BASE") : kcols[j].head;
        vis[j] = !kcols[j].cross || c->cross_gpu;
        right[j] = kcols[j].right;
        wcol[j] = kb_text_width(head[j]);
        for (size_t i = 0; i < n; i++)
            if (kb_text_width(rows[i].c[j]) > wcol[j])
                wcol[j] = kb_text_width(rows[i].c[j]);
    }
    for (size_t i = 0; i < n; i++)
        any_moved |= rows[i].c[K_MOVED][0] != '\0';
    vis[K_MOVED] = any_moved || k == KF_MD;
    if (k == KF_TEXT && width > 0) {
        /* within width: "what moved" gets what the other columns leave, in
         * bytes (never fewer than display columns: a UTF-8 "µ" is two), so a
         * row fits however a reader counts it */
        size_t used = 0, extra = 0;
        for (int j = 0; j < K_MOVED; j++)
            used += vis[j] ? wcol[j] + 2 : 0;
        for (size_t i = 0; i < n; i++) {
            size_t e = 0;
            for (int j = 0; j < K_MOVED; j++)
                e += vis[j] ? strlen(rows[i].c[j]) - kb_text_width(rows[i].c[j]) : 0;
            extra = e > extra ? e : extra;
        }
        used += extra;
        const size_t room = width > used ? width - used : 0;
        if (room < MIN_MOVED)
            vis[K_MOVED] = 0;
        else if (wcol[K_MOVED] > room)
            wcol[K_MOVED] = room;
    }
    for (size_t i = 0; i <= n; i++) {
        char cut[KCELL];
        for (int j = 0; j < NK; j++)
            cell[j] = i == 0 ? head[j] : rows[i - 1].c[j];
        if (k == KF_TEXT) {
            const size_t moved = width > 0 ? strlen(cell[K_MOVED]) : kb_text_width(cell[K_MOVED]);
            if (vis[K_MOVED] && moved > wcol[K_MOVED]) {
                kb_text_shorten(cell[K_MOVED], wcol[K_MOVED], cut, sizeof cut);
                cell[K_MOVED] = cut;
            }
            kb_table_text_row(f, cell, wcol, right, vis, NK);
            continue;
        }
        kb_table_md_row(f, cell, vis, NK);
        if (i == 0)
            kb_table_md_rule(f, right, vis, NK);
    }
}

/* The source line of one side: "results/h200/softmax.json · NVIDIA H200
 * (GPU-…) · git abc · 2025-06-01T10:00:00Z · tag h200 · env KBENCH_X=1"
 * (the tag and the switches where the run has them). */
static void side(FILE *f, const char *lead, const char *name, const kb_run *r, kfmt k,
                 size_t width)
{
    if (k == KF_MD) {
        kb_md_text(f, name);
        fputs(" \xC2\xB7 ", f);
        kb_md_text(f, r->dev.name);
        fputs(" (", f);
        kb_md_text(f, r->dev.uuid);
        fputs(") \xC2\xB7 git ", f);
        kb_md_text(f, r->git);
        fputs(" \xC2\xB7 ", f);
        kb_md_text(f, r->started);
        if (*r->tag) {
            fputs(" \xC2\xB7 tag ", f);
            kb_md_text(f, r->tag);
        }
        if (*r->env) {
            fputs(" \xC2\xB7 env ", f);
            kb_md_text(f, r->env);
        }
        return;
    }
    char b[2048], safe[4096];
    kb_compare_side_line(name, r, b, sizeof b);
    kb_text_wrap(f, lead, kb_safe(KB_SAFE_TERM, b, safe, sizeof safe), width);
}

void kb_compare_side_line(const char *name, const kb_run *r, char *b, size_t n)
{
    snprintf(b, n, "%s \xC2\xB7 %s (%s) \xC2\xB7 git %s \xC2\xB7 %s%s%s%s%s", name, r->dev.name,
             r->dev.uuid, r->git, r->started, *r->tag ? " \xC2\xB7 tag " : "", r->tag,
             *r->env ? " \xC2\xB7 env " : "", r->env);
}

/* The sources, the rule, the cross-GPU warning and the headline. */
static void view_header(FILE *f, const kb_compare *c, kfmt k, size_t width)
{
    char headline[512], line[512];
    kb_compare_headline(c, headline, sizeof headline);
    if (k == KF_MD) {
        fprintf(f, "## kbench compare: %s\n\n- **BASE**: ", headline);
        side(f, "", c->base_name, c->base, k, width);
        fputs("\n- **NEW**: ", f);
        side(f, "", c->new_name, c->cur, k, width);
        rule(c, line, sizeof line);
        fprintf(f, "\n- **rule**: %s\n", line);
    } else {
        fputs("kbench compare\n", f);
        side(f, "BASE  ", c->base_name, c->base, k, width);
        side(f, "NEW   ", c->new_name, c->cur, k, width);
        rule(c, line, sizeof line);
        kb_text_wrap(f, "rule  ", line, width);
    }
    if (c->cross_gpu) {
        if (k == KF_MD) {
            fputs("\n> **Different GPUs**: ", f);
            kb_compare_cross_gpu_note(f, c, kb_md_text);
            fputc('\n', f);
        } else {
            fputs("!! different GPUs: BASE ran on ", f);
            kb_text_line(f, c->base->dev.name);
            fputs(", NEW on ", f);
            kb_text_line(f, c->cur->dev.name);
            fputs(" !!\n", f);
            kb_text_wrap(f, "!! ",
                         "verdicts compare the share of each GPU's own calibrated ceiling "
                         "(% peak), not raw time, so a change of GPU is not reported as a code "
                         "regression !!",
                         width);
        }
    }
    if (k == KF_TEXT)
        fprintf(f, "%zu cases: %s\n", c->ncases, headline);
}

/* One case group: its heading, its table, and why each UNCERTAIN case is so.
 * rows holds m rows. */
static void view_group(FILE *f, const kb_compare *c, const size_t *idx, size_t m, kfmt k,
                       krow *rows, size_t width)
{
    char title[384];
    kb_fmt_case_title(kb_cmp_case_result(&c->cases[idx[0]]), title, sizeof title);
    fputs(k == KF_TEXT ? "\n" : "\n### ", f);
    (k == KF_TEXT ? kb_text_line : kb_md_text)(f, title);
    fputs(k == KF_TEXT ? "\n" : "\n\n", f);
    for (size_t j = 0; j < m; j++)
        fill_krow(c, &c->cases[idx[j]], &rows[j]);
    table(f, c, rows, m, k, width);
    int any = 0;
    for (size_t j = 0; j < m; j++) {
        const kb_cmp_case *q = &c->cases[idx[j]];
        if (!*q->why)
            continue;
        if (k == KF_MD) {
            fputs(any++ ? "- **" : "\n- **", f);
            kb_md_text(f, kb_cmp_case_result(q)->variant);
            fputs("**: UNCERTAIN: ", f);
            kb_md_text(f, q->why);
            fputc('\n', f);
        } else {
            char v[256], why[1024], line[1400];
            kb_safe(KB_SAFE_TERM, kb_cmp_case_result(q)->variant, v, sizeof v);
            kb_safe(KB_SAFE_TERM, q->why, why, sizeof why);
            snprintf(line, sizeof line, "%s: UNCERTAIN: %s", v, why);
            kb_text_wrap(f, "  ", line, width);
        }
    }
}

static kb_status write_view(FILE *f, const kb_compare *c, kfmt k, size_t width, kb_err *e)
{
    kb_groups g;
    kb_status st = kb_compare_groups(c, &g, e);
    if (st != KB_OK)
        return st;
    krow *rows = calloc(c->ncases ? c->ncases : 1, sizeof *rows);
    if (!rows) {
        kb_groups_release(&g);
        return kb_fail(e, KB_EENV, "out of memory writing the comparison");
    }
    view_header(f, c, k, width);
    for (size_t i = 0; i < g.n; i++)
        view_group(f, c, g.idx + g.first[i], g.first[i + 1] - g.first[i], k, rows, width);
    free(rows);
    kb_groups_release(&g);
    if (ferror(f))
        return kb_fail(e, KB_EENV, "cannot write the comparison: %s", strerror(errno));
    return KB_OK;
}

kb_status kb_compare_write_text(FILE *f, const kb_compare *c, kb_err *e)
{
    return write_view(f, c, KF_TEXT, KB_TEXT_WIDTH, e);
}

kb_status kb_compare_write_text_laid_out(FILE *f, const kb_compare *c, const kb_text_layout *l,
                                         kb_err *e)
{
    return write_view(f, c, KF_TEXT, l->wide ? 0 : l->width ? l->width : KB_TEXT_WIDTH, e);
}

kb_status kb_compare_write_markdown(FILE *f, const kb_compare *c, kb_err *e)
{
    return write_view(f, c, KF_MD, 0, e);
}

/* ---- JSON ---------------------------------------------------------------------- */

/* Adds it under key, freeing it when that fails. Returns 1 on success. */
static int jput(cJSON *o, const char *key, cJSON *it)
{
    if (it && cJSON_AddItemToObject(o, key, it))
        return 1;
    cJSON_Delete(it); /* NULL is a no-op */
    return 0;
}

/* A number, or null when it is not finite. */
static int jnum(cJSON *o, const char *key, double v)
{
    return jput(o, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

/* An integer that is unknown (null) when negative. */
static int jint(cJSON *o, const char *key, long long v)
{
    return jnum(o, key, v < 0 ? NAN : (double)v);
}

static int jstr(cJSON *o, const char *key, const char *s)
{
    return cJSON_AddStringToObject(o, key, s) != NULL;
}

/* The source object of one side. */
static cJSON *side_json(const char *name, const kb_run *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !jstr(o, "source", name) || !jstr(o, "device", r->dev.name) ||
        !jstr(o, "uuid", r->dev.uuid) || !jstr(o, "git", r->git) ||
        !jstr(o, "started", r->started) || !jstr(o, "tag", r->tag) || !jstr(o, "env", r->env) ||
        !jnum(o, "copy_gbps", r->dev.copy_gbps) || !jnum(o, "mma_tflops", r->dev.mma_tflops) ||
        !jnum(o, "fp32_tflops", r->dev.fp32_tflops)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* One side of a case: its figures, or null when the case is not on that side. */
static cJSON *result_json(const kb_result *r, size_t nfinite, double median)
{
    if (!r)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o || !jstr(o, "status", kb_rstatus_name(r->status)) ||
        !jnum(o, "median_us", median) || !jint(o, "samples", (long long)nfinite) ||
        !jnum(o, "pct_peak", r->pct_peak) || !jstr(o, "bound", r->bound) ||
        !jnum(o, "dram_bytes", r->dram_bytes) ||
        !jnum(o, "achieved_occupancy", r->achieved_occupancy) ||
        !jint(o, "registers", r->registers) || !jint(o, "local_bytes", r->local_bytes) ||
        !jstr(o, "top_stalls", r->top_stalls)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The shape of r: axis name -> integer, in axis order. */
static cJSON *shape_json(const kb_result *r)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < r->naxes; i++)
        if (!jnum(o, r->axis[i], (double)r->shape[i])) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}

static cJSON *case_json(const kb_cmp_case *k)
{
    const kb_result *r = kb_cmp_case_result(k);
    size_t bn = k->base_n, nn = k->new_n;
    double bm = k->base_median, nm = k->new_median;
    if (k->base && !k->cur) { /* not judged: its own figures */
        bm = k->base->median_us;
        bn = k->base->nsamples;
    }
    if (k->cur && !k->base) {
        nm = k->cur->median_us;
        nn = k->cur->nsamples;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o || !jstr(o, "op", r->op) || !jstr(o, "variant", r->variant) ||
        !jstr(o, "dtype", r->dtype) || !jput(o, "shape", shape_json(r)) ||
        !jstr(o, "verdict", verdict_keys[k->verdict]) || !jstr(o, "why", k->why) ||
        !jput(o, "base", result_json(k->base, bn, bm)) ||
        !jput(o, "new", result_json(k->cur, nn, nm)) || !jnum(o, "time_ratio", k->time_ratio) ||
        !jnum(o, "ratio", k->ratio) || !jnum(o, "ci_low", k->lo) || !jnum(o, "ci_high", k->hi) ||
        !jnum(o, "dram_ratio", k->dram_ratio) || !jnum(o, "occupancy_delta", k->occ_delta) ||
        !jstr(o, "moved", k->moved)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

kb_status kb_compare_write_json(FILE *f, const kb_compare *c, kb_err *e)
{
    kb_status st = KB_OK;
    cJSON *root = cJSON_CreateObject(), *sum, *cases;
    char *text = NULL;
    if (!root || !jint(root, "compare_version", 1) || !jnum(root, "threshold", c->threshold) ||
        !jnum(root, "confidence", KB_CMP_CONFIDENCE) ||
        !jint(root, "resamples", KB_CMP_RESAMPLES) ||
        !jint(root, "min_samples", KB_CMP_MIN_SAMPLES) ||
        !jstr(root, "mode", c->cross_gpu ? "cross-gpu" : "same-gpu") ||
        !jstr(root, "ratio", c->cross_gpu ? "pct_peak BASE / NEW" : "median time NEW / BASE") ||
        !jput(root, "base", side_json(c->base_name, c->base)) ||
        !jput(root, "new", side_json(c->new_name, c->cur)) ||
        !(sum = cJSON_AddObjectToObject(root, "summary")) ||
        !jint(sum, "faster", (long long)c->count[KB_V_FASTER]) ||
        !jint(sum, "slower", (long long)c->count[KB_V_SLOWER]) ||
        !jint(sum, "same", (long long)c->count[KB_V_SAME]) ||
        !jint(sum, "uncertain", (long long)c->count[KB_V_UNCERTAIN]) ||
        !jint(sum, "only_in_base", (long long)c->count[KB_V_ONLY_BASE]) ||
        !jint(sum, "only_in_new", (long long)c->count[KB_V_ONLY_NEW]) ||
        !cJSON_AddBoolToObject(root, "regressed", kb_compare_regressed(c)) ||
        !(cases = cJSON_AddArrayToObject(root, "cases")))
        goto oom;
    for (size_t i = 0; i < c->ncases; i++) {
        cJSON *it = case_json(&c->cases[i]);
        if (!it)
            goto oom;
        if (!cJSON_AddItemToArray(cases, it)) {
            cJSON_Delete(it);
            goto oom;
        }
    }
    text = cJSON_Print(root);
    if (!text)
        goto oom;
    if (fputs(text, f) == EOF || fputc('\n', f) == EOF || ferror(f))
        st = kb_fail(e, KB_EENV, "cannot write the comparison: %s", strerror(errno));
    goto done;
oom:
    st = kb_fail(e, KB_EENV, "out of memory building the comparison");
done:
    cJSON_free(text);
    cJSON_Delete(root);
    return st;
}

/* sweep.c - the shape sweeps of a run (sweep.h): which case groups form a
 * sweep, and the figures of its table and chart (each variant's throughput
 * at each point, the fastest, its share of the ceiling). */
#include "results/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the search works on: the run, its case groups, the group of each
 * result, and which groups already belong to a sweep. */
typedef struct finder {
    const kb_run *run;
    const kb_groups *g;
    size_t *group_of; /* [result]: its case group */
    char *taken;      /* [group]: 1 once in a sweep */
    size_t *members;  /* scratch: the groups of a candidate sweep */
} finder;

/* The first result of case group k: its operator, dtype and shape. */
static const kb_result *rep(const finder *fd, size_t k)
{
    return &fd->run->results[fd->g->idx[fd->g->first[k]]];
}

/* Whether a and b have the same operator, dtype and axes (names, in order). */
static int same_axes(const kb_result *a, const kb_result *b)
{
    if (strcmp(a->op, b->op) != 0 || strcmp(a->dtype, b->dtype) != 0 || a->naxes != b->naxes)
        return 0;
    for (int i = 0; i < a->naxes; i++)
        if (strcmp(a->axis[i], b->axis[i]) != 0)
            return 0;
    return 1;
}

/* Whether a and b hold the same value on every axis but ax and p (-1: none). */
static int same_but(const kb_result *a, const kb_result *b, int ax, int p)
{
    for (int i = 0; i < a->naxes; i++)
        if (i != ax && i != p && a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

/* The product of axes ax and p of r (as a double: no overflow). */
static double size_of(const kb_result *r, int ax, int p)
{
    return (double)r->shape[ax] * (double)r->shape[p];
}

/* The groups that make a sweep over axis ax with group k0, the size kept by
 * axis p (-1: every other axis fixed), into fd->members in run order: each
 * not yet in a sweep, with k0's axes, a value of ax no earlier member has.
 * Returns how many. */
static size_t gather(const finder *fd, size_t k0, int ax, int p)
{
    const kb_result *r0 = rep(fd, k0);
    size_t m = 0;
    for (size_t k = 0; k < fd->g->n; k++) {
        const kb_result *r = rep(fd, k);
        if (fd->taken[k] || !same_axes(r0, r) || !same_but(r0, r, ax, p))
            continue;
        if (p >= 0 && !(fabs(size_of(r, ax, p) / size_of(r0, ax, p) - 1.0) <= KB_SWEEP_SIZE_TOL))
            continue;
        int dup = 0;
        for (size_t j = 0; j < m && !dup; j++)
            dup = rep(fd, fd->members[j])->shape[ax] == r->shape[ax];
        if (!dup)
            fd->members[m++] = k;
    }
    return m;
}

/* "gelu=0, stats=0": the axes of r other than ax and p. */
static void fixed_str(const kb_result *r, int ax, int p, char *b, size_t n)
{
    size_t used = 0;
    b[0] = '\0';
    for (int i = 0; i < r->naxes && used < n; i++) {
        if (i == ax || i == p)
            continue;
        int w = snprintf(b + used, n - used, "%s%s=%lld", used ? ", " : "", r->axis[i],
                         (long long)r->shape[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* The column of variant name in s, adding it when add; -1 when absent. */
static long variant_col(kb_sweep *s, const char *name, int add)
{
    for (size_t v = 0; v < s->nvariants; v++)
        if (strcmp(s->variant[v], name) == 0)
            return (long)v;
    if (!add)
        return -1;
    snprintf(s->variant[s->nvariants], sizeof s->variant[0], "%s", name);
    return (long)s->nvariants++;
}

/* The figure of r a sweep shows: GB/s, or TFLOP/s when compute, in timing t;
 * NAN unless r is ok. */
static double figure_of(const kb_result *r, int compute, kb_timing t)
{
    if (r->status != KB_R_OK)
        return NAN;
    const kb_timed x = kb_result_timed(r, t);
    return compute ? x.tflops : x.gbps;
}

/* Fills s from the m groups fd->members (sorted here by the value of ax).
 * Returns -1 when out of memory (s then holds what it allocated). */
static int fill(const finder *fd, size_t m, int ax, int p, kb_sweep *s)
{
    const kb_run *run = fd->run;
    size_t *mem = fd->members;
    for (size_t i = 1; i < m; i++) /* a handful of points: insertion sort */
        for (size_t j = i; j > 0 && rep(fd, mem[j - 1])->shape[ax] > rep(fd, mem[j])->shape[ax];
             j--) {
            const size_t t = mem[j];
            mem[j] = mem[j - 1];
            mem[j - 1] = t;
        }
    const kb_result *r0 = rep(fd, mem[0]);
    snprintf(s->op, sizeof s->op, "%s", r0->op);
    snprintf(s->dtype, sizeof s->dtype, "%s", r0->dtype);
    snprintf(s->axis, sizeof s->axis, "%s", r0->axis[ax]);
    snprintf(s->partner, sizeof s->partner, "%s", p >= 0 ? r0->axis[p] : "");
    fixed_str(r0, ax, p, s->fixed, sizeof s->fixed);
    s->npoints = m;
    s->value = calloc(m, sizeof *s->value);
    s->partner_value = calloc(m, sizeof *s->partner_value);
    s->best = calloc(m, sizeof *s->best);
    s->best_pct = calloc(m, sizeof *s->best_pct);
    /* at most one column per result of the sweep */
    size_t nres = 0;
    for (size_t i = 0; i < m; i++)
        nres += fd->g->first[mem[i] + 1] - fd->g->first[mem[i]];
    s->variant = calloc(nres, sizeof *s->variant);
    if (!s->value || !s->partner_value || !s->best || !s->best_pct || !s->variant)
        return -1;
    for (size_t i = 0; i < m; i++) {
        s->value[i] = rep(fd, mem[i])->shape[ax];
        s->partner_value[i] = p >= 0 ? rep(fd, mem[i])->shape[p] : 0;
    }
    /* the point of each result of the sweep, -1 for the others */
    long *point = malloc(run->nresults * sizeof *point);
    if (!point)
        return -1;
    for (size_t i = 0; i < run->nresults; i++) {
        point[i] = -1;
        for (size_t j = 0; j < m; j++)
            if (fd->group_of[i] == mem[j])
                point[i] = (long)j;
        if (point[i] >= 0 && strcmp(run->results[i].bound, "compute") == 0)
            s->compute = 1;
    }
    for (size_t i = 0; i < run->nresults; i++)
        if (point[i] >= 0 && isfinite(figure_of(&run->results[i], s->compute, run->timing)))
            (void)variant_col(s, run->results[i].variant, 1);
    const size_t nv = s->nvariants, ncell = m * (nv ? nv : 1);
    s->cell = malloc(ncell * sizeof *s->cell);
    s->figure = malloc(ncell * sizeof *s->figure);
    if (!s->cell || !s->figure) {
        free(point);
        return -1;
    }
    for (size_t c = 0; c < ncell; c++) {
        s->cell[c] = -1;
        s->figure[c] = NAN;
    }
    for (size_t i = 0; i < run->nresults; i++) {
        const double x = point[i] >= 0 ? figure_of(&run->results[i], s->compute, run->timing)
                                       : NAN;
        if (!isfinite(x))
            continue;
        const size_t c = (size_t)point[i] * nv + (size_t)variant_col(s, run->results[i].variant, 0);
        if (s->cell[c] < 0) { /* a variant run twice at a point: its first result */
            s->cell[c] = (long)i;
            s->figure[c] = x;
        }
    }
    free(point);
    s->ceiling = kb_result_ceiling(r0, &run->dev, run->timing);
    for (size_t j = 0; j < m; j++) {
        long best = -1, best_cell = -1;
        double best_fig = -INFINITY; /* the figures kept are finite */
        for (size_t v = 0; v < nv; v++) {
            const size_t c = j * nv + v;
            if (c < ncell && s->cell[c] >= 0 && s->figure[c] > best_fig) {
                best = (long)v;
                best_cell = s->cell[c];
                best_fig = s->figure[c];
            }
        }
        s->best[j] = best;
        s->best_pct[j] =
            best >= 0 ? kb_result_timed(&run->results[best_cell], run->timing).pct_peak : NAN;
    }
    return 0;
}

static void sweep_release(kb_sweep *s)
{
    free(s->value);
    free(s->partner_value);
    free(s->variant);
    free(s->cell);
    free(s->figure);
    free(s->best);
    free(s->best_pct);
    memset(s, 0, sizeof *s);
}

void kb_sweeps_release(kb_sweeps *s)
{
    for (size_t i = 0; s->s && i < s->n; i++)
        sweep_release(&s->s[i]);
    free(s->s);
    memset(s, 0, sizeof *s);
}

kb_status kb_run_sweeps(const kb_run *run, kb_sweeps *out, kb_err *e)
{
    kb_status st = KB_OK;
    kb_groups g = {0, NULL, NULL};
    finder fd = {run, &g, NULL, NULL, NULL};
    memset(out, 0, sizeof *out);
    KB_TRY(kb_run_groups(run, &g, e));
    fd.group_of = malloc((run->nresults ? run->nresults : 1) * sizeof *fd.group_of);
    fd.taken = calloc(g.n ? g.n : 1, 1);
    fd.members = malloc((g.n ? g.n : 1) * sizeof *fd.members);
    /* at most one sweep per KB_SWEEP_MIN_POINTS groups */
    out->s = calloc(g.n / KB_SWEEP_MIN_POINTS + 1, sizeof *out->s);
    if (!fd.group_of || !fd.taken || !fd.members || !out->s) {
        st = kb_fail(e, KB_EENV, "out of memory finding the sweeps of %zu results",
                     run->nresults);
        goto done;
    }
    for (size_t k = 0; k < g.n; k++)
        for (size_t i = g.first[k]; i < g.first[k + 1]; i++)
            fd.group_of[g.idx[i]] = k;
    for (size_t k0 = 0; k0 < g.n; k0++) {
        if (fd.taken[k0])
            continue;
        const int naxes = rep(&fd, k0)->naxes;
        int found = 0;
        /* the later axes first; for each, every other axis fixed first */
        for (int ax = naxes - 1; ax >= 0 && !found; ax--)
            for (int p = -1; p < naxes && !found; p++) {
                if (p == ax)
                    continue;
                const size_t m = gather(&fd, k0, ax, p);
                if (m < KB_SWEEP_MIN_POINTS)
                    continue;
                kb_sweep *s = &out->s[out->n++];
                if (fill(&fd, m, ax, p, s) != 0) {
                    st = kb_fail(e, KB_EENV, "out of memory filling a sweep of %zu shapes", m);
                    goto done;
                }
                for (size_t j = 0; j < m; j++)
                    fd.taken[fd.members[j]] = 1;
                found = 1;
            }
    }
done:
    if (st != KB_OK)
        kb_sweeps_release(out);
    kb_groups_release(&g);
    free(fd.group_of);
    free(fd.taken);
    free(fd.members);
    return st;
}

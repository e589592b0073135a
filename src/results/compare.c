/* compare.c - the comparison of two runs (compare.h): matching cases, the
 * bootstrap interval of the ratio of medians, verdicts, and what moved in the
 * counters. */
#include "results/compare.h"
#include "results/sorted.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- small helpers ------------------------------------------------------------- */

static const char *const verdict_names[KB_V_COUNT] = {
    "FASTER", "SLOWER", "SAME", "UNCERTAIN", "ONLY IN BASE", "ONLY IN NEW",
};

const char *kb_verdict_name(kb_verdict v)
{
    return v >= 0 && v < KB_V_COUNT ? verdict_names[v] : "?";
}

/* Same case: same group and variant. */
static int same_case(const kb_result *a, const kb_result *b)
{
    return strcmp(a->variant, b->variant) == 0 && kb_result_same_group(a, b);
}

/* FNV-1a over the case key, so that each case draws its own fixed stream
 * whatever its position in either run. */
static uint64_t case_seed(const kb_result *r)
{
    uint64_t h = 0xcbf29ce484222325ull;
    char key[512];
    char shape[256];
    kb_result_shape_str(r, ",", shape, sizeof shape);
    int n = snprintf(key, sizeof key, "%s/%s/%s/%s", r->op, r->variant, r->dtype, shape);
    for (int i = 0; i < n && i < (int)sizeof key - 1; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- bootstrap ----------------------------------------------------------------- */

/* splitmix64: small, fast, and the same sequence on every machine. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform index in [0, n) for n < 2^32 (multiply-shift; the bias is below
 * 2^-32 per draw). */
static size_t rng_below(uint64_t *s, size_t n)
{
    return (size_t)(((rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

/* The finite values of v[0..n) sorted into a new array (caller frees); *m is
 * their count. NULL with *m = 0 when there are none or out of memory (*oom). */
static double *sorted_finite(const double *v, size_t n, size_t *m, int *oom)
{
    double *s = n ? malloc(n * sizeof *s) : NULL;
    *m = 0;
    if (!s) {
        *oom = n > 0;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            s[(*m)++] = v[i];
    if (*m == 0) {
        free(s);
        return NULL;
    }
    qsort(s, *m, sizeof *s, kb_cmp_double);
    return s;
}

/* The median of one resample of the sorted s[0..n): n draws with replacement
 * counted into cnt[0..n) (zeroed here), then the middle order statistics read
 * off the counts, so no resample is sorted. */
static double resample_median(const double *s, size_t n, unsigned *cnt, uint64_t *rng)
{
    size_t k1 = (n - 1) / 2, k2 = n / 2, seen = 0, i = 0;
    double a = NAN;
    memset(cnt, 0, n * sizeof *cnt);
    for (size_t j = 0; j < n; j++)
        cnt[rng_below(rng, n)]++;
    for (; i < n; i++) {
        seen += cnt[i];
        if (seen > k1) {
            a = s[i];
            break;
        }
    }
    while (seen <= k2 && ++i < n)
        seen += cnt[i];
    return 0.5 * (a + s[i < n ? i : n - 1]);
}

/* The sorted s[0..n) itself when n <= KB_CMP_BOOT_MAX, else KB_CMP_BOOT_MAX of
 * its quantiles (the middles of equal shares, still sorted) in *buf (caller
 * frees); *m their count. NULL when out of memory. */
static const double *boot_set(const double *s, size_t n, size_t *m, double **buf)
{
    *buf = NULL;
    *m = n;
    if (n <= KB_CMP_BOOT_MAX)
        return s;
    *buf = malloc(KB_CMP_BOOT_MAX * sizeof **buf);
    if (!*buf)
        return NULL;
    for (size_t i = 0; i < KB_CMP_BOOT_MAX; i++)
        (*buf)[i] = s[((2 * i + 1) * n) / (2 * (size_t)KB_CMP_BOOT_MAX)];
    *m = KB_CMP_BOOT_MAX;
    return *buf;
}

/* kb_cmp_bootstrap over samples already sorted and finite (sorted_finite). */
static kb_status bootstrap_sorted(const double *sb0, size_t nb0, const double *sc0, size_t nc0,
                                  uint64_t seed, int resamples, double *lo, double *hi,
                                  kb_err *e)
{
    kb_status st = KB_OK;
    unsigned *cb = NULL, *cc = NULL;
    double *ratio = NULL, *bufb = NULL, *bufc = NULL;
    uint64_t rng = seed;
    size_t nb = 0, nc = 0;

    *lo = *hi = NAN;
    if (nb0 == 0 || nc0 == 0 || resamples < 1)
        return KB_OK;
    const double *sb = boot_set(sb0, nb0, &nb, &bufb), *sc = boot_set(sc0, nc0, &nc, &bufc);
    cb = malloc(nb * sizeof *cb);
    cc = malloc(nc * sizeof *cc);
    ratio = malloc((size_t)resamples * sizeof *ratio);
    if (!sb || !sc || !cb || !cc || !ratio) {
        st = kb_fail(e, KB_EENV, "out of memory comparing samples");
        goto done;
    }
    for (int i = 0; i < resamples; i++) {
        double mb = resample_median(sb, nb, cb, &rng);
        double mc = resample_median(sc, nc, cc, &rng);
        ratio[i] = mc / mb;
    }
    qsort(ratio, (size_t)resamples, sizeof *ratio, kb_cmp_double);
    size_t tail = (size_t)floor((1.0 - KB_CMP_CONFIDENCE) / 2.0 * resamples);
    *lo = ratio[tail];
    *hi = ratio[(size_t)resamples - 1 - tail];
done:
    free(cb);
    free(cc);
    free(ratio);
    free(bufb);
    free(bufc);
    return st;
}

kb_status kb_cmp_bootstrap(const double *base, size_t nbase, const double *cur, size_t ncur,
                           uint64_t seed, int resamples, double *lo, double *hi, kb_err *e)
{
    size_t nb = 0, nc = 0;
    int oom = 0;
    double *sb = sorted_finite(base, nbase, &nb, &oom);
    double *sc = sorted_finite(cur, ncur, &nc, &oom);
    kb_status st = oom ? kb_fail(e, KB_EENV, "out of memory comparing samples")
                       : bootstrap_sorted(sb, nb, sc, nc, seed, resamples, lo, hi, e);
    if (oom)
        *lo = *hi = NAN;
    free(sb);
    free(sc);
    return st;
}

/* ---- one case ------------------------------------------------------------------ */

/* The first "name NN%" pair of a top_stalls summary into name and pct ("52%"). */
static int first_stall(const char *s, char *name, size_t nn, char *pct, size_t np)
{
    const char *sp = strchr(s, ' ');
    if (!*s || !sp)
        return 0;
    const char *end = strchr(sp + 1, '%');
    if (!end)
        return 0;
    snprintf(name, nn, "%.*s", (int)(sp - s), s);
    snprintf(pct, np, "%.*s", (int)(end - sp), sp + 1);
    return 1;
}

/* Appends " · " (after the first part) and the formatted part to b[n]. */
static void add_part(char *b, size_t n, const char *fmt, ...) KB_PRINTF(3, 4);
static void add_part(char *b, size_t n, const char *fmt, ...)
{
    size_t used = strlen(b);
    va_list ap;
    if (used && used + 1 < n)
        used += (size_t)snprintf(b + used, n - used, " \xC2\xB7 ");
    if (used >= n)
        return;
    va_start(ap, fmt);
    vsnprintf(b + used, n - used, fmt, ap);
    va_end(ap);
}

/* What moved between the two results, each part only where both sides have
 * the figure: the SM clock after the cold samples when the two are more than
 * KB_CLOCKS_APART apart, DRAM bytes ratio, achieved occupancy points,
 * registers, spills, the top stall reason. */
static void what_moved(kb_cmp_case *k)
{
    const kb_result *a = k->base, *b = k->cur;
    char n1[64], p1[16], n2[64], p2[16];
    k->moved[0] = '\0';
    k->dram_ratio = k->occ_delta = NAN;
    if (kb_clocks_apart(a->sm_clock_mhz, b->sm_clock_mhz))
        add_part(k->moved, sizeof k->moved, "clock %.0f\xE2\x86\x92%.0f MHz", a->sm_clock_mhz,
                 b->sm_clock_mhz);
    if (a->dram_bytes > 0 && isfinite(a->dram_bytes) && isfinite(b->dram_bytes)) {
        k->dram_ratio = b->dram_bytes / a->dram_bytes;
        add_part(k->moved, sizeof k->moved, "DRAM %.2fx", k->dram_ratio);
    }
    if (isfinite(a->achieved_occupancy) && isfinite(b->achieved_occupancy)) {
        k->occ_delta = b->achieved_occupancy - a->achieved_occupancy;
        add_part(k->moved, sizeof k->moved, "occ %+.1f pts", k->occ_delta);
    }
    if (a->registers >= 0 && b->registers >= 0) {
        if (a->registers == b->registers)
            add_part(k->moved, sizeof k->moved, "regs %d", a->registers);
        else
            add_part(k->moved, sizeof k->moved, "regs %d\xE2\x86\x92%d", a->registers,
                     b->registers);
    }
    if (a->local_bytes >= 0 && b->local_bytes >= 0) {
        if (a->local_bytes == b->local_bytes)
            add_part(k->moved, sizeof k->moved, "spill %lld B", (long long)a->local_bytes);
        else
            add_part(k->moved, sizeof k->moved, "spill %lld\xE2\x86\x92%lld B",
                     (long long)a->local_bytes, (long long)b->local_bytes);
    }
    if (first_stall(a->top_stalls, n1, sizeof n1, p1, sizeof p1) &&
        first_stall(b->top_stalls, n2, sizeof n2, p2, sizeof p2)) {
        if (strcmp(n1, n2) != 0)
            add_part(k->moved, sizeof k->moved, "stall %s %s\xE2\x86\x92%s %s", n1, p1, n2, p2);
        else if (strcmp(p1, p2) != 0)
            add_part(k->moved, sizeof k->moved, "stall %s %s\xE2\x86\x92%s", n1, p1, p2);
        else
            add_part(k->moved, sizeof k->moved, "stall %s %s", n1, p1);
    }
}

/* The figures and verdict of a case whose two sides exist, from their finite
 * samples sorted: sa[0..na) and sb[0..nb). */
static kb_status judge_sorted(kb_cmp_case *k, double t, int cross, const double *sa, size_t na,
                              const double *sb, size_t nb, kb_err *e)
{
    const kb_result *a = k->base, *b = k->cur;
    kb_status st = KB_OK;

    k->base_n = na;
    k->new_n = nb;
    k->base_median = sa ? kb_median_sorted(sa, na) : NAN;
    k->new_median = sb ? kb_median_sorted(sb, nb) : NAN;
    k->time_ratio = k->base_median > 0 ? k->new_median / k->base_median : NAN;
    what_moved(k);
    k->verdict = KB_V_UNCERTAIN;
    if (a->status != KB_R_OK || b->status != KB_R_OK) {
        const kb_result *bad = a->status != KB_R_OK ? a : b;
        const char *who = a->status == KB_R_OK   ? "NEW is"
                          : b->status == a->status ? "BASE and NEW are"
                                                   : "BASE is";
        snprintf(k->why, sizeof k->why, "%s %s%s%.120s", who, kb_rstatus_name(bad->status),
                 *bad->reason ? ": " : "", bad->reason);
        k->why[strcspn(k->why, "\r\n")] = '\0';
        return KB_OK;
    }
    if (na < KB_CMP_MIN_SAMPLES || nb < KB_CMP_MIN_SAMPLES) {
        int base_short = na < KB_CMP_MIN_SAMPLES;
        snprintf(k->why, sizeof k->why, "%s has %zu finite samples (%d needed)",
                 base_short ? "BASE" : "NEW", base_short ? na : nb, KB_CMP_MIN_SAMPLES);
        return KB_OK;
    }
    double scale = 1.0;
    if (cross) {
        /* pct_peak BASE / NEW = time ratio x (NEW's ceiling / BASE's ceiling) */
        if (!(a->pct_peak > 0) || !(b->pct_peak > 0) || !(a->median_us > 0) ||
            !(b->median_us > 0)) {
            snprintf(k->why, sizeof k->why,
                     "no %% of peak on %s (its GPU's %s ceiling is not calibrated)",
                     a->pct_peak > 0 ? "NEW" : "BASE",
                     strcmp(a->bound, "compute") == 0 ? "compute" : "copy bandwidth");
            return KB_OK;
        }
        scale = (a->pct_peak * a->median_us) / (b->pct_peak * b->median_us);
    }
    st = bootstrap_sorted(sa, na, sb, nb, case_seed(a), KB_CMP_RESAMPLES, &k->lo, &k->hi, e);
    if (st != KB_OK)
        return st;
    k->ratio = k->time_ratio * scale;
    k->lo *= scale;
    k->hi *= scale;
    if (k->hi < 1.0 - t)
        k->verdict = KB_V_FASTER;
    else if (k->lo > 1.0 + t)
        k->verdict = KB_V_SLOWER;
    else if (k->lo >= 1.0 - t && k->hi <= 1.0 + t)
        k->verdict = KB_V_SAME;
    else
        snprintf(k->why, sizeof k->why,
                 "the %.0f%% interval [%.3f, %.3f] is neither inside nor clear of "
                 "[%.3f, %.3f]",
                 100.0 * KB_CMP_CONFIDENCE, k->lo, k->hi, 1.0 - t, 1.0 + t);
    return KB_OK;
}

/* The figures and verdict of a case whose two sides exist; each side's
 * samples are sorted once, for its median and for the bootstrap. */
static kb_status judge(kb_cmp_case *k, double t, int cross, kb_err *e)
{
    size_t na = 0, nb = 0;
    int oom = 0;
    double *sa = sorted_finite(k->base->samples_us, k->base->nsamples, &na, &oom);
    double *sb = sorted_finite(k->cur->samples_us, k->cur->nsamples, &nb, &oom);
    kb_status st = oom ? kb_fail(e, KB_EENV, "out of memory comparing samples")
                       : judge_sorted(k, t, cross, sa, na, sb, nb, e);
    free(sa);
    free(sb);
    return st;
}

static void case_init(kb_cmp_case *k, const kb_result *base, const kb_result *cur)
{
    memset(k, 0, sizeof *k);
    k->base = base;
    k->cur = cur;
    k->base_median = k->new_median = k->time_ratio = k->ratio = NAN;
    k->lo = k->hi = k->dram_ratio = k->occ_delta = NAN;
    k->verdict = !base ? KB_V_ONLY_NEW : !cur ? KB_V_ONLY_BASE : KB_V_UNCERTAIN;
}

/* "softmax, layernorm": the operators of a run, in order of appearance. */
static void ops_list(const kb_run *run, char *b, size_t n)
{
    size_t used = 0;
    b[0] = '\0';
    for (size_t i = 0; i < run->nresults && used < n; i++) {
        size_t j = 0;
        while (j < i && strcmp(run->results[j].op, run->results[i].op) != 0)
            j++;
        if (j < i)
            continue;
        int w = snprintf(b + used, n - used, "%s%s", used ? ", " : "", run->results[i].op);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

kb_status kb_compare_runs(const kb_run *base, const char *base_name, const kb_run *cur,
                          const char *new_name, double threshold, kb_compare *out, kb_err *e)
{
    kb_status st = KB_OK;
    size_t cap = base->nresults + cur->nresults, matched = 0;
    char *used = calloc(cur->nresults ? cur->nresults : 1, 1);

    memset(out, 0, sizeof *out);
    out->base = base;
    out->cur = cur;
    out->threshold = threshold;
    kb_strlcpy(out->base_name, base_name, sizeof out->base_name);
    kb_strlcpy(out->new_name, new_name, sizeof out->new_name);
    out->cross_gpu = strcmp(base->dev.uuid, cur->dev.uuid) != 0;
    out->cases = calloc(cap ? cap : 1, sizeof *out->cases);
    if (!used || !out->cases) {
        st = kb_fail(e, KB_EENV, "out of memory comparing runs");
        goto done;
    }
    for (size_t i = 0; i < base->nresults; i++) {
        const kb_result *a = &base->results[i], *b = NULL;
        for (size_t j = 0; j < cur->nresults && !b; j++)
            if (!used[j] && same_case(a, &cur->results[j])) {
                used[j] = 1;
                b = &cur->results[j];
            }
        kb_cmp_case *k = &out->cases[out->ncases++];
        case_init(k, a, b);
        if (b) {
            matched++;
            if ((st = judge(k, threshold, out->cross_gpu, e)) != KB_OK)
                goto done;
        }
    }
    for (size_t j = 0; j < cur->nresults; j++)
        if (!used[j])
            case_init(&out->cases[out->ncases++], NULL, &cur->results[j]);
    if (matched == 0) {
        char ob[256], on[256];
        ops_list(base, ob, sizeof ob);
        ops_list(cur, on, sizeof on);
        st = kb_fail(e, KB_EUSAGE,
                     "no case in common: BASE '%s' has %zu case%s%s%s%s, NEW '%s' has %zu "
                     "case%s%s%s%s; cases match by operator, variant, dtype and shape",
                     base_name, base->nresults, base->nresults == 1 ? "" : "s",
                     *ob ? " (" : "", ob, *ob ? ")" : "", new_name, cur->nresults,
                     cur->nresults == 1 ? "" : "s", *on ? " (" : "", on, *on ? ")" : "");
        goto done;
    }
    for (size_t i = 0; i < out->ncases; i++)
        out->count[out->cases[i].verdict]++;
done:
    free(used);
    if (st != KB_OK)
        kb_compare_release(out);
    return st;
}

void kb_compare_release(kb_compare *c)
{
    if (!c)
        return;
    free(c->cases);
    c->cases = NULL;
    c->ncases = 0;
}

int kb_compare_regressed(const kb_compare *c)
{
    return c->count[KB_V_SLOWER] > 0;
}


const kb_result *kb_cmp_case_result(const kb_cmp_case *k)
{
    return k->base ? k->base : k->cur;
}

static const kb_result *case_at(const void *ctx, size_t i)
{
    return kb_cmp_case_result(&((const kb_compare *)ctx)->cases[i]);
}

kb_status kb_compare_groups(const kb_compare *c, kb_groups *g, kb_err *e)
{
    return kb_groups_of(c->ncases, case_at, c, g, e);
}

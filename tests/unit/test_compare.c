/* test_compare.c - the comparison of two runs: report arguments, the bootstrap
 * interval (deterministic, NaN samples left out), verdicts (SAME for a run
 * against itself and against a copy with 1% noise, SLOWER and FASTER past the
 * threshold, UNCERTAIN when the interval straddles it, a side is not ok or has
 * too few samples), cases on one side only, no case in common, the cross-GPU
 * mode (ratio of % peak, not raw time), what moved in the counters, and the
 * text, markdown and JSON views; the committed GPU reports (or the fixtures)
 * compared with themselves and with noisy copies. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kbtest.h"
#include "report/compare_view.h"
#include "results/compare.h"
#include "store/json.h"

/* ---- helpers -------------------------------------------------------------------- */

/* A small deterministic generator for test noise: uniform in [-1, 1]. */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 4503599627370496.0 - 1.0;
}

static void make_run(kb_run *run, const char *uuid, const char *name, double copy_gbps)
{
    kb_run_init(run);
    snprintf(run->version, sizeof run->version, "0.1.0");
    snprintf(run->git, sizeof run->git, "abc123");
    snprintf(run->started, sizeof run->started, "2025-06-01T10:00:00Z");
    snprintf(run->state, sizeof run->state, "complete");
    snprintf(run->dev.uuid, sizeof run->dev.uuid, "%s", uuid);
    snprintf(run->dev.name, sizeof run->dev.name, "%s", name);
    run->dev.copy_gbps = copy_gbps;
}

/* Adds a softmax result of rows x 1024 with n samples around median, spread by
 * +-spread (a fraction), from the noise stream seed. */
static kb_result *add_case(kb_run *run, const char *variant, const char *dtype, int64_t rows,
                           double median, size_t n, double spread, uint64_t seed)
{
    kb_result r;
    kbt_case(&r, "softmax", variant, dtype, rows, 1024);
    r.checked = 1;
    if (n) {
        r.samples_us = malloc(n * sizeof *r.samples_us);
        assert_non_null(r.samples_us);
        for (size_t i = 0; i < n; i++)
            r.samples_us[i] = median * (1.0 + spread * noise(&seed));
        r.nsamples = n;
    }
    kb_result_summarise(&r);
    r.bytes = 8.0 * (double)rows * 1024;
    r.flops = 5.0 * (double)rows * 1024;
    kb_result_derive(&r, &run->dev);
    assert_int_equal(kb_run_add(run, &r), 0);
    return &run->results[run->nresults - 1];
}

/* A copy of src with every sample scaled by factor and jittered by +-jitter. */
static void copy_run(kb_run *dst, const kb_run *src, double factor, double jitter, uint64_t seed)
{
    kb_err e = {{0}};
    cJSON *j = kb_json_from_run(src);
    assert_non_null(j);
    assert_int_equal(kb_json_to_run(j, dst, &e), KB_OK);
    cJSON_Delete(j);
    for (size_t i = 0; i < dst->nresults; i++) {
        kb_result *r = &dst->results[i];
        for (size_t k = 0; k < r->nsamples; k++)
            r->samples_us[k] *= factor * (1.0 + jitter * noise(&seed));
        if (r->nsamples) {
            kb_result_summarise(r);
            kb_result_derive(r, &dst->dev);
        }
    }
}

/* Four cases with noise (scale 1) or constant samples (scale 0). */
static void build_noisy(kb_run *run, double scale)
{
    make_run(run, "GPU-aaaa", "NVIDIA H200", 4200.0);
    add_case(run, "naive", "fp32", 4096, 812.0, 40, 0.01 * scale, 1);
    add_case(run, "fused", "fp32", 4096, 95.0, 200, 0.02 * scale, 2);
    add_case(run, "fused", "bf16", 4096, 60.0, 12, 0.005 * scale, 3);
    add_case(run, "naive", "fp32", 8192, 1600.0, 2000, 0.03 * scale, 4);
}

static void build_base(kb_run *run)
{
    build_noisy(run, 1.0);
}

static char *render(kb_status (*w)(FILE *, const kb_compare *, kb_err *), const kb_compare *c)
{
    char *buf = NULL;
    size_t len = 0;
    kb_err e = {{0}};
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(w(f, c, &e), KB_OK);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void assert_all(const kb_compare *c, kb_verdict v)
{
    for (size_t i = 0; i < c->ncases; i++)
        if (c->cases[i].verdict != v)
            fail_msg("case %zu (%s %s): %s [%g, %g] %s, want %s", i,
                     c->cases[i].base ? c->cases[i].base->variant : "?",
                     c->cases[i].base ? c->cases[i].base->dtype : "?",
                     kb_verdict_name(c->cases[i].verdict), c->cases[i].lo, c->cases[i].hi,
                     c->cases[i].why, kb_verdict_name(v));
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_arg_is_file(void **state)
{
    (void)state;
    assert_true(kb_report_arg_is_file("results/h200/softmax.json"));
    assert_true(kb_report_arg_is_file("new.json"));
    assert_true(kb_report_arg_is_file("./12"));
    assert_false(kb_report_arg_is_file("latest"));
    assert_false(kb_report_arg_is_file("12"));
    assert_false(kb_report_arg_is_file(".json"));
}

static void test_bootstrap(void **state)
{
    (void)state;
    kb_err e = {{0}};
    double a[50], b[50], lo, hi, lo2, hi2;
    uint64_t s = 7;
    for (int i = 0; i < 50; i++) {
        a[i] = 100.0 * (1.0 + 0.02 * noise(&s));
        b[i] = 110.0 * (1.0 + 0.02 * noise(&s));
    }
    assert_int_equal(kb_cmp_bootstrap(a, 50, b, 50, 42, 2000, &lo, &hi, &e), KB_OK);
    assert_true(lo < hi);
    assert_true(lo > 1.06 && hi < 1.14);
    /* the same input and seed give the same interval, bit for bit */
    assert_int_equal(kb_cmp_bootstrap(a, 50, b, 50, 42, 2000, &lo2, &hi2, &e), KB_OK);
    assert_memory_equal(&lo, &lo2, sizeof lo);
    assert_memory_equal(&hi, &hi2, sizeof hi);
    /* constant samples: the interval is the exact ratio */
    double c1[5] = {10, 10, 10, 10, 10}, c2[6] = {12, 12, 12, 12, 12, 12};
    assert_int_equal(kb_cmp_bootstrap(c1, 5, c2, 6, 1, 500, &lo, &hi, &e), KB_OK);
    assert_true(lo == 1.2 && hi == 1.2);
    /* NaN samples are left out; a side with none gives no interval */
    double n1[3] = {NAN, 10, NAN}, n2[2] = {NAN, NAN};
    assert_int_equal(kb_cmp_bootstrap(n1, 3, c2, 6, 1, 500, &lo, &hi, &e), KB_OK);
    assert_true(lo == 1.2 && hi == 1.2);
    assert_int_equal(kb_cmp_bootstrap(n2, 2, c2, 6, 1, 500, &lo, &hi, &e), KB_OK);
    assert_true(isnan(lo) && isnan(hi));
    assert_int_equal(kb_cmp_bootstrap(c1, 5, NULL, 0, 1, 500, &lo, &hi, &e), KB_OK);
    assert_true(isnan(lo) && isnan(hi));
}

/* Cases of a million samples a side (what --max-samples allows) compare in
 * bounded time: a case once cost 2000 resamples of the whole set (57 s). */
static void test_large_cases_bounded(void **state)
{
    (void)state;
    enum { N = 1000000 };
    kb_run base, slower;
    kb_compare c;
    kb_err e = {{0}};
    make_run(&base, "GPU-a", "NVIDIA H200", 4000.0);
    make_run(&slower, "GPU-a", "NVIDIA H200", 4000.0);
    add_case(&base, "naive", "fp32", 4096, 100.0, N, 0.02, 3);
    add_case(&base, "fused", "fp32", 4096, 50.0, N, 0.02, 4);
    add_case(&slower, "naive", "fp32", 4096, 110.0, N, 0.02, 5);
    add_case(&slower, "fused", "fp32", 4096, 50.0, N, 0.02, 6);
    alarm(60);
    const double t0 = kbt_now_s();
    assert_int_equal(kb_compare_runs(&base, "a", &slower, "b", 0.05, &c, &e), KB_OK);
    const double s = kbt_now_s() - t0;
    alarm(0);
    if (s > 5.0) /* well under a second; 27 s before the cost was bounded */
        fail_msg("comparing two cases of %d samples took %.1f s", N, s);
    assert_int_equal(c.ncases, 2);
    assert_int_equal(c.cases[0].verdict, KB_V_SLOWER);
    assert_int_equal(c.cases[1].verdict, KB_V_SAME);
    assert_true(c.cases[0].lo < 1.1 && c.cases[0].hi > 1.1);
    assert_true(c.cases[1].lo <= 1.0 && c.cases[1].hi >= 1.0);
    kb_compare_release(&c);
    kb_run_release(&base);
    kb_run_release(&slower);
}

/* A run against itself, and against a copy with +-1% noise on every sample:
 * every case is SAME and nothing regressed. */
static void test_same(void **state)
{
    (void)state;
    kb_run base, noisy;
    kb_compare c;
    kb_err e = {{0}};
    build_base(&base);
    assert_int_equal(kb_compare_runs(&base, "a.json", &base, "a.json", 0.05, &c, &e), KB_OK);
    assert_int_equal(c.ncases, 4);
    assert_all(&c, KB_V_SAME);
    assert_int_equal(c.count[KB_V_SAME], 4);
    assert_false(c.cross_gpu);
    assert_false(kb_compare_regressed(&c));
    for (size_t i = 0; i < c.ncases; i++) {
        assert_true(c.cases[i].ratio == 1.0);
        assert_true(c.cases[i].lo <= 1.0 && c.cases[i].hi >= 1.0);
    }
    kb_compare_release(&c);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        copy_run(&noisy, &base, 1.0, 0.01, seed);
        assert_int_equal(kb_compare_runs(&base, "a", &noisy, "b", 0.05, &c, &e), KB_OK);
        assert_all(&c, KB_V_SAME);
        kb_compare_release(&c);
        kb_run_release(&noisy);
    }
    kb_run_release(&base);
}

static void test_slower_faster_uncertain(void **state)
{
    (void)state;
    kb_run base, other;
    kb_compare c;
    kb_err e = {{0}};
    build_base(&base);
    copy_run(&other, &base, 1.10, 0.0, 1);
    assert_int_equal(kb_compare_runs(&base, "a", &other, "b", 0.05, &c, &e), KB_OK);
    assert_all(&c, KB_V_SLOWER);
    assert_true(kb_compare_regressed(&c));
    assert_true(fabs(c.cases[0].ratio - 1.10) < 1e-12);
    kb_compare_release(&c);
    /* a threshold above the change: SAME */
    assert_int_equal(kb_compare_runs(&base, "a", &other, "b", 0.15, &c, &e), KB_OK);
    assert_all(&c, KB_V_SAME);
    kb_compare_release(&c);
    kb_run_release(&other);

    copy_run(&other, &base, 0.90, 0.0, 1);
    assert_int_equal(kb_compare_runs(&base, "a", &other, "b", 0.05, &c, &e), KB_OK);
    assert_all(&c, KB_V_FASTER);
    assert_false(kb_compare_regressed(&c));
    kb_compare_release(&c);
    kb_run_release(&other);

    /* a change right at the threshold with noise: the interval straddles 1.05 */
    kb_run a, b;
    make_run(&a, "GPU-aaaa", "NVIDIA H200", 4200.0);
    make_run(&b, "GPU-aaaa", "NVIDIA H200", 4200.0);
    add_case(&a, "fused", "fp32", 4096, 100.0, 30, 0.05, 11);
    add_case(&b, "fused", "fp32", 4096, 105.0, 30, 0.05, 12);
    assert_int_equal(kb_compare_runs(&a, "a", &b, "b", 0.05, &c, &e), KB_OK);
    assert_int_equal(c.cases[0].verdict, KB_V_UNCERTAIN);
    assert_true(c.cases[0].lo < 1.05 && c.cases[0].hi > 1.05);
    kbt_has(c.cases[0].why, "interval [");
    kbt_has(c.cases[0].why, "] is neither inside nor clear of [0.950, 1.050]");
    assert_false(kb_compare_regressed(&c));
    kb_compare_release(&c);
    kb_run_release(&a);
    kb_run_release(&b);
    kb_run_release(&base);
}

/* UNCERTAIN for too few samples or a side that is not ok, each with its reason;
 * cases on one side only are kept and counted. */
static void test_reasons_and_sides(void **state)
{
    (void)state;
    kb_run a, b;
    kb_compare c;
    kb_err e = {{0}};
    make_run(&a, "GPU-aaaa", "NVIDIA H200", 4200.0);
    make_run(&b, "GPU-aaaa", "NVIDIA H200", 4200.0);
    add_case(&a, "naive", "fp32", 64, 10.0, 4, 0.01, 1);
    add_case(&b, "naive", "fp32", 64, 10.0, 50, 0.01, 2);
    add_case(&a, "fused", "fp32", 64, 5.0, 20, 0.01, 3);
    kb_result *bad = add_case(&b, "fused", "fp32", 64, 5.0, 20, 0.01, 4);
    bad->status = KB_R_MISMATCH;
    snprintf(bad->reason, sizeof bad->reason, "max abs err 0.5 at row 3\nsecond line");
    add_case(&a, "vendor", "fp32", 64, NAN, 0, 0, 5)->status = KB_R_SKIPPED;
    add_case(&b, "vendor", "fp32", 64, NAN, 0, 0, 6)->status = KB_R_SKIPPED;
    add_case(&a, "old", "fp32", 64, 7.0, 10, 0.01, 7);
    add_case(&b, "new", "fp32", 64, 7.0, 10, 0.01, 8);
    add_case(&b, "naive", "bf16", 64, 7.0, 10, 0.01, 9);
    assert_int_equal(kb_compare_runs(&a, "a", &b, "b", 0.05, &c, &e), KB_OK);
    assert_int_equal(c.ncases, 6);
    assert_int_equal(c.cases[0].verdict, KB_V_UNCERTAIN);
    assert_string_equal(c.cases[0].why, "BASE has 4 finite samples (5 needed)");
    assert_int_equal(c.cases[0].base_n, 4);
    assert_true(isnan(c.cases[0].lo));
    assert_int_equal(c.cases[1].verdict, KB_V_UNCERTAIN);
    assert_string_equal(c.cases[1].why, "NEW is mismatch: max abs err 0.5 at row 3");
    assert_int_equal(c.cases[2].verdict, KB_V_UNCERTAIN);
    assert_string_equal(c.cases[2].why, "BASE and NEW are skipped");
    assert_int_equal(c.cases[3].verdict, KB_V_ONLY_BASE);
    assert_string_equal(c.cases[3].base->variant, "old");
    assert_null(c.cases[3].cur);
    assert_int_equal(c.cases[4].verdict, KB_V_ONLY_NEW);
    assert_string_equal(c.cases[4].cur->variant, "new");
    assert_int_equal(c.cases[5].verdict, KB_V_ONLY_NEW);
    assert_string_equal(c.cases[5].cur->dtype, "bf16");
    assert_int_equal(c.count[KB_V_UNCERTAIN], 3);
    assert_int_equal(c.count[KB_V_ONLY_BASE], 1);
    assert_int_equal(c.count[KB_V_ONLY_NEW], 2);
    assert_false(kb_compare_regressed(&c));
    char *t = render(kb_compare_write_text, &c);
    kbt_has(t, "6 cases: 0 faster, 0 slower, 0 same, 3 uncertain, 1 only in BASE, 2 only in NEW\n");
    kbt_has(t, "  naive: UNCERTAIN: BASE has 4 finite samples (5 needed)\n");
    kbt_has(t, "ONLY IN NEW");
    /* the bf16 case only in NEW gets its own group */
    kbt_has(t, "\nsoftmax \xC2\xB7 bf16 \xC2\xB7 rows=64, cols=1024\n");
    free(t);
    kb_compare_release(&c);
    kb_run_release(&a);
    kb_run_release(&b);
}

static void test_no_case_in_common(void **state)
{
    (void)state;
    kb_run a, b;
    kb_compare c;
    kb_err e = {{0}};
    make_run(&a, "GPU-aaaa", "NVIDIA H200", 4200.0);
    make_run(&b, "GPU-aaaa", "NVIDIA H200", 4200.0);
    add_case(&a, "naive", "fp32", 64, 10.0, 10, 0.01, 1);
    add_case(&b, "naive", "fp32", 128, 10.0, 10, 0.01, 2);
    snprintf(b.results[0].op, sizeof b.results[0].op, "layernorm");
    assert_int_equal(kb_compare_runs(&a, "a.json", &b, "run 4", 0.05, &c, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "no case in common: BASE 'a.json' has 1 case (softmax), NEW "
                               "'run 4' has 1 case (layernorm); cases match by operator, "
                               "variant, dtype and shape");
    assert_null(c.cases);
    kb_compare_release(&c);
    kb_run_release(&b);
    kb_run_init(&b);
    assert_int_equal(kb_compare_runs(&a, "a.json", &b, "b.json", 0.05, &c, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "no case in common: BASE 'a.json' has 1 case (softmax), NEW "
                               "'b.json' has 0 cases; cases match by operator, variant, dtype "
                               "and shape");
    kb_run_release(&a);
}

/* Across GPUs the verdict weighs % peak: a GPU 20% slower in time whose
 * ceiling is 20% lower is SAME, not SLOWER; raw time alone would say SLOWER. */
static void test_cross_gpu(void **state)
{
    (void)state;
    kb_run base, other;
    kb_compare c;
    kb_err e = {{0}};
    build_base(&base);
    copy_run(&other, &base, 1.25, 0.0, 1);
    snprintf(other.dev.uuid, sizeof other.dev.uuid, "GPU-bbbb");
    snprintf(other.dev.name, sizeof other.dev.name, "NVIDIA H100");
    other.dev.copy_gbps = 4200.0 / 1.25;
    for (size_t i = 0; i < other.nresults; i++)
        kb_result_derive(&other.results[i], &other.dev);
    assert_int_equal(kb_compare_runs(&base, "h200.json", &other, "h100.json", 0.05, &c, &e),
                     KB_OK);
    assert_true(c.cross_gpu);
    assert_all(&c, KB_V_SAME);
    assert_false(kb_compare_regressed(&c));
    assert_true(fabs(c.cases[0].time_ratio - 1.25) < 1e-12);
    assert_true(fabs(c.cases[0].ratio - 1.0) < 1e-9);
    char *t = render(kb_compare_write_text, &c);
    kbt_has(t, "!! different GPUs: BASE ran on NVIDIA H200, NEW on NVIDIA H100 !!\n");
    kbt_has(t, "not raw time, so a\n   change of GPU is not reported as a code regression !!\n");
    kbt_has(t, "BASE % peak  NEW % peak  peak ratio");
    kbt_has(t, "rule  ratio = % peak BASE / % peak NEW");
    free(t);
    kb_compare_release(&c);

    /* the same times on a GPU with a higher ceiling: NEW reaches a smaller
     * share of its ceiling, so it is SLOWER in the normalised sense */
    kb_run_release(&other);
    copy_run(&other, &base, 1.0, 0.0, 1);
    snprintf(other.dev.uuid, sizeof other.dev.uuid, "GPU-bbbb");
    other.dev.copy_gbps = 4200.0 * 1.25;
    for (size_t i = 0; i < other.nresults; i++)
        kb_result_derive(&other.results[i], &other.dev);
    assert_int_equal(kb_compare_runs(&base, "a", &other, "b", 0.05, &c, &e), KB_OK);
    assert_all(&c, KB_V_SLOWER);
    kb_compare_release(&c);

    /* an uncalibrated GPU: no % peak, so no verdict */
    other.dev.copy_gbps = NAN;
    for (size_t i = 0; i < other.nresults; i++)
        kb_result_derive(&other.results[i], &other.dev);
    assert_int_equal(kb_compare_runs(&base, "a", &other, "b", 0.05, &c, &e), KB_OK);
    assert_all(&c, KB_V_UNCERTAIN);
    assert_string_equal(c.cases[0].why, "no % of peak on NEW (its GPU's copy bandwidth ceiling "
                                        "is not calibrated)");
    kb_compare_release(&c);
    kb_run_release(&other);
    kb_run_release(&base);
}

static void test_what_moved(void **state)
{
    (void)state;
    kb_run a, b;
    kb_compare c;
    kb_err e = {{0}};
    make_run(&a, "GPU-aaaa", "NVIDIA H200", 4200.0);
    make_run(&b, "GPU-aaaa", "NVIDIA H200", 4200.0);
    kb_result *x = add_case(&a, "fused", "fp32", 4096, 100.0, 30, 0.001, 1);
    kb_result *y = add_case(&b, "fused", "fp32", 4096, 130.0, 30, 0.001, 2);
    snprintf(x->metric_set, sizeof x->metric_set, "stalls");
    snprintf(y->metric_set, sizeof y->metric_set, "stalls");
    x->dram_bytes = 1.0e9;
    y->dram_bytes = 1.52e9;
    x->achieved_occupancy = 61.3;
    y->achieved_occupancy = 38.1;
    x->registers = 32;
    y->registers = 72;
    x->local_bytes = 0;
    y->local_bytes = 64;
    snprintf(x->top_stalls, sizeof x->top_stalls, "long_sb 52%% barrier 18%%");
    snprintf(y->top_stalls, sizeof y->top_stalls, "lg_throttle 44%% long_sb 30%%");
    kb_result *p = add_case(&a, "naive", "fp32", 4096, 100.0, 30, 0.001, 3);
    kb_result *q = add_case(&b, "naive", "fp32", 4096, 100.0, 30, 0.001, 4);
    p->registers = q->registers = 16;
    snprintf(p->top_stalls, sizeof p->top_stalls, "long_sb 61%%");
    snprintf(q->top_stalls, sizeof q->top_stalls, "long_sb 58%%");
    /* clocks 20% apart are named first; 4% apart, not at all */
    x->sm_clock_mhz = 1980.0;
    y->sm_clock_mhz = 1590.0;
    p->sm_clock_mhz = 1980.0;
    q->sm_clock_mhz = 1900.0;
    assert_int_equal(kb_compare_runs(&a, "a", &b, "b", 0.05, &c, &e), KB_OK);
    assert_int_equal(c.cases[0].verdict, KB_V_SLOWER);
    assert_string_equal(c.cases[0].moved, "clock 1980\xE2\x86\x92" "1590 MHz \xC2\xB7 "
                                          "DRAM 1.52x \xC2\xB7 occ -23.2 pts \xC2\xB7 regs "
                                          "32\xE2\x86\x92" "72 \xC2\xB7 spill 0\xE2\x86\x92"
                                          "64 B \xC2\xB7 stall long_sb 52%\xE2\x86\x92"
                                          "lg_throttle 44%");
    assert_true(fabs(c.cases[0].dram_ratio - 1.52) < 1e-12);
    assert_true(fabs(c.cases[0].occ_delta + 23.2) < 1e-9);
    assert_string_equal(c.cases[1].moved, "regs 16 \xC2\xB7 stall long_sb 61%\xE2\x86\x92"
                                          "58%");
    assert_true(isnan(c.cases[1].dram_ratio));
    /* on the same line as the time change */
    char *t = render(kb_compare_write_text, &c);
    kbt_has(t, "SLOWER   clock 1980\xE2\x86\x92" "1590 MHz");
    free(t);
    kb_compare_release(&c);
    kb_run_release(&a);
    kb_run_release(&b);
}

/* A variant file edited between the runs: the case matches by its name (the
 * file's stem), and the variant cell shows the source each side ran. */
static void test_variant_file_sources(void **state)
{
    (void)state;
    kb_run base, edited;
    kb_compare c;
    kb_err e = {{0}};
    make_run(&base, "GPU-aaaa", "NVIDIA H200", 4200.0);
    kb_result *r = add_case(&base, "mine", "fp32", 4096, 100.0, 50, 0.01, 7);
    snprintf(r->source_path, sizeof r->source_path, "./mine.cu");
    snprintf(r->source_sha256, sizeof r->source_sha256, "%s",
             "1a2b3c4d00000000000000000000000000000000000000000000000000000000");
    add_case(&base, "fused", "fp32", 4096, 95.0, 50, 0.01, 8);
    copy_run(&edited, &base, 0.5, 0.01, 9);
    snprintf(edited.results[0].source_sha256, sizeof edited.results[0].source_sha256, "%s",
             "5e6f7a8b00000000000000000000000000000000000000000000000000000000");
    assert_int_equal(kb_compare_runs(&base, "a", &edited, "b", 0.05, &c, &e), KB_OK);
    assert_int_equal(c.ncases, 2);
    assert_int_equal(c.cases[0].verdict, KB_V_FASTER);
    char *t = render(kb_compare_write_text, &c);
    assert_non_null(strstr(t, "mine · src 1a2b3c4d→5e6f7a8b"));
    assert_null(strstr(t, "fused · src"));
    free(t);
    kb_compare_release(&c);
    /* the same source on both sides: one hash */
    assert_int_equal(kb_compare_runs(&base, "a", &base, "a", 0.05, &c, &e), KB_OK);
    t = render(kb_compare_write_markdown, &c);
    assert_non_null(strstr(t, "mine · src 1a2b3c4d |"));
    free(t);
    kb_compare_release(&c);
    kb_run_release(&edited);
    kb_run_release(&base);
}

static void test_views(void **state)
{
    (void)state;
    kb_run base, other;
    kb_compare c;
    kb_err e = {{0}};
    build_noisy(&base, 0.0); /* constant samples: exact figures */
    copy_run(&other, &base, 1.10, 0.0, 1);
    snprintf(other.results[1].variant, sizeof other.results[1].variant, "a|b");
    snprintf(other.env, sizeof other.env, "KBENCH_LAYERNORM_SROW2_PP=0");
    assert_int_equal(kb_compare_runs(&base, "base.json", &other, "run 3", 0.05, &c, &e), KB_OK);

    char *t = render(kb_compare_write_text, &c);
    /* the switches a side ran with, where it has any */
    kbt_has(t, "00Z \xC2\xB7 env\n      KBENCH_LAYERNORM_SROW2_PP=0\nrule");
    assert_int_equal(kbt_count(t, " env"), 1);
    kbt_has(t, "kbench compare\nBASE  base.json \xC2\xB7 NVIDIA H200 (GPU-aaaa) \xC2\xB7 git abc123");
    kbt_has(t, "\nNEW   run 3 \xC2\xB7 NVIDIA H200");
    kbt_has(t, "rule  ratio = median time NEW / BASE; 95% bootstrap interval (2000 resamples of the "
           "samples); FASTER\n      when it lies below 0.95, SLOWER above 1.05");
    kbt_has(t, "5 cases: 0 faster, 3 slower, 0 same, 0 uncertain, 1 only in BASE, 1 only in NEW\n");
    kbt_has(t, "\nsoftmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=1024\n"
           "variant      BASE       NEW  NEW/BASE  95% interval    verdict\n"
           "naive    812.0 \xC2\xB5s  893.2 \xC2\xB5s    1.100x  [1.100, 1.100]  SLOWER\n"
           "fused    95.00 \xC2\xB5s         -         -  -               ONLY IN BASE\n"
           "a|b             -  104.5 \xC2\xB5s         -  -               ONLY IN NEW\n");
    assert_null(strstr(t, " \n"));
    /* the same comparison writes the same text */
    char *t2 = render(kb_compare_write_text, &c);
    assert_string_equal(t, t2);
    free(t2);
    free(t);

    t = render(kb_compare_write_markdown, &c);
    assert_int_equal(strncmp(t, "## kbench compare: 0 faster, 3 slower, 0 same, 0 uncertain, 1 "
                                "only in BASE, 1 only in NEW\n\n- **BASE**: `base.json`",
                             93),
                     0);
    kbt_has(t, "\n### softmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=1024\n\n"
           "| variant | BASE | NEW | NEW/BASE | 95% interval | verdict | what moved |\n"
           "|---|---:|---:|---:|---|---|---|\n"
           "| naive | 812.0 \xC2\xB5s | 893.2 \xC2\xB5s | 1.100x | [1.100, 1.100] | SLOWER |  |\n");
    kbt_has(t, "| a\\|b | - | ");
    free(t);

    t = render(kb_compare_write_json, &c);
    cJSON *j = cJSON_Parse(t);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "compare_version")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(j, "mode")->valuestring, "same-gpu");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "base"), "env")->valuestring,
                        "");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "new"), "env")->valuestring,
                        "KBENCH_LAYERNORM_SROW2_PP=0");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "regressed")));
    cJSON *sum = cJSON_GetObjectItem(j, "summary");
    assert_int_equal(cJSON_GetObjectItem(sum, "slower")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(sum, "only_in_base")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(sum, "only_in_new")->valueint, 1);
    cJSON *cases = cJSON_GetObjectItem(j, "cases");
    assert_int_equal(cJSON_GetArraySize(cases), 5);
    cJSON *c0 = cJSON_GetArrayItem(cases, 0);
    assert_string_equal(cJSON_GetObjectItem(c0, "verdict")->valuestring, "SLOWER");
    assert_string_equal(cJSON_GetObjectItem(c0, "variant")->valuestring, "naive");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "shape"), "rows")->valueint,
                     4096);
    assert_true(fabs(cJSON_GetObjectItem(c0, "ratio")->valuedouble - 1.1) < 1e-12);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "dram_ratio")));
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "base"), "samples")->valueint, 40);
    cJSON *c1 = cJSON_GetArrayItem(cases, 1);
    assert_string_equal(cJSON_GetObjectItem(c1, "verdict")->valuestring, "ONLY_IN_BASE");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c1, "new")));
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(c1, "base"), "median_us")->valuedouble ==
                95.0);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cases, 4), "verdict")->valuestring,
                        "ONLY_IN_NEW");
    cJSON_Delete(j);
    free(t);
    kb_compare_release(&c);
    kb_run_release(&other);
    kb_run_release(&base);
}

/* The committed GPU reports (the fixtures without them) against themselves
 * and against copies with +-1% noise: no case is FASTER or SLOWER, and every
 * ok case whose samples are tight (relative deviation at most 2%) is SAME. A
 * looser one may be UNCERTAIN even against itself: softmax's coalesced fp32
 * at 174762 x 768 (2026-12-01 21:29 UTC) has its samples in two modes, 280
 * and 320 us, and the bootstrap interval of the median's ratio then spans
 * [0.926, 1.080]. */
static void test_committed_reports(void **state)
{
    (void)state;
    const char *const reports[] = {"results/h200/softmax.json", "results/h200/layernorm.json",
                                   "tests/fixtures/report_counters.json"};
    int any = 0;
    for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
        kb_run run, noisy;
        kb_compare c;
        kb_err e = {{0}};
        if (access(reports[i], R_OK) != 0)
            continue;
        any++;
        assert_int_equal(kb_json_load_run(reports[i], &run, &e), KB_OK);
        for (uint64_t seed = 0; seed < 3; seed++) {
            if (seed == 0)
                copy_run(&noisy, &run, 1.0, 0.0, 1);
            else
                copy_run(&noisy, &run, 1.0, 0.01, seed);
            assert_int_equal(kb_compare_runs(&run, reports[i], &noisy, "noisy", 0.05, &c, &e),
                             KB_OK);
            for (size_t k = 0; k < c.ncases; k++) {
                const kb_cmp_case *q = &c.cases[k];
                const bool ok = q->base->status == KB_R_OK;
                const kb_verdict want = ok ? KB_V_SAME : KB_V_UNCERTAIN;
                const bool loose = ok && q->base->stdrel > 0.02 && q->verdict == KB_V_UNCERTAIN;
                if (q->verdict != want && !loose)
                    fail_msg("%s case %zu (%s): %s [%g, %g] %s", reports[i], k,
                             q->base->variant, kb_verdict_name(q->verdict), q->lo, q->hi,
                             q->why);
            }
            assert_false(kb_compare_regressed(&c));
            kb_compare_release(&c);
            kb_run_release(&noisy);
        }
        kb_run_release(&run);
    }
    if (!any) {
        print_message("no report found from here; run from the repository root\n");
        skip();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arg_is_file),
        cmocka_unit_test(test_bootstrap),
        cmocka_unit_test(test_large_cases_bounded),
        cmocka_unit_test(test_same),
        cmocka_unit_test(test_slower_faster_uncertain),
        cmocka_unit_test(test_reasons_and_sides),
        cmocka_unit_test(test_no_case_in_common),
        cmocka_unit_test(test_cross_gpu),
        cmocka_unit_test(test_what_moved),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_variant_file_sources),
        cmocka_unit_test(test_committed_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

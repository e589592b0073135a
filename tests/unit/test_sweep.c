/* test_sweep.c - the shape sweeps of a run (results/sweep.c): the issue's
 * sweep (cols 32 .. 1048576, rows chosen so that x is about 512 MB) grouped
 * over cols in fp32 and bf16 with the shapes outside it left out; a sweep
 * along one axis with the others fixed; too few shapes, other axes, other
 * dtypes and operators kept apart; the cells, the fastest variant and its
 * share of the ceiling, in cold and batch timing; compute-bound figures. */
#include <math.h>

#include "kbtest.h"
#include "results/result.h"
#include "results/sweep.h"

/* The issue's sweep: cols, and rows = max(1, 512 MB / (cols * size)). */
static const int64_t sweep_cols[] = {32, 33, 128, 768, 1024, 4096, 16384, 65536, 262144,
                                     1048576};
#define SWEEP_BYTES 536870912.0

static int64_t sweep_rows(int64_t cols, int size)
{
    const int64_t r = (int64_t)(SWEEP_BYTES / ((double)cols * size));
    return r < 1 ? 1 : r;
}

/* A result of softmax at rows x cols: ok, memory-bound, figures from the
 * model bytes and median against a copy bandwidth of 4000 GB/s. */
static void add(kb_run *run, const char *variant, const char *dtype, int64_t rows, int64_t cols,
                kb_rstatus status, double gbps)
{
    kb_result r;
    kbt_case(&r, "softmax", variant, dtype, rows, cols);
    snprintf(r.bound, sizeof r.bound, "memory");
    r.status = status;
    r.bytes = 2.0 * (double)rows * (double)cols * (strcmp(dtype, "fp32") == 0 ? 4 : 2);
    r.median_us = r.bytes / (gbps * 1e3);
    r.batch_us = r.median_us * 2; /* batch at half the speed */
    kb_result_derive(&r, &run->dev);
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void init_run(kb_run *run)
{
    kb_run_init(run);
    run->dev.copy_gbps = 4000;
    run->dev.copy_batch_gbps = 3000;
}

/* The sweep of op and dtype in s, or NULL. */
static const kb_sweep *find(const kb_sweeps *s, const char *dtype)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->s[i].dtype, dtype) == 0)
            return &s->s[i];
    return NULL;
}

/* Whether the sweep has a point at cols. */
static int has_point(const kb_sweep *s, int64_t cols)
{
    for (size_t p = 0; p < s->npoints; p++)
        if (s->value[p] == cols)
            return 1;
    return 0;
}

/* The issue's shapes, in the order tests/gpu/h200.sh runs them: the report's
 * own shapes, the sweep, then rows=3 x 262144; fused at 4000 * cols / (cols +
 * 1000) GB/s (a cliff at short rows), naive at 100 GB/s. */
static void issue_run(kb_run *run)
{
    static const char *const dtypes[] = {"fp32", "bf16"};
    init_run(run);
    for (size_t d = 0; d < 2; d++) {
        const char *dt = dtypes[d];
        const int size = d == 0 ? 4 : 2;
        const int64_t shapes[][2] = {{32768, 4096}, {8192, 32768}, {4099, 3001}};
        for (size_t i = 0; i < 3; i++) {
            add(run, "naive", dt, shapes[i][0], shapes[i][1], KB_R_OK, 100);
            add(run, "fused", dt, shapes[i][0], shapes[i][1], KB_R_OK, 3000);
        }
        for (size_t i = 0; i < KB_COUNT(sweep_cols); i++) {
            const int64_t c = sweep_cols[i], r = sweep_rows(c, size);
            add(run, "naive", dt, r, c, KB_R_OK, 100);
            add(run, "fused", dt, r, c, KB_R_OK, 4000.0 * (double)c / ((double)c + 1000));
        }
        add(run, "naive", dt, 3, 262144, KB_R_OK, 100);
        add(run, "fused", dt, 3, 262144, KB_R_OK, 500);
    }
}

static void groups_the_issue_sweep(void **state)
{
    (void)state;
    kb_run run;
    kb_sweeps s;
    kb_err e = {{0}};
    issue_run(&run);
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 2);
    const kb_sweep *f = find(&s, "fp32"), *b = find(&s, "bf16");
    assert_non_null(f);
    assert_non_null(b);
    assert_string_equal(f->op, "softmax");
    assert_string_equal(f->axis, "cols");
    assert_string_equal(f->partner, "rows");
    assert_string_equal(f->fixed, "");
    /* fp32: the ten cols of the sweep, ascending (rows=32768, cols=4096 is its
     * point at 4096); 8192 x 32768 is twice the size, and 3 x 262144 and
     * 4099 x 3001 are far from it */
    assert_int_equal(f->npoints, KB_COUNT(sweep_cols));
    for (size_t p = 0; p < f->npoints; p++) {
        assert_int_equal(f->value[p], sweep_cols[p]);
        assert_int_equal(f->partner_value[p], sweep_rows(sweep_cols[p], 4));
    }
    assert_false(has_point(f, 3001));
    assert_false(has_point(f, 32768));
    /* bf16: the same ten, and 8192 x 32768, which is that size in bf16 */
    assert_int_equal(b->npoints, KB_COUNT(sweep_cols) + 1);
    assert_true(has_point(b, 32768));
    assert_false(has_point(b, 3001));
    for (size_t p = 1; p < b->npoints; p++)
        assert_true(b->value[p - 1] < b->value[p]);
    /* rows=3 x 262144 stays out: the point at 262144 has rows 512 (fp32) */
    for (size_t p = 0; p < f->npoints; p++)
        if (f->value[p] == 262144)
            assert_int_equal(f->partner_value[p], 512);
    /* cells: naive and fused; fused is the fastest from cols=1024 up */
    assert_int_equal(f->nvariants, 2);
    assert_string_equal(f->variant[0], "naive");
    assert_string_equal(f->variant[1], "fused");
    assert_int_equal(f->compute, 0);
    assert_true(f->ceiling == 4000);
    for (size_t p = 0; p < f->npoints; p++) {
        /* at 4096 the point is the report's own 32768 x 4096 (fused 3000) */
        const double fused = f->value[p] == 4096 ? 3000
                             : 4000.0 * (double)f->value[p] / ((double)f->value[p] + 1000);
        assert_true(fabs(f->figure[p * 2] - 100) < 1e-6);
        assert_true(fabs(f->figure[p * 2 + 1] - fused) < 1e-6);
        assert_int_equal(f->best[p], fused > 100 ? 1 : 0);
        assert_true(fabs(f->best_pct[p] - 100 * (fused > 100 ? fused : 100) / 4000) < 1e-6);
        const kb_result *r = &run.results[f->cell[p * 2 + 1]];
        assert_string_equal(r->variant, "fused");
        assert_int_equal(r->shape[1], f->value[p]);
    }
    kb_sweeps_release(&s);
    kb_sweeps_release(&s); /* twice is safe */
    kb_run_release(&run);
}

/* 512e6 bytes instead of 2^29, and rows rounded down: still one sweep. */
static void decimal_size_groups_too(void **state)
{
    (void)state;
    kb_run run;
    kb_sweeps s;
    kb_err e = {{0}};
    init_run(&run);
    for (size_t i = 0; i < KB_COUNT(sweep_cols); i++) {
        const int64_t c = sweep_cols[i], r = (int64_t)(512e6 / ((double)c * 2));
        add(&run, "fused", "bf16", r < 1 ? 1 : r, c, KB_R_OK, 1000);
    }
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.s[0].npoints, KB_COUNT(sweep_cols));
    kb_sweeps_release(&s);
    kb_run_release(&run);
}

/* rows fixed, cols varied: a sweep with no partner; two shapes are none;
 * another dtype or operator is another sweep, or none. */
static void one_axis_and_too_few(void **state)
{
    (void)state;
    kb_run run;
    kb_sweeps s;
    kb_err e = {{0}};
    init_run(&run);
    add(&run, "fused", "fp32", 1024, 4096, KB_R_OK, 3000);
    add(&run, "fused", "fp32", 1024, 1024, KB_R_OK, 2000);
    add(&run, "fused", "bf16", 1024, 1024, KB_R_OK, 2000); /* bf16: two shapes only */
    add(&run, "fused", "bf16", 1024, 2048, KB_R_OK, 2000);
    add(&run, "fused", "fp32", 1024, 2048, KB_R_OK, 2500);
    add(&run, "fused", "fp32", 512, 2048, KB_R_OK, 2500); /* another rows: not a point */
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 1);
    const kb_sweep *f = &s.s[0];
    assert_string_equal(f->dtype, "fp32");
    assert_string_equal(f->axis, "cols");
    assert_string_equal(f->partner, "");
    assert_string_equal(f->fixed, "rows=1024");
    assert_int_equal(f->npoints, 3);
    assert_int_equal(f->value[0], 1024);
    assert_int_equal(f->value[1], 2048);
    assert_int_equal(f->value[2], 4096);
    assert_true(fabs(f->figure[1] - 2500) < 1e-6);
    kb_sweeps_release(&s);
    kb_run_release(&run);

    /* rows varied with cols fixed: the sweep is over rows */
    init_run(&run);
    add(&run, "fused", "fp32", 10, 4096, KB_R_OK, 300);
    add(&run, "fused", "fp32", 100, 4096, KB_R_OK, 3000);
    add(&run, "fused", "fp32", 1000, 4096, KB_R_OK, 3500);
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.s[0].axis, "rows");
    assert_string_equal(s.s[0].fixed, "cols=4096");
    kb_sweeps_release(&s);
    kb_run_release(&run);

    /* no results, no sweeps */
    init_run(&run);
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 0);
    kb_sweeps_release(&s);
    kb_run_release(&run);
}

/* A skipped variant has no column; a mismatch leaves its cell empty; the
 * fastest is among the ok results; batch timing takes the batch figures. */
static void cells_best_and_timing(void **state)
{
    (void)state;
    kb_run run;
    kb_sweeps s;
    kb_err e = {{0}};
    init_run(&run);
    for (int64_t c = 1024; c <= 4096; c *= 2) {
        add(&run, "naive", "fp32", 1024, c, KB_R_OK, 100);
        add(&run, "vendor", "fp32", 1024, c, KB_R_SKIPPED, NAN);
        add(&run, "fused", "fp32", 1024, c, c == 2048 ? KB_R_MISMATCH : KB_R_OK, 2000);
    }
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 1);
    const kb_sweep *f = &s.s[0];
    assert_int_equal(f->nvariants, 2);
    assert_string_equal(f->variant[1], "fused");
    assert_int_equal(f->cell[1 * 2 + 1], -1);
    assert_true(isnan(f->figure[1 * 2 + 1]));
    assert_int_equal(f->best[0], 1);
    assert_int_equal(f->best[1], 0); /* fused's mismatch: naive is the fastest ok */
    assert_true(fabs(f->best_pct[0] - 50) < 1e-6);
    assert_true(fabs(f->best_pct[1] - 2.5) < 1e-6);
    kb_sweeps_release(&s);

    run.timing = KB_TIMING_BATCH;
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    f = &s.s[0];
    assert_true(f->ceiling == 3000);
    assert_true(fabs(f->figure[1] - 1000) < 1e-6);
    assert_true(fabs(f->best_pct[0] - 100.0 * 1000 / 3000) < 1e-6);
    kb_sweeps_release(&s);
    kb_run_release(&run);
}

/* A compute-bound sweep shows TFLOP/s against the dtype's compute peak. */
static void compute_bound_sweep(void **state)
{
    (void)state;
    kb_run run;
    kb_sweeps s;
    kb_err e = {{0}};
    init_run(&run);
    run.dev.mma_tflops = 800;
    for (int64_t c = 1024; c <= 4096; c *= 2) {
        kb_result r;
        kbt_case(&r, "attention", "wgmma", "bf16", 4, c);
        snprintf(r.bound, sizeof r.bound, "compute");
        r.status = KB_R_OK;
        r.bytes = 1e6;
        r.flops = 4e9 * (double)c;
        r.median_us = 1e4;
        kb_result_derive(&r, &run.dev);
        assert_int_equal(kb_run_add(&run, &r), 0);
    }
    assert_int_equal(kb_run_sweeps(&run, &s, &e), KB_OK);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.s[0].compute, 1);
    assert_true(s.s[0].ceiling == 800);
    assert_true(fabs(s.s[0].figure[2] - 4e9 * 4096 / 1e10) < 1e-6);
    assert_true(fabs(s.s[0].best_pct[2] - 100 * (4e9 * 4096 / 1e10) / 800) < 1e-6);
    kb_sweeps_release(&s);
    kb_run_release(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(groups_the_issue_sweep),
        cmocka_unit_test(decimal_size_groups_too),
        cmocka_unit_test(one_axis_and_too_few),
        cmocka_unit_test(cells_best_and_timing),
        cmocka_unit_test(compute_bound_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_results.c - the figures of the result model (results/figures.c): the
 * speed-up over naive kept current as results join a run, whatever their
 * order; the per-result summaries of the kernels; the longest kernel; the
 * arithmetic intensity; derived figures; the metric-set names; occupancy of
 * one kernel; cold and batch figures each against their own ceiling; flag and
 * timing names. */
#include <math.h>

#include "kbtest.h"
#include "results/metrics.h"
#include "results/result.h"

static void add(kb_run *run, const char *variant, const char *dtype, int64_t rows,
                kb_rstatus status, double median)
{
    kb_result r;
    kbt_case(&r, "softmax", variant, dtype, rows, 1024);
    r.status = status;
    r.median_us = median;
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void speedup_follows_the_case(void **state)
{
    (void)state;
    kb_run run;
    kb_run_init(&run);
    add(&run, "fused", "fp32", 8, KB_R_OK, 25);  /* before its naive */
    assert_true(isnan(run.results[0].speedup));
    add(&run, "naive", "fp32", 8, KB_R_OK, 100);
    add(&run, "online", "fp32", 8, KB_R_OK, 40);
    add(&run, "fused", "bf16", 8, KB_R_OK, 10);   /* another case: no naive */
    add(&run, "fused", "fp32", 16, KB_R_OK, 10);  /* another shape */
    add(&run, "broken", "fp32", 8, KB_R_MISMATCH, 5);
    assert_true(run.results[0].speedup == 4.0);
    assert_true(run.results[1].speedup == 1.0);
    assert_true(run.results[2].speedup == 2.5);
    assert_true(isnan(run.results[3].speedup));
    assert_true(isnan(run.results[4].speedup));
    assert_true(isnan(run.results[5].speedup));
    kb_run_release(&run);

    /* a naive that failed is no baseline */
    kb_run_init(&run);
    add(&run, "naive", "fp32", 8, KB_R_FAILED, NAN);
    add(&run, "fused", "fp32", 8, KB_R_OK, 25);
    assert_true(isnan(run.results[1].speedup));
    kb_run_release(&run);
}

static void set_kernel(kb_kernel *k, int regs, int64_t local, double occ, double duration,
                       int nstalls)
{
    memset(k, 0, sizeof *k);
    k->registers = regs;
    k->local_bytes = local;
    k->occupancy = occ;
    if (isfinite(duration)) {
        snprintf(k->metrics[0].name, sizeof k->metrics[0].name, "%s", KB_METRIC_DURATION);
        k->metrics[0].value = duration;
        k->nmetrics = 1;
    }
    static const char *const reasons[] = {"long_scoreboard", "barrier", "wait"};
    static const double frac[] = {0.52, 0.18, 0.1};
    for (int i = 0; i < nstalls; i++) {
        snprintf(k->stalls[i].name, sizeof k->stalls[i].name, "%s", reasons[i]);
        k->stalls[i].value = frac[i];
    }
    k->nstalls = nstalls;
}

static void kernels_summarised(void **state)
{
    (void)state;
    kb_result r;
    kb_result_init(&r);
    r.kernels = calloc(3, sizeof *r.kernels);
    r.nkernels = 3;
    set_kernel(&r.kernels[0], 40, 0, 0.5, 100.0, 0);
    set_kernel(&r.kernels[1], 32, 16, 0.75, 900.0, 3);
    set_kernel(&r.kernels[2], 64, 0, 1.0, 300.0, 2);
    kb_result_summarise_kernels(&r);
    assert_int_equal(r.registers, 64);
    assert_int_equal(r.local_bytes, 16);
    assert_true(r.theoretical_occupancy == 75.0);
    assert_string_equal(r.top_stalls, "long_sb 52% barrier 18%");
    assert_int_equal(kb_result_longest_kernel(&r, 0), 1);
    r.kernels[1].nstalls = 0;
    assert_int_equal(kb_result_longest_kernel(&r, 1), 2);
    r.kernels[2].nstalls = 0;
    assert_int_equal(kb_result_longest_kernel(&r, 1), -1);
    kb_result_release(&r);

    /* without counters: the first kernel stands for the result */
    kb_result_init(&r);
    r.kernels = calloc(2, sizeof *r.kernels);
    r.nkernels = 2;
    set_kernel(&r.kernels[0], 24, 0, 1.0, NAN, 0);
    set_kernel(&r.kernels[1], 30, 0, 0.5, NAN, 0);
    kb_result_summarise_kernels(&r);
    assert_true(r.theoretical_occupancy == 100.0);
    assert_int_equal(r.registers, 30);
    assert_string_equal(r.top_stalls, "");
    kb_result_release(&r);
}

static void derived_figures(void **state)
{
    (void)state;
    kb_result r;
    kb_result_init(&r);
    r.median_us = 100;
    r.bytes = 4e8;
    r.flops = 2e9;
    r.dram_bytes = 5e8;
    kb_device d;
    kb_device_init(&d);
    d.copy_gbps = 8000;
    d.mma_tflops = 800;
    d.fp32_tflops = 50;
    kb_result_derive(&r, &d);
    assert_true(r.gbps == 4e8 / 1e5);
    assert_true(fabs(r.pct_peak - 50.0) < 1e-12);
    assert_true(r.dram_gbps == 5e8 / 1e5);
    assert_true(r.excess_traffic == 1.25);
    assert_true(r.tflops == 2e9 / 1e8);
    assert_true(kb_result_intensity(&r) == 5.0);
    snprintf(r.bound, sizeof r.bound, "compute");
    snprintf(r.dtype, sizeof r.dtype, "fp32");
    kb_result_derive(&r, &d);
    assert_true(fabs(r.pct_peak - 100.0 * 20.0 / 50.0) < 1e-12);
    /* flop per SM cycle: 2e9 flop in 100 us on 100 SMs at 1000 MHz */
    r.status = KB_R_OK;
    r.sm_clock_mhz = 1000;
    assert_true(fabs(kb_result_flop_per_clock(&r, 100) - 200.0) < 1e-9);
    assert_true(isnan(kb_result_flop_per_clock(&r, 0)));
    r.sm_clock_mhz = NAN;
    assert_true(isnan(kb_result_flop_per_clock(&r, 100)));
    r.sm_clock_mhz = 1000;
    r.status = KB_R_MISMATCH;
    assert_true(isnan(kb_result_flop_per_clock(&r, 100)));
    r.status = KB_R_OK;
    snprintf(r.bound, sizeof r.bound, "memory");
    assert_true(isnan(kb_result_flop_per_clock(&r, 100)));
    snprintf(r.bound, sizeof r.bound, "compute");
    r.bytes = NAN;
    assert_true(isnan(kb_result_intensity(&r)));
    kb_result_derive(&r, &d);
    assert_true(isnan(r.excess_traffic));
    assert_false(kb_result_has_counters(&r)); /* set "none" */
    snprintf(r.metric_set, sizeof r.metric_set, "core");
    assert_true(kb_result_has_counters(&r));
    snprintf(r.counters_reason, sizeof r.counters_reason, "no permission");
    assert_false(kb_result_has_counters(&r));
}

/* Sets kernel k's achieved occupancy counter (%), after its duration. */
static void set_achieved(kb_kernel *k, double pct)
{
    const int m = k->nmetrics++;
    snprintf(k->metrics[m].name, sizeof k->metrics[m].name, "%s", KB_METRIC_OCCUPANCY);
    k->metrics[m].value = pct;
}

/* Achieved and theoretical occupancy are of one kernel, the longest: a
 * short kernel of high achieved occupancy never pairs with the long one's
 * theoretical figure (naive attention once showed 83/75%). */
static void occupancy_pairs_one_kernel(void **state)
{
    (void)state;
    kb_result r;
    kb_result_init(&r);
    r.kernels = calloc(3, sizeof *r.kernels);
    r.nkernels = 3;
    set_kernel(&r.kernels[0], 32, 0, 1.00, 200.0, 0);
    set_achieved(&r.kernels[0], 95.0);
    set_kernel(&r.kernels[1], 40, 0, 0.75, 900.0, 0);
    set_achieved(&r.kernels[1], 70.0);
    set_kernel(&r.kernels[2], 32, 0, 1.00, 300.0, 0);
    set_achieved(&r.kernels[2], 98.0);
    kb_result_summarise_kernels(&r);
    const int longest = kb_result_longest_kernel(&r, 0);
    assert_int_equal(longest, 1);
    assert_true(r.theoretical_occupancy == 100.0 * r.kernels[longest].occupancy);
    assert_true(r.achieved_occupancy == 70.0);
    assert_true(r.achieved_occupancy <= r.theoretical_occupancy);
    /* the longest kernel without an achieved figure: none, never another's */
    r.kernels[1].nmetrics = 1;
    r.achieved_occupancy = NAN;
    kb_result_summarise_kernels(&r);
    assert_true(isnan(r.achieved_occupancy));
    assert_true(r.theoretical_occupancy == 75.0);
    kb_result_release(&r);
}

/* Cold figures against the cold copy ceiling, batch against batch; the speed
 * over naive of each timing from that timing; the headline picks one. */
static void timings_compare_like_with_like(void **state)
{
    (void)state;
    kb_device d;
    kb_device_init(&d);
    d.copy_gbps = 4000;
    d.copy_batch_gbps = 5000;
    d.mma_tflops = 800;
    kb_run run;
    kb_run_init(&run);
    kb_result r;
    kbt_case(&r, "softmax", "naive", "fp32", 8, 1024);
    r.status = KB_R_OK;
    r.bytes = 4e8;
    r.median_us = 200;
    r.batch_us = 160;
    kb_result_derive(&r, &d);
    assert_true(r.gbps == 2000 && r.gbps_batch == 2500);
    assert_true(r.pct_peak == 50.0 && r.pct_peak_batch == 50.0);
    assert_int_equal(kb_run_add(&run, &r), 0);
    kbt_case(&r, "softmax", "fused", "fp32", 8, 1024);
    r.status = KB_R_OK;
    r.bytes = 4e8;
    r.median_us = 100;
    r.batch_us = 40;
    kb_result_derive(&r, &d);
    assert_int_equal(kb_run_add(&run, &r), 0);
    const kb_result *f = &run.results[1];
    assert_true(f->speedup == 2.0 && f->speedup_batch == 4.0);
    kb_timed cold = kb_result_timed(f, KB_TIMING_COLD), batch = kb_result_timed(f, KB_TIMING_BATCH);
    assert_true(cold.us == 100 && cold.pct_peak == 100.0 && cold.speedup == 2.0);
    assert_true(batch.us == 40 && batch.gbps == 1e4 && batch.pct_peak == 200.0 &&
                batch.speedup == 4.0);
    /* no batch time, or no batch ceiling: no batch figures */
    r = run.results[1];
    r.batch_us = NAN;
    kb_result_derive(&r, &d);
    assert_true(isnan(r.gbps_batch) && isnan(r.pct_peak_batch) && r.pct_peak == 100.0);
    r.batch_us = 40;
    d.copy_batch_gbps = NAN;
    kb_result_derive(&r, &d);
    assert_true(r.gbps_batch == 1e4 && isnan(r.pct_peak_batch));
    kb_run_release(&run);
}

static void flag_and_timing_names(void **state)
{
    (void)state;
    char buf[96];
    unsigned f = 0, bit = 0;
    kb_flags_str(0, buf, sizeof buf);
    assert_string_equal(buf, "");
    kb_flags_str(KB_FLAG_GPU_SHARED | KB_FLAG_L2_RESIDENT, buf, sizeof buf);
    assert_string_equal(buf, "gpu_shared,l2_resident");
    assert_int_equal(kb_flags_parse(buf, &f), 0);
    assert_int_equal(f, KB_FLAG_GPU_SHARED | KB_FLAG_L2_RESIDENT);
    assert_int_equal(kb_flags_parse("", &f), 0);
    assert_int_equal(f, 0);
    assert_int_equal(kb_flags_parse("gpu_shared,noisy", &f), -1);
    assert_int_equal(kb_flag_parse("gpu_unchecked", &bit), 0);
    assert_int_equal(bit, KB_FLAG_GPU_UNCHECKED);
    assert_null(kb_flag_name(KB_NFLAGS));
    kb_timing t = KB_TIMING_COLD;
    assert_int_equal(kb_timing_parse("batch", &t), 0);
    assert_int_equal(t, KB_TIMING_BATCH);
    assert_int_equal(kb_timing_parse("warm", &t), -1);
    assert_string_equal(kb_timing_name(KB_TIMING_COLD), "cold");
}

static void metric_set_names(void **state)
{
    (void)state;
    static const char *const names[] = {"none", "core", "sol", "stalls", "full"};
    for (int i = 0; i < KB_METRICS_COUNT; i++) {
        kb_metric_set s = KB_METRICS_COUNT;
        assert_int_equal(kb_metric_set_parse(names[i], &s), 0);
        assert_int_equal(s, i);
        assert_string_equal(kb_metric_set_name(s), names[i]);
    }
    kb_metric_set s = KB_METRICS_SOL;
    assert_int_equal(kb_metric_set_parse("Core", &s), -1);
    assert_int_equal(s, KB_METRICS_SOL);
    assert_string_equal(kb_metric_set_name(KB_METRICS_COUNT), "?");
}

/* Metrics read for people: kbench's own by table, others by the form of the
 * name, an unknown one labelled by its name. */
static void metric_labels_and_units(void **state)
{
    (void)state;
    kb_metric_info m = kb_metric_info_of(KB_METRIC_DURATION);
    assert_string_equal(m.label, "duration");
    assert_int_equal(m.unit, KB_UNIT_NS);
    m = kb_metric_info_of("lts__t_sector_hit_rate.pct");
    assert_string_equal(m.label, "L2 hit rate");
    assert_int_equal(m.unit, KB_UNIT_PCT);
    static const char other_pct[] = "smsp__foo.avg.pct_of_peak_sustained_active";
    m = kb_metric_info_of(other_pct);
    assert_ptr_equal(m.label, other_pct);
    assert_int_equal(m.unit, KB_UNIT_PCT);
    assert_int_equal(kb_metric_info_of("lts__t_bytes.sum").unit, KB_UNIT_BYTES);
    assert_int_equal(kb_metric_info_of("sm__cycles_elapsed.max").unit, KB_UNIT_COUNT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(speedup_follows_the_case),
        cmocka_unit_test(kernels_summarised),
        cmocka_unit_test(metric_labels_and_units),
        cmocka_unit_test(derived_figures),
        cmocka_unit_test(metric_set_names),
        cmocka_unit_test(occupancy_pairs_one_kernel),
        cmocka_unit_test(timings_compare_like_with_like),
        cmocka_unit_test(flag_and_timing_names),
    };
    return cmocka_run_group_tests_name("results", tests, NULL, NULL);
}

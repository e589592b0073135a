/* test_json.c - the JSON report: exact round trips (run, result over the child
 * pipe, doubles, seeds, NaN as null, counters: metrics in order, stalls, the
 * reason counters are missing; compute ceilings, bound, extra memory),
 * validation messages naming the bad field, older reports without counter or
 * ceiling fields, schema_version checks and report files (truncated, missing,
 * not a report, the fixtures). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kbtest.h"
#include "store/json.h"

static char tmpdir[64];

static void add_kernel(kb_result *r, const char *name, unsigned gx, unsigned bx, int regs)
{
    kb_kernel *k = realloc(r->kernels, (size_t)(r->nkernels + 1) * sizeof *k);
    assert_non_null(k);
    r->kernels = k;
    k = &r->kernels[r->nkernels++];
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    k->grid[0] = gx;
    k->grid[1] = 1;
    k->grid[2] = 1;
    k->block[0] = bx;
    k->block[1] = 1;
    k->block[2] = 1;
    k->registers = regs;
    k->static_smem = 4096;
    k->dynamic_smem = 0;
    k->local_bytes = 0;
    k->blocks_per_sm = 8;
    k->occupancy = 0.984375;
}

static void add_result(kb_run *run, const char *variant, kb_rstatus status, double median,
                       size_t nsamples)
{
    kb_result r;
    kb_result_init(&r);
    snprintf(r.op, sizeof r.op, "softmax");
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.dtype, sizeof r.dtype, "fp32");
    r.naxes = 2;
    snprintf(r.axis[0], sizeof r.axis[0], "rows");
    snprintf(r.axis[1], sizeof r.axis[1], "cols");
    r.shape[0] = 4096;
    r.shape[1] = 1023;
    r.status = status;
    r.seed = 0x9E3779B97F4A7C15ull; /* beyond 2^53: written as a string */
    r.checked = status != KB_R_SKIPPED;
    r.atol = 1e-5;
    r.rtol = 1e-4;
    if (status == KB_R_SKIPPED) {
        snprintf(r.reason, sizeof r.reason, "fp32 is not supported by %s", variant);
    } else {
        r.max_abs_err = status == KB_R_MISMATCH ? 0.125 : 3.0517578125e-07 / 3.0;
        r.rel_l2_err = 1.0 / 3.0 * 1e-7;
        r.rows_checked = 4096;
        if (status == KB_R_MISMATCH)
            snprintf(r.reason, sizeof r.reason, "max abs err 0.125 at row 17, col 3 > tol");
        r.samples_us = malloc(nsamples * sizeof *r.samples_us);
        assert_non_null(r.samples_us);
        for (size_t i = 0; i < nsamples; i++)
            r.samples_us[i] = median * (1.0 + 0.01 * sin((double)i)) + 1e-13 * (double)i;
        r.nsamples = nsamples;
        kb_result_summarise(&r);
        r.sm_clock_mhz = 1980.0;
        r.bytes = 2.0 * 4096 * 1023 * 4;
        r.flops = 5.0 * 4096 * 1023;
        kb_result_derive(&r, &(kb_device){.copy_gbps = 4012.345678901234});
        add_kernel(&r, "softmax_rows_kernel<float>", 4096, 256, 32);
        if (strcmp(variant, "naive") == 0)
            add_kernel(&r, "softmax_reduce_kernel", 16, 1024, 40);
        r.registers = strcmp(variant, "naive") == 0 ? 40 : 32;
        r.local_bytes = 0;
        r.theoretical_occupancy = 98.4375;
    }
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void set_value(kb_named_value *v, const char *name, double value)
{
    snprintf(v->name, sizeof v->name, "%s", name);
    v->value = value;
}

/* The counters a `--metrics stalls` pass gives the first kernel of r. */
static void add_counters(kb_result *r)
{
    kb_kernel *k = &r->kernels[0];
    snprintf(r->metric_set, sizeof r->metric_set, "stalls");
    r->passes = 3;
    r->dram_bytes = 33521664.0 * 1.0203;
    r->excess_traffic = r->dram_bytes / r->bytes;
    r->achieved_occupancy = 61.3;
    snprintf(r->top_stalls, sizeof r->top_stalls, "long_sb 52%% barrier 18%%");
    kb_result_derive(r, &(kb_device){.copy_gbps = 4012.345678901234});
    snprintf(k->occ_limiter, sizeof k->occ_limiter, "registers");
    set_value(&k->metrics[0], "gpu__time_duration.sum", 94208.0);
    set_value(&k->metrics[1], "dram__bytes_read.sum", 16760832.0);
    set_value(&k->metrics[2], "dram__bytes_write.sum", 17441554.0);
    set_value(&k->metrics[3], "sm__warps_active.avg.pct_of_peak_sustained_active", 61.3);
    set_value(&k->metrics[4], "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
              NAN);
    set_value(&k->metrics[5], "dram__throughput.avg.pct_of_peak_sustained_elapsed",
              1.0 / 3.0 * 100.0);
    k->nmetrics = 6;
    set_value(&k->stalls[0], "long_scoreboard", 0.52);
    set_value(&k->stalls[1], "barrier", 0.18);
    set_value(&k->stalls[2], "math_pipe_throttle", 0.1 + 0.2);
    k->nstalls = 3;
}

/* A realistic run: several results, samples, NaN fields, kernels. */
/* The SHA-256 of "abc", standing for a variant file's source. */
#define SOURCE_SHA "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static void build_run(kb_run *run)
{
    kb_run_init(run);
    snprintf(run->version, sizeof run->version, "0.1.0");
    snprintf(run->git, sizeof run->git, "0123456789ab-dirty");
    snprintf(run->argv, sizeof run->argv, "kbench run softmax --tag \"a, b\"");
    snprintf(run->env, sizeof run->env, "KBENCH_LAYERNORM_SROW2_PP=0 KBENCH_SOFTMAX_GRID_TRIM=1");
    snprintf(run->started, sizeof run->started, "2025-06-01T10:00:00Z");
    snprintf(run->finished, sizeof run->finished, "2025-06-01T10:02:03Z");
    snprintf(run->state, sizeof run->state, "complete");
    snprintf(run->tag, sizeof run->tag, "nightly \"h200\"\n");
    kb_device *d = &run->dev;
    snprintf(d->name, sizeof d->name, "NVIDIA H200");
    snprintf(d->uuid, sizeof d->uuid, "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
    d->cc_major = 9;
    d->cc_minor = 0;
    d->sms = 132;
    d->memory_bytes = 150754820096LL;
    d->l2_bytes = 52428800;
    d->sm_clock_mhz = 1980;
    d->mem_clock_mhz = 3201;
    d->mem_bus_bits = 6144;
    snprintf(d->driver, sizeof d->driver, "13.0");
    snprintf(d->runtime, sizeof d->runtime, "12.8");
    d->copy_gbps = 4012.345678901234;
    d->mma_tflops = 989.5 / 3.0;
    d->fp32_tflops = NAN; /* not calibrated: null */
    add_result(run, "naive", KB_R_OK, 812.25, 37);
    add_result(run, "coalesced", KB_R_OK, 95.1, 101);
    add_result(run, "fused", KB_R_MISMATCH, 40.0, 5);
    add_result(run, "vendor", KB_R_SKIPPED, NAN, 0);
    add_counters(&run->results[1]);
    kb_result *naive = &run->results[0];
    snprintf(naive->metric_set, sizeof naive->metric_set, "none");
    snprintf(naive->counters_reason, sizeof naive->counters_reason,
             "counters not permitted (ERR_NVGPUCTRPERM): run as root, or load nvidia with "
             "NVreg_RestrictProfilingToAdminUsers=0");
    snprintf(naive->kernels[1].occ_limiter, sizeof naive->kernels[1].occ_limiter,
             "shared memory");
    /* A compute-bound result that needs a scratch buffer. */
    kb_result *fused = &run->results[2];
    snprintf(fused->bound, sizeof fused->bound, "compute");
    fused->extra_bytes = 4294967296.0 + 1.0 / 3.0;
    kb_result_derive(fused, d);
    /* A result of a variant file of the user's own. */
    snprintf(fused->source_path, sizeof fused->source_path, "./kernels/fused \"v2\".cu");
    snprintf(fused->source_sha256, sizeof fused->source_sha256, "%s", SOURCE_SHA);
    /* the batch time, flags and dated ceilings */
    d->copy_batch_gbps = 4100.0 + 1.0 / 7.0;
    snprintf(d->ceilings_at, sizeof d->ceilings_at, "2025-05-30T08:00:00Z");
    snprintf(d->ceilings_driver, sizeof d->ceilings_driver, "580.159");
    d->ceilings_sm_clock_mhz = 1980.25;
    d->ceilings_mem_clock_mhz = 3201;
    kb_result *co = &run->results[1];
    co->batch_us = 90.0 + 1.0 / 3.0;
    co->batch_stdrel = 0.001;
    co->batch_launches = 12;
    co->batch_sm_clock_mhz = 1590.5;
    co->flags = KB_FLAG_GPU_SHARED | KB_FLAG_L2_RESIDENT;
    co->throttled = 1;
    snprintf(co->throttle_reason, sizeof co->throttle_reason, "sw power cap, hw slowdown");
    kb_result_derive(co, d);
}

static char *print_run(const kb_run *run)
{
    cJSON *root = kb_json_from_run(run);
    assert_non_null(root);
    char *s = cJSON_Print(root);
    assert_non_null(s);
    cJSON_Delete(root);
    return s;
}

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same_result(const kb_result *a, const kb_result *b)
{
    assert_string_equal(a->op, b->op);
    assert_string_equal(a->variant, b->variant);
    assert_string_equal(a->dtype, b->dtype);
    assert_int_equal(a->naxes, b->naxes);
    for (int i = 0; i < a->naxes; i++) {
        assert_string_equal(a->axis[i], b->axis[i]);
        assert_int_equal(a->shape[i], b->shape[i]);
    }
    assert_int_equal(a->status, b->status);
    assert_string_equal(a->reason, b->reason);
    assert_true(a->seed == b->seed);
    assert_int_equal(a->checked, b->checked);
    const double da[] = {a->max_abs_err,    a->rel_l2_err,         a->atol,
                         a->rtol,           a->median_us,          a->min_us,
                         a->max_us,         a->stdrel,             a->sm_clock_mhz,
                         a->bytes,          a->flops,              a->gbps,
                         a->tflops,         a->pct_peak,           a->dram_bytes,
                         a->excess_traffic, a->achieved_occupancy, a->dram_gbps,
                         a->theoretical_occupancy, a->extra_bytes};
    const double db[] = {b->max_abs_err,    b->rel_l2_err,         b->atol,
                         b->rtol,           b->median_us,          b->min_us,
                         b->max_us,         b->stdrel,             b->sm_clock_mhz,
                         b->bytes,          b->flops,              b->gbps,
                         b->tflops,         b->pct_peak,           b->dram_bytes,
                         b->excess_traffic, b->achieved_occupancy, b->dram_gbps,
                         b->theoretical_occupancy, b->extra_bytes};
    for (size_t i = 0; i < sizeof da / sizeof da[0]; i++)
        assert_true(same_double(da[i], db[i]));
    assert_int_equal(a->rows_checked, b->rows_checked);
    assert_string_equal(a->metric_set, b->metric_set);
    assert_int_equal(a->passes, b->passes);
    assert_string_equal(a->counters_reason, b->counters_reason);
    assert_int_equal(a->registers, b->registers);
    assert_int_equal(a->local_bytes, b->local_bytes);
    assert_string_equal(a->top_stalls, b->top_stalls);
    assert_string_equal(a->bound, b->bound);
    assert_string_equal(a->source_path, b->source_path);
    assert_string_equal(a->source_sha256, b->source_sha256);
    assert_int_equal(a->throttled, b->throttled);
    assert_string_equal(a->throttle_reason, b->throttle_reason);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->batch_launches, b->batch_launches);
    assert_true(same_double(a->batch_us, b->batch_us));
    assert_true(same_double(a->batch_stdrel, b->batch_stdrel));
    assert_true(same_double(a->batch_sm_clock_mhz, b->batch_sm_clock_mhz));
    assert_true(same_double(a->gbps_batch, b->gbps_batch));
    assert_true(same_double(a->tflops_batch, b->tflops_batch));
    assert_true(same_double(a->pct_peak_batch, b->pct_peak_batch));
    assert_int_equal(a->nsamples, b->nsamples);
    for (size_t i = 0; i < a->nsamples; i++)
        assert_true(same_double(a->samples_us[i], b->samples_us[i]));
    assert_int_equal(a->nkernels, b->nkernels);
    for (int i = 0; i < a->nkernels; i++) {
        const kb_kernel *x = &a->kernels[i], *y = &b->kernels[i];
        assert_string_equal(x->name, y->name);
        assert_memory_equal(x->grid, y->grid, sizeof x->grid);
        assert_memory_equal(x->block, y->block, sizeof x->block);
        assert_int_equal(x->registers, y->registers);
        assert_int_equal(x->static_smem, y->static_smem);
        assert_int_equal(x->dynamic_smem, y->dynamic_smem);
        assert_int_equal(x->local_bytes, y->local_bytes);
        assert_int_equal(x->blocks_per_sm, y->blocks_per_sm);
        assert_true(same_double(x->occupancy, y->occupancy));
        assert_string_equal(x->occ_limiter, y->occ_limiter);
        assert_int_equal(x->nmetrics, y->nmetrics);
        for (int j = 0; j < x->nmetrics; j++) {
            assert_string_equal(x->metrics[j].name, y->metrics[j].name);
            assert_true(same_double(x->metrics[j].value, y->metrics[j].value));
        }
        assert_int_equal(x->nstalls, y->nstalls);
        for (int j = 0; j < x->nstalls; j++) {
            assert_string_equal(x->stalls[j].name, y->stalls[j].name);
            assert_true(same_double(x->stalls[j].value, y->stalls[j].value));
        }
    }
}

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Parses text, converts with kb_json_to_run and returns the status; msg gets
 * the message. */
static kb_status run_from_text(const char *text, char *msg, size_t n)
{
    kb_err e = {{0}};
    kb_run run;
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    kb_status st = kb_json_to_run(root, &run, &e);
    snprintf(msg, n, "%s", e.msg);
    kb_run_release(&run);
    cJSON_Delete(root);
    return st;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_run_round_trip(void **state)
{
    (void)state;
    kb_run run, back;
    kb_err e = {{0}};
    build_run(&run);
    char *a = print_run(&run);
    cJSON *root = cJSON_Parse(a);
    assert_non_null(root);
    assert_int_equal(kb_json_to_run(root, &back, &e), KB_OK);
    cJSON_Delete(root);
    char *b = print_run(&back);
    assert_string_equal(a, b);
    assert_int_equal(back.nresults, run.nresults);
    for (size_t i = 0; i < run.nresults; i++)
        assert_same_result(&run.results[i], &back.results[i]);
    assert_string_equal(back.tag, run.tag);
    assert_true(back.dev.copy_gbps == run.dev.copy_gbps);
    assert_true(back.dev.mma_tflops == run.dev.mma_tflops);
    assert_true(isnan(back.dev.fp32_tflops));
    assert_true(back.dev.copy_batch_gbps == run.dev.copy_batch_gbps);
    assert_string_equal(back.dev.ceilings_at, "2025-05-30T08:00:00Z");
    assert_string_equal(back.dev.ceilings_driver, "580.159");
    assert_true(back.dev.ceilings_sm_clock_mhz == 1980.25);
    assert_int_equal(back.dev.ceilings_mem_clock_mhz, 3201);
    assert_non_null(strstr(a, "\"flags\":\t[\"gpu_shared\", \"l2_resident\"]"));
    assert_int_equal(back.dev.memory_bytes, run.dev.memory_bytes);
    /* The compute-bound result's % peak is of the matrix-unit peak (fp32 here
     * has no fp32 peak: unknown), and stays as stored. */
    assert_true(isnan(back.results[2].pct_peak));
    assert_string_equal(back.results[2].bound, "compute");
    assert_string_equal(back.results[1].bound, "memory");
    /* The fixed field names CI reads. */
    assert_non_null(strstr(a, "\"schema_version\":\t1"));
    assert_non_null(strstr(a, "\"cc\":\t\"9.0\""));
    assert_non_null(strstr(a, "\"samples_us\":\t["));
    assert_non_null(strstr(a, "\"seed\":\t\"11400714819323198485\""));
    assert_non_null(strstr(a, "\"counters\":\t{\n\t\t\t\t\"set\":\t\"stalls\",\n\t\t\t\t"
                              "\"passes\":\t3,\n\t\t\t\t\"reason\":\t\"\","));
    assert_non_null(strstr(a, "\"top_stalls\":\t\"long_sb 52% barrier 18%\""));
    assert_non_null(strstr(a, "\"occupancy_limiter\":\t\"registers\",\n\t\t\t\t\t\"metrics\":\t{"
                              "\n\t\t\t\t\t\t\"gpu__time_duration.sum\":\t94208,"));
    assert_non_null(strstr(a, "\"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_"
                              "active\":\tnull,"));
    assert_non_null(strstr(a, "\"stalls\":\t{\n\t\t\t\t\t\t\"long_scoreboard\":\t0.52,\n"
                              "\t\t\t\t\t\t\"barrier\":\t0.18,\n\t\t\t\t\t\t"
                              "\"math_pipe_throttle\":\t0.30000000000000004\n"));
    assert_non_null(strstr(a, "\"resources\":\t{\n\t\t\t\t\"registers\":\t32,"));
    assert_non_null(strstr(a, "\"registers\":\tnull,")); /* the skipped result */
    assert_non_null(strstr(a, "\"ceilings\":\t{\n\t\t\t\"copy_gbps\":\t4012.345678901234,\n"
                              "\t\t\t\"copy_batch_gbps\":\t4100.142857142857,\n"
                              "\t\t\t\"calibrated_at\":\t\"2025-05-30T08:00:00Z\",\n"
                              "\t\t\t\"calibrated_driver\":\t\"580.159\",\n"
                              "\t\t\t\"calibrated_sm_clock_mhz\":\t1980.25,\n"
                              "\t\t\t\"calibrated_mem_clock_mhz\":\t3201,\n"
                              "\t\t\t\"mma_tflops\":\t329.8333333333333,\n"
                              "\t\t\t\"fp32_tflops\":\tnull\n"));
    assert_non_null(strstr(a, "\"flops\":\t20951040,\n\t\t\t\t\"extra_bytes\":\t0\n\t\t\t},\n"
                              "\t\t\t\"bound\":\t\"memory\",\n\t\t\t\"derived\""));
    assert_non_null(strstr(a, "\"extra_bytes\":\t4294967296.333333\n\t\t\t},\n"
                              "\t\t\t\"bound\":\t\"compute\","));
    cJSON_free(a);
    cJSON_free(b);
    kb_run_release(&run);
    kb_run_release(&back);
}

static void test_result_pipe_exact(void **state)
{
    (void)state;
    kb_run run;
    kb_err e = {{0}};
    build_run(&run);
    /* Doubles whose 15-digit form reads back to a neighbour. */
    kb_result *r = &run.results[1];
    for (size_t i = 0; i < r->nsamples; i++)
        r->samples_us[i] = nextafter(0.1 * (double)(i + 1), 1e9) * 1e-3;
    r->samples_us[3] = 78309.92237586058;
    r->samples_us[4] = NAN;
    r->median_us = 0.90000000000000013;
    r->throttled = 1;
    for (size_t i = 0; i < run.nresults; i++) {
        cJSON *o = kb_json_from_result(&run.results[i]);
        assert_non_null(o);
        char *text = cJSON_PrintUnformatted(o);
        assert_non_null(text);
        cJSON *p = cJSON_Parse(text);
        assert_non_null(p);
        kb_result back;
        assert_int_equal(kb_json_to_result(p, &back, &e), KB_OK);
        assert_same_result(&run.results[i], &back);
        /* The tree itself reads back too, without printing. */
        kb_result direct;
        assert_int_equal(kb_json_to_result(o, &direct, &e), KB_OK);
        assert_same_result(&run.results[i], &direct);
        kb_result_release(&back);
        kb_result_release(&direct);
        cJSON_Delete(p);
        cJSON_Delete(o);
        cJSON_free(text);
    }
    kb_run_release(&run);
}

static void test_nan_is_null(void **state)
{
    (void)state;
    kb_result r, back;
    kb_err e = {{0}};
    kb_result_init(&r);
    snprintf(r.op, sizeof r.op, "softmax");
    snprintf(r.variant, sizeof r.variant, "naive");
    snprintf(r.dtype, sizeof r.dtype, "fp16");
    r.median_us = INFINITY;
    r.seed = 42;
    cJSON *o = kb_json_from_result(&r);
    assert_non_null(o);
    char *text = cJSON_PrintUnformatted(o);
    assert_non_null(strstr(text, "\"median_us\":null"));
    assert_non_null(strstr(text, "\"gbps\":null"));
    assert_non_null(strstr(text, "\"seed\":42"));
    assert_non_null(strstr(text, "\"shape\":{}"));
    assert_null(strstr(text, "nan"));
    assert_null(strstr(text, "inf"));
    cJSON *p = cJSON_Parse(text);
    assert_int_equal(kb_json_to_result(p, &back, &e), KB_OK);
    assert_true(isnan(back.median_us) && isnan(back.max_abs_err) && isnan(back.pct_peak));
    assert_true(back.seed == 42);
    kb_result_release(&back);
    cJSON_Delete(p);
    cJSON_Delete(o);
    cJSON_free(text);
}

static void test_device_round_trip(void **state)
{
    (void)state;
    kb_run run;
    kb_device d;
    kb_err e = {{0}};
    build_run(&run);
    run.dev.copy_gbps = NAN;
    run.dev.fp32_tflops = 51.25;
    cJSON *o = kb_json_from_device(&run.dev);
    assert_non_null(o);
    assert_int_equal(kb_json_to_device(o, &d, &e), KB_OK);
    assert_memory_equal(d.name, run.dev.name, sizeof d.name);
    assert_string_equal(d.uuid, run.dev.uuid);
    assert_int_equal(d.cc_major, 9);
    assert_int_equal(d.cc_minor, 0);
    assert_int_equal(d.mem_bus_bits, 6144);
    assert_true(isnan(d.copy_gbps));
    assert_true(d.mma_tflops == 989.5 / 3.0);
    assert_true(d.fp32_tflops == 51.25);
    /* The compute peaks are optional: absent reads as unknown. */
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "ceilings"),
                                            "mma_tflops");
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "ceilings"),
                                            "fp32_tflops");
    assert_int_equal(kb_json_to_device(o, &d, &e), KB_OK);
    assert_true(isnan(d.mma_tflops) && isnan(d.fp32_tflops));
    cJSON_Delete(o);
    kb_run_release(&run);
}

/* A result of a variant file carries "source" (path and SHA-256); built-in
 * variants' results have none; a malformed hash is refused naming the field. */
static void test_source_field(void **state)
{
    (void)state;
    kb_run run;
    char msg[1024];
    build_run(&run);
    char *text = print_run(&run);
    kb_run_release(&run);
    assert_int_equal(kbt_count(text, "\"source\""), 1);
    assert_non_null(strstr(text, "\"sha256\":\t\"" SOURCE_SHA "\""));
    char *bad = strstr(text, SOURCE_SHA);
    bad[0] = 'B'; /* upper case: not a hash kbench writes */
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "field 'results[2].source.sha256' must be 64 lowercase hex"));
    cJSON_free(text);
}

static void test_validation_names_field(void **state)
{
    (void)state;
    kb_run run;
    char msg[1024];
    build_run(&run);
    cJSON *root = kb_json_from_run(&run);
    char *good = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    kb_run_release(&run);

    struct {
        const char *path[4]; /* object path of the item to change */
        const char *replace; /* JSON text, or NULL to delete it */
        const char *want;
    } cases[] = {
        {{"device", "uuid"}, NULL, "invalid report: missing field 'device.uuid'"},
        {{"device", "cc"}, "\"nine\"", "field 'device.cc' must be like \"9.0\", got 'nine'"},
        {{"kbench", "started"}, "17", "field 'kbench.started' must be a string, got a number"},
        {{"kbench", "state"}, "\"done\"", "field 'kbench.state' must be running, complete"},
        {{"device", "ceilings", "mma_tflops"}, "\"fast\"",
         "field 'device.ceilings.mma_tflops' must be a number or null, got a string"},
        {{"results"}, "{}", "field 'results' must be an array, got an object"},
        {{"device", "ceilings", "calibrated_driver"}, "7",
         "field 'device.ceilings.calibrated_driver' must be a string, got a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *doc = cJSON_Parse(good), *parent = doc;
        int depth = 0;
        while (cases[i].path[depth + 1])
            parent = cJSON_GetObjectItemCaseSensitive(parent, cases[i].path[depth++]);
        const char *key = cases[i].path[depth];
        if (cases[i].replace)
            cJSON_ReplaceItemInObjectCaseSensitive(parent, key, cJSON_Parse(cases[i].replace));
        else
            cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
        char *text = cJSON_PrintUnformatted(doc);
        assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
        if (!strstr(msg, cases[i].want))
            fail_msg("case %zu: got '%s', want '%s'", i, msg, cases[i].want);
        cJSON_free(text);
        cJSON_Delete(doc);
    }

    /* Deep fields inside results[]. */
    cJSON *doc = cJSON_Parse(good);
    cJSON *r2 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "results"), 2);
    cJSON *tm = cJSON_GetObjectItemCaseSensitive(r2, "time");
    cJSON_ReplaceItemInObjectCaseSensitive(tm, "median_us", cJSON_CreateString("fast"));
    char *text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_string_equal(msg, "invalid report: field 'results[2].time.median_us' must be a number "
                             "or null, got a string");
    cJSON_free(text);
    /* a flag this kbench does not know */
    cJSON_ReplaceItemInObjectCaseSensitive(tm, "median_us", cJSON_CreateNumber(1.5));
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "flags", cJSON_Parse("[\"noisy\"]"));
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_string_equal(msg, "invalid report: field 'results[2].flags' holds unknown flag 'noisy'");
    cJSON_free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "flags", cJSON_CreateArray());
    cJSON_ReplaceItemInObjectCaseSensitive(tm, "median_us", cJSON_CreateNumber(1.5));
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "status", cJSON_CreateString("okay"));
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "'results[2].status' must be ok, mismatch, failed or skipped, "
                                "got 'okay'"));
    cJSON_free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "status", cJSON_CreateString("ok"));
    cJSON *k0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r2, "kernels"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(k0, "grid", cJSON_Parse("[1, 2]"));
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "'results[2].kernels[0].grid' must be an array of 3"));
    cJSON_free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(k0, "grid", cJSON_Parse("[1, 2, 3]"));
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "shape", cJSON_Parse("{\"rows\": -4}"));
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "'results[2].shape.rows' must be an integer in [0, "));
    cJSON_free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "shape", cJSON_Parse("{\"rows\": 4, \"c\": 2}"));
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "seed", cJSON_Parse("\"12x\""));
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "'results[2].seed' must be an unsigned 64-bit integer, got '12x'"));
    cJSON_free(text);
    cJSON_ReplaceItemInObjectCaseSensitive(r2, "seed", cJSON_Parse("7"));
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_OK);
    cJSON_free(text);
    cJSON_Delete(doc);

    /* The counter fields of results[1] and its first kernel. */
    struct {
        const char *path[4];
        const char *replace;
        const char *want;
    } cnt[] = {
        {{"counters", "set"}, "\"most\"",
         "field 'results[1].counters.set' must be none, core, sol, stalls or full, got 'most'"},
        {{"counters", "passes"}, "-1", "field 'results[1].counters.passes' must be an integer"},
        {{"counters", "reason"}, "3", "field 'results[1].counters.reason' must be a string"},
        {{"counters"}, "[]", "field 'results[1].counters' must be an object, got an array"},
        {{"resources", "registers"}, "3.5",
         "field 'results[1].resources.registers' must be an integer in [0, "},
        {{"derived", "dram_gbps"}, "\"fast\"",
         "field 'results[1].derived.dram_gbps' must be a number or null, got a string"},
        {{"kernels", "metrics"}, "{\"dram__bytes_read.sum\": \"many\"}",
         "field 'results[1].kernels[0].metrics.dram__bytes_read.sum' must be a number or null"},
        {{"kernels", "stalls"}, "[0.5]",
         "field 'results[1].kernels[0].stalls' must be an object, got an array"},
        {{"kernels", "stalls"}, "{\"\": 0.5}",
         "field 'results[1].kernels[0].stalls' has a bad name ''"},
        {{"kernels", "occupancy_limiter"}, "\"registers and shared memory\"",
         "field 'results[1].kernels[0].occupancy_limiter' is too long"},
        {{"bound"}, "\"latency\"",
         "field 'results[1].bound' must be memory or compute, got 'latency'"},
        {{"bound"}, "\"memory-and-compute\"",
         "field 'results[1].bound' must be memory or compute, got 'memory-and-compute'"},
        {{"bound"}, "1", "field 'results[1].bound' must be a string, got a number"},
        {{"model", "extra_bytes"}, "\"lots\"",
         "field 'results[1].model.extra_bytes' must be a number or null, got a string"},
    };
    for (size_t i = 0; i < sizeof cnt / sizeof cnt[0]; i++) {
        doc = cJSON_Parse(good);
        cJSON *parent = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "results"), 1);
        int depth = 0;
        while (cnt[i].path[depth + 1]) {
            parent = cJSON_GetObjectItemCaseSensitive(parent, cnt[i].path[depth++]);
            if (cJSON_IsArray(parent))
                parent = cJSON_GetArrayItem(parent, 0);
        }
        assert_true(cJSON_ReplaceItemInObjectCaseSensitive(parent, cnt[i].path[depth],
                                                           cJSON_Parse(cnt[i].replace)));
        text = cJSON_PrintUnformatted(doc);
        assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
        if (!strstr(msg, cnt[i].want))
            fail_msg("counters case %zu: got '%s', want '%s'", i, msg, cnt[i].want);
        cJSON_free(text);
        cJSON_Delete(doc);
    }

    /* More metrics than a kernel holds. */
    doc = cJSON_Parse(good);
    cJSON *k1 = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "results"), 1), "kernels"),
        0);
    cJSON *many = cJSON_CreateObject();
    for (int i = 0; i <= KB_RES_MAX_METRICS; i++) {
        char name[32];
        snprintf(name, sizeof name, "metric_%d.sum", i);
        cJSON_AddNumberToObject(many, name, i);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(k1, "metrics", many);
    text = cJSON_PrintUnformatted(doc);
    assert_int_equal(run_from_text(text, msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "field 'results[1].kernels[0].metrics' has more than 48 entries"));
    cJSON_free(text);
    cJSON_Delete(doc);
    cJSON_free(good);
}

static void test_schema_version(void **state)
{
    (void)state;
    char msg[1024];
    assert_int_equal(run_from_text("{\"schema_version\": 2}", msg, sizeof msg), KB_EUSAGE);
    assert_string_equal(msg, "the document has schema_version 2, newer than this kbench (1)");
    assert_int_equal(run_from_text("{\"schema_version\": 0}", msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "'schema_version' must be an integer in [1, "));
    assert_int_equal(run_from_text("{\"name\": 1}", msg, sizeof msg), KB_EUSAGE);
    assert_string_equal(msg, "the document is not a kbench report (missing field "
                             "'schema_version')");
    assert_int_equal(run_from_text("[1, 2]", msg, sizeof msg), KB_EUSAGE);
    assert_non_null(strstr(msg, "is not a kbench report (the top level is an array"));
    assert_int_equal(run_from_text("{\"schema_version\": 1}", msg, sizeof msg), KB_EUSAGE);
    assert_string_equal(msg, "invalid report: missing field 'kbench'");
}

static void test_files(void **state)
{
    (void)state;
    kb_run run, back;
    kb_err e = {{0}};
    char path[256], trunc[256], want[512];
    cJSON *root = NULL;
    build_run(&run);
    path_in(path, sizeof path, "report.json");
    assert_int_equal(kb_json_save_run(&run, path, &e), KB_OK);
    assert_int_equal(access(path, F_OK), 0);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_not_equal(access(tmp, F_OK), 0);
    assert_int_equal(kb_json_load_run(path, &back, &e), KB_OK);
    char *a = print_run(&run), *b = print_run(&back);
    assert_string_equal(a, b);

    /* Truncated: the first half of a real report. */
    path_in(trunc, sizeof trunc, "truncated.json");
    size_t half = strlen(a) / 2;
    a[half] = '\0';
    write_text(trunc, a);
    assert_int_equal(kb_json_read_file(trunc, &root, &e), KB_EUSAGE);
    assert_null(root);
    snprintf(want, sizeof want, "'%s' is not valid JSON (near byte ", trunc);
    assert_non_null(strstr(e.msg, want));

    /* Empty, trailing garbage, missing, a directory. */
    write_text(trunc, "");
    assert_int_equal(kb_json_read_file(trunc, &root, &e), KB_EUSAGE);
    snprintf(want, sizeof want, "'%s' is not valid JSON (near byte 0)", trunc);
    assert_string_equal(e.msg, want);
    write_text(trunc, "{\"a\": 1} x");
    assert_int_equal(kb_json_read_file(trunc, &root, &e), KB_EUSAGE);
    snprintf(want, sizeof want, "'%s' is not valid JSON (near byte 9)", trunc);
    assert_string_equal(e.msg, want);
    path_in(trunc, sizeof trunc, "missing.json");
    assert_int_equal(kb_json_read_file(trunc, &root, &e), KB_EENV);
    snprintf(want, sizeof want, "cannot read '%s': No such file or directory", trunc);
    assert_string_equal(e.msg, want);
    kb_run other;
    assert_int_equal(kb_json_load_run(trunc, &other, &e), KB_EENV);
    assert_int_equal(other.nresults, 0);

    /* A newer schema named with its file. */
    path_in(trunc, sizeof trunc, "newer.json");
    write_text(trunc, "{\"schema_version\": 7, \"kbench\": {}}");
    assert_int_equal(kb_json_load_run(trunc, &other, &e), KB_EUSAGE);
    snprintf(want, sizeof want, "'%s' has schema_version 7, newer than this kbench (1)", trunc);
    assert_string_equal(e.msg, want);
    write_text(trunc, "{\"schema_version\": 1, \"kbench\": {}}");
    assert_int_equal(kb_json_load_run(trunc, &other, &e), KB_EUSAGE);
    snprintf(want, sizeof want, "invalid report '%s': missing field 'kbench.version'", trunc);
    assert_string_equal(e.msg, want);

    /* Writing where no file can be created leaves nothing behind. */
    path_in(trunc, sizeof trunc, "no/such/dir/r.json");
    assert_int_equal(kb_json_save_run(&back, trunc, &e), KB_EENV);
    assert_non_null(strstr(e.msg, "cannot write '"));

    cJSON_free(a);
    cJSON_free(b);
    kb_run_release(&back);
    kb_run_release(&run);
}

/* A report written before counters (report_v1.json) reads with none/NAN/empty
 * counters; one with them (report_counters.json) keeps every figure in order. */
static void test_fixture_counters(void **state)
{
    (void)state;
    kb_run run;
    kb_err e = {{0}};
    if (access("tests/fixtures/report_counters.json", R_OK) != 0) {
        print_message("tests/fixtures not found from here; run from the repository root\n");
        skip();
    }
    assert_int_equal(kb_json_load_run("tests/fixtures/report_v1.json", &run, &e), KB_OK);
    for (size_t i = 0; i < run.nresults; i++) {
        const kb_result *r = &run.results[i];
        assert_string_equal(r->metric_set, "none");
        assert_int_equal(r->passes, 0);
        assert_string_equal(r->counters_reason, "");
        assert_true(isnan(r->dram_bytes) && isnan(r->dram_gbps) && isnan(r->excess_traffic));
        assert_true(isnan(r->achieved_occupancy) && isnan(r->theoretical_occupancy));
        assert_int_equal(r->registers, -1);
        assert_int_equal(r->local_bytes, -1);
        assert_string_equal(r->top_stalls, "");
        for (int k = 0; k < r->nkernels; k++) {
            assert_string_equal(r->kernels[k].occ_limiter, "");
            assert_int_equal(r->kernels[k].nmetrics, 0);
            assert_int_equal(r->kernels[k].nstalls, 0);
        }
    }
    kb_run_release(&run);

    assert_int_equal(kb_json_load_run("tests/fixtures/report_counters.json", &run, &e), KB_OK);
    const kb_result *n = &run.results[0];
    assert_string_equal(n->metric_set, "stalls");
    assert_int_equal(n->passes, 3);
    assert_true(n->dram_bytes == 49446912.0);
    assert_true(n->excess_traffic == 1.509);
    assert_int_equal(n->registers, 31);
    assert_int_equal(n->local_bytes, 0);
    assert_string_equal(n->top_stalls, "long_sb 61% barrier 19%");
    const kb_kernel *k = &n->kernels[1];
    assert_string_equal(k->occ_limiter, "warps");
    assert_int_equal(k->nmetrics, 9);
    assert_string_equal(k->metrics[1].name, "dram__bytes_read.sum");
    assert_true(k->metrics[1].value == 16547840.0);
    assert_int_equal(k->nstalls, 3);
    assert_string_equal(k->stalls[0].name, "long_scoreboard");
    assert_string_equal(k->stalls[2].name, "lg_throttle");
    for (int j = 1; j < k->nstalls; j++)
        assert_true(k->stalls[j].value <= k->stalls[j - 1].value);
    assert_string_equal(run.results[2].metric_set, "none");
    kb_run_release(&run);
}

/* The fixtures in tests/fixtures (when run from the repository root). */
static void test_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        kb_status want;
        const char *msg;
    } cases[] = {
        {"tests/fixtures/report_v1.json", KB_OK, ""},
        {"tests/fixtures/report_counters.json", KB_OK, ""},
        {"tests/fixtures/report_newer.json", KB_EUSAGE, "has schema_version 2, newer than this kbench (1)"},
        {"tests/fixtures/report_truncated.json", KB_EUSAGE, "is not valid JSON (near byte "},
        {"tests/fixtures/not_a_report.json", KB_EUSAGE, "is not a kbench report (missing field 'schema_version')"},
        {"tests/fixtures/report_bad_field.json", KB_EUSAGE, "field 'results[0].time.samples_us' must be an array"},
    };
    if (access("tests/fixtures/report_v1.json", R_OK) != 0) {
        print_message("tests/fixtures not found from here; run from the repository root\n");
        skip();
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kb_run run;
        kb_err e = {{0}};
        kb_status st = kb_json_load_run(cases[i].file, &run, &e);
        if (st != cases[i].want || !strstr(e.msg, cases[i].msg))
            fail_msg("%s: status %d '%s'", cases[i].file, st, e.msg);
        if (st == KB_OK) {
            char orig[16384] = "";
            FILE *f = fopen(cases[i].file, "r");
            assert_non_null(f);
            size_t n = fread(orig, 1, sizeof orig - 1, f);
            fclose(f);
            orig[n] = '\0';
            char *again = print_run(&run);
            /* Written before the compute ceilings, so read as memory-bound with
             * no extra memory and unknown compute peaks. */
            assert_true(isnan(run.dev.mma_tflops) && isnan(run.dev.fp32_tflops));
            for (size_t j = 0; j < run.nresults; j++) {
                assert_string_equal(run.results[j].bound, "memory");
                assert_true(run.results[j].extra_bytes == 0);
            }
            if (strstr(orig, "\"bound\"")) {
                /* In the form kbench writes: re-export is identical. */
                assert_int_equal(n, strlen(again) + 1);
                assert_memory_equal(orig, again, n - 1);
            } else {
                /* Written before counters or ceilings: re-export adds them with
                 * their defaults, and is stable from then on. */
                kb_run back;
                kb_err e2 = {{0}};
                cJSON *root = cJSON_Parse(again);
                assert_int_equal(kb_json_to_run(root, &back, &e2), KB_OK);
                char *twice = print_run(&back);
                assert_string_equal(again, twice);
                assert_non_null(strstr(again, strstr(orig, "\"counters\"") ? "\"set\":\t\"stalls\""
                                                                         : "\"set\":\t\"none\""));
                assert_non_null(strstr(again, "\"mma_tflops\":\tnull"));
                assert_non_null(strstr(again, "\"bound\":\t\"memory\""));
                cJSON_free(twice);
                cJSON_Delete(root);
                kb_run_release(&back);
            }
            assert_int_equal(run.nresults, 3);
            assert_true(isnan(run.results[2].median_us));
            cJSON_free(again);
        }
        kb_run_release(&run);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kbtest_json_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_round_trip),     cmocka_unit_test(test_result_pipe_exact),
        cmocka_unit_test(test_nan_is_null),        cmocka_unit_test(test_device_round_trip),
        cmocka_unit_test(test_validation_names_field),
        cmocka_unit_test(test_source_field), cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_files),              cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_fixture_counters),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

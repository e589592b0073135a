/* test_policy.c - the profiler's decisions, with no GPU: which cases are
 * skipped and why (dtype, the variant's own test, device memory), which shapes
 * a run refuses up front, when the ceilings must be measured, the plan of a
 * run (its cases in order, each operator's default dtype, the messages for bad
 * names), and a case's result coming back whole from its child process. */
#include <math.h>

#include "kbtest.h"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "profiler/child.h"
#include "profiler/plan.h"
#include "profiler/policy.h"
#include "profiler/nvml.h"

/* An H200 as the device query describes it, calibrated. */
static kb_device h200(void)
{
    kb_device d;
    kb_device_init(&d);
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    d.memory_bytes = 150110011392;
    d.l2_bytes = 62914560;
    d.copy_gbps = 4192;
    d.mma_tflops = 774;
    d.fp32_tflops = 51;
    d.copy_batch_gbps = 4230;
    kb_iso_time(time(NULL), d.ceilings_at, sizeof d.ceilings_at);
    kb_driver_version(d.ceilings_driver, sizeof d.ceilings_driver);
    return d;
}

static void shape_of(const kb_op *op, const char *text, int64_t *shape)
{
    kb_err e = {{0}};
    if (!*text)
        kb_shape_default(op, shape);
    else
        assert_int_equal(kb_shape_parse(op, text, shape, &e), KB_OK);
}

static void skip_rules(void **state)
{
    (void)state;
    const kb_device dev = h200();
    const kb_op *att = kb_op_find("attention");
    const kb_op *sm = kb_op_find("softmax");
    int64_t shape[KB_MAX_AXES];
    char why[512];

    /* the variant's dtypes */
    shape_of(att, "dim=128", shape);
    assert_int_equal(kb_case_skip(att, kb_variant_find(att, "flash-tiled"), KB_FP32, shape,
                                  &dev, why, sizeof why),
                     1);
    assert_string_equal(why, "flash-tiled does not support fp32");
    assert_int_equal(kb_case_skip(att, kb_variant_find(att, "flash-tiled"), KB_BF16, shape,
                                  &dev, why, sizeof why),
                     0);
    /* the variant's own test */
    shape_of(att, "dim=96", shape);
    assert_int_equal(kb_case_skip(att, kb_variant_find(att, "flash-tiled"), KB_BF16, shape,
                                  &dev, why, sizeof why),
                     1);
    assert_string_equal(why, "flash-tiled is built for dim 64 and 128, not dim=96");
    /* device memory: the score matrix of a long sequence */
    shape_of(att, "batch=8,heads=32,seq=65536", shape);
    assert_int_equal(kb_case_skip(att, kb_variant_find(att, "naive"), KB_BF16, shape, &dev, why,
                                  sizeof why),
                     1);
    assert_non_null(strstr(why, "bytes of device memory"));
    assert_non_null(strstr(why, "NVIDIA H200 has 150110011392"));
    /* an ordinary case runs */
    shape_of(sm, "", shape);
    assert_int_equal(kb_case_skip(sm, kb_variant_find(sm, "naive"), KB_FP32, shape, &dev, why,
                                  sizeof why),
                     0);
}

static void shapes_too_large_are_refused(void **state)
{
    (void)state;
    const kb_device dev = h200();
    const kb_op *sm = kb_op_find("softmax");
    int64_t shape[KB_MAX_AXES];
    kb_err e = {{0}};
    shape_of(sm, "rows=2000000000,cols=2000", shape);
    assert_int_equal(kb_case_fits(sm, KB_FP32, shape, &dev, &e), KB_EUSAGE);
    assert_non_null(strstr(e.msg, "shape rows=2000000000,cols=2000 (fp32) is too large: it "
                                  "needs 32000"));
    /* so large that its byte count is estimated from the elements alone */
    shape_of(sm, "rows=2147483647,cols=2147483647", shape);
    assert_int_equal(kb_case_fits(sm, KB_BF16, shape, &dev, &e), KB_EUSAGE);
    assert_non_null(strstr(e.msg, "(bf16) is too large"));
    shape_of(sm, "", shape);
    assert_int_equal(kb_case_fits(sm, KB_FP32, shape, &dev, &e), KB_OK);
    /* matmul: the product of the axes counts products, not elements; a cube
     * of 2^17 holds 3 x 2^34 bf16 elements (103 GB) and fits */
    const kb_op *mm = kb_op_find("matmul");
    shape_of(mm, "m=131072,n=131072,k=131072", shape);
    assert_int_equal(kb_case_fits(mm, KB_BF16, shape, &dev, &e), KB_OK);
    assert_int_equal(kb_case_fits(mm, KB_FP32, shape, &dev, &e), KB_EUSAGE);
    assert_non_null(strstr(e.msg, "(fp32) is too large: it needs 206410612736 bytes"));
    /* m too large for the memory, refused by its bytes: A and C of 2^36 each */
    shape_of(mm, "m=16777216", shape);
    assert_int_equal(kb_case_fits(mm, KB_BF16, shape, &dev, &e), KB_EUSAGE);
    assert_non_null(strstr(e.msg, "shape m=16777216,n=4096,k=4096,epilogue=0 (bf16) is too "
                                  "large: it needs 275163127808 bytes"));
}

static void ceilings_missing(void **state)
{
    (void)state;
    kb_device d = h200();
    int measured = 1;
    kb_err e = {{0}};
    assert_false(kb_ceilings_missing(&d));
    /* nothing to measure: no child, no GPU needed */
    char why[256];
    assert_int_equal(kb_ceilings_ensure(0, &d, KB_CALIBRATE_IF_STALE, &measured, why, sizeof why,
                                        &e),
                     KB_OK);
    assert_int_equal(measured, 0);
    assert_string_equal(why, "");
    for (int i = 0; i < KB_NCEILINGS; i++) {
        kb_device x = h200();
        *kb_device_ceiling(&x, i) = NAN;
        assert_true(kb_ceilings_missing(&x));
    }
    assert_string_equal(kb_ceiling_name(KB_CEILING_MMA), "mma_tflops");
}

/* Stale ceilings are measured again, saying why; fresh ones from this
 * driver are kept. */
static void ceilings_go_stale(void **state)
{
    (void)state;
    char why[256];
    const time_t now = 1796000000; /* 2026-11-30T00:53:20Z */
    kb_device d = h200();
    snprintf(d.ceilings_at, sizeof d.ceilings_at, "2026-11-20T10:00:00Z");
    snprintf(d.ceilings_driver, sizeof d.ceilings_driver, "580.159");
    assert_true(fabs(kb_ceilings_age_days(&d, now) - 9.62) < 0.01);
    assert_false(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "580.159", now, why, sizeof why));
    assert_string_equal(why, "");
    /* the driver now unknown: nothing to compare */
    assert_false(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "", now, why, sizeof why));
    assert_true(kb_calibration_due(&d, KB_CALIBRATE_ALWAYS, "580.159", now, why, sizeof why));
    assert_string_equal(why, "asked for");
    assert_true(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "590.12", now, why, sizeof why));
    assert_string_equal(why, "the ceilings of NVIDIA H200 were measured under driver 580.159, "
                             "this is 590.12");
    snprintf(d.ceilings_at, sizeof d.ceilings_at, "2026-10-01T00:00:00Z");
    assert_true(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "580.159", now, why, sizeof why));
    assert_string_equal(why, "the ceilings of NVIDIA H200 are 60 days old (more than 30)");
    /* stored before they had a date or a driver */
    d.ceilings_at[0] = '\0';
    assert_true(isnan(kb_ceilings_age_days(&d, now)));
    assert_true(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "580.159", now, why, sizeof why));
    assert_string_equal(why, "the stored ceilings of NVIDIA H200 have no date");
    snprintf(d.ceilings_at, sizeof d.ceilings_at, "2026-11-20T10:00:00Z");
    d.ceilings_driver[0] = '\0';
    assert_true(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "580.159", now, why, sizeof why));
    assert_string_equal(why, "the stored ceilings of NVIDIA H200 do not say which driver they "
                             "were measured under");
    d = h200();
    d.copy_batch_gbps = NAN;
    assert_true(kb_calibration_due(&d, KB_CALIBRATE_IF_STALE, "", now, why, sizeof why));
    assert_string_equal(why, "no calibrated ceilings stored for NVIDIA H200");
}

/* Inputs and outputs within twice the L2: flagged l2_resident. */
static void l2_resident_cases(void **state)
{
    (void)state;
    const kb_op *sm = kb_op_find("softmax");
    const int64_t l2 = 62914560; /* 60 MiB */
    int64_t shape[KB_MAX_AXES];
    shape_of(sm, "rows=2048,cols=4096", shape); /* 32 + 32 MiB */
    assert_true(kb_case_l2_resident(sm, KB_FP32, shape, l2));
    shape_of(sm, "rows=4096,cols=4096", shape); /* 64 + 64 MiB */
    assert_false(kb_case_l2_resident(sm, KB_FP32, shape, l2));
    assert_true(kb_case_l2_resident(sm, KB_BF16, shape, l2));
    assert_false(kb_case_l2_resident(sm, KB_FP32, shape, 0)); /* L2 unknown */
}

/* The cases of a plan, one line each: "op variant dtype shape". */
static char *plan_lines(const kb_plan *p)
{
    size_t cap = 1 << 16, used = 0;
    char *out = calloc(1, cap);
    kb_plan_iter it = {0, 0, 0, 0};
    kb_plan_case c;
    while (kb_plan_next(p, &it, &c)) {
        char shape[256];
        kb_shape_str(c.op, c.shape, shape, sizeof shape);
        used += (size_t)snprintf(out + used, cap - used, "%s %s %s %s\n", c.op->name, c.v->name,
                                 kb_dtype_name(c.dtype), shape);
    }
    return out;
}

static void plan_orders_cases(void **state)
{
    (void)state;
    kb_plan p;
    kb_err e = {{0}};
    const char *shapes[] = {"rows=8,cols=16", "rows=3"};
    const kb_dtype dts[] = {KB_FP32, KB_BF16};
    assert_int_equal(kb_plan_init(&p, "softmax", "fused,naive", shapes, 2, dts, 2, &e), KB_OK);
    char *t = plan_lines(&p);
    assert_string_equal(t, "softmax naive fp32 rows=8,cols=16\n"
                           "softmax fused fp32 rows=8,cols=16\n"
                           "softmax naive bf16 rows=8,cols=16\n"
                           "softmax fused bf16 rows=8,cols=16\n"
                           "softmax naive fp32 rows=3,cols=4096\n"
                           "softmax fused fp32 rows=3,cols=4096\n"
                           "softmax naive bf16 rows=3,cols=4096\n"
                           "softmax fused bf16 rows=3,cols=4096\n");
    assert_int_equal(kb_plan_count(&p), 8);
    free(t);
    kb_plan_release(&p);
    kb_plan_release(&p); /* twice is harmless */
}

/* Shapes that give the same case run once: the same text twice, the same axes
 * in another order, a default named or left out. */
static void plan_runs_identical_cases_once(void **state)
{
    (void)state;
    kb_plan p;
    kb_err e = {{0}};
    const char *shapes[] = {"rows=8,cols=16", "rows=8,cols=16", "cols=16,rows=8", "rows=3",
                            "rows=3,cols=4096"};
    assert_int_equal(kb_plan_init(&p, "softmax", "naive", shapes, 5, NULL, 0, &e), KB_OK);
    char *t = plan_lines(&p);
    assert_string_equal(t, "softmax naive fp32 rows=8,cols=16\n"
                           "softmax naive fp32 rows=3,cols=4096\n");
    assert_int_equal(kb_plan_count(&p), 2);
    free(t);
    kb_plan_release(&p);
}

/* A shape naming a dtype runs in that dtype only (a sweep whose rows differ by
 * element size); after the same shape unlimited it adds nothing; a dtype the
 * run does not use, an unknown one or two are refused, saying which. */
static void plan_shape_limited_to_a_dtype(void **state)
{
    (void)state;
    kb_plan p;
    kb_err e = {{0}};
    const char *shapes[] = {"rows=8,cols=16", "dtype=bf16,rows=16,cols=16",
                            "rows=8,dtype=fp32,cols=16", "dtype=bf16,rows=8,cols=16"};
    const kb_dtype dts[] = {KB_FP32, KB_BF16};
    assert_int_equal(kb_plan_init(&p, "softmax", "naive", shapes, 4, dts, 2, &e), KB_OK);
    char *t = plan_lines(&p);
    assert_string_equal(t, "softmax naive fp32 rows=8,cols=16\n"
                           "softmax naive bf16 rows=8,cols=16\n"
                           "softmax naive bf16 rows=16,cols=16\n");
    assert_int_equal(kb_plan_count(&p), 3);
    free(t);
    kb_plan_release(&p);

    const char *alone[] = {"dtype=fp32,rows=4,cols=4", "dtype=bf16,rows=8,cols=4"};
    assert_int_equal(kb_plan_init(&p, "softmax", "naive", alone, 2, dts, 2, &e), KB_OK);
    t = plan_lines(&p);
    assert_string_equal(t, "softmax naive fp32 rows=4,cols=4\n"
                           "softmax naive bf16 rows=8,cols=4\n");
    free(t);
    kb_plan_release(&p);

    const char *unused[] = {"dtype=fp16,rows=4"};
    assert_int_equal(kb_plan_init(&p, "softmax", NULL, unused, 1, dts, 2, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "shape 'dtype=fp16,rows=4': dtype 'fp16' is not one the run "
                               "uses (fp32, bf16)");
    const char *unknown[] = {"rows=4,dtype=fp64"};
    assert_int_equal(kb_plan_init(&p, "softmax", NULL, unknown, 1, dts, 2, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "shape 'rows=4,dtype=fp64': unsupported dtype 'fp64' (fp32, "
                               "fp16, bf16)");
    const char *twice[] = {"dtype=bf16,dtype=fp32,rows=4"};
    assert_int_equal(kb_plan_init(&p, "softmax", NULL, twice, 1, dts, 2, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "shape 'dtype=bf16,dtype=fp32,rows=4' names a dtype twice");
    /* without --dtype, the operator's default is the dtype the run uses */
    const char *other[] = {"dtype=bf16,rows=4"};
    assert_int_equal(kb_plan_init(&p, "softmax", NULL, other, 1, NULL, 0, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "shape 'dtype=bf16,rows=4': dtype 'bf16' is not one the run "
                               "uses (fp32)");
}

/* Without --dtype every operator runs in its own default dtype; "all" takes
 * every operator of the registry, however many there are. */
static void plan_all_uses_each_default_dtype(void **state)
{
    (void)state;
    kb_plan p;
    kb_err e = {{0}};
    int nops = 0, want = 0;
    const kb_op *const *ops = kb_ops(&nops);
    assert_int_equal(kb_plan_init(&p, "all", NULL, NULL, 0, NULL, 0, &e), KB_OK);
    assert_int_equal(p.nops, nops);
    for (int i = 0; i < nops; i++)
        want += ops[i]->nvariants;
    assert_int_equal(kb_plan_count(&p), want);
    kb_plan_iter it = {0, 0, 0, 0};
    kb_plan_case c;
    while (kb_plan_next(&p, &it, &c))
        assert_int_equal(c.dtype, c.op->default_dtype);
    kb_plan_release(&p);
}

static void plan_refuses_bad_names(void **state)
{
    (void)state;
    kb_plan p;
    kb_err e = {{0}};
    const kb_dtype fp16[] = {KB_FP16};
    const char *bad_shape[] = {"rows=0"};
    assert_int_equal(kb_plan_init(&p, "softmx", NULL, NULL, 0, NULL, 0, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "unknown operator 'softmx' (did you mean 'softmax'?)");
    assert_int_equal(kb_plan_init(&p, "softmax", "naive,fusd", NULL, 0, NULL, 0, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "unknown variant 'fusd' for softmax (did you mean 'fused'?)");
    assert_int_equal(kb_plan_init(&p, "all", "zzzzzz", NULL, 0, NULL, 0, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "unknown variant 'zzzzzz' for any operator (see 'kbench list')");
    assert_int_equal(kb_plan_init(&p, "softmax", NULL, bad_shape, 1, fp16, 1, &e), KB_EUSAGE);
    assert_non_null(strstr(e.msg, "rows"));
}

/* A result that goes through a child comes back field for field: without a
 * GPU the child records its CUDA failure; with one it times an empty
 * launcher. */
static cudaError_t empty_launch(const kb_args *a, cudaStream_t s)
{
    (void)a;
    (void)s;
    return cudaSuccess;
}

static size_t no_bytes(const int64_t *shape, kb_dtype d, int i)
{
    (void)shape;
    (void)d;
    (void)i;
    return 0;
}

/* Welford's (n, mean, m2) of the samples v[0..n). */
static void welford(const double *v, int n, double *cnt, double *mean, double *m2)
{
    *cnt = 0;
    *mean = *m2 = 0;
    for (int i = 0; i < n; i++) {
        *cnt += 1;
        const double d = v[i] - *mean;
        *mean += d / *cnt;
        *m2 += d * (v[i] - *mean);
    }
}

/* A series converges on its spread, or on its mean's standard error once
 * enough samples of a jittery kernel are in; never on a standard error of 0
 * allowed (max_error 0). */
static void series_convergence(void **state)
{
    (void)state;
    double n, mean, m2;
    /* a steady kernel: spread 0.2 %, under max_noise 0.5 % */
    const double steady[4] = {100.0, 100.2, 99.8, 100.0};
    welford(steady, 4, &n, &mean, &m2);
    assert_true(kb_series_converged(n, mean, m2, 0.005, 0.0));
    /* a kernel jittering by ~2 %: 10 samples are not enough at 0.2 %
     * standard error, 120 are; with max_error 0 it never converges */
    double jitter[120];
    for (int i = 0; i < 120; i++)
        jitter[i] = i % 2 ? 98.0 : 102.0;
    welford(jitter, 10, &n, &mean, &m2);
    assert_false(kb_series_converged(n, mean, m2, 0.005, 0.002));
    welford(jitter, 120, &n, &mean, &m2);
    assert_true(kb_series_converged(n, mean, m2, 0.005, 0.002));
    assert_false(kb_series_converged(n, mean, m2, 0.005, 0.0));
    /* one sample: nothing to judge a spread by, but nothing against it */
    assert_true(kb_series_converged(1, 5.0, 0.0, 0.005, 0.002));
    assert_false(kb_series_converged(0, 0.0, 0.0, 0.005, 0.002));
}

static void model(const int64_t *shape, kb_dtype d, double *bytes, double *flops)
{
    (void)d;
    *bytes = 1000.0 * (double)shape[0];
    *flops = NAN;
}

static kb_status generate(const kb_args *a, uint64_t seed, cudaStream_t s, kb_err *e)
{
    (void)a;
    (void)seed;
    (void)s;
    (void)e;
    return KB_OK;
}

static kb_status check(const kb_args *a, uint64_t seed, kb_check *c, kb_err *e)
{
    (void)a;
    (void)seed;
    (void)e;
    memset(c, 0, sizeof *c);
    c->rows_checked = 1;
    c->elems_checked = 1; /* a check that compared nothing is a mismatch */
    return KB_OK;
}

static void case_comes_back_from_its_child(void **state)
{
    (void)state;
    static const kb_axis axes[] = {{"n", 7, 1, 100, "elements"}};
    static const kb_variant variants[] = {
        {.name = "empty", .summary = "nothing", .dtypes = KB_DT_ALL, .launch = empty_launch}};
    static const kb_op op = {.name = "nop", .summary = "nothing", .axes = axes, .naxes = 1,
                             .dtypes = KB_DT_ALL, .bound = "memory", .variants = variants,
                             .nvariants = 1, .in_bytes = no_bytes, .out_bytes = no_bytes,
                             .model = model, .generate = generate, .check = check};
    const kb_bench_opts o = {.min_samples = 2, .max_samples = 3, .max_noise = 1.0,
                             .time_limit_s = 1.0, .metrics = KB_METRICS_NONE};
    kb_device dev = h200();
    int64_t shape[KB_MAX_AXES] = {7};
    kb_result r;
    kb_err e = {{0}};
    kb_bench_name_case(&r, &op, &variants[0], KB_FP32, shape, 42);
    assert_int_equal(kb_case_run(&op, &variants[0], &dev, &o, NULL, &r, &e), KB_OK);
    assert_string_equal(r.op, "nop");
    assert_string_equal(r.variant, "empty");
    assert_int_equal(r.seed, 42);
    assert_true(r.bytes == 7000.0);
    if (r.status == KB_R_FAILED) {
        /* no GPU: the child's own record of its first CUDA call */
        assert_non_null(strstr(r.reason, "cudaSetDevice"));
        assert_int_equal(r.nsamples, 0);
    } else {
        assert_int_equal(r.status, KB_R_OK);
        assert_true(r.nsamples >= 2 && r.samples_us);
        assert_true(r.median_us >= 0);
        assert_int_equal(r.nkernels, 0);
    }
    kb_result_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(skip_rules),
        cmocka_unit_test(shapes_too_large_are_refused),
        cmocka_unit_test(ceilings_missing),
        cmocka_unit_test(ceilings_go_stale),
        cmocka_unit_test(l2_resident_cases),
        cmocka_unit_test(plan_orders_cases),
        cmocka_unit_test(plan_runs_identical_cases_once),
        cmocka_unit_test(plan_shape_limited_to_a_dtype),
        cmocka_unit_test(plan_all_uses_each_default_dtype),
        cmocka_unit_test(plan_refuses_bad_names),
        cmocka_unit_test(case_comes_back_from_its_child),
        cmocka_unit_test(series_convergence),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}

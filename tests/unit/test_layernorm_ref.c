/* test_layernorm_ref.c - the layernorm operator's pure-C parts with no GPU: the
 * fp64 GELU and row reference, the kernels' float GELU forms (their constants),
 * the byte/flop model, and the tolerances - including a float emulation of the
 * variants' statistics showing that the tolerance passes the two-pass and
 * shifted forms at a large mean and fails the one-pass variance there. */
#include <math.h>
#include <stdlib.h>

#include "kbtest.h"
#include "kernels/layernorm_ref.h"

/* The fp32 defaults of kb_default_tolerance (check.c), fixed here so that this
 * test needs only layernorm_ref.c. */
#define DEF_ATOL32 1e-7
#define DEF_RTOL32 1e-4

static void gelu_ref_known_values(void **state)
{
    (void)state;
    assert_true(kb_gelu_ref(0.0, 0) == 0.0);
    assert_true(fabs(kb_gelu_ref(1.0, 0) - 0.8413447460685429) < 1e-15);
    assert_true(fabs(kb_gelu_ref(-1.0, 0) - -0.15865525393145705) < 1e-15);
    assert_true(fabs(kb_gelu_ref(2.0, 0) - 1.9544997361036416) < 1e-15);
    assert_true(fabs(kb_gelu_ref(1.0, 1) - 0.8411919906082768) < 1e-15);
    assert_true(fabs(kb_gelu_ref(-1.0, 1) - -0.15880800939172324) < 1e-15);
    assert_true(kb_gelu_ref(40.0, 0) == 40.0);
    assert_true(fabs(kb_gelu_ref(-40.0, 1)) < 1e-300);
}

/* The kernels' GELU (host emulation with libm's exp2f) against fp64 over
 * [-12, 12]: errors at float rounding level, and relative accuracy kept where
 * |y| is small but not negligible. */
static void gelu_fast_matches_ref(void **state)
{
    (void)state;
    for (int form = 0; form < 2; form++) {
        double max_abs = 0.0, max_rel = 0.0, max_rel2 = 0.0;
        for (int i = -120000; i <= 120000; i++) {
            const float z = (float)i * 1e-4f;
            const double ref = kb_gelu_ref((double)z, form);
            const double got = (double)kb_gelu_fast_host(z, form);
            const double err = fabs(got - ref);
            max_abs = fmax(max_abs, err);
            if (fabs(ref) > 1e-3)
                max_rel = fmax(max_rel, err / fabs(ref));
            if (fabs(ref) > 1e-2)
                max_rel2 = fmax(max_rel2, err / fabs(ref));
        }
        print_message("gelu form %d: max abs %.3g, max rel %.3g (|y| > 1e-3), %.3g (|y| > 1e-2)\n",
                      form, max_abs, max_rel, max_rel2);
        assert_true(max_abs < 6e-7);
        assert_true(max_rel < 1e-4);
        assert_true(max_rel2 < 2e-5);
    }
    /* Far tails and non-finite inputs. */
    assert_true(kb_gelu_fast_host(100.0f, 0) == 100.0f);
    assert_true(fabsf(kb_gelu_fast_host(-100.0f, 0)) < 1e-6f);
    assert_true(kb_gelu_fast_host(100.0f, 1) == 100.0f);
    assert_true(kb_gelu_fast_host(-100.0f, 1) == 0.0f);
    assert_true(isnan(kb_gelu_fast_host(NAN, 0)));
    assert_true(isnan(kb_gelu_fast_host(NAN, 1)));
}

/* The 16-bit outputs' GELU (degrees 4 and 3) against fp64 over [-12, 12]:
 * relative errors under half an ulp of fp16 and of bf16, the far tails. */
static void gelu_low_matches_ref(void **state)
{
    (void)state;
    const int degree[2] = {4, 3};
    const double half_ulp[2] = {0x1p-11, 0x1p-9}, tail[2] = {3e-7, 1.2e-6};
    for (int d = 0; d < 2; d++) {
        double max_rel = 0.0, max_tail = 0.0;
        for (int i = -120000; i <= 120000; i++) {
            const float z = (float)i * 1e-4f;
            const double ref = kb_gelu_ref((double)z, 0);
            const double err = fabs((double)kb_gelu_low_host(z, degree[d]) - ref);
            if (fabs(ref) > 1e-3)
                max_rel = fmax(max_rel, err / fabs(ref));
            else
                max_tail = fmax(max_tail, err);
        }
        print_message("gelu degree %d: max rel %.3g (|y| > 1e-3), max abs %.3g below\n",
                      degree[d], max_rel, max_tail);
        assert_true(max_rel < 0.7 * half_ulp[d]);
        assert_true(max_tail < tail[d]);
        assert_true(kb_gelu_low_host(100.0f, degree[d]) == 100.0f);
        assert_true(fabsf(kb_gelu_low_host(-100.0f, degree[d])) < 1e-5f);
        assert_true(isnan(kb_gelu_low_host(NAN, degree[d])));
    }
}

static void ref_stats_and_row(void **state)
{
    (void)state;
    const double x[4] = {1.0, 2.0, 3.0, 4.0};
    double m, r;
    kb_layernorm_ref_stats(x, 4, &m, &r);
    assert_true(m == 2.5);
    assert_true(fabs(r - 1.0 / sqrt(1.25 + 1e-5)) < 1e-15);

    const double c[3] = {7.0, 7.0, 7.0}; /* constant: var 0, rstd from eps */
    kb_layernorm_ref_stats(c, 3, &m, &r);
    assert_true(m == 7.0);
    assert_true(fabs(r - 1.0 / sqrt(1e-5)) < 1e-9);

    const double g[4] = {1.0, 0.5, 2.0, 1.0}, b1[4] = {0.0, 0.25, 0.0, -1.0};
    const double b2[4] = {0.5, 0.0, 0.0, 0.25};
    double y[4], ym, yr;
    kb_layernorm_ref_row(x, g, b1, b2, 4, 0, y, &ym, &yr);
    assert_true(ym == 2.5 && yr == 1.0 / sqrt(1.25 + 1e-5));
    for (int j = 0; j < 4; j++) {
        const double z = (x[j] - 2.5) * yr * g[j] + b1[j] + b2[j];
        assert_true(y[j] == kb_gelu_ref(z, 0));
    }
    kb_layernorm_ref_row(x, g, b1, b2, 4, 1, y, NULL, NULL);
    assert_true(y[3] == kb_gelu_ref((4.0 - 2.5) * yr * 1.0 - 0.75, 1));
}

static void model_counts_bytes_and_flops(void **state)
{
    (void)state;
    double bytes, flops;
    kb_layernorm_model(32768, 4096, 0, KB_FP32, &bytes, &flops);
    assert_true(bytes == 2.0 * 32768 * 4096 * 4 + 3.0 * 4096 * 4);
    assert_true(flops == 14.0 * 32768 * 4096);
    kb_layernorm_model(32768, 4096, 1, KB_BF16, &bytes, &flops);
    assert_true(bytes == 2.0 * 32768 * 4096 * 2 + 3.0 * 4096 * 2 + 2.0 * 32768 * 4);
    kb_layernorm_model(1, 1, 1, KB_FP16, &bytes, &flops);
    assert_true(bytes == 4.0 + 6.0 + 8.0);
    assert_true(flops == 14.0);
}

static void tolerance_formula(void **state)
{
    (void)state;
    const double u = 0x1p-24;
    double atol, rtol;
    kb_layernorm_tolerance(KB_FP32, 4096, 0.0, 1.5, 1e-7, 1e-4, &atol, &rtol);
    assert_true(fabs(atol - (2e-7 + u * 1.5 * (4.0 * 64.0 + 32.0))) < 1e-18);
    assert_true(rtol == 1e-4);
    kb_layernorm_tolerance(KB_FP32, 1, 100.0, 0.5, 1e-7, 1e-4, &atol, &rtol);
    assert_true(fabs(atol - (2e-7 + u * (1600.0 + 4.0 + 32.0))) < 1e-18); /* gamma < 1: 1 */
    kb_layernorm_tolerance(KB_BF16, 4096, 0.0, 1.0, 1e-5, 1e-3, &atol, &rtol);
    assert_true(rtol == 0x1p-7); /* at least twice bf16's unit roundoff */
    kb_layernorm_tolerance(KB_FP16, 4096, 0.0, 1.0, 1e-5, 2e-3, &atol, &rtol);
    assert_true(rtol == 2e-3);
    assert_true(kb_ln_pad_rows(1) == 64 && kb_ln_pad_rows(64) == 64 && kb_ln_pad_rows(65) == 128);
}

/* ---- float emulation of the variants' statistics ------------------------------ */

enum { EMU_SHIFTED_TWO_PASS, EMU_ROUNDED_MEAN, EMU_ONE_PASS };

static uint64_t rng_state;

static float uniform_pm1(void) /* [-1, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (float)((double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-52 - 1.0);
}

/* Bad elements of one row of `cols` fp32 inputs centred at `centre` when the
 * statistics are computed as `how` in float with sequential sums (a single
 * thread's order: harsher than the kernels' trees), under the check's
 * tolerance. */
static int64_t emulate_row(int how, int64_t cols, float centre)
{
    float *xf = malloc((size_t)cols * sizeof *xf);
    double *x = malloc((size_t)cols * 4 * sizeof *x);
    assert_non_null(xf);
    assert_non_null(x);
    double *g = x + cols, *b1 = x + 2 * cols, *b2 = x + 3 * cols;
    double gmax = 0.0;
    for (int64_t j = 0; j < cols; j++) {
        xf[j] = centre + uniform_pm1();
        x[j] = xf[j];
        g[j] = (float)(1.0f + 0.5f * uniform_pm1());
        b1[j] = (float)(0.5f * uniform_pm1());
        b2[j] = (float)(0.5f * uniform_pm1());
        gmax = fmax(gmax, fabs(g[j]));
    }
    double m, r;
    kb_layernorm_ref_stats(x, cols, &m, &r);
    double atol, rtol;
    kb_layernorm_tolerance(KB_FP32, cols, fabs(m) * r, gmax, DEF_ATOL32, DEF_RTOL32, &atol, &rtol);

    const float inv = 1.0f / (float)cols, eps = (float)KB_LN_EPS;
    float K = 0.0f, md = 0.0f, mean = 0.0f, rstd;
    if (how == EMU_ONE_PASS) {
        float s = 0.0f, q = 0.0f;
        for (int64_t j = 0; j < cols; j++) {
            s += xf[j];
            q = fmaf(xf[j], xf[j], q);
        }
        mean = s * inv;
        rstd = 1.0f / sqrtf(fmaxf(fmaf(q, inv, -mean * mean), 0.0f) + eps);
    } else {
        K = xf[0];
        float s = 0.0f, q = 0.0f;
        for (int64_t j = 0; j < cols; j++)
            s += xf[j] - K;
        md = s * inv;
        mean = K + md;
        for (int64_t j = 0; j < cols; j++) {
            const float c = how == EMU_ROUNDED_MEAN ? xf[j] - mean : (xf[j] - K) - md;
            q = fmaf(c, c, q);
        }
        rstd = 1.0f / sqrtf(fmaf(q, inv, eps));
    }
    int64_t bad = 0;
    for (int64_t j = 0; j < cols; j++) {
        const float c = how == EMU_SHIFTED_TWO_PASS ? (xf[j] - K) - md : xf[j] - mean;
        const float z = fmaf(c * rstd, (float)g[j], (float)b1[j] + (float)b2[j]);
        const double got = kb_gelu_fast_host(z, 0);
        const double ref = kb_gelu_ref((x[j] - m) * r * g[j] + b1[j] + b2[j], 0);
        if (!(fabs(got - ref) <= atol + rtol * fabs(ref)))
            bad++;
    }
    free(xf);
    free(x);
    return bad;
}

static void tolerance_passes_stable_forms_and_fails_one_pass(void **state)
{
    (void)state;
    rng_state = 0x9e3779b97f4a7c15ull;
    for (int rep = 0; rep < 8; rep++) {
        /* Centred at 0: every form passes, at the default and a long row. */
        assert_int_equal(emulate_row(EMU_SHIFTED_TWO_PASS, 4096, 0.0f), 0);
        assert_int_equal(emulate_row(EMU_ROUNDED_MEAN, 4096, 0.0f), 0);
        assert_int_equal(emulate_row(EMU_ONE_PASS, 4096, 0.0f), 0);
        assert_int_equal(emulate_row(EMU_ROUNDED_MEAN, 65537, 0.0f), 0);
        /* Centred at 1e4: the shifted two-pass and a rounded fp32 mean pass;
         * the one-pass variance fails on most of the row. */
        assert_int_equal(emulate_row(EMU_SHIFTED_TWO_PASS, 4096, 10000.0f), 0);
        assert_int_equal(emulate_row(EMU_ROUNDED_MEAN, 4096, 10000.0f), 0);
        assert_int_equal(emulate_row(EMU_ROUNDED_MEAN, 65537, 10000.0f), 0);
        assert_true(emulate_row(EMU_ONE_PASS, 4096, 10000.0f) > 2048);
        /* Centred at 100: the one-pass error is already past the tolerance. */
        assert_true(emulate_row(EMU_ONE_PASS, 4096, 100.0f) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gelu_ref_known_values),
        cmocka_unit_test(gelu_fast_matches_ref),
        cmocka_unit_test(gelu_low_matches_ref),
        cmocka_unit_test(ref_stats_and_row),
        cmocka_unit_test(model_counts_bytes_and_flops),
        cmocka_unit_test(tolerance_formula),
        cmocka_unit_test(tolerance_passes_stable_forms_and_fails_one_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

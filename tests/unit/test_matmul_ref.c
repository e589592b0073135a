/* test_matmul_ref.c - the matmul operator's pure-C parts with no GPU: the
 * sampled rows and columns of the check (the corners always among them), the
 * fp64 reference and its epilogue, the byte/flop model, and the tolerances -
 * a float emulation of the kernels' accumulation orders passes with margin,
 * and a result missing one product, or a 16-bit output rounded twice, fails. */
#include <math.h>
#include <stdlib.h>

#include "kbtest.h"
#include "kernels/check.h"
#include "kernels/dtype.h"
#include "kernels/fill.h"
#include "kernels/matmul_ref.h"

static void sample_indices_small_axis_is_whole(void **state)
{
    (void)state;
    int64_t out[KB_MM_CHECK_ROWS];
    assert_int_equal(kb_sample_indices(1, KB_MM_CHECK_ROWS, 5, out), 1);
    assert_int_equal(out[0], 0);
    assert_int_equal(kb_sample_indices(64, KB_MM_CHECK_ROWS, 5, out), 64);
    for (int64_t i = 0; i < 64; i++)
        assert_int_equal(out[i], i);
}

static void sample_indices_large_axis_has_ends_and_is_random(void **state)
{
    (void)state;
    static const int64_t lengths[] = {65, 4095, 4097, 8192, 16777216};
    for (size_t l = 0; l < KB_COUNT(lengths); l++) {
        const int64_t n = lengths[l];
        int64_t a[KB_MM_CHECK_COLS], b[KB_MM_CHECK_COLS];
        assert_int_equal(kb_sample_indices(n, KB_MM_CHECK_COLS, 11, a), KB_MM_CHECK_COLS);
        assert_int_equal(a[0], 0);
        assert_int_equal(a[KB_MM_CHECK_COLS - 1], n - 1);
        for (int i = 1; i < KB_MM_CHECK_COLS; i++)
            assert_true(a[i] > a[i - 1]); /* sorted and distinct */
        /* the same seed draws the same indices; another seed others */
        assert_int_equal(kb_sample_indices(n, KB_MM_CHECK_COLS, 11, b), KB_MM_CHECK_COLS);
        assert_memory_equal(a, b, sizeof a);
        if (n > 2 * KB_MM_CHECK_COLS) {
            kb_sample_indices(n, KB_MM_CHECK_COLS, 12, b);
            assert_memory_not_equal(a, b, sizeof a);
        }
    }
}

/* kb_sample_rows is kb_sample_indices with its own limits: the other
 * operators' samples are what they were. */
static void sample_rows_unchanged(void **state)
{
    (void)state;
    int64_t a[KB_CHECK_SAMPLE_ROWS], b[KB_CHECK_SAMPLE_ROWS];
    assert_int_equal(kb_sample_rows(100000, 3, a), KB_CHECK_SAMPLE_ROWS);
    assert_int_equal(kb_sample_indices(100000, KB_CHECK_SAMPLE_ROWS, 3, b),
                     KB_CHECK_SAMPLE_ROWS);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(a[0], 0);
    assert_int_equal(a[KB_CHECK_SAMPLE_ROWS - 1], 99999);
}

static void reference_and_epilogue(void **state)
{
    (void)state;
    const double a[3] = {1.0, -2.0, 0.5}, b[3] = {4.0, 0.25, -2.0};
    assert_true(kb_matmul_ref_dot(a, b, 3) == 4.0 - 0.5 - 1.0);
    assert_true(kb_matmul_ref_epilogue(2.5, 7.0, 0) == 2.5);
    /* tanh GELU of 2.5 - 3.5 = -1 */
    assert_true(fabs(kb_matmul_ref_epilogue(2.5, -3.5, 1) - -0.15880800939172324) < 1e-15);
}

static void model_counts_each_tensor_once(void **state)
{
    (void)state;
    double bytes, flops;
    kb_matmul_model(4096, 4096, 4096, 0, KB_BF16, &bytes, &flops);
    assert_true(bytes == 3.0 * 4096 * 4096 * 2);
    assert_true(flops == 2.0 * 4096.0 * 4096.0 * 4096.0);
    kb_matmul_model(16, 8192, 8192, 1, KB_FP32, &bytes, &flops);
    assert_true(bytes == (16.0 * 8192 + 8192.0 * 8192 + 16.0 * 8192 + 8192) * 4);
    assert_true(flops == 2.0 * 16 * 8192 * 8192);
}

/* Inputs as the generator draws them, rounded to d. */
static double input(kb_dtype d, uint64_t seed, uint64_t i)
{
    const float u = kb_uniform_host(seed, i) * (float)KB_MM_SPREAD;
    switch (d) {
    case KB_FP16:
        return kb_half_to_float(kb_float_to_half(u));
    case KB_BF16:
        return kb_bf16_to_float(kb_float_to_bf16(u));
    default:
        return u;
    }
}

static double round_to(kb_dtype d, float v)
{
    switch (d) {
    case KB_FP16:
        return kb_half_to_float(kb_float_to_half(v));
    case KB_BF16:
        return kb_bf16_to_float(kb_float_to_bf16(v));
    default:
        return v;
    }
}

/* The kernels' accumulation orders, in float: one fp32 sum along k
 * (naive, shared-memory, register-tiled), and 32 strided partial sums added
 * by a butterfly (coalesced). drop: leave product `drop` out (-1: none). */
static float sum_sequential(const double *a, const double *b, int64_t k, int64_t drop)
{
    float s = 0.0f;
    for (int64_t t = 0; t < k; t++)
        if (t != drop)
            s = fmaf((float)a[t], (float)b[t], s);
    return s;
}

static float sum_strided(const double *a, const double *b, int64_t k)
{
    float p[32] = {0};
    for (int64_t t = 0; t < k; t++)
        p[t % 32] = fmaf((float)a[t], (float)b[t], p[t % 32]);
    for (int h = 16; h >= 1; h >>= 1)
        for (int q = 0; q < h; q++)
            p[q] += p[q + h];
    return p[0];
}

/* Over 256 elements of k-long products in each dtype: the correct orders use
 * at most 0.6 of atol + rtol |ref| (rounding C to a 16-bit dtype alone takes
 * up to half of rtol |ref|; the fp32 sums a few percent of atol), and a
 * product left out is caught. */
static void tolerance_passes_fp32_sums_and_catches_a_missing_product(void **state)
{
    (void)state;
    static const int64_t ks[] = {1, 7, 1000, 8192, 65536};
    for (int d = 0; d < KB_DTYPE_COUNT; d++) {
        for (size_t ki = 0; ki < KB_COUNT(ks); ki++) {
            const int64_t k = ks[ki];
            double *a = malloc((size_t)k * sizeof *a), *b = malloc((size_t)k * sizeof *b);
            assert_non_null(a);
            assert_non_null(b);
            double atol, rtol, worst = 0.0;
            int caught = 0;
            kb_matmul_tolerance((kb_dtype)d, k, &atol, &rtol);
            for (uint64_t e = 0; e < 256; e++) {
                for (int64_t t = 0; t < k; t++) {
                    a[t] = input((kb_dtype)d, 100 + e, (uint64_t)t);
                    b[t] = input((kb_dtype)d, 900 + e, (uint64_t)t);
                }
                const double ref = kb_matmul_ref_dot(a, b, k);
                const double lim = atol + rtol * fabs(ref);
                const double outs[2] = {round_to((kb_dtype)d, sum_sequential(a, b, k, -1)),
                                        round_to((kb_dtype)d, sum_strided(a, b, k))};
                for (int o = 0; o < 2; o++)
                    worst = fmax(worst, fabs(outs[o] - ref) / lim);
                /* the product of largest size, left out */
                int64_t big = 0;
                for (int64_t t = 1; t < k; t++)
                    if (fabs(a[t] * b[t]) > fabs(a[big] * b[big]))
                        big = t;
                const double wrong = round_to((kb_dtype)d, sum_sequential(a, b, k, big));
                caught += fabs(wrong - ref) > lim;
            }
            if (worst > 0.6)
                fail_msg("%s k=%lld: a correct sum used %.2f of the tolerance",
                         kb_dtype_name((kb_dtype)d), (long long)k, worst);
            /* in 16-bit a missing product smaller than C's rounding can hide */
            if (caught < (d == KB_FP32 ? 256 : 200))
                fail_msg("%s k=%lld: a missing product caught %d times of 256",
                         kb_dtype_name((kb_dtype)d), (long long)k, caught);
            free(a);
            free(b);
        }
    }
}

/* 16-bit outputs: rounding C once is within rtol; rounding the sum of two
 * half sums to the dtype first (a second rounding) is not always. */
static void sixteen_bit_output_rounded_once(void **state)
{
    (void)state;
    double atol, rtol;
    kb_matmul_tolerance(KB_BF16, 4096, &atol, &rtol);
    assert_true(rtol == 2.0 * 0x1p-8);
    kb_matmul_tolerance(KB_FP16, 4096, &atol, &rtol);
    assert_true(rtol == 2.0 * 0x1p-11);
    kb_matmul_tolerance(KB_FP32, 4096, &atol, &rtol);
    assert_true(rtol == 2.0 * 0x1p-24);
    assert_true(atol == KB_MM_ACC_ULPS * 0x1p-24 * 4096);
    /* a bf16 result one ulp off at the top of a binade fails */
    const double ref = 1.0;
    kb_matmul_tolerance(KB_BF16, 1, &atol, &rtol);
    assert_true(fabs((1.0 + 0x1p-7) - ref) <= atol + rtol * ref); /* one ulp above 1 */
    assert_false(fabs((1.0 + 0x1p-6) - ref) <= atol + rtol * ref);
}

/* The epilogue's GELU allowance: what a tanh with 2^-11 relative error
 * (tanh.approx.f32) costs, and not a GELU left out. */
static void gelu_allowance(void **state)
{
    (void)state;
    double worst = 0.0;
    for (int i = -8000; i <= 8000; i++) {
        const double z = i * 1e-3;
        const double s = 0.79788456080286535588, u = s * (z + 0.044715 * z * z * z);
        const double t = tanh(u), rough = t * (1.0 + 0x1p-11);
        const double y = 0.5 * z * (1.0 + t), y2 = 0.5 * z * (1.0 + rough);
        assert_true(fabs(y - kb_matmul_ref_epilogue(z, 0.0, 1)) < 1e-12);
        worst = fmax(worst, fabs(y2 - y) / kb_matmul_gelu_atol(KB_FP32, 0.0, z == 0.0 ? 1.0 : z));
        if (z < -0.5) /* identity instead of GELU */
            assert_true(fabs(z - y) > kb_matmul_gelu_atol(KB_FP32, 0.0, z) + 1e-3);
    }
    assert_true(worst > 0.45 && worst < 0.51); /* 0.5 |tanh| of the allowance */
}

/* The unfused epilogue's allowance: the product rounded to bf16's 8
 * significant bits once before bias and GELU stays within it; a product off
 * by 2% (a wrong sum) where GELU is steep (z > 1) does not. */
static void gelu_allowance_unfused(void **state)
{
    (void)state;
    for (int i = -3000; i <= 3000; i++) {
        const double p = i * 1.37e-3, b = ((i * 7919) % 2001 - 1000) * 1e-3, z = p + b;
        int ex;
        const double mant = frexp(p, &ex);
        const double rp = ldexp(nearbyint(mant * 256.0) / 256.0, ex);
        const double y = kb_matmul_ref_epilogue(p, b, 1);
        const double tol = kb_matmul_gelu_atol(KB_BF16, p, z);
        assert_true(fabs(kb_matmul_ref_epilogue(rp, b, 1) - y) <= tol);
        if (p > 1.0 && z > 1.0)
            assert_false(fabs(kb_matmul_ref_epilogue(p * 1.02, b, 1) - y) <= tol);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sample_indices_small_axis_is_whole),
        cmocka_unit_test(gelu_allowance_unfused),
        cmocka_unit_test(sample_indices_large_axis_has_ends_and_is_random),
        cmocka_unit_test(sample_rows_unchanged),
        cmocka_unit_test(reference_and_epilogue),
        cmocka_unit_test(model_counts_each_tensor_once),
        cmocka_unit_test(tolerance_passes_fp32_sums_and_catches_a_missing_product),
        cmocka_unit_test(sixteen_bit_output_rounded_once),
        cmocka_unit_test(gelu_allowance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* layernorm_ref.h - the pure-C parts of the layernorm + bias + GELU operator
 * (y = GELU(layernorm(x; gamma, beta) + b) over the last axis), kept apart from
 * src/kernels/layernorm.c so that the unit tests need no GPU: the fp64
 * reference, the byte/flop model, the check tolerances, and the constants and a
 * host float emulation of the GELU forms the kernels compute (the variants
 * include this header for the constants). */
#ifndef KB_LAYERNORM_REF_H
#define KB_LAYERNORM_REF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rstd = 1 / sqrt(var + eps), var the biased variance. */
#define KB_LN_EPS 1e-5

/* Flops counted per element: 8 for the normalisation and bias (sum, centre,
 * square-accumulate 2, scale, gamma, beta, b) and 6 for GELU (its transcendental
 * counted as one). */
#define KB_LN_FLOPS_PER_ELEM 14.0

/* Exact GELU as the kernels compute it, for |z| = a:
 *   h = 0.5 * erfc(a / sqrt 2) = exp2(a * Q(a) - 1),  y = max(z, 0) - a * h,
 * with Q the degree-5 polynomial below (a minimax fit on [0, 6.5] weighted by
 * the error it causes in y) and a clamped to KB_LN_GELU_CLAMP (beyond it
 * |y - max(z, 0)| < 1e-8 a). In float it errs by under 5.1e-7 absolute (half an
 * ulp of y near 8), under 1.2e-7 absolute for z < 0, and 1.5e-5 relative where
 * |y| > 1e-3; unlike 0.5 z (1 + erff(z / sqrt 2)) it keeps relative accuracy in
 * the negative tail. */
#define KB_LN_GELU_CLAMP (6.5f)
#define KB_LN_ERFC_Q0 (-1.151147127e+00f)
#define KB_LN_ERFC_Q1 (-4.589156806e-01f)
#define KB_LN_ERFC_Q2 (-5.323818699e-02f)
#define KB_LN_ERFC_Q3 (7.977461442e-03f)
#define KB_LN_ERFC_Q4 (-7.398739690e-04f)
#define KB_LN_ERFC_Q5 (2.992415466e-05f)

/* For 16-bit outputs (the fused variant's kernels): the same form with Q of
 * degree 4 (fp16) or 3 (bf16), minimax fits on [0, 5.5] (the clamp
 * KB_LN_GELU16_CLAMP) of the relative error in y, one and two FMAs an element
 * fewer. In float they err by 1.9e-4 (degree 4) and 1.3e-3 (degree 3)
 * relative where |y| > 1e-3, under half an ulp of fp16 (4.9e-4) and of bf16
 * (2.0e-3) respectively, and by under 2.3e-7 and 9.9e-7 absolute below. */
#define KB_LN_GELU16_CLAMP (5.5f)
#define KB_LN_ERFC4_Q0 (-1.148675799e+00f)
#define KB_LN_ERFC4_Q1 (-4.659859240e-01f)
#define KB_LN_ERFC4_Q2 (-4.670024291e-02f)
#define KB_LN_ERFC4_Q3 (5.364676937e-03f)
#define KB_LN_ERFC4_Q4 (-2.741374483e-04f)
#define KB_LN_ERFC3_Q0 (-1.137840867e+00f)
#define KB_LN_ERFC3_Q1 (-4.877981842e-01f)
#define KB_LN_ERFC3_Q2 (-3.317533433e-02f)
#define KB_LN_ERFC3_Q3 (2.078740625e-03f)

/* Tanh GELU 0.5*z*(1 + tanh(s*(z + 0.044715 z^3))), s = sqrt(2/pi), computed as
 * z / (1 + exp2(z * (T1 + T3 * z^2))) since 1 + tanh(u) = 2 / (1 + exp(-2u)):
 * T1 = -2 s log2(e), T3 = 0.044715 * T1. */
#define KB_LN_TANH_T1 (-2.302208198f)
#define KB_LN_TANH_T3 (-0.1029432396f)

/* Host and device alike (the variants include this header under nvcc). */
#ifdef __CUDACC__
#define KB_LN_HD __host__ __device__ __forceinline__
#else
#define KB_LN_HD inline
#endif

/* The erf GELU's exponent for |z| = a: p = a * Q(c) - 1 with c = a clamped
 * (KB_LN_GELU_CLAMP for degree 5, KB_LN_GELU16_CLAMP for 4 and 3) and Q of
 * that degree (5, 4 or 3), so that 0.5 * erfc(a / sqrt 2) = exp2(p); the
 * kernels (degree a compile-time constant) and the host emulation share it. */
static KB_LN_HD float kb_ln_erfc_exponent(float a, int degree)
{
    const float c = fminf(a, degree == 5 ? KB_LN_GELU_CLAMP : KB_LN_GELU16_CLAMP);
    float p;
    if (degree == 5) {
        p = fmaf(KB_LN_ERFC_Q5, c, KB_LN_ERFC_Q4);
        p = fmaf(p, c, KB_LN_ERFC_Q3);
        p = fmaf(p, c, KB_LN_ERFC_Q2);
        p = fmaf(p, c, KB_LN_ERFC_Q1);
        p = fmaf(p, c, KB_LN_ERFC_Q0);
    } else if (degree == 4) {
        p = fmaf(KB_LN_ERFC4_Q4, c, KB_LN_ERFC4_Q3);
        p = fmaf(p, c, KB_LN_ERFC4_Q2);
        p = fmaf(p, c, KB_LN_ERFC4_Q1);
        p = fmaf(p, c, KB_LN_ERFC4_Q0);
    } else {
        p = fmaf(KB_LN_ERFC3_Q3, c, KB_LN_ERFC3_Q2);
        p = fmaf(p, c, KB_LN_ERFC3_Q1);
        p = fmaf(p, c, KB_LN_ERFC3_Q0);
    }
    return fmaf(p, c, -1.0f);
}

/* Rows padded to this many floats where a variant's scratch holds per-row
 * statistics, so that the arrays after them stay 256-byte aligned. */
static inline int64_t kb_ln_pad_rows(int64_t rows)
{
    return (rows + 63) / 64 * 64;
}

/* GELU in fp64: 0.5 x (1 + erf(x / sqrt 2)), or with tanh_form != 0 the tanh
 * approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
double kb_gelu_ref(double x, int tanh_form);

/* The kernels' float GELU (the formulas above) evaluated on the host with libm's
 * exp2f; for the unit tests of the constants. */
float kb_gelu_fast_host(float z, int tanh_form);

/* The fused variant's erf GELU for 16-bit outputs (KB_LN_ERFC4_* for fp16,
 * degree 4; KB_LN_ERFC3_* for bf16, degree 3) on the host, likewise. */
float kb_gelu_low_host(float z, int degree);

/* Mean and rstd = 1/sqrt(var + KB_LN_EPS) of x[0..n) in fp64 (two-pass, biased
 * variance). n >= 1. */
void kb_layernorm_ref_stats(const double *x, int64_t n, double *mean, double *rstd);

/* One output row in fp64: y[j] = GELU((x[j] - mean) * rstd * gamma[j] + beta[j]
 * + bias[j]) with mean and rstd from kb_layernorm_ref_stats. mean and rstd may
 * be NULL; otherwise they receive the row's statistics. */
void kb_layernorm_ref_row(const double *x, const double *gamma, const double *beta,
                          const double *bias, int64_t n, int tanh_form, double *y,
                          double *mean, double *rstd);

/* The byte model (x read once, y written once, gamma, beta and b read once, and
 * with stats the fp32 mean and rstd written) and the flop count
 * (KB_LN_FLOPS_PER_ELEM per element). */
void kb_layernorm_model(int64_t rows, int64_t cols, int stats, kb_dtype d, double *bytes,
                        double *flops);

/* Tolerances for the check, from the dtype's defaults (def_atol, def_rtol, meant
 * for outputs of order 1) and what fp32 statistics legitimately cost:
 *   atol = 2 def_atol + u32 * max(1, gamma_max) * (16 cond + 4 sqrt(cols) + 32)
 *   rtol = max(def_rtol, 2 u_d)
 * u32 = 2^-24; u_d the unit roundoff of the output dtype (2^-24, 2^-11, 2^-8).
 * cond = max over the checked rows of |mean| * rstd: a mean carried in one fp32
 * is off by about u32 |mean|, which moves every normalised value by that times
 * rstd (16 covers a few ulps: any backward-stable algorithm passes, a one-pass
 * variance, whose error grows as cond^2, does not). 4 sqrt(cols) covers fp32
 * sums accumulated sequentially along a row (one thread per row), whose error
 * grows as sqrt(cols); 32 the final fp32 operations and GELU. The doubled
 * default covers outputs up to |y| ~ 3.6, whose absolute errors from the
 * statistics are scaled by |x_hat * gamma| up to ~2.6. A float emulation of
 * the variants (tests/unit/test_layernorm_ref.c) uses at most ~10% of it. */
void kb_layernorm_tolerance(kb_dtype d, int64_t cols, double cond, double gamma_max,
                            double def_atol, double def_rtol, double *atol, double *rtol);

#ifdef __cplusplus
}
#endif
#endif

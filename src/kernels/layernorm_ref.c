/* layernorm_ref.c - fp64 reference, model and tolerances of the layernorm +
 * bias + GELU operator (see layernorm_ref.h); pure C, no CUDA. */
#include "layernorm_ref.h"

#include <math.h>

double kb_gelu_ref(double x, int tanh_form)
{
    if (tanh_form) {
        const double s = 0.79788456080286535588; /* sqrt(2/pi) */
        return 0.5 * x * (1.0 + tanh(s * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}

/* The erf form of kb_gelu_fast_host with Q of degree 5, 4 or 3 (layernorm_ref.h). */
static float gelu_erf_host(float z, int degree)
{
    const float a = fabsf(z);
    const float h = exp2f(kb_ln_erfc_exponent(a, degree)); /* 0.5 * erfc(a / sqrt 2) */
    return fmaf(-a, h, fmaxf(z, 0.0f));
}

float kb_gelu_fast_host(float z, int tanh_form)
{
    if (tanh_form) {
        float p = fmaf(z * z, KB_LN_TANH_T3, KB_LN_TANH_T1);
        return z / (1.0f + exp2f(z * p));
    }
    return gelu_erf_host(z, 5);
}

float kb_gelu_low_host(float z, int degree)
{
    return gelu_erf_host(z, degree == 4 ? 4 : 3);
}

void kb_layernorm_ref_stats(const double *x, int64_t n, double *mean, double *rstd)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++)
        s += x[j];
    const double m = s / (double)n;
    double q = 0.0;
    for (int64_t j = 0; j < n; j++)
        q += (x[j] - m) * (x[j] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(q / (double)n + KB_LN_EPS);
}

void kb_layernorm_ref_row(const double *x, const double *gamma, const double *beta,
                          const double *bias, int64_t n, int tanh_form, double *y,
                          double *mean, double *rstd)
{
    double m, r;
    kb_layernorm_ref_stats(x, n, &m, &r);
    for (int64_t j = 0; j < n; j++)
        y[j] = kb_gelu_ref((x[j] - m) * r * gamma[j] + beta[j] + bias[j], tanh_form);
    if (mean)
        *mean = m;
    if (rstd)
        *rstd = r;
}

void kb_layernorm_model(int64_t rows, int64_t cols, int stats, kb_dtype d, double *bytes,
                        double *flops)
{
    const double size = (double)kb_dtype_size(d);
    const double elems = (double)rows * (double)cols;
    *bytes = 2.0 * elems * size + 3.0 * (double)cols * size + (stats ? 8.0 * (double)rows : 0.0);
    *flops = KB_LN_FLOPS_PER_ELEM * elems;
}

void kb_layernorm_tolerance(kb_dtype d, int64_t cols, double cond, double gamma_max,
                            double def_atol, double def_rtol, double *atol, double *rtol)
{
    const double u32 = 0x1p-24;
    const double u_out = d == KB_FP16 ? 0x1p-11 : d == KB_BF16 ? 0x1p-8 : u32;
    const double g = gamma_max > 1.0 ? gamma_max : 1.0;
    *atol = 2.0 * def_atol + u32 * g * (16.0 * cond + 4.0 * sqrt((double)cols) + 32.0);
    *rtol = def_rtol > 2.0 * u_out ? def_rtol : 2.0 * u_out;
}

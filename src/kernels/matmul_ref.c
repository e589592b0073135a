/* matmul_ref.c - fp64 reference, model and tolerances of the matmul operator
 * (see matmul_ref.h); pure C, no CUDA. */
#include "matmul_ref.h"

#include <math.h>

#include "layernorm_ref.h"

double kb_matmul_ref_dot(const double *a, const double *b, int64_t k)
{
    double s = 0.0;
    for (int64_t t = 0; t < k; t++)
        s += a[t] * b[t];
    return s;
}

double kb_matmul_ref_epilogue(double dot, double bias, int epilogue)
{
    return epilogue ? kb_gelu_ref(dot + bias, 1) : dot;
}

void kb_matmul_model(int64_t m, int64_t n, int64_t k, int epilogue, kb_dtype d,
                     double *bytes, double *flops)
{
    const double es = (double)kb_dtype_size(d);
    const double md = (double)m, nd = (double)n, kd = (double)k;
    *bytes = (md * kd + nd * kd + md * nd + (epilogue ? nd : 0.0)) * es;
    *flops = 2.0 * md * nd * kd;
}

/* The unit roundoff of each dtype. */
static const double unit[KB_DTYPE_COUNT] = {0x1p-24, 0x1p-11, 0x1p-8};

void kb_matmul_tolerance(kb_dtype d, int64_t k, double *atol, double *rtol)
{
    *atol = KB_MM_ACC_ULPS * 0x1p-24 * (double)k * KB_MM_SPREAD * KB_MM_SPREAD;
    *rtol = 2.0 * unit[d];
}

double kb_matmul_gelu_atol(kb_dtype d, double p, double z)
{
    return KB_MM_GELU_REL * fabs(z) + KB_MM_GELU_SLOPE * unit[d] * fabs(p);
}

/* matmul_ref.h - the pure-C parts of the matmul operator (C = A B, optionally
 * C = GELU(A B + bias)), kept apart from src/kernels/matmul.c so that the unit
 * tests need no GPU: the fp64 reference of one output element, the byte/flop
 * model and the check's tolerances. */
#ifndef KB_MATMUL_REF_H
#define KB_MATMUL_REF_H

#include <stdint.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inputs A, B and bias are uniform in [-KB_MM_SPREAD, KB_MM_SPREAD). */
#define KB_MM_SPREAD 1.0

/* The check samples at most this many rows and this many columns of C and
 * compares every element where they cross (64 x 64 = 4096 elements, the four
 * corners always among them); a smaller axis is checked whole. */
#define KB_MM_CHECK_ROWS 64
#define KB_MM_CHECK_COLS 64

/* The reference of one element before its epilogue: sum_t a[t] * b[t] over
 * t < k in fp64 (a: a row of A; b: a row of the N x K buffer B). */
double kb_matmul_ref_dot(const double *a, const double *b, int64_t k);

/* The element after its epilogue: z = dot (epilogue 0) or
 * GELU_tanh(dot + bias) (epilogue 1), in fp64. */
double kb_matmul_ref_epilogue(double dot, double bias, int epilogue);

/* The byte model (A and B read once, C written once, plus the bias with
 * epilogue 1) and the flops (2 M N K; the epilogue's are not counted). */
void kb_matmul_model(int64_t m, int64_t n, int64_t k, int epilogue, kb_dtype d,
                     double *bytes, double *flops);

/* Tolerances for an element of C in dtype d, k products summed in fp32.
 * Element passes if |out - ref| <= atol + rtol |ref| (+ the GELU term below).
 *   atol = KB_MM_ACC_ULPS * 2^-24 * k * KB_MM_SPREAD^2: a sum of k products
 *          accumulated one by one in fp32 errs by about 2^-24 |s_t| per
 *          addition, the partial sums s_t growing as sqrt(t) / 3 for inputs
 *          uniform in [-1, 1): the error's standard deviation is about
 *          2^-24 k / 7, while C itself is of size sqrt(k) / 3 (so the relative
 *          error grows as sqrt(k)). KB_MM_ACC_ULPS = 4 is about 28 standard
 *          deviations: no correct fp32 order fails, and a missing or repeated
 *          product (of size ~1/4) is caught even at k = 2^20.
 *   rtol = 2 u_d, u_d the unit roundoff of the output dtype (2^-24, 2^-11,
 *          2^-8): the one rounding of C to the dtype. */
#define KB_MM_ACC_ULPS 4.0
void kb_matmul_tolerance(kb_dtype d, int64_t k, double *atol, double *rtol);

/* The extra absolute error allowed an element of dtype d with epilogue 1
 * whose product is p and pre-activation z = p + bias:
 *   KB_MM_GELU_REL |z|: a GELU evaluated with a hardware tanh
 *     (tanh.approx.f32: relative error 2^-11) errs by up to 0.5 |z| 2^-11 =
 *     2^-12 |z|; KB_MM_GELU_REL allows twice that, since the vendor's
 *     epilogue is not ours to read;
 *   KB_MM_GELU_SLOPE u_d |p|: the unfused form stores the product as C in
 *     the dtype before the epilogue kernel reads it back (cuBLASLt's fused
 *     epilogue rounds it so too, as measured): one more rounding of p,
 *     carried through GELU, whose slope is at most KB_MM_GELU_SLOPE. The
 *     fused rungs need none of it. */
#define KB_MM_GELU_REL (1.0 / 2048.0)
#define KB_MM_GELU_SLOPE 1.13
double kb_matmul_gelu_atol(kb_dtype d, double p, double z);

#ifdef __cplusplus
}
#endif
#endif

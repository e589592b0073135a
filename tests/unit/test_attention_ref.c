/* test_attention_ref.c - the attention operator's host parts with no GPU: the
 * fp64 reference row on cases small enough to check by hand, the byte/flop
 * model (causal counts half the flops), the variant table's dtypes, scratch
 * and skip reasons. */
#include <math.h>

#include "kbtest.h"
#include "kernels/op.h"
#include "kernels/shape.h"

/* src/kernels/attention.c: the reference of one query row (see there). */
void kb_attention_ref_row(const double *q, const double *k, const double *v, int64_t nkeys,
                          int64_t dim, double scale, double *p, double *out, double *spread);

/* dim 1, scale 1: scores 0 and ln 3 give weights 1/4 and 3/4, so values 4 and
 * 8 average to 7; sqrt(1/16 + 9/16) = sqrt(10) / 4. */
static void ref_row_two_keys(void **state)
{
    (void)state;
    const double q[1] = {1.0}, k[2] = {0.0, log(3.0)}, v[2] = {4.0, 8.0};
    double p[2], out[1], spread;
    kb_attention_ref_row(q, k, v, 2, 1, 1.0, p, out, &spread);
    assert_true(fabs(out[0] - 7.0) < 1e-14);
    assert_true(fabs(spread - sqrt(10.0) / 4.0) < 1e-14);
}

/* Scores near 1000 would overflow exp without the max subtraction; the
 * weights are those of the case above. */
static void ref_row_large_scores(void **state)
{
    (void)state;
    const double q[1] = {1.0}, k[2] = {1000.0, 1000.0 + log(3.0)}, v[2] = {4.0, 8.0};
    double p[2], out[1], spread;
    kb_attention_ref_row(q, k, v, 2, 1, 1.0, p, out, &spread);
    assert_true(fabs(out[0] - 7.0) < 1e-12);
}

/* dim 2, scale 1/sqrt 2: q = (1, 1), keys (0, 0) and (sqrt 2 ln 2, 0) score 0
 * and ln 2: weights 1/3, 2/3; V rows (3, 0) and (0, 3) give (1, 2). One key
 * (the first row of a causal problem) returns its V row with spread 1. */
static void ref_row_dim2_and_one_key(void **state)
{
    (void)state;
    const double q[2] = {1.0, 1.0}, k[4] = {0.0, 0.0, sqrt(2.0) * log(2.0), 0.0};
    const double v[4] = {3.0, 0.0, 0.0, 3.0};
    double p[2], out[2], spread;
    kb_attention_ref_row(q, k, v, 2, 2, 1.0 / sqrt(2.0), p, out, &spread);
    assert_true(fabs(out[0] - 1.0) < 1e-14);
    assert_true(fabs(out[1] - 2.0) < 1e-14);
    assert_true(fabs(spread - sqrt(5.0) / 3.0) < 1e-14);
    kb_attention_ref_row(q, k, v, 1, 2, 1.0 / sqrt(2.0), p, out, &spread);
    assert_true(out[0] == 3.0 && out[1] == 0.0 && spread == 1.0);
}

/* 4 x 16 x 4096 x 128: 4 S^2 D per (batch, head) = 2^39 flops, 2^38 causal;
 * Q, K, V, O once each: 4 x 2^26 elements, 2^28 bytes in bf16. */
static void model_counts_bytes_and_flops(void **state)
{
    (void)state;
    const kb_op *op = kb_op_find("attention");
    int64_t shape[KB_MAX_AXES];
    kb_err e = {{0}};
    double bytes, flops;
    assert_non_null(op);
    assert_string_equal(op->bound, "compute");
    kb_shape_default(op, shape);
    op->model(shape, KB_BF16, &bytes, &flops);
    assert_true(flops == 549755813888.0);
    assert_true(bytes == 268435456.0);
    assert_int_equal(kb_shape_parse(op, "causal=1", shape, &e), KB_OK);
    op->model(shape, KB_FP32, &bytes, &flops);
    assert_true(flops == 274877906944.0);
    assert_true(bytes == 536870912.0);
    assert_int_equal(kb_shape_parse(op, "batch=1,heads=1,seq=3,dim=2", shape, &e), KB_OK);
    op->model(shape, KB_FP16, &bytes, &flops);
    assert_true(flops == 72.0 && bytes == 48.0);
}

/* The ladder's dtypes, scratch and skips: flash-tiled runs 16-bit types at
 * dim 64 and 128; fused skips rows of scores that outgrow a block; the
 * materialising variants take seq^2 fp32 scores per (batch, head). */
static void variant_table(void **state)
{
    (void)state;
    const kb_op *op = kb_op_find("attention");
    const kb_variant *naive = kb_variant_find(op, "naive");
    const kb_variant *fused = kb_variant_find(op, "fused");
    const kb_variant *flash = kb_variant_find(op, "flash-tiled");
    const kb_variant *wgmma = kb_variant_find(op, "flash-wgmma");
    int64_t shape[KB_MAX_AXES];
    kb_err e = {{0}};
    char why[256];
    assert_non_null(naive);
    assert_non_null(fused);
    assert_non_null(flash);
    assert_non_null(wgmma);
    assert_int_equal(op->nvariants, 7); /* the ladder and the vendor row */
    assert_int_equal(op->default_dtype, KB_BF16);
    assert_false(flash->dtypes & KB_DT(KB_FP32));
    assert_false(wgmma->dtypes & KB_DT(KB_FP32));
    assert_non_null(wgmma->prepare);
    assert_true(flash->dtypes & KB_DT(KB_BF16));
    kb_shape_default(op, shape);
    assert_true(naive->scratch_bytes(shape, KB_BF16) == (size_t)64 * 4096 * 4096 * 4);
    assert_int_equal(flash->unsupported(shape, KB_BF16, why, sizeof why), 0);
    assert_int_equal(fused->unsupported(shape, KB_BF16, why, sizeof why), 0);
    assert_int_equal(kb_shape_parse(op, "dim=96", shape, &e), KB_OK);
    assert_int_equal(flash->unsupported(shape, KB_BF16, why, sizeof why), 1);
    assert_non_null(strstr(why, "dim=96"));
    assert_int_equal(wgmma->unsupported(shape, KB_BF16, why, sizeof why), 1);
    assert_string_equal(why, "flash-wgmma is built for dim 64 and 128, not dim=96");
    assert_int_equal(kb_shape_parse(op, "seq=65536", shape, &e), KB_OK);
    assert_int_equal(fused->unsupported(shape, KB_FP32, why, sizeof why), 1);
    assert_non_null(strstr(why, "65536"));
    assert_int_equal(kb_shape_parse(op, "seq=40000", shape, &e), KB_OK);
    assert_int_equal(fused->unsupported(shape, KB_FP32, why, sizeof why), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ref_row_two_keys),
        cmocka_unit_test(ref_row_large_scores),
        cmocka_unit_test(ref_row_dim2_and_one_key),
        cmocka_unit_test(model_counts_bytes_and_flops),
        cmocka_unit_test(variant_table),
    };
    return cmocka_run_group_tests_name("attention reference", tests, NULL, NULL);
}

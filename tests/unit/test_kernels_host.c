/* test_kernels_host.c - the host side of src/kernels with no GPU: dtypes and
 * their conversions, shape parsing, the registry and suggestions, the row
 * operators' cluster rung, a library row's check of its plan's case, row
 * sampling, tolerance accounting, the checks' threads (util/par.h) and the
 * softmax model. */
#include <math.h>
#include <stdlib.h>

#include "kbtest.h"
#include "kernels/check.h"
#include "kernels/fill.h"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "util/par.h"

static void dtype_names_and_sizes(void **state)
{
    (void)state;
    kb_dtype d;
    assert_int_equal(kb_dtype_parse("bf16", &d), 0);
    assert_int_equal(d, KB_BF16);
    assert_int_equal(kb_dtype_parse("fp8", &d), -1);
    assert_int_equal(kb_dtype_size(KB_FP32), 4);
    assert_int_equal(kb_dtype_size(KB_FP16), 2);
    assert_string_equal(kb_dtype_name(KB_FP16), "fp16");
}

static void half_conversions_round_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(kb_float_to_half(1.0f), 0x3c00);
    assert_int_equal(kb_float_to_half(-2.0f), 0xc000);
    assert_int_equal(kb_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(kb_float_to_half(65520.0f), 0x7c00); /* rounds to infinity */
    assert_int_equal(kb_float_to_half(0x1p-24f), 0x0001); /* smallest subnormal */
    assert_int_equal(kb_float_to_half(1.0f + 0x1p-11f), 0x3c00); /* tie to even */
    assert_int_equal(kb_float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    for (uint32_t h = 0; h < 0x7c00; h += 7) /* every 7th finite positive half */
        assert_int_equal(kb_float_to_half(kb_half_to_float((uint16_t)h)), h);
    assert_true(isnan(kb_half_to_float(0xffff)));
}

static void bf16_conversions_round_to_nearest_even(void **state)
{
    (void)state;
    assert_int_equal(kb_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(kb_float_to_bf16(1.0f + 0x1p-8f), 0x3f80);          /* tie to even */
    assert_int_equal(kb_float_to_bf16(1.0f + 0x1p-8f + 0x1p-12f), 0x3f81); /* above tie */
    assert_true(kb_bf16_to_float(0x4049) == 3.140625f);
    assert_true(isnan(kb_bf16_to_float(0xffff)));
    assert_true(isnan(kb_bf16_to_float(kb_float_to_bf16(NAN))));
}

static void shape_parse_accepts_and_defaults(void **state)
{
    (void)state;
    const kb_op *op = kb_op_find("softmax");
    int64_t s[KB_MAX_AXES];
    kb_err e = {{0}};
    assert_non_null(op);
    assert_int_equal(kb_shape_parse(op, "cols=3001", s, &e), KB_OK);
    assert_int_equal(s[0], op->axes[0].dflt);
    assert_int_equal(s[1], 3001);
    assert_int_equal(kb_shape_parse(op, "rows=4099,cols=3001", s, &e), KB_OK);
    char buf[64];
    kb_shape_str(op, s, buf, sizeof buf);
    assert_string_equal(buf, "rows=4099,cols=3001");
}

static void shape_parse_rejects(void **state)
{
    (void)state;
    const kb_op *op = kb_op_find("softmax");
    int64_t s[KB_MAX_AXES];
    kb_err e = {{0}};
    assert_int_equal(kb_shape_parse(op, "rows4096", s, &e), KB_EUSAGE);
    assert_string_equal(e.msg,
                        "--shape part 'rows4096' has no '=' (expected axis=value, e.g. rows=32768)");
    assert_int_equal(kb_shape_parse(op, "rows=4,depth=3", s, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "unknown axis 'depth' for softmax (axes: rows, cols)");
    assert_int_equal(kb_shape_parse(op, "rows=0", s, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "axis rows must be in [1, 2147483647], got '0'");
    assert_int_equal(kb_shape_parse(op, "cols=-3", s, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "axis cols must not be negative, got '-3'");
    assert_int_equal(kb_shape_parse(op, "cols=12abc", s, &e), KB_EUSAGE);
    assert_int_equal(kb_shape_parse(op, "cols=99999999999999999999999", s, &e), KB_EUSAGE);
    assert_int_equal(kb_shape_parse(op, "cols=4,cols=5", s, &e), KB_EUSAGE);
    assert_string_equal(e.msg, "axis 'cols' given twice in --shape");
    assert_int_equal(kb_shape_parse(op, "", s, &e), KB_EUSAGE);
}

static void registry_finds_and_suggests(void **state)
{
    (void)state;
    int n = 0;
    const kb_op *const *ops = kb_ops(&n);
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
        assert_ptr_equal(kb_op_find(ops[i]->name), ops[i]);
        assert_true(ops[i]->nvariants > 0);
        for (int v = 0; v < ops[i]->nvariants; v++) {
            assert_non_null(ops[i]->variants[v].launch);
            assert_true(strlen(ops[i]->variants[v].summary) > 10);
            assert_ptr_equal(kb_variant_find(ops[i], ops[i]->variants[v].name),
                             &ops[i]->variants[v]);
        }
    }
    assert_null(kb_op_find("softmx"));
    assert_string_equal(kb_op_suggest("softmx"), "softmax");
    assert_null(kb_op_suggest("zzzzzzzzzz"));
    const kb_op *sm = kb_op_find("softmax");
    assert_string_equal(kb_variant_suggest(sm, "fusd"), "fused");
    assert_string_equal(kb_variant_suggest(sm, "coalsced"), "coalesced");
    assert_string_equal(kb_variant_suggest(sm, "shared"), "shared-memory");
}

/* A library row's launch: refused, saying why, without a plan or with a case
 * other than the plan's; allowed with the plan's own case. */
static void case_key_check_refuses_other_cases(void **state)
{
    (void)state;
    static float buf[4];
    int64_t shape[1] = {8};
    kb_args a;
    memset(&a, 0, sizeof a);
    a.in[0] = buf;
    a.out[0] = buf + 2;
    a.shape = shape;
    a.dtype = KB_FP16;
    kb_case_key k;
    memset(&k, 0, sizeof k);
    char why[256] = "";
    assert_int_equal(kb_case_key_check(&k, &a, "cudnn", why, sizeof why), cudaErrorInvalidValue);
    assert_string_equal(why, "cudnn: launched without a plan (prepare did not run, or failed)");
    kb_case_key_of(&a, 1, &k);
    why[0] = '\0';
    assert_int_equal(kb_case_key_check(&k, &a, "cublas", why, sizeof why), cudaSuccess);
    assert_string_equal(why, "");
    shape[0] = 9;
    assert_int_equal(kb_case_key_check(&k, &a, "cublas", why, sizeof why), cudaErrorInvalidValue);
    assert_string_equal(why, "cublas: launched with buffers, a shape or a dtype other than the "
                             "ones its plan was prepared for");
}

/* The row operators' cluster rung: listed after fused, for every dtype, with a
 * prepare hook that refuses what it cannot run (here buffers off 16-byte
 * boundaries; on a machine without a GPU the device query itself fails) and
 * names the rung in its reason. */
static void row_operators_have_a_cluster_rung(void **state)
{
    (void)state;
    static const char *const ops[] = {"softmax", "layernorm"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const kb_op *op = kb_op_find(ops[i]);
        assert_non_null(op);
        const kb_variant *c = kb_variant_find(op, "cluster");
        const kb_variant *f = kb_variant_find(op, "fused");
        assert_non_null(c);
        assert_non_null(f);
        assert_true(c > f);
        assert_int_equal(c->dtypes, KB_DT_ALL);
        assert_non_null(c->prepare);
        int64_t shape[KB_MAX_AXES];
        kb_err e = {{0}};
        assert_int_equal(kb_shape_parse(op, "rows=3,cols=1048576", shape, &e), KB_OK);
        kb_args a;
        memset(&a, 0, sizeof a);
        a.dtype = KB_FP32;
        a.shape = shape;
        for (int b = 0; b < KB_MAX_BUFS; b++) {
            a.in[b] = (const void *)(uintptr_t)(0x10000 + 4 * b + 4);
            a.out[b] = (void *)(uintptr_t)(0x20000 + 4 * b + 4);
        }
        char why[256] = "";
        assert_int_not_equal(c->prepare(&a, why, sizeof why), 0);
        assert_non_null(strstr(why, "cluster"));
    }
}

static void sample_rows_include_ends(void **state)
{
    (void)state;
    int64_t *rows = malloc(KB_CHECK_ALL_ROWS * sizeof *rows);
    assert_int_equal(kb_sample_rows(7, 1, rows), 7);
    assert_int_equal(rows[6], 6);
    int64_t n = kb_sample_rows(1000000, 42, rows);
    assert_int_equal(n, KB_CHECK_SAMPLE_ROWS);
    assert_int_equal(rows[0], 0);
    assert_int_equal(rows[n - 1], 999999);
    for (int64_t i = 1; i < n; i++)
        assert_true(rows[i] > rows[i - 1]); /* sorted, distinct */
    int64_t first_other = rows[1];
    kb_sample_rows(1000000, 43, rows);
    assert_true(rows[1] != first_other); /* the sample depends on the seed */
    free(rows);
}

static void check_accounting(void **state)
{
    (void)state;
    kb_check c;
    kb_check_begin(&c, 1e-6, 1e-3);
    kb_check_elem(&c, 1.0005, 1.0, 0, 0);
    kb_check_elem(&c, 2.0, 2.0, 0, 1);
    kb_check_end(&c);
    assert_true(kb_check_passed(&c));
    assert_true(fabs(c.max_abs_err - 5e-4) < 1e-12);
    assert_true(fabs(c.rel_l2_err - 5e-4 / sqrt(5.0)) < 1e-9);

    kb_check_begin(&c, 1e-6, 1e-3);
    kb_check_elem(&c, 1.0, 1.0, 0, 0);
    kb_check_elem(&c, NAN, 1.0, 3, 9);
    kb_check_end(&c);
    assert_false(kb_check_passed(&c));
    assert_int_equal(c.bad_elems, 1);
    assert_non_null(strstr(c.first_bad, "row 3 col 9"));

    kb_check_begin(&c, 0, 1e-3);
    kb_check_elem(&c, 1.01, 1.0, 1, 2);
    kb_check_end(&c);
    assert_false(kb_check_passed(&c));

    kb_check_begin(&c, 0, 1e-3);
    kb_check_end(&c);
    assert_false(kb_check_passed(&c)); /* nothing compared is not a pass */
}

/* Chunk k of kb_par_run marks its indices with k + 1; chunk `fail` fails. */
typedef struct par_marks {
    int *mark;
    int fail;
} par_marks;

static kb_status par_mark(void *ctx, int k, int64_t begin, int64_t end, int w, kb_err *e)
{
    (void)w;
    par_marks *p = ctx;
    if (k == p->fail)
        return kb_fail(e, KB_EENV, "chunk %d failed", k);
    for (int64_t i = begin; i < end; i++)
        p->mark[i] += k + 1;
    return KB_OK;
}

static void par_run_covers_each_index_once(void **state)
{
    (void)state;
    static const int64_t ns[] = {0, 1, 5, 63, 64, 65, 1000};
    static const int threads[] = {1, 3, 8, 100};
    int *mark = calloc(1000, sizeof *mark);
    assert_non_null(mark);
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof threads / sizeof threads[0]; b++) {
            const int64_t n = ns[a];
            memset(mark, 0, 1000 * sizeof *mark);
            par_marks p = {mark, -1};
            kb_err e = {{0}};
            assert_int_equal(kb_par_run(n, 16, threads[b], NULL, par_mark, &p, &e), KB_OK);
            int prev = 1;
            assert_true(n == 0 || mark[0] == 1);
            for (int64_t i = 0; i < n; i++) { /* once each, chunks in order, none empty */
                assert_true(mark[i] == prev || mark[i] == prev + 1);
                prev = mark[i];
            }
            assert_int_equal(prev, n == 0 ? 1 : n < 16 ? n : 16);
        }
    /* a failing chunk's status and message come back */
    par_marks p = {mark, 5};
    kb_err e = {{0}};
    assert_int_equal(kb_par_run(1000, 16, 4, NULL, par_mark, &p, &e), KB_EENV);
    assert_string_equal(e.msg, "chunk 5 failed");
    free(mark);
}

/* Row i: 100 elements, out = ref + tiny noise, two rows with an element
 * out of tolerance (7 and 30). */
static kb_status check_synthetic_row(const void *ctx, int64_t i, double *scratch, kb_check *c,
                                     kb_err *e)
{
    (void)ctx;
    (void)e;
    for (int j = 0; j < 100; j++) {
        const double ref = sin(0.01 * (double)(i * 100 + j)) + 1.5;
        scratch[j] = ref + 1e-9 * cos((double)(i * 7 + j));
        if ((i == 7 || i == 30) && j == 3)
            scratch[j] += 0.5;
        kb_check_elem(c, scratch[j], ref, i, j);
    }
    c->rows_checked++;
    return KB_OK;
}

static void check_rows_match_one_thread(void **state)
{
    (void)state;
    kb_check serial, one, many;
    kb_err e = {{0}};
    double scratch[100];
    kb_check_begin(&serial, 1e-6, 1e-4);
    for (int64_t i = 0; i < 200; i++)
        check_synthetic_row(NULL, i, scratch, &serial, &e);
    kb_check_end(&serial);

    setenv("KBENCH_THREADS", "1", 1);
    kb_check_begin(&one, 1e-6, 1e-4);
    assert_int_equal(kb_check_rows(200, 100, check_synthetic_row, NULL, &one, &e), KB_OK);
    kb_check_end(&one);
    setenv("KBENCH_THREADS", "7", 1);
    assert_int_equal(kb_par_threads(), 7);
    kb_check_begin(&many, 1e-6, 1e-4);
    assert_int_equal(kb_check_rows(200, 100, check_synthetic_row, NULL, &many, &e), KB_OK);
    kb_check_end(&many);
    unsetenv("KBENCH_THREADS");

    const kb_check *k[2] = {&one, &many};
    for (int t = 0; t < 2; t++) {
        assert_int_equal(k[t]->rows_checked, 200);
        assert_int_equal(k[t]->elems_checked, serial.elems_checked);
        assert_int_equal(k[t]->bad_elems, 2);
        assert_string_equal(k[t]->first_bad, serial.first_bad); /* row 7's */
        assert_true(k[t]->max_abs_err == serial.max_abs_err);
        assert_true(fabs(k[t]->rel_l2_err - serial.rel_l2_err) <= 1e-12 * serial.rel_l2_err);
        assert_true(k[t]->atol == 1e-6 && k[t]->rtol == 1e-4);
    }
    assert_non_null(strstr(one.first_bad, "row 7 col 3"));
    /* the same chunks, merged in the same order, whatever the threads */
    assert_true(memcmp(&one, &many, sizeof one) == 0);
}

static void uniform_draw_is_spread(void **state)
{
    (void)state;
    double sum = 0, sq = 0, lo = 1, hi = -1;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        double u = kb_uniform_host(1234, (uint64_t)i);
        assert_true(u >= -1.0 && u < 1.0);
        sum += u;
        sq += u * u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    assert_true(fabs(sum / n) < 0.01);
    assert_true(fabs(sq / n - 1.0 / 3.0) < 0.01); /* variance of U(-1,1) */
    assert_true(lo < -0.999 && hi > 0.999);
    assert_true(kb_uniform_host(1, 5) != kb_uniform_host(2, 5));
}

static void softmax_model(void **state)
{
    (void)state;
    const kb_op *op = kb_op_find("softmax");
    int64_t s[2] = {32768, 4096};
    double bytes = 0, flops = 0;
    op->model(s, KB_BF16, &bytes, &flops);
    assert_true(bytes == 2.0 * 32768 * 4096 * 2);
    assert_true(flops == 5.0 * 32768 * 4096);
    assert_int_equal(op->in_bytes(s, KB_FP32, 0), (size_t)32768 * 4096 * 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtype_names_and_sizes),
        cmocka_unit_test(half_conversions_round_to_nearest_even),
        cmocka_unit_test(bf16_conversions_round_to_nearest_even),
        cmocka_unit_test(shape_parse_accepts_and_defaults),
        cmocka_unit_test(shape_parse_rejects),
        cmocka_unit_test(registry_finds_and_suggests),
        cmocka_unit_test(row_operators_have_a_cluster_rung),
        cmocka_unit_test(case_key_check_refuses_other_cases),
        cmocka_unit_test(sample_rows_include_ends),
        cmocka_unit_test(check_accounting),
        cmocka_unit_test(par_run_covers_each_index_once),
        cmocka_unit_test(check_rows_match_one_thread),
        cmocka_unit_test(uniform_draw_is_spread),
        cmocka_unit_test(softmax_model),
    };
    return cmocka_run_group_tests_name("kernels (host)", tests, NULL, NULL);
}

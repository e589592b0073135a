/* test_cudnn.c - the host side of the cudnn attention variant with no GPU:
 * its row in the table, the skip reasons when cuDNN cannot be loaded
 * ($KBENCH_CUDNN_LIB naming a missing library, or one that is not cuDNN), the
 * dtype refusal, a launch without a plan, and - where this machine has cuDNN -
 * every descriptor of the graphs it builds, which cuDNN validates (shapes,
 * types, attributes) when it finalises them, no GPU needed. */
#include <stdlib.h>

#include "kbtest.h"
#include "kernels/op.h"
#include "kernels/shape.h"

/* variants/attention/cudnn.cu */
int kb_attention_cudnn_check_graph(const int64_t *shape, kb_dtype d, char *why,
                                   size_t why_size);

#define NO_SUCH_LIB "libkbench-no-such-cudnn.so"
#define NO_HEADERS "kbench was built without cuDNN's headers"

static const kb_op *op;
static const kb_variant *v;

static int setup(void **state)
{
    (void)state;
    op = kb_op_find("attention");
    v = op ? kb_variant_find(op, "cudnn") : NULL;
    return v ? 0 : -1;
}

/* 1 when this build has no cuDNN headers (then the row always skips). */
static int built_without_cudnn(void)
{
    int64_t shape[KB_MAX_AXES];
    char why[512] = "";
    kb_shape_default(op, shape);
    return v->unsupported(shape, KB_BF16, why, sizeof why) && strstr(why, NO_HEADERS) == why;
}

/* The vendor row is the last of the ladder, runs the 16-bit types, and has
 * every hook a library variant needs. */
static void row_in_the_table(void **state)
{
    (void)state;
    assert_string_equal(op->variants[op->nvariants - 1].name, "cudnn");
    assert_true(v->dtypes == (KB_DT(KB_FP16) | KB_DT(KB_BF16)));
    assert_non_null(v->launch);
    assert_non_null(v->unsupported);
    assert_non_null(v->prepare);
    assert_non_null(v->last_error);
    assert_null(v->scratch_bytes);
    assert_non_null(strstr(v->summary, "cuDNN"));
}

/* A missing library and a library that is not cuDNN are skips with the
 * loader's reason, in the parent (unsupported) and in the child (prepare). */
static void missing_cudnn_is_a_skip_with_its_reason(void **state)
{
    (void)state;
    int64_t shape[KB_MAX_AXES];
    char why[512] = "";
    kb_shape_default(op, shape);
    if (built_without_cudnn()) {
        assert_int_equal(v->unsupported(shape, KB_BF16, why, sizeof why), 1);
        kbt_has(why, "rebuild with a CUDA toolkit that has them");
        return;
    }
    assert_int_equal(setenv("KBENCH_CUDNN_LIB", NO_SUCH_LIB, 1), 0);
    assert_int_equal(v->unsupported(shape, KB_BF16, why, sizeof why), 1);
    assert_true(strstr(why, "cuDNN not found: dlopen " NO_SUCH_LIB ": ") == why);
    kbt_has(why, "cannot open shared object file");
    kb_args a;
    memset(&a, 0, sizeof a);
    a.dtype = KB_FP16;
    a.shape = shape;
    why[0] = '\0';
    assert_int_equal(v->prepare(&a, why, sizeof why), 1);
    assert_true(strstr(why, "cuDNN not found: dlopen " NO_SUCH_LIB ": ") == why);

    assert_int_equal(setenv("KBENCH_CUDNN_LIB", "libm.so.6", 1), 0);
    assert_int_equal(v->unsupported(shape, KB_BF16, why, sizeof why), 1);
    assert_string_equal(why, "cuDNN not usable: libm.so.6 has no cudnnGetVersion");
    assert_int_equal(unsetenv("KBENCH_CUDNN_LIB"), 0);
}

/* fp32 is refused with its reason whatever cuDNN there is. */
static void fp32_is_refused(void **state)
{
    (void)state;
    int64_t shape[KB_MAX_AXES];
    char why[512] = "";
    kb_shape_default(op, shape);
    if (built_without_cudnn())
        skip();
    assert_int_equal(v->unsupported(shape, KB_FP32, why, sizeof why), 1);
    assert_string_equal(why, "cudnn runs fp16 and bf16, not fp32");
}

/* A launch before any plan was prepared is refused before any CUDA or cuDNN
 * call, and says why. */
static void launch_without_a_plan_is_refused(void **state)
{
    (void)state;
    int64_t shape[KB_MAX_AXES];
    kb_args a;
    memset(&a, 0, sizeof a);
    kb_shape_default(op, shape);
    a.dtype = KB_BF16;
    a.shape = shape;
    assert_int_not_equal(v->launch(&a, NULL), cudaSuccess);
    assert_true(strstr(v->last_error(), "cudnn: ") == v->last_error() ||
                strstr(v->last_error(), NO_HEADERS) == v->last_error());
}

/* Every graph the variant builds passes cuDNN's own validation of its
 * descriptors and operation graph (without a GPU, where cuDNN is here):
 * both dtypes, causal and not, awkward sizes, and the SDPA_FWD operation. */
static void graphs_pass_cudnn_validation(void **state)
{
    (void)state;
    static const char *const shapes[] = {
        "batch=4,heads=16,seq=4096,dim=128",        "batch=4,heads=16,seq=4096,dim=128,causal=1",
        "batch=3,heads=100,seq=77,dim=64,causal=1", "batch=1,heads=2,seq=4097,dim=128",
        "batch=1,heads=1,seq=1,dim=64",             "batch=1,heads=5,seq=1000,dim=128,causal=1",
    };
    static const char *const graphs[] = {"decomposed", "sdpa"};
    char why[512] = "";
    int64_t shape[KB_MAX_AXES];
    kb_err e = {{0}};
    kb_shape_default(op, shape);
    if (v->unsupported(shape, KB_BF16, why, sizeof why)) {
        print_message("no usable cuDNN here (%s): skipping its graph validation\n", why);
        skip();
    }
    for (size_t g = 0; g < KB_COUNT(graphs); g++) {
        assert_int_equal(setenv("KBENCH_CUDNN_GRAPH", graphs[g], 1), 0);
        for (size_t i = 0; i < KB_COUNT(shapes); i++) {
            assert_int_equal(kb_shape_parse(op, shapes[i], shape, &e), KB_OK);
            for (kb_dtype d = KB_FP16; d <= KB_BF16; d = (kb_dtype)(d + 1)) {
                why[0] = '\0';
                if (kb_attention_cudnn_check_graph(shape, d, why, sizeof why) != 0)
                    fail_msg("%s graph, %s %s: %s", graphs[g], shapes[i], kb_dtype_name(d),
                             why);
            }
        }
    }
    assert_int_equal(setenv("KBENCH_CUDNN_GRAPH", "flash", 1), 0);
    assert_int_equal(kb_attention_cudnn_check_graph(shape, KB_BF16, why, sizeof why), -1);
    assert_string_equal(why, "KBENCH_CUDNN_GRAPH='flash' is neither 'decomposed' nor 'sdpa'");
    assert_int_equal(unsetenv("KBENCH_CUDNN_GRAPH"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_in_the_table),
        cmocka_unit_test(missing_cudnn_is_a_skip_with_its_reason),
        cmocka_unit_test(fp32_is_refused),
        cmocka_unit_test(launch_without_a_plan_is_refused),
        cmocka_unit_test(graphs_pass_cudnn_validation),
    };
    return cmocka_run_group_tests_name("cudnn variant", tests, setup, NULL);
}

/* test_gpu_variant_files.c - the starting file `kbench new` writes for each
 * operator, compiled with nvcc for this GPU, loaded as a variant file and
 * checked against the fp64 reference in every dtype at awkward sizes: it must
 * pass as is. Skips, saying so, without a GPU or without nvcc. */
#include <cuda_runtime_api.h>

#include "gpu/gpu_test.h"
#include "kbtest.h"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "profiler/bench.h"
#include "profiler/device.h"
#include "profiler/userkernel.h"
#include "util/embed.h"

static kb_device dev;
static int gpu;

/* Shapes no block, warp or tile size divides, and the extremes. */
static const struct {
    const char *op;
    const char *shapes[6];
} sizes[] = {
    {"softmax", {"rows=1,cols=1", "rows=7,cols=65537", "rows=4099,cols=3001", "rows=20000,cols=7"}},
    {"layernorm",
     {"rows=1,cols=1", "rows=5,cols=4097", "rows=9,cols=4096,gelu=1,stats=1",
      "rows=300,cols=1000,mean=10000"}},
    {"attention",
     {"batch=1,heads=1,seq=1,dim=64", "batch=3,heads=5,seq=77,dim=64,causal=1",
      "batch=1,heads=2,seq=1000,dim=128", "batch=1,heads=1,seq=129,dim=200,causal=1"}},
    {"matmul", {"m=1,n=1,k=1", "m=77,n=129,k=1000", "m=300,n=257,k=64,epilogue=1"}},
};

static int setup(void **state)
{
    (void)state;
    return kbt_gpu_setup(&gpu, &dev, "the variant file GPU tests");
}

static const kb_bench_opts quick = {
    .min_samples = 2, .max_samples = 3, .max_noise = 1.0, .time_limit_s = 1.0};

static void scaffolds_pass_the_check(void **state)
{
    (void)state;
    char nvcc[KB_USER_PATH], arch[16], path[256];
    kb_err e = {{0}};
    if (!gpu)
        skip();
    if (kb_user_find_nvcc(nvcc, sizeof nvcc, &e) != KB_OK) {
        print_message("no nvcc: skipping (%s)\n", e.msg);
        skip();
    }
    const char *tmp = kbt_tmpdir();
    assert_non_null(tmp);
    kb_user_arch(dev.cc_major, dev.cc_minor, arch, sizeof arch);
    int failures = 0, cases = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const kb_op *op = kb_op_find(sizes[i].op);
        if (!op) {
            print_message("operator %s is not in this kbench: its file is not run\n",
                          sizes[i].op);
            continue;
        }
        char tpl[64];
        snprintf(tpl, sizeof tpl, "templates/%s.cu", op->name);
        const kb_embedded *t = kb_embedded_find(tpl);
        assert_non_null(t);
        snprintf(path, sizeof path, "%s/my_%s.cu", tmp, op->name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(t->text, 1, t->len, f), t->len);
        assert_int_equal(fclose(f), 0);
        kb_user_file uf;
        const kb_variant *v = NULL;
        if (kb_user_build(path, arch, &uf, &e) != KB_OK || kb_user_load(&uf, op, &v, &e) != KB_OK)
            fail_msg("%s: %s", path, e.msg);
        for (int s = 0; sizes[i].shapes[s]; s++) {
            int64_t shape[KB_MAX_AXES];
            assert_int_equal(kb_shape_parse(op, sizes[i].shapes[s], shape, &e), KB_OK);
            for (int d = 0; d < KB_DTYPE_COUNT; d++) {
                kb_result r;
                kb_bench_name_case(&r, op, v, (kb_dtype)d, shape, 77u + (unsigned)s);
                assert_int_equal(kb_bench_case(op, v, &dev, &quick, &r, &e), KB_OK);
                cases++;
                if (r.status == KB_R_SKIPPED) {
                    fprintf(stderr, "skipped %s %s %s: %s\n", r.variant, r.dtype,
                            sizes[i].shapes[s], r.reason);
                } else if (r.status != KB_R_OK) {
                    fprintf(stderr, "FAIL %s %s %s: %s (%s)\n", r.variant, r.dtype,
                            sizes[i].shapes[s], kb_rstatus_name(r.status), r.reason);
                    failures++;
                }
                assert_string_equal(r.source_sha256, uf.sha256);
                kb_result_release(&r);
            }
        }
    }
    print_message("%d variant file cases, %d failures\n", cases, failures);
    assert_int_equal(failures, 0);
    assert_true(cases > 0);
    kbt_sh("rm -rf %s", tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scaffolds_pass_the_check),
    };
    return cmocka_run_group_tests_name("gpu variant files", tests, setup, NULL);
}

/* test_variant_files.c - variant files of the user's own (`--variants
 * ./mine.cu`) and `kbench new`: exit codes and messages of each bad input (a
 * file that does not compile, a missing export, an unknown ABI version, the
 * wrong operator, no nvcc), and a good file that compiles, is cached (the
 * second run compiles nothing), loads, and then runs (with a GPU) or stops
 * for the missing GPU (exit 3). Needs nvcc; skips, saying so, without it. */
#include <cuda_runtime_api.h>
#include <sys/stat.h>
#include <unistd.h>

#define KBT_CLI
#include "kbtest.h"

static int have_gpu(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/* The tests compile with the toolkit kbench itself would find. */
static int have_nvcc(void)
{
    if (getenv("CUDA_HOME") && *getenv("CUDA_HOME")) {
        char p[512];
        snprintf(p, sizeof p, "%s/bin/nvcc", getenv("CUDA_HOME"));
        return access(p, X_OK) == 0;
    }
    return access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ||
           system("command -v nvcc >/dev/null 2>&1") == 0;
}

/* Each test's cache is its own folder. */
static int setup_files(void **state)
{
    int rc = setup(state);
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    if (!have_nvcc())
        print_message("no nvcc: the variant file tests that compile skip\n");
    return rc;
}

#define NEED_NVCC()                                                                     \
    do {                                                                                \
        if (!have_nvcc())                                                               \
            skip();                                                                     \
    } while (0)

/* Writes `kbench new OP NAME` into dir and returns its exit code. */
static int scaffold(const char *op, const char *name)
{
    char args[256];
    snprintf(args, sizeof args, "new %s %s/%s", op, dir, name);
    return kb(args);
}

/* Runs softmax (small, no counters) with variants v; returns the exit code. */
static int run_with(const char *v)
{
    char args[512];
    snprintf(args, sizeof args,
             "run softmax --variants %s --shape rows=33,cols=1000 --metrics none --min-samples 3 "
             "--timeout 0.2",
             v);
    return kb(args);
}

/* The store kbench writes by default in this test. */
static int store_exists(void)
{
    char p[128];
    struct stat sb;
    snprintf(p, sizeof p, "%s/default.db", dir);
    return stat(p, &sb) == 0;
}

static void new_writes_a_template_and_never_overwrites(void **state)
{
    (void)state;
    char path[128], msg[256];
    assert_int_equal(scaffold("softmax", "mine"), 0);
    snprintf(path, sizeof path, "%s/mine.cu", dir);
    char *got = kbt_slurp(path), *want = kbt_slurp("templates/softmax.cu");
    assert_non_null(got);
    assert_non_null(want);
    assert_string_equal(got, want);
    free(got);
    free(want);
    kbt_has(out_text, "wrote ");
    assert_int_equal(scaffold("softmax", "mine.cu"), 2);
    snprintf(msg, sizeof msg, "'%s/mine.cu' exists; kbench new never overwrites a file", dir);
    assert_err(msg);
    assert_int_equal(scaffold("softmax", "fused"), 2);
    assert_err("'fused' is the name of a built-in softmax variant; choose another name");
    assert_int_equal(scaffold("softmaks", "x"), 2);
    assert_err("unknown operator 'softmaks' (did you mean 'softmax'?)");
    assert_int_equal(kb("new softmax"), 2);
    assert_err("new needs an operator and a name: kbench new OP NAME");
}

/* Every operator kbench runs has a starting file. */
static void new_has_a_template_for_every_operator(void **state)
{
    (void)state;
    static const char *const ops[] = {"softmax", "layernorm", "attention"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        assert_int_equal(scaffold(ops[i], ops[i]), 0);
        char t[64];
        snprintf(t, sizeof t, "kbench_operator[] = \"%s\"", ops[i]);
        char path[128];
        snprintf(path, sizeof path, "%s/%s.cu", dir, ops[i]);
        char *text = kbt_slurp(path);
        assert_non_null(text);
        kbt_has(text, t);
        free(text);
    }
}

static void broken_file_gives_nvcc_errors_and_stores_nothing(void **state)
{
    (void)state;
    NEED_NVCC();
    char path[128], want[256];
    snprintf(path, sizeof path, "%s/broken.cu", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#include <kbench/variant.h>\n\nint broken = undefined_name + 1;\n", f);
    fclose(f);
    assert_int_equal(run_with(path), 2);
    snprintf(want, sizeof want, "kbench: '%s' does not compile (nvcc, sm_90", path);
    assert_true(strncmp(err_text, want, strlen(want)) == 0);
    snprintf(want, sizeof want, "\n  %s:3: error: identifier \"undefined_name\" is undefined",
             path);
    kbt_has(err_text, want);
    assert_false(store_exists());
    /* nothing cached: only the header's folder */
    assert_int_equal(kbt_sh("ls %s/cache/kbench | grep -q '\\.so$'", dir), 1);
}

static void missing_export_and_unknown_abi_are_named(void **state)
{
    (void)state;
    NEED_NVCC();
    char want[512];
    assert_int_equal(scaffold("softmax", "good"), 0);
    assert_int_equal(kbt_sh("sed 's/kbench_launch/my_launch/' %s/good.cu > %s/nolaunch.cu", dir,
                            dir),
                     0);
    char path[128];
    snprintf(path, sizeof path, "%s/nolaunch.cu", dir);
    assert_int_equal(run_with(path), 2);
    snprintf(want, sizeof want,
             "'%s' does not export kbench_launch (kbench/variant.h lists what a variant file "
             "exports; 'kbench new OP NAME' writes a complete one)",
             path);
    assert_err(want);
    assert_int_equal(kbt_sh("sed 's/= KBENCH_VARIANT_ABI;/= 99;/' %s/good.cu > %s/abi.cu", dir,
                            dir),
                     0);
    snprintf(path, sizeof path, "%s/abi.cu", dir);
    assert_int_equal(run_with(path), 2);
    snprintf(want, sizeof want,
             "'%s' is written for variant ABI 99; this kbench knows ABI 1 (kbench_variant_abi)",
             path);
    assert_err(want);
    assert_int_equal(scaffold("layernorm", "ln"), 0);
    snprintf(path, sizeof path, "%s/ln.cu", dir);
    assert_int_equal(run_with(path), 2);
    snprintf(want, sizeof want, "'%s' is a variant of 'layernorm' (kbench_operator), not of softmax",
             path);
    assert_err(want);
    assert_false(store_exists());
}

static void good_file_compiles_once_loads_and_runs(void **state)
{
    (void)state;
    NEED_NVCC();
    char path[128], v[256];
    assert_int_equal(scaffold("softmax", "mine"), 0);
    snprintf(path, sizeof path, "%s/mine.cu", dir);
    snprintf(v, sizeof v, "fused,%s", path);
    int rc = run_with(v);
    char want[256];
    snprintf(want, sizeof want, "kbench: compiled %s for sm_90", path);
    kbt_has(err_text, want);
    if (!have_gpu()) {
        assert_int_equal(rc, 3);
        kbt_has(err_text, "kbench: no "); /* NVIDIA driver found, or CUDA GPU available */
    } else {
        assert_int_equal(rc, 0);
        kbt_has(out_text, "mine");
        kbt_has(out_text, "fused");
    }
    /* the second run finds the build in the cache: nvcc does not run */
    rc = run_with(v);
    assert_int_equal(rc, have_gpu() ? 0 : 3);
    assert_null(strstr(err_text, "compiled"));
    /* an edit is a new build */
    assert_int_equal(kbt_sh("echo '// edited' >> %s", path), 0);
    rc = run_with(v);
    kbt_has(err_text, want);
}

/* A kernel that traps is its case's failure, as for built-in variants: the
 * other variants still run and the run exits 1. GPU only. */
static void crashing_kernel_fails_its_case_only(void **state)
{
    (void)state;
    NEED_NVCC();
    if (!have_gpu()) {
        print_message("no GPU: skipping the crashing-kernel test\n");
        skip();
    }
    char v[256];
    assert_int_equal(scaffold("softmax", "good"), 0);
    assert_int_equal(kbt_sh("sed 's/const int64_t first = (int64_t)blockIdx.x \\* cols;/&"
                            " __trap();/' %s/good.cu > %s/trap.cu && grep -q __trap %s/trap.cu",
                            dir, dir, dir),
                     0);
    snprintf(v, sizeof v, "%s/trap.cu,fused", dir);
    assert_int_equal(run_with(v), 1);
    kbt_has(out_text, "failed");
    kbt_has(out_text, "fused");
}

static void no_nvcc_is_an_environment_error(void **state)
{
    (void)state;
    char path[128], want[256];
    assert_int_equal(scaffold("softmax", "mine"), 0);
    snprintf(path, sizeof path, "%s/mine.cu", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "CUDA_HOME=%s/nowhere PATH=/usr/bin:/bin KBENCH_DB=%s/default.db %s run softmax "
             "--variants %s >%s 2>%s",
             dir, dir, kbt_bin(), path, out_path, err_path);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    free(err_text);
    err_text = kbt_slurp(err_path);
    snprintf(want, sizeof want, "kbench: no nvcc at '%s/nowhere/bin/nvcc' (CUDA_HOME is '%s/nowhere')\n",
             dir, dir);
    assert_string_equal(err_text, want);
    assert_false(store_exists());
}

static void bad_variant_file_entries(void **state)
{
    (void)state;
    char path[128], want[256];
    assert_int_equal(scaffold("softmax", "mine"), 0);
    snprintf(path, sizeof path, "%s/mine.cu", dir);
    snprintf(want, sizeof want, "run all --variants %s", path);
    assert_int_equal(kb(want), 2);
    snprintf(want, sizeof want, "variant file '%s' needs one operator, not 'all'", path);
    assert_err(want);
    snprintf(want, sizeof want, "run softmax --variants %s/none.cu", dir);
    assert_int_equal(kb(want), 2);
    snprintf(want, sizeof want, "no variant file '%s/none.cu'", dir);
    assert_err(want);
    assert_int_equal(kbt_sh("cp %s %s/fused.cu", path, dir), 0);
    snprintf(want, sizeof want, "run softmax --variants %s/fused.cu", dir);
    assert_int_equal(kb(want), 2);
    snprintf(want, sizeof want,
             "variant file '%s/fused.cu' is named like the built-in variant 'fused' of softmax; "
             "rename the file",
             dir);
    assert_err(want);
    assert_int_equal(kb("run softmax --variants fused --watch"), 2);
    assert_err("--watch needs a variant file in --variants (a .cu path)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_writes_a_template_and_never_overwrites, setup_files,
                                        teardown),
        cmocka_unit_test_setup_teardown(new_has_a_template_for_every_operator, setup_files,
                                        teardown),
        cmocka_unit_test_setup_teardown(broken_file_gives_nvcc_errors_and_stores_nothing,
                                        setup_files, teardown),
        cmocka_unit_test_setup_teardown(missing_export_and_unknown_abi_are_named, setup_files,
                                        teardown),
        cmocka_unit_test_setup_teardown(good_file_compiles_once_loads_and_runs, setup_files,
                                        teardown),
        cmocka_unit_test_setup_teardown(crashing_kernel_fails_its_case_only, setup_files,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_nvcc_is_an_environment_error, setup_files, teardown),
        cmocka_unit_test_setup_teardown(bad_variant_file_entries, setup_files, teardown),
    };
    return cmocka_run_group_tests_name("variant files", tests, NULL, NULL);
}

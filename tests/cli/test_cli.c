/* test_cli.c - the kbench binary as a user meets it: every command answers -h,
 * and every bad input gets its exit code and its one-line message, with the
 * store left untouched. $KBENCH_BIN names the binary (default build/kbench). */
#include <glob.h>
#include <sys/stat.h>

#include <cuda_runtime_api.h>

#define KBT_CLI
#include "kbtest.h"


static int have_gpu(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

static void every_command_answers_help(void **state)
{
    (void)state;
    static const char *const cmds[] = {"list",   "devices", "calibrate", "run",
                                       "report", "import",  "compare",   "new"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s -h", cmds[i]);
        assert_int_equal(kb(args), 0);
        assert_non_null(strstr(out_text, "usage: kbench"));
        assert_string_equal(err_text, "");
    }
    assert_int_equal(kb("--help"), 0);
    assert_non_null(strstr(out_text, "exit codes"));
    assert_int_equal(kb("--version"), 0);
    assert_non_null(strstr(out_text, "kbench "));
}

static void no_command_and_unknown_command(void **state)
{
    (void)state;
    assert_int_equal(kb(""), 2);
    assert_int_equal(kb("rnu"), 2);
    assert_err("unknown command 'rnu' (did you mean 'run'?)");
}

static void list_shows_operators_without_gpu(void **state)
{
    (void)state;
    assert_int_equal(kb("list"), 0);
    assert_non_null(strstr(out_text, "softmax"));
    assert_non_null(strstr(out_text, "fused"));
    assert_int_equal(kb("list softmax"), 0);
    assert_non_null(strstr(out_text, "axis rows"));
    assert_non_null(strstr(out_text, "dtypes: fp32,fp16,bf16 (default fp32)"));
    /* attention runs bf16 unless told otherwise, so the tensor-core rungs show */
    assert_int_equal(kb("list attention"), 0);
    assert_non_null(strstr(out_text, "dtypes: fp32,fp16,bf16 (default bf16)"));
    assert_non_null(strstr(out_text, "flash-wgmma      fp16,bf16"));
    /* matmul says how B is laid out, and shows its rungs */
    assert_int_equal(kb("list matmul"), 0);
    assert_non_null(strstr(out_text, "B stored N x K row-major (= K x N column-major)"));
    assert_non_null(strstr(out_text, "register-tiled   fp32,fp16,bf16"));
    assert_non_null(strstr(out_text, "cublas           fp32,fp16,bf16"));
    assert_int_equal(kb("list softmx"), 2);
    assert_err("unknown operator 'softmx' (did you mean 'softmax'?)");
}

static void run_bad_operator_and_variant(void **state)
{
    (void)state;
    assert_int_equal(kb("run softmx"), 2);
    assert_err("unknown operator 'softmx' (did you mean 'softmax'?)");
    assert_int_equal(kb("run qqqqqqqq"), 2);
    assert_err("unknown operator 'qqqqqqqq' (see 'kbench list')");
    assert_int_equal(kb("run softmax --variants fusd"), 2);
    assert_err("unknown variant 'fusd' for softmax (did you mean 'fused'?)");
    assert_int_equal(kb("run softmax --variants naive,coalsced"), 2);
    assert_err("unknown variant 'coalsced' for softmax (did you mean 'coalesced'?)");
    assert_int_equal(kb("run"), 2);
    assert_err("run needs an operator (see 'kbench list') or 'all'");
    assert_int_equal(kb("run softmax --bogus"), 2);
    assert_err("unknown option '--bogus' for run");
    assert_int_equal(kb("run softmax --shape"), 2);
    assert_err("option '--shape' of run needs a value");
}

static void run_bad_shapes(void **state)
{
    (void)state;
    assert_int_equal(kb("run softmax --shape rows4096"), 2);
    assert_err("--shape part 'rows4096' has no '=' (expected axis=value, e.g. rows=32768)");
    assert_int_equal(kb("run softmax --shape rows=4,depth=3"), 2);
    assert_err("unknown axis 'depth' for softmax (axes: rows, cols)");
    assert_int_equal(kb("run softmax --shape rows=0"), 2);
    assert_err("axis rows must be in [1, 2147483647], got '0'");
    assert_int_equal(kb("run matmul --shape m=64,k=0"), 2);
    assert_err("axis k must be in [1, 16777216], got '0'");
    assert_int_equal(kb("run softmax --shape cols=-5"), 2);
    assert_err("axis cols must not be negative, got '-5'");
    assert_int_equal(kb("run softmax --shape cols=lots"), 2);
    assert_err("axis cols is not a number: 'lots'");
    assert_int_equal(kb("run softmax --shape rows=184467440737095516160"), 2);
    assert_err("axis rows is too large: '184467440737095516160'");
    assert_int_equal(kb("run softmax --shape rows=3000000000"), 2);
    assert_err("axis rows must be in [1, 2147483647], got '3000000000'");
}

static void run_bad_dtype_and_numbers(void **state)
{
    (void)state;
    assert_int_equal(kb("run softmax --dtype fp8"), 2);
    assert_err("unsupported dtype 'fp8' (fp32, fp16, bf16)");
    assert_int_equal(kb("run softmax --min-samples 0"), 2);
    assert_err("--min-samples must be in [1, 1000000], got '0'");
    assert_int_equal(kb("run softmax --max-noise abc"), 2);
    assert_err("--max-noise is not a number: 'abc'");
    assert_int_equal(kb("run softmax --max-error 101"), 2);
    assert_err("--max-error must be in [0, 100], got '101'");
    assert_int_equal(kb("run softmax --warmup 0"), 2);
    assert_err("--warmup must be in [0.001, 3600], got '0'");
    assert_int_equal(kb("run softmax --warmup soon"), 2);
    assert_err("--warmup is not a number: 'soon'");
}

static void run_refuses_bad_stores_untouched(void **state)
{
    (void)state;
    char args[512], path[256];
    /* a directory */
    snprintf(args, sizeof args, "run softmax --db %s", dir);
    assert_int_equal(kb(args), 3);
    /* without a GPU the run stops before it opens the store */
    kbt_has(err_text, have_gpu() ? "is a directory" : "kbench: no ");
    /* a text file */
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("not a database\n", f);
    fclose(f);
    snprintf(args, sizeof args, "run softmax --db %s", path);
    assert_int_equal(kb(args), 3);
    char *after = kbt_slurp(path);
    assert_string_equal(after, "not a database\n");
    free(after);
    /* a path under a file: cannot be created */
    snprintf(args, sizeof args, "run softmax --db %s/sub/x.db", path);
    assert_int_equal(kb(args), 3);
    /* unwritable location */
    assert_int_equal(kb("run softmax --db /proc/kbench-test.db"), 3);
}

/* An output path that cannot be written is refused before any GPU work (exit
 * 2 on a machine with or without a GPU; the store is not even created), so a
 * typo never costs a run. */
static void output_paths_checked_first(void **state)
{
    (void)state;
    char args[768], want[512], db[256];
    snprintf(db, sizeof db, "%s/never.db", dir);
    snprintf(args, sizeof args, "run softmax --db %s --json %s/nope/r.json", db, dir);
    assert_int_equal(kb(args), 2);
    snprintf(want, sizeof want, "cannot write --json '%s/nope/r.json': folder '%s/nope' does not "
             "exist", dir, dir);
    assert_err(want);
    assert_int_equal(access(db, F_OK), -1);
    snprintf(args, sizeof args, "run softmax --db %s --json %s", db, dir);
    assert_int_equal(kb(args), 2);
    snprintf(want, sizeof want, "cannot write --json '%s': it is a folder", dir);
    assert_err(want);
    snprintf(args, sizeof args, "run softmax --db %s --json /proc/kbench-test/r.json", db);
    assert_int_equal(kb(args), 2);
    assert_err("cannot write --json '/proc/kbench-test/r.json': folder '/proc/kbench-test' does "
               "not exist");
    assert_int_equal(access(db, F_OK), -1);
    /* report and compare: before reading anything */
    snprintf(args, sizeof args, "report results/h200/softmax.json -o %s/nope/r.txt", dir);
    assert_int_equal(kb(args), 2);
    snprintf(want, sizeof want, "cannot write -o '%s/nope/r.txt': folder '%s/nope' does not "
             "exist", dir, dir);
    assert_err(want);
    snprintf(args, sizeof args, "compare results/h200/softmax.json results/h200/softmax.json "
             "--format md -o %s/nope/c.md", dir);
    assert_int_equal(kb(args), 2);
    snprintf(want, sizeof want, "cannot write -o '%s/nope/c.md': folder '%s/nope' does not "
             "exist", dir, dir);
    assert_err(want);
    /* a writable folder is fine */
    snprintf(args, sizeof args, "report results/h200/softmax.json -o %s/r.txt", dir);
    assert_int_equal(kb(args), 0);
}

static void run_bad_timing_options(void **state)
{
    (void)state;
    assert_int_equal(kb("run softmax --timing warm"), 2);
    assert_err("unknown timing 'warm' (cold, batch)");
    assert_int_equal(kb("run softmax --timing"), 2);
    assert_err("option '--timing' of run needs a value");
    assert_int_equal(kb("run softmax --exclusive=yes"), 2);
    assert_int_equal(kb("report results/h200/softmax.json --timing hot"), 2);
    assert_err("unknown timing 'hot' (cold, batch)");
    /* the batch time heads the table */
    assert_int_equal(kb("report results/h200/softmax.json --timing batch"), 0);
    kbt_has(out_text, "variant        status     batch  spread");
    kbt_has(out_text, "\nnaive          ok      "); /* its batch time, not a dash */
    assert_int_equal(kb("report results/h200/softmax.json"), 0);
    kbt_has(out_text, "variant        status    median  spread");
}

static void run_and_calibrate_need_a_gpu(void **state)
{
    (void)state;
    if (have_gpu())
        skip();
    char args[256], store[160];
    /* the message says what is missing: the driver, or a GPU */
    const char *why = kbt_sh("/sbin/ldconfig -p | grep -q 'libcuda\\.so\\.1 '") == 0
                          ? "kbench: no CUDA GPU available"
                          : "kbench: no NVIDIA driver found (libcuda.so.1 is not installed)\n";
    snprintf(store, sizeof store, "%s/sub/k.db", dir);
    snprintf(args, sizeof args, "run softmax --db %s", store);
    assert_int_equal(kb(args), 3);
    kbt_has(err_text, why);
    snprintf(args, sizeof args, "calibrate --db %s", store);
    assert_int_equal(kb(args), 3);
    kbt_has(err_text, why);
    assert_int_equal(kb("devices"), 3);
    kbt_has(err_text, why);
    /* and nothing was created: no store, no folder for it */
    assert_int_equal(kbt_sh("[ ! -e '%s/sub' ] && [ ! -e '%s/default.db' ]", dir, dir), 0);
}

/* The vendor row behaves as any variant: without a GPU the run stops the
 * same way (exit 3, the same message); with one, a missing cuDNN
 * ($KBENCH_CUDNN_LIB naming no library) is a skip with the loader's reason,
 * the other variants run, and the exit code stays 0. */
static void run_cudnn_like_any_variant(void **state)
{
    (void)state;
    char args[256];
    assert_int_equal(kb("list attention"), 0);
    kbt_has(out_text, "cudnn            fp16,bf16       the vendor row: cuDNN's fused flash");
    if (!have_gpu()) {
        snprintf(args, sizeof args, "run attention --variants naive --db %s/k.db", dir);
        assert_int_equal(kb(args), 3);
        char *naive_err = strdup(err_text);
        assert_non_null(naive_err);
        snprintf(args, sizeof args, "run attention --variants cudnn --db %s/k.db", dir);
        assert_int_equal(kb(args), 3);
        assert_string_equal(err_text, naive_err);
        kbt_has(err_text, "kbench: no "); /* driver, or GPU */
        free(naive_err);
        return;
    }
    assert_int_equal(setenv("KBENCH_CUDNN_LIB", "libkbench-no-such-cudnn.so", 1), 0);
    snprintf(args, sizeof args,
             "run attention --variants naive,cudnn --shape batch=1,heads=2,seq=64,dim=64 "
             "--metrics none --db %s/k.db",
             dir);
    int rc = kb(args);
    assert_int_equal(unsetenv("KBENCH_CUDNN_LIB"), 0);
    assert_int_equal(rc, 0);
    kbt_has(out_text, "skipped");
    kbt_has(out_text, "cuDNN not found: dlopen libkbench-no-such-cudnn.so: ");
    assert_null(strstr(out_text, "failed"));   /* naive ran */
    assert_null(strstr(out_text, "mismatch"));
}

static void run_refuses_shape_too_large_for_gpu(void **state)
{
    (void)state;
    if (!have_gpu()) {
        print_message("no GPU: skipping the device-memory refusal test\n");
        skip();
    }
    char args[256];
    snprintf(args, sizeof args, "run softmax --db %s/k.db --shape rows=2000000000,cols=2000",
             dir);
    assert_int_equal(kb(args), 2);
    assert_non_null(strstr(err_text, "shape rows=2000000000,cols=2000 (fp32) is too large: "
                                     "it needs 32000"));
}

static void import_refuses_bad_reports(void **state)
{
    (void)state;
    char args[512];
    snprintf(args, sizeof args, "import tests/fixtures/report_truncated.json --db %s/k.db", dir);
    assert_int_equal(kb(args), 2);
    assert_err("'tests/fixtures/report_truncated.json' is not valid JSON (near byte 1400)");
    snprintf(args, sizeof args, "import tests/fixtures/not_a_report.json --db %s/k.db", dir);
    assert_int_equal(kb(args), 2);
    assert_err("'tests/fixtures/not_a_report.json' is not a kbench report (missing field "
               "'schema_version')");
    snprintf(args, sizeof args, "import tests/fixtures/report_newer.json --db %s/k.db", dir);
    assert_int_equal(kb(args), 2);
    assert_err("'tests/fixtures/report_newer.json' has schema_version 2, newer than this kbench "
               "(1)");
    snprintf(args, sizeof args, "import %s/missing.json --db %s/k.db", dir, dir);
    assert_int_equal(kb(args), 3);
    assert_non_null(strstr(err_text, "No such file or directory"));
    /* nothing was imported: the store was not even created */
    snprintf(args, sizeof args, "report --db %s/k.db", dir);
    assert_int_equal(kb(args), 3);
    assert_non_null(strstr(err_text, "no kbench store at"));
}

static void report_errors(void **state)
{
    (void)state;
    char args[512];
    snprintf(args, sizeof args, "report --db %s/none.db", dir);
    assert_int_equal(kb(args), 3);
    char want[256];
    snprintf(want, sizeof want,
             "no kbench store at '%s/none.db' (run 'kbench run' or 'kbench import' first)", dir);
    assert_err(want);
    snprintf(args, sizeof args, "import tests/fixtures/report_v1.json --db %s/k.db", dir);
    assert_int_equal(kb(args), 0);
    snprintf(args, sizeof args, "report abc --db %s/k.db", dir);
    assert_int_equal(kb(args), 2);
    assert_err("run id must be a positive integer or 'latest', got 'abc'");
    snprintf(args, sizeof args, "report 7 --db %s/k.db", dir);
    assert_int_equal(kb(args), 2);
    snprintf(want, sizeof want, "no run 7 in '%s/k.db'", dir);
    assert_err(want);
    snprintf(args, sizeof args, "report --format xml --db %s/k.db", dir);
    assert_int_equal(kb(args), 2);
    assert_err("unknown format 'xml' (text, md, json, csv, html)");
}

/* Removes, in place, every line of text that holds key: the fields a report
 * gained after it was committed (never a last field, so no comma moves). */
static void drop_lines_with(char *text, const char *key)
{
    char *out = text;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        char keep = line[len];
        line[len] = '\0';
        int drop = strstr(line, key) != NULL;
        line[len] = keep;
        if (!drop) {
            memmove(out, line, len);
            out += len;
        }
        line += len;
    }
    *out = '\0';
}

/* Every committed GPU report (results/<device>/<op>.json) reads, prints, and
 * survives import then export byte for byte, apart from the fields added since
 * it was written (derived.speedup). */
static void committed_reports_round_trip(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob("results/*/*.json", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 3);
    char *const *reports = g.gl_pathv;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char args[512], path[256];
        char *orig = kbt_slurp(reports[i]);
        assert_non_null(orig);
        snprintf(args, sizeof args, "report %s", reports[i]);
        assert_int_equal(kb(args), 0);
        assert_non_null(strstr(out_text, "NVIDIA H200"));
        snprintf(args, sizeof args, "import %s --db %s/rt%zu.db", reports[i], dir, i);
        assert_int_equal(kb(args), 0);
        snprintf(path, sizeof path, "%s/rt.json", dir);
        snprintf(args, sizeof args, "report latest --format json -o %s --db %s/rt%zu.db", path,
                 dir, i);
        assert_int_equal(kb(args), 0);
        char *back = kbt_slurp(path);
        assert_non_null(back);
        /* the speed-up over naive is derived again on import (from the run's
         * naive result): compared without it */
        assert_non_null(strstr(back, "\"speedup\":"));
        drop_lines_with(back, "\"speedup\":");
        drop_lines_with(orig, "\"speedup\":");
        if (!strstr(orig, "\"batch_us\":")) {
            /* a report from before the batch time, flags and dated ceilings:
             * it reads with those unknown, written as such */
            static const char *const added[] = {
                "\"batch_us\":", "\"batch_stdrel\":", "\"batch_launches\":",
                "\"throttle_reason\":", "\"flags\":", "\"gbps_batch\":", "\"tflops_batch\":",
                "\"pct_peak_batch\":", "\"speedup_batch\":", "\"copy_batch_gbps\":",
                "\"calibrated_at\":", "\"calibrated_driver\":", "\"calibrated_sm_clock_mhz\":",
                "\"calibrated_mem_clock_mhz\":"};
            for (size_t k = 0; k < sizeof added / sizeof added[0]; k++)
                drop_lines_with(back, added[k]);
        }
        assert_string_equal(back, orig);
        free(back);
        free(orig);
    }
    globfree(&g);
}

static void main_job_without_gpu_shows_the_committed_report(void **state)
{
    (void)state;
    if (have_gpu())
        skip();
    int st = system("make -s run >/dev/null 2>&1");
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_command_answers_help, setup, teardown),
        cmocka_unit_test_setup_teardown(no_command_and_unknown_command, setup, teardown),
        cmocka_unit_test_setup_teardown(list_shows_operators_without_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(run_bad_operator_and_variant, setup, teardown),
        cmocka_unit_test_setup_teardown(run_bad_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(run_bad_dtype_and_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(run_refuses_bad_stores_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(run_and_calibrate_need_a_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(run_cudnn_like_any_variant, setup, teardown),
        cmocka_unit_test_setup_teardown(run_refuses_shape_too_large_for_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(import_refuses_bad_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(report_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(committed_reports_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(output_paths_checked_first, setup, teardown),
        cmocka_unit_test_setup_teardown(run_bad_timing_options, setup, teardown),
        cmocka_unit_test_setup_teardown(main_job_without_gpu_shows_the_committed_report, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}

/* test_pc_stalls.c - the PC-sampling tool without a GPU: bench/pc_stalls.py on
 * samples of two kernels beside a `cuobjdump -sass` listing
 * (tests/fixtures/pc_stalls_sample.csv and .sass, counts chosen so that each
 * share is known) gives each kernel's shares by reason and by opcode, each
 * instruction's share and leading reason, leaves out the "_not_issued"
 * counts, says which kernel the listing lacks, and with --context shows only
 * the hot instructions' neighbourhoods; from an nvdisasm listing with line
 * information, the samples by source line; bad files and command lines get one
 * line and exit 2. build/bench/pc_stalls itself (beside $KBENCH_BIN) rejects
 * each bad command line with one line and exit 2 before it looks for a GPU.
 * The script's tests skip, saying so, without python3. */
#include <libgen.h>

#include "kbtest.h"

static void script_figures(void **state)
{
    (void)state;
    kbt_need_python("bench/pc_stalls.py");
    assert_int_equal(kbt_sh("python3 bench/pc_stalls.py tests/fixtures/pc_stalls_sample.csv "
                            "tests/fixtures/pc_stalls_sample.sass >%s/out 2>&1",
                            kbt_dir),
                     0);
    char *t = kbt_read("out");
    /* axpy: 30 at the first load, 40 + 10 at the FFMA, 15 + 5 at the store */
    kbt_has(t, "kernel axpy: 100 samples at 3 PCs");
    kbt_has(t, "  stalls: long_scoreboard 70.0%, lg_throttle 15.0%, wait 10.0%, selected 5.0%");
    kbt_has(t, "  opcodes: FFMA 50.0%, LDG 30.0%, STG 20.0%");
    kbt_has(t, "   50.00%  long_scoreboard 80.0%              /*0100*/ FFMA R7, R2, UR6, R7\n");
    kbt_has(t, "   20.00%  lg_throttle 75.0%                  /*0110*/ STG.E desc[UR4][R4.64], R7");
    kbt_has(t, "/*00e0*/ IMAD.WIDE R4, R7, 0x4, R4\n");
    /* scale: 6 at the barrier, 2 at the exit; the kernel the listing lacks */
    kbt_has(t, "kernel scale: 8 samples at 2 PCs");
    kbt_has(t, "  opcodes: BAR 75.0%, EXIT 25.0%");
    kbt_has(t, "kernel absent: not in tests/fixtures/pc_stalls_sample.sass");
    assert_null(strstr(t, "not_issued"));
    free(t);

    assert_int_equal(kbt_sh("python3 bench/pc_stalls.py tests/fixtures/pc_stalls_sample.csv "
                            "tests/fixtures/pc_stalls_sample.sass --kernel '^ax' --context 0 "
                            ">%s/out 2>&1",
                            kbt_dir),
                     0);
    t = kbt_read("out");
    kbt_has(t, "/*00d0*/ LDG.E R2, desc[UR4][R2.64]\n  ...\n   50.00%");
    assert_null(strstr(t, "/*00e0*/"));
    assert_null(strstr(t, "kernel scale"));
    free(t);
}

/* An nvdisasm -gi listing (tests/fixtures/pc_stalls_lines.sass: a kernel
 * whose line 6 calls an inlined function of line 1): the samples by source
 * line, an inlined line named with the kernel's line it was inlined at. */
static void script_source_lines(void **state)
{
    (void)state;
    kbt_need_python("bench/pc_stalls.py");
    assert_int_equal(kbt_sh("python3 bench/pc_stalls.py tests/fixtures/pc_stalls_lines.csv "
                            "tests/fixtures/pc_stalls_lines.sass --context 0 >%s/out 2>&1",
                            kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "kernel axpy2: 50 samples at 4 PCs");
    /* line 6: 30 at the load, 5 at the multiply, 5 at the store */
    kbt_has(t, "     80.00%  axpy2.cu:6                               long_scoreboard 75.0%, "
               "lg_throttle 12.5%, wait 12.5%");
    kbt_has(t, "     20.00%  axpy2.cu:1 (axpy2.cu:6)                  wait 100.0%");
    kbt_has(t, "           // axpy2.cu:1 (axpy2.cu:6)\n   20.00%  wait 100.0%");
    free(t);
}

static void script_bad_input(void **state)
{
    (void)state;
    kbt_need_python("bench/pc_stalls.py");
    static const kbt_bad bad[] = {
        {"none.csv x.sass", 1, "none.csv: No such file or directory"},
        {"tests/fixtures/pc_stalls_sample.sass tests/fixtures/pc_stalls_sample.sass", 0,
         "pc_stalls_sample.sass:1: not a CSV of bench/pc_stalls"},
        {"bad.csv tests/fixtures/pc_stalls_sample.sass", 1, "bad.csv:2: not a record of"},
        {"tests/fixtures/pc_stalls_sample.csv tests/fixtures/pc_stalls_sample.csv", 0,
         "pc_stalls_sample.csv: no SASS functions"},
        {"tests/fixtures/pc_stalls_sample.csv tests/fixtures/pc_stalls_sample.sass --kernel zz",
         0, "no sampled kernel matches 'zz'"},
        {"tests/fixtures/pc_stalls_sample.csv tests/fixtures/pc_stalls_sample.sass --context x",
         0, "--context must be a whole number, got 'x'"},
        {"tests/fixtures/pc_stalls_sample.csv", 0, "usage: pc_stalls.py SAMPLES.csv SASS.txt"},
    };
    assert_int_equal(kbt_sh("printf 'kernel,pc,reason,samples\\naxpy,0xq0,wait,1\\n' "
                            ">%s/bad.csv",
                            kbt_dir),
                     0);
    kbt_bad_inputs("bench/pc_stalls.py", bad, sizeof bad / sizeof bad[0]);
}

static void tool_bad_command_lines(void **state)
{
    (void)state;
    char dir[512], tool[600];
    snprintf(dir, sizeof dir, "%s", kbt_bin());
    snprintf(tool, sizeof tool, "%s/bench/pc_stalls", dirname(dir));
    if (access(tool, X_OK) != 0) {
        print_message("%s is not built (make tests builds it): skipping\n", tool);
        skip();
    }
    static const kbt_bad bad[] = {
        {"softmax", 0, "usage: pc_stalls OP VARIANT DTYPE SHAPE"},
        {"softmx fused fp32 rows=4", 0, "unknown operator 'softmx'"},
        {"softmax fusd fp32 rows=4", 0, "unknown variant 'fusd'"},
        {"softmax fused fp64 rows=4", 0, "unknown dtype 'fp64'"},
        {"softmax fused fp32 rows=0", 0, "rows must be in [1,"},
        {"softmax fused fp32 rows=4 -p 4", 0, "-p must be in [5, 31], got '4'"},
        {"softmax fused fp32 rows=4 -n 0", 0, "-n must be in [1, 1000], got '0'"},
        {"softmax fused fp32 rows=4 -t", 0, "-t needs a value"},
        {"softmax fused fp32 rows=4 -x 1", 0, "unknown option '-x'"},
        {"softmax fused fp32 rows=4 -o no/such/dir/x.csv", 0, "cannot write -o"},
    };
    kbt_bad_runs(tool, 2, bad, sizeof bad / sizeof bad[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(script_figures, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(script_source_lines, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(script_bad_input, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(tool_bad_command_lines, kbt_dir_setup,
                                        kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("pc_stalls", tests, NULL, NULL);
}

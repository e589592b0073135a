/* test_timing_modes_script.c - tests/gpu/timing_modes.sh, without a GPU: on a
 * report whose times are chosen so that each figure is known
 * (tests/fixtures/make_report_batch.py) it prints a row per ok result with
 * both times, their ratio and each one's % of its ceiling, leaves the
 * mismatch out, marks the result without a batch time and says on stderr
 * that a report of an older kbench has such results; per operator, the
 * spread of batch / cold over the results that are not `l2_resident` (the
 * list under docs/method.md's table) and the cases at its two ends. A
 * missing report, a file that is not a report and no argument each get one
 * line and a non-zero exit. Skips, saying so, without python3. */
#include "kbtest.h"

static void timing_modes_figures(void **state)
{
    (void)state;
    kbt_need_python("tests/gpu/timing_modes.sh");
    assert_int_equal(kbt_sh("python3 tests/fixtures/make_report_batch.py %s", kbt_dir), 0);
    assert_int_equal(kbt_sh("KBENCH_BIN=build/kbench bash tests/gpu/timing_modes.sh "
                            "%s/report_batch.json >%s/out 2>%s/err",
                            kbt_dir, kbt_dir, kbt_dir),
                     0);
    char *t = kbt_read("out");
    /* 8 MB of model bytes in 10.0 and 10.2 us against 4000 GB/s */
    kbt_has(t, "| softmax | fp32 | rows=1024,cols=1024 | fused | 10.0 us | 10.2 us | 1.020 | 21.0% "
               "| 20.6% |  |\n");
    kbt_has(t, "| softmax | fp32 | rows=8,cols=8 | online | 1.0 us | 2.0 us | 2.000 |");
    kbt_has(t, "| one-pass-variance | 30.0 us | - | - |");
    assert_null(strstr(t, "coalesced"));
    /* online's 2.000 is l2_resident, one-pass-variance has no batch time */
    kbt_has(t, "\n- softmax: batch / cold 0.990 .. 1.020, median 1.005 over 2 results\n"
               "- layernorm: batch / cold 1.000 .. 1.050, median 1.025 over 2 results\n");
    kbt_has(t, "softmax: lowest naive fp32 rows=1024,cols=1024 (100.0 us cold, 99.0 us batch); "
               "highest fused fp32 rows=1024,cols=1024 (10.0 us cold, 10.2 us batch)\n");
    kbt_has(t, "layernorm: lowest shared-memory bf16 rows=64,cols=4096,gelu=0,stats=0,mean=0 "
               "(40.0 us cold, 40.0 us batch); highest fused bf16");
    free(t);
    kbt_one_line("err", "1 ok result(s) without a batch time: reports of an older kbench");
}

static void timing_modes_bad_input(void **state)
{
    (void)state;
    static const kbt_bad bad[] = {
        {"none.json", 0, "cannot read 'none.json'"},
        {"tests/fixtures/not_a_report.json", 0, "is not a kbench report"},
        {"", 0, "usage: tests/gpu/timing_modes.sh REPORT.json..."},
    };
    kbt_bad_runs("KBENCH_BIN=build/kbench bash tests/gpu/timing_modes.sh", 0, bad,
                 sizeof bad / sizeof bad[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(timing_modes_figures, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(timing_modes_bad_input, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("timing_modes script", tests, NULL, NULL);
}

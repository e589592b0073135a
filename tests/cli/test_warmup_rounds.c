/* test_warmup_rounds.c - tests/gpu/warmup_rounds.sh without a GPU: --summary
 * over saved reports (warm-W-R.json) gives a row per report and shape with
 * both variants' medians, their clocks and the second's time over the
 * first's, then the ratio's range per warm-up; DRY_RUN=1 prints one kbench
 * command per warm-up and round, --warmup only where it is not 0; no reports
 * exit 1 saying so, a bad command line 2 with its usage. Skips, saying so,
 * without python3. */
#include <unistd.h>

#include "kbtest.h"

static void summary_and_commands(void **state)
{
    (void)state;
    kbt_need_python("tests/gpu/warmup_rounds.sh");
    /* the fixture: naive 120.5 us and coalesced 20.75 us, both at 1980 MHz */
    assert_int_equal(kbt_sh("cp tests/fixtures/report_counters.json %s/warm-0-1.json && "
                            "cp tests/fixtures/report_counters.json %s/warm-1-2.json",
                            kbt_dir, kbt_dir),
                     0);
    assert_int_equal(kbt_sh("bash tests/gpu/warmup_rounds.sh --summary %s naive,coalesced "
                            ">%s/out 2>&1",
                            kbt_dir, kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "| warm-up-round | shape | naive | MHz | coalesced | MHz | coalesced / naive "
               "time |\n");
    kbt_has(t, "| 0-1 | rows=4096,cols=1000 | 120.5 us | 1980 | 20.8 us | 1980 | 0.172 |\n");
    kbt_has(t, "| 1-2 | rows=4096,cols=1000 | 120.5 us | 1980 | 20.8 us | 1980 | 0.172 |\n");
    kbt_has(t, "warm-up 1 s, rows=4096,cols=1000: coalesced / naive time 0.172 .. 0.172 over 1 "
               "round(s)\n");
    free(t);

    assert_int_equal(kbt_sh("DRY_RUN=1 WARMUPS='0 2' ROUNDS=2 OUT=%s/dry bash "
                            "tests/gpu/warmup_rounds.sh matmul wgmma,cublas m=64,n=64,k=64 "
                            ">%s/dry.txt 2>&1",
                            kbt_dir, kbt_dir),
                     0);
    t = kbt_read("dry.txt");
    kbt_has(t, "run matmul --variants wgmma,cublas --shape m=64,n=64,k=64 --metrics none");
    kbt_has(t, "--json ");
    kbt_has(t, "/dry/warm-0-2.json\n");
    kbt_has(t, "--shape m=64,n=64,k=64 --warmup 2 --metrics none");
    kbt_has(t, "/dry/warm-2-2.json\n");
    size_t lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4);
    free(t);

    assert_int_equal(kbt_sh("mkdir -p %s/empty && bash tests/gpu/warmup_rounds.sh --summary "
                            "%s/empty a,b >%s/none 2>&1",
                            kbt_dir, kbt_dir, kbt_dir),
                     1);
    t = kbt_read("none");
    kbt_has(t, "no warm-*.json in");
    free(t);
    assert_int_equal(kbt_sh("bash tests/gpu/warmup_rounds.sh --summary %s naive >%s/usage 2>&1",
                            kbt_dir, kbt_dir),
                     2);
    t = kbt_read("usage");
    kbt_has(t, "usage: tests/gpu/warmup_rounds.sh OP A,B SHAPE... | --summary DIR A,B");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(summary_and_commands, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

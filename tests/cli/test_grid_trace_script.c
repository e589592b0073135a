/* test_grid_trace_script.c - bench/grid_trace.py, without a GPU: on a trace of
 * two rows of two blocks on two SMs (tests/fixtures/grid_trace_sample.txt,
 * stamps chosen so that each figure is known) it finds each phase's mean and
 * quantiles, how far apart a row's blocks start and publish and how long after
 * the row's last publish they see the pairs, the blocks resident, loading,
 * waiting and writing on average, and the gap from a block's end to the next
 * block's item on its SM, the block slots left idle (over the span, in the
 * ramp and in the tail); a missing file, a file that is not a trace, a record
 * whose stamps go backwards, a file without records and a bad command line
 * each get one line and exit 2. Skips, saying so, without python3. */
#include "kbtest.h"

static void grid_trace_figures(void **state)
{
    (void)state;
    kbt_need_python("bench/grid_trace.py");
    assert_int_equal(kbt_sh("python3 bench/grid_trace.py tests/fixtures/grid_trace_sample.txt "
                            ">%s/out 2>&1",
                            kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "# fp32 2 x 1048576: plain 10.0 us");
    kbt_has(t, "items 4, span 11.0 us");
    /* loads landed after 1.0, 2.0, 1.0, 1.0 us */
    kbt_has(t, "taken -> loads landed    mean   1.25  p10   1.00  p50   1.00  p90   2.00 us");
    /* waits 1.6, 0.5, 1.0, 0.4 */
    kbt_has(t, "publish + wait           mean   0.88  p10   0.40  p50   1.00  p90   1.60 us");
    kbt_has(t, "pairs read               mean   0.50  p10   0.40  p50   0.50  p90   0.60 us");
    kbt_has(t, "lifetime                 mean   4.75  p10   4.00  p50   5.00  p90   6.00 us");
    /* row 0: starts 0 and 0.5, publishes 2.0 and 3.5, pairs seen at 3.6 and 4.0;
     * row 1: 6.0 and 7.0, 8.0 and 8.6, 9.0 and 9.0 */
    kbt_has(t, "start within 0.75 us, publish within 1.05 us, see the pairs 0.35 us after");
    /* 19 us of block lifetimes over 11 us; 3.5 us of waits */
    kbt_has(t, "blocks resident     1.7 on average");
    kbt_has(t, "blocks waiting      0.3 on average");
    /* two slots; one idle over 0-0.5, 5.0-6.0, 6.5-7.0 and 10.0-11.0 us: 3.0
     * of 22 slot-us; the ramp's 0.5, the tail's (after the start at 7.0) 1.0 */
    kbt_has(t, "block slots (2 at most) idle 13.6% of the span's slot time: ramp (until every "
               "slot is taken, 0.5 us) 2.3%, tail (after the last item's start, 4.0 us) 4.5%");
    /* SM 0: 5.0 -> 6.0, SM 1: 6.5 -> 7.0 */
    kbt_has(t, "next block's item on the SM: mean 0.75  p50 1.00  p90 1.00 us");
    free(t);
}

static void grid_trace_bad_input(void **state)
{
    (void)state;
    kbt_need_python("bench/grid_trace.py");
    static const kbt_bad bad[] = {
        {"none.txt", 1, "none.txt: No such file or directory"},
        {"results/h200/softmax.json", 0, "softmax.json:1: not a record of bench/grid_trace"},
        {"back.txt", 1, "back.txt:2: not a record of bench/grid_trace"},
        {"empty.txt", 1, "empty.txt: no records"},
        {"", 0, "usage: grid_trace.py TRACE.txt"},
        {"--help", 0, "usage: grid_trace.py TRACE.txt"},
    };
    assert_int_equal(kbt_sh("echo '# nothing' >%s/empty.txt", kbt_dir), 0);
    assert_int_equal(kbt_sh("printf '# t\\n0 0 0 5 4 6 7 8 9 0 0 0 0 0 0\\n' >%s/back.txt",
                            kbt_dir),
                     0);
    kbt_bad_inputs("bench/grid_trace.py", bad, sizeof bad / sizeof bad[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(grid_trace_figures, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(grid_trace_bad_input, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("grid_trace script", tests, NULL, NULL);
}

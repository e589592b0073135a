/* test_gpipe_trace_script.c - bench/gpipe_trace.py, without a GPU: on a trace
 * of two rows of two blocks on two SMs (tests/fixtures/gpipe_trace_sample.txt,
 * stamps chosen so that each figure is known) it finds each phase's mean and
 * quantiles, the blocks' shares of time waiting for the bytes and for the
 * merged statistics, how far apart a row's blocks publish and how long after
 * the last publish the statistics are handed over, the wait's parts before
 * and after the row's last publish, the SM most often last, and the
 * correlation of a block's lateness between consecutive rows; a missing
 * file, a file that is not a trace, a record whose stamps go backwards, a
 * file without records and a bad command line each get one line and exit 2.
 * Skips, saying so, without python3. */
#include "kbtest.h"

static void gpipe_trace_figures(void **state)
{
    (void)state;
    kbt_need_python("bench/gpipe_trace.py");
    assert_int_equal(kbt_sh("python3 bench/gpipe_trace.py tests/fixtures/gpipe_trace_sample.txt "
                            ">%s/out 2>&1",
                            kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "# fp32 2 x 16384: plain 10.0 us");
    kbt_has(t, "records 4 (2 rows, 2 blocks), span 5.0 us");
    /* the bytes waited for 0.5, 1.0, 0.2, 0.1 us */
    kbt_has(t, "wait for the bytes   mean   0.45  p10   0.10  p50   0.50  p90   1.00 us");
    /* the merged statistics 0.9, 0.4, 0.6, 0.5 */
    kbt_has(t, "wait for merged      mean   0.60  p10   0.40  p50   0.60  p90   0.90 us");
    kbt_has(t, "stores issued        mean   0.70  p10   0.40  p50   1.00  p90   1.00 us");
    /* 1.8 and 2.4 us of waits over two blocks' 5.0 us */
    kbt_has(t, "waiting for the bytes 18.0%, for the merged statistics 24.0%");
    /* row 0 publishes at 2.1 and 3.0, hands over at 3.3; row 1 at 5.1 and
     * 5.3, hands over at 5.5 */
    kbt_has(t, "publish within 0.55 us (p90 0.90); the merged statistics are handed over "
               "0.25 us after the last publish");
    /* waits 2.5-3.4 and 3.0-3.4 around 3.0, 5.0-5.6 and 5.1-5.6 around 5.3:
     * 1.0 us before, 1.4 after */
    kbt_has(t, "41.7% before the row's last publish (the spread), 58.3% after it");
    kbt_has(t, "last to publish, most often: SM 1 2 of 2 rows");
    /* lateness -0.45, +0.45 on row 0 and -0.1, +0.1 on row 1 */
    kbt_has(t, "lateness on a row and on its next: r = 1.00 (2 pairs)");
    free(t);
}

static void gpipe_trace_bad_input(void **state)
{
    (void)state;
    kbt_need_python("bench/gpipe_trace.py");
    static const kbt_bad bad[] = {
        {"none.txt", 1, "none.txt: No such file or directory"},
        {"results/h200/layernorm.json", 0, "layernorm.json:1: not a record of bench/gpipe_trace"},
        {"back.txt", 1, "back.txt:2: not a record of bench/gpipe_trace"},
        {"grid.txt", 1, "grid.txt:2: not a record of bench/gpipe_trace"},
        {"empty.txt", 1, "empty.txt: no records"},
        {"", 0, "usage: gpipe_trace.py TRACE.txt"},
        {"--help", 0, "usage: gpipe_trace.py TRACE.txt"},
    };
    assert_int_equal(kbt_sh("echo '# nothing' >%s/empty.txt", kbt_dir), 0);
    /* the wait for the merged statistics ends before it starts */
    assert_int_equal(kbt_sh("printf '# t\\n0 0 0 1 2 3 4 5 6 9 8 10\\n' >%s/back.txt", kbt_dir),
                     0);
    /* a record of bench/grid_trace (15 numbers) */
    assert_int_equal(
        kbt_sh("sed -n 1,2p tests/fixtures/grid_trace_sample.txt >%s/grid.txt", kbt_dir), 0);
    kbt_bad_inputs("bench/gpipe_trace.py", bad, sizeof bad / sizeof bad[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(gpipe_trace_figures, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(gpipe_trace_bad_input, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("gpipe_trace script", tests, NULL, NULL);
}

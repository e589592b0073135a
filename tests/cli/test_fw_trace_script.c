/* test_fw_trace_script.c - bench/fw_trace.py, without a GPU: on a trace of
 * two blocks (tests/fixtures/fw_trace_sample.txt, stamps chosen so that each
 * figure is known) it finds the steady key tile, each edge of a work tile in
 * cycles and key tiles, the copies' latencies, the tensor pipe's idle gap at
 * an edge, the loop's waits per key tile and the blocks' tail;
 * with --blocks, on the producer's records of two blocks alone, the blocks'
 * spans, the tail and the segments' lengths by their key tiles; a missing
 * file, a file that is not a trace, one without consumer records (without
 * producer records for --blocks) and a bad command line each get one line
 * and exit 2. Skips, saying so, without python3. */
#include "kbtest.h"

static void fw_trace_figures(void **state)
{
    (void)state;
    kbt_need_python("bench/fw_trace.py");
    assert_int_equal(kbt_sh("python3 bench/fw_trace.py tests/fixtures/fw_trace_sample.txt "
                            ">%s/out 2>&1",
                            kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "# att_fw_d128_c2_n176_s2_pp_ov_pd_lr_sf_persist: plain 950.0 us");
    kbt_has(t, "steady key tile: 1000 cycles");
    /* tile 0 of block 0: 5400 cycles to the next Q, 4 key tiles of 1000 */
    kbt_has(t, "edge            1400      1400      1.40\n");
    kbt_has(t, "qwait            400       400      0.40\n");
    kbt_has(t, "s0               500       500      0.50\n");
    kbt_has(t, "pvlast           600       600      0.60\n");
    kbt_has(t, "store            200       200      0.20\n");
    /* Q asked for at 200 and 5000, in at 1000 and 6400 */
    kbt_has(t, "qlat            1100      1100      1.10\n");
    /* tile 0's K asked for at 300 and 5100, in at 1100 and 6500 */
    kbt_has(t, "k0lat           1100      1100      1.10\n");
    /* block 0: tile 0's last P V in at 5800, tile 1's first S issued at 6600 */
    kbt_has(t, "gap              800       800      0.80\n");
    /* 300 cycles over the 3 key tiles after tile 0 */
    kbt_has(t, "waitkv           100       100      0.10\n");
    kbt_has(t, "blocks' spans: mean 7700, longest 10400 cycles: tail efficiency 0.740");
    kbt_has(t, "work tiles a consumer: 1..2");
    free(t);
}

static void fw_trace_bad_input(void **state)
{
    (void)state;
    kbt_need_python("bench/fw_trace.py");
    static const kbt_bad bad[] = {
        {"none.txt", 1, "none.txt: No such file or directory"},
        {"results/h200/attention.json", 0, "attention.json:1: not a record of bench/fw_trace"},
        {"empty.txt", 1, "empty.txt: no consumer records"},
        {"", 0, "usage: fw_trace.py [--blocks] TRACE.txt"},
        {"--blocks", 0, "usage: fw_trace.py [--blocks] TRACE.txt"},
    };
    assert_int_equal(kbt_sh("echo '# nothing' >%s/empty.txt", kbt_dir), 0);
    kbt_bad_inputs("bench/fw_trace.py", bad, sizeof bad / sizeof bad[0]);
}

/* Block 0: two segments (4 and 2 key tiles, Q's slot freed at 200, 1100 and,
 * past the last, 2100), from its top at 100: a span of 2000; block 1: one
 * of 4 key tiles (freed at 250 and 1300): 1200. */
static void fw_trace_blocks(void **state)
{
    (void)state;
    kbt_need_python("bench/fw_trace.py");
    assert_int_equal(kbt_sh("printf '%%s\n' '# st' 'P 0 0 5 4 100 200 300 400 900' "
                            "'P 0 1 9 2 1000 1100 1200 1300 1600' 'P 0 2 64 0 1700 2100 0 0 0' "
                            "'P 1 0 6 4 100 250 300 400 900' 'P 1 1 64 0 1000 1300 0 0 0' "
                            ">%s/p.txt",
                            kbt_dir),
                     0);
    assert_int_equal(kbt_sh("python3 bench/fw_trace.py --blocks %s/p.txt >%s/out 2>&1", kbt_dir,
                            kbt_dir),
                     0);
    char *t = kbt_read("out");
    kbt_has(t, "# st\n");
    kbt_has(t, "blocks' spans: mean 1600, longest 2000 cycles: tail efficiency 0.800");
    kbt_has(t, "segments a block: 1..2");
    kbt_has(t, "        2         1      1000      1000");
    kbt_has(t, "        4         2       975       975");
    free(t);
    assert_int_equal(kbt_sh("echo '# nothing' >%s/empty.txt", kbt_dir), 0);
    assert_int_equal(kbt_sh("python3 bench/fw_trace.py --blocks %s/empty.txt >%s/out 2>%s/err",
                            kbt_dir, kbt_dir, kbt_dir),
                     2);
    kbt_one_line("err", "empty.txt: no producer records");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fw_trace_figures, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(fw_trace_bad_input, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(fw_trace_blocks, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("fw_trace script", tests, NULL, NULL);
}

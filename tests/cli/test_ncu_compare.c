/* test_ncu_compare.c - tests/gpu/ncu_compare.sh without a GPU: a stand-in
 * for ncu writes the raw CSV page ncu would, in the launch order of one
 * kbench run (fill, check launch, warm-ups, then flush and sample three
 * times), with the steady launches (after a launch of the same kernel) at
 * one DRAM write count and the launches after the L2 flush at another. The
 * script must judge kbench against the steady launches only, say OUT when
 * they differ by more than 2%, and under --cache-control all judge every
 * launch. Skips, saying so, without python3. */
#define KBT_CLI
#include "kbtest.h"

#define WRITTEN 536870912.0 /* what the kernel writes */
#define READ_B 536870912.0

static void put(const char *name, const char *text, int exec)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    if (exec)
        assert_int_equal(kbt_sh("chmod +x %s", path), 0);
}

/* A report with one softmax result whose one kernel counted `written` bytes. */
static void report(double written)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"results\": [{\"op\": \"softmax\", \"variant\": \"fused\", \"dtype\": \"fp32\","
             " \"status\": \"ok\", \"shape\": {\"rows\": 32768, \"cols\": 4096},"
             " \"kernels\": [{\"name\": \"softmax_fused_regs_b256\", \"registers\": 36,"
             " \"metrics\": {\"dram__bytes_read.sum\": %.0f, \"dram__bytes_write.sum\": %.0f,"
             " \"sm__warps_active.avg.pct_of_peak_sustained_active\": 70.0,"
             " \"gpu__time_duration.sum\": 260000}}]}]}\n",
             READ_B, written);
    put("report.json", text, 0);
}

/* The stand-in ncu: writes its CSV to the --log-file it is given. Steady
 * launches count WRITTEN, launches after the flush 5% less, the check launch
 * (after the fills) 30% more; --cache-control all makes every launch count
 * 5% less, as ncu's flush before each launch does. IDs come out of order to
 * make sure the script sorts them. */
static void fake_tools(void)
{
    char ncu[4096];
    snprintf(ncu, sizeof ncu,
             "#!/usr/bin/env bash\n"
             "log=; cache=\n"
             "while [ $# -gt 0 ]; do\n"
             "  case $1 in --log-file) log=$2; shift ;; --cache-control) cache=$2; shift ;; esac\n"
             "  shift\n"
             "done\n"
             "w=%.0f; r=%.0f\n"
             "low=$((w * 95 / 100)); high=$((w * 13 / 10))\n"
             "[ \"$cache\" = all ] && w=$low && high=$low\n"
             "row() { printf '\"%%s\",\"4242\",\"%%s\",\"%%s\",\"%%s\",\"%%s\",\"%%s\","
             "\"%%s\"\\n' \"$@\"; }\n"
             "{\n"
             "  echo '==PROF== Connected to process 4242'\n"
             "  echo '\"ID\",\"Process ID\",\"Kernel Name\",\"dram__bytes_read.sum\","
             "\"dram__bytes_write.sum\",\"sm__warps_active.avg.pct_of_peak_sustained_active\","
             "\"launch__registers_per_thread\",\"gpu__time_duration.sum\"'\n"
             "  echo '\"\",\"\",\"\",\"byte\",\"byte\",\"%%\",\"register/thread\",\"ns\"'\n"
             "  row 1 fill_rows_kernel 0 $r 9 40 1000\n"
             "  row 0 fill_uniform_kernel 0 $r 9 40 1000\n"
             "  row 2 softmax_fused_regs $r $high 70.5 36 261000\n"
             "  for i in 3 4 5; do row $i softmax_fused_regs $r $w 70.5 36 260000; done\n"
             "  for i in 6 8 10; do\n"
             "    row $i flush_kernel $((r / 2)) 0 90 16 50000\n"
             "    row $((i + 1)) softmax_fused_regs $r $low 70.4 36 259000\n"
             "  done\n"
             "} >\"$log\"\n",
             WRITTEN, READ_B);
    put("ncu", ncu, 1);
    put("kbench", "#!/bin/sh\nexit 0\n", 1);
}

static int compare(const char *cache)
{
    if (!kbt_have_python())
        skip(); /* said once in main */
    free(out_text);
    int rc = kbt_sh("NCU=%s/ncu NCU_CACHE_CONTROL=%s bash tests/gpu/ncu_compare.sh "
                    "%s/kbench %s/report.json >%s 2>&1 </dev/null",
                    dir, cache, dir, dir, out_path);
    out_text = kbt_slurp(out_path);
    assert_non_null(out_text);
    return rc;
}

/* kbench 0.5% above the steady launches: within limits, although the check
 * launch and the launches after the flush differ by far more */
static void test_judges_steady_launches(void **state)
{
    (void)state;
    fake_tools();
    report(WRITTEN * 1.005);
    int rc = compare("none");
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, out_text);
    assert_non_null(strstr(out_text, "every value within its limit"));
    assert_non_null(strstr(out_text, "(3)")); /* three steady launches */
    assert_non_null(strstr(out_text, "+5.79%  (not judged)")); /* 1.005 / 0.95 */
    assert_null(strstr(out_text, "OUT"));
}

/* kbench at the after-flush figure is 5% below the steady launches: OUT */
static void test_says_out(void **state)
{
    (void)state;
    fake_tools();
    report(WRITTEN * 0.95);
    int rc = compare("none");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out_text, "-5.00%  OUT"));
}

/* with ncu's cache flush every launch is judged, the low one included */
static void test_cache_control_all(void **state)
{
    (void)state;
    fake_tools();
    report(WRITTEN * 0.95);
    int rc = compare("all");
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, out_text);
    assert_non_null(strstr(out_text, "(7)")); /* check, three warm-ups, three samples */
}

static void test_bad_cache_control(void **state)
{
    (void)state;
    fake_tools();
    report(WRITTEN);
    assert_int_equal(compare("some"), 2);
    assert_non_null(strstr(out_text, "NCU_CACHE_CONTROL must be none or all"));
}

int main(void)
{
    if (!kbt_have_python())
        printf("skipping: python3 is not installed (tests/gpu/ncu_compare.sh needs it)\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_judges_steady_launches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_says_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_control_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_cache_control, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

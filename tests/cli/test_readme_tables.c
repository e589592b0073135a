/* test_readme_tables.c - README's attention tables are the committed report's:
 * bench/attention_tables.py --check finds every line of the tables it derives
 * from results/h200/attention.json (through `kbench report --format md`) in
 * README.md as it is; a copy of README with one figure changed, or with a
 * ladder row left out, fails naming the line; an unreadable report or a bad
 * option gets one line and exit 2. $KBENCH_BIN names the binary (default
 * build/kbench). Skips, saying so, without python3. */
#include <stdio.h>
#include <stdlib.h>

#include "kbtest.h"

/* bench/attention_tables.py on the committed report with opts (a shell
 * fragment), its output into dir/out; returns its exit status. */
static int tables(const char *opts)
{
    return kbt_sh("python3 bench/attention_tables.py results/h200/attention.json --kbench %s %s "
                  ">%s/out 2>&1",
                  kbt_bin(), opts, kbt_dir);
}

static void readme_matches_the_report(void **state)
{
    (void)state;
    kbt_need_python("bench/attention_tables.py");
    assert_int_equal(tables("--check README.md"), 0);
    char *t = kbt_read("out");
    assert_string_equal(t, "");
    free(t);
    /* what it checks: both ladders and the row per shape */
    assert_int_equal(tables(""), 0);
    t = kbt_read("out");
    kbt_has(t, "**non-causal**\n\n| variant | kernels | median | TFLOP/s |");
    kbt_has(t, "**causal**\n\n| variant |");
    kbt_has(t, "| flash-wgmma | 1 |");
    kbt_has(t, "| cudnn | 1 |");
    kbt_has(t, "| B=4 H=16 S=4096 D=128 | ");
    kbt_has(t, "| B=4 H=32 S=4096 D=64 causal | ");
    assert_int_equal(kbt_count(t, "| naive |"), 2);
    free(t);
}

/* README.md through the awk program prog into dir/README.md fails the check
 * with one line, which holds want. */
static void one_line_missing(const char *prog, const char *want)
{
    assert_int_equal(kbt_sh("awk '%s' README.md >%s/README.md", prog, kbt_dir), 0);
    char opts[128];
    snprintf(opts, sizeof opts, "--check %s/README.md", kbt_dir);
    assert_int_equal(tables(opts), 1);
    kbt_one_line("out", want);
}

static void a_changed_readme_fails(void **state)
{
    (void)state;
    kbt_need_python("bench/attention_tables.py");
    /* the first flash-wgmma ladder row with its TFLOP/s figure changed */
    one_line_missing("!d && /^\\| flash-wgmma \\| 1 \\|/ {sub(/\\| [0-9.]+ \\| [0-9.]+%/, "
                     "\"| 1.0 | 0.1%\"); d = 1} {print}",
                     "README.md: not as in results/h200/attention.json: | flash-wgmma | 1 |");
    /* the causal ladder's cudnn row left out */
    one_line_missing("/^\\*\\*causal\\*\\*/ {c = 1} !(c && /^\\| cudnn \\| 1 \\|/) {print}",
                     ": | cudnn | 1 |");
}

static void bad_input(void **state)
{
    (void)state;
    kbt_need_python("bench/attention_tables.py");
    assert_int_equal(kbt_sh("python3 bench/attention_tables.py %s/none.json >%s/out 2>%s/err",
                            kbt_dir, kbt_dir, kbt_dir),
                     2);
    kbt_one_line("err", "attention_tables: cannot read report '");
    assert_int_equal(tables("--bogus"), 2);
    char *e = kbt_read("out");
    kbt_has(e, "unrecognized arguments: --bogus");
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(readme_matches_the_report, kbt_dir_setup,
                                        kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(a_changed_readme_fails, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(bad_input, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("README's attention tables", tests, NULL, NULL);
}

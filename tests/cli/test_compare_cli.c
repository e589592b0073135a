/* test_compare_cli.c - `kbench compare` as a user and a CI job meet it: each
 * bad input with its exit code and exact message (missing file, not JSON,
 * another schema version, no case in common, a run id not in the store, bad
 * options), a report against itself (SAME, exit 0), a copy 10% slower written
 * with the JSON API (SLOWER, exit 1), another GPU (the cross-GPU view, not a
 * regression), stored runs mixed with files, and the md, json and html
 * formats. $KBENCH_BIN names the binary (default build/kbench). */
#include <math.h>
#include <unistd.h>

#define KBT_CLI
#include "kbtest.h"
#include "store/json.h"


static const char *const fixture = "tests/fixtures/report_counters.json";

static int kbf(const char *fmt, ...) KB_PRINTF(1, 2);
static int kbf(const char *fmt, ...)
{
    char args[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return kb(args);
}

/* Writes the fixture, changed by edit (may be NULL), to dir/name; path gets
 * its path. */
static void write_report(const char *name, void (*edit)(kb_run *), char *path, size_t n)
{
    kb_run run;
    kb_err e = {{0}};
    assert_int_equal(kb_json_load_run(fixture, &run, &e), KB_OK);
    if (edit)
        edit(&run);
    snprintf(path, n, "%s/%s", dir, name);
    assert_int_equal(kb_json_save_run(&run, path, &e), KB_OK);
    kb_run_release(&run);
}

/* Every sample 10% slower, the summary and derived figures with them. */
static void slower(kb_run *run)
{
    for (size_t i = 0; i < run->nresults; i++) {
        kb_result *r = &run->results[i];
        if (!r->nsamples)
            continue;
        for (size_t k = 0; k < r->nsamples; k++)
            r->samples_us[k] *= 1.10;
        kb_result_summarise(r);
        kb_result_derive(r, &run->dev);
    }
}

/* Only the results that ran (the fixture's skipped vendor left out). */
static void ok_only(kb_run *run)
{
    size_t n = 0;
    for (size_t i = 0; i < run->nresults; i++) {
        if (run->results[i].status == KB_R_OK) {
            kb_result tmp = run->results[n];
            run->results[n++] = run->results[i];
            run->results[i] = tmp;
        }
    }
    for (size_t i = n; i < run->nresults; i++)
        kb_result_release(&run->results[i]);
    run->nresults = n;
}

/* Another GPU, 20% slower in time with a 20% lower copy bandwidth: the same
 * share of its own ceiling. */
static void other_gpu(kb_run *run)
{
    snprintf(run->dev.uuid, sizeof run->dev.uuid, "GPU-99999999-8888-7777-6666-555555555555");
    snprintf(run->dev.name, sizeof run->dev.name, "NVIDIA H100 80GB HBM3");
    run->dev.copy_gbps /= 1.2;
    for (size_t i = 0; i < run->nresults; i++) {
        kb_result *r = &run->results[i];
        for (size_t k = 0; k < r->nsamples; k++)
            r->samples_us[k] *= 1.2;
        if (r->nsamples) {
            kb_result_summarise(r);
            kb_result_derive(r, &run->dev);
        }
    }
}

/* The operator renamed: nothing in common with the fixture. */
static void other_op(kb_run *run)
{
    for (size_t i = 0; i < run->nresults; i++)
        snprintf(run->results[i].op, sizeof run->results[i].op, "layernorm");
}

/* ---- tests ---------------------------------------------------------------------- */

static void help_and_usage_errors(void **state)
{
    (void)state;
    assert_int_equal(kb("compare -h"), 0);
    kbt_has(out_text, "usage: kbench compare BASE NEW");
    kbt_has(out_text, "SLOWER     the interval lies above 1 + threshold");
    assert_string_equal(err_text, "");
    assert_int_equal(kb("compare"), 2);
    assert_err("compare needs BASE and NEW (run ids, 'latest' or JSON report files; see "
               "'kbench compare -h')");
    assert_int_equal(kbf("compare %s", fixture), 2);
    assert_int_equal(kbf("compare %s %s extra", fixture, fixture), 2);
    assert_err("unexpected argument 'extra' for compare (BASE and NEW only)");
    assert_int_equal(kbf("compare %s %s --threshold 150", fixture, fixture), 2);
    assert_err("--threshold must be in [0, 100], got '150'");
    assert_int_equal(kbf("compare %s %s --threshold five", fixture, fixture), 2);
    assert_err("--threshold is not a number: 'five'");
    assert_int_equal(kbf("compare %s %s --format xml", fixture, fixture), 2);
    assert_err("unknown format 'xml' (text, md, json, html)");
    assert_int_equal(kbf("compare %s %s --bogus", fixture, fixture), 2);
    assert_err("unknown option '--bogus' for compare");
    assert_int_equal(kbf("compare %s %s --threshold", fixture, fixture), 2);
    assert_err("option '--threshold' of compare needs a value");
    assert_int_equal(kbf("compare abc %s", fixture), 2);
    assert_err("run id must be a positive integer, 'latest' or a JSON report file, got 'abc'");
}

static void bad_reports(void **state)
{
    (void)state;
    char want[512];
    assert_int_equal(kbf("compare %s/missing.json %s", dir, fixture), 3);
    snprintf(want, sizeof want, "cannot read '%s/missing.json': No such file or directory", dir);
    assert_err(want);
    assert_int_equal(kbf("compare %s tests/fixtures/report_truncated.json", fixture), 2);
    assert_err("'tests/fixtures/report_truncated.json' is not valid JSON (near byte 1400)");
    assert_int_equal(kbf("compare tests/fixtures/not_a_report.json %s", fixture), 2);
    assert_err("'tests/fixtures/not_a_report.json' is not a kbench report (missing field "
               "'schema_version')");
    assert_int_equal(kbf("compare %s tests/fixtures/report_newer.json", fixture), 2);
    assert_err("'tests/fixtures/report_newer.json' has schema_version 2, newer than this kbench "
               "(1)");
    char other[256];
    write_report("layernorm.json", other_op, other, sizeof other);
    assert_int_equal(kbf("compare %s %s", fixture, other), 2);
    snprintf(want, sizeof want,
             "no case in common: BASE '%s' has 3 cases (softmax), NEW '%s' has 3 cases "
             "(layernorm); cases match by operator, variant, dtype and shape",
             fixture, other);
    assert_err(want);
    assert_string_equal(out_text, "");
}

static void stored_runs(void **state)
{
    (void)state;
    char want[512];
    /* no store at all: an environment error */
    assert_int_equal(kbf("compare 1 latest --db %s/none.db", dir), 3);
    snprintf(want, sizeof want,
             "no kbench store at '%s/none.db' (run 'kbench run' or 'kbench import' first)", dir);
    assert_err(want);
    assert_int_equal(kbf("import %s --db %s/k.db", fixture, dir), 0);
    assert_int_equal(kbf("compare 7 latest --db %s/k.db", dir), 2);
    snprintf(want, sizeof want, "no run 7 in '%s/k.db'", dir);
    assert_err(want);
    /* a stored run against a file, and against itself */
    assert_int_equal(kbf("compare latest %s --db %s/k.db", fixture, dir), 0);
    kbt_has(out_text, "BASE  run 1 \xC2\xB7 NVIDIA H200");
    kbt_has(out_text, "3 cases: 0 faster, 0 slower, 2 same, 1 uncertain, 0 only in BASE, 0 only in "
                  "NEW\n");
    assert_int_equal(kbf("compare 1 latest --db %s/k.db", dir), 0);
    kbt_has(out_text, "NEW   run 1 \xC2\xB7");
}

/* A report against itself: every case that ran is SAME, exit 0. */
static void same_report(void **state)
{
    (void)state;
    char ok[256];
    const char *committed = "results/h200/softmax.json";
    write_report("ok.json", ok_only, ok, sizeof ok);
    assert_int_equal(kbf("compare %s %s", ok, ok), 0);
    kbt_has(out_text, "2 cases: 0 faster, 0 slower, 2 same, 0 uncertain, 0 only in BASE, 0 only in "
                  "NEW\n");
    assert_null(strstr(out_text, "SLOWER  "));
    assert_string_equal(err_text, "");
    /* the fixture as it is: its skipped result is UNCERTAIN, not a failure */
    assert_int_equal(kbf("compare %s %s", fixture, fixture), 0);
    kbt_has(out_text, "  vendor: UNCERTAIN: BASE and NEW are skipped: vendor has no fp32 softmax\n");
    if (access(committed, R_OK) == 0) {
        char *doc = kbt_slurp(committed);
        const size_t n = kbt_count(doc, "\"variant\":"); /* its results: one case each */
        free(doc);
        /* no case moves; one with loose samples may be UNCERTAIN even against
         * itself (test_compare.c's test_committed_reports says which) */
        char want[160];
        snprintf(want, sizeof want, "%zu cases: 0 faster, 0 slower, ", n);
        assert_int_equal(kbf("compare %s %s", committed, committed), 0);
        kbt_has(out_text, want);
        kbt_has(out_text, " uncertain, 0 only in BASE, 0 only in NEW\n");
    }
}

/* The CI gate: samples 10% slower fail the job with exit 1. */
static void slower_report(void **state)
{
    (void)state;
    char slow[256], path[256];
    write_report("slow.json", slower, slow, sizeof slow);
    assert_int_equal(kbf("compare %s %s", fixture, slow), 1);
    kbt_has(out_text, "3 cases: 0 faster, 2 slower, 0 same, 1 uncertain, 0 only in BASE, 0 only in "
                  "NEW\n");
    kbt_has(out_text, "\nnaive      120.5 \xC2\xB5s  132.6 \xC2\xB5s    1.100x");
    /* within 100 columns "what moved" is cut; --wide shows it whole */
    kbt_has(out_text, "SLOWER     DRAM 1.00x \xC2\xB7 occ +0.0 pts ...\n");
    assert_string_equal(err_text, "");
    assert_int_equal(kbf("compare %s %s --wide", fixture, slow), 1);
    kbt_has(out_text, "SLOWER     DRAM 1.00x \xC2\xB7 occ +0.0 pts \xC2\xB7 regs 31 \xC2\xB7 spill 0 B "
                  "\xC2\xB7 stall long_sb 61%\n");
    /* the other way round it is faster, and passes */
    assert_int_equal(kbf("compare %s %s", slow, fixture), 0);
    kbt_has(out_text, "2 faster, 0 slower");
    /* a threshold above the change passes too */
    assert_int_equal(kbf("compare %s %s --threshold 15", fixture, slow), 0);
    kbt_has(out_text, "0 faster, 0 slower, 2 same");
    /* markdown for the job summary, same exit code */
    assert_int_equal(kbf("compare %s %s --format md", fixture, slow), 1);
    assert_int_equal(strncmp(out_text, "## kbench compare: 0 faster, 2 slower, 0 same, 1 "
                                       "uncertain, 0 only in BASE, 0 only in NEW\n",
                             87),
                     0);
    kbt_has(out_text, "| naive | 120.5 \xC2\xB5s | 132.6 \xC2\xB5s | 1.100x | ");
    /* JSON to a file */
    snprintf(path, sizeof path, "%s/cmp.json", dir);
    assert_int_equal(kbf("compare %s %s --format json -o %s", fixture, slow, path), 1);
    assert_string_equal(out_text, "");
    char *text = kbt_slurp(path);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "regressed")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary"), "slower")->valueint,
                     2);
    cJSON_Delete(j);
    free(text);
    /* HTML to a file */
    snprintf(path, sizeof path, "%s/cmp.html", dir);
    assert_int_equal(kbf("compare %s %s --format html -o %s", fixture, slow, path), 1);
    text = kbt_slurp(path);
    assert_non_null(text);
    assert_int_equal(strncmp(text, "<!DOCTYPE html>", 15), 0);
    kbt_has(text, "<tr class=\"case verdict-slower\">");
    free(text);
}

/* Another GPU: said at the top, % peak on both sides, and a GPU that is
 * slower in proportion to its ceiling is not a regression. */
static void cross_gpu(void **state)
{
    (void)state;
    char h100[256];
    write_report("h100.json", other_gpu, h100, sizeof h100);
    assert_int_equal(kbf("compare %s %s", fixture, h100), 0);
    kbt_has(out_text, "!! different GPUs: BASE ran on NVIDIA H200, NEW on NVIDIA H100 80GB HBM3 !!\n"
                  "!! verdicts compare the share of each GPU's own calibrated ceiling (% peak), "
                  "not raw time, so a\n   change of GPU is not reported as a code regression !!\n");
    kbt_has(out_text, "variant        BASE       NEW  BASE % peak  NEW % peak  peak ratio");
    kbt_has(out_text, "\nnaive      120.5 \xC2\xB5s  144.6 \xC2\xB5s         6.5%        6.5%      "
                  "1.000x");
    kbt_has(out_text, "0 faster, 0 slower, 2 same");
    assert_int_equal(kbf("compare %s %s --format md", fixture, h100), 0);
    kbt_has(out_text, "> **Different GPUs**: BASE ran on NVIDIA H200, NEW on NVIDIA H100 80GB HBM3.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(help_and_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(stored_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(same_report, setup, teardown),
        cmocka_unit_test_setup_teardown(slower_report, setup, teardown),
        cmocka_unit_test_setup_teardown(cross_gpu, setup, teardown),
    };
    return cmocka_run_group_tests_name("compare cli", tests, NULL, NULL);
}

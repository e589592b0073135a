/* test_html.c - the HTML pages: escaping of every string taken from the data
 * (variant names, tags, reasons, stall names with <script> and &), a
 * self-contained document (no script, nothing fetched), and its structure:
 * one table row per result, one bar per timed result, one roofline point per
 * result with a flop and byte model, the roofs that are calibrated, one stall
 * bar per stall reason of each result's longest kernel, bars on a linear
 * axis from zero, extreme figures left out of the charts with a note; and the comparison page (a row per case, an interval per
 * judged case, the cross-GPU note). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbtest.h"
#include "report/html.h"

static const char *const evil = "<script>alert('x')</script>&amp;\"";

static void add(kb_run *run, const char *variant, const char *dtype, int64_t rows, double median,
                kb_rstatus status)
{
    kb_result r;
    kbt_case(&r, "softmax", variant, dtype, rows, 4096);
    r.status = status;
    r.checked = 1;
    if (status == KB_R_OK) {
        r.nsamples = 10;
        r.samples_us = malloc(r.nsamples * sizeof *r.samples_us);
        assert_non_null(r.samples_us);
        for (size_t i = 0; i < r.nsamples; i++)
            r.samples_us[i] = median * (1.0 + 0.001 * (double)i);
        kb_result_summarise(&r);
        r.bytes = 8.0 * (double)rows * 4096;
        r.flops = 5.0 * (double)rows * 4096;
        kb_result_derive(&r, &run->dev);
    } else {
        snprintf(r.reason, sizeof r.reason, "%s", evil);
    }
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void build(kb_run *run)
{
    kb_run_init(run);
    run->id = 3;
    snprintf(run->version, sizeof run->version, "0.1.0");
    snprintf(run->git, sizeof run->git, "abc");
    snprintf(run->started, sizeof run->started, "2025-06-01T10:00:00Z");
    snprintf(run->state, sizeof run->state, "complete");
    snprintf(run->tag, sizeof run->tag, "<b>nightly</b> & co");
    snprintf(run->argv, sizeof run->argv, "kbench run softmax --tag '<b>'");
    snprintf(run->env, sizeof run->env, "KBENCH_X=<b>");
    snprintf(run->dev.name, sizeof run->dev.name, "NVIDIA H200");
    snprintf(run->dev.uuid, sizeof run->dev.uuid, "GPU-1");
    run->dev.copy_gbps = 4200.0;
    run->dev.mma_tflops = 780.0;
    run->dev.fp32_tflops = 51.0;
    add(run, "naive", "fp32", 32768, 3200.0, KB_R_OK);
    add(run, "fused", "fp32", 32768, 265.0, KB_R_OK);
    add(run, evil, "fp32", 32768, 100.0, KB_R_OK);
    add(run, "vendor", "fp32", 32768, NAN, KB_R_SKIPPED);
    add(run, "naive", "bf16", 4096, 400.0, KB_R_OK);
    add(run, "fused", "bf16", 4096, 300.0, KB_R_OK);
    /* stall reasons on the second kernel, the longer one, of the fused fp32 */
    kb_result *r = &run->results[1];
    snprintf(r->metric_set, sizeof r->metric_set, "stalls");
    snprintf(r->top_stalls, sizeof r->top_stalls, "long_sb 52%% barrier 18%%");
    r->nkernels = 2;
    r->kernels = calloc(2, sizeof *r->kernels);
    assert_non_null(r->kernels);
    for (int k = 0; k < 2; k++) {
        kb_kernel *K = &r->kernels[k];
        snprintf(K->name, sizeof K->name, k ? "softmax_main<float>" : "softmax_pre");
        snprintf(K->metrics[0].name, sizeof K->metrics[0].name, "gpu__time_duration.sum");
        K->metrics[0].value = k ? 200000.0 : 1000.0;
        K->nmetrics = 1;
        snprintf(K->stalls[0].name, sizeof K->stalls[0].name, "%s", k ? "long_scoreboard" : "x");
        K->stalls[0].value = 0.52;
        snprintf(K->stalls[1].name, sizeof K->stalls[1].name, "%s", k ? evil : "y");
        K->stalls[1].value = 0.3;
        snprintf(K->stalls[2].name, sizeof K->stalls[2].name, "wait");
        K->stalls[2].value = 0.18;
        K->nstalls = k ? 3 : 2;
    }
}

static char *render_run(const kb_run *run)
{
    char *buf = NULL;
    size_t len = 0;
    kb_err e = {{0}};
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(kb_html_write_run(f, run, &e), KB_OK);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static char *render_cmp(const kb_compare *c)
{
    char *buf = NULL;
    size_t len = 0;
    kb_err e = {{0}};
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(kb_html_write_compare(f, c, &e), KB_OK);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_escape(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    kb_html_escape(f, evil);
    kb_html_escape(f, " caf\xC3\xA9 <>");
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;&quot; "
                             "caf\xC3\xA9 &lt;&gt;");
    free(buf);
}

/* No string from the data reaches the page as markup. */
static void test_run_escaped(void **state)
{
    (void)state;
    kb_run run;
    build(&run);
    char *t = render_run(&run);
    assert_null(strstr(t, "<script"));
    assert_null(strstr(t, "<b>"));
    kbt_has(t, "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;&quot;</td>");
    kbt_has(t, "&lt;b&gt;nightly&lt;/b&gt; &amp; co");
    kbt_has(t, "<dt>env</dt><dd>KBENCH_X=&lt;b&gt;</dd>"); /* the run's switches */
    /* the reason of the skipped result, in its note */
    kbt_has(t, "<td class=\"note\">&lt;script&gt;");
    /* the stall name, in the chart's label and tooltip */
    kbt_has(t, "<title>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;&quot; 30.0%</title>");
    free(t);
    kb_run_release(&run);
}

/* The note under a case whose results ran at clocks far apart, the variant's
 * name escaped. */
static void test_clocks_note(void **state)
{
    (void)state;
    kb_run run;
    build(&run);
    run.results[0].sm_clock_mhz = 1980.0;
    run.results[2].sm_clock_mhz = 1500.0;
    char *t = render_run(&run);
    kbt_has(t, "<ul class=\"notes\"><li>clocks after the samples: &lt;script&gt;alert(&#39;x&#39;)"
               "&lt;/script&gt;&amp;amp;&quot; 1500 MHz, naive 1980 (32% apart): these results met "
               "the power cap differently</li>");
    assert_null(strstr(t, "<script"));
    assert_null(strstr(t, "flop per SM cycle")); /* memory-bound */
    free(t);
    /* compute-bound: each one's flop per SM cycle at its clock, after it */
    run.dev.sms = 132;
    snprintf(run.results[0].bound, sizeof run.results[0].bound, "compute");
    snprintf(run.results[2].bound, sizeof run.results[2].bound, "compute");
    run.results[0].flops = run.results[0].median_us * 1e-6 * 132 * 1980e6 * 100.0;
    run.results[2].flops = run.results[2].median_us * 1e-6 * 132 * 1500e6 * 250.0;
    t = render_run(&run);
    kbt_has(t, "met the power cap differently</li><li>flop per SM cycle at those clocks: naive "
               "100, &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;&quot; 250</li>");
    free(t);
    kb_run_release(&run);
}

static void test_run_structure(void **state)
{
    (void)state;
    kb_run run;
    build(&run);
    char *t = render_run(&run);
    /* a whole, self-contained document */
    kbt_has(t, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">");
    assert_int_equal(strncmp(t, "<!DOCTYPE html>", 15), 0);
    assert_string_equal(t + strlen(t) - 8, "</html>\n");
    assert_null(strstr(t, "src="));
    assert_null(strstr(t, "href="));
    assert_null(strstr(t, "@import"));
    assert_int_equal(kbt_count(t, "http"), kbt_count(t, "xmlns=\"http://www.w3.org/2000/svg\""));
    kbt_has(t, "<title>kbench run 3 \xC2\xB7 NVIDIA H200</title>");
    kbt_has(t, "<dd>copy bw 4200 GB/s \xC2\xB7 bf16 mma 780 TFLOP/s \xC2\xB7 fp32 51 TFLOP/s "
           "(calibrated)</dd>");
    /* two cases, a row per result, a bar per timed result */
    assert_int_equal(kbt_count(t, "<section class=\"case\""), 2);
    assert_int_equal(kbt_count(t, "<tr class=\"result "), run.nresults);
    assert_int_equal(kbt_count(t, "<tr class=\"result status-skipped\">"), 1);
    assert_int_equal(kbt_count(t, "<rect class=\"bar\""), 5);
    /* bars from zero on a linear axis with 1-2-5 ticks, whatever the spread */
    assert_int_equal(kbt_count(t, "median time per variant, linear scale from zero"), 2);
    assert_null(strstr(t, "log scale"));
    kbt_has(t, ">3.500 ms</text>"); /* the fp32 case's axis: 0, 500 µs, .. 3.5 ms */
    kbt_has(t, ">500.0 µs</text>");
    /* every result memory-bound: a bar of its share of the copy bandwidth per
     * ok result in place of the roofline, and a legend of the dtype colours */
    assert_null(strstr(t, "id=\"roofline\""));
    kbt_has(t, "<section id=\"copy-share\">");
    assert_int_equal(kbt_count(t, "<rect class=\"copy-bar\""), 5);
    kbt_has(t, ">fused [1]</text>");
    kbt_has(t, ">fused [2]</text>");
    kbt_has(t, ">100%</text>");
    kbt_has(t, "<li class=\"dtype\"><span class=\"swatch\" style=\"background:#4c78a8\"></span>"
               "fp32</li>");
    assert_null(strstr(t, ">fp16</li>")); /* no fp16 result */
    /* the stalls of the longer kernel only */
    assert_int_equal(kbt_count(t, "<rect class=\"stall-bar\""), 3);
    kbt_has(t, "(softmax_main&lt;float&gt;)");
    assert_null(strstr(t, "softmax_pre"));
    free(t);

    /* compute-bound results: the roofline, a point per ok result, the copy
     * roof and both compute roofs (fp32 and bf16 points) named in its legend,
     * a label per point */
    for (size_t i = 0; i < run.nresults; i++)
        snprintf(run.results[i].bound, sizeof run.results[i].bound, "compute");
    t = render_run(&run);
    assert_null(strstr(t, "id=\"copy-share\""));
    assert_int_equal(kbt_count(t, "<circle class=\"roof-point\""), 5);
    assert_int_equal(kbt_count(t, "<text class=\"roof-label\""), 5);
    assert_int_equal(kbt_count(t, "<line class=\"roof-mem\""), 1);
    assert_int_equal(kbt_count(t, "<line class=\"roof-compute\""), 2);
    kbt_has(t, "<li class=\"roof-label\"><span class=\"key-mem\"></span>copy bw 4200 GB/s</li>");
    kbt_has(t, "</span>bf16 mma 780 TFLOP/s</li>");
    kbt_has(t, "</span>fp32 51 TFLOP/s</li>");
    kbt_has(t, ">fused [1]</text>");
    kbt_has(t, ">fused [2]</text>");
    free(t);

    /* no ceilings: no roofs, still the points; no stalls: no section */
    run.dev.copy_gbps = run.dev.mma_tflops = run.dev.fp32_tflops = NAN;
    run.results[1].nkernels = 0;
    t = render_run(&run);
    assert_int_equal(kbt_count(t, "<circle class=\"roof-point\""), 5);
    assert_null(strstr(t, "class=\"roof-mem\""));
    assert_null(strstr(t, "class=\"roof-compute\""));
    assert_null(strstr(t, "id=\"stalls\""));
    kbt_has(t, "<dd>not calibrated (run &#39;kbench calibrate&#39;)</dd>");
    free(t);
    kb_run_release(&run);

    /* an empty run is still a page */
    kb_run_init(&run);
    t = render_run(&run);
    kbt_has(t, "<p class=\"nochart\">no results</p>");
    assert_string_equal(t + strlen(t) - 8, "</html>\n");
    free(t);
}

/* Extreme but valid figures (the smallest subnormal, the largest double) make
 * no chart loop, blow up or convert an infinite scale to an integer: the
 * values a chart cannot place are left out with a note, in bounded time and
 * size. */
static void test_extreme_values(void **state)
{
    (void)state;
    static const double extremes[] = {5e-324, 1e-300, 1e308, DBL_MAX, 1e-13, 1e13};
    alarm(20); /* the page used to take forever for some of these */
    for (size_t i = 0; i < KB_COUNT(extremes); i++) {
        for (int field = 0; field < 4; field++) {
            kb_run run;
            build(&run);
            kb_result *r = &run.results[0];
            double *target[] = {&r->bytes, &r->flops, &r->median_us, &run.dev.copy_gbps};
            *target[field] = extremes[i];
            if (field < 3) /* the figures derived from them, as a report would hold */
                kb_result_derive(r, &run.dev);
            run.dev.mma_tflops = field == 3 ? extremes[i] : run.dev.mma_tflops;
            char *t = render_run(&run);
            assert_true(strlen(t) < 200000);
            assert_string_equal(t + strlen(t) - 8, "</html>\n");
            assert_null(strstr(t, "nan"));
            assert_null(strstr(t, "inf\""));
            if (field == 2)
                kbt_has(t, "out of the chart's range not drawn");
            free(t);
            kb_run_release(&run);
        }
    }
    alarm(0);
}

/* A compute-bound case shows TFLOP/s and % peak, and its extra memory. */
static void test_compute_columns(void **state)
{
    (void)state;
    kb_run run;
    build(&run);
    for (size_t i = 4; i < 6; i++) {
        kb_result *r = &run.results[i];
        snprintf(r->bound, sizeof r->bound, "compute");
        r->extra_bytes = i == 4 ? 4.294967296e9 : 0;
        kb_result_derive(r, &run.dev);
    }
    char *t = render_run(&run);
    kbt_has(t, "<th class=\"num\">TFLOP/s</th><th class=\"num\">% peak</th>");
    kbt_has(t, "<th class=\"num\">extra mem</th>");
    kbt_has(t, "<td class=\"num\">4.3 GB</td>");
    assert_int_equal(kbt_count(t, "<th class=\"num\">GB/s</th>"), 1);
    assert_int_equal(kbt_count(t, "extra mem"), 1);
    free(t);
    kb_run_release(&run);
}

static void test_compare_page(void **state)
{
    (void)state;
    kb_run a, b;
    kb_compare c;
    kb_err e = {{0}};
    build(&a);
    build(&b);
    for (size_t i = 0; i < b.results[0].nsamples; i++)
        b.results[0].samples_us[i] *= 1.2;
    kb_result_summarise(&b.results[0]);
    snprintf(b.results[5].variant, sizeof b.results[5].variant, "new<i>");
    assert_int_equal(kb_compare_runs(&a, "a<1>.json", &b, "b.json", 0.05, &c, &e), KB_OK);
    char *t = render_cmp(&c);
    assert_null(strstr(t, "<script"));
    assert_null(strstr(t, "<i>"));
    assert_null(strstr(t, "<b>"));
    kbt_has(t, "a&lt;1&gt;.json");
    kbt_has(t, "<p class=\"headline\">0 faster, 1 slower, 3 same, 1 uncertain, 1 only in BASE, 1 "
           "only in NEW</p>");
    assert_int_equal(kbt_count(t, "<tr class=\"case "), c.ncases);
    assert_int_equal(kbt_count(t, "<tr class=\"case verdict-slower\">"), 1);
    assert_int_equal(kbt_count(t, "<tr class=\"case verdict-only-in-new\">"), 1);
    assert_int_equal(kbt_count(t, "<g class=\"ci "), 4);
    assert_null(strstr(t, "cross-gpu"));
    assert_string_equal(t + strlen(t) - 8, "</html>\n");
    free(t);
    kb_compare_release(&c);

    snprintf(b.dev.uuid, sizeof b.dev.uuid, "GPU-2");
    snprintf(b.dev.name, sizeof b.dev.name, "NVIDIA <H100>");
    assert_int_equal(kb_compare_runs(&a, "a.json", &b, "b.json", 0.05, &c, &e), KB_OK);
    t = render_cmp(&c);
    kbt_has(t, "<p class=\"warning cross-gpu\">Different GPUs: BASE ran on NVIDIA H200, NEW on NVIDIA "
           "&lt;H100&gt;.");
    kbt_has(t, "<th class=\"num\">BASE % peak</th><th class=\"num\">NEW % peak</th>");
    free(t);
    kb_compare_release(&c);
    kb_run_release(&a);
    kb_run_release(&b);
}

/* A sweep over rows (cols fixed): a section with its table (a row per point,
 * the fastest in bold), a line per variant broken where it has no ok result,
 * a point per ok result, a tick per value on the log axis, the copy
 * bandwidth dashed, names escaped; a run without a sweep has no section. */
static void test_sweep_chart(void **state)
{
    (void)state;
    kb_run run;
    kb_run_init(&run);
    run.dev.copy_gbps = 4200.0;
    static const int64_t rows[] = {1, 8, 64, 512, 4096};
    for (size_t i = 0; i < KB_COUNT(rows); i++) {
        add(&run, "naive", "fp32", rows[i], 100.0 * (double)rows[i], KB_R_OK);
        /* the evil variant has no ok result at 64 rows: its line breaks */
        add(&run, evil, "fp32", rows[i], 10.0 * (double)rows[i], i == 2 ? KB_R_FAILED : KB_R_OK);
    }
    char *h = render_run(&run);
    const char *sw = strstr(h, "<section id=\"sweeps\">");
    assert_non_null(sw);
    kbt_has(sw, "<h3>softmax \xC2\xB7 fp32 \xC2\xB7 sweep over rows, cols=4096</h3>");
    assert_int_equal(kbt_count(sw, "<tr class=\"sweep-row\">"), 5);
    assert_int_equal(kbt_count(sw, "<td class=\"num best\">"), 5);
    assert_int_equal(kbt_count(sw, "<polyline class=\"sweep-line\""), 3);
    assert_int_equal(kbt_count(sw, "<circle class=\"sweep-point\""), 9);
    assert_int_equal(kbt_count(sw, "<line class=\"sweep-tick\""), 5);
    assert_int_equal(kbt_count(sw, "<line class=\"sweep-ceiling\""), 1);
    kbt_has(sw, "copy bw 4200 GB/s</text>");
    kbt_has(sw, "<li class=\"sweep-key\"><span class=\"swatch\" style=\"background:#f58518\">"
                "</span>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;&quot;</li>");
    assert_null(strstr(h, "<script>"));
    /* the x-axis is log: 1 and 4096 at the plot's ends less the padding, 64 halfway */
    kbt_has(sw, "text-anchor=\"middle\">1</text>");
    kbt_has(sw, "text-anchor=\"middle\">4096</text>");
    free(h);
    kb_run_release(&run);

    /* a sweep over an axis with zero in it: the table, no chart */
    kb_run_init(&run);
    for (int64_t m = 0; m < 3; m++) {
        kb_result r;
        kbt_case(&r, "softmax", "fused", "fp32", 64, 4096);
        snprintf(r.axis[1], sizeof r.axis[1], "mean");
        r.shape[1] = m;
        r.status = KB_R_OK;
        r.median_us = 10;
        r.gbps = 100;
        assert_int_equal(kb_run_add(&run, &r), 0);
    }
    h = render_run(&run);
    kbt_has(h, "sweep over mean, rows=64</h3>");
    kbt_has(h, "no chart: the axis holds values a log scale cannot show (zero or negative)");
    assert_null(strstr(h, "<svg class=\"sweep-chart\""));
    free(h);
    kb_run_release(&run);

    build(&run);
    h = render_run(&run);
    assert_null(strstr(h, "id=\"sweeps\""));
    free(h);
    kb_run_release(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_run_escaped),
        cmocka_unit_test(test_clocks_note),
        cmocka_unit_test(test_run_structure),
        cmocka_unit_test(test_extreme_values),
        cmocka_unit_test(test_compute_columns),
        cmocka_unit_test(test_compare_page),
        cmocka_unit_test(test_sweep_chart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_html_browser.c - the HTML report as a browser shows it: kbench writes
 * the page of a real report (results/h200/softmax.json when present, else the
 * counters fixture), Debian's chromium loads it headless from the file and
 * dumps the DOM it built, and the test counts what is there: a table row per
 * result, a bar per timed result, a roofline point per result with a flop and
 * byte model, a stall bar per stall reason shown; injected markup in a variant
 * name, tag and reason stays text (no element, no script run); the comparison
 * page has a row per case; no two texts of a chart overlap as the browser lays
 * them out (a probe script in a copy of the page measures them: the softmax
 * page's bars and copy-share chart, the attention page's roofline labels). It
 * also takes a screenshot (a PNG is written).
 * Skips, saying so, when chromium is not installed. $KBENCH_BIN names the
 * binary (default build/kbench). */
#include <math.h>
#include <unistd.h>

#include "kbtest.h"
#include "store/json.h"

static int have_chromium(void)
{
    return system("command -v chromium >/dev/null 2>&1") == 0;
}

/* Loads page (a file in dir) in headless chromium and returns the DOM it
 * built (caller frees). */
static char *dump_dom(const char *page)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.dom", kbt_dir, page);
    int rc = kbt_sh("cd %s && timeout 120 chromium --headless --no-sandbox --disable-gpu "
                "--user-data-dir=%s/profile --dump-dom file://%s/%s >%s 2>%s/chromium.log",
                kbt_dir, kbt_dir, kbt_dir, page, path, kbt_dir);
    if (rc != 0)
        fail_msg("chromium failed (%d) on %s; see %s/chromium.log", rc, page, kbt_dir);
    char *dom = kbt_slurp(path);
    assert_non_null(dom);
    return dom;
}

/* What the page must show for run: results, timed results, roofline points,
 * stall bars (the stall reasons of each result's longest kernel). */
static void expected(const kb_run *run, size_t *bars, size_t *points, size_t *stalls)
{
    *bars = *points = *stalls = 0;
    for (size_t i = 0; i < run->nresults; i++) {
        const kb_result *r = &run->results[i];
        *bars += r->median_us > 0 && isfinite(r->median_us);
        *points += r->status == KB_R_OK && r->flops > 0 && r->bytes > 0 && r->tflops > 0 &&
                   isfinite(r->flops) && isfinite(r->bytes) && isfinite(r->tflops);
        const kb_kernel *best = NULL;
        double best_t = -1;
        for (int k = 0; k < r->nkernels; k++) {
            const kb_kernel *K = &r->kernels[k];
            double t = 0;
            if (K->nstalls <= 0)
                continue;
            for (int m = 0; m < K->nmetrics; m++)
                if (strcmp(K->metrics[m].name, "gpu__time_duration.sum") == 0)
                    t = K->metrics[m].value;
            if (t > best_t) {
                best = K;
                best_t = t;
            }
        }
        *stalls += best ? (size_t)best->nstalls : 0;
    }
}

/* Loads a copy of page with a probe that measures, as the browser laid them
 * out, the box of every text of every chart, and fails when two of the same
 * chart overlap (by more than half a pixel), naming them. */
static void no_label_overlaps(const char *page)
{
    static const char probe[] =
        "<script>var bad=[];document.querySelectorAll('svg').forEach(function(svg,k){"
        "var t=[].slice.call(svg.querySelectorAll('text')).map(function(e){"
        "return {r:e.getBoundingClientRect(),s:e.textContent};});"
        "for(var i=0;i<t.length;i++)for(var j=i+1;j<t.length;j++){var a=t[i].r,b=t[j].r;"
        "if(a.width>0&&b.width>0&&a.left<b.right-0.5&&b.left<a.right-0.5&&"
        "a.top<b.bottom-0.5&&b.top<a.bottom-0.5)bad.push(k+': ['+t[i].s+'] ['+t[j].s+']');}});"
        "var p=document.createElement('pre');p.id='overlaps';"
        "p.textContent='overlaps: '+bad.length+' '+bad.join('; ');"
        "document.body.appendChild(p);</script>";
    char path[256], probe_page[128];
    snprintf(path, sizeof path, "%s/%s", kbt_dir, page);
    char *html = kbt_slurp(path);
    assert_non_null(html);
    char *end = strstr(html, "</body>");
    assert_non_null(end);
    snprintf(probe_page, sizeof probe_page, "probe-%s", page);
    snprintf(path, sizeof path, "%s/%s", kbt_dir, probe_page);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(html, 1, (size_t)(end - html), f);
    fputs(probe, f);
    fputs(end, f);
    assert_int_equal(fclose(f), 0);
    free(html);
    char *dom = dump_dom(probe_page);
    const char *res = strstr(dom, "<pre id=\"overlaps\">overlaps: ");
    res = res ? res + strlen("<pre id=\"overlaps\">") : NULL;
    assert_non_null(res);
    if (strncmp(res, "overlaps: 0 ", 12) != 0)
        fail_msg("labels overlap on %s: %.600s", page, res);
    free(dom);
}

/* The attention report, compute-bound: its roofline's point labels overlap
 * neither each other nor anything else of the chart. */
static void roofline_labels_do_not_overlap(void **state)
{
    (void)state;
    if (!have_chromium()) {
        print_message("chromium is not installed: skipping the headless-browser test "
                      "(apt-get install -y chromium)\n");
        skip();
    }
    if (access("results/h200/attention.json", R_OK) != 0)
        skip();
    assert_int_equal(kbt_sh("%s report results/h200/attention.json --format html -o %s/att.html",
                            kbt_bin(), kbt_dir),
                     0);
    char *dom = dump_dom("att.html");
    assert_non_null(strstr(dom, "<section id=\"roofline\">"));
    assert_true(kbt_count(dom, "<text class=\"roof-label\"") > 0);
    free(dom);
    no_label_overlaps("att.html");
}

static void browser_shows_the_report(void **state)
{
    (void)state;
    if (!have_chromium()) {
        print_message("chromium is not installed: skipping the headless-browser test "
                      "(apt-get install -y chromium)\n");
        skip();
    }
    const char *report = access("results/h200/softmax.json", R_OK) == 0
                             ? "results/h200/softmax.json"
                             : "tests/fixtures/report_counters.json";
    kb_run run;
    kb_err e = {{0}};
    size_t bars, points, stalls;
    assert_int_equal(kb_json_load_run(report, &run, &e), KB_OK);
    expected(&run, &bars, &points, &stalls);
    assert_true(run.nresults > 0 && bars > 0 && points > 0);
    assert_int_equal(kbt_sh("%s report %s --format html -o %s/page.html", kbt_bin(), report, kbt_dir), 0);
    char *dom = dump_dom("page.html");
    assert_int_equal(kbt_count(dom, "<tr class=\"result "), run.nresults);
    assert_int_equal(kbt_count(dom, "<rect class=\"bar\""), bars);
    /* a memory-bound run: the share of the copy bandwidth in the roofline's place */
    assert_int_equal(kbt_count(dom, "<rect class=\"copy-bar\""), points);
    assert_int_equal(kbt_count(dom, "<rect class=\"stall-bar\""), stalls);
    assert_non_null(strstr(dom, "<section id=\"copy-share\">"));
    assert_null(strstr(dom, "<script"));
    free(dom);
    no_label_overlaps("page.html");

    /* a screenshot of it, for a person to look at */
    assert_int_equal(kbt_sh("cd %s && timeout 120 chromium --headless --no-sandbox --disable-gpu "
                        "--user-data-dir=%s/profile --window-size=1280,2400 "
                        "--screenshot=%s/page.png file://%s/page.html >/dev/null 2>&1",
                        kbt_dir, kbt_dir, kbt_dir, kbt_dir),
                     0);
    char png[128];
    snprintf(png, sizeof png, "%s/page.png", kbt_dir);
    FILE *f = fopen(png, "rb");
    assert_non_null(f);
    unsigned char magic[4] = {0};
    assert_int_equal(fread(magic, 1, 4, f), 4);
    fclose(f);
    assert_memory_equal(magic, "\x89PNG", 4);

    /* the comparison page of the report with itself: a row per case */
    assert_int_equal(kbt_sh("%s compare %s %s --format html -o %s/cmp.html", kbt_bin(), report, report,
                        kbt_dir),
                     0);
    dom = dump_dom("cmp.html");
    assert_int_equal(kbt_count(dom, "<tr class=\"case "), run.nresults);
    free(dom);
    kb_run_release(&run);
}

/* Markup in a variant name, the tag and a reason stays text in the browser:
 * no element is created and no script runs (it would change the title). */
static void injected_markup_stays_text(void **state)
{
    (void)state;
    if (!have_chromium()) {
        print_message("chromium is not installed: skipping the headless-browser test "
                      "(apt-get install -y chromium)\n");
        skip();
    }
    kb_run run;
    kb_err e = {{0}};
    char path[128];
    assert_int_equal(kb_json_load_run("tests/fixtures/report_counters.json", &run, &e), KB_OK);
    snprintf(run.results[0].variant, sizeof run.results[0].variant,
             "<script>document.title='owned'</script>&");
    snprintf(run.tag, sizeof run.tag, "<img src=x onerror=\"document.title='owned'\"> & <b>t</b>");
    snprintf(run.results[2].reason, sizeof run.results[2].reason,
             "</td></tr></table><script>document.title='owned'</script>");
    snprintf(path, sizeof path, "%s/evil.json", kbt_dir);
    assert_int_equal(kb_json_save_run(&run, path, &e), KB_OK);
    assert_int_equal(kbt_sh("%s report %s --format html -o %s/evil.html", kbt_bin(), path, kbt_dir), 0);
    char *dom = dump_dom("evil.html");
    assert_null(strstr(dom, "owned</title>"));
    assert_non_null(strstr(dom, "<title>kbench run"));
    assert_null(strstr(dom, "<script"));
    assert_null(strstr(dom, "<img"));
    assert_null(strstr(dom, "<b>t</b>"));
    assert_non_null(strstr(dom, "&lt;script&gt;document.title='owned'&lt;/script&gt;&amp;"));
    assert_non_null(strstr(dom, "&lt;img src=x onerror=\"document.title='owned'\"&gt; &amp; "
                                "&lt;b&gt;t&lt;/b&gt;"));
    /* the table is still whole: one row per result */
    assert_int_equal(kbt_count(dom, "<tr class=\"result "), run.nresults);
    free(dom);
    kb_run_release(&run);
}

/* The sweep fixture: each sweep's chart has a line per variant (naive's
 * broken nowhere: its one skip is at the end), a point per ok result, a row
 * per point in its table, and no two of its texts (tick labels at 32 and 33,
 * the copy bandwidth's) overlap as the browser lays them out. */
static void sweep_chart_in_the_browser(void **state)
{
    (void)state;
    if (!have_chromium()) {
        print_message("chromium is not installed: skipping the headless-browser test "
                      "(apt-get install -y chromium)\n");
        skip();
    }
    assert_int_equal(kbt_sh("%s report tests/fixtures/report_sweep.json --format html -o "
                            "%s/sweep.html",
                            kbt_bin(), kbt_dir),
                     0);
    char *dom = dump_dom("sweep.html");
    const char *sw = strstr(dom, "<section id=\"sweeps\">");
    assert_non_null(sw);
    /* two sweeps (fp32, bf16) of 5 points and 5 variants, naive skipped once */
    assert_int_equal(kbt_count(sw, "<svg class=\"sweep-chart\""), 2);
    assert_int_equal(kbt_count(sw, "<polyline class=\"sweep-line\""), 10);
    assert_int_equal(kbt_count(sw, "<circle class=\"sweep-point\""), 48);
    assert_int_equal(kbt_count(sw, "<tr class=\"sweep-row\">"), 10);
    assert_int_equal(kbt_count(sw, "<li class=\"sweep-key\">"), 10);
    free(dom);
    no_label_overlaps("sweep.html");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(browser_shows_the_report, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(injected_markup_stays_text, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(roofline_labels_do_not_overlap, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(sweep_chart_in_the_browser, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("html in a browser", tests, NULL, NULL);
}

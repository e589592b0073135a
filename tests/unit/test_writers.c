/* test_writers.c - text, markdown and CSV reports of a built run: header and
 * interrupted state, case groups, speed-up over naive, aligned columns, pipe
 * escaping, RFC 4180 quoting and column counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbtest.h"
#include "report/writers.h"

static const char *const long_reason =
    "cudnn has no fp32 softmax for rows of 1024 columns in this build of the library";
static const char *const nasty_reason =
    "launch failed: \"too many resources requested\", 300 registers\nsecond line | piped";

static void add(kb_run *run, const char *op, const char *dtype, int64_t rows, int64_t cols,
                const char *variant, kb_rstatus status, double median, double gbps,
                double pct, int nkernels, const char *reason)
{
    kb_result r;
    kb_result_init(&r);
    snprintf(r.op, sizeof r.op, "%s", op);
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.dtype, sizeof r.dtype, "%s", dtype);
    r.naxes = 2;
    snprintf(r.axis[0], sizeof r.axis[0], "rows");
    snprintf(r.axis[1], sizeof r.axis[1], "cols");
    r.shape[0] = rows;
    r.shape[1] = cols;
    r.status = status;
    r.seed = 99;
    r.checked = 1;
    r.atol = 1e-5;
    r.rtol = 1e-4;
    snprintf(r.reason, sizeof r.reason, "%s", reason);
    r.median_us = median;
    r.min_us = median * 0.99;
    r.max_us = median * 1.05;
    r.stdrel = isfinite(median) ? 0.0123 : NAN;
    r.gbps = gbps;
    r.pct_peak = pct;
    r.bytes = 33554432;
    if (status == KB_R_MISMATCH) {
        r.max_abs_err = 0.5;
        r.rel_l2_err = 0.0125;
    }
    r.nkernels = nkernels;
    r.kernels = nkernels ? calloc((size_t)nkernels, sizeof *r.kernels) : NULL;
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void build_run(kb_run *run, const char *state)
{
    kb_run_init(run);
    run->id = 7;
    snprintf(run->version, sizeof run->version, "0.1.0");
    snprintf(run->git, sizeof run->git, "0123abcd");
    snprintf(run->argv, sizeof run->argv, "kbench run softmax");
    snprintf(run->started, sizeof run->started, "2025-06-01T10:00:00Z");
    snprintf(run->state, sizeof run->state, "%s", state);
    snprintf(run->tag, sizeof run->tag, "nightly, h200");
    snprintf(run->dev.name, sizeof run->dev.name, "NVIDIA H200");
    snprintf(run->dev.uuid, sizeof run->dev.uuid, "GPU-1234");
    run->dev.cc_major = 9;
    run->dev.sms = 132;
    run->dev.copy_gbps = 4012.3;
    add(run, "softmax", "fp32", 4096, 1024, "naive", KB_R_OK, 200.0, 167.77, 4.18, 2, "");
    add(run, "layernorm", "fp16", 8, 7, "fused", KB_R_OK, 1500.0, 0.04, NAN, 1, "");
    add(run, "softmax", "fp32", 4096, 1024, "coalesced", KB_R_OK, 100.0, 335.54, 8.36, 1, "");
    add(run, "softmax", "fp32", 4096, 1024, "fused", KB_R_MISMATCH, 40.0, 838.9, 20.9, 1,
        "max abs err 0.5 at row 3, col 9");
    add(run, "softmax", "fp32", 4096, 1024, "vendor", KB_R_SKIPPED, NAN, NAN, NAN, 0,
        long_reason);
    add(run, "softmax", "fp32", 4096, 1024, "a|b", KB_R_FAILED, NAN, NAN, NAN, 0, nasty_reason);
}

typedef kb_status (*writer)(FILE *f, const kb_run *run, kb_err *e);

/* The writer's output as a string the caller frees. */
static char *render(writer w, const kb_run *run)
{
    char *buf = NULL;
    size_t len = 0;
    kb_err e = {{0}};
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(w(f, run, &e), KB_OK);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("missing '%s' in:\n%s", want, text);
}

/* Display columns of the first n bytes of s. */
static size_t cols(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n && s[i]; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* The line of text starting with prefix (copied into buf). */
static const char *line_of(const char *text, const char *prefix, char *buf, size_t n)
{
    for (const char *p = text; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (strncmp(p, prefix, strlen(prefix)) == 0 && len < n) {
            memcpy(buf, p, len);
            buf[len] = '\0';
            return buf;
        }
        p = end ? end + 1 : NULL;
    }
    fail_msg("no line starting '%s'", prefix);
    return NULL;
}

static void test_text(void **state)
{
    (void)state;
    kb_run run;
    build_run(&run, "complete");
    char *t = render(kb_write_text, &run);
    has(t, "kbench run 7  [complete]\n");
    assert_null(strstr(t, " \n")); /* no trailing blanks */
    has(t, "device    NVIDIA H200, cc 9.0, 132 SMs  (GPU-1234)\n");
    has(t, "copy bw   4012.3 GB/s (calibrated)\n");
    has(t, "tag       nightly, h200\n");
    assert_null(strstr(t, "INTERRUPTED"));
    /* Groups in order of first appearance. */
    const char *g1 = strstr(t, "softmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=1024\n");
    const char *g2 = strstr(t, "layernorm \xC2\xB7 fp16 \xC2\xB7 rows=8, cols=7\n");
    assert_non_null(g1);
    assert_non_null(g2);
    assert_true(g1 < g2);

    char head[512], row[512];
    line_of(g1 + 1, "variant", head, sizeof head);
    has(head, "median");
    has(head, "vs naive");
    line_of(t, "coalesced", row, sizeof row);
    has(row, "100.0 \xC2\xB5s");
    has(row, "\xC2\xB1" "1.2%");
    has(row, "335.5");
    has(row, "8.4%");
    has(row, "2.00x");
    /* Right-aligned numbers end under the end of their heading. */
    size_t kend = cols(head, (size_t)(strstr(head, "kernels") - head) + 7);
    size_t send = cols(head, (size_t)(strstr(head, "vs naive") - head) + 8);
    assert_int_equal(cols(row, (size_t)(strstr(row, "2.00x") - row) + 5), send);
    for (const char *v = "naive\0coalesced\0fused\0vendor\0a|b\0"; *v; v += strlen(v) + 1) {
        line_of(g1, v, row, sizeof row);
        char *p = row + strlen(v);
        while (*p == ' ' || ((unsigned char)*p >= 'a' && *p != '\0' && (unsigned char)*p <= 'z'))
            p++; /* past the status */
        size_t w = cols(row, sizeof row);
        assert_true(w >= kend);
        /* The kernels count is the last digit before column kend. */
        size_t i = 0, at = 0;
        for (; row[i] && at < kend; i++)
            at += ((unsigned char)row[i] & 0xC0) != 0x80;
        assert_true(row[i - 1] >= '0' && row[i - 1] <= '9');
        assert_true(row[i] == ' ' || row[i] == '\0');
    }
    line_of(g1, "naive", row, sizeof row);
    has(row, "200.0 \xC2\xB5s");
    has(row, "1.00x");
    line_of(g1, "fused", row, sizeof row);
    has(row, "mismatch");
    has(row, "max abs 0.5, rel l2 0.0125");
    assert_null(strstr(row, "0x")); /* a wrong result gets no speed-up */
    line_of(g1, "vendor", row, sizeof row);
    has(row, "skipped");
    has(row, "cudnn has no fp32 softmax for rows of...");
    line_of(g2 + 1, "fused", row, sizeof row);
    has(row, "1.500 ms");
    assert_null(strstr(row, "x "));
    /* Full reasons below the table, one line each. */
    has(t, "  vendor (skipped): cudnn has no fp32 softmax for rows of 1024 columns in this "
           "build of the library\n");
    has(t, "  a|b (failed): launch failed: \"too many resources requested\", 300 registers "
           "second line | piped\n");
    has(t, "  fused (mismatch): max abs err 0.5, rel l2 err 0.0125 (atol 1e-05, rtol 0.0001); "
           "max abs err 0.5 at row 3, col 9\n");
    free(t);

    snprintf(run.state, sizeof run.state, "interrupted");
    run.dev.copy_gbps = NAN;
    t = render(kb_write_text, &run);
    has(t, "kbench run 7  [interrupted]\n!! INTERRUPTED: the run stopped before it finished");
    has(t, "copy bw   not calibrated");
    line_of(t, "coalesced", row, sizeof row);
    has(row, "8.4%"); /* the stored figure, not recomputed */
    free(t);
    kb_run_release(&run);
}

/* Pipes in a markdown table row that are not escaped. */
static int bare_pipes(const char *line)
{
    int n = 0;
    for (const char *p = line; *p; p++)
        n += *p == '|' && (p == line || p[-1] != '\\');
    return n;
}

static void test_markdown(void **state)
{
    (void)state;
    kb_run run;
    build_run(&run, "interrupted");
    char *t = render(kb_write_markdown, &run);
    has(t, "# kbench run 7\n\n> **INTERRUPTED: ");
    has(t, "- **device**: NVIDIA H200, cc 9.0, 132 SMs (`GPU-1234`)\n");
    has(t, "## softmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=1024\n\n| variant | status |");
    has(t, "|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    has(t, "| a\\|b | failed |");
    has(t, "- **a|b** (failed): launch failed: \"too many resources requested\", 300 "
           "registers second line \\| piped\n");
    /* Every table line has exactly 10 bare pipes (9 columns). */
    int rows = 0;
    for (char *line = t; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (line[0] == '|') {
            assert_int_equal(bare_pipes(line), 10);
            rows++;
        }
        line = end ? end + 1 : NULL;
    }
    assert_int_equal(rows, 2 + 5 + 2 + 1); /* two headers and rules, six results */
    free(t);
    kb_run_release(&run);
}

/* Splits RFC 4180 text into records of fields; returns the record count and
 * checks every record has nf fields. Fields are written into fields[r][c]. */
static int parse_csv(const char *s, int nf, char fields[][40][256])
{
    int r = 0, c = 0;
    size_t k = 0;
    while (*s) {
        char *out = fields[r][c];
        k = 0;
        if (*s == '"') {
            s++;
            for (;;) {
                assert_true(*s != '\0');
                if (*s == '"' && s[1] == '"') {
                    out[k++] = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    out[k++] = *s++;
                }
            }
        } else {
            while (*s && *s != ',' && *s != '\r' && *s != '\n')
                out[k++] = *s++;
        }
        out[k] = '\0';
        c++;
        if (*s == ',') {
            s++;
            continue;
        }
        /* A record ends with CRLF, never a bare LF. */
        assert_true(s[0] == '\r' && s[1] == '\n');
        s += 2;
        assert_int_equal(c, nf);
        r++;
        c = 0;
    }
    assert_int_equal(c, 0);
    return r;
}

static int col_index(char fields[][40][256], const char *name)
{
    for (int c = 0; c < 40; c++)
        if (strcmp(fields[0][c], name) == 0)
            return c;
    fail_msg("no column '%s'", name);
    return -1;
}

static void test_csv(void **state)
{
    (void)state;
    kb_run run;
    static char fields[16][40][256];
    build_run(&run, "complete");
    char *t = render(kb_write_csv, &run);
    assert_int_equal(strncmp(t, "run_id,started,state,tag,device,device_uuid,cc,copy_gbps,op,", 60),
                     0);
    int nrec = parse_csv(t, 35, fields);
    assert_int_equal(nrec, 1 + 6);
    int variant = col_index(fields, "variant"), reason = col_index(fields, "reason");
    int speed = col_index(fields, "speedup_vs_naive"), med = col_index(fields, "median_us");
    int tag = col_index(fields, "tag"), shape = col_index(fields, "shape");
    int pct = col_index(fields, "pct_peak"), nk = col_index(fields, "kernels");
    assert_string_equal(fields[1][tag], "nightly, h200");
    assert_string_equal(fields[1][shape], "rows=4096,cols=1024");
    assert_string_equal(fields[3][variant], "coalesced");
    assert_string_equal(fields[3][speed], "2");
    assert_string_equal(fields[3][med], "100");
    assert_string_equal(fields[2][pct], ""); /* NAN is empty */
    assert_string_equal(fields[2][speed], "");
    assert_string_equal(fields[1][nk], "2");
    assert_string_equal(fields[6][variant], "a|b");
    assert_string_equal(fields[6][reason], nasty_reason);
    has(t, "\"launch failed: \"\"too many resources requested\"\", 300 registers\nsecond");
    free(t);
    kb_run_release(&run);
}

static void test_empty_run(void **state)
{
    (void)state;
    kb_run run;
    kb_run_init(&run);
    snprintf(run.state, sizeof run.state, "running");
    char *t = render(kb_write_text, &run);
    has(t, "kbench run (not stored)  [running]\n!! RUNNING:");
    has(t, "\nno results\n");
    free(t);
    t = render(kb_write_markdown, &run);
    has(t, "_no results_");
    free(t);
    t = render(kb_write_csv, &run);
    assert_non_null(strstr(t, "speedup_vs_naive,kernels\r\n"));
    assert_null(strchr(strchr(t, '\n') + 1, '\n'));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_empty_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

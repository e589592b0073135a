/* test_writers.c - text, markdown and CSV reports of a built run: header and
 * interrupted state, the known ceilings, case groups, speed-up over naive,
 * aligned columns, pipe escaping, RFC 4180 quoting and column counts; the
 * counter columns (DRAM GB/s, excess traffic, occupancy, top stalls),
 * registers and spills, the line saying why counters are missing, the
 * 140-column limit, compute-bound cases (TFLOP/s, % peak) and the extra
 * memory column, and the per-kernel detail of `report --kernels`. */
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
    kbt_case(&r, op, variant, dtype, rows, cols);
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
    if (nkernels) {
        r.registers = 30 + nkernels;
        r.local_bytes = 0;
    }
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

/* The text report with every column, cells whole (--wide). */
static kb_status write_wide(FILE *f, const kb_run *run, kb_err *e)
{
    const kb_text_layout l = {0, 1};
    return kb_write_text_laid_out(f, run, &l, e);
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
    char *t = render(write_wide, &run);
    kbt_has(t, "kbench run 7  [complete]\n");
    assert_null(strstr(t, " \n")); /* no trailing blanks */
    kbt_has(t, "device    NVIDIA H200, cc 9.0, 132 SMs  (GPU-1234)\n");
    kbt_has(t, "ceilings  copy bw 4012 GB/s (calibrated)\n");
    kbt_has(t, "tag       nightly, h200\n");
    assert_null(strstr(t, "\nenv ")); /* no switches recorded: no line */
    assert_null(strstr(t, "INTERRUPTED"));
    /* Groups in order of first appearance. */
    const char *g1 = strstr(t, "softmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=1024\n");
    const char *g2 = strstr(t, "layernorm \xC2\xB7 fp16 \xC2\xB7 rows=8, cols=7\n");
    assert_non_null(g1);
    assert_non_null(g2);
    assert_true(g1 < g2);

    char head[512], row[512];
    line_of(g1 + 1, "variant", head, sizeof head);
    kbt_has(head, "median");
    kbt_has(head, "vs naive");
    kbt_has(head, "kernels  regs  spill"); /* static facts: always shown */
    assert_null(strstr(head, "DRAM")); /* no counters in this run */
    assert_null(strstr(t, "counters:"));
    line_of(t, "coalesced", row, sizeof row);
    kbt_has(row, "100.0 \xC2\xB5s");
    kbt_has(row, "\xC2\xB1" "1.2%");
    kbt_has(row, "335.5");
    kbt_has(row, "8.4%");
    kbt_has(row, "2.00x");
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
    kbt_has(row, "200.0 \xC2\xB5s");
    kbt_has(row, "1.00x");
    line_of(g1, "fused", row, sizeof row);
    kbt_has(row, "mismatch");
    kbt_has(row, "max abs 0.5, rel l2 0.0125");
    assert_null(strstr(row, "0x")); /* a wrong result gets no speed-up */
    line_of(g1, "vendor", row, sizeof row);
    kbt_has(row, "skipped");
    kbt_has(row, "cudnn has no fp32 softmax for rows of...");
    line_of(g2 + 1, "fused", row, sizeof row);
    kbt_has(row, "1.500 ms");
    assert_null(strstr(row, "x "));
    /* Full reasons below the table, one line each. */
    kbt_has(t, "  vendor (skipped): cudnn has no fp32 softmax for rows of 1024 columns in this "
           "build of the library\n");
    kbt_has(t, "  a|b (failed): launch failed: \"too many resources requested\", 300 registers"
           "\\nsecond line | piped\n");
    kbt_has(t, "  fused (mismatch): max abs err 0.5, rel l2 err 0.0125 (atol 1e-05, rtol 0.0001); "
           "max abs err 0.5 at row 3, col 9\n");
    free(t);

    /* The run's switches, made safe for the terminal like every other field. */
    snprintf(run.env, sizeof run.env, "KBENCH_LAYERNORM_SROW2_PP=0 KBENCH_X=\x1b[2J");
    t = render(write_wide, &run);
    kbt_has(t, "command   kbench run softmax\nenv       KBENCH_LAYERNORM_SROW2_PP=0 KBENCH_X=");
    assert_null(strstr(t, "\x1b"));
    free(t);
    run.env[0] = '\0';

    snprintf(run.state, sizeof run.state, "interrupted");
    run.dev.copy_gbps = NAN;
    t = render(write_wide, &run);
    kbt_has(t, "kbench run 7  [interrupted]\n!! INTERRUPTED: the run stopped before it finished");
    kbt_has(t, "ceilings  not calibrated (run 'kbench calibrate')\n");
    line_of(t, "coalesced", row, sizeof row);
    kbt_has(row, "8.4%"); /* the stored figure, not recomputed */
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
    kbt_has(t, "# kbench run 7\n\n> **INTERRUPTED: ");
    kbt_has(t, "- **device**: NVIDIA H200, cc 9.0, 132 SMs (GPU-1234)\n");
    kbt_has(t, "## softmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=1024\n\n| variant | status |");
    kbt_has(t, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    kbt_has(t, "| a\\|b | failed |");
    kbt_has(t, "- **a\\|b** (failed): launch failed: \"too many resources requested\", 300 "
           "registers\\nsecond line \\| piped\n");
    /* Every table line has exactly 12 bare pipes (11 columns: no counters). */
    int rows = 0;
    for (char *line = t; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (line[0] == '|') {
            assert_int_equal(bare_pipes(line), 12);
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
/* Fields of a CSV record. */
#define CSV_FIELDS 61

static int parse_csv(const char *s, int nf, char fields[][64][256])
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

static int col_index(char fields[][64][256], const char *name)
{
    for (int c = 0; c < 64; c++)
        if (strcmp(fields[0][c], name) == 0)
            return c;
    fail_msg("no column '%s'", name);
    return -1;
}

static void test_csv(void **state)
{
    (void)state;
    kb_run run;
    static char fields[16][64][256];
    build_run(&run, "complete");
    char *t = render(kb_write_csv, &run);
    assert_int_equal(strncmp(t, "run_id,started,state,tag,device,device_uuid,cc,copy_gbps,op,", 60),
                     0);
    int nrec = parse_csv(t, CSV_FIELDS, fields);
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
    /* untrusted text on one line: the line break shown as \n */
    assert_string_equal(fields[6][reason], "launch failed: \"too many resources requested\", "
                                           "300 registers\\nsecond line | piped");
    /* The counter fields come last; unknown is empty. */
    assert_string_equal(fields[0][35], "metric_set");
    assert_string_equal(fields[0][45], "top_stalls");
    /* then the compute ceilings, bound and extra memory */
    assert_string_equal(fields[0][46], "mma_tflops");
    assert_string_equal(fields[0][47], "fp32_tflops");
    assert_string_equal(fields[0][48], "bound");
    assert_string_equal(fields[0][49], "extra_bytes");
    assert_string_equal(fields[1][46], "");
    assert_string_equal(fields[1][48], "memory");
    assert_string_equal(fields[1][49], "0");
    assert_string_equal(fields[1][col_index(fields, "metric_set")], "none");
    assert_string_equal(fields[1][col_index(fields, "dram_gbps")], "");
    assert_string_equal(fields[1][col_index(fields, "registers")], "32");
    assert_string_equal(fields[1][col_index(fields, "local_bytes")], "0");
    assert_string_equal(fields[5][col_index(fields, "registers")], "");
    kbt_has(t, "\"launch failed: \"\"too many resources requested\"\", 300 registers\\nsecond");
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
    kbt_has(t, "kbench run  [running]\n!! RUNNING:");
    kbt_has(t, "\nno results\n");
    free(t);
    t = render(kb_write_markdown, &run);
    kbt_has(t, "_no results_");
    free(t);
    t = render(kb_write_csv, &run);
    assert_non_null(strstr(t, "speedup_vs_naive,kernels,metric_set,"));
    assert_non_null(
        strstr(t, ",local_bytes,top_stalls,mma_tflops,fp32_tflops,bound,extra_bytes,batch_us,"
                  "batch_stdrel,batch_launches,batch_sm_clock_mhz,gbps_batch,tflops_batch,"
                  "pct_peak_batch,"
                  "speedup_batch_vs_naive,flags,throttle_reason,copy_batch_gbps\r\n"));
    assert_null(strchr(strchr(t, '\n') + 1, '\n'));
    free(t);
}

/* ---- counters ------------------------------------------------------------------- */

static const char *const perm_reason =
    "counters not permitted (ERR_NVGPUCTRPERM): run as root, or load nvidia with "
    "NVreg_RestrictProfilingToAdminUsers=0";

static void set_name(kb_named_value *v, const char *name, double value)
{
    snprintf(v->name, sizeof v->name, "%s", name);
    v->value = value;
}

/* A softmax result of rows=4096, cols=32768 fp32 (1 GiB moved at best) with its
 * counters: set, DRAM bytes, achieved and theoretical occupancy, registers,
 * spills and top stalls as the producer fills them. */
static void add_counted(kb_run *run, const char *variant, double median, double dram_bytes,
                        double achieved, double theoretical, int regs, int64_t local,
                        const char *stalls)
{
    kb_result r;
    kb_result_init(&r);
    snprintf(r.op, sizeof r.op, "softmax");
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.dtype, sizeof r.dtype, "fp32");
    r.naxes = 2;
    snprintf(r.axis[0], sizeof r.axis[0], "rows");
    snprintf(r.axis[1], sizeof r.axis[1], "cols");
    r.shape[0] = 4096;
    r.shape[1] = 32768;
    r.checked = 1;
    r.median_us = median;
    r.stdrel = 0.004;
    r.bytes = 1073741824.0;
    snprintf(r.metric_set, sizeof r.metric_set, "%s", *stalls ? "stalls" : "core");
    r.passes = *stalls ? 3 : 1;
    r.dram_bytes = dram_bytes;
    r.excess_traffic = dram_bytes / r.bytes;
    r.achieved_occupancy = achieved;
    r.theoretical_occupancy = theoretical;
    r.registers = regs;
    r.local_bytes = local;
    snprintf(r.top_stalls, sizeof r.top_stalls, "%s", stalls);
    kb_result_derive(&r, &(kb_device){.copy_gbps = 4012.3});
    r.nkernels = 1;
    r.kernels = calloc(1, sizeof *r.kernels);
    assert_non_null(r.kernels);
    kb_kernel *k = &r.kernels[0];
    snprintf(k->name, sizeof k->name, "softmax_%s_kernel<float>", variant);
    k->grid[0] = 4096;
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = 256;
    k->block[1] = k->block[2] = 1;
    k->registers = regs;
    k->static_smem = 4096;
    k->local_bytes = local;
    k->blocks_per_sm = 6;
    k->occupancy = theoretical / 100.0;
    snprintf(k->occ_limiter, sizeof k->occ_limiter, "registers");
    set_name(&k->metrics[0], "dram__bytes_read.sum", dram_bytes / 2);
    set_name(&k->metrics[1], "dram__bytes_write.sum", dram_bytes / 2);
    set_name(&k->metrics[2], "sm__warps_active.avg.pct_of_peak_sustained_active", achieved);
    k->nmetrics = 3;
    if (*stalls) {
        set_name(&k->stalls[0], "long_scoreboard", 0.52);
        set_name(&k->stalls[1], "barrier", 0.18);
        set_name(&k->stalls[2], "wait", 0.125);
        k->nstalls = 3;
    }
    assert_int_equal(kb_run_add(run, &r), 0);
}

static void build_counted(kb_run *run)
{
    kb_run_init(run);
    run->id = 12;
    snprintf(run->version, sizeof run->version, "0.1.0");
    snprintf(run->git, sizeof run->git, "0123abcd");
    snprintf(run->started, sizeof run->started, "2025-06-02T09:00:00Z");
    snprintf(run->state, sizeof run->state, "complete");
    snprintf(run->dev.name, sizeof run->dev.name, "NVIDIA H200");
    run->dev.cc_major = 9;
    run->dev.sms = 132;
    run->dev.copy_gbps = 4012.3;
    add_counted(run, "naive", 1250.0, 3221225472.0, 45.2, 100.0, 16, 0,
                "long_sb 71% lg_thr 9%");
    add_counted(run, "shared-memory", 410.5, 1095216660.0, 38.9, 50.0, 255, 64,
                "barrier 41% long_sb 30%");
    add_counted(run, "fused", 330.25, 1073741824.0, 61.3, 75.0, 40, 0,
                "long_sb 52% barrier 18%");
}

/* Every table line of text (not the reason lines under a table, which start
 * with two spaces) is at most max display columns. */
static void assert_width(const char *t, size_t max)
{
    for (const char *p = t; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (strncmp(p, "  ", 2) != 0 && cols(p, len) > max)
            fail_msg("line of %zu columns: %.*s", cols(p, len), (int)len, p);
        p = end ? end + 1 : p + len;
    }
}

static void test_counter_columns(void **state)
{
    (void)state;
    kb_run run;
    char head[512], row[512];
    build_counted(&run);
    char *t = render(write_wide, &run);
    line_of(t, "variant", head, sizeof head);
    kbt_has(head, "kernels  regs  spill  DRAM GB/s  excess  occ a/t  top stalls");
    line_of(t, "fused", row, sizeof row);
    kbt_has(row, "        1    40    0 B     3251.3   1.00x   61/75%  long_sb 52% barrier 18%");
    line_of(t, "naive", row, sizeof row);
    kbt_has(row, "2577.0   3.00x  45/100%  long_sb 71% lg_thr 9%");
    line_of(t, "shared-memory", row, sizeof row);
    kbt_has(row, "255   64 B");
    kbt_has(row, "1.02x   39/50%  barrier 41% long_sb 30%");
    /* Right-aligned figures end under their heading. */
    size_t occ_end = cols(head, (size_t)(strstr(head, "occ a/t") - head) + 7);
    assert_int_equal(cols(row, (size_t)(strstr(row, "39/50%") - row) + 6), occ_end);
    assert_null(strstr(t, "counters: none"));
    assert_null(strstr(t, " \n"));
    assert_width(t, 140);
    free(t);

    /* One result without counters (and why) among results with them. */
    kb_result *v = &run.results[1];
    snprintf(v->metric_set, sizeof v->metric_set, "none");
    snprintf(v->counters_reason, sizeof v->counters_reason, "%s", perm_reason);
    v->dram_bytes = v->dram_gbps = v->excess_traffic = v->achieved_occupancy = NAN;
    v->top_stalls[0] = '\0';
    t = render(write_wide, &run);
    line_of(t, "shared-memory", row, sizeof row);
    kbt_has(row, "255   64 B          -       -    -/50%  -");
    kbt_has(t, "\n  counters: none for shared-memory (counters not permitted (ERR_NVGPUCTRPERM): "
           "run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0)\n");
    assert_width(t, 140);
    free(t);

    /* Markdown carries every column: 15 columns, 16 bare pipes a line. */
    t = render(kb_write_markdown, &run);
    kbt_has(t, "| variant | status | median | spread | GB/s | % copy | vs naive | kernels | regs "
           "| spill | DRAM GB/s | excess | occ a/t | top stalls | note |\n");
    kbt_has(t, "| fused | ok | 330.2 \xC2\xB5s | \xC2\xB1" "0.4% | 3251.3 | 81.0% | 3.79x | 1 | 40 "
           "| 0 B | 3251.3 | 1.00x | 61/75% | long_sb 52% barrier 18% |  |\n");
    kbt_has(t, "- **counters**: none for shared-memory (counters not permitted");
    int rows = 0;
    for (char *line = t; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (line[0] == '|') {
            assert_int_equal(bare_pipes(line), 16);
            rows++;
        }
        line = end ? end + 1 : NULL;
    }
    assert_int_equal(rows, 2 + 3);
    free(t);

    /* CSV: the counter fields at the end, exact. */
    static char fields[8][64][256];
    t = render(kb_write_csv, &run);
    assert_int_equal(parse_csv(t, CSV_FIELDS, fields), 4);
    assert_string_equal(fields[3][col_index(fields, "metric_set")], "stalls");
    assert_string_equal(fields[3][col_index(fields, "passes")], "3");
    assert_string_equal(fields[3][col_index(fields, "dram_bytes")], "1073741824");
    assert_string_equal(fields[3][col_index(fields, "excess_traffic")], "1");
    assert_string_equal(fields[3][col_index(fields, "achieved_occupancy")], "61.3");
    assert_string_equal(fields[3][col_index(fields, "theoretical_occupancy")], "75");
    assert_string_equal(fields[3][col_index(fields, "registers")], "40");
    assert_string_equal(fields[3][col_index(fields, "top_stalls")], "long_sb 52% barrier 18%");
    assert_string_equal(fields[2][col_index(fields, "counters_reason")], perm_reason);
    assert_string_equal(fields[2][col_index(fields, "dram_gbps")], "");
    free(t);
    kb_run_release(&run);
}

/* No result has counters: the table of today plus regs and spills, and the
 * reason said once under it. */
static void test_counters_none(void **state)
{
    (void)state;
    kb_run run;
    char head[512], row[512];
    build_counted(&run);
    for (size_t i = 0; i < run.nresults; i++) {
        kb_result *r = &run.results[i];
        snprintf(r->metric_set, sizeof r->metric_set, "none");
        snprintf(r->counters_reason, sizeof r->counters_reason, "%s", perm_reason);
        r->passes = 0;
        r->dram_bytes = r->dram_gbps = r->excess_traffic = r->achieved_occupancy = NAN;
        r->top_stalls[0] = '\0';
    }
    char *t = render(write_wide, &run);
    line_of(t, "variant", head, sizeof head);
    assert_string_equal(head, "variant        status    median  spread    GB/s  % copy  vs naive"
                              "  kernels  regs  spill");
    line_of(t, "shared-memory", row, sizeof row);
    assert_string_equal(row, "shared-memory  ok      410.5 \xC2\xB5s   \xC2\xB1" "0.4%  2615.7   "
                             "65.2%     3.05x        1   255   64 B");
    const char *line = strstr(t, "  counters: none (counters not permitted (ERR_NVGPUCTRPERM)");
    assert_non_null(line);
    assert_null(strstr(line + 3, "counters: none")); /* once for the three */
    assert_null(strstr(t, "counters: none for"));
    free(t);
    t = render(kb_write_markdown, &run);
    kbt_has(t, "| kernels | regs | spill | note |\n");
    kbt_has(t, "\n- **counters**: none (counters not permitted (ERR_NVGPUCTRPERM): run as root");
    free(t);
    kb_run_release(&run);
}

/* Lines stay within 100 columns: the compact column set (no kernels, spill,
 * DRAM GB/s), a note or stall summary that does not fit moves under the table,
 * long lines wrap; --wide shows every column, the stall summary cut after
 * whole pairs only when a width is given. */
static void test_width_limit(void **state)
{
    (void)state;
    kb_run run;
    char row[512];
    build_counted(&run);
    snprintf(run.results[0].variant, sizeof run.results[0].variant, "one-pass-variance");
    snprintf(run.results[0].top_stalls, sizeof run.results[0].top_stalls, "%s",
             "long_sb 71% lg_throttle 9%");
    run.results[1].checked = 0;
    add(&run, "softmax", "fp32", 4096, 32768, "flash-tiled", KB_R_FAILED, NAN, NAN, NAN, 0,
        long_reason);
    char *t = render(kb_write_text, &run);
    assert_width(t, 100);
    line_of(t, "variant", row, sizeof row);
    assert_string_equal(row, "variant            status    median  spread    GB/s  % copy  vs naive"
                             "  regs  excess  occ a/t");
    line_of(t, "one-pass-variance", row, sizeof row);
    assert_string_equal(row, "one-pass-variance  ok      1.250 ms   \xC2\xB1" "0.4%   859.0   21.4%"
                             "         -    16   3.00x  45/100%");
    line_of(t, "flash-tiled", row, sizeof row);
    kbt_has(row, "  failed ");
    assert_null(strstr(row, "cudnn"));
    /* under the table: the stalls, the note of an ok result, the full reason
     * wrapped */
    kbt_has(t, "\n  one-pass-variance: top stalls long_sb 71% lg_throttle 9%\n");
    kbt_has(t, "\n  fused: top stalls long_sb 52% barrier 18%\n");
    kbt_has(t, "\n  shared-memory (ok): not checked\n"
           "  flash-tiled (failed): cudnn has no fp32 softmax for rows of 1024 columns in this "
           "build of the\n  library\n");
    free(t);
    /* a narrower layout (a terminal's) still fits */
    kb_text_layout narrow = {80, 0};
    char *buf = NULL;
    size_t len = 0;
    kb_err e = {{0}};
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(kb_write_text_laid_out(f, &run, &narrow, &e), KB_OK);
    fclose(f);
    assert_width(buf, 96); /* the table's own numbers; the wrapped lines within 80 */
    free(buf);
    /* --wide: every column, cells whole */
    t = render(write_wide, &run);
    line_of(t, "variant", row, sizeof row);
    kbt_has(row, "kernels  regs  spill  DRAM GB/s  excess  occ a/t  top stalls");
    line_of(t, "one-pass-variance", row, sizeof row);
    kbt_has(row, "long_sb 71% lg_throttle 9%");
    free(t);
    /* Without counters the same notes fit in the table. */
    for (size_t i = 0; i < run.nresults; i++)
        snprintf(run.results[i].metric_set, sizeof run.results[i].metric_set, "none");
    t = render(kb_write_text, &run);
    assert_width(t, 100);
    line_of(t, "shared-memory", row, sizeof row);
    kbt_has(row, "  not checked");
    assert_null(strstr(t, "(ok): "));
    free(t);
    kb_run_release(&run);
}

/* An attention-like compute-bound case: TFLOP/s and % peak instead of GB/s
 * and % copy, an extra mem column for the variant that materialises its score
 * matrix, every known ceiling in the header; a memory-bound case of the same
 * run keeps GB/s and no extra mem column. */
static void test_compute_bound(void **state)
{
    (void)state;
    kb_run run;
    char head[512], row[512];
    build_run(&run, "complete");
    run.dev.copy_gbps = 4229.06;
    run.dev.mma_tflops = 780.4;
    run.dev.fp32_tflops = 51.2;
    static const struct {
        const char *variant;
        double median, extra;
    } v[] = {{"naive", 2000.0, 4.294967296e9}, {"flash-tiled", 250.0, 0}, {"a", 500, 5.12e8}};
    for (size_t i = 0; i < 3; i++) {
        add(&run, "attention", "bf16", 4096, 4096, v[i].variant, KB_R_OK, v[i].median, NAN, NAN,
            1, "");
        kb_result *r = &run.results[run.nresults - 1];
        snprintf(r->bound, sizeof r->bound, "compute");
        r->flops = 1.5e11;
        r->extra_bytes = v[i].extra;
        kb_result_derive(r, &run.dev);
    }
    char *t = render(write_wide, &run);
    kbt_has(t, "ceilings  copy bw 4229 GB/s \xC2\xB7 bf16 mma 780 TFLOP/s \xC2\xB7 fp32 51 TFLOP/s "
           "(calibrated)\n");
    const char *g = strstr(t, "attention \xC2\xB7 bf16 \xC2\xB7 rows=4096, cols=4096\n");
    assert_non_null(g);
    line_of(g, "variant", head, sizeof head);
    assert_string_equal(head, "variant      status    median  spread  TFLOP/s  % peak  vs naive"
                              "  kernels  regs  spill  extra mem");
    line_of(g, "flash-tiled", row, sizeof row);
    assert_string_equal(row, "flash-tiled  ok      250.0 \xC2\xB5s   \xC2\xB1" "1.2%    600.0"
                             "   76.9%     8.00x        1    31    0 B          -");
    line_of(g, "naive", row, sizeof row);
    kbt_has(row, "   75.0    9.6%     1.00x        1    31    0 B     4.3 GB");
    line_of(g, "a ", row, sizeof row);
    kbt_has(row, "512 MB");
    /* the memory-bound softmax case of the same run */
    line_of(t, "variant", head, sizeof head);
    kbt_has(head, "  GB/s  % copy  vs naive  kernels  regs  spill");
    assert_null(strstr(head, "extra"));
    assert_width(t, 140);
    free(t);

    t = render(kb_write_markdown, &run);
    kbt_has(t, "- **ceilings**: copy bw 4229 GB/s \xC2\xB7 bf16 mma 780 TFLOP/s \xC2\xB7 fp32 51 "
           "TFLOP/s (calibrated)\n");
    kbt_has(t, "| variant | status | median | spread | TFLOP/s | % peak | vs naive | kernels | regs "
           "| spill | extra mem | note |\n");
    kbt_has(t, "| naive | ok | 2.000 ms | \xC2\xB1" "1.2% | 75.0 | 9.6% | 1.00x | 1 | 31 | 0 B | "
           "4.3 GB |  |\n");
    free(t);

    static char fields[16][64][256];
    t = render(kb_write_csv, &run);
    assert_int_equal(parse_csv(t, CSV_FIELDS, fields), 1 + 9);
    assert_string_equal(fields[7][col_index(fields, "variant")], "naive");
    assert_string_equal(fields[7][col_index(fields, "bound")], "compute");
    assert_string_equal(fields[7][col_index(fields, "extra_bytes")], "4294967296");
    assert_string_equal(fields[7][col_index(fields, "mma_tflops")], "780.4");
    assert_string_equal(fields[7][col_index(fields, "fp32_tflops")], "51.2");
    assert_string_equal(fields[7][col_index(fields, "tflops")], "75");
    free(t);

    /* Only some ceilings known: those are listed. */
    run.dev.copy_gbps = NAN;
    run.dev.fp32_tflops = NAN;
    run.dev.mma_tflops = 8.125;
    t = render(write_wide, &run);
    kbt_has(t, "ceilings  bf16 mma 8.1 TFLOP/s (calibrated)\n");
    free(t);
    kb_run_release(&run);
}

static void test_kernels_detail(void **state)
{
    (void)state;
    kb_run run;
    build_counted(&run);
    add(&run, "softmax", "fp32", 4096, 32768, "vendor", KB_R_SKIPPED, NAN, NAN, NAN, 0,
        long_reason);
    snprintf(run.results[3].counters_reason, sizeof run.results[3].counters_reason, "%s",
             perm_reason);
    char *t = render(kb_write_kernels_text, &run);
    kbt_has(t, "kbench run 12  [complete]\n");
    kbt_has(t, "\nsoftmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=32768 \xC2\xB7 fused  [ok]\n"
           "  counters    stalls, 3 passes\n"
           "  kernel 1 of 1: softmax_fused_kernel<float>\n"
           "    launch      grid 4096x1x1, block 256x1x1\n"
           "    registers   40 per thread\n"
           "    shared mem  4096 B static + 0 B dynamic per block\n"
           "    local mem   0 B per thread\n"
           "    occupancy   75.0% theoretical, 6 blocks per SM, limited by registers\n"
           "    metrics\n" /* label, value in its unit, the CUPTI name */
           "      DRAM read              537 MB  dram__bytes_read.sum\n"
           "      DRAM written           537 MB  dram__bytes_write.sum\n"
           "      achieved occupancy      61.3%  sm__warps_active.avg.pct_of_peak_sustained_active\n"
           "    stalls (share of stalled warp cycles, largest first)\n"
           "      long_scoreboard   52.0%\n"
           "      barrier           18.0%\n"
           "      wait              12.5%\n");
    kbt_has(t, "    local mem   64 B per thread (spills, stack)\n");
    kbt_has(t, "\nsoftmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=32768 \xC2\xB7 vendor  [skipped]\n"
           "  counters    none (counters not permitted (ERR_NVGPUCTRPERM): run as root, or "
           "load nvidia with NVreg_RestrictProfilingToAdminUsers=0)\n"
           "  no kernels recorded (cudnn has no fp32 softmax");
    assert_null(strstr(t, " \n"));
    free(t);

    t = render(kb_write_kernels_markdown, &run);
    kbt_has(t, "## softmax \xC2\xB7 fp32 \xC2\xB7 rows=4096, cols=32768 \xC2\xB7 fused (ok)\n\n"
           "- **counters**: stalls, 3 passes\n\n"
           "| # | kernel | grid | block | regs | static smem | dynamic smem | local | occupancy "
           "| limiter |\n|---:|---|---|---|---:|---:|---:|---:|---:|---|\n"
           "| 1 | softmax_fused_kernel&lt;float> | 4096x1x1 | 256x1x1 | 40 | 4096 B | 0 B | 0 B "
           "| 75.0% | registers |\n"
           "\n**kernel 1 metrics**\n\n| metric | value | CUPTI name |\n|---|---:|---|\n"
           "| DRAM read | 537 MB | dram__bytes_read.sum |\n");
    kbt_has(t, "\n**kernel 1 stalls** (share of stalled warp cycles, largest first)\n\n"
           "| reason | share |\n|---|---:|\n| long_scoreboard | 52.0% |\n| barrier | 18.0% |\n");
    kbt_has(t, "- no kernels recorded (cudnn has no fp32 softmax");
    free(t);
    kb_run_release(&run);
}

/* Every line of t is at most max bytes (and so columns) wide. */
static void assert_bytes(const char *t, size_t max)
{
    for (const char *p = t; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > max)
            fail_msg("line of %zu bytes: %.*s", len, (int)len, p);
        p = end ? end + 1 : p + len;
    }
}

/* A sweep over cols (rows x cols constant): its table after the case tables,
 * a row per cols ascending, the fastest marked and its % copy; the markdown
 * table; with long variant names the variants that do not fit 100 columns go
 * to a second table; a run of unrelated shapes shows no sweep. */
static void test_sweep_table(void **state)
{
    (void)state;
    static const int64_t sweep[][2] = {{32768, 32}, {1024, 1024}, {8, 131072}};
    kb_run run;
    kb_run_init(&run);
    run.dev.copy_gbps = 4000;
    for (size_t i = 0; i < KB_COUNT(sweep); i++) {
        add(&run, "softmax", "fp32", sweep[i][0], sweep[i][1], "naive", KB_R_OK, 100, 300.0,
            7.5, 1, "");
        add(&run, "softmax", "fp32", sweep[i][0], sweep[i][1], "fused", KB_R_OK, 10,
            i == 0 ? 200.0 : 3900.0, i == 0 ? 5.0 : 97.5, 1, "");
    }
    add(&run, "softmax", "fp32", 3, 65536, "fused", KB_R_OK, 10, 100.0, 2.5, 1, "");
    char *t = render(kb_write_text, &run);
    const char *sw = strstr(t, "softmax \xC2\xB7 fp32 \xC2\xB7 sweep over cols, rows \xC3\x97 cols "
                               "about constant\n");
    assert_non_null(sw);
    assert_true(sw > strstr(t, "rows=3, cols=65536")); /* after the case tables */
    kbt_has(sw, "\n  cols   rows   naive    fused  % copy\n"
                "    32  32768  300.0*   200.0     7.5%\n"
                "  1024   1024  300.0   3900.0*   97.5%\n"
                "131072      8  300.0   3900.0*   97.5%\n"
                "  GB/s of each variant (model bytes / median time); * the fastest at each cols, "
                "and % copy its share\n  of the calibrated copy bandwidth\n");
    assert_null(strstr(sw, "65536")); /* 3 x 65536 is a fifth of the size */
    free(t);
    t = render(kb_write_markdown, &run);
    kbt_has(t, "\n## softmax \xC2\xB7 fp32 \xC2\xB7 sweep over cols, rows \xC3\x97 cols about "
               "constant\n\n| cols | rows | naive | fused | % copy |\n|---:|---:|---:|---:|---:|\n"
               "| 32 | 32768 | 300.0* | 200.0 | 7.5% |\n");
    free(t);
    kb_run_release(&run);

    /* six variants with long names: three tables, each within 100 columns */
    kb_run_init(&run);
    run.dev.copy_gbps = 4000;
    for (size_t i = 0; i < KB_COUNT(sweep); i++)
        for (int v = 0; v < 6; v++) {
            char name[48];
            snprintf(name, sizeof name, "a-rather-long-variant-name-%d", v);
            add(&run, "softmax", "bf16", sweep[i][0], sweep[i][1], name, KB_R_OK, 10,
                1000.0 + v, 25.0, 1, "");
        }
    t = render(kb_write_text, &run);
    sw = strstr(t, "sweep over cols");
    assert_non_null(sw);
    assert_bytes(t, 100);
    /* 28 columns a variant: two a table beside cols and rows */
    assert_int_equal(kbt_count(sw, "\n  cols   rows  a-rather-long-variant-name-"), 3);
    assert_int_equal(kbt_count(sw, "% copy\n"), 1);
    kbt_has(sw, "1005.0*");
    free(t);
    kb_run_release(&run);

    /* the report's own three shapes: no sweep */
    build_run(&run, "complete");
    t = render(kb_write_text, &run);
    assert_null(strstr(t, "sweep over"));
    free(t);
    kb_run_release(&run);
}

/* Results of one case at clocks far apart: the table says so under it, naming
 * the results at the lowest and highest; clocks close together, or far apart
 * only on a result that is not ok, say nothing. */
static void test_clocks_apart(void **state)
{
    (void)state;
    kb_run run;
    build_run(&run, "complete");
    run.results[0].sm_clock_mhz = 1590.0; /* softmax naive */
    run.results[2].sm_clock_mhz = 1965.0; /* softmax coalesced */
    run.results[3].sm_clock_mhz = 900.0;  /* softmax fused: a mismatch */
    run.results[1].sm_clock_mhz = 1200.0; /* layernorm, a case of its own */
    const char *line = "clocks after the samples: naive 1590 MHz, coalesced 1965 (24% apart): "
                       "these results met the power cap differently";
    char *t = render(write_wide, &run);
    assert_non_null(strstr(t, line));
    assert_int_equal(strstr(strstr(t, line) + 1, "clocks:") == NULL, 1); /* once */
    assert_null(strstr(t, "flop per SM cycle")); /* memory-bound */
    free(t);
    /* compute-bound: each ok result's flop per SM cycle at its clock (132 SMs;
     * naive 200 us at 1590 MHz, coalesced 100 us at 1965; fused mismatched) */
    for (int i = 0; i < 4; i++) {
        snprintf(run.results[i].bound, sizeof run.results[i].bound, "compute");
        run.results[i].flops = 200e-6 * 132 * 1590e6 * 1000.0;
    }
    t = render(write_wide, &run);
    kbt_has(t, "flop per SM cycle at those clocks: naive 1000, coalesced 1618\n");
    free(t);
    t = render(kb_write_markdown, &run);
    kbt_has(t, "flop per SM cycle at those clocks: naive 1000, coalesced 1618");
    free(t);
    t = render(kb_write_markdown, &run);
    assert_non_null(strstr(t, line));
    free(t);
    run.results[2].sm_clock_mhz = 1660.0; /* 4.4% apart */
    t = render(kb_write_text, &run);
    assert_null(strstr(t, "clocks:"));
    free(t);
    kb_run_release(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_empty_run),
        cmocka_unit_test(test_counter_columns),
        cmocka_unit_test(test_counters_none),
        cmocka_unit_test(test_width_limit),
        cmocka_unit_test(test_compute_bound),
        cmocka_unit_test(test_kernels_detail),
        cmocka_unit_test(test_sweep_table),
        cmocka_unit_test(test_clocks_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

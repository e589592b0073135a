/* test_sweep_scripts.c - the scripts of the shape sweep, without a GPU:
 * tests/gpu/h200.sh's SWEEP=1 DRY_RUN=1 prints the kbench commands with the
 * sweep's shapes (each case once, the report's own shapes kept; the sweep's
 * rows per dtype, x at 512 MB); the shapes of each dtype make one sweep of the
 * ten cols in the result model, rows=3 x 262144 and 4099 x 3001 outside it;
 * bench/torch_peers.py compiles, its --dry-run lists the same cases as h200.sh without importing
 * torch (a torch that fails on import is put first on the path), and a bad
 * option exits 2 naming it; PEERS=1 runs it after each row operator's report
 * at that report's shapes (within PEERS_TIMEOUT seconds when set);
 * bench/sweep_table.py sets the committed report's best variants beside peers
 * of the same session with their ratio, says so when the peers' run stopped
 * early, and leaves the ratio out, saying why, for peers of another day.
 * Skips, saying so, without python3. */
#include <unistd.h>

#include "kbtest.h"
#include "results/sweep.h"

/* The kbench command lines of h200.sh for op with SWEEP=1, and its --shape
 * values one a line into dir/op.kbench, sorted. */
/* The shapes h200.sh's sweep runs op at in dtype dt, as kbench writes them
 * (a shape limited to dt without its dtype=), sorted, a line each. */
static char *kbench_shapes(const char *op, const char *dt)
{
    assert_int_equal(kbt_sh("SWEEP=1 DRY_RUN=1 OUT=%s/out bash tests/gpu/h200.sh %s >%s/%s.cmd",
                            kbt_dir, op, kbt_dir, op),
                     0);
    assert_int_equal(kbt_sh("tr ' ' '\\n' <%s/%s.cmd | grep -A1 -x -- --shape | grep -v -x -- "
                            "--shape | grep -v -x -- -- | grep -E '^(dtype=%s,)?rows=' | "
                            "sed 's/^dtype=[a-z0-9]*,//' | sort >%s/%s.%s.kbench",
                            kbt_dir, op, dt, kbt_dir, op, dt),
                     0);
    return kbt_read("%s.%s.kbench", op, dt);
}

static void h200_sweep_dry_run(void **state)
{
    (void)state;
    char path[128];
    char *sm[2] = {kbench_shapes("softmax", "fp32"), kbench_shapes("softmax", "bf16")};
    char *cmd = kbt_read("softmax.cmd");
    kbt_has(cmd, "dry run: the commands of tests/gpu/h200.sh softmax (nothing runs)\n"
                 "build/kbench run softmax --variants all --dtype fp32,bf16 --shape "
                 "rows=32768,cols=4096 --shape rows=8192,cols=32768 --shape rows=4099,cols=3001 "
                 "--shape dtype=fp32,rows=4194304,cols=32 --shape dtype=fp32,rows=4067203,cols=33 ");
    kbt_has(cmd, "--shape dtype=fp32,rows=128,cols=1048576 --shape dtype=bf16,rows=8388608,cols=32 ");
    kbt_has(cmd, "--shape dtype=bf16,rows=256,cols=1048576 --shape rows=3,cols=262144 --timeout 2 ");
    assert_int_equal(kbt_count(cmd, "rows=32768,cols=4096 "), 1); /* once: fp32's point */
    assert_int_equal(kbt_count(cmd, "rows=4099,cols=3001 "), 1);
    assert_int_equal(kbt_count(cmd, "--shape"), 23); /* 3 + 9 fp32 + 10 bf16 + 1 */
    free(cmd);
    /* nothing ran: no report folder */
    snprintf(path, sizeof path, "%s/out", kbt_dir);
    assert_int_not_equal(access(path, F_OK), 0);

    /* the shapes, in fp32 and bf16, make one sweep per dtype over cols */
    kb_run run;
    kb_run_init(&run);
    static const char *const dtypes[] = {"fp32", "bf16"};
    for (size_t d = 0; d < 2; d++)
        for (const char *p = sm[d]; *p;) {
            long long rows = 0, cols = 0;
            assert_int_equal(sscanf(p, "rows=%lld,cols=%lld", &rows, &cols), 2);
            kb_result r;
            kbt_case(&r, "softmax", "fused", dtypes[d], rows, cols);
            r.status = KB_R_OK;
            r.bytes = 2.0 * (double)rows * (double)cols * (d ? 2 : 4);
            r.median_us = 1000;
            kb_result_derive(&r, &run.dev);
            assert_int_equal(kb_run_add(&run, &r), 0);
            p = strchr(p, '\n');
            p = p ? p + 1 : "";
        }
    kb_sweeps sw;
    kb_err e = {{0}};
    assert_int_equal(kb_run_sweeps(&run, &sw, &e), KB_OK);
    assert_int_equal(sw.n, 2);
    /* bf16's 512 MB holds the report's own 8192 x 32768 as an eleventh point */
    static const int64_t cols[2][11] = {
        {32, 33, 128, 768, 1024, 4096, 16384, 65536, 262144, 1048576},
        {32, 33, 128, 768, 1024, 4096, 16384, 32768, 65536, 262144, 1048576}};
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(sw.s[i].axis, "cols");
        assert_string_equal(sw.s[i].partner, "rows");
        assert_int_equal(sw.s[i].npoints, i ? 11 : 10);
        for (size_t p = 0; p < (size_t)sw.s[i].npoints; p++)
            assert_int_equal(sw.s[i].value[p], cols[i][p]);
    }
    kb_sweeps_release(&sw);
    kb_run_release(&run);
    free(sm[0]);
    free(sm[1]);

    /* layernorm keeps its own shapes beside the sweep */
    char *ln = kbench_shapes("layernorm", "bf16");
    kbt_has(ln, "rows=32768,cols=4096,gelu=1\n");
    kbt_has(ln, "rows=32768,cols=4096,mean=10000\n");
    kbt_has(ln, "rows=256,cols=1048576\n");
    free(ln);

    /* without SWEEP the report's shapes alone */
    assert_int_equal(kbt_sh("DRY_RUN=1 bash tests/gpu/h200.sh softmax >%s/plain.cmd", kbt_dir), 0);
    cmd = kbt_read("plain.cmd");
    assert_int_equal(kbt_count(cmd, "--shape"), 3);
    assert_null(strstr(cmd, "--timeout"));
    free(cmd);
}

static void torch_peers_dry_run(void **state)
{
    (void)state;
    kbt_need_python("the peer script");
    assert_int_equal(kbt_sh("PYTHONPYCACHEPREFIX=%s/pyc python3 -m py_compile "
                            "bench/torch_peers.py",
                            kbt_dir),
                     0);
    /* a torch that cannot be imported: --dry-run must not need it */
    assert_int_equal(kbt_sh("mkdir -p %s/fake/torch && echo 'raise ImportError(\"no torch "
                            "here\")' >%s/fake/torch/__init__.py",
                            kbt_dir, kbt_dir),
                     0);
    for (size_t i = 0; i < 4; i++) {
        const char *op = i % 2 ? "layernorm" : "softmax", *dt = i / 2 ? "bf16" : "fp32";
        char *k = kbench_shapes(op, dt);
        assert_int_equal(kbt_sh("PYTHONPATH=%s/fake python3 bench/torch_peers.py --dry-run "
                                "--ops %s --dtypes %s >%s/%s.peers",
                                kbt_dir, op, dt, kbt_dir, op),
                         0);
        /* "layernorm rows=..,cols=..,gelu=0,mean=0 fp32": the shape as kbench writes it */
        assert_int_equal(kbt_sh("awk '{print $2}' %s/%s.peers | sed -e 's/,gelu=0//' -e "
                                "'s/,mean=0$//' | sort >%s/%s.peers.shapes",
                                kbt_dir, op, kbt_dir, op),
                         0);
        char *t = kbt_read("%s.peers.shapes", op);
        assert_string_equal(t, k);
        free(t);
        free(k);
    }
    assert_int_equal(kbt_sh("PYTHONPATH=%s/fake python3 bench/torch_peers.py --dry-run >%s/all",
                            kbt_dir, kbt_dir),
                     0);
    char *all = kbt_read("all");
    kbt_has(all, "softmax rows=4194304,cols=32 fp32\n");
    kbt_has(all, "softmax rows=8388608,cols=32 bf16\n");
    kbt_has(all, "layernorm rows=3,cols=262144,gelu=0,mean=0 bf16\n");
    free(all);
    assert_int_equal(kbt_sh("python3 bench/torch_peers.py --dry-run --dtypes fp16 "
                            ">/dev/null 2>%s/err",
                            kbt_dir),
                     2);
    char *err = kbt_read("err");
    kbt_has(err, "unsupported dtype 'fp16' (fp32, bf16)");
    free(err);
    assert_int_equal(kbt_sh("python3 bench/torch_peers.py --dry-run --samples 5 >/dev/null "
                            "2>&1"),
                     2);
    assert_int_equal(kbt_sh("python3 bench/torch_peers.py --dry-run --l2-flush memset "
                            ">/dev/null 2>%s/err",
                            kbt_dir),
                     2);
    err = kbt_read("err");
    kbt_has(err, "argument --l2-flush: invalid choice: 'memset'");
    free(err);
}

static void h200_peers_dry_run(void **state)
{
    (void)state;
    assert_int_equal(kbt_sh("PEERS=1 PEERS_COMPILE=0 DRY_RUN=1 OUT=/o bash tests/gpu/h200.sh "
                            "softmax layernorm attention >%s/peers.cmd",
                            kbt_dir),
                     0);
    char *cmd = kbt_read("peers.cmd");
    kbt_has(cmd, "python3 bench/torch_peers.py --ops softmax --report /o/softmax.json -o "
                 "/o/torch_peers_softmax.json --no-compile\n");
    kbt_has(cmd, "python3 bench/torch_peers.py --ops layernorm --report /o/layernorm.json");
    assert_int_equal(kbt_count(cmd, "torch_peers.py"), 2); /* not for attention */
    assert_null(strstr(cmd, "timeout"));
    free(cmd);
    /* PEERS_TIMEOUT bounds each peer run, compile included */
    assert_int_equal(kbt_sh("PEERS=1 PEERS_TIMEOUT=150 DRY_RUN=1 OUT=/o bash tests/gpu/h200.sh "
                            "layernorm >%s/peers.cmd",
                            kbt_dir),
                     0);
    cmd = kbt_read("peers.cmd");
    kbt_has(cmd, "timeout 150 python3 bench/torch_peers.py --ops layernorm --report "
                 "/o/layernorm.json -o /o/torch_peers_layernorm.json\n");
    free(cmd);
}

/* A peers file for the committed softmax report: one fp32 32768 x 4096 entry
 * at 2 x kbench's best median there, dated the report's finish. */
static void write_peers(void)
{
    assert_int_equal(
        kbt_sh("python3 -c 'import json,sys; r=json.load(open(\"results/h200/softmax.json\"));"
               "b=min(x[\"time\"][\"median_us\"] for x in r[\"results\"] if x[\"status\"]==\"ok\""
               " and x[\"dtype\"]==\"fp32\" and x[\"shape\"]=={\"rows\":32768,\"cols\":4096});"
               "json.dump({\"schema\":\"kbench-torch-peers/1\",\"date\":r[\"kbench\"][\"finished\"],"
               "\"device\":{\"name\":r[\"device\"][\"name\"]},\"torch\":\"t\",\"best\":[{\"op\":"
               "\"softmax\",\"shape\":{\"rows\":32768,\"cols\":4096},\"dtype\":\"fp32\","
               "\"mode\":\"eager\",\"median_us\":2*b,\"gbps\":1}]},open(sys.argv[1],\"w\"))' "
               "%s/peers.json",
               kbt_dir),
        0);
}

/* The peers' device.uuid set to the python expression expr (r: the committed
 * softmax report), then the sweep table of that report beside them; returns
 * the table. */
static char *table_with_uuid(const char *expr)
{
    assert_int_equal(kbt_sh("python3 -c 'import json,sys; p=json.load(open(sys.argv[1]));"
                            "r=json.load(open(\"results/h200/softmax.json\"));"
                            "p[\"device\"][\"uuid\"]=%s;json.dump(p,open(sys.argv[1],\"w\"))' "
                            "%s/peers.json && python3 bench/sweep_table.py "
                            "results/h200/softmax.json --peers %s/peers.json >%s/table",
                            expr, kbt_dir, kbt_dir, kbt_dir),
                     0);
    return kbt_read("table");
}

static void sweep_table_ratios(void **state)
{
    (void)state;
    kbt_need_python("the sweep table");
    write_peers(); /* the same session */
    assert_int_equal(kbt_sh("python3 bench/sweep_table.py results/h200/softmax.json --peers "
                            "%s/peers.json >%s/table",
                            kbt_dir, kbt_dir),
                     0);
    char *t = kbt_read("table");
    kbt_has(t, "| PyTorch / kbench |");
    kbt_has(t, "| softmax | fp32 | rows=32768,cols=4096 | fused |");
    kbt_has(t, "| eager | ");
    kbt_has(t, " | 2.00x |");
    assert_null(strstr(t, "no ratio"));
    assert_null(strstr(t, "stopped early"));
    free(t);
    /* a peers run stopped by its time limit: its cases are used, and a line
     * says how many of how many */
    assert_int_equal(kbt_sh("python3 -c 'import json,sys; p=json.load(open(sys.argv[1]));"
                            "p.update(cases=30, complete=False); json.dump(p,open(sys.argv[1],\"w\"))' "
                            "%s/peers.json && python3 bench/sweep_table.py results/h200/softmax.json "
                            "--peers %s/peers.json >%s/table",
                            kbt_dir, kbt_dir, kbt_dir),
                     0);
    t = kbt_read("table");
    kbt_has(t, "PyTorch's run stopped early: 1 of its 30 cases were measured");
    kbt_has(t, " | 2.00x |");
    kbt_has(t, "older method than kbench's: no spin before the start event");
    assert_null(strstr(t, "L2 flush"));
    free(t);
    /* timed by the current method: no line; after a write flush (torch_peers.py
     * --l2-flush write): the ratio, under a line that says the methods differ */
    static const char *const methods[] = {"{\"l2_flush\":\"read\",\"spin_cycles\":1}",
                                          "{\"l2_flush\":\"write\",\"spin_cycles\":1}"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(kbt_sh("python3 -c 'import json,sys; p=json.load(open(sys.argv[1]));"
                                "p[\"method\"]=json.loads(sys.argv[2]); "
                                "json.dump(p,open(sys.argv[1],\"w\"))' %s/peers.json '%s' && "
                                "python3 bench/sweep_table.py results/h200/softmax.json "
                                "--peers %s/peers.json >%s/table",
                                kbt_dir, methods[i], kbt_dir, kbt_dir),
                         0);
        t = kbt_read("table");
        kbt_has(t, " | 2.00x |");
        if (i == 0)
            assert_null(strstr(t, "older method"));
        else
            kbt_has(t, "PyTorch was timed by an older method than kbench's: its L2 flush a "
                       "write, whose dirty lines");
        free(t);
    }
    /* another GPU of the same name: no ratio; the report's own GPU (its uuid
     * as torch gives it, without "GPU-", upper case): the ratio */
    t = table_with_uuid("\"GPU-00000000-0000-0000-0000-000000000001\"");
    kbt_has(t, "PyTorch ran on GPU 00000000-0000-0000-0000-000000000001, this report on GPU ");
    assert_null(strstr(t, "PyTorch / kbench"));
    free(t);
    t = table_with_uuid("r[\"device\"][\"uuid\"][4:].upper()");
    kbt_has(t, " | 2.00x |");
    free(t);
    /* another day: no PyTorch columns, and a line that says why */
    assert_int_equal(kbt_sh("sed -i 's/\"date\": \"[^\"]*\"/\"date\": \"2026-11-01T00:00:00Z\"/' "
                            "%s/peers.json && python3 bench/sweep_table.py "
                            "results/h200/softmax.json --peers %s/peers.json >%s/table",
                            kbt_dir, kbt_dir, kbt_dir),
                     0);
    t = kbt_read("table");
    kbt_has(t, "PyTorch ran at 2026-11-01T00:00:00Z, not within 2 h of this report");
    assert_null(strstr(t, "PyTorch / kbench"));
    kbt_has(t, "| softmax | bf16 | rows=32768,cols=4096 | fused |");
    free(t);
    /* a file that is not a report */
    assert_int_equal(kbt_sh("python3 bench/sweep_table.py %s/peers.json >/dev/null 2>%s/err", kbt_dir,
                            kbt_dir),
                     2);
    t = kbt_read("err");
    kbt_has(t, "is not a kbench report");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(h200_sweep_dry_run, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(torch_peers_dry_run, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(h200_peers_dry_run, kbt_dir_setup, kbt_dir_teardown),
        cmocka_unit_test_setup_teardown(sweep_table_ratios, kbt_dir_setup, kbt_dir_teardown),
    };
    return cmocka_run_group_tests_name("sweep scripts", tests, NULL, NULL);
}

/* test_counters.c - the counter module without a GPU: every metric set's names
 * validate on GH100 through the CUPTI profiler host API (core in one replay
 * pass), set names parse, and the derivations (excess traffic, stall fractions,
 * occupancy limiter) give the hand-computed answers for recorded values. */
#include <math.h>

#include "kbtest.h"
#include "profiler/counters.h"

/* Fails, printing both values, unless |a - b| <= eps. */
#define assert_near(a, b, eps)                                                           \
    do {                                                                                 \
        double a_ = (a), b_ = (b);                                                       \
        if (!(fabs(a_ - b_) <= (eps)))                                                   \
            fail_msg("%s = %.17g, want %.17g (within %g)", #a, a_, b_, (double)(eps));   \
    } while (0)

static const kb_metric_set all_sets[] = {KB_METRICS_CORE, KB_METRICS_SOL,
                                         KB_METRICS_STALLS, KB_METRICS_FULL};

/* CUPTI's host library (libnvperf_host) is loaded with RTLD_DEEPBIND, which
 * AddressSanitizer refuses: under `make asan` the tests that need it skip,
 * saying so (`make test` runs them). */
static int host_api_unavailable(void)
{
#ifdef __SANITIZE_ADDRESS__
    print_message("under AddressSanitizer CUPTI's host library cannot load (RTLD_DEEPBIND): "
                  "skipping\n");
    return 1;
#else
    return 0;
#endif
}

static void every_set_validates_on_gh100(void **state)
{
    (void)state;
    if (host_api_unavailable())
        skip();
    int passes[4] = {0};
    for (int i = 0; i < 4; i++) {
        kb_err e = {{0}};
        kb_status st = kb_counters_passes("GH100", all_sets[i], &passes[i], &e);
        if (st != KB_OK)
            fail_msg(
                "the CUPTI profiler host API cannot validate set '%s' for GH100 here: %s",
                kb_metric_set_name(all_sets[i]), e.msg);
    }
    printf("GH100 replay passes: core %d, sol %d, stalls %d, full %d\n", passes[0],
           passes[1], passes[2], passes[3]);
    assert_int_equal(passes[0], 1);
    for (int i = 1; i < 4; i++)
        assert_true(passes[i] >= passes[0]);
    assert_true(passes[3] >= passes[1] && passes[3] >= passes[2]);

    int p = -1;
    kb_err e = {{0}};
    assert_int_equal(kb_counters_passes("GH100", KB_METRICS_NONE, &p, &e), KB_OK);
    assert_int_equal(p, 0);
}

static void unknown_chip_is_an_error(void **state)
{
    (void)state;
    if (host_api_unavailable())
        skip();
    int p = 0;
    kb_err e = {{0}};
    assert_int_equal(kb_counters_passes("XX999", KB_METRICS_CORE, &p, &e), KB_EENV);
    assert_non_null(strstr(e.msg, "cuptiProfilerHostInitialize"));
    assert_non_null(strstr(e.msg, "'XX999'"));
    assert_non_null(strstr(e.msg, "counters.c:"));
}

static void set_names_parse(void **state)
{
    (void)state;
    static const char *const names[] = {"none", "core", "sol", "stalls", "full"};
    for (int i = 0; i < 5; i++) {
        kb_metric_set s = KB_METRICS_NONE;
        assert_int_equal(kb_metric_set_parse(names[i], &s), 0);
        assert_int_equal((int)s, i);
        assert_string_equal(kb_metric_set_name(s), names[i]);
    }
    static const char *const bad[] = {"",    "Core",     "ful",  "fulll",
                                      "all", "core,sol", " core"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kb_metric_set s = KB_METRICS_SOL;
        assert_int_equal(kb_metric_set_parse(bad[i], &s), -1);
        assert_int_equal(s, KB_METRICS_SOL);
    }
    kb_metric_set s = KB_METRICS_SOL;
    assert_int_equal(kb_metric_set_parse(NULL, &s), -1);
    assert_string_equal(kb_metric_set_name((kb_metric_set)42), "?");
}

static int has(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

static void sets_nest_and_fit(void **state)
{
    (void)state;
    const char *const *core = NULL, *const *names = NULL;
    size_t ncore = kb_metric_set_metrics(KB_METRICS_CORE, &core);
    assert_int_equal(kb_metric_set_metrics(KB_METRICS_NONE, &names), 0);
    assert_null(names);
    assert_int_equal(ncore, 9);
    assert_true(has(core, ncore, KB_METRIC_DRAM_READ) &&
                has(core, ncore, KB_METRIC_DRAM_WRITE));
    for (int i = 0; i < 4; i++) {
        size_t n = kb_metric_set_metrics(all_sets[i], &names);
        assert_true(n <= KB_MAX_METRICS);
        for (size_t k = 0; k < ncore; k++)
            assert_true(has(names, n, core[k]));
        for (size_t k = 0; k < n; k++) {
            assert_true(strlen(names[k]) < KB_METRIC_NAME_MAX);
            assert_false(has(names, k, names[k])); /* no duplicates */
        }
    }
    size_t n = kb_metric_set_metrics(KB_METRICS_STALLS, &names);
    int stalls = 0;
    for (size_t k = 0; k < n; k++)
        stalls += strncmp(names[k], KB_STALL_PREFIX, strlen(KB_STALL_PREFIX)) == 0;
    assert_int_equal(stalls, 19);
    n = kb_metric_set_metrics(KB_METRICS_SOL, &names);
    assert_true(has(names, n, KB_METRIC_SM_SOL) && has(names, n, KB_METRIC_MEM_SOL));
    n = kb_metric_set_metrics(KB_METRICS_FULL, &names);
    assert_int_equal(n, 9 + 2 + 19 + 2);
    assert_true(has(names, n, KB_METRIC_L1_HIT) && has(names, n, KB_METRIC_L2_HIT));
}

static void put(kb_counter_values *v, const char *name, double value)
{
    kb_strlcpy(v->name[v->n], name, sizeof v->name[v->n]);
    v->value[v->n++] = value;
}

/* softmax naive, fp32, rows=32768 cols=4096: two kernels' DRAM counters */
static void excess_traffic_from_kernels(void **state)
{
    (void)state;
    kb_counter_values k[2];
    memset(k, 0, sizeof k);
    put(&k[0], KB_METRIC_DRAM_READ, 1065353216.0);
    put(&k[0], KB_METRIC_DRAM_WRITE, 1572864.0);
    put(&k[1], KB_METRIC_DRAM_READ, 536969216.0);
    put(&k[1], KB_METRIC_DRAM_WRITE, 536903680.0);
    double rd = kb_counter_sum(k, 2, KB_METRIC_DRAM_READ);
    double wr = kb_counter_sum(k, 2, KB_METRIC_DRAM_WRITE);
    assert_true(rd == 1602322432.0 && wr == 538476544.0);
    double model = 2.0 * 32768 * 4096 * 4; /* read once, write once */
    assert_near(kb_excess_traffic(rd, wr, model), 2140798976.0 / 1073741824.0, 1e-12);
    assert_near(kb_excess_traffic(536870912.0, 536870912.0, model), 1.0, 0);
    assert_true(isnan(kb_excess_traffic(rd, wr, 0)));
    assert_true(isnan(kb_excess_traffic(NAN, wr, model)));
    assert_true(isnan(kb_excess_traffic(rd, INFINITY, model)));
    assert_true(isnan(kb_counter_sum(k, 2, KB_METRIC_DURATION)));
    assert_true(isnan(kb_counter_sum(k, 0, KB_METRIC_DRAM_READ)));
    assert_true(isnan(kb_counter_get(&k[0], "nope")));
}

#define STALL(r) KB_STALL_PREFIX r KB_STALL_SUFFIX

/* a memory-bound row kernel (recorded ratios, warps per issued instruction) */
static void stall_fractions_sum_to_one_sorted(void **state)
{
    (void)state;
    static const struct {
        const char *reason;
        double ratio;
    } rec[] = {
        {"long_scoreboard", 18.70},
        {"short_scoreboard", 0.42},
        {"barrier", 1.90},
        {"membar", 0.0},
        {"mio_throttle", 0.35},
        {"lg_throttle", 2.10},
        {"math_pipe_throttle", 0.08},
        {"tex_throttle", 0.0},
        {"wait", 0.61},
        {"not_selected", 0.29},
        {"selected", 1.00},
        {"dispatch_stall", 0.02},
        {"drain", 0.05},
        {"imc_miss", 0.01},
        {"branch_resolving", 0.12},
        {"no_instruction", 0.19},
        {"sleeping", 0.0},
        {"misc", 0.03},
        {"gmma", 0.0},
    };
    kb_counter_values v;
    memset(&v, 0, sizeof v);
    put(&v, KB_METRIC_DURATION, 412345.0);
    put(&v, KB_METRIC_OCCUPANCY, 87.5);
    for (size_t i = 0; i < sizeof rec / sizeof *rec; i++) {
        char name[KB_METRIC_NAME_MAX];
        snprintf(name, sizeof name, "%s%s%s", KB_STALL_PREFIX, rec[i].reason,
                 KB_STALL_SUFFIX);
        put(&v, name, rec[i].ratio);
    }
    /* no suffix: not a reason */
    put(&v, "smsp__average_warps_issue_stalled_bogus", 99.0);
    char names[KB_MAX_METRICS][KB_STALL_NAME_MAX];
    double f[KB_MAX_METRICS];
    int n = 0;
    double total = kb_stall_fractions(&v, names, f, KB_MAX_METRICS, &n);
    assert_near(total, 25.87, 1e-9);
    assert_int_equal(n, 19);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += f[i];
        if (i)
            assert_true(f[i - 1] >= f[i]);
    }
    assert_near(sum, 1.0, 1e-12);
    static const char *const order[] = {
        "long_scoreboard",  "lg_throttle", "barrier", "selected", "wait",
        "short_scoreboard", "mio_throttle"};
    for (int i = 0; i < 7; i++)
        assert_string_equal(names[i], order[i]);
    assert_near(f[0], 18.70 / 25.87, 1e-12);
    assert_near(f[1], 2.10 / 25.87, 1e-12);
    /* the zero reasons come last, by name */
    assert_string_equal(names[15], "gmma");
    assert_string_equal(names[16], "membar");
    assert_string_equal(names[17], "sleeping");
    assert_string_equal(names[18], "tex_throttle");

    /* capacity is respected; NaN and negative ratios are left out */
    assert_near(kb_stall_fractions(&v, names, f, 3, &n), 18.70 + 0.42 + 1.90, 1e-9);
    assert_int_equal(n, 3);
    kb_counter_values w;
    memset(&w, 0, sizeof w);
    put(&w, STALL("long_scoreboard"), 3.0);
    put(&w, STALL("wait"), NAN);
    put(&w, STALL("barrier"), -1.0);
    put(&w, STALL("selected"), 1.0);
    assert_near(kb_stall_fractions(&w, names, f, KB_MAX_METRICS, &n), 4.0, 0);
    assert_int_equal(n, 2);
    assert_near(f[0], 0.75, 0);
    assert_string_equal(names[1], "selected");
    /* no stall metrics (set core), or all zero */
    memset(&w, 0, sizeof w);
    put(&w, KB_METRIC_DRAM_READ, 1e9);
    kb_stall_fractions(&w, names, f, KB_MAX_METRICS, &n);
    assert_int_equal(n, 0);
    put(&w, STALL("wait"), 0.0);
    assert_near(kb_stall_fractions(&w, names, f, KB_MAX_METRICS, &n), 0.0, 0);
    assert_int_equal(n, 0);
}

/* hand-computed with the occupancy calculator's rules for sm_90: registers per
 * warp = ceil(regs*32 / 256)*256, from 4 sub-partitions of 16384; shared memory
 * per block = ceil((smem + 1024) / 128)*128 out of 233472; 64 warps, 32 blocks */
static void occupancy_limiter_sm90(void **state)
{
    (void)state;
    const kb_sm_limits L = kb_sm_limits_sm90();
    static const struct {
        int regs, threads, smem, blocks;
        kb_occ_limit limit;
    } cases[] = {
        /* 255 regs -> 8192 per warp -> 2 warps per sub-partition -> 8 warps: 1 block */
        {255, 256, 0, 1, KB_LIMIT_REGISTERS},
        /* 48 KB + 1 KB reserved = 50176 B -> 233472 / 50176 = 4 blocks (regs allow 8) */
        {32, 256, 48 * 1024, 4, KB_LIMIT_SHARED},
        /* 32 warps per block: 64 / 32 = 2 (registers also allow 2: warps is reported) */
        {32, 1024, 0, 2, KB_LIMIT_WARPS},
        {16, 1024, 0, 2, KB_LIMIT_WARPS},
        /* one-warp blocks: 64 warps would fit, 32 blocks is the cap */
        {32, 32, 0, 32, KB_LIMIT_BLOCKS},
        {24, 33, 100, 32, KB_LIMIT_BLOCKS},
        /* 64 regs -> 2048 per warp -> 8 per sub-partition -> 32 warps / 8 = 4 blocks */
        {64, 256, 0, 4, KB_LIMIT_REGISTERS},
        /* 40 regs -> 1280 per warp -> 12 per sub-partition -> 48 warps / 4 = 12 */
        {40, 128, 0, 12, KB_LIMIT_REGISTERS},
        /* 72 regs -> 2304 per warp -> 7 per sub-partition -> 28 warps / 3 = 9 */
        {72, 96, 0, 9, KB_LIMIT_REGISTERS},
        /* 100000 B + 1024 = 101024 B -> 2 blocks */
        {32, 128, 100000, 2, KB_LIMIT_SHARED},
        /* cannot run: 9 warps x 8192 registers > 65536; too much shared memory;
         * more than 255 registers; more than 1024 threads */
        {255, 288, 0, 0, KB_LIMIT_REGISTERS},
        {32, 256, 240000, 0, KB_LIMIT_SHARED},
        {256, 32, 0, 0, KB_LIMIT_REGISTERS},
        {32, 1025, 0, 0, KB_LIMIT_WARPS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kb_occ_limit lim = (kb_occ_limit)-1;
        int b =
            kb_occupancy_blocks(&L, cases[i].regs, cases[i].threads, cases[i].smem, &lim);
        if (b != cases[i].blocks || lim != cases[i].limit)
            fail_msg("regs %d, threads %d, smem %d: got %d blocks (%s), want %d (%s)",
                     cases[i].regs, cases[i].threads, cases[i].smem, b,
                     kb_occ_limit_name(lim), cases[i].blocks,
                     kb_occ_limit_name(cases[i].limit));
    }
    /* the limits are parameters: a smaller register file changes the answer */
    kb_sm_limits small = L;
    small.regs_per_sm = 32768;
    kb_occ_limit lim;
    assert_int_equal(kb_occupancy_blocks(&small, 32, 256, 0, &lim), 4);
    assert_int_equal(lim, KB_LIMIT_REGISTERS);
    assert_int_equal(kb_occupancy_blocks(&L, 32, 256, 0, NULL), 8);
    assert_string_equal(kb_occ_limit_name(KB_LIMIT_REGISTERS), "registers");
    assert_string_equal(kb_occ_limit_name(KB_LIMIT_SHARED), "shared memory");
    assert_string_equal(kb_occ_limit_name(KB_LIMIT_WARPS), "warps");
    assert_string_equal(kb_occ_limit_name(KB_LIMIT_BLOCKS), "blocks");
    assert_string_equal(kb_occ_limit_name((kb_occ_limit)9), "?");
}

static const char *const tool_vars[] = {"NSYS_PROFILING_SESSION_ID",
                                        "CUDA_INJECTION64_PATH",
                                        "NV_COMPUTE_PROFILER_PERFWORKS_DIR"};

static void clear_tool_vars(void)
{
    for (size_t i = 0; i < sizeof tool_vars / sizeof *tool_vars; i++)
        unsetenv(tool_vars[i]);
}

static void profiler_in_environment_turns_counters_off(void **state)
{
    (void)state;
    char why[512];
    clear_tool_vars();
    if (kb_counters_foreign_profiler(why, sizeof why)) {
        printf("skipping: this test itself runs under a CUDA tool: %s\n", why);
        skip();
    }
    for (size_t i = 0; i < sizeof tool_vars / sizeof *tool_vars; i++) {
        clear_tool_vars();
        setenv(tool_vars[i], "1", 1);
        assert_int_equal(kb_counters_foreign_profiler(why, sizeof why), 1);
        assert_non_null(strstr(why, tool_vars[i]));
        assert_non_null(strstr(why, "outside the profiler"));
        /* open gives no handle and the reason, touching no GPU */
        kb_counters *c = (kb_counters *)1;
        kb_err e = {{0}};
        char why2[512] = "x";
        assert_int_equal(kb_counters_open(KB_METRICS_CORE, &c, why2, sizeof why2, &e),
                         KB_OK);
        assert_null(c);
        assert_string_equal(why2, why);
    }
    clear_tool_vars();
    assert_int_equal(kb_counters_foreign_profiler(why, sizeof why), 0);
}

static void metrics_none_opens_nothing(void **state)
{
    (void)state;
    kb_counters *c = (kb_counters *)1;
    kb_err e = {{0}};
    char why[256] = "x";
    assert_int_equal(kb_counters_open(KB_METRICS_NONE, &c, why, sizeof why, &e), KB_OK);
    assert_null(c);
    assert_string_equal(why, "");
    assert_int_equal(kb_counters_pass_count(NULL), 0);
    kb_counters_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_set_validates_on_gh100),
        cmocka_unit_test(unknown_chip_is_an_error),
        cmocka_unit_test(set_names_parse),
        cmocka_unit_test(sets_nest_and_fit),
        cmocka_unit_test(excess_traffic_from_kernels),
        cmocka_unit_test(stall_fractions_sum_to_one_sorted),
        cmocka_unit_test(occupancy_limiter_sm90),
        cmocka_unit_test(profiler_in_environment_turns_counters_off),
        cmocka_unit_test(metrics_none_opens_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

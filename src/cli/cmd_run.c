/* cmd_run.c - `kbench run OP|all`: parses the options into a plan of cases
 * (profiler/plan.h), then for each case lets the profiler decide and measure
 * it (profiler/policy.h: skipped, or checked and timed in a child process),
 * stores each result as it completes and prints the comparison. The parent
 * never touches CUDA itself. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kernels/op.h"
#include "profiler/bench.h"
#include "profiler/child.h"
#include "profiler/counters.h"
#include "profiler/isolate.h"
#include "profiler/nvml.h"
#include "profiler/plan.h"
#include "profiler/policy.h"
#include "report/writers.h"
#include "run_user.h"
#include "results/result.h"
#include "store/json.h"
#include "store/store.h"
#include "util/file.h"

/* The largest seed: a JSON number holds integers up to 2^53 exactly. */
#define MAX_SEED ((1ull << 53) - 1)
/* --min-samples and --max-samples at most. */
#define MAX_SAMPLES 1000000
/* --timeout at most, seconds: a day. */
#define MAX_TIMEOUT_S 86400.0
/* --warmup at most, seconds: an hour. */
#define MAX_WARMUP_S 3600.0

typedef struct run_opts {
    const char *op;                         /* OP or "all" */
    const char *variants;                   /* NULL or "all": every variant */
    const char *shapes[KB_PLAN_MAX_SHAPES]; /* the --shape texts */
    int nshapes;
    kb_dtype dtypes[KB_DTYPE_COUNT]; /* --dtype's list */
    int ndtypes;                     /* 0: each operator's own default_dtype */
    kb_bench_opts bench;
    const char *db, *json, *tag;
    kb_timing timing; /* the table's headline time */
    int recalibrate;  /* measure the ceilings first, stale or not */
    int device;
    uint64_t seed;
    int seed_given;
    int watch; /* --watch: rerun the variant files' cases on every save */
    int wide;  /* --wide: every column of the table */
} run_opts;

static const char usage_text[] =
    "usage: kbench run OP|all [options]\n\n"
    "Checks every chosen variant against the fp64 reference, times it, stores the\n"
    "results and prints a comparison. Each case runs in its own child process.\n\n"
    "options:\n"
    "  --variants all|A,B     variants to run (default all); an entry ending in .cu is\n"
    "                         a variant file of your own (kbench/variant.h,\n"
    "                         'kbench new'), compiled with nvcc and run like the rest\n"
    "  --watch                after the run, rerun the .cu files' cases on every save,\n"
    "                         with each result's verdict against the file's last run\n"
    "  --shape AXIS=N,...     shape (repeatable, up to 32); axes not named keep their\n"
    "                         defaults; dtype=NAME in it runs it in that dtype only\n"
    "  --dtype fp32|fp16|bf16 element type; a comma list runs several (default: the\n"
    "                         operator's own, shown by 'kbench list')\n"
    "  --min-samples N        timed samples at least (default 10)\n"
    "  --max-samples N        timed samples at most (default 2000)\n"
    "  --max-noise PCT        stop sampling once stdev/mean < PCT % (default 0.5)\n"
    "  --max-error PCT        ... or once the mean's standard error, stdev/sqrt(n)/mean,\n"
    "                         is < PCT % (default 0.2; 0: only --max-noise)\n"
    "  --timeout S            stop sampling after S seconds per case (default 5)\n"
    "  --warmup S             warm up for at least S seconds before the samples\n"
    "                         (default 0.05 s or 200 launches, whichever ends first)\n"
    "  --metrics SET          hardware counters per kernel, in a pass of their own:\n"
    "                         none, core (1 replay pass, default), sol, stalls, full\n"
    "  --timing cold|batch    the table's headline time: the median of cold samples\n"
    "                         (L2 flushed before each; default) or of batches of\n"
    "                         back-to-back launches (both are measured and stored)\n"
    "  --exclusive            refuse (exit 3) to measure while another process\n"
    "                         uses the GPU (otherwise such results are flagged)\n"
    "  --recalibrate          measure the GPU's ceilings first (otherwise only when\n"
    "                         missing, older than 30 days or from another driver)\n"
    "  --no-check             skip the reference check (recorded in the result)\n"
    "  --seed N               input seed (default: fresh from /dev/urandom)\n"
    "  --device N             GPU ordinal (default 0)\n"
    "  --tag TEXT             label stored with the run\n"
    "  --json PATH            also write the run's JSON report to PATH\n"
    "  --db PATH              store (default $KBENCH_DB or " KB_DEFAULT_DB ")\n"
    "  --wide                 print every column of the table (default: what fits\n"
    "                         100 columns, or the terminal's width)\n"
    "  -h, --help             this help\n\n"
    "exit: 0 all ok or skipped, 1 a variant mismatched or failed, 2 usage, 3 environment\n";

/* ---- options ------------------------------------------------------------------ */

static uint64_t fresh_seed(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&s, sizeof s, 1, f) != 1) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec;
    }
    if (f)
        fclose(f);
    return s & MAX_SEED;
}

static kb_status parse_dtypes(const char *arg, run_opts *o, kb_err *e)
{
    char buf[64];
    if (kb_strlcpy(buf, arg, sizeof buf))
        return kb_fail(e, KB_EUSAGE, "unsupported dtype '%s' (fp32, fp16, bf16)", arg);
    o->ndtypes = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        kb_dtype d;
        if (kb_dtype_parse(t, &d) != 0)
            return kb_fail(e, KB_EUSAGE, "unsupported dtype '%s' (fp32, fp16, bf16)", t);
        for (int i = 0; i < o->ndtypes; i++)
            if (o->dtypes[i] == d)
                return kb_fail(e, KB_EUSAGE, "dtype '%s' given twice", t);
        o->dtypes[o->ndtypes++] = d;
    }
    if (!o->ndtypes)
        return kb_fail(e, KB_EUSAGE, "unsupported dtype '%s' (fp32, fp16, bf16)", arg);
    return KB_OK;
}

/* The options that take a number, by getopt code. */
static kb_status parse_number(int c, const char *arg, run_opts *o, kb_err *e)
{
    int64_t iv = 0;
    double dv = 0;
    kb_status st = KB_OK;
    switch (c) {
    case 'm':
        st = kb_parse_i64(arg, 1, MAX_SAMPLES, "--min-samples", &iv, e);
        o->bench.min_samples = (int)iv;
        break;
    case 'M':
        st = kb_parse_i64(arg, 1, MAX_SAMPLES, "--max-samples", &iv, e);
        o->bench.max_samples = (int)iv;
        break;
    case 'n':
        st = kb_parse_double(arg, 0.0, 100.0, "--max-noise", &dv, e);
        o->bench.max_noise = dv / 100.0;
        break;
    case 'E':
        st = kb_parse_double(arg, 0.0, 100.0, "--max-error", &dv, e);
        o->bench.max_error = dv / 100.0;
        break;
    case 't':
        st = kb_parse_double(arg, 0.001, MAX_TIMEOUT_S, "--timeout", &dv, e);
        o->bench.time_limit_s = dv;
        break;
    case 'u':
        st = kb_parse_double(arg, 0.001, MAX_WARMUP_S, "--warmup", &dv, e);
        o->bench.warmup_s = dv;
        break;
    case 'S':
        st = kb_parse_i64(arg, 0, (int64_t)MAX_SEED, "--seed", &iv, e);
        o->seed = (uint64_t)iv;
        o->seed_given = 1;
        break;
    default: /* 'D' */
        st = kb_parse_i64(arg, 0, KB_MAX_DEVICE, "--device", &iv, e);
        o->device = (int)iv;
        break;
    }
    return st;
}

/* The field an option that switches something on sets to 1, by getopt code;
 * NULL for other options. */
static int *switch_of(int c, run_opts *o)
{
    switch (c) {
    case 'C': return &o->bench.no_check;
    case 'W': return &o->watch;
    case 'X': return &o->bench.exclusive;
    case 'R': return &o->recalibrate;
    case 'w': return &o->wide;
    default: return NULL;
    }
}

/* The field an option whose value is kept as given is stored in, by getopt
 * code; NULL for other options. */
static const char **text_of(int c, run_opts *o)
{
    switch (c) {
    case 'v': return &o->variants;
    case 'T': return &o->tag;
    case 'j': return &o->json;
    case 'b': return &o->db;
    default: return NULL;
    }
}

/* One option (code c, its value arg), checked by kind already. */
static kb_status parse_option(int c, const char *arg, run_opts *o, kb_err *e)
{
    int *on = switch_of(c, o);
    const char **text = text_of(c, o);
    if (on) {
        *on = 1;
        return KB_OK;
    }
    if (text) {
        *text = arg;
        return KB_OK;
    }
    switch (c) {
    case 's':
        if (o->nshapes == KB_PLAN_MAX_SHAPES)
            return kb_fail(e, KB_EUSAGE, "at most %d --shape options", KB_PLAN_MAX_SHAPES);
        o->shapes[o->nshapes++] = arg;
        return KB_OK;
    case 'd':
        return parse_dtypes(arg, o, e);
    case 'm': case 'M': case 'n': case 'E': case 't': case 'u': case 'S': case 'D':
        return parse_number(c, arg, o, e);
    case 'I':
        if (kb_timing_parse(arg, &o->timing) != 0)
            return kb_fail(e, KB_EUSAGE, "unknown timing '%s' (cold, batch)", arg);
        return KB_OK;
    default: /* 'x' */
        if (kb_metric_set_parse(arg, &o->bench.metrics) != 0)
            return kb_fail(e, KB_EUSAGE,
                           "unknown metric set '%s' (none, core, sol, stalls, full)", arg);
        return KB_OK;
    }
}

/* parse_option as a kb_cli_opt_fn: prints its error and returns the exit code. */
static int take_option(void *ctx, int c, const char *arg)
{
    kb_err e = {{0}};
    kb_status st = parse_option(c, arg, ctx, &e);
    return st == KB_OK ? -1 : kb_cli_fail(st, &e);
}

/* The options of run, one row each (kinds: cli.h). */
static const kb_cli_opt run_options[] = {
    {"variants", 'v', KB_ARG_LIST},     {"shape", 's', KB_ARG_LIST},
    {"dtype", 'd', KB_ARG_LIST},        {"min-samples", 'm', KB_ARG_VALUE},
    {"max-samples", 'M', KB_ARG_VALUE}, {"max-noise", 'n', KB_ARG_VALUE},
    {"max-error", 'E', KB_ARG_VALUE},
    {"timeout", 't', KB_ARG_VALUE},     {"warmup", 'u', KB_ARG_VALUE},
    {"no-check", 'C', KB_ARG_NONE},
    {"seed", 'S', KB_ARG_VALUE},        {"device", 'D', KB_ARG_VALUE},
    {"tag", 'T', KB_ARG_TEXT},          {"json", 'j', KB_ARG_PATH},
    {"db", 'b', KB_ARG_PATH},           {"metrics", 'x', KB_ARG_VALUE},
    {"watch", 'W', KB_ARG_NONE},        {"timing", 'I', KB_ARG_VALUE},
    {"exclusive", 'X', KB_ARG_NONE},    {"recalibrate", 'R', KB_ARG_NONE},
    {"wide", 'w', KB_ARG_NONE},         {"help", 'h', KB_ARG_NONE},
};

/* Parses run's command line into o. Returns -1 when it is complete, else the
 * exit code (the usage or an error printed). */
static int parse_args(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bench = (kb_bench_opts){.min_samples = 10, .max_samples = 2000, .max_noise = 0.005,
                               .max_error = 0.002, .time_limit_s = 5.0,
                               .metrics = KB_METRICS_CORE};
    int rc = kb_cli_options(argc, argv, "run", usage_text, ":h", run_options,
                            KB_COUNT(run_options), take_option, o);
    if (rc >= 0)
        return rc;
    if (o->bench.max_samples < o->bench.min_samples)
        return kb_cli_error(KB_EUSAGE, "--max-samples %d is below --min-samples %d",
                            o->bench.max_samples, o->bench.min_samples);
    if (optind >= argc)
        return kb_cli_error(KB_EUSAGE, "run needs an operator (see 'kbench list') or 'all'");
    if (optind + 1 < argc)
        return kb_cli_error(KB_EUSAGE, "unexpected argument '%s' (options go before or after "
                                       "OP; one OP per run)",
                            argv[optind + 1]);
    o->op = argv[optind];
    return -1;
}

/* ---- the run -------------------------------------------------------------------- */

static void iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void progress(int i, int n, const kb_result *r)
{
    if (!isatty(STDERR_FILENO))
        return;
    char shape[128];
    kb_result_shape_str(r, ",", shape, sizeof shape);
    fprintf(stderr, "[%d/%d] %s %s %s %s: %s", i, n, r->op, r->variant, r->dtype, shape,
            kb_rstatus_name(r->status));
    if (isfinite(r->median_us))
        fprintf(stderr, " %.1f us", r->median_us);
    fprintf(stderr, "\n");
}

/* The driver's management library for the run's GPU, or NULL (saying once
 * that the checks it makes are unavailable). With --exclusive that is an
 * error: the GPU cannot be known idle. */
static kb_status open_gpu_checks(const run_opts *o, const kb_device *dev, kb_nvml **gpu,
                                 kb_err *e)
{
    char why[256] = "";
    *gpu = kb_nvml_open(dev->uuid, why, sizeof why);
    if (*gpu)
        return KB_OK;
    if (o->bench.exclusive)
        return kb_fail(e, KB_EENV, "--exclusive cannot check GPU %d for other processes: %s",
                       o->device, why);
    kb_cli_warn("other processes and throttling on the GPU are not checked (%s); results "
                "are flagged gpu_unchecked", why);
    return KB_OK;
}

/* The device of the run, the driver's management library for it (*gpu,
 * open_gpu_checks), and its ceilings: those stored, or measured now (and
 * stored) when asked, or when they are missing or stale (saying why). With
 * --exclusive, nothing runs on a GPU another process uses. The device is
 * queried unless it already was (queried). */
static kb_status device_and_ceilings(const run_opts *o, const kb_plan *plan, kb_store *store,
                                     int queried, kb_device *dev, kb_nvml **gpu, kb_err *e)
{
    kb_status st = KB_OK;
    int measured = 0;
    char why[256] = "";
    if (!queried)
        KB_TRY(kb_child_device(o->device, dev, e));
    KB_TRY(kb_plan_fits(plan, dev, e));
    KB_TRY(open_gpu_checks(o, dev, gpu, e));
    if (o->bench.exclusive)
        KB_TRY(kb_gpu_exclusive(*gpu, o->device, e));
    KB_TRY(kb_store_get_ceilings(store, dev, e));
    KB_TRY(kb_ceilings_ensure(o->device, dev,
                              o->recalibrate ? KB_CALIBRATE_ALWAYS : KB_CALIBRATE_IF_STALE,
                              &measured, why, sizeof why, e));
    if (measured) {
        fprintf(stderr, "kbench: calibrated %s first (%s)\n", dev->name,
                o->recalibrate ? "--recalibrate" : why);
        KB_TRY(kb_store_set_ceilings(store, dev, e));
    }
done:
    return st;
}

/* Records the start of the run in the store. */
static kb_status begin_run(int argc, char **argv, const run_opts *o, kb_store *store,
                           kb_run *run, kb_err *e)
{
    kb_strlcpy(run->version, KB_VERSION, sizeof run->version);
    kb_strlcpy(run->git, KB_GIT, sizeof run->git);
    kb_cli_join_argv(argc + 1, argv - 1, run->argv, sizeof run->argv);
    kb_cli_join_env(environ, run->env, sizeof run->env);
    iso_now(run->started, sizeof run->started);
    kb_strlcpy(run->state, "running", sizeof run->state);
    if (o->tag)
        kb_strlcpy(run->tag, o->tag, sizeof run->tag);
    return kb_store_begin_run(store, run, e);
}

/* Runs every case of the plan, storing and keeping each result; *failures
 * counts the mismatched and failed ones. Stops at the first store error or an
 * interrupt. */
static kb_status run_cases(const run_opts *o, const kb_plan *plan, kb_store *store,
                           kb_nvml *gpu, kb_run *run, int *failures, kb_err *e)
{
    kb_status st = KB_OK;
    kb_plan_iter it = {0, 0, 0, 0};
    kb_plan_case c;
    char warned[256] = "";
    int done = 0, shared_warned = 0, unchecked_warned = 0;
    const int total = kb_plan_count(plan);
    while (st == KB_OK && kb_plan_next(plan, &it, &c)) {
        if (kb_isolate_interrupted())
            return kb_fail(e, KB_EENV, "interrupted");
        kb_result r;
        kb_bench_name_case(&r, c.op, c.v, c.dtype, c.shape, o->seed);
        if ((st = kb_case_run(c.op, c.v, &run->dev, &o->bench, gpu, &r, e)) != KB_OK) {
            kb_result_release(&r);
            break;
        }
        if ((r.flags & KB_FLAG_GPU_SHARED) && !shared_warned++)
            kb_cli_warn("another process used the GPU during %s %s: its results are flagged "
                        "gpu_shared (--exclusive refuses instead)", r.op, r.variant);
        if (gpu && (r.flags & KB_FLAG_GPU_UNCHECKED) && !unchecked_warned++)
            kb_cli_warn("the driver did not list the GPU's processes during %s %s: its results "
                        "are flagged gpu_unchecked", r.op, r.variant);
        if (r.counters_reason[0] && strcmp(r.counters_reason, warned) != 0) {
            kb_cli_warn("no counters: %s", r.counters_reason);
            kb_strlcpy(warned, r.counters_reason, sizeof warned);
        }
        *failures += r.status == KB_R_MISMATCH || r.status == KB_R_FAILED;
        progress(++done, total, &r);
        if ((st = kb_store_add_result(store, run->id, &r, e)) == KB_OK && kb_run_add(run, &r) != 0)
            st = kb_fail(e, KB_EENV, "out of memory");
        kb_result_release(&r);
    }
    return st;
}

/* Marks the run complete or interrupted, prints its table and writes its JSON
 * report; keeps the first error. */
static kb_status finish_run(const run_opts *o, kb_store *store, kb_run *run, kb_status st,
                            kb_err *e)
{
    kb_err fe = {{0}};
    iso_now(run->finished, sizeof run->finished);
    kb_strlcpy(run->state, st == KB_OK ? "complete" : "interrupted", sizeof run->state);
    if (kb_store_finish_run(store, run->id, run->state, run->finished, &fe) != KB_OK &&
        st == KB_OK) {
        st = KB_EENV;
        *e = fe;
    }
    const kb_text_layout layout = kb_cli_text_layout("-", o->wide);
    if (run->nresults && kb_write_text_laid_out(stdout, run, &layout, &fe) != KB_OK &&
        st == KB_OK) {
        st = KB_EENV;
        *e = fe;
    }
    if (o->json && st == KB_OK)
        st = kb_json_save_run(run, o->json, e);
    return st;
}

/* Variant files are built for the run's GPU before anything is stored: the
 * device is asked first. Without a GPU they are built for
 * KB_USER_DEFAULT_ARCH and loaded all the same, and then the missing GPU is
 * the run's error. *queried = 1 when dev holds the device. */
static kb_status build_files(const run_opts *o, kb_plan *plan, kb_user_file *files,
                             kb_device *dev, int *queried, kb_err *e)
{
    kb_err de = {{0}};
    *queried = 0;
    if (!plan->nuser)
        return KB_OK;
    const kb_status ds = kb_child_device(o->device, dev, &de);
    if (ds == KB_EUSAGE) {
        *e = de;
        return ds;
    }
    kb_status st = kb_run_build_files(plan, ds == KB_OK ? dev : NULL, files, e);
    if (st == KB_OK && ds != KB_OK) {
        *e = de;
        st = ds;
    }
    *queried = st == KB_OK;
    return st;
}

/* --watch: after the run, each save of a variant file reruns that file's
 * cases as a run of its own (stored, its table printed) and prints each
 * result's verdict against the file's previous results; until interrupted.
 * first's results of the files are moved out of it. */
static kb_status watch(int argc, char **argv, const run_opts *o, kb_plan *plan, kb_store *store,
                       kb_nvml *gpu, kb_run *first, kb_user_file *files, kb_err *e)
{
    kb_status st = KB_OK;
    kb_run last[KB_USER_MAX];
    run_opts wo = *o;
    wo.json = NULL; /* the report of the first run stays as it is */
    for (int i = 0; i < plan->nuser; i++) {
        kb_run_init(&last[i]);
        last[i].dev = first->dev;
        for (size_t k = 0; k < first->nresults && st == KB_OK; k++)
            if (!strcmp(first->results[k].variant, plan->user[i]->name) &&
                kb_run_add(&last[i], &first->results[k]) != 0)
                st = kb_fail(e, KB_EENV, "out of memory");
    }
    int i;
    while (st == KB_OK && (i = kb_run_watch_wait(plan, &first->dev, files)) >= 0) {
        kb_run cur;
        int failures = 0;
        kb_run_init(&cur);
        cur.dev = first->dev;
        cur.timing = first->timing;
        plan->user_only = 1u << i;
        st = begin_run(argc, argv, &wo, store, &cur, e);
        if (st == KB_OK)
            st = run_cases(&wo, plan, store, gpu, &cur, &failures, e);
        st = finish_run(&wo, store, &cur, st, e);
        if (st == KB_OK) {
            kb_run_watch_verdicts(stdout, &last[i], &cur);
            fflush(stdout);
            kb_run_release(&last[i]);
            last[i] = cur;
        } else {
            kb_run_release(&cur);
        }
    }
    for (int k = 0; k < plan->nuser; k++)
        kb_run_release(&last[k]);
    return st;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    kb_plan plan;
    kb_err e = {{0}};
    kb_store *store = NULL;
    kb_nvml *gpu = NULL;
    kb_run run;
    kb_status st;
    int failures = 0, queried = 0;
    char why[256];
    static kb_user_file files[KB_USER_MAX];
    kb_run_init(&run);
    memset(&plan, 0, sizeof plan);
    const int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if ((st = kb_plan_init(&plan, o.op, o.variants, o.shapes, o.nshapes, o.dtypes, o.ndtypes,
                           &e)) != KB_OK)
        return kb_cli_fail(st, &e);
    /* a report that cannot be written is known before any GPU work */
    if (o.json && (st = kb_check_writable(o.json, "--json", &e)) != KB_OK)
        goto done;
    if (!o.seed_given)
        o.seed = fresh_seed();
    run.timing = o.timing;
    kb_isolate_catch_signals();
    if (o.watch && !plan.nuser) {
        st = kb_fail(&e, KB_EUSAGE, "--watch needs a variant file in --variants (a .cu path)");
        goto done;
    }
    KB_TRY(build_files(&o, &plan, files, &run.dev, &queried, &e));
    /* The GPU first: without one (or when the cases do not fit it) nothing is
     * created, the store included. */
    if (!queried)
        KB_TRY(kb_child_device(o.device, &run.dev, &e));
    queried = 1;
    KB_TRY(kb_plan_fits(&plan, &run.dev, &e));
    KB_TRY(kb_store_open(kb_cli_db_path(o.db), 1, &store, &e));
    KB_TRY(device_and_ceilings(&o, &plan, store, queried, &run.dev, &gpu, &e));
    KB_TRY(begin_run(argc, argv, &o, store, &run, &e));
    if (o.bench.metrics != KB_METRICS_NONE && kb_counters_foreign_profiler(why, sizeof why)) {
        kb_cli_warn("%s; running with --metrics none", why);
        o.bench.metrics = KB_METRICS_NONE;
    }
    st = run_cases(&o, &plan, store, gpu, &run, &failures, &e);
    st = finish_run(&o, store, &run, st, &e);
    if (st == KB_OK && o.watch)
        st = watch(argc, argv, &o, &plan, store, gpu, &run, files, &e);
done:
    kb_nvml_close(gpu);
    kb_plan_release(&plan);
    kb_store_close(store);
    kb_run_release(&run);
    if (st != KB_OK)
        return kb_cli_finish_stdout(kb_cli_fail(st, &e));
    return kb_cli_finish_stdout(failures ? KB_ECHECK : KB_OK);
}

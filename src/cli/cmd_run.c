/* cmd_run.c - `kbench run OP|all`: for every (shape, dtype, variant) case, a
 * child process checks and times the variant (profiler/bench.c); the parent,
 * which never touches CUDA itself, stores each result as it completes and prints
 * the comparison. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "kernels/op.h"
#include "kernels/shape.h"
#include "profiler/bench.h"
#include "profiler/calibrate_mma.h"
#include "profiler/device.h"
#include "profiler/isolate.h"
#include "store/json.h"
#include "results/result.h"
#include "store/store.h"
#include "report/writers.h"

#ifndef KB_VERSION
#define KB_VERSION "0.0.0"
#endif
#ifndef KB_GIT
#define KB_GIT "unknown"
#endif

#define MAX_SHAPES 16
#define MAX_OPS 8
/* Seconds a child may take beyond the sampling time limit before it counts as hung. */
#define HANG_MARGIN_S 120.0

typedef struct run_opts {
    const kb_op *ops[MAX_OPS];
    int nops;
    const char *variants; /* NULL or "all": every variant */
    const char *shapes[MAX_SHAPES]; /* the --shape texts */
    int nshapes;
    /* shape[i][k]: --shape k parsed for ops[i] (k = 0: the defaults when none) */
    int64_t shape[MAX_OPS][MAX_SHAPES][KB_MAX_AXES];
    kb_dtype dtypes[KB_DTYPE_COUNT]; /* --dtype's list */
    int ndtypes;                     /* 0: each operator's own default_dtype */
    kb_bench_opts bench;
    const char *db, *json, *tag;
    int device;
    uint64_t seed;
} run_opts;

static const char usage_text[] =
    "usage: kbench run OP|all [options]\n\n"
    "Checks every chosen variant against the fp64 reference, times it, stores the\n"
    "results and prints a comparison. Each case runs in its own child process.\n\n"
    "options:\n"
    "  --variants all|A,B     variants to run (default all)\n"
    "  --shape AXIS=N,...     shape (repeatable); axes not named keep their defaults\n"
    "  --dtype fp32|fp16|bf16 element type; a comma list runs several (default: the\n"
    "                         operator's own, shown by 'kbench list')\n"
    "  --min-samples N        timed samples at least (default 10)\n"
    "  --max-samples N        timed samples at most (default 2000)\n"
    "  --max-noise PCT        stop sampling once stdev/mean < PCT %% (default 0.5)\n"
    "  --timeout S            stop sampling after S seconds per case (default 5)\n"
    "  --metrics SET          hardware counters per kernel, in a pass of their own:\n"
    "                         none, core (1 replay pass, default), sol, stalls, full\n"
    "  --no-check             skip the reference check (recorded in the result)\n"
    "  --seed N               input seed (default: fresh from /dev/urandom)\n"
    "  --device N             GPU ordinal (default 0)\n"
    "  --tag TEXT             label stored with the run\n"
    "  --json PATH            also write the run's JSON report to PATH\n"
    "  --db PATH              store (default $KBENCH_DB or " KB_DEFAULT_DB ")\n\n"
    "exit: 0 all ok or skipped, 1 a variant mismatched or failed, 2 usage, 3 environment\n";

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
    return s & ((1ull << 53) - 1); /* exact in a JSON number */
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

/* 1 when variant v of op is selected by o->variants. */
static int selected(const run_opts *o, const kb_variant *v)
{
    if (!o->variants || !strcmp(o->variants, "all"))
        return 1;
    size_t n = strlen(v->name);
    for (const char *p = o->variants; *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, v->name, n))
            return 1;
        p += len + (c ? 1 : 0);
    }
    return 0;
}

static kb_status validate_variants(const run_opts *o, kb_err *e)
{
    if (!o->variants || !strcmp(o->variants, "all"))
        return KB_OK;
    char buf[512];
    if (kb_strlcpy(buf, o->variants, sizeof buf))
        return kb_fail(e, KB_EUSAGE, "--variants is too long");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < o->nops && !found; i++)
            found = kb_variant_find(o->ops[i], t) != NULL;
        if (!found) {
            const char *s = kb_variant_suggest(o->ops[0], t);
            if (s)
                return kb_fail(e, KB_EUSAGE, "unknown variant '%s' for %s (did you mean '%s'?)",
                               t, o->nops == 1 ? o->ops[0]->name : "any operator", s);
            return kb_fail(e, KB_EUSAGE, "unknown variant '%s' for %s (see 'kbench list %s')",
                           t, o->nops == 1 ? o->ops[0]->name : "any operator",
                           o->nops == 1 ? o->ops[0]->name : "");
        }
    }
    return KB_OK;
}

static kb_status parse_args(int argc, char **argv, run_opts *o, kb_err *e)
{
    static const struct option longs[] = {
        {"variants", required_argument, NULL, 'v'}, {"shape", required_argument, NULL, 's'},
        {"dtype", required_argument, NULL, 'd'},    {"min-samples", required_argument, NULL, 'm'},
        {"max-samples", required_argument, NULL, 'M'},
        {"max-noise", required_argument, NULL, 'n'}, {"timeout", required_argument, NULL, 't'},
        {"no-check", no_argument, NULL, 'C'},       {"seed", required_argument, NULL, 'S'},
        {"device", required_argument, NULL, 'D'},   {"tag", required_argument, NULL, 'T'},
        {"json", required_argument, NULL, 'j'},     {"db", required_argument, NULL, 'b'},
        {"metrics", required_argument, NULL, 'x'},  {NULL, 0, NULL, 0}};
    int64_t iv;
    double dv;
    kb_status st;
    int seed_given = 0;
    memset(o, 0, sizeof *o);
    o->bench = (kb_bench_opts){.min_samples = 10, .max_samples = 2000, .max_noise = 0.005,
                               .time_limit_s = 5.0, .metrics = KB_METRICS_CORE};
    opterr = 0;
    optind = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        switch (c) {
        case 'v':
            o->variants = optarg;
            break;
        case 's':
            if (o->nshapes == MAX_SHAPES)
                return kb_fail(e, KB_EUSAGE, "at most %d --shape options", MAX_SHAPES);
            o->shapes[o->nshapes++] = optarg;
            break;
        case 'd':
            if ((st = parse_dtypes(optarg, o, e)) != KB_OK)
                return st;
            break;
        case 'm':
            if ((st = kb_parse_i64(optarg, 1, 1000000, "--min-samples", &iv, e)) != KB_OK)
                return st;
            o->bench.min_samples = (int)iv;
            break;
        case 'M':
            if ((st = kb_parse_i64(optarg, 1, 1000000, "--max-samples", &iv, e)) != KB_OK)
                return st;
            o->bench.max_samples = (int)iv;
            break;
        case 'n':
            if ((st = kb_parse_double(optarg, 0.0, 100.0, "--max-noise", &dv, e)) != KB_OK)
                return st;
            o->bench.max_noise = dv / 100.0;
            break;
        case 't':
            if ((st = kb_parse_double(optarg, 0.001, 86400.0, "--timeout", &dv, e)) != KB_OK)
                return st;
            o->bench.time_limit_s = dv;
            break;
        case 'C':
            o->bench.no_check = 1;
            break;
        case 'S':
            if ((st = kb_parse_i64(optarg, 0, (1ll << 53) - 1, "--seed", &iv, e)) != KB_OK)
                return st;
            o->seed = (uint64_t)iv;
            seed_given = 1;
            break;
        case 'D':
            if ((st = kb_parse_i64(optarg, 0, 63, "--device", &iv, e)) != KB_OK)
                return st;
            o->device = (int)iv;
            break;
        case 'T':
            o->tag = optarg;
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'b':
            o->db = optarg;
            break;
        case 'x':
            if (kb_metric_set_parse(optarg, &o->bench.metrics) != 0)
                return kb_fail(e, KB_EUSAGE,
                               "unknown metric set '%s' (none, core, sol, stalls, full)", optarg);
            break;
        case ':':
            return kb_fail(e, KB_EUSAGE, "option '%s' needs a value", argv[optind - 1]);
        default:
            return kb_fail(e, KB_EUSAGE, "unknown option '%s' for run", argv[optind - 1]);
        }
    }
    if (o->bench.max_samples < o->bench.min_samples)
        return kb_fail(e, KB_EUSAGE, "--max-samples %d is below --min-samples %d",
                       o->bench.max_samples, o->bench.min_samples);
    if (optind >= argc)
        return kb_fail(e, KB_EUSAGE, "run needs an operator (see 'kbench list') or 'all'");
    if (optind + 1 < argc)
        return kb_fail(e, KB_EUSAGE, "unexpected argument '%s' (options go before or after OP; "
                                     "one OP per run)", argv[optind + 1]);
    const char *opname = argv[optind];
    if (!strcmp(opname, "all")) {
        int n;
        const kb_op *const *all = kb_ops(&n);
        for (int i = 0; i < n && i < MAX_OPS; i++)
            o->ops[o->nops++] = all[i];
    } else {
        const kb_op *op = kb_op_find(opname);
        if (!op) {
            const char *s = kb_op_suggest(opname);
            if (s)
                return kb_fail(e, KB_EUSAGE, "unknown operator '%s' (did you mean '%s'?)",
                               opname, s);
            return kb_fail(e, KB_EUSAGE, "unknown operator '%s' (see 'kbench list')", opname);
        }
        o->ops[o->nops++] = op;
    }
    if ((st = validate_variants(o, e)) != KB_OK)
        return st;
    for (int i = 0; i < o->nops; i++) {
        for (int k = 0; k < o->ndtypes; k++)
            if (!(o->ops[i]->dtypes & KB_DT(o->dtypes[k])))
                return kb_fail(e, KB_EUSAGE, "unsupported dtype '%s' for %s",
                               kb_dtype_name(o->dtypes[k]), o->ops[i]->name);
        for (int k = 0; k < o->nshapes; k++)
            if ((st = kb_shape_parse(o->ops[i], o->shapes[k], o->shape[i][k], e)) != KB_OK)
                return st;
        if (!o->nshapes)
            kb_shape_default(o->ops[i], o->shape[i][0]);
    }
    o->seed = seed_given ? o->seed : fresh_seed();
    return KB_OK;
}

/* ---- children ---------------------------------------------------------- */

static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_json(int fd, cJSON *j)
{
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    int rc = s && write_all(fd, s, strlen(s)) == 0 ? 0 : 3;
    free(s);
    cJSON_Delete(j);
    return rc;
}

static int send_error(int fd, const kb_err *e)
{
    cJSON *j = cJSON_CreateObject();
    if (j)
        cJSON_AddStringToObject(j, "error", e->msg);
    send_json(fd, j);
    return 3;
}

static int child_device(void *ctx, int fd)
{
    int ordinal = *(const int *)ctx, n = 0;
    kb_err e = {{0}};
    kb_device d;
    if (kb_device_count(&n, &e) != KB_OK)
        return send_error(fd, &e);
    if (ordinal >= n) {
        kb_fail(&e, KB_EUSAGE, "--device %d does not exist (%d GPU%s visible)", ordinal, n,
                n == 1 ? "" : "s");
        return send_error(fd, &e);
    }
    if (kb_device_query(ordinal, &d, &e) != KB_OK)
        return send_error(fd, &e);
    return send_json(fd, kb_json_from_device(&d));
}

static int child_calibrate(void *ctx, int fd)
{
    int ordinal = *(const int *)ctx;
    kb_err e = {{0}};
    double gbps = NAN;
    if (cudaSetDevice(ordinal) != cudaSuccess) {
        kb_fail(&e, KB_EENV, "cudaSetDevice(%d) failed", ordinal);
        return send_error(fd, &e);
    }
    double mma = NAN, fp32 = NAN;
    if (kb_calibrate_copy(&gbps, &e) != KB_OK || kb_calibrate_mma(&mma, &fp32, &e) != KB_OK)
        return send_error(fd, &e);
    cJSON *j = cJSON_CreateObject();
    if (j) {
        cJSON_AddNumberToObject(j, "copy_gbps", gbps);
        cJSON_AddNumberToObject(j, "mma_tflops", mma);
        cJSON_AddNumberToObject(j, "fp32_tflops", fp32);
    }
    return send_json(fd, j);
}

typedef struct case_ctx {
    const kb_op *op;
    const kb_variant *v;
    const kb_device *dev;
    const kb_bench_opts *bench;
    kb_result *r;
} case_ctx;

static int child_case(void *ctx, int fd)
{
    case_ctx *c = ctx;
    kb_err e = {{0}};
    if (kb_bench_case(c->op, c->v, c->dev, c->bench, c->r, &e) != KB_OK)
        return send_error(fd, &e);
    return send_json(fd, kb_json_from_result(c->r));
}

/* Runs fn in a child and parses its JSON answer into *out (caller deletes).
 * A child that answered {"error": ...} or nothing gives its message in e. */
static kb_status ask_child(kb_child_fn fn, void *ctx, double timeout_s, cJSON **out,
                           kb_child_end *end, kb_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    kb_status st = kb_isolate(fn, ctx, timeout_s, &buf, &len, end, e);
    if (st != KB_OK)
        return st;
    cJSON *j = len ? cJSON_Parse(buf) : NULL;
    free(buf);
    if (!j) {
        char how[128];
        kb_child_end_describe(end, timeout_s, how, sizeof how);
        return kb_fail(e, KB_EENV, "child process %s without an answer", how);
    }
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(err)) {
        kb_fail(e, end->exited && end->code == KB_EUSAGE ? KB_EUSAGE : KB_EENV, "%s",
                err->valuestring);
        cJSON_Delete(j);
        return end->exited && end->code == KB_EUSAGE ? KB_EUSAGE : KB_EENV;
    }
    *out = j;
    return KB_OK;
}

/* ---- the run ----------------------------------------------------------- */

static void iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Runs one case in a child; fills r whatever happens. */
static kb_status run_case(const run_opts *o, const kb_op *op, const kb_variant *v,
                          const kb_device *dev, kb_result *r, kb_err *e)
{
    kb_dtype d;
    kb_dtype_parse(r->dtype, &d);
    char why[256];
    if (!(v->dtypes & KB_DT(d))) {
        r->status = KB_R_SKIPPED;
        snprintf(r->reason, sizeof r->reason, "%s does not support %s", v->name, r->dtype);
        return KB_OK;
    }
    if (v->unsupported && v->unsupported(r->shape, d, why, sizeof why)) {
        r->status = KB_R_SKIPPED;
        kb_strlcpy(r->reason, why, sizeof r->reason);
        return KB_OK;
    }
    double need = kb_bench_device_bytes(op, v, d, r->shape, dev->l2_bytes);
    if (need > 0.97 * (double)dev->memory_bytes) {
        r->status = KB_R_SKIPPED;
        snprintf(r->reason, sizeof r->reason,
                 "needs %.0f bytes of device memory (%.1f GiB), %s has %lld", need,
                 need / (1 << 30), dev->name, (long long)dev->memory_bytes);
        return KB_OK;
    }
    case_ctx ctx = {op, v, dev, &o->bench, r};
    kb_child_end end;
    cJSON *j = NULL;
    double limit = o->bench.time_limit_s + HANG_MARGIN_S;
    kb_status st = ask_child(child_case, &ctx, limit, &j, &end, e);
    if (st == KB_OK) {
        kb_result got;
        st = kb_json_to_result(j, &got, e);
        cJSON_Delete(j);
        if (st == KB_OK) {
            kb_result_release(r);
            *r = got;
            return KB_OK;
        }
    }
    if (end.interrupted)
        return kb_fail(e, KB_EENV, "interrupted");
    /* the child crashed, hung or answered nonsense: that is this case's failure */
    r->status = KB_R_FAILED;
    kb_strlcpy(r->reason, e->msg, sizeof r->reason);
    e->msg[0] = '\0';
    return KB_OK;
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

static kb_status query_device(const run_opts *o, kb_device *dev, kb_err *e)
{
    kb_child_end end;
    cJSON *j = NULL;
    int ordinal = o->device;
    kb_status st = ask_child(child_device, &ordinal, 120.0, &j, &end, e);
    if (st != KB_OK)
        return st;
    st = kb_json_to_device(j, dev, e);
    cJSON_Delete(j);
    return st;
}

static const char *const ceiling_names[] = {"copy_gbps", "mma_tflops", "fp32_tflops"};

static double *ceiling_of(kb_device *dev, int i)
{
    return i == 0 ? &dev->copy_gbps : i == 1 ? &dev->mma_tflops : &dev->fp32_tflops;
}

/* Reads this GPU's ceilings from the store; measures and stores them first
 * (in a child) when any is missing. */
static kb_status ensure_ceilings(const run_opts *o, kb_store *store, kb_device *dev, kb_err *e)
{
    kb_status st = KB_OK;
    int missing = 0;
    for (int i = 0; i < 3 && st == KB_OK; i++) {
        st = kb_store_get_ceiling(store, dev->uuid, ceiling_names[i], ceiling_of(dev, i), e);
        missing += !isfinite(*ceiling_of(dev, i));
    }
    if (st != KB_OK || !missing)
        return st;
    fprintf(stderr, "kbench: no calibrated ceilings stored for %s; calibrating first\n",
            dev->name);
    kb_child_end end;
    cJSON *j = NULL;
    int ordinal = o->device;
    if ((st = ask_child(child_calibrate, &ordinal, 300.0, &j, &end, e)) != KB_OK)
        return st;
    for (int i = 0; i < 3; i++) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, ceiling_names[i]);
        *ceiling_of(dev, i) = cJSON_IsNumber(g) ? g->valuedouble : NAN;
    }
    cJSON_Delete(j);
    for (int i = 0; i < 3 && st == KB_OK; i++) {
        if (!isfinite(*ceiling_of(dev, i)))
            return kb_fail(e, KB_EENV, "calibration gave no %s", ceiling_names[i]);
        st = kb_store_set_ceiling(store, dev, ceiling_names[i], *ceiling_of(dev, i), e);
    }
    return st;
}

/* The dtypes run for op: --dtype's list, or the operator's own default. Returns
 * how many it wrote to out (room for KB_DTYPE_COUNT). */
static int dtypes_of(const run_opts *o, const kb_op *op, kb_dtype *out)
{
    if (!o->ndtypes) {
        out[0] = op->default_dtype;
        return 1;
    }
    memcpy(out, o->dtypes, (size_t)o->ndtypes * sizeof *out);
    return o->ndtypes;
}

/* Refuses, before anything is allocated or stored, shapes whose inputs and
 * outputs cannot fit on the GPU. */
static kb_status check_fit(const run_opts *o, const kb_device *dev, kb_err *e)
{
    for (int i = 0; i < o->nops; i++) {
        const kb_op *op = o->ops[i];
        for (int k = 0; k < (o->nshapes ? o->nshapes : 1); k++) {
            const int64_t *shape = o->shape[i][k];
            char str[256];
            kb_shape_str(op, shape, str, sizeof str);
            double elems = 1;
            for (int a = 0; a < op->naxes; a++)
                elems *= (double)(shape[a] > 0 ? shape[a] : 1);
            kb_dtype dts[KB_DTYPE_COUNT];
            const int ndts = dtypes_of(o, op, dts);
            for (int t = 0; t < ndts; t++) {
                double need = elems > 1e15 ? elems * 8
                                           : kb_bench_device_bytes(op, NULL, dts[t], shape,
                                                                   dev->l2_bytes);
                if (need > 0.97 * (double)dev->memory_bytes)
                    return kb_fail(e, KB_EUSAGE,
                                   "shape %s (%s) is too large: it needs %.0f bytes of device "
                                   "memory (%.1f GiB), %s has %lld",
                                   str, kb_dtype_name(dts[t]), need, need / (1 << 30),
                                   dev->name, (long long)dev->memory_bytes);
            }
        }
    }
    return KB_OK;
}

static int count_cases(const run_opts *o)
{
    int n = 0;
    kb_dtype dts[KB_DTYPE_COUNT];
    for (int i = 0; i < o->nops; i++)
        for (int v = 0; v < o->ops[i]->nvariants; v++)
            n += selected(o, &o->ops[i]->variants[v]) * (o->nshapes ? o->nshapes : 1) *
                 dtypes_of(o, o->ops[i], dts);
    return n;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    kb_err e = {{0}};
    kb_store *store = NULL;
    kb_run run;
    kb_status st;
    int failures = 0, done_cases = 0;
    kb_run_init(&run);
    if (kb_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return kb_cli_finish_stdout(KB_OK);
    }
    if ((st = parse_args(argc, argv, &o, &e)) != KB_OK)
        return kb_cli_fail(st, &e);
    kb_isolate_catch_signals();
    if ((st = kb_store_open(kb_cli_db_path(o.db), 1, &store, &e)) != KB_OK)
        goto done;
    if ((st = query_device(&o, &run.dev, &e)) != KB_OK)
        goto done;
    if ((st = check_fit(&o, &run.dev, &e)) != KB_OK)
        goto done;
    if ((st = ensure_ceilings(&o, store, &run.dev, &e)) != KB_OK)
        goto done;

    kb_strlcpy(run.version, KB_VERSION, sizeof run.version);
    kb_strlcpy(run.git, KB_GIT, sizeof run.git);
    kb_cli_join_argv(argc + 1, argv - 1, run.argv, sizeof run.argv);
    iso_now(run.started, sizeof run.started);
    kb_strlcpy(run.state, "running", sizeof run.state);
    if (o.tag)
        kb_strlcpy(run.tag, o.tag, sizeof run.tag);
    if ((st = kb_store_begin_run(store, &run, &e)) != KB_OK)
        goto done;

    char why[256];
    if (o.bench.metrics != KB_METRICS_NONE && kb_counters_foreign_profiler(why, sizeof why)) {
        kb_cli_warn("%s; running with --metrics none", why);
        o.bench.metrics = KB_METRICS_NONE;
    }
    char warned[256] = "";
    int total = count_cases(&o);
    for (int i = 0; i < o.nops && st == KB_OK; i++) {
        const kb_op *op = o.ops[i];
        for (int k = 0; k < (o.nshapes ? o.nshapes : 1) && st == KB_OK; k++) {
            const int64_t *shape = o.shape[i][k];
            kb_dtype dts[KB_DTYPE_COUNT];
            const int ndts = dtypes_of(&o, op, dts);
            for (int t = 0; t < ndts && st == KB_OK; t++) {
                for (int vi = 0; vi < op->nvariants && st == KB_OK; vi++) {
                    const kb_variant *v = &op->variants[vi];
                    if (!selected(&o, v))
                        continue;
                    if (kb_isolate_interrupted()) {
                        st = kb_fail(&e, KB_EENV, "interrupted");
                        break;
                    }
                    kb_result r;
                    kb_bench_name_case(&r, op, v, dts[t], shape, o.seed);
                    if ((st = run_case(&o, op, v, &run.dev, &r, &e)) != KB_OK) {
                        kb_result_release(&r);
                        break;
                    }
                    kb_result_derive(&r, &run.dev);
                    if (r.counters_reason[0] && strcmp(r.counters_reason, warned) != 0) {
                        kb_cli_warn("no counters: %s", r.counters_reason);
                        kb_strlcpy(warned, r.counters_reason, sizeof warned);
                    }
                    failures += r.status == KB_R_MISMATCH || r.status == KB_R_FAILED;
                    progress(++done_cases, total, &r);
                    if ((st = kb_store_add_result(store, run.id, &r, &e)) != KB_OK ||
                        kb_run_add(&run, &r) != 0) {
                        if (st == KB_OK)
                            st = kb_fail(&e, KB_EENV, "out of memory");
                        kb_result_release(&r);
                    }
                }
            }
        }
    }
    iso_now(run.finished, sizeof run.finished);
    kb_strlcpy(run.state, st == KB_OK ? "complete" : "interrupted", sizeof run.state);
    {
        kb_err fe = {{0}};
        if (kb_store_finish_run(store, run.id, run.state, run.finished, &fe) != KB_OK &&
            st == KB_OK) {
            st = KB_EENV;
            e = fe;
        }
    }
    if (run.nresults) {
        kb_err we = {{0}};
        if (kb_write_text(stdout, &run, &we) != KB_OK && st == KB_OK) {
            st = KB_EENV;
            e = we;
        }
    }
    if (o.json && st == KB_OK) {
        cJSON *j = kb_json_from_run(&run);
        if (!j)
            st = kb_fail(&e, KB_EENV, "out of memory building the JSON report");
        else
            st = kb_json_write_file(j, o.json, &e);
        cJSON_Delete(j);
    }
done:
    kb_store_close(store);
    kb_run_release(&run);
    if (st != KB_OK)
        return kb_cli_finish_stdout(kb_cli_fail(st, &e));
    return kb_cli_finish_stdout(failures ? KB_ECHECK : KB_OK);
}

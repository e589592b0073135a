/* bench.c - verify and time one case (see bench.h). Runs inside a child
 * process, so a CUDA error here ends only this case.
 *
 * The steps of a case: the policy's skip rules; device buffers; fresh inputs,
 * the variant's prepare hook, poisoned outputs, one launch whose kernels are
 * noted, the reference check; for a library's kernels (a launcher that notes
 * none), one more launch traced for their names and facts; warm-up; the timed
 * samples; the counter pass; the figures (results/figures.c). */
#include "bench.h"

#include <limits.h>
#include <math.h>
#include <nvtx3/nvToolsExt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "isolate.h"
#include "kernels/check.h"
#include "kernels/fill.h"
#include "trace.h"

_Static_assert(KB_MAX_AXES == KB_RES_MAX_AXES, "a result holds exactly an operator's axes");

/* Warm-up before the samples: at least WARMUP_MIN launches and WARMUP_MIN_S
 * seconds (or o->warmup_s when given), at most WARMUP_MAX launches (no cap
 * with o->warmup_s), waiting for the GPU every WARMUP_SYNC_EVERY launches so
 * that the queue stays short. */
#define WARMUP_MIN 3
#define WARMUP_MAX 200
#define WARMUP_MIN_S 0.05
#define WARMUP_SYNC_EVERY 8

/* A sample run is "throttled" when the SM clock measured right after the cold
 * samples is under this share of the device's peak clock. */
#define THROTTLE_SHARE 0.9

/* Room for this many samples at first; doubled as needed. */
#define SAMPLES_FIRST 256

/* A batch sample lasts at least this long, us (at the cold median), so that
 * the two events' resolution and the launch gaps are small beside it; and
 * holds at most this many launches. */
#define KB_BATCH_MIN_US 1000.0
#define KB_BATCH_MAX_LAUNCHES 100000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t scratch_of(const kb_variant *v, const int64_t *shape, kb_dtype d)
{
    return v->scratch_bytes ? v->scratch_bytes(shape, d) : 0;
}

void kb_bench_name_case(kb_result *r, const kb_op *op, const kb_variant *v, kb_dtype d,
                        const int64_t *shape, uint64_t seed)
{
    kb_result_init(r);
    kb_strlcpy(r->op, op->name, sizeof r->op);
    kb_strlcpy(r->variant, v->name, sizeof r->variant);
    kb_strlcpy(r->dtype, kb_dtype_name(d), sizeof r->dtype);
    r->naxes = op->naxes;
    for (int i = 0; i < op->naxes; i++) {
        kb_strlcpy(r->axis[i], op->axes[i].name, sizeof r->axis[i]);
        r->shape[i] = shape[i];
    }
    r->seed = seed;
    if (v->source_path)
        kb_strlcpy(r->source_path, v->source_path, sizeof r->source_path);
    if (v->source_sha256)
        kb_strlcpy(r->source_sha256, v->source_sha256, sizeof r->source_sha256);
    op->model(shape, d, &r->bytes, &r->flops);
    kb_strlcpy(r->bound, op->bound, sizeof r->bound);
    r->extra_bytes = (double)scratch_of(v, shape, d);
}

/* What one case holds on the device. */
typedef struct bench_case {
    kb_args a;
    kb_sm_limits limits; /* the occupancy calculator's, read off the device once */
    kb_launch_log log;
    cudaStream_t s;
    cudaEvent_t t0, t1;
    void *flush; /* the L2 flush buffer */
    size_t flush_bytes;
    char untraced[256]; /* why a library's kernels could not be traced, or "" */
} bench_case;

/* A step's outcome: go on, or the case is over (its result says why). */
enum { STEP_OK = 0, STEP_OVER = 1 };

/* Records a failed CUDA call in r as the case's failure. Returns STEP_OVER. */
static int cuda_failed(kb_result *r, const char *call, cudaError_t ce)
{
    r->status = KB_R_FAILED;
    snprintf(r->reason, sizeof r->reason, "%s: %s (%s)", call, cudaGetErrorString(ce),
             cudaGetErrorName(ce));
    return STEP_OVER;
}

/* Checks a CUDA call in a step: a failure ends the case (cuda_failed). */
#define CASE_CUDA(call)                                                                  \
    do {                                                                                 \
        cudaError_t ce_ = (call);                                                        \
        if (ce_ != cudaSuccess)                                                          \
            return cuda_failed(r, #call, ce_);                                           \
    } while (0)

/* Appends "; " and the variant's own account of its last failure (a
 * library's message, v->last_error) to buf, when it has one. */
static void append_own(char *buf, size_t n, const kb_variant *v)
{
    const char *own = v->last_error ? v->last_error() : NULL;
    size_t used = strlen(buf);
    if (own && *own && used < n)
        snprintf(buf + used, n - used, "; %s", own);
}

/* A failed launch: cuda_failed, with the variant's own account of it. */
static int launch_failed(kb_result *r, const kb_variant *v, const char *call, cudaError_t ce)
{
    cuda_failed(r, call, ce);
    append_own(r->reason, sizeof r->reason, v);
    return STEP_OVER;
}

/* CASE_CUDA for a launch of the variant (launch_failed). */
#define CASE_LAUNCH(call)                                                                \
    do {                                                                                 \
        cudaError_t ce_ = (call);                                                        \
        if (ce_ != cudaSuccess)                                                          \
            return launch_failed(r, v, #call, ce_);                                      \
    } while (0)

/* Records a failure of the harness's own (the message in e) as the case's. */
static int harness_failed(kb_result *r, const kb_err *e)
{
    r->status = KB_R_FAILED;
    kb_strlcpy(r->reason, e->msg, sizeof r->reason);
    return STEP_OVER;
}

/* The occupancy calculator's limits, read off the device where it says them. */
static kb_sm_limits sm_limits(int ordinal)
{
    static const struct {
        enum cudaDeviceAttr attr;
        size_t field; /* offset of the int in kb_sm_limits */
    } from_device[] = {
        {cudaDevAttrMaxRegistersPerMultiprocessor, offsetof(kb_sm_limits, regs_per_sm)},
        {cudaDevAttrMaxSharedMemoryPerMultiprocessor, offsetof(kb_sm_limits, smem_per_sm)},
        {cudaDevAttrMaxThreadsPerMultiProcessor, offsetof(kb_sm_limits, max_threads_per_sm)},
        {cudaDevAttrMaxBlocksPerMultiprocessor, offsetof(kb_sm_limits, max_blocks_per_sm)},
    };
    kb_sm_limits L = kb_sm_limits_sm90();
    for (size_t i = 0; i < KB_COUNT(from_device); i++) {
        int v = 0;
        if (cudaDeviceGetAttribute(&v, from_device[i].attr, ordinal) == cudaSuccess && v > 0)
            memcpy((char *)&L + from_device[i].field, &v, sizeof v);
    }
    return L;
}

/* The stream, events, inputs, outputs, scratch and the zeroed flush buffer. */
static int setup(const kb_op *op, const kb_variant *v, const kb_device *dev, bench_case *c,
                 kb_result *r)
{
    c->a.shape = r->shape;
    c->limits = sm_limits(dev->ordinal);
    c->flush_bytes = (size_t)(KB_FLUSH_L2_FACTOR * dev->l2_bytes);
    CASE_CUDA(cudaSetDevice(dev->ordinal));
    CASE_CUDA(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking));
    CASE_CUDA(cudaEventCreate(&c->t0));
    CASE_CUDA(cudaEventCreate(&c->t1));
    const char *call = NULL;
    const cudaError_t ce = kb_case_alloc(op, v, &c->a, c->flush_bytes, &c->flush, c->s, &call);
    return ce == cudaSuccess ? STEP_OK : cuda_failed(r, call, ce);
}

static void teardown(bench_case *c)
{
    if (c->t0)
        cudaEventDestroy(c->t0);
    if (c->t1)
        cudaEventDestroy(c->t1);
    kb_case_free(&c->a, c->flush);
    if (c->s)
        cudaStreamDestroy(c->s);
}

/* Records the failing call's text in *call and returns its error. */
#define ALLOC_CUDA(text, expr)                                                           \
    do {                                                                                 \
        const cudaError_t ce_ = (expr);                                                  \
        if (ce_ != cudaSuccess) {                                                        \
            *call = (text);                                                              \
            return ce_;                                                                  \
        }                                                                                \
    } while (0)

cudaError_t kb_case_alloc(const kb_op *op, const kb_variant *v, kb_args *a, size_t flush_bytes,
                          void **flush, cudaStream_t s, const char **call)
{
    for (int i = 0; i < op->nin; i++) {
        const size_t b = op->in_bytes(a->shape, a->dtype, i);
        if (b)
            ALLOC_CUDA("cudaMalloc(input)", cudaMalloc((void **)&a->in[i], b));
    }
    for (int i = 0; i < op->nout; i++) {
        const size_t b = op->out_bytes(a->shape, a->dtype, i);
        if (b)
            ALLOC_CUDA("cudaMalloc(output)", cudaMalloc(&a->out[i], b));
    }
    a->scratch_bytes = scratch_of(v, a->shape, a->dtype);
    if (a->scratch_bytes)
        ALLOC_CUDA("cudaMalloc(scratch)", cudaMalloc(&a->scratch, a->scratch_bytes));
    if (flush_bytes) {
        ALLOC_CUDA("cudaMalloc(flush)", cudaMalloc(flush, flush_bytes));
        ALLOC_CUDA("cudaMemsetAsync(flush)", cudaMemsetAsync(*flush, 0, flush_bytes, s));
    }
    return cudaSuccess;
}

void kb_case_free(kb_args *a, void *flush)
{
    for (int i = 0; i < KB_MAX_BUFS; i++) {
        cudaFree((void *)a->in[i]);
        cudaFree(a->out[i]);
    }
    cudaFree(a->scratch);
    cudaFree(flush);
}

/* Resident blocks per SM the runtime could not say: KERNEL_BLOCKS_CALC, a
 * library's kernel, for which the calculator's rules give them;
 * KERNEL_BLOCKS_UNKNOWN, a query that failed (no theoretical occupancy). */
#define KERNEL_BLOCKS_CALC (-1)
#define KERNEL_BLOCKS_UNKNOWN (-2)

/* Fills k from a kernel's static facts t. blocks is the runtime's count of
 * resident blocks per SM, or one of the two above; the limiter comes from the
 * calculator's rules either way. */
static void kernel_from(kb_kernel *k, const kb_traced_kernel *t, int blocks,
                        const kb_sm_limits *L)
{
    const int max_warps = L->max_threads_per_sm / L->warp_size;
    const int threads = (int)(t->block.x * t->block.y * t->block.z);
    kb_occ_limit lim;
    const int calc = kb_occupancy_blocks(L, t->registers, threads,
                                         (int)(t->static_smem + t->dynamic_smem), &lim);
    if (blocks == KERNEL_BLOCKS_CALC)
        blocks = calc;
    kb_strlcpy(k->name, t->name, sizeof k->name);
    k->grid[0] = t->grid.x;
    k->grid[1] = t->grid.y;
    k->grid[2] = t->grid.z;
    k->block[0] = t->block.x;
    k->block[1] = t->block.y;
    k->block[2] = t->block.z;
    k->registers = t->registers;
    k->static_smem = t->static_smem;
    k->dynamic_smem = t->dynamic_smem;
    k->local_bytes = t->local_bytes;
    k->occupancy = NAN;
    if (blocks >= 0 && max_warps > 0) {
        k->blocks_per_sm = blocks;
        /* a partial warp takes a slot */
        int warps_per_block = (threads + L->warp_size - 1) / L->warp_size;
        k->occupancy = (double)(blocks * warps_per_block) / (double)max_warps;
    }
    kb_strlcpy(k->occ_limiter, kb_occ_limit_name(lim), sizeof k->occ_limiter);
}

/* The static facts of one noted launch into k. */
static void kernel_fact(const kb_launch_note *n, const kb_sm_limits *L, kb_kernel *k)
{
    struct cudaFuncAttributes fa;
    memset(&fa, 0, sizeof fa);
    kb_traced_kernel t;
    memset(&t, 0, sizeof t);
    kb_strlcpy(t.name, n->name, sizeof t.name);
    t.grid = n->grid;
    t.block = n->block;
    t.dynamic_smem = (int64_t)n->dyn_smem;
    if (cudaFuncGetAttributes(&fa, n->fn) == cudaSuccess) {
        t.registers = fa.numRegs;
        t.static_smem = (int64_t)fa.sharedSizeBytes;
        t.local_bytes = (int64_t)fa.localSizeBytes;
    }
    int threads = (int)(n->block.x * n->block.y * n->block.z), blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, n->fn, threads, n->dyn_smem) !=
        cudaSuccess)
        blocks = KERNEL_BLOCKS_UNKNOWN;
    kernel_from(k, &t, blocks, L);
}

static void kernel_facts(const bench_case *c, kb_result *r)
{
    free(r->kernels);
    r->kernels = calloc((size_t)(c->log.n ? c->log.n : 1), sizeof *r->kernels);
    r->nkernels = 0;
    if (!r->kernels)
        return;
    for (int i = 0; i < c->log.n; i++)
        kernel_fact(&c->log.k[i], &c->limits, &r->kernels[r->nkernels++]);
}

/* A launcher that noted no kernels runs a library's: one more launch, traced
 * with the CUPTI Activity API, gives their names and static facts (the
 * occupancy from the calculator's rules). When tracing is not possible the
 * kernels stay unknown and c->untraced says why. */
static int library_kernel_facts(const kb_variant *v, bench_case *c, kb_result *r, kb_err *e)
{
    kb_traced_kernel t[KB_MAX_KERNELS];
    int n = 0;
    if (kb_trace_kernels(v->launch, &c->a, c->s, t, KB_MAX_KERNELS, &n, c->untraced,
                         sizeof c->untraced, e) != KB_OK) {
        harness_failed(r, e);
        append_own(r->reason, sizeof r->reason, v);
        return STEP_OVER;
    }
    if (n > 0) {
        kb_kernel *k = calloc((size_t)n, sizeof *k);
        if (!k) {
            kb_fail(e, KB_EENV, "out of host memory for %d kernels", n);
            return harness_failed(r, e);
        }
        for (int i = 0; i < n; i++)
            kernel_from(&k[i], &t[i], KERNEL_BLOCKS_CALC, &c->limits);
        free(r->kernels);
        r->kernels = k;
        r->nkernels = n;
    }
    return STEP_OK;
}

/* Compares the outputs with the fp64 reference: r's check figures, and a
 * mismatch with the first bad element. */
static int check_outputs(const kb_op *op, bench_case *c, kb_result *r, kb_err *e)
{
    kb_check k;
    if (op->check(&c->a, r->seed, &k, e) != KB_OK)
        return harness_failed(r, e);
    r->checked = 1;
    r->max_abs_err = k.max_abs_err;
    r->rel_l2_err = k.rel_l2_err;
    r->atol = k.atol;
    r->rtol = k.rtol;
    r->rows_checked = k.rows_checked;
    if (!kb_check_passed(&k)) {
        r->status = KB_R_MISMATCH;
        snprintf(r->reason, sizeof r->reason,
                 "%lld of %lld checked elements out of tolerance (atol %g, rtol %g); "
                 "first at %s",
                 (long long)k.bad_elems, (long long)k.elems_checked, k.atol, k.rtol,
                 k.first_bad);
    }
    return STEP_OK;
}

/* Fresh inputs, the variant's prepare hook, poisoned outputs, one launch whose
 * kernels are noted, their static facts, and the check (unless --no-check). */
static int first_launch(const kb_op *op, const kb_variant *v, const kb_bench_opts *o,
                        bench_case *c, kb_result *r, kb_err *e)
{
    if (op->generate(&c->a, r->seed, c->s, e) != KB_OK)
        return harness_failed(r, e);
    if (v->prepare) {
        CASE_CUDA(cudaStreamSynchronize(c->s));
        const int p = v->prepare(&c->a, r->reason, sizeof r->reason);
        if (p != 0) {
            r->status = p > 0 ? KB_R_SKIPPED : KB_R_FAILED;
            return STEP_OVER;
        }
        /* what the hook queued on the legacy default stream (a memset of
         * counters), which the case's non-blocking stream does not wait for */
        CASE_CUDA(cudaDeviceSynchronize());
    }
    for (int i = 0; i < op->nout; i++)
        CASE_CUDA(kb_poison(c->a.out[i], op->out_bytes(r->shape, c->a.dtype, i), c->s));
    c->a.log = &c->log;
    CASE_LAUNCH(v->launch(&c->a, c->s));
    c->a.log = NULL;
    CASE_CUDA(cudaStreamSynchronize(c->s));
    kernel_facts(c, r);
    r->status = KB_R_OK;
    return o->no_check ? STEP_OK : check_outputs(op, c, r, e);
}

static int warm_up(const kb_variant *v, const kb_bench_opts *o, bench_case *c, kb_result *r)
{
    const double t0 = now_s(), min_s = o->warmup_s > 0 ? o->warmup_s : WARMUP_MIN_S;
    const long max_n = o->warmup_s > 0 ? LONG_MAX : WARMUP_MAX;
    for (long i = 0; i < max_n && (i < WARMUP_MIN || now_s() - t0 < min_s); i++) {
        CASE_LAUNCH(v->launch(&c->a, c->s));
        if (i % WARMUP_SYNC_EVERY == WARMUP_SYNC_EVERY - 1 || i < WARMUP_MIN)
            CASE_CUDA(cudaStreamSynchronize(c->s));
    }
    CASE_CUDA(cudaStreamSynchronize(c->s));
    return STEP_OK;
}

/* Appends us to s[0 .. *n), growing it (*cap its room). -1 when out of memory. */
static int push_sample(double **s, size_t *n, size_t *cap, double us)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : SAMPLES_FIRST;
        double *p = realloc(*s, ncap * sizeof *p);
        if (!p)
            return -1;
        *s = p;
        *cap = ncap;
    }
    (*s)[(*n)++] = us;
    return 0;
}

/* One cold sample: flush the L2, then the variant's launches between two
 * events; *us is the time. */
static int time_once(const kb_variant *v, bench_case *c, kb_result *r, double *us)
{
    float ms = 0;
    if (c->flush_bytes)
        CASE_CUDA(kb_flush_l2(c->flush, c->flush_bytes, c->s));
    CASE_CUDA(cudaEventRecord(c->t0, c->s));
    CASE_LAUNCH(v->launch(&c->a, c->s));
    CASE_CUDA(cudaEventRecord(c->t1, c->s));
    CASE_CUDA(cudaEventSynchronize(c->t1));
    CASE_CUDA(cudaEventElapsedTime(&ms, c->t0, c->t1));
    *us = (double)ms * 1e3;
    return STEP_OK;
}

/* One batch sample: n launches back to back, no flush, between two events;
 * *us is the time of one (the total over n). */
static int time_batch(const kb_variant *v, bench_case *c, kb_result *r, int n, double *us)
{
    float ms = 0;
    CASE_CUDA(cudaEventRecord(c->t0, c->s));
    for (int i = 0; i < n; i++)
        CASE_LAUNCH(v->launch(&c->a, c->s));
    CASE_CUDA(cudaEventRecord(c->t1, c->s));
    CASE_CUDA(cudaEventSynchronize(c->t1));
    CASE_CUDA(cudaEventElapsedTime(&ms, c->t0, c->t1));
    *us = (double)ms * 1e3 / n;
    return STEP_OK;
}

/* The case's child stops when the kbench that started it is gone (it was
 * killed before it could end the child): its result would be lost anyway. */
static int parent_gone(kb_result *r)
{
    r->status = KB_R_FAILED;
    kb_strlcpy(r->reason, "the kbench process that started this case is gone", sizeof r->reason);
    return STEP_OVER;
}

/* A series of samples (cold, or batch of n launches) into s[0 .. *ns) (grown
 * as needed, *cap its room): after o->min_samples, until it has converged
 * (kb_series_converged: the spread under o->max_noise or the standard error
 * under o->max_error), or the time limit, or o->max_samples. *st is KB_EENV
 * when the samples do not fit in host memory. */
static int sample_series(const kb_variant *v, const kb_bench_opts *o, bench_case *c,
                         kb_result *r, int batch_n, double **s, size_t *ns, size_t *cap,
                         kb_status *st, kb_err *e)
{
    double t_start = now_s(), mean = 0, m2 = 0; /* running stdev/mean (Welford) */
    for (int i = 0; i < o->max_samples; i++) {
        double us = 0;
        if (!kb_isolate_parent_alive())
            return parent_gone(r);
        if ((batch_n > 0 ? time_batch(v, c, r, batch_n, &us) : time_once(v, c, r, &us)) !=
            STEP_OK)
            return STEP_OVER;
        if (push_sample(s, ns, cap, us) != 0) {
            *st = kb_fail(e, KB_EENV, "out of host memory for samples");
            return STEP_OVER;
        }
        double n = (double)*ns, dev_us = us - mean;
        mean += dev_us / n;
        m2 += dev_us * (us - mean);
        if ((int)*ns >= o->min_samples &&
            (kb_series_converged(n, mean, m2, o->max_noise, o->max_error) ||
             now_s() - t_start >= o->time_limit_s))
            break;
    }
    return STEP_OK;
}

/* The cold samples into r->samples_us (see sample_series). */
static int sample(const kb_variant *v, const kb_bench_opts *o, bench_case *c, kb_result *r,
                  kb_status *st, kb_err *e)
{
    size_t cap = 0;
    return sample_series(v, o, c, r, 0, &r->samples_us, &r->nsamples, &cap, st, e);
}

/* Launches in a batch sample: enough that one lasts KB_BATCH_MIN_US at the
 * cold median, at least 1, at most KB_BATCH_MAX_LAUNCHES. */
static int batch_launches(double median_us)
{
    if (!(median_us > 0) || !isfinite(median_us))
        return 1;
    const double n = ceil(KB_BATCH_MIN_US / median_us);
    return n < 1 ? 1 : n > KB_BATCH_MAX_LAUNCHES ? KB_BATCH_MAX_LAUNCHES : (int)n;
}

/* The batch samples (after the cold ones: their median sizes the batch), one
 * untimed batch first so that each timed one starts from the state the
 * previous batch left; their median and spread into r. */
static int sample_batch(const kb_variant *v, const kb_bench_opts *o, bench_case *c,
                        kb_result *r, kb_status *st, kb_err *e)
{
    double *s = NULL, warm_us = 0, lo = 0, hi = 0;
    size_t ns = 0, cap = 0;
    kb_result_summarise(r);
    const int n = batch_launches(r->median_us);
    int step = time_batch(v, c, r, n, &warm_us);
    if (step == STEP_OK)
        step = sample_series(v, o, c, r, n, &s, &ns, &cap, st, e);
    if (step == STEP_OK && ns > 0) {
        if (kb_samples_summary(s, ns, &r->batch_us, &lo, &hi, &r->batch_stdrel) != 0) {
            *st = kb_fail(e, KB_EENV, "out of host memory for samples");
            step = STEP_OVER;
        }
        r->batch_launches = n;
    }
    free(s);
    return step;
}

/* The counters of the variant's kernels into r's kernels (in launch order),
 * and the result's DRAM bytes (the occupancies are the result model's:
 * kb_result_summarise_kernels). */
static void counters_into(const kb_counter_values *cv, int nk, kb_result *r)
{
    for (int i = 0; i < nk; i++) {
        kb_kernel *k = &r->kernels[i];
        char names[KB_RES_MAX_STALLS][KB_STALL_NAME_MAX];
        double frac[KB_RES_MAX_STALLS];
        int ns = 0;
        k->nmetrics = cv[i].n < KB_RES_MAX_METRICS ? cv[i].n : KB_RES_MAX_METRICS;
        for (int m = 0; m < k->nmetrics; m++) {
            kb_strlcpy(k->metrics[m].name, cv[i].name[m], sizeof k->metrics[m].name);
            k->metrics[m].value = cv[i].value[m];
        }
        kb_stall_fractions(&cv[i], names, frac, KB_RES_MAX_STALLS, &ns);
        k->nstalls = ns;
        for (int m = 0; m < ns; m++) {
            kb_strlcpy(k->stalls[m].name, names[m], sizeof k->stalls[m].name);
            k->stalls[m].value = frac[m];
        }
    }
    r->dram_bytes = kb_counter_sum(cv, nk, KB_METRIC_DRAM_READ) +
                    kb_counter_sum(cv, nk, KB_METRIC_DRAM_WRITE);
}

/* The counter pass: the variant runs under the Range Profiler once per replay
 * pass, one range per kernel, between two L2 flushes: its kernels start from a
 * clean L2 as in a timed sample, and what it leaves dirty is counted as its
 * writes (kb_counters_profile). A missing capability, or a failure of the
 * counters (not the variant's), leaves the reason in the result. */
static void collect_counters(const kb_variant *v, bench_case *c, kb_metric_set set,
                             kb_result *r, kb_err *e)
{
    kb_counters *pc = NULL;
    kb_counter_values *cv = calloc(KB_MAX_KERNELS, sizeof *cv);
    char why[256] = "";
    int nk = 0, passes = 0;
    kb_status st = KB_OK;
    if (!cv) {
        st = kb_fail(e, KB_EENV, "out of host memory for counters");
        goto done;
    }
    if ((st = kb_counters_open(set, &pc, why, sizeof why, e)) != KB_OK || !pc)
        goto done;
    st = kb_counters_profile(pc, v->launch, &c->a, c->s, c->flush, c->flush_bytes, cv,
                             KB_MAX_KERNELS, &nk, &passes, why, sizeof why, e);
    if (st != KB_OK || nk == 0)
        goto done;
    if (nk != r->nkernels && r->nkernels == 0 && c->untraced[0]) {
        snprintf(why, sizeof why,
                 "the counter pass saw %d kernels of a library, which could not be named: "
                 "%.150s",
                 nk, c->untraced);
        goto done;
    }
    if (nk != r->nkernels) {
        snprintf(why, sizeof why, "the counter pass saw %d kernels, the launch log %d", nk,
                 r->nkernels);
        goto done;
    }
    r->passes = passes;
    counters_into(cv, nk, r);
done:
    if (why[0])
        kb_strlcpy(r->counters_reason, why, sizeof r->counters_reason);
    if (st != KB_OK) {
        /* a counter failure is not the variant's: keep its result, say why */
        snprintf(r->counters_reason, sizeof r->counters_reason, "counters failed: %.200s",
                 e->msg);
        append_own(r->counters_reason, sizeof r->counters_reason, v);
    }
    kb_counters_close(pc);
    free(cv);
}

/* The SM clock right after the cold samples (the headline's), before the
 * batch samples' sustained load moves it. */
static int cold_clock(bench_case *c, kb_result *r)
{
    r->sm_clock_mhz = kb_measure_sm_clock(c->s);
    return STEP_OK;
}

/* After the samples: the SM clock the batch samples left, the summary, the
 * counter pass, the kernels' summaries; a sticky CUDA error now still fails
 * the case. */
static int finish(const kb_variant *v, const kb_device *dev, const kb_bench_opts *o,
                  bench_case *c, kb_result *r, kb_err *e)
{
    r->batch_sm_clock_mhz = kb_measure_sm_clock(c->s);
    r->throttled = r->sm_clock_mhz < THROTTLE_SHARE * dev->sm_clock_mhz;
    if (r->throttled)
        kb_strlcpy(r->throttle_reason, "sm clock under 90% of peak", sizeof r->throttle_reason);
    kb_result_summarise(r);
    kb_strlcpy(r->metric_set, kb_metric_set_name(o->metrics), sizeof r->metric_set);
    if (o->metrics != KB_METRICS_NONE && r->status != KB_R_FAILED)
        collect_counters(v, c, o->metrics, r, e);
    if (r->counters_reason[0] || r->passes == 0)
        kb_strlcpy(r->metric_set, "none", sizeof r->metric_set);
    kb_result_summarise_kernels(r);
    CASE_CUDA(cudaGetLastError());
    return STEP_OK;
}

kb_status kb_bench_case(const kb_op *op, const kb_variant *v, const kb_device *dev,
                        const kb_bench_opts *o, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    bench_case c;
    char range[128];
    memset(&c, 0, sizeof c);
    if (kb_dtype_parse(r->dtype, &c.a.dtype) != 0)
        return kb_fail(e, KB_EUSAGE, "unknown dtype '%s'", r->dtype);
    if (kb_case_skip(op, v, c.a.dtype, r->shape, dev, r->reason, sizeof r->reason)) {
        r->status = KB_R_SKIPPED;
        return KB_OK;
    }
    if (kb_case_l2_resident(op, c.a.dtype, r->shape, dev->l2_bytes))
        r->flags |= KB_FLAG_L2_RESIDENT;
    snprintf(range, sizeof range, "kbench/%s/%s", op->name, v->name);
    nvtxRangePushA(range);
    /* the counters' host setup overlaps the context creation below */
    if (o->metrics != KB_METRICS_NONE)
        kb_counters_prepare(o->metrics, dev->ordinal);
    if (setup(op, v, dev, &c, r) == STEP_OK && first_launch(op, v, o, &c, r, e) == STEP_OK) {
        kb_counters_prepare_wait(); /* no host work of its own during the samples */
        if ((c.log.n > 0 || library_kernel_facts(v, &c, r, e) == STEP_OK) &&
            warm_up(v, o, &c, r) == STEP_OK && sample(v, o, &c, r, &st, e) == STEP_OK &&
            cold_clock(&c, r) == STEP_OK && sample_batch(v, o, &c, r, &st, e) == STEP_OK)
            finish(v, dev, o, &c, r, e);
    }
    kb_result_derive(r, dev);
    teardown(&c);
    kb_counters_prepare_discard();
    nvtxRangePop();
    return st;
}

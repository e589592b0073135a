/* bench.c - verify and time one case (see bench.h). Runs inside a child
 * process, so a CUDA error here ends only this case. */
#include "bench.h"

#include <math.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "kernels/check.h"
#include "kernels/fill.h"
#include "trace.h"

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
    op->model(shape, d, &r->bytes, &r->flops);
    kb_strlcpy(r->bound, op->bound, sizeof r->bound);
    r->extra_bytes = v->scratch_bytes ? (double)v->scratch_bytes(shape, d) : 0;
}

double kb_bench_device_bytes(const kb_op *op, const kb_variant *v, kb_dtype d,
                             const int64_t *shape, int64_t l2_bytes)
{
    double total = KB_FLUSH_L2_FACTOR * (double)l2_bytes;
    for (int i = 0; i < op->nin; i++)
        total += (double)op->in_bytes(shape, d, i);
    for (int i = 0; i < op->nout; i++)
        total += (double)op->out_bytes(shape, d, i);
    if (v)
        total += (double)scratch_of(v, shape, d);
    return total;
}

/* Records a CUDA failure in the result and ends the case. */
#define CASE_CUDA(call)                                                                  \
    do {                                                                                 \
        cudaError_t ce_ = (call);                                                        \
        if (ce_ != cudaSuccess) {                                                        \
            r->status = KB_R_FAILED;                                                     \
            snprintf(r->reason, sizeof r->reason, "%s: %s (%s)", #call,                  \
                     cudaGetErrorString(ce_), cudaGetErrorName(ce_));                    \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

/* CASE_CUDA for a launch: the variant's own account of a failure (a
 * library's message, v->last_error) follows the CUDA error. */
#define CASE_LAUNCH(call)                                                                \
    do {                                                                                 \
        cudaError_t ce_ = (call);                                                        \
        if (ce_ != cudaSuccess) {                                                        \
            const char *own_ = v->last_error ? v->last_error() : NULL;                   \
            r->status = KB_R_FAILED;                                                     \
            snprintf(r->reason, sizeof r->reason, "%s: %s (%s)%s%s", #call,              \
                     cudaGetErrorString(ce_), cudaGetErrorName(ce_),                     \
                     own_ && *own_ ? "; " : "", own_ ? own_ : "");                       \
            goto done;                                                                   \
        }                                                                                \
    } while (0)

/* The occupancy calculator's limits, read off the device where it says them. */
static kb_sm_limits sm_limits(int ordinal)
{
    kb_sm_limits L = kb_sm_limits_sm90();
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxRegistersPerMultiprocessor, ordinal) ==
            cudaSuccess && v > 0)
        L.regs_per_sm = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal) ==
            cudaSuccess && v > 0)
        L.smem_per_sm = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal) ==
            cudaSuccess && v > 0)
        L.max_threads_per_sm = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxBlocksPerMultiprocessor, ordinal) ==
            cudaSuccess && v > 0)
        L.max_blocks_per_sm = v;
    return L;
}

/* Fills k from a kernel's launch shape and resources. blocks is the
 * runtime's count of resident blocks per SM, or -1 when it has none (the
 * theoretical occupancy is then unknown); the limiter comes from the
 * calculator's rules either way. */
static void kernel_from(kb_kernel *k, const char *name, kb_dim3 grid, kb_dim3 block, int regs,
                        int64_t static_smem, int64_t dyn_smem, int64_t local, int blocks,
                        const kb_sm_limits *L)
{
    const int max_warps = L->max_threads_per_sm / 32;
    const int threads = (int)(block.x * block.y * block.z);
    kb_strlcpy(k->name, name, sizeof k->name);
    k->grid[0] = grid.x;
    k->grid[1] = grid.y;
    k->grid[2] = grid.z;
    k->block[0] = block.x;
    k->block[1] = block.y;
    k->block[2] = block.z;
    k->registers = regs;
    k->static_smem = static_smem;
    k->dynamic_smem = dyn_smem;
    k->local_bytes = local;
    k->occupancy = NAN;
    if (blocks >= 0 && max_warps > 0) {
        k->blocks_per_sm = blocks;
        int warps_per_block = (threads + 31) / 32; /* a partial warp takes a slot */
        k->occupancy = (double)(blocks * warps_per_block) / (double)max_warps;
    }
    kb_occ_limit lim;
    kb_occupancy_blocks(L, regs, threads, (int)(static_smem + dyn_smem), &lim);
    kb_strlcpy(k->occ_limiter, kb_occ_limit_name(lim), sizeof k->occ_limiter);
}

static void kernel_facts(const kb_launch_log *log, const kb_device *dev, kb_result *r)
{
    free(r->kernels);
    r->kernels = calloc((size_t)(log->n ? log->n : 1), sizeof *r->kernels);
    r->nkernels = 0;
    if (!r->kernels)
        return;
    kb_sm_limits L = sm_limits(dev->ordinal);
    for (int i = 0; i < log->n; i++) {
        const kb_launch_note *n = &log->k[i];
        struct cudaFuncAttributes fa;
        memset(&fa, 0, sizeof fa);
        int regs = 0, blocks = 0;
        int64_t static_smem = 0, local = 0;
        if (cudaFuncGetAttributes(&fa, n->fn) == cudaSuccess) {
            regs = fa.numRegs;
            static_smem = (int64_t)fa.sharedSizeBytes;
            local = (int64_t)fa.localSizeBytes;
        }
        int threads = (int)(n->block.x * n->block.y * n->block.z);
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, n->fn, threads,
                                                          n->dyn_smem) != cudaSuccess)
            blocks = -1;
        kernel_from(&r->kernels[r->nkernels++], n->name, n->grid, n->block, regs, static_smem,
                    (int64_t)n->dyn_smem, local, blocks, &L);
    }
}

/* A launcher that noted no kernels runs a library's: one more launch, traced
 * with the CUPTI Activity API, gives their names and static facts (the
 * occupancy from the calculator's rules). When tracing is not possible the
 * kernels stay unknown and why says so. Returns KB_EENV (e) only when the
 * launcher or the stream fails. */
static kb_status library_kernel_facts(const kb_variant *v, const kb_args *a, cudaStream_t s,
                                      const kb_device *dev, kb_result *r, char *why,
                                      size_t why_n, kb_err *e)
{
    kb_traced_kernel *t = calloc(KB_MAX_KERNELS, sizeof *t);
    int n = 0;
    if (!t)
        return kb_fail(e, KB_EENV, "out of host memory for traced kernels");
    kb_status st = kb_trace_kernels(v->launch, a, s, t, KB_MAX_KERNELS, &n, why, why_n, e);
    if (st == KB_OK && n > 0) {
        kb_kernel *k = calloc((size_t)n, sizeof *k);
        if (!k) {
            free(t);
            return kb_fail(e, KB_EENV, "out of host memory for %d kernels", n);
        }
        kb_sm_limits L = sm_limits(dev->ordinal);
        for (int i = 0; i < n; i++) {
            const int threads = (int)(t[i].block.x * t[i].block.y * t[i].block.z);
            const int blocks = kb_occupancy_blocks(&L, t[i].registers, threads,
                                                   (int)(t[i].static_smem + t[i].dynamic_smem),
                                                   NULL);
            kernel_from(&k[i], t[i].name, t[i].grid, t[i].block, t[i].registers,
                        t[i].static_smem, t[i].dynamic_smem, t[i].local_bytes, blocks, &L);
        }
        free(r->kernels);
        r->kernels = k;
        r->nkernels = n;
    }
    free(t);
    return st;
}

/* The counter pass: the variant runs under the Range Profiler once per replay
 * pass, one range per kernel, between two L2 flushes: its kernels start from a
 * clean L2 as in a timed sample, and what it leaves dirty is counted as its
 * writes (kb_counters_profile). A missing capability leaves the reason in the
 * result. */
static kb_status collect_counters(const kb_variant *v, const kb_args *a, cudaStream_t s,
                                  void *flush, size_t flush_bytes, kb_metric_set set,
                                  const char *untraced, kb_result *r, kb_err *e)
{
    kb_counters *pc = NULL;
    kb_counter_values *cv = calloc(KB_MAX_KERNELS, sizeof *cv);
    char why[256] = "";
    int nk = 0, passes = 0;
    kb_status st = KB_OK;
    if (!cv)
        return kb_fail(e, KB_EENV, "out of host memory for counters");
    if ((st = kb_counters_open(set, &pc, why, sizeof why, e)) != KB_OK || !pc)
        goto done;
    st = kb_counters_profile(pc, v->launch, a, s, flush, flush_bytes, cv, KB_MAX_KERNELS,
                             &nk, &passes, why, sizeof why, e);
    if (st != KB_OK || nk == 0)
        goto done;
    if (nk != r->nkernels && r->nkernels == 0 && untraced[0]) {
        snprintf(why, sizeof why,
                 "the counter pass saw %d kernels of a library, which could not be named: "
                 "%.150s",
                 nk, untraced);
        goto done;
    }
    if (nk != r->nkernels) {
        snprintf(why, sizeof why, "the counter pass saw %d kernels, the launch log %d", nk,
                 r->nkernels);
        goto done;
    }
    r->passes = passes;
    double time_sum = 0, occ_sum = 0;
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
        double t = kb_counter_get(&cv[i], KB_METRIC_DURATION);
        double occ = kb_counter_get(&cv[i], KB_METRIC_OCCUPANCY);
        if (isfinite(t) && isfinite(occ)) {
            time_sum += t;
            occ_sum += t * occ;
        }
    }
    double rd = kb_counter_sum(cv, nk, KB_METRIC_DRAM_READ);
    double wr = kb_counter_sum(cv, nk, KB_METRIC_DRAM_WRITE);
    r->dram_bytes = rd + wr;
    r->excess_traffic = kb_excess_traffic(rd, wr, r->bytes);
    r->achieved_occupancy = time_sum > 0 ? occ_sum / time_sum : NAN;
done:
    if (why[0])
        kb_strlcpy(r->counters_reason, why, sizeof r->counters_reason);
    if (st != KB_OK) {
        /* a counter failure is not the variant's: keep its result, say why */
        const char *own = v->last_error ? v->last_error() : NULL;
        snprintf(r->counters_reason, sizeof r->counters_reason, "counters failed: %.150s%s%.80s",
                 e->msg, own && *own ? "; " : "", own ? own : "");
        st = KB_OK;
    }
    kb_counters_close(pc);
    free(cv);
    return st;
}

/* Short names of the stall reasons for the run table. */
static const char *stall_short(const char *reason)
{
    static const char *const map[][2] = {
        {"long_scoreboard", "long_sb"},   {"short_scoreboard", "short_sb"},
        {"math_pipe_throttle", "math"},   {"mio_throttle", "mio"},
        {"lg_throttle", "lg"},            {"tex_throttle", "tex"},
        {"not_selected", "not_sel"},      {"branch_resolving", "branch"},
        {"no_instruction", "no_inst"},    {"dispatch_stall", "dispatch"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(reason, map[i][0]) == 0)
            return map[i][1];
    return reason;
}

/* The per-result summaries of its kernels that the run table shows: the most
 * registers and local memory of any kernel, and the theoretical occupancy and
 * top two stall reasons of the kernel that ran longest (the first when there
 * are no counters to say). */
static void summarise_kernels(kb_result *r)
{
    int longest = 0;
    double longest_t = -1;
    for (int i = 0; i < r->nkernels; i++) {
        const kb_kernel *k = &r->kernels[i];
        if (k->registers > r->registers)
            r->registers = k->registers;
        if (k->local_bytes > r->local_bytes)
            r->local_bytes = k->local_bytes;
        for (int m = 0; m < k->nmetrics; m++)
            if (strcmp(k->metrics[m].name, KB_METRIC_DURATION) == 0 &&
                k->metrics[m].value > longest_t) {
                longest_t = k->metrics[m].value;
                longest = i;
            }
    }
    if (r->nkernels == 0)
        return;
    const kb_kernel *k = &r->kernels[longest];
    r->theoretical_occupancy = 100.0 * k->occupancy;
    r->top_stalls[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < k->nstalls && i < 2; i++) {
        int w = snprintf(r->top_stalls + used, sizeof r->top_stalls - used, "%s%s %.0f%%",
                         i ? " " : "", stall_short(k->stalls[i].name),
                         100.0 * k->stalls[i].value);
        if (w < 0 || (size_t)w >= sizeof r->top_stalls - used)
            break;
        used += (size_t)w;
    }
}

static int push_sample(kb_result *r, size_t *cap, double us)
{
    if (r->nsamples == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        double *p = realloc(r->samples_us, ncap * sizeof *p);
        if (!p)
            return -1;
        r->samples_us = p;
        *cap = ncap;
    }
    r->samples_us[r->nsamples++] = us;
    return 0;
}

kb_status kb_bench_case(const kb_op *op, const kb_variant *v, const kb_device *dev,
                        const kb_bench_opts *o, kb_result *r, kb_err *e)
{
    kb_status st = KB_OK;
    kb_dtype d;
    kb_launch_log log;
    kb_args a;
    cudaStream_t s = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    void *flush = NULL;
    size_t flush_bytes = (size_t)(KB_FLUSH_L2_FACTOR * dev->l2_bytes), cap = 0;
    char range[128];
    char untraced[256] = ""; /* why a library's kernels could not be traced */
    memset(&a, 0, sizeof a);
    memset(&log, 0, sizeof log);
    if (kb_dtype_parse(r->dtype, &d) != 0)
        return kb_fail(e, KB_EUSAGE, "unknown dtype '%s'", r->dtype);
    snprintf(range, sizeof range, "kbench/%s/%s", op->name, v->name);
    nvtxRangePushA(range);
    /* the counters' host setup overlaps the context creation below */
    if (o->metrics != KB_METRICS_NONE)
        kb_counters_prepare(o->metrics, dev->ordinal);

    a.dtype = d;
    a.shape = r->shape;
    CASE_CUDA(cudaSetDevice(dev->ordinal));
    CASE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CASE_CUDA(cudaEventCreate(&t0));
    CASE_CUDA(cudaEventCreate(&t1));
    for (int i = 0; i < op->nin; i++) {
        size_t b = op->in_bytes(r->shape, d, i);
        if (b)
            CASE_CUDA(cudaMalloc((void **)&a.in[i], b));
    }
    for (int i = 0; i < op->nout; i++) {
        size_t b = op->out_bytes(r->shape, d, i);
        if (b)
            CASE_CUDA(cudaMalloc(&a.out[i], b));
    }
    a.scratch_bytes = scratch_of(v, r->shape, d);
    if (a.scratch_bytes)
        CASE_CUDA(cudaMalloc(&a.scratch, a.scratch_bytes));
    if (flush_bytes) {
        CASE_CUDA(cudaMalloc(&flush, flush_bytes));
        CASE_CUDA(cudaMemsetAsync(flush, 0, flush_bytes, s));
    }

    /* inputs, poisoned outputs, one launch whose kernels are noted, check */
    st = op->generate(&a, r->seed, s, e);
    if (st != KB_OK) {
        r->status = KB_R_FAILED;
        kb_strlcpy(r->reason, e->msg, sizeof r->reason);
        st = KB_OK;
        goto done;
    }
    if (v->prepare) {
        CASE_CUDA(cudaStreamSynchronize(s));
        const int p = v->prepare(&a, r->reason, sizeof r->reason);
        if (p != 0) {
            r->status = p > 0 ? KB_R_SKIPPED : KB_R_FAILED;
            goto done;
        }
    }
    for (int i = 0; i < op->nout; i++)
        CASE_CUDA(kb_poison(a.out[i], op->out_bytes(r->shape, d, i), s));
    a.log = &log;
    CASE_LAUNCH(v->launch(&a, s));
    a.log = NULL;
    CASE_CUDA(cudaStreamSynchronize(s));
    kernel_facts(&log, dev, r);
    r->status = KB_R_OK;
    if (!o->no_check) {
        kb_check c;
        st = op->check(&a, r->seed, &c, e);
        if (st != KB_OK) {
            r->status = KB_R_FAILED;
            kb_strlcpy(r->reason, e->msg, sizeof r->reason);
            st = KB_OK;
            goto done;
        }
        r->checked = 1;
        r->max_abs_err = c.max_abs_err;
        r->rel_l2_err = c.rel_l2_err;
        r->atol = c.atol;
        r->rtol = c.rtol;
        r->rows_checked = c.rows_checked;
        if (!kb_check_passed(&c)) {
            r->status = KB_R_MISMATCH;
            snprintf(r->reason, sizeof r->reason,
                     "%lld of %lld checked elements out of tolerance (atol %g, rtol %g); "
                     "first at %s",
                     (long long)c.bad_elems, (long long)c.elems_checked, c.atol, c.rtol,
                     c.first_bad);
        }
    }

    kb_counters_prepare_wait(); /* no host work of its own during the samples */

    if (log.n == 0) {
        st = library_kernel_facts(v, &a, s, dev, r, untraced, sizeof untraced, e);
        if (st != KB_OK) {
            const char *own = v->last_error ? v->last_error() : NULL;
            r->status = KB_R_FAILED;
            snprintf(r->reason, sizeof r->reason, "%.300s%s%.200s", e->msg,
                     own && *own ? "; " : "", own ? own : "");
            st = KB_OK;
            goto done;
        }
    }

    /* warm-up: at least 3 launches and 50 ms, at most 200 launches */
    double w0 = now_s();
    for (int i = 0; i < 200 && (i < 3 || now_s() - w0 < 0.05); i++) {
        CASE_LAUNCH(v->launch(&a, s));
        if (i % 8 == 7 || i < 3)
            CASE_CUDA(cudaStreamSynchronize(s));
    }
    CASE_CUDA(cudaStreamSynchronize(s));

    /* samples: flush the L2, then time the variant's launches between two events */
    double t_start = now_s(), mean = 0, m2 = 0; /* running stdev/mean (Welford) */
    for (int i = 0; i < o->max_samples; i++) {
        if (flush_bytes)
            CASE_CUDA(kb_flush_l2(flush, flush_bytes, s));
        CASE_CUDA(cudaEventRecord(t0, s));
        CASE_LAUNCH(v->launch(&a, s));
        CASE_CUDA(cudaEventRecord(t1, s));
        CASE_CUDA(cudaEventSynchronize(t1));
        float ms = 0;
        CASE_CUDA(cudaEventElapsedTime(&ms, t0, t1));
        double us = (double)ms * 1e3;
        if (push_sample(r, &cap, us) != 0) {
            st = kb_fail(e, KB_EENV, "out of host memory for samples");
            goto done;
        }
        double n = (double)r->nsamples, dev_us = us - mean;
        mean += dev_us / n;
        m2 += dev_us * (us - mean);
        if ((int)r->nsamples >= o->min_samples) {
            double stdrel = n > 1 && mean > 0 ? sqrt(m2 / (n - 1)) / mean : 0.0;
            if (stdrel <= o->max_noise || now_s() - t_start >= o->time_limit_s)
                break;
        }
    }
    r->sm_clock_mhz = kb_measure_sm_clock(s);
    r->throttled = r->sm_clock_mhz < 0.9 * dev->sm_clock_mhz;
    kb_result_summarise(r);
    kb_strlcpy(r->metric_set, kb_metric_set_name(o->metrics), sizeof r->metric_set);
    if (o->metrics != KB_METRICS_NONE && r->status != KB_R_FAILED)
        st = collect_counters(v, &a, s, flush, flush_bytes, o->metrics, untraced, r, e);
    if (r->counters_reason[0] || r->passes == 0)
        kb_strlcpy(r->metric_set, "none", sizeof r->metric_set);
    summarise_kernels(r);
    CASE_CUDA(cudaGetLastError());
done:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    for (int i = 0; i < KB_MAX_BUFS; i++) {
        cudaFree((void *)a.in[i]);
        cudaFree(a.out[i]);
    }
    cudaFree(a.scratch);
    cudaFree(flush);
    if (s)
        cudaStreamDestroy(s);
    kb_counters_prepare_discard();
    nvtxRangePop();
    return st;
}

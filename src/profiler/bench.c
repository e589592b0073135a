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

double kb_bench_device_bytes(const kb_op *op, const kb_variant *v, kb_dtype d,
                             const int64_t *shape, int64_t l2_bytes)
{
    double total = 2.0 * (double)l2_bytes;
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

static void kernel_facts(const kb_launch_log *log, const kb_device *dev, kb_result *r)
{
    free(r->kernels);
    r->kernels = calloc((size_t)(log->n ? log->n : 1), sizeof *r->kernels);
    r->nkernels = 0;
    if (!r->kernels)
        return;
    int max_warps = 0;
    cudaDeviceGetAttribute(&max_warps, cudaDevAttrMaxThreadsPerMultiProcessor, dev->ordinal);
    max_warps /= 32;
    for (int i = 0; i < log->n; i++) {
        const kb_launch_note *n = &log->k[i];
        kb_kernel *k = &r->kernels[r->nkernels++];
        struct cudaFuncAttributes fa;
        memset(&fa, 0, sizeof fa);
        kb_strlcpy(k->name, n->name, sizeof k->name);
        k->grid[0] = n->grid.x;
        k->grid[1] = n->grid.y;
        k->grid[2] = n->grid.z;
        k->block[0] = n->block.x;
        k->block[1] = n->block.y;
        k->block[2] = n->block.z;
        k->dynamic_smem = (int64_t)n->dyn_smem;
        k->occupancy = NAN;
        if (cudaFuncGetAttributes(&fa, n->fn) == cudaSuccess) {
            k->registers = fa.numRegs;
            k->static_smem = (int64_t)fa.sharedSizeBytes;
            k->local_bytes = (int64_t)fa.localSizeBytes;
        }
        int threads = (int)(n->block.x * n->block.y * n->block.z), blocks = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, n->fn, threads,
                                                          n->dyn_smem) == cudaSuccess &&
            max_warps > 0) {
            k->blocks_per_sm = blocks;
            k->occupancy = (double)(blocks * ((threads + 31) / 32)) / (double)max_warps;
        }
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
    size_t flush_bytes = (size_t)(2 * dev->l2_bytes), cap = 0;
    char range[128];
    memset(&a, 0, sizeof a);
    memset(&log, 0, sizeof log);
    if (kb_dtype_parse(r->dtype, &d) != 0)
        return kb_fail(e, KB_EUSAGE, "unknown dtype '%s'", r->dtype);
    snprintf(range, sizeof range, "kbench/%s/%s", op->name, v->name);
    nvtxRangePushA(range);

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
    if (flush_bytes)
        CASE_CUDA(cudaMalloc(&flush, flush_bytes));

    /* inputs, poisoned outputs, one launch whose kernels are noted, check */
    st = op->generate(&a, r->seed, s, e);
    if (st != KB_OK) {
        r->status = KB_R_FAILED;
        kb_strlcpy(r->reason, e->msg, sizeof r->reason);
        st = KB_OK;
        goto done;
    }
    for (int i = 0; i < op->nout; i++)
        CASE_CUDA(kb_poison(a.out[i], op->out_bytes(r->shape, d, i), s));
    a.log = &log;
    CASE_CUDA(v->launch(&a, s));
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

    /* warm-up: at least 3 launches and 50 ms, at most 200 launches */
    double w0 = now_s();
    for (int i = 0; i < 200 && (i < 3 || now_s() - w0 < 0.05); i++) {
        CASE_CUDA(v->launch(&a, s));
        if (i % 8 == 7 || i < 3)
            CASE_CUDA(cudaStreamSynchronize(s));
    }
    CASE_CUDA(cudaStreamSynchronize(s));

    /* samples: flush L2, then time the variant's launches between two events */
    double t_start = now_s();
    for (int i = 0; i < o->max_samples; i++) {
        if (flush_bytes)
            CASE_CUDA(cudaMemsetAsync(flush, i & 0xff, flush_bytes, s));
        CASE_CUDA(cudaEventRecord(t0, s));
        CASE_CUDA(v->launch(&a, s));
        CASE_CUDA(cudaEventRecord(t1, s));
        CASE_CUDA(cudaEventSynchronize(t1));
        float ms = 0;
        CASE_CUDA(cudaEventElapsedTime(&ms, t0, t1));
        if (push_sample(r, &cap, (double)ms * 1e3) != 0) {
            st = kb_fail(e, KB_EENV, "out of host memory for samples");
            goto done;
        }
        if ((int)r->nsamples >= o->min_samples) {
            kb_result_summarise(r);
            if (r->stdrel <= o->max_noise || now_s() - t_start >= o->time_limit_s)
                break;
        }
    }
    r->sm_clock_mhz = kb_measure_sm_clock(s);
    r->throttled = r->sm_clock_mhz < 0.9 * dev->sm_clock_mhz;
    kb_result_summarise(r);
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
    nvtxRangePop();
    return st;
}

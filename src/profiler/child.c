/* child.c - the profiler's GPU work in child processes, and the answer each
 * child sends its parent (see child.h).
 *
 * An answer is a header (the status of the child's work and its message)
 * followed, when the status is KB_OK, by the body: the raw bytes of a
 * kb_device, of the three ceilings, or of a kb_result followed by its samples
 * and its kernels. */
#include "profiler/child.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profiler/calibrate_mma.h"
#include "profiler/device.h"
#include "profiler/isolate.h"

typedef struct answer_head {
    int32_t status; /* kb_status of the child's work */
    kb_err err;     /* its message when not KB_OK */
} answer_head;

/* The calibration's answer. */
typedef struct ceilings {
    double copy_gbps, mma_tflops, fp32_tflops, copy_batch_gbps;
    double sm_clock_mhz; /* measured after the copies */
} ceilings;

/* ---- the child's side ----------------------------------------------------------- */

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Sends the header of status st (message e) and, when st is KB_OK, the body
 * parts part[0 .. n). Returns the child's exit code: st, or KB_EENV when the
 * pipe failed. */
static int answer(int fd, kb_status st, const kb_err *e, const void *const *part,
                  const size_t *size, int n)
{
    answer_head h;
    memset(&h, 0, sizeof h);
    h.status = (int32_t)st;
    if (st != KB_OK && e)
        h.err = *e;
    if (write_all(fd, &h, sizeof h) != 0)
        return KB_EENV;
    for (int i = 0; st == KB_OK && i < n; i++)
        if (size[i] && write_all(fd, part[i], size[i]) != 0)
            return KB_EENV;
    return (int)st;
}

static int answer_error(int fd, kb_status st, const kb_err *e)
{
    return answer(fd, st, e, NULL, NULL, 0);
}

static int device_main(void *ctx, int fd)
{
    const int ordinal = *(const int *)ctx;
    int n = 0;
    kb_err e = {{0}};
    kb_device d;
    kb_status st = kb_device_count(&n, &e);
    if (st == KB_OK && ordinal >= n)
        st = kb_fail(&e, KB_EUSAGE, "--device %d does not exist (%d GPU%s visible)", ordinal, n,
                     n == 1 ? "" : "s");
    if (st == KB_OK)
        st = kb_device_query(ordinal, &d, &e);
    const void *part[] = {&d};
    const size_t size[] = {sizeof d};
    return answer(fd, st, &e, part, size, 1);
}

static int calibrate_main(void *ctx, int fd)
{
    const int ordinal = *(const int *)ctx;
    kb_err e = {{0}};
    ceilings c = {NAN, NAN, NAN, NAN, NAN};
    kb_status st = KB_OK;
    cudaError_t ce = cudaSetDevice(ordinal);
    if (ce != cudaSuccess)
        st = kb_fail(&e, KB_EENV, "cudaSetDevice(%d) failed: %s", ordinal, cudaGetErrorString(ce));
    if (st == KB_OK)
        st = kb_calibrate_copy(&c.copy_gbps, &c.copy_batch_gbps, &e);
    if (st == KB_OK)
        c.sm_clock_mhz = kb_measure_sm_clock(0);
    if (st == KB_OK)
        st = kb_calibrate_mma(&c.mma_tflops, &c.fp32_tflops, &e);
    const void *part[] = {&c};
    const size_t size[] = {sizeof c};
    return answer(fd, st, &e, part, size, 1);
}

typedef struct case_ctx {
    const kb_op *op;
    const kb_variant *v;
    const kb_device *dev;
    const kb_bench_opts *o;
    kb_result *r;
} case_ctx;

static int case_main(void *ctx, int fd)
{
    const case_ctx *c = ctx;
    kb_err e = {{0}};
    kb_status st = kb_bench_case(c->op, c->v, c->dev, c->o, c->r, &e);
    if (st != KB_OK)
        return answer_error(fd, st, &e);
    const kb_result *r = c->r;
    const void *part[] = {r, r->samples_us, r->kernels};
    const size_t size[] = {sizeof *r, r->nsamples * sizeof *r->samples_us,
                           (size_t)(r->nkernels > 0 ? r->nkernels : 0) * sizeof *r->kernels};
    return answer(fd, KB_OK, NULL, part, size, 3);
}

/* ---- the parent's side ---------------------------------------------------------- */

/* Runs fn in a child with the time limit (tick, when not NULL, called while
 * it runs) and reads its answer: on KB_OK *buf
 * is the whole answer (malloc'd, the caller frees it) and its body starts at
 * *buf + sizeof(answer_head), *body_len bytes. Otherwise the child's own status
 * and message, or KB_EENV "child process <how it ended> without an answer". */
static kb_status ask(kb_child_fn fn, void *ctx, double timeout_s, kb_child_tick tick,
                     void *tick_ctx, char **buf, size_t *body_len, kb_child_end *end, kb_err *e)
{
    size_t len = 0;
    answer_head h;
    *buf = NULL;
    *body_len = 0;
    kb_status st = kb_isolate_watched(fn, ctx, timeout_s, tick, tick_ctx, buf, &len, end, e);
    if (st != KB_OK)
        return st;
    if (len < sizeof h) {
        char how[128];
        kb_child_end_describe(end, timeout_s, how, sizeof how);
        st = kb_fail(e, KB_EENV, "child process %s without an answer", how);
    } else {
        memcpy(&h, *buf, sizeof h);
        h.err.msg[sizeof h.err.msg - 1] = '\0';
        if (h.status != KB_OK)
            st = kb_fail(e, h.status == KB_EUSAGE ? KB_EUSAGE : KB_EENV, "%s", h.err.msg);
    }
    if (st != KB_OK) {
        free(*buf);
        *buf = NULL;
        return st;
    }
    *body_len = len - sizeof h;
    return KB_OK;
}

/* KB_EENV: the answer's body is not the size its kind has. */
static kb_status bad_answer(const char *what, size_t got, kb_err *e)
{
    return kb_fail(e, KB_EENV, "the child's %s came back with %zu bytes, not a whole answer",
                   what, got);
}

kb_status kb_child_device(int ordinal, kb_device *d, kb_err *e)
{
    char *buf = NULL;
    size_t n = 0;
    kb_child_end end;
    kb_status st = ask(device_main, &ordinal, KB_CHILD_QUERY_S, NULL, NULL, &buf, &n, &end, e);
    if (st != KB_OK)
        return st;
    if (n == sizeof *d)
        memcpy(d, buf + sizeof(answer_head), sizeof *d);
    else
        st = bad_answer("device query", n, e);
    free(buf);
    return st;
}

/* Measures GPU `ordinal`'s copy bandwidth (cold and batch) and matrix-unit
 * and fp32 peaks into d's ceilings, and the SM clock then, (kb_calibrate_copy and kb_calibrate_mma in a child). KB_EENV
 * with the CUDA or cuBLAS error, or when the child fails. */
static kb_status child_calibrate(int ordinal, kb_device *d, kb_err *e)
{
    char *buf = NULL;
    size_t n = 0;
    kb_child_end end;
    ceilings c;
    kb_status st = ask(calibrate_main, &ordinal, KB_CHILD_CALIBRATE_S, NULL, NULL, &buf, &n, &end, e);
    if (st != KB_OK)
        return st;
    if (n == sizeof c) {
        memcpy(&c, buf + sizeof(answer_head), sizeof c);
        d->copy_gbps = c.copy_gbps;
        d->mma_tflops = c.mma_tflops;
        d->fp32_tflops = c.fp32_tflops;
        d->copy_batch_gbps = c.copy_batch_gbps;
        d->ceilings_sm_clock_mhz = c.sm_clock_mhz;
    } else {
        st = bad_answer("calibration", n, e);
    }
    free(buf);
    return st;
}

/* The GPU as the parent sees it around one case. */
typedef struct gpu_watch {
    kb_nvml *gpu;   /* NULL: unavailable */
    long child;     /* the case's child, once started */
    kb_gpu_watch w; /* what was seen */
} gpu_watch;

/* Reads the processes on the GPU (other than this process and the case's
 * child; a reading that shows another is taken again a few times, since a
 * child that has just ended may still be listed) into w, and the throttle
 * reasons. */
static void watch_procs(gpu_watch *w)
{
    kb_gpu_state s;
    const long ours[2] = {(long)getpid(), w->child};
    kb_nvml_sample_settled(w->gpu, &s, ours, w->child ? 2 : 1);
    kb_gpu_watch_procs(&w->w, w->gpu ? &s : NULL, ours, w->child ? 2 : 1);
    kb_gpu_watch_reasons(&w->w, &s);
}

/* While the child runs: the throttle reasons only. Its own pid as the driver
 * lists it may not be the one fork gave (a PID namespace), so processes are
 * read only while no child of ours runs. */
static void watch_tick(void *ctx, long child_pid)
{
    gpu_watch *w = ctx;
    kb_gpu_state s;
    w->child = child_pid;
    kb_nvml_sample(w->gpu, &s);
    kb_gpu_watch_reasons(&w->w, &s);
}

/* Rebuilds the child's result from body[0 .. n) into *out (its own copies of
 * the samples and kernels). KB_EENV when the sizes do not add up or out of
 * memory. */
static kb_status result_from(const char *body, size_t n, kb_result *out, kb_err *e)
{
    kb_result r;
    if (n < sizeof r)
        return bad_answer("result", n, e);
    memcpy(&r, body, sizeof r);
    const size_t rest = n - sizeof r;
    const size_t nk = r.nkernels > 0 ? (size_t)r.nkernels : 0;
    if (r.nsamples > rest / sizeof *r.samples_us ||
        nk > (rest - r.nsamples * sizeof *r.samples_us) / sizeof *r.kernels ||
        rest != r.nsamples * sizeof *r.samples_us + nk * sizeof *r.kernels)
        return bad_answer("result", n, e);
    const size_t sbytes = r.nsamples * sizeof *r.samples_us, kbytes = nk * sizeof *r.kernels;
    r.samples_us = sbytes ? malloc(sbytes) : NULL;
    r.kernels = kbytes ? malloc(kbytes) : NULL;
    if ((sbytes && !r.samples_us) || (kbytes && !r.kernels)) {
        free(r.samples_us);
        free(r.kernels);
        return kb_fail(e, KB_EENV, "out of memory reading a child's result");
    }
    if (sbytes)
        memcpy(r.samples_us, body + sizeof r, sbytes);
    if (kbytes)
        memcpy(r.kernels, body + sizeof r + sbytes, kbytes);
    *out = r;
    return KB_OK;
}

/* Runs kb_bench_case(op, v, dev, o, r) in a child, allowed twice the sampling
 * time limit plus KB_CHILD_HANG_MARGIN_S, reading the GPU's throttle reasons
 * into w while it runs (w->child: its pid), and replaces *r by the child's
 * result.
 * When the child fails (a crash, a hang, an error of its own, no answer), *r
 * is left as it was, the message (what failed, or how the child ended) is in
 * e, *interrupted is 1 when the user interrupted the run, and KB_EENV is
 * returned. */
static kb_status child_case(const kb_op *op, const kb_variant *v, const kb_device *dev,
                            const kb_bench_opts *o, kb_result *r, gpu_watch *w, int *interrupted,
                            kb_err *e)
{
    case_ctx ctx = {op, v, dev, o, r};
    kb_child_end end;
    char *buf = NULL;
    size_t n = 0;
    kb_result got;
    *interrupted = 0;
    kb_status st = ask(case_main, &ctx, 2 * o->time_limit_s + o->warmup_s + KB_CHILD_HANG_MARGIN_S,
                       w->gpu ? watch_tick : NULL, w, &buf, &n, &end, e);
    w->child = end.pid;
    if (st == KB_OK)
        st = result_from(buf + sizeof(answer_head), n, &got, e);
    free(buf);
    if (st != KB_OK) {
        *interrupted = end.interrupted;
        return KB_EENV;
    }
    kb_result_release(r);
    *r = got;
    return KB_OK;
}

/* ---- the policy's runs ------------------------------------------------------------ */

kb_status kb_case_run(const kb_op *op, const kb_variant *v, const kb_device *dev,
                      const kb_bench_opts *o, kb_nvml *gpu, kb_result *r, kb_err *e)
{
    kb_dtype d;
    int interrupted = 0;
    gpu_watch w;
    memset(&w, 0, sizeof w);
    w.gpu = gpu;
    if (kb_dtype_parse(r->dtype, &d) != 0)
        return kb_fail(e, KB_EUSAGE, "unknown dtype '%s'", r->dtype);
    if (kb_case_skip(op, v, d, r->shape, dev, r->reason, sizeof r->reason)) {
        r->status = KB_R_SKIPPED;
        return KB_OK;
    }
    if (o->exclusive && kb_gpu_exclusive(gpu, dev->ordinal, e) != KB_OK)
        return KB_EENV;
    watch_procs(&w);
    kb_status st = child_case(op, v, dev, o, r, &w, &interrupted, e);
    if (st != KB_OK && interrupted)
        return kb_fail(e, KB_EENV, "interrupted");
    if (st != KB_OK) {
        /* the child crashed, hung or answered nonsense: that is this case's failure */
        r->status = KB_R_FAILED;
        kb_strlcpy(r->reason, e->msg, sizeof r->reason);
        e->msg[0] = '\0';
    }
    watch_procs(&w);
    kb_gpu_watch_apply(&w.w, r);
    return KB_OK;
}

kb_status kb_ceilings_ensure(int ordinal, kb_device *d, kb_calibrate_when when, int *measured,
                             char *why, size_t why_size, kb_err *e)
{
    char driver[sizeof d->ceilings_driver];
    *measured = 0;
    kb_driver_version(driver, sizeof driver);
    if (!kb_calibration_due(d, when, driver, time(NULL), why, why_size))
        return KB_OK;
    kb_status st = child_calibrate(ordinal, d, e);
    if (st != KB_OK)
        return st;
    for (int i = 0; i < KB_NCEILINGS; i++)
        if (!isfinite(kb_device_ceiling_of(d, i)))
            return kb_fail(e, KB_EENV, "calibration gave no %s", kb_ceiling_name(i));
    kb_iso_time(time(NULL), d->ceilings_at, sizeof d->ceilings_at);
    kb_strlcpy(d->ceilings_driver, driver, sizeof d->ceilings_driver);
    d->ceilings_mem_clock_mhz = d->mem_clock_mhz;
    *measured = 1;
    return KB_OK;
}

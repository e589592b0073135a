/* bench.h - one case (operator, variant, dtype, shape) measured the kbench way:
 * fresh random inputs, a poisoned-output check against the fp64 reference,
 * static kernel facts, then event-timed samples with an L2 flush before each,
 * and the counters in a pass of their own. */
#ifndef KB_BENCH_H
#define KB_BENCH_H

#include "kernels/op.h"
#include "profiler/counters.h"
#include "profiler/policy.h"
#include "results/result.h"

typedef struct kb_bench_opts {
    int min_samples;     /* at least this many timed samples */
    int max_samples;     /* at most this many */
    double max_noise;    /* stop once stdev/mean is under this fraction */
    double max_error;    /* ... or once the mean's standard error, stdev / sqrt(n) /
                          * mean, is (0: this rule off) */
    double time_limit_s; /* ... or once sampling has taken this long */
    double warmup_s;     /* warm-up at least this long, seconds, with no cap on its
                          * launches (0: the default, see bench.c) */
    int no_check;        /* skip the reference check (recorded) */
    kb_metric_set metrics; /* counters to collect after the samples */
    int exclusive;       /* refuse a case while another process uses the GPU */
} kb_bench_opts;

/* Initialises r and names the case in it: operator, variant, dtype, axes and
 * shape, seed, the model's bytes and flops, which ceiling it is measured
 * against, and the variant's scratch bytes. */
void kb_bench_name_case(kb_result *r, const kb_op *op, const kb_variant *v, kb_dtype d,
                        const int64_t *shape, uint64_t seed);

/* Runs the case on GPU dev->ordinal in this process; r must already name the
 * case (kb_bench_name_case). A case the policy skips (kb_case_skip, or the
 * variant's prepare hook) is recorded as skipped with the reason; otherwise
 * flags it l2_resident where the policy says so (kb_case_l2_resident) and
 * fills status, check figures, the cold samples, the batch time (after
 * them: batches of back-to-back launches lasting at least a millisecond at
 * the cold median), SM clock, kernels and, when o->metrics
 * asks for them, the counters (or the reason there are none), then every
 * figure (kb_result_summarise, kb_result_summarise_kernels, kb_result_derive
 * against dev's ceilings). A wrong output or a CUDA failure is recorded in r
 * (mismatch/failed) and the call still returns KB_OK; only host
 * out-of-memory for the samples returns KB_EENV, and KB_EUSAGE an unknown
 * dtype in r. */
kb_status kb_bench_case(const kb_op *op, const kb_variant *v, const kb_device *dev,
                        const kb_bench_opts *o, kb_result *r, kb_err *e);

/* A case's device buffers for a->shape and a->dtype (a's pointers null
 * before): op's inputs and outputs, v's scratch (a->scratch_bytes set), and,
 * when flush_bytes is not 0, the L2 flush buffer in *flush, zeroed on s. On
 * a failure *call names the call that failed (what was allocated stays in a
 * and *flush, for kb_case_free). */
cudaError_t kb_case_alloc(const kb_op *op, const kb_variant *v, kb_args *a, size_t flush_bytes,
                          void **flush, cudaStream_t s, const char **call);

/* Frees what kb_case_alloc allocated (null pointers are skipped). */
void kb_case_free(kb_args *a, void *flush);

#endif

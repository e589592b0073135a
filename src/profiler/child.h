/* child.h - the profiler's GPU work, each piece in a child process of its own
 * (profiler/isolate.h), as the policy (profiler/policy.h) says: the device
 * query, the calibration when the ceilings are missing or asked for, and each
 * case that is not skipped. `run` and `calibrate` both go through here; the
 * commands only parse, call and print. The child answers through a pipe with
 * the status of its work, its message, and the result as raw bytes of the
 * model's structures (the child is a fork of the same program, so the layout is
 * the same and every double comes back exactly). The parent, which writes the
 * store, never touches CUDA. */
#ifndef KB_CHILD_H
#define KB_CHILD_H

#include "kernels/op.h"
#include "profiler/bench.h"
#include "profiler/nvml.h"
#include "profiler/policy.h"
#include "results/result.h"
#include "util/status.h"

/* Seconds a case's child may take beyond its two sampling time limits (cold
 * and batch samples) (context
 * creation, inputs, the check, warm-up, the counter pass) before it counts as
 * hung. */
#define KB_CHILD_HANG_MARGIN_S 120.0
/* Seconds the device query may take (driver start-up on a cold machine). */
#define KB_CHILD_QUERY_S 120.0
/* Seconds the calibration may take: copies of 2 GiB and two 8192^3 GEMMs, a
 * few seconds on an H200, with room for slower GPUs. */
#define KB_CHILD_CALIBRATE_S 300.0

/* Fills d for GPU `ordinal` (kb_device_query in a child). KB_EENV "no CUDA
 * GPU available (...)" without one; KB_EUSAGE "--device N does not exist (M
 * GPUs visible)" for an ordinal past the last; KB_EENV when the child fails. */
kb_status kb_child_device(int ordinal, kb_device *d, kb_err *e);

/* Runs case r (named by kb_bench_name_case) on dev: skipped with its reason
 * (kb_case_skip), or measured by kb_bench_case in a child process. A child
 * that crashes, hangs past twice the sampling time limit plus
 * KB_CHILD_HANG_MARGIN_S, or answers nothing useful makes the case failed with
 * the reason (so does a child that could not be started). With gpu (NULL: the
 * driver's library is unavailable), the GPU is read before the child starts,
 * while it runs and after it ends: another compute process (not this one, not
 * the child) flags r gpu_shared, thermal or power throttling marks it
 * throttled with the reason (kb_gpu_watch_apply); without, r is flagged
 * gpu_unchecked. Fills r whatever happens; returns KB_EENV "interrupted" only
 * when the user interrupted the run, and, with o->exclusive, KB_EENV "another
 * process (pid N) is using GPU ..." before the child starts when one is. */
kb_status kb_case_run(const kb_op *op, const kb_variant *v, const kb_device *dev,
                      const kb_bench_opts *o, kb_nvml *gpu, kb_result *r, kb_err *e);

/* Measures GPU `ordinal`'s ceilings into d (in a child process) when the
 * policy says so (kb_calibration_due, against the driver's version now and
 * the time), why in why ("" when not measured); *measured = 1 when it did, so
 * that the caller stores them, and then d also holds when, under which driver
 * and at which clocks they were measured. d holds the device
 * (kb_child_device) and the ceilings known so far. KB_EENV with the CUDA or
 * cuBLAS error, or when the calibration gave no value. */
kb_status kb_ceilings_ensure(int ordinal, kb_device *d, kb_calibrate_when when, int *measured,
                             char *why, size_t why_size, kb_err *e);

#endif

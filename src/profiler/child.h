/* child.h - the profiler's GPU work, each piece in a child process of its own
 * (profiler/isolate.h): the device query, the calibration and one case. The
 * child answers through a pipe with the status of its work, its message, and
 * the result as raw bytes of the model's structures (the child is a fork of
 * the same program, so the layout is the same and every double comes back
 * exactly). The parent never touches CUDA. */
#ifndef KB_CHILD_H
#define KB_CHILD_H

#include "kernels/op.h"
#include "profiler/bench.h"
#include "results/result.h"
#include "util/status.h"

/* Seconds a case's child may take beyond the sampling time limit (context
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

/* Measures GPU `ordinal`'s copy bandwidth and matrix-unit and fp32 peaks into
 * d's ceilings (kb_calibrate_copy and kb_calibrate_mma in a child). KB_EENV
 * with the CUDA or cuBLAS error, or when the child fails. */
kb_status kb_child_calibrate(int ordinal, kb_device *d, kb_err *e);

/* Runs kb_bench_case(op, v, dev, o, r) in a child, allowed the sampling time
 * limit plus KB_CHILD_HANG_MARGIN_S, and replaces *r by the child's result
 * (the caller owns it, kb_result_release). When the child fails (a crash, a
 * hang, an error of its own, no answer), *r is left as it was, the message
 * (what failed, or how the child ended) is in e, *interrupted is 1 when the
 * user interrupted the run, and KB_EENV is returned. */
kb_status kb_child_case(const kb_op *op, const kb_variant *v, const kb_device *dev,
                        const kb_bench_opts *o, kb_result *r, int *interrupted, kb_err *e);

#endif

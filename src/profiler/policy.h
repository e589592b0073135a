/* policy.h - the profiler's decisions about a run: which cases are skipped and
 * why, which shapes are refused before anything runs because they cannot fit
 * on the GPU, and when the GPU's ceilings must be measured first. `run` and
 * `calibrate` both go through here; the commands only parse, call and print.
 *
 * Every CUDA call happens in a child process (profiler/child.h): the caller,
 * which writes the store, never initialises CUDA. */
#ifndef KB_POLICY_H
#define KB_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/op.h"
#include "profiler/bench.h"
#include "results/result.h"
#include "util/status.h"

/* The share of the GPU's memory a case may plan to use: the rest is left to
 * the CUDA context, the L2 flush's rounding and the libraries' workspaces
 * (cuBLAS, cuDNN), which the byte counts do not see. */
#define KB_DEVICE_MEMORY_SHARE 0.97

/* Beyond this many elements (product of the axes) a shape's byte count is not
 * computed (the operators' size_t products could wrap): it is estimated at 8
 * bytes an element, which is far beyond any GPU's memory anyway. */
#define KB_HUGE_SHAPE_ELEMS 1e15

/* 1 when case (op, v, d, shape) is not run on dev, with the reason in why:
 * the variant does not support the dtype, the variant's own `unsupported` test
 * says no, or the case needs more than KB_DEVICE_MEMORY_SHARE of the device's
 * memory. 0 when it runs. */
int kb_case_skip(const kb_op *op, const kb_variant *v, kb_dtype d, const int64_t *shape,
                 const kb_device *dev, char *why, size_t why_size);

/* KB_OK when the inputs, outputs and L2 flush buffer of op at shape in dtype d
 * fit in KB_DEVICE_MEMORY_SHARE of dev's memory; else KB_EUSAGE "shape
 * rows=...,cols=... (fp32) is too large: it needs N bytes of device memory
 * (X GiB), GPU has M". A run refuses such a shape before anything runs. */
kb_status kb_case_fits(const kb_op *op, kb_dtype d, const int64_t *shape,
                       const kb_device *dev, kb_err *e);

/* Runs case r (named by kb_bench_name_case) on dev: skipped with its reason
 * (kb_case_skip), or measured by kb_bench_case in a child process. A child
 * that crashes, hangs past the sampling time limit plus KB_CHILD_HANG_MARGIN_S,
 * or answers nothing useful makes the case failed with the reason (so does a
 * child that could not be started). Fills r whatever happens; returns KB_EENV
 * "interrupted" only when the user interrupted the run. */
kb_status kb_case_run(const kb_op *op, const kb_variant *v, const kb_device *dev,
                      const kb_bench_opts *o, kb_result *r, kb_err *e);

/* 1 when a ceiling that % of peak needs (copy bandwidth, matrix-unit and fp32
 * peaks) is unknown (NAN) in d. */
int kb_ceilings_missing(const kb_device *d);

/* When to measure the ceilings. */
typedef enum kb_calibrate_when {
    KB_CALIBRATE_IF_MISSING, /* `run`: only when one is unknown */
    KB_CALIBRATE_ALWAYS,     /* `calibrate` */
} kb_calibrate_when;

/* Measures GPU `ordinal`'s ceilings into d (in a child process) when `when`
 * says so; *measured = 1 when it did, so that the caller stores them. d
 * holds the device (kb_child_device) and the ceilings known so far. KB_EENV
 * with the CUDA or cuBLAS error, or when the calibration gave no value. */
kb_status kb_ceilings_ensure(int ordinal, kb_device *d, kb_calibrate_when when, int *measured,
                             kb_err *e);

#endif

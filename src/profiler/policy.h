/* policy.h - the profiler's decisions about a run: the device memory a case
 * needs, which cases are skipped and why, which shapes are refused before
 * anything runs because they cannot fit on the GPU, and when the GPU's ceilings
 * must be measured. Pure rules, no CUDA: the case's child applies them
 * (profiler/bench.h), and so does the parent before it starts one
 * (profiler/child.h: kb_case_run, kb_ceilings_ensure, shared by `run` and
 * `calibrate`). */
#ifndef KB_POLICY_H
#define KB_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kernels/op.h"
#include "results/result.h"
#include "util/status.h"

/* The L2 flush reads a buffer this many times the L2's size: with twice, about
 * 28 MB of the previous launch's dirty lines survived on the H200 and were
 * written back inside the next timed launch (Hopper's L2 is two partitions that
 * may each hold a copy of a line read). */
#define KB_FLUSH_L2_FACTOR 4

/* The share of the GPU's memory a case may plan to use: the rest is left to
 * the CUDA context, the L2 flush's rounding and the libraries' workspaces
 * (cuBLAS, cuDNN), which the byte counts do not see. */
#define KB_DEVICE_MEMORY_SHARE 0.97

/* Beyond this many elements (product of the axes) a shape's byte count is not
 * computed (the operators' size_t products could wrap): it is estimated at 8
 * bytes an element, which is far beyond any GPU's memory anyway. Below it no
 * buffer (a product of some of the axes, a few bytes an element) comes near
 * size_t's 1.8e19. The product of the axes is not the element count of every
 * operator: a matmul's m x n x k counts products, and shapes up to about 2e16
 * of them (m = n = k = 2^17 in bf16, 103 GB) fit in an H200, so the bytes must
 * be computed for them. */
#define KB_HUGE_SHAPE_ELEMS 1e17

/* Bytes of device memory a case needs: inputs, outputs, the variant's scratch
 * (none when v is NULL) and the L2 flush buffer. */
double kb_case_device_bytes(const kb_op *op, const kb_variant *v, kb_dtype d,
                            const int64_t *shape, int64_t l2_bytes);

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

/* Whether a series of n samples (their running mean and sum of squared
 * deviations m2, Welford) has converged: its relative spread stdev / mean is
 * at most max_noise, or the mean's relative standard error stdev / sqrt(n) /
 * mean is at most max_error (when max_error > 0). The second rule ends the
 * series of a kernel whose launches jitter by more than max_noise once its
 * median is known as precisely, instead of sampling it to the time limit (on
 * a power-capped GPU, seconds of load that leave it hotter and slower than
 * the variants it is compared with). */
int kb_series_converged(double n, double mean, double m2, double max_noise, double max_error);

/* 1 when the inputs and outputs of op at shape in dtype d fit in
 * KB_L2_RESIDENT_FACTOR times the L2 (l2_bytes > 0): back-to-back launches may
 * then find them in the L2, and the case's DRAM figures are not a bandwidth
 * measurement (the result is flagged l2_resident). */
#define KB_L2_RESIDENT_FACTOR 2
int kb_case_l2_resident(const kb_op *op, kb_dtype d, const int64_t *shape, int64_t l2_bytes);

/* 1 when a ceiling that % of peak needs (copy bandwidth cold and batch,
 * matrix-unit and fp32 peaks) is unknown (NAN) in d. */
int kb_ceilings_missing(const kb_device *d);

/* Stored ceilings older than this are measured again by `run`: clocks, power
 * policy and firmware change under a driver version too. */
#define KB_CEILINGS_MAX_AGE_DAYS 30

/* The age of d's ceilings in days at time now (ceilings_at), or NAN when they
 * have no date that reads (ISO 8601 UTC, "2026-12-01T05:53:00Z"). */
double kb_ceilings_age_days(const kb_device *d, time_t now);

/* When to measure the ceilings. */
typedef enum kb_calibrate_when {
    KB_CALIBRATE_IF_STALE, /* `run`: when one is missing or they are stale */
    KB_CALIBRATE_ALWAYS,   /* `calibrate`, `run --recalibrate` */
} kb_calibrate_when;

/* 1 when d's ceilings must be measured now, with why in why ("no calibrated
 * ceilings stored", "the ceilings were measured under driver 570.86, this is
 * 580.159", "the ceilings are 41 days old", "the stored ceilings have no
 * date", "asked for"): always; when one is missing; when they have no date or
 * are older than KB_CEILINGS_MAX_AGE_DAYS at time now; when driver (the
 * driver's version now, "" when unknown) is known and differs from the one
 * they were measured under (or that one is unknown). 0 otherwise. */
int kb_calibration_due(const kb_device *d, kb_calibrate_when when, const char *driver,
                       time_t now, char *why, size_t why_size);

#endif

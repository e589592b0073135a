/* result.h - the one result model. A run holds the device it ran on and one
 * result per (operator, variant, dtype, shape). The profiler fills it, the store
 * and the JSON reader rebuild it, and every writer (text, markdown, CSV, HTML,
 * JSON) reads it. Every figure is computed here, once (figures.c): summaries of
 * the samples, throughput and % of peak, excess traffic, speed-up over naive,
 * the per-result summaries of its kernels; no writer computes one.
 *
 * This layer depends on util alone; the profiler, the store and the report
 * writers depend on it.
 *
 * Floating-point fields that are not known hold NAN (written as JSON null). */
#ifndef KB_RESULT_H
#define KB_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Two SM clocks further apart than this (the higher over the lower): results
 * that met the power cap differently; a case's table and a comparison say so
 * (kb_clocks_apart). */
#define KB_CLOCKS_APART 1.05

/* Axes of a shape. The operators' own limit, KB_MAX_AXES in kernels/op.h, is
 * held to this one where the two meet (profiler/bench.c). */
#define KB_RES_MAX_AXES 6

typedef enum kb_rstatus {
    KB_R_OK = 0,       /* checked and within tolerance (or --no-check) */
    KB_R_MISMATCH = 1, /* ran, but the output is wrong */
    KB_R_FAILED = 2,   /* crashed, hung, CUDA error, out of memory */
    KB_R_SKIPPED = 3,  /* not run: dtype or shape unsupported, too large */
} kb_rstatus;

/* 1 when SM clocks a and b (MHz) are both known (finite, > 0) and more than
 * KB_CLOCKS_APART apart. */
int kb_clocks_apart(double a, double b);

const char *kb_rstatus_name(kb_rstatus s); /* "ok", "mismatch", "failed", "skipped" */
int kb_rstatus_parse(const char *s, kb_rstatus *out); /* 0 or -1 */

/* Counters per kernel (the largest set has 32; the profiler's per-kernel
 * buffers are this size, profiler/counters.h). */
#define KB_RES_MAX_METRICS 48
/* Warp stall reasons per kernel (GH100 has 20). */
#define KB_RES_MAX_STALLS 24

/* A named figure: a CUPTI metric and its value, or a stall reason and its
 * fraction of the stalled warp cycles. */
typedef struct kb_named_value {
    char name[96];
    double value;
} kb_named_value;

/* Static facts of one kernel of a variant, and its counters when collected. */
typedef struct kb_kernel {
    char name[128];
    unsigned grid[3], block[3];
    int registers;        /* per thread */
    int64_t static_smem;  /* bytes per block */
    int64_t dynamic_smem; /* bytes per block */
    int64_t local_bytes;  /* local memory per thread (spills, stack) */
    int blocks_per_sm;    /* theoretical resident blocks per SM */
    double occupancy;     /* theoretical: resident warps / max warps per SM, 0..1 */
    char occ_limiter[16]; /* what limits it: "registers", "shared memory", "warps",
                             "blocks", or "" when unknown */
    int nmetrics;         /* counters of the run's metric set, in set order */
    kb_named_value metrics[KB_RES_MAX_METRICS];
    int nstalls;          /* stall reasons, largest fraction first; fractions sum to 1 */
    kb_named_value stalls[KB_RES_MAX_STALLS];
} kb_kernel;

typedef struct kb_result {
    char op[32];
    char variant[48];
    char dtype[8];
    int naxes;
    char axis[KB_RES_MAX_AXES][16];
    int64_t shape[KB_RES_MAX_AXES];
    kb_rstatus status;
    char reason[512]; /* why not ok, or "" */
    uint64_t seed;    /* input seed */
    char source_path[512]; /* a variant from the user's own file: the file, */
    char source_sha256[65]; /* and the SHA-256 of the source it ran; "" otherwise */

    int checked;        /* 0 when run with --no-check */
    double max_abs_err; /* check figures (NAN when not checked) */
    double rel_l2_err;
    double atol, rtol;
    int64_t rows_checked;

    double median_us, min_us, max_us; /* timing summary, microseconds */
    double stdrel;                    /* sample standard deviation / mean */
    double *samples_us;               /* every timed sample; owned (malloc) */
    size_t nsamples;
    double sm_clock_mhz; /* SM clock measured right after the cold samples */
    int throttled;       /* SM clock under 90% of the device's peak, or the driver
                            reported thermal or power throttling during the case */
    char throttle_reason[64]; /* why throttled: "sm clock under 90% of peak",
                                 "sw power cap", ...; "" when not throttled */

    /* The batch time: the median of samples of batch_launches back-to-back
     * launches (no L2 flush between them) divided by batch_launches, so that
     * the write-back of what a launch leaves dirty in the L2 is charged to the
     * next one. NAN when not measured. */
    double batch_us;
    double batch_stdrel; /* sample standard deviation / mean of the batch samples */
    int batch_launches;  /* launches per batch sample; 0 when not measured */
    double batch_sm_clock_mhz; /* SM clock measured right after the batch samples */

    unsigned flags; /* KB_FLAG_* bits */

    double bytes, flops; /* the operator's model */
    char bound[8];       /* "memory" or "compute": which ceiling pct_peak is of */
    double extra_bytes;  /* device memory the variant needs beyond inputs and outputs */

    double gbps, tflops; /* derived from model and median */
    double pct_peak;     /* % of the device's calibrated ceiling (cold: the copy
                            ceiling measured cold) */
    double gbps_batch, tflops_batch; /* derived from model and batch_us */
    double pct_peak_batch; /* % of the ceiling measured back to back */
    double speedup;      /* median of the ok `naive` result of its case (same op,
                            dtype and shape) over this median; NAN when this
                            result is not ok or the case has no such naive
                            result. Kept current by kb_run_add. */
    double speedup_batch; /* the same, of the batch times */

    kb_kernel *kernels; /* owned (malloc) */
    int nkernels;

    /* Counters (a pass of their own after the samples; see --metrics). */
    char metric_set[8];        /* "none", "core", "sol", "stalls", "full" */
    int passes;                /* replay passes the set needed per kernel; 0 for none */
    char counters_reason[256]; /* why there are no counters (cause and fix), or "" */
    double dram_bytes;         /* DRAM bytes read + written, all kernels; NAN if none */
    double excess_traffic;     /* dram_bytes / bytes (the model); ~1 means no waste */
    double achieved_occupancy; /* sm__warps_active % of peak of the longest kernel
                                  (the one theoretical_occupancy is of) */
    double dram_gbps;          /* dram_bytes / median time (derived) */

    /* One figure per result taken from its kernels, filled by the producer (the
     * child that measures the case) so that writers compute nothing. */
    double theoretical_occupancy; /* %, 0..100: the theoretical occupancy of the
                                     kernel with the longest duration; NAN unknown */
    int registers;                /* most registers per thread of any kernel; -1 unknown */
    int64_t local_bytes;          /* most local bytes per thread (spills, stack) of
                                     any kernel; -1 unknown */
    char top_stalls[96];          /* the largest stall reasons of the longest kernel,
                                     short names and % of stalled cycles, at most two
                                     and 24 characters: "long_sb 52% barrier 18%";
                                     "" when stalls were not collected */
} kb_result;

typedef struct kb_device {
    int ordinal;
    char name[128];
    char uuid[48]; /* "GPU-xxxxxxxx-...", the key of a device in the store */
    int cc_major, cc_minor;
    int sms;
    int64_t memory_bytes;
    int64_t l2_bytes;
    int sm_clock_mhz;  /* peak */
    int mem_clock_mhz; /* peak */
    int mem_bus_bits;
    char driver[16];  /* "13.0" */
    char runtime[16]; /* "13.0" */
    double copy_gbps;   /* calibrated device copy bandwidth, read+write, each copy
                           timed alone after an L2 flush (cold); NAN if unknown */
    double mma_tflops;  /* calibrated matrix-unit peak: a large bf16 GEMM through cuBLAS */
    double fp32_tflops; /* calibrated fp32 peak: a large SGEMM, no tensor cores */
    double copy_batch_gbps; /* the copy bandwidth of back-to-back copies (batch) */
    /* When and how the ceilings were measured: "" / 0 / NAN when unknown. */
    char ceilings_at[32];         /* ISO 8601 UTC */
    char ceilings_driver[32];     /* the driver's version then, "580.159" */
    double ceilings_sm_clock_mhz; /* SM clock measured during the calibration */
    int ceilings_mem_clock_mhz;   /* the memory clock then */
} kb_device;

/* The calibrated ceilings of a device, in this order, by the names the store's
 * ceilings table keeps them under: copy_gbps, mma_tflops, fp32_tflops,
 * copy_batch_gbps. */
enum { KB_CEILING_COPY, KB_CEILING_MMA, KB_CEILING_FP32, KB_CEILING_COPY_BATCH, KB_NCEILINGS };
const char *kb_ceiling_name(int i);
/* The field of d holding ceiling i. */
double *kb_device_ceiling(kb_device *d, int i);
/* Its value, for a device the caller may not change. */
double kb_device_ceiling_of(const kb_device *d, int i);

/* Flags of a result (kb_result.flags), by the names the JSON report's
 * `flags` list and the store use. */
enum {
    KB_FLAG_GPU_SHARED = 1 << 0,    /* another process used the GPU during the case */
    KB_FLAG_L2_RESIDENT = 1 << 1,   /* inputs and outputs fit in twice the L2: its DRAM
                                       figures are not a bandwidth measurement */
    KB_FLAG_GPU_UNCHECKED = 1 << 2, /* the driver could not say whether another process
                                       used the GPU (its management library is absent) */
};
#define KB_NFLAGS 3
/* The name of flag bit i (0 .. KB_NFLAGS), or NULL. */
const char *kb_flag_name(int i);
/* Sets *bit to the flag named s. 0, or -1 for an unknown name. */
int kb_flag_parse(const char *s, unsigned *bit);
/* The flags as "gpu_shared,l2_resident" into buf ("" for none). */
void kb_flags_str(unsigned flags, char *buf, size_t n);
/* Parses kb_flags_str's text; -1 (and *flags as far as read) at an unknown name. */
int kb_flags_parse(const char *s, unsigned *flags);

/* Which time is the headline of a table: the cold median (every sample after an
 * L2 flush) or the batch one (back-to-back launches). */
typedef enum kb_timing { KB_TIMING_COLD = 0, KB_TIMING_BATCH = 1 } kb_timing;
/* "cold" / "batch"; parse: 0, or -1 for another name. */
const char *kb_timing_name(kb_timing t);
int kb_timing_parse(const char *s, kb_timing *out);

/* The figures of a result in one timing: the time and what is derived from it,
 * each % against the ceiling measured the same way. */
typedef struct kb_timed {
    double us;       /* median (cold) or batch time */
    double stdrel;   /* its spread */
    double gbps, tflops, pct_peak, speedup;
} kb_timed;
/* r's figures in timing t. */
kb_timed kb_result_timed(const kb_result *r, kb_timing t);

typedef struct kb_run {
    int64_t id; /* store id; 0 when not stored */
    char version[16];
    char git[48];
    char argv[2048];
    /* the KBENCH_* variables the run was started with (switches that choose
     * kernels), "NAME=value" sorted by name and joined with spaces; "" none */
    char env[1024];
    char started[32];  /* ISO 8601 UTC */
    char finished[32]; /* "" while running */
    char state[16];    /* "running", "complete", "interrupted" */
    char tag[128];
    kb_device dev;
    kb_timing timing;   /* which time the tables show as the headline (not stored) */
    kb_result *results; /* owned */
    size_t nresults, cap;
} kb_run;

/* Sets every field to its "unknown" value (NAN, 0, ""). */
void kb_result_init(kb_result *r);
void kb_device_init(kb_device *d);
void kb_run_init(kb_run *run);
/* Frees what the result owns (not r itself); safe on an initialised result. */
void kb_result_release(kb_result *r);
/* Frees the run's results (not run itself). */
void kb_run_release(kb_run *run);
/* Appends *r to run->results, taking ownership of its buffers (r is reset),
 * and brings the speed-ups of r's case up to date (kb_run_case_speedups).
 * Returns 0, or -1 when out of memory (r keeps its buffers). */
int kb_run_add(kb_run *run, kb_result *r);

/* 1 when a and b belong to one case group: same operator, dtype, axes and shape
 * (the variant may differ); the writers put one group in one table. */
int kb_result_same_group(const kb_result *a, const kb_result *b);

/* Entries (results of a run, cases of a comparison) by case group (operator,
 * dtype, shape), the groups in order of their first entry, the entries of a
 * group in their own order: group g is idx[first[g] .. first[g + 1]). */
typedef struct kb_groups {
    size_t n;      /* groups */
    size_t *first; /* n + 1 offsets into idx; owned */
    size_t *idx;   /* the entries' indices; owned */
} kb_groups;

/* The case groups of the n entries whose results at(ctx, i) returns. On
 * success the caller owns *g (kb_groups_release); KB_EENV when out of memory,
 * *g then empty. */
kb_status kb_groups_of(size_t n, const kb_result *(*at)(const void *ctx, size_t i),
                       const void *ctx, kb_groups *g, kb_err *e);

/* The case groups of the run's results (kb_groups_of). */
kb_status kb_run_groups(const kb_run *run, kb_groups *g, kb_err *e);

/* Frees what *g owns; safe on a released or zeroed one. */
void kb_groups_release(kb_groups *g);

/* 1 when run->results[idx[i]] has a counters_reason that none of the results
 * idx[0 .. i) has: each distinct reason of a group is stated once. */
int kb_counters_reason_is_new(const kb_run *run, const size_t *idx, size_t i);

/* The shape as "rows=4096<sep>cols=1024" into buf (sep "," for keys, ", " for
 * headings). */
void kb_result_shape_str(const kb_result *r, const char *sep, char *buf, size_t n);

/* The counts a kernel holds, clamped to its arrays (0 .. KB_RES_MAX_*). */
int kb_kernel_nmetrics(const kb_kernel *k);
int kb_kernel_nstalls(const kb_kernel *k);

/* ---- the figures of one result (figures.c) -------------------------------------- */

/* Computes gbps, tflops, dram_gbps, pct_peak and excess_traffic from the model,
 * the median, the counters and the device's ceilings: pct_peak is gbps over
 * copy_gbps for memory-bound operators, tflops over mma_tflops (fp16/bf16) or
 * fp32_tflops (fp32) for compute-bound ones; NAN when that ceiling is unknown.
 * The batch figures likewise from batch_us, a memory-bound one's % against
 * copy_batch_gbps (like with like: cold against cold, batch against batch; the
 * GEMM peaks are one figure for both, a GEMM's L2 state changing nothing). */
void kb_result_derive(kb_result *r, const kb_device *dev);

/* The ceiling r's % of peak in timing t is of: the copy bandwidth (GB/s)
 * measured the same way (cold or batch) for a memory-bound operator, the
 * matrix-unit (fp16, bf16) or fp32 peak (TFLOP/s) for a compute-bound one;
 * NAN when not calibrated. */
double kb_result_ceiling(const kb_result *r, const kb_device *dev, kb_timing t);

/* The median, least, greatest and relative spread (sample standard deviation
 * over the mean; 0 for one sample) of samples[0 .. n); NAN for n == 0. 0, or
 * -1 when out of memory (then all NAN). */
int kb_samples_summary(const double *samples, size_t n, double *median, double *min,
                       double *max, double *stdrel);

/* Fills median, min, max and stdrel from samples_us (kb_samples_summary). */
void kb_result_summarise(kb_result *r);

/* Fills the per-result figures taken from its kernels: registers and
 * local_bytes (the most of any kernel), and the achieved and theoretical
 * occupancy and top_stalls of the longest kernel (kb_result_longest_kernel):
 * both occupancies are of one kernel, NAN where that kernel lacks one. */
void kb_result_summarise_kernels(kb_result *r);

/* The index of r's longest kernel by KB_METRIC_DURATION in the counter pass,
 * among those with stall reasons when with_stalls; the first such kernel when
 * none has a duration; -1 when r has no such kernel. */
int kb_result_longest_kernel(const kb_result *r, int with_stalls);

/* 1 when r's counter pass produced figures (a metric set ran and left no
 * reason for missing counters). */
int kb_result_has_counters(const kb_result *r);

/* Arithmetic intensity: model flops per model byte; NAN without both. */
double kb_result_intensity(const kb_result *r);

/* The model flops one SM did per cycle of its clock in r's cold samples, at
 * the clock read right after them: flops / (median s x sms x sm_clock_mhz
 * 10^6). For a compute-bound ok result only (NAN otherwise, or without a
 * clock): under a power cap two results can meet different clocks, and this
 * sets their work per cycle side by side. */
double kb_result_flop_per_clock(const kb_result *r, int sms);

/* Sets the speed-up (see kb_result.speedup) of every result of the run that is
 * in the case of r. */
void kb_run_case_speedups(kb_run *run, const kb_result *r);

/* Excess traffic: measured DRAM bytes (read + write, summed over the variant's
 * kernels) over the model's bytes (the fewest that must cross DRAM); 1.0 means
 * no excess. NAN when an input is not finite or model_bytes <= 0. */
double kb_excess_traffic(double dram_read, double dram_write, double model_bytes);

#ifdef __cplusplus
}
#endif
#endif

/* result.h - the one result model. A run holds the device it ran on and one
 * result per (operator, variant, dtype, shape). The harness fills it, the store
 * and the JSON reader rebuild it, and every writer (text, markdown, CSV, JSON)
 * reads it; no writer computes a figure (kb_result_derive does, once).
 *
 * Floating-point fields that are not known hold NAN (written as JSON null). */
#ifndef KB_RESULT_H
#define KB_RESULT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KB_SCHEMA_VERSION 1 /* JSON report schema */
#define KB_RES_MAX_AXES 6

typedef enum kb_rstatus {
    KB_R_OK = 0,       /* checked and within tolerance (or --no-check) */
    KB_R_MISMATCH = 1, /* ran, but the output is wrong */
    KB_R_FAILED = 2,   /* crashed, hung, CUDA error, out of memory */
    KB_R_SKIPPED = 3,  /* not run: dtype or shape unsupported, too large */
} kb_rstatus;

const char *kb_rstatus_name(kb_rstatus s); /* "ok", "mismatch", "failed", "skipped" */
int kb_rstatus_parse(const char *s, kb_rstatus *out); /* 0 or -1 */

#define KB_RES_MAX_METRICS 48 /* counters per kernel (the largest set has 32) */
#define KB_RES_MAX_STALLS 24  /* warp stall reasons per kernel (GH100 has 20) */

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

    int checked;        /* 0 when run with --no-check */
    double max_abs_err; /* check figures (NAN when not checked) */
    double rel_l2_err;
    double atol, rtol;
    int64_t rows_checked;

    double median_us, min_us, max_us; /* timing summary, microseconds */
    double stdrel;                    /* sample standard deviation / mean */
    double *samples_us;               /* every timed sample; owned (malloc) */
    size_t nsamples;
    double sm_clock_mhz; /* SM clock measured around the samples */
    int throttled;       /* SM clock under 90% of the device's peak */

    double bytes, flops; /* the operator's model */
    char bound[8];       /* "memory" or "compute": which ceiling pct_peak is of */
    double extra_bytes;  /* device memory the variant needs beyond inputs and outputs */

    double gbps, tflops; /* derived from model and median */
    double pct_peak;     /* % of the device's calibrated ceiling */

    kb_kernel *kernels; /* owned (malloc) */
    int nkernels;

    /* Counters (a pass of their own after the samples; see --metrics). */
    char metric_set[8];        /* "none", "core", "sol", "stalls", "full" */
    int passes;                /* replay passes the set needed per kernel; 0 for none */
    char counters_reason[256]; /* why there are no counters (cause and fix), or "" */
    double dram_bytes;         /* DRAM bytes read + written, all kernels; NAN if none */
    double excess_traffic;     /* dram_bytes / bytes (the model); ~1 means no waste */
    double achieved_occupancy; /* sm__warps_active % of peak, weighted by kernel time */
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
    double copy_gbps;   /* calibrated device copy bandwidth, read+write; NAN if unknown */
    double mma_tflops;  /* calibrated matrix-unit peak: a large bf16 GEMM through cuBLAS */
    double fp32_tflops; /* calibrated fp32 peak: a large SGEMM, no tensor cores */
} kb_device;

typedef struct kb_run {
    int64_t id; /* store id; 0 when not stored */
    char version[16];
    char git[48];
    char argv[2048];
    char started[32];  /* ISO 8601 UTC */
    char finished[32]; /* "" while running */
    char state[16];    /* "running", "complete", "interrupted" */
    char tag[128];
    kb_device dev;
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
/* Appends *r to run->results, taking ownership of its buffers (r is reset).
 * Returns 0, or -1 when out of memory (r keeps its buffers). */
int kb_run_add(kb_run *run, kb_result *r);

/* Computes gbps, tflops, dram_gbps and pct_peak from the model, the median and
 * the device's ceilings: pct_peak is gbps over copy_gbps for memory-bound
 * operators, tflops over mma_tflops (fp16/bf16) or fp32_tflops (fp32) for
 * compute-bound ones; NAN when that ceiling is unknown. */
void kb_result_derive(kb_result *r, const kb_device *dev);

/* Fills median, min, max and stdrel from samples_us. */
void kb_result_summarise(kb_result *r);

/* 1 when a and b belong to one case group: same operator, dtype, axes and shape
 * (the variant may differ); the writers put one group in one table. */
int kb_result_same_group(const kb_result *a, const kb_result *b);

/* The shape as "rows=4096<sep>cols=1024" into buf (sep "," for keys, ", " for
 * headings). */
void kb_result_shape_str(const kb_result *r, const char *sep, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif

/* counters.h - hardware counters per kernel for `kbench run --metrics SET`: the
 * metric sets, their replay-pass counts, collection through the CUPTI Range
 * Profiler (user replay between two L2 flushes, one auto range per kernel, in
 * a pass of its own, never mixed with the timed samples), and the pure
 * derivations read off the counters (warp-stall fractions, the theoretical
 * occupancy limiter). The sets' names are the result model's (results/metrics.h).
 *
 * Counters are a capability, not a requirement: without permission, under
 * another profiler, or on a GPU the profiler does not support, kb_counters_open
 * returns KB_OK with no handle and a one-line reason naming the cause and the
 * fix; the run goes on with the counter columns empty.
 *
 * Adding a metric: add its CUPTI name to the set's list in counters.c, then
 * run the unit tests: they validate every name and print every set's pass
 * count for GH100 (core must stay one pass). */
#ifndef KB_COUNTERS_H
#define KB_COUNTERS_H

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "kernels/op.h"
#include "results/metrics.h"
#include "results/result.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Metrics of the largest set, with room to grow: what a kernel's result holds. */
#define KB_MAX_METRICS KB_RES_MAX_METRICS
#define KB_METRIC_NAME_MAX 96 /* longest CUPTI metric name plus its terminator */
#define KB_STALL_NAME_MAX 48  /* longest stall reason ("long_scoreboard") plus slack */

/* CUPTI names that callers read by name (KB_METRIC_DURATION and
 * KB_METRIC_OCCUPANCY: results/metrics.h). */
#define KB_METRIC_DRAM_READ "dram__bytes_read.sum"
#define KB_METRIC_DRAM_WRITE "dram__bytes_write.sum"
#define KB_METRIC_DRAM_PCT "dram__throughput.avg.pct_of_peak_sustained_elapsed"
#define KB_METRIC_ISSUE "sm__inst_issued.avg.pct_of_peak_sustained_active"
#define KB_METRIC_TENSOR "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
#define KB_METRIC_LOCAL_LD "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"
#define KB_METRIC_LOCAL_ST "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"
#define KB_METRIC_SM_SOL "sm__throughput.avg.pct_of_peak_sustained_elapsed"
#define KB_METRIC_MEM_SOL                                                                \
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
#define KB_METRIC_L1_HIT "l1tex__t_sector_hit_rate.pct"
#define KB_METRIC_L2_HIT "lts__t_sector_hit_rate.pct"
/* A stall metric is KB_STALL_PREFIX <reason> KB_STALL_SUFFIX. */
#define KB_STALL_PREFIX "smsp__average_warps_issue_stalled_"
#define KB_STALL_SUFFIX "_per_issue_active.ratio"

/* Points *names at the set's CUPTI metric names (static storage, never freed)
 * and returns how many there are; 0 and NULL for KB_METRICS_NONE. */
size_t kb_metric_set_metrics(kb_metric_set s, const char *const **names);

/* Validates the set's metric names for `chip` ("GH100"; cuptiDeviceGetChipName
 * names the chip of a GPU) and computes the replay passes the set needs there,
 * with the CUPTI profiler host API alone: no GPU, no driver. *passes is 0 for
 * KB_METRICS_NONE. Returns KB_EENV with the CUPTI error, the call, file and
 * line when the host API fails, or naming the metric the chip does not know. */
kb_status kb_counters_passes(const char *chip, kb_metric_set s, int *passes, kb_err *e);

/* The counters of one kernel: name[i] is a CUPTI metric name, value[i] its value
 * (NAN when CUPTI gave none). */
typedef struct kb_counter_values {
    int n;
    char name[KB_MAX_METRICS][KB_METRIC_NAME_MAX];
    double value[KB_MAX_METRICS];
} kb_counter_values;

typedef struct kb_counters kb_counters;

/* Nonzero when the environment says this process runs under Nsight Systems,
 * Nsight Compute or another CUDA injection tool (NSYS_PROFILING_SESSION_ID,
 * CUDA_INJECTION64_PATH, NV_COMPUTE_PROFILER_*); then why (if why_n > 0)
 * holds "<cause>; <fix>" naming the variable. The CLI calls it up front and
 * runs as with --metrics none, printing why once. */
int kb_counters_foreign_profiler(char *why, size_t why_n);

/* Starts counter collection for set s on the current GPU of the calling thread
 * (its primary context is made current). The caller owns *out and frees it with
 * kb_counters_close.
 * A missing capability is not an error: insufficient privileges, another
 * profiler attached, a GPU, chip, vGPU, MIG instance or system the profiler
 * does not support, all return KB_OK with *out = NULL and why (if why_n > 0)
 * holding one line "<cause> (<CUPTI error>); <fix>". On success why is "".
 * KB_METRICS_NONE returns KB_OK, *out = NULL and why "". Any other CUPTI or
 * CUDA failure returns KB_EENV with the call, file, line and error in e. */
kb_status kb_counters_open(kb_metric_set s, kb_counters **out, char *why, size_t why_n,
                           kb_err *e);

/* Starts building the host half of kb_counters_open for set s on CUDA device
 * `device` (profiler initialised, chip name, config image: 100-300 ms of
 * host work) on a thread of its own, to overlap the caller's CUDA context
 * creation; the next kb_counters_open for that set and device takes it over.
 * Call before the work it should overlap, never around timed work; a no-op
 * for KB_METRICS_NONE or under another profiler. Failures there are not
 * reported: open then does the work itself and reports them. */
void kb_counters_prepare(kb_metric_set s, int device);

/* Waits for kb_counters_prepare's thread to finish (keeps what it built). */
void kb_counters_prepare_wait(void);

/* Waits for and frees what kb_counters_prepare built and no open took. */
void kb_counters_prepare_discard(void);

/* The replay passes the open set needs on this GPU (from the config image). */
int kb_counters_pass_count(const kb_counters *c);

/* Profiles launch(a, stream), one range per kernel it launches, in user
 * replay: the launcher runs once per replay pass the set needs, so it must be
 * one that may run again with the same arguments (kbench launchers are).
 * With flush_bytes > 0, each pass runs the launcher between two L2 flushes
 * of the flush buffer (kb_flush_l2, flush_bytes of at least twice the L2):
 * the kernels start from a clean L2 holding none of their data, and the
 * write-back of the lines the launcher leaves dirty, counted during the
 * second flush, is added to the DRAM bytes written of its last kernel (the
 * reasons, measured, are in counters.c). With flush_bytes 0 the L2 state and
 * the write-back are the caller's.
 * Fills vals[0 .. *nkernels) in launch order (vals holds max_kernels entries)
 * and *passes with the replay passes. Waits for the device to be idle
 * before, and for the stream after.
 * A capability found missing only now (as in kb_counters_open) returns KB_OK
 * with *nkernels = 0 and the reason in why; on success why is "".
 * Returns KB_EENV when a CUPTI or CUDA call fails, when the launcher or a
 * flush fails (its CUDA error), when no kernel or more than max_kernels
 * kernels ran, or when CUPTI dropped ranges. */
kb_status kb_counters_profile(kb_counters *c, kb_launch_fn launch, const kb_args *a,
                              cudaStream_t stream, void *flush, size_t flush_bytes,
                              kb_counter_values *vals, int max_kernels, int *nkernels,
                              int *passes, char *why, size_t why_n, kb_err *e);

/* Stops collection and frees c; NULL is a no-op. */
void kb_counters_close(kb_counters *c);

/* ---- derivations: pure functions, no GPU --------------------------------- */

/* The value of metric `name` in v, or NAN when v lacks it. */
double kb_counter_get(const kb_counter_values *v, const char *name);

/* The sum of metric `name` over vals[0 .. n), or NAN when any kernel lacks it
 * or n <= 0 (a variant's DRAM bytes are the sum over its kernels). */
double kb_counter_sum(const kb_counter_values *vals, int n, const char *name);

/* The warp stall reasons of v as fractions of their sum, sorted by fraction,
 * largest first (ties by name): names[i] is the reason ("long_scoreboard"),
 * fractions[i] its share; at most max entries; *n is how many. Metrics that
 * are not finite or negative are left out. Returns the sum of the ratios
 * (average warps stalled per issued instruction); when that is not above 0,
 * *n is 0. "selected" (the warp that issued) counts as a reason, as in Nsight
 * Compute's breakdown. */
double kb_stall_fractions(const kb_counter_values *v, char names[][KB_STALL_NAME_MAX],
                          double *fractions, int max, int *n);

/* What caps the resident blocks per SM. */
typedef enum kb_occ_limit {
    KB_LIMIT_REGISTERS,
    KB_LIMIT_SHARED,
    KB_LIMIT_WARPS,
    KB_LIMIT_BLOCKS,
} kb_occ_limit;

/* The per-SM resources that bound occupancy (the CUDA occupancy calculator's). */
typedef struct kb_sm_limits {
    int regs_per_sm;         /* 32-bit registers per SM (65536) */
    int regs_per_block;      /* registers one block may hold (65536) */
    int reg_alloc_unit;      /* registers are given to a warp in units of this (256) */
    int reg_partitions;      /* register file sub-partitions, one per scheduler (4) */
    int max_regs_per_thread; /* 255 */
    int smem_per_sm;         /* shared memory bytes per SM, largest carveout (233472) */
    int smem_per_block;      /* largest block allocation, opt-in (232448) */
    int smem_reserved_per_block; /* bytes the system keeps per block (1024) */
    int smem_alloc_unit;         /* shared memory is given in units of this (128) */
    int max_threads_per_sm;      /* 2048 */
    int max_threads_per_block;   /* 1024 */
    int max_blocks_per_sm;       /* 32 */
    int warp_size;               /* 32 */
} kb_sm_limits;

/* The limits of compute capability 9.0 (H100, H200). */
kb_sm_limits kb_sm_limits_sm90(void);

/* Theoretical resident blocks per SM for a kernel using regs_per_thread
 * registers, threads_per_block threads and smem_per_block bytes of shared
 * memory (static + dynamic) per block, with the CUDA occupancy calculator's
 * rules; *limiter (may be NULL) says which resource gives that number. When
 * several give the same number the one reported is the first of blocks, warps,
 * registers, shared memory (launch shape before kernel resources: fewer
 * registers would not help). 0 when the block cannot run at all (then the
 * limiter names the resource that is exceeded). */
int kb_occupancy_blocks(const kb_sm_limits *L, int regs_per_thread, int threads_per_block,
                        int smem_per_block, kb_occ_limit *limiter);

/* "registers", "shared memory", "warps" or "blocks"; "?" for a bad value. */
const char *kb_occ_limit_name(kb_occ_limit l);

/* The name and message of CUPTI result `result` (a CUptiResult): *name is
 * never NULL, *msg is "" when CUPTI has none beyond the name. Static strings. */
void kb_cupti_text(int result, const char **name, const char **msg);

#ifdef __cplusplus
}
#endif
#endif

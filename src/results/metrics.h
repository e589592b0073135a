/* metrics.h - the names of the counter pass's metric sets (`kbench run
 * --metrics SET`, the JSON report's counters.set, the store's
 * results.metric_set) and the CUPTI metric the result model reads by name.
 * Which CUPTI metrics each set collects is the profiler's (counters.c). */
#ifndef KB_METRICS_H
#define KB_METRICS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kb_metric_set {
    KB_METRICS_NONE,
    KB_METRICS_CORE,   /* one replay pass: time, DRAM, occupancy, issue, tensor, local */
    KB_METRICS_SOL,    /* core + SM and memory speed-of-light */
    KB_METRICS_STALLS, /* core + the warp stall reasons */
    KB_METRICS_FULL,   /* all of the above + L1 and L2 hit rates */
    KB_METRICS_COUNT
} kb_metric_set;

/* Parses "none", "core", "sol", "stalls" or "full" (exact, lowercase). Returns 0,
 * or -1 for anything else (NULL included), leaving *out alone. */
int kb_metric_set_parse(const char *s, kb_metric_set *out);

/* The set's name as kb_metric_set_parse reads it; "?" for a bad value. */
const char *kb_metric_set_name(kb_metric_set s);

/* The unit of a metric's value. */
typedef enum kb_metric_unit {
    KB_UNIT_COUNT, /* a plain number (cycles, instructions, a ratio) */
    KB_UNIT_NS,    /* nanoseconds */
    KB_UNIT_BYTES, /* bytes */
    KB_UNIT_PCT,   /* percent */
} kb_metric_unit;

/* What a CUPTI metric measures, for people: a short label and the unit. */
typedef struct kb_metric_info {
    const char *label; /* "DRAM read"; the CUPTI name itself when it is not known */
    kb_metric_unit unit;
} kb_metric_info;

/* The label and unit of the CUPTI metric name: from kbench's table of the
 * metrics its sets collect, else from the name's form (".pct" and
 * "pct_of_peak": percent, "bytes": bytes, "duration": ns). The label points
 * at static storage or at name. */
kb_metric_info kb_metric_info_of(const char *name);

/* A kernel's duration in the counter pass, ns: what "the longest kernel" of a
 * result is measured by. */
#define KB_METRIC_DURATION "gpu__time_duration.sum"
/* A kernel's achieved occupancy in the counter pass, % of the warps an SM can
 * hold: what the result's achieved_occupancy is read from. */
#define KB_METRIC_OCCUPANCY "sm__warps_active.avg.pct_of_peak_sustained_active"

#ifdef __cplusplus
}
#endif
#endif

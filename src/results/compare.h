/* compare.h - the comparison of two runs (`kbench compare BASE NEW`): cases
 * matched by operator, variant, dtype and shape, the ratio of their median
 * times with a bootstrap confidence interval from the stored samples, a verdict
 * per case (FASTER, SLOWER, SAME, UNCERTAIN, or only on one side), and what
 * moved in the counters beside each time change. Part of the result model: the
 * views (report/compare_view.h, report/html.h) only format it.
 * docs/compare.md is the user's description of the rules; keep both in step.
 *
 * Verdict rule, with t the threshold (default 0.05) and [lo, hi] the 95%
 * interval of the ratio NEW/BASE (time-like: above 1 is slower):
 *   FASTER     hi < 1 - t
 *   SLOWER     lo > 1 + t
 *   SAME       1 - t <= lo and hi <= 1 + t
 *   UNCERTAIN  otherwise, and whenever a side is not ok or has fewer than
 *              KB_CMP_MIN_SAMPLES finite samples.
 * Across GPUs (device uuids differ) the ratio is that of the shares of each
 * GPU's own ceiling, pct_peak BASE / pct_peak NEW, so that a GPU change is
 * not reported as a code regression; its interval is the time interval scaled
 * by the same factor. */
#ifndef KB_COMPARE_H
#define KB_COMPARE_H

#include <stdint.h>

#include "results/result.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_CMP_RESAMPLES 2000   /* bootstrap resamples per case */
/* A side with more finite samples is bootstrapped from this many of its
 * quantiles, so a case costs at most resamples x 2 x KB_CMP_BOOT_MAX draws
 * (a report of 10^6-sample cases compares in well under a second a case); the
 * interval is then that of KB_CMP_BOOT_MAX samples: wider, never narrower. */
#define KB_CMP_BOOT_MAX 2000
#define KB_CMP_CONFIDENCE 0.95  /* of the percentile interval */
#define KB_CMP_MIN_SAMPLES 5    /* fewer finite samples on a side: UNCERTAIN */
#define KB_CMP_THRESHOLD 0.05   /* default --threshold, as a fraction */

typedef enum kb_verdict {
    KB_V_FASTER = 0,
    KB_V_SLOWER = 1,
    KB_V_SAME = 2,
    KB_V_UNCERTAIN = 3,
    KB_V_ONLY_BASE = 4, /* the case is in BASE only */
    KB_V_ONLY_NEW = 5,  /* the case is in NEW only */
    KB_V_COUNT = 6,
} kb_verdict;

/* "FASTER", "SLOWER", "SAME", "UNCERTAIN", "ONLY IN BASE", "ONLY IN NEW". */
const char *kb_verdict_name(kb_verdict v);

/* One case of the comparison. */
typedef struct kb_cmp_case {
    const kb_result *base; /* BASE's result; NULL when the case is only in NEW */
    const kb_result *cur;  /* NEW's result; NULL when the case is only in BASE */
    kb_verdict verdict;
    char why[192];         /* why UNCERTAIN (or "" otherwise) */
    size_t base_n, new_n;  /* finite samples of each side */
    double base_median, new_median; /* median of those samples, us; NAN if none */
    double time_ratio;     /* new_median / base_median; NAN unless both known */
    double ratio;          /* the ratio the verdict weighs: time_ratio, or across
                              GPUs pct_peak BASE / pct_peak NEW; NAN if unknown */
    double lo, hi;         /* its KB_CMP_CONFIDENCE interval; NAN if not computed */
    double dram_ratio;     /* counters: DRAM bytes NEW / BASE; NAN unless both */
    double occ_delta;      /* achieved occupancy NEW - BASE, points; NAN unless both */
    char moved[256];       /* what moved, for display: "DRAM 1.02x · occ +3.1 pts ·
                              regs 32→40 · spill 0 B · stall long_sb 52%→barrier
                              41%", each part only when both sides have it */
} kb_cmp_case;

/* A comparison of two runs. The runs are borrowed: they must outlive it. */
typedef struct kb_compare {
    const kb_run *base, *cur;
    char base_name[512], new_name[512]; /* where each came from: a file or "run 12" */
    double threshold;                    /* fraction, e.g. 0.05 */
    int cross_gpu;                       /* the device uuids differ */
    kb_cmp_case *cases;                  /* owned: matched cases in BASE's order, then
                                            the cases only in NEW in NEW's order */
    size_t ncases;
    size_t count[KB_V_COUNT]; /* cases per verdict */
} kb_compare;

/* Compares the runs (borrowed; they must outlive *out), naming them base_name
 * and new_name in messages and views, with threshold a fraction in [0, 1].
 * On success the caller owns *out (kb_compare_release). KB_EUSAGE when the two
 * runs have no case in common ("no case in common: BASE 'a' has 3 cases
 * (softmax), NEW 'b' has 20 cases (layernorm); ..."); KB_EENV when out of
 * memory. On error *out holds nothing. */
kb_status kb_compare_runs(const kb_run *base, const char *base_name, const kb_run *cur,
                          const char *new_name, double threshold, kb_compare *out, kb_err *e);

/* The result that names a case: BASE's, or NEW's when the case is only in NEW. */
const kb_result *kb_cmp_case_result(const kb_cmp_case *k);

/* The case groups of the comparison's cases (kb_groups_of, by
 * kb_cmp_case_result). */
kb_status kb_compare_groups(const kb_compare *c, kb_groups *g, kb_err *e);

/* Frees what the comparison owns (not the runs); safe on a zeroed or released one. */
void kb_compare_release(kb_compare *c);

/* 1 when some case is SLOWER (the exit status of `kbench compare`), else 0. */
int kb_compare_regressed(const kb_compare *c);

/* The KB_CMP_CONFIDENCE percentile interval of median(cur) / median(base) over
 * `resamples` bootstrap resamples (each side resampled with replacement, its
 * own size), drawn from a generator seeded with seed, so that the same input
 * gives the same interval. NaN samples are left out; a side of more than
 * KB_CMP_BOOT_MAX is resampled from that many of its quantiles. *lo and *hi are NAN when
 * a side has no finite sample. KB_EENV when out of memory. */
kb_status kb_cmp_bootstrap(const double *base, size_t nbase, const double *cur, size_t ncur,
                           uint64_t seed, int resamples, double *lo, double *hi, kb_err *e);

#ifdef __cplusplus
}
#endif
#endif

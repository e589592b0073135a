/* sorted.h - the two facts about sorted samples the result model uses in
 * more than one place: the order of doubles for qsort, and the median of a
 * sorted array. Internal to src/results. */
#ifndef KB_RESULTS_SORTED_H
#define KB_RESULTS_SORTED_H

#include <stddef.h>

/* qsort's comparison of two doubles, ascending. */
static inline int kb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of s[0..n), sorted ascending, n > 0. */
static inline double kb_median_sorted(const double *s, size_t n)
{
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

#endif

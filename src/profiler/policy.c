/* policy.c - the device memory of a case, which cases run, which are skipped
 * or refused and why, and when the ceilings are missing (see policy.h). */
#include "profiler/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/shape.h"

/* Bytes per GiB, for messages. */
#define GIB ((double)(1u << 30))

double kb_case_device_bytes(const kb_op *op, const kb_variant *v, kb_dtype d,
                            const int64_t *shape, int64_t l2_bytes)
{
    double total = KB_FLUSH_L2_FACTOR * (double)l2_bytes;
    for (int i = 0; i < op->nin; i++)
        total += (double)op->in_bytes(shape, d, i);
    for (int i = 0; i < op->nout; i++)
        total += (double)op->out_bytes(shape, d, i);
    if (v && v->scratch_bytes)
        total += (double)v->scratch_bytes(shape, d);
    return total;
}

int kb_case_skip(const kb_op *op, const kb_variant *v, kb_dtype d, const int64_t *shape,
                 const kb_device *dev, char *why, size_t why_size)
{
    if (!(v->dtypes & KB_DT(d))) {
        snprintf(why, why_size, "%s does not support %s", v->name, kb_dtype_name(d));
        return 1;
    }
    if (v->unsupported && v->unsupported(shape, d, why, why_size))
        return 1;
    const double need = kb_case_device_bytes(op, v, d, shape, dev->l2_bytes);
    if (need > KB_DEVICE_MEMORY_SHARE * (double)dev->memory_bytes) {
        snprintf(why, why_size, "needs %.0f bytes of device memory (%.1f GiB), %s has %lld",
                 need, need / GIB, dev->name, (long long)dev->memory_bytes);
        return 1;
    }
    return 0;
}

kb_status kb_case_fits(const kb_op *op, kb_dtype d, const int64_t *shape,
                       const kb_device *dev, kb_err *e)
{
    double elems = 1;
    for (int a = 0; a < op->naxes; a++)
        elems *= (double)(shape[a] > 0 ? shape[a] : 1);
    const double need = elems > KB_HUGE_SHAPE_ELEMS
                            ? elems * 8
                            : kb_case_device_bytes(op, NULL, d, shape, dev->l2_bytes);
    if (need <= KB_DEVICE_MEMORY_SHARE * (double)dev->memory_bytes)
        return KB_OK;
    char str[256];
    kb_shape_str(op, shape, str, sizeof str);
    return kb_fail(e, KB_EUSAGE,
                   "shape %s (%s) is too large: it needs %.0f bytes of device memory (%.1f GiB), "
                   "%s has %lld",
                   str, kb_dtype_name(d), need, need / GIB, dev->name,
                   (long long)dev->memory_bytes);
}

int kb_ceilings_missing(const kb_device *d)
{
    for (int i = 0; i < KB_NCEILINGS; i++)
        if (!isfinite(kb_device_ceiling_of(d, i)))
            return 1;
    return 0;
}

int kb_case_l2_resident(const kb_op *op, kb_dtype d, const int64_t *shape, int64_t l2_bytes)
{
    if (l2_bytes <= 0)
        return 0;
    double io = 0;
    for (int i = 0; i < op->nin; i++)
        io += (double)op->in_bytes(shape, d, i);
    for (int i = 0; i < op->nout; i++)
        io += (double)op->out_bytes(shape, d, i);
    return io <= KB_L2_RESIDENT_FACTOR * (double)l2_bytes;
}

/* Seconds in a day. */
#define DAY_S 86400.0

double kb_ceilings_age_days(const kb_device *d, time_t now)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(d->ceilings_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end)
        return NAN;
    const time_t at = timegm(&tm);
    if (at == (time_t)-1)
        return NAN;
    return difftime(now, at) / DAY_S;
}

int kb_calibration_due(const kb_device *d, kb_calibrate_when when, const char *driver,
                       time_t now, char *why, size_t why_size)
{
    if (when == KB_CALIBRATE_ALWAYS) {
        snprintf(why, why_size, "asked for");
        return 1;
    }
    if (kb_ceilings_missing(d)) {
        snprintf(why, why_size, "no calibrated ceilings stored for %s", d->name);
        return 1;
    }
    const double age = kb_ceilings_age_days(d, now);
    if (!isfinite(age)) {
        snprintf(why, why_size, "the stored ceilings of %s have no date", d->name);
        return 1;
    }
    if (age > KB_CEILINGS_MAX_AGE_DAYS) {
        snprintf(why, why_size, "the ceilings of %s are %.0f days old (more than %d)", d->name,
                 floor(age), KB_CEILINGS_MAX_AGE_DAYS);
        return 1;
    }
    if (driver && *driver && strcmp(driver, d->ceilings_driver) != 0) {
        if (*d->ceilings_driver)
            snprintf(why, why_size, "the ceilings of %s were measured under driver %s, this is %s",
                     d->name, d->ceilings_driver, driver);
        else
            snprintf(why, why_size,
                     "the stored ceilings of %s do not say which driver they were measured under",
                     d->name);
        return 1;
    }
    if (why_size)
        why[0] = '\0';
    return 0;
}

int kb_series_converged(double n, double mean, double m2, double max_noise, double max_error)
{
    if (!(n > 1) || !(mean > 0))
        return n >= 1 && mean > 0; /* one sample: no spread to judge */
    const double stdrel = sqrt(m2 / (n - 1)) / mean;
    return stdrel <= max_noise || (max_error > 0 && stdrel / sqrt(n) <= max_error);
}

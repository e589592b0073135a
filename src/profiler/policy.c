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

int kb_calibration_due(const kb_device *d, kb_calibrate_when when)
{
    return when == KB_CALIBRATE_ALWAYS || kb_ceilings_missing(d);
}

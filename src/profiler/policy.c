/* policy.c - which cases run, which are skipped or refused and why, and when
 * the ceilings are measured (see policy.h). */
#include "profiler/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/shape.h"
#include "profiler/child.h"

/* Bytes per GiB, for messages. */
#define GIB ((double)(1u << 30))

int kb_case_skip(const kb_op *op, const kb_variant *v, kb_dtype d, const int64_t *shape,
                 const kb_device *dev, char *why, size_t why_size)
{
    if (!(v->dtypes & KB_DT(d))) {
        snprintf(why, why_size, "%s does not support %s", v->name, kb_dtype_name(d));
        return 1;
    }
    if (v->unsupported && v->unsupported(shape, d, why, why_size))
        return 1;
    const double need = kb_bench_device_bytes(op, v, d, shape, dev->l2_bytes);
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
                            : kb_bench_device_bytes(op, NULL, d, shape, dev->l2_bytes);
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

kb_status kb_case_run(const kb_op *op, const kb_variant *v, const kb_device *dev,
                      const kb_bench_opts *o, kb_result *r, kb_err *e)
{
    kb_dtype d;
    int interrupted = 0;
    if (kb_dtype_parse(r->dtype, &d) != 0)
        return kb_fail(e, KB_EUSAGE, "unknown dtype '%s'", r->dtype);
    if (kb_case_skip(op, v, d, r->shape, dev, r->reason, sizeof r->reason)) {
        r->status = KB_R_SKIPPED;
        return KB_OK;
    }
    if (kb_child_case(op, v, dev, o, r, &interrupted, e) == KB_OK)
        return KB_OK;
    if (interrupted)
        return kb_fail(e, KB_EENV, "interrupted");
    /* the child crashed, hung or answered nonsense: that is this case's failure */
    r->status = KB_R_FAILED;
    kb_strlcpy(r->reason, e->msg, sizeof r->reason);
    e->msg[0] = '\0';
    return KB_OK;
}

int kb_ceilings_missing(const kb_device *d)
{
    kb_device c = *d;
    for (int i = 0; i < KB_NCEILINGS; i++)
        if (!isfinite(*kb_device_ceiling(&c, i)))
            return 1;
    return 0;
}

kb_status kb_ceilings_ensure(int ordinal, kb_device *d, kb_calibrate_when when, int *measured,
                             kb_err *e)
{
    *measured = 0;
    if (when == KB_CALIBRATE_IF_MISSING && !kb_ceilings_missing(d))
        return KB_OK;
    kb_status st = kb_child_calibrate(ordinal, d, e);
    if (st != KB_OK)
        return st;
    for (int i = 0; i < KB_NCEILINGS; i++)
        if (!isfinite(*kb_device_ceiling(d, i)))
            return kb_fail(e, KB_EENV, "calibration gave no %s", kb_ceiling_name(i));
    *measured = 1;
    return KB_OK;
}

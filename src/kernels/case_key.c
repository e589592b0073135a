/* case_key.c - what launchers and the variants that prepare a plan share:
 * the key of the case a plan was built for and the check a library row's
 * launch makes against it, the error such a launch returns when its library
 * call fails, the environment's choice among a variant's measured
 * configurations, the current device for a library's handle, and the
 * shared-memory opt-in asked once per kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

void kb_case_key_of(const kb_args *a, int naxes, kb_case_key *k)
{
    memset(k, 0, sizeof *k); /* padding and unused entries compare equal */
    for (int i = 0; i < KB_MAX_BUFS; i++) {
        k->in[i] = a->in[i];
        k->out[i] = a->out[i];
    }
    k->scratch = a->scratch;
    k->naxes = naxes < KB_MAX_AXES ? naxes : KB_MAX_AXES;
    memcpy(k->shape, a->shape, (size_t)k->naxes * sizeof *k->shape);
    k->dtype = a->dtype;
}

int kb_case_key_same(const kb_case_key *k, const kb_args *a)
{
    if (k->naxes == 0)
        return 0;
    kb_case_key now;
    kb_case_key_of(a, k->naxes, &now);
    return memcmp(k, &now, sizeof now) == 0;
}

cudaError_t kb_case_key_check(const kb_case_key *k, const kb_args *a, const char *who, char *why,
                              size_t why_size)
{
    if (k->naxes == 0) {
        snprintf(why, why_size, "%s: launched without a plan (prepare did not run, or failed)",
                 who);
        return cudaErrorInvalidValue;
    }
    if (!kb_case_key_same(k, a)) {
        snprintf(why, why_size,
                 "%s: launched with buffers, a shape or a dtype other than the ones its plan was "
                 "prepared for",
                 who);
        return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

cudaError_t kb_library_error(void)
{
    cudaError_t ce = cudaGetLastError();
    return ce != cudaSuccess ? ce : cudaErrorUnknown;
}

int kb_current_device(int *dev, char *why, size_t why_size)
{
    cudaError_t ce = cudaGetDevice(dev);
    if (ce == cudaSuccess)
        return 0;
    snprintf(why, why_size, "cudaGetDevice failed: %s (%s)", cudaGetErrorString(ce),
             cudaGetErrorName(ce));
    return -1;
}

/* Kernels whose shared-memory opt-in this process has asked for: a launcher's
 * few kernels (a case is one process). */
#define KB_SMEM_KERNELS 64

cudaError_t kb_allow_smem_once(const void *k, size_t smem)
{
    static struct {
        const void *k;
        size_t smem;
    } done[KB_SMEM_KERNELS];
    static int ndone;
    int i = 0;
    while (i < ndone && done[i].k != k)
        i++;
    if (i < ndone && done[i].smem >= smem)
        return cudaSuccess;
    cudaError_t e =
        cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess || (i == ndone && ndone == KB_SMEM_KERNELS))
        return e; /* a full table only means asking again next time */
    done[i].k = k;
    done[i].smem = smem;
    if (i == ndone)
        ndone++;
    return cudaSuccess;
}
